//! The pure core, the temporal kernel: times, keys, the temporal fold and the hash chain
//! over bytes. The text heuristics (credentials, drift, look-alike names) are `text`.
//!
//! Nothing in here reads the clock, the environment, the file system or SQLite, and
//! nothing in here serialises with serde: every function is a computation over values,
//! so the semantics can be tested as data tables and against a reference model.

pub mod chain;
pub mod change;
pub mod fold;
pub mod integrity;
pub mod level;
pub mod many;
pub mod pattern;
pub mod read_rule;
pub mod temporal;
pub mod tier;
pub mod time;
pub mod validate;

pub use change::{Change, Scope};
pub use fold::{EntryOp, Event, Fold, Op, Source, StoreOp, Version, event_order};
pub use temporal::{Plan, ValidEnd};
pub use tier::{Tier, Writer};
pub use time::{TxTime, ValidTime};
