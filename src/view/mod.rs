//! What people look at: the bitemporal picture of a key (`history --svg`).

pub mod svg;
