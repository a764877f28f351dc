//! The text heuristics: rules that read a text and judge it, beside the temporal kernel
//! (`core`) and independent of it. The one credential detector every byte bound for a
//! memory file passes (`secret`), keys read as words and compared for drift (`drift`),
//! and keys that look alike (`names`). They are pure (no clock, environment, file system
//! or SQLite); unlike the kernel, they may read their vendored rule data with serde.

pub mod drift;
pub mod names;
pub mod secret;
