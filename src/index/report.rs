//! What bringing the index up to date tells the caller, as data: how far a rebuild is,
//! why it ran, the problems found in the files, the entries recorded ahead of this
//! machine's clock. The front ends word it (`front::said`).

use crate::core::time::TxTime;

/// A problem found while reading the workspace, located in a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Warning {
    pub file: String,
    pub line: u32,
    pub message: String,
}

impl std::fmt::Display for Warning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}: {}", self.file, self.line, self.message)
    }
}

/// Where a rebuild is.
#[derive(Clone, Copy, Debug)]
pub enum Progress {
    /// Reading and parsing memory files.
    Reading { done: u64, total: u64 },
    /// Folding entries into versions (and feeding the full-text index).
    Folding { done: u64, total: u64 },
    /// Building SQLite indexes and committing the full-text index.
    Finishing,
}

/// Why a catch-up gave way to a full rebuild. Its text is the cause an error names where
/// it is raised (the engine's busy error, when a writer that must not wait finds the
/// index needing a rebuild), and the front ends say the same cause in the same words
/// (`reindexed (…)`, `watch`'s `rebuilt the index (…)`): the one wording below the
/// front ends that is not an error's alone (`tests/it/layout.rs`, `WORDS_BELOW`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RebuildReason {
    /// There was no index, or none this version of mem7 can use: the ordinary first run,
    /// said to nobody.
    NoIndex,
    /// The index failed as only a damaged one does.
    Damaged(String),
    /// A memory file the index had read is gone.
    Removed(String),
    /// A memory file holds fewer entries than the index had read from it.
    LostEntries(String),
    /// Entries the index had read changed.
    Edited(String),
    /// New entries in the Go mem7's format (placed only by folding them all).
    GoEntries(String),
    /// New entries sort before ones already applied (a merge, a hand-moved entry):
    /// `at` is their file:line.
    OutOfOrder { at: String, before: &'static str },
    /// The clock came within a century of an entry held apart: folding it in needs all.
    HeldDue,
}

impl std::fmt::Display for RebuildReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RebuildReason::NoIndex => f.write_str("no usable index"),
            RebuildReason::Damaged(e) => write!(f, "the index was damaged: {e}"),
            RebuildReason::Removed(file) => write!(f, "{file} was removed"),
            RebuildReason::LostEntries(file) => write!(f, "{file} lost entries"),
            RebuildReason::Edited(file) => write!(f, "{file} was edited"),
            RebuildReason::GoEntries(file) => write!(f, "{file} has new Go mem7 entries"),
            RebuildReason::OutOfOrder { at, before } => {
                write!(f, "{at} sorts before {before} (a merge?)")
            }
            RebuildReason::HeldDue => {
                f.write_str("the clock reached an entry held apart as recorded far ahead of it")
            }
        }
    }
}

/// What bringing the index up to date did.
#[derive(Clone, Debug, Default)]
pub struct CatchUpReport {
    /// Set when a full rebuild ran, with the reason.
    pub rebuilt: Option<RebuildReason>,
    /// Entries applied incrementally.
    pub applied: usize,
    /// Problems in the files that were read.
    pub warnings: Vec<Warning>,
    /// Torn tails moved aside: (memory file, where its bytes went).
    pub set_aside: Vec<(String, String)>,
    /// Entries applied that were recorded ahead of the caller's clock (see
    /// `core::time::ahead_threshold`), in the order applied.
    pub ahead: Vec<Ahead>,
    /// Entries recorded so far ahead that they were held apart, not applied (see
    /// `core::time::HOLD_APART_MICROS`).
    pub held: Vec<Ahead>,
}

/// An entry recorded ahead of this machine's clock (pulled from a machine whose clock
/// runs fast, or written with a `MEM7_NOW` in the future).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ahead {
    pub file: String,
    pub line: u32,
    pub recorded: TxTime,
}

/// How many entries recorded ahead of the clock one catch-up or rebuild lists; beyond
/// that it stops listing them (and the front ends say "at least").
pub const AHEAD_KEPT: usize = 10_000;
