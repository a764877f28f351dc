//! mem7: a bi-temporal memory for AI coding agents and their people.
//!
//! Facts are appended as hash-chained entries to markdown files in a git-friendly
//! workspace (the source of truth); a disposable SQLite index answers `valid_at` /
//! `as_of` queries. See `docs/architecture.md` for the map of this crate.

pub mod capture;
pub mod cli;
pub mod config;
pub mod core;
pub mod embed;
pub mod engine;
pub mod error;
pub mod format;
pub mod front;
#[doc(hidden)]
pub mod fuzz;
pub mod index;
pub mod live;
pub mod mcp;
pub mod store;
pub mod sync;
pub mod text;
pub mod transfer;
pub mod verify;
pub mod view;

pub use error::{Error, Result};
