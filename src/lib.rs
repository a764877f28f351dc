//! mem7: a bi-temporal memory for AI coding agents and their people.
//!
//! Facts are appended as hash-chained entries to markdown files in a git-friendly
//! workspace (the source of truth); a disposable SQLite index answers `valid_at` /
//! `as_of` queries. See `docs/architecture.md` for the map of this crate.

pub mod auth;
pub mod cli;
pub mod config;
pub mod context;
pub mod core;
pub mod embed;
pub mod engine;
pub mod env;
pub mod error;
pub mod format;
pub mod index;
pub mod mcp;
pub mod merge;
pub mod render;
pub mod request;
pub mod shell;
pub mod store;
pub mod sync;
pub mod transfer;
pub mod verify;
pub mod view;
pub mod watch;

pub use error::{Error, Result};
