//! What bringing the index up to date tells the caller: how far a rebuild is, why it ran,
//! the problems found in the files, the entries recorded ahead of this machine's clock,
//! and how to say so in words.

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

/// Why a catch-up gave way to a full rebuild; its text is what `mem7` says
/// (`reindexed (…)`, `watch`'s `rebuilt the index (…)`).
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

impl Ahead {
    /// "memory/…:3 was recorded 2026-12-05T00:00:00Z, 3 days 13 hours ahead of this
    /// machine's clock"
    pub fn describe(&self, now: TxTime) -> String {
        format!(
            "{}:{} was recorded {}, {} ahead of this machine's clock ({now})",
            self.file,
            self.line,
            self.recorded,
            span_text(self.recorded.micros().saturating_sub(now.micros()))
        )
    }
}

/// How many entries recorded ahead of the clock one catch-up or rebuild lists; beyond
/// that it stops listing them (and [`describe_ahead`] says "at least").
pub const AHEAD_KEPT: usize = 10_000;

/// What to tell a person about entries recorded ahead of `now`: one line each, at most
/// `AHEAD_LINES` of them, then how many more (a pull from a machine far ahead can bring
/// hundreds).
pub fn describe_ahead(ahead: &[Ahead], now: TxTime) -> Vec<String> {
    let at_least = if ahead.len() >= AHEAD_KEPT {
        "at least "
    } else {
        ""
    };
    const AHEAD_LINES: usize = 5;
    let mut lines: Vec<String> = ahead
        .iter()
        .take(AHEAD_LINES)
        .map(|a| a.describe(now))
        .collect();
    if ahead.len() > AHEAD_LINES {
        lines.push(format!(
            "{at_least}{} more entries were recorded ahead of this machine's clock; `mem7 verify` lists them all",
            ahead.len() - AHEAD_LINES
        ));
    }
    lines
}

/// A duration in words, to the two largest units ("3 days 13 hours", "7 minutes").
pub fn span_text(micros: i64) -> String {
    let secs = (micros / 1_000_000).max(0);
    let units = [
        ("day", 86_400),
        ("hour", 3_600),
        ("minute", 60),
        ("second", 1),
    ];
    let mut parts = Vec::new();
    let mut rest = secs;
    for (name, size) in units {
        let n = rest / size;
        if n > 0 && parts.len() < 2 {
            parts.push(format!("{n} {name}{}", if n == 1 { "" } else { "s" }));
            rest -= n * size;
        } else if !parts.is_empty() {
            break;
        }
    }
    if parts.is_empty() {
        "less than a second".to_string()
    } else {
        parts.join(" ")
    }
}
