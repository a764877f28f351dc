//! File-system events for `mem7 watch` (and, later, the MCP server): `notify`, debounced,
//! turned into a small enum. Deciding what to do with a wake-up is the engine's job.

use std::path::Path;
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::Duration;

use notify::{RecommendedWatcher, RecursiveMode};
use notify_debouncer_mini::{DebounceEventResult, Debouncer, new_debouncer};

use crate::error::{Error, Result};

/// Why the watcher woke up.
#[derive(Debug, PartialEq, Eq)]
pub enum Wake {
    /// Files changed (after the debounce delay).
    Changed,
    /// Nothing happened for the whole interval: time to reconcile anyway, since
    /// watchers miss events (editors that rename, network file systems, sleep).
    Tick,
    /// The watcher stopped.
    Closed,
}

/// Watches one directory.
pub struct Watcher {
    _debouncer: Debouncer<RecommendedWatcher>,
    events: Receiver<DebounceEventResult>,
}

impl Watcher {
    /// Starts watching `dir` (not recursively), coalescing events within `debounce`.
    pub fn new(dir: &Path, debounce: Duration) -> Result<Watcher> {
        let (tx, events) = channel();
        let fail = |e: notify::Error| {
            Error::internal(
                format!("cannot watch {}: {e}", dir.display()),
                "check that the directory exists and that the system's file-watch limit is not reached",
            )
        };
        let mut debouncer = new_debouncer(debounce, tx).map_err(fail)?;
        debouncer
            .watcher()
            .watch(dir, RecursiveMode::NonRecursive)
            .map_err(fail)?;
        Ok(Watcher {
            _debouncer: debouncer,
            events,
        })
    }

    /// Waits for the next change, at most `interval`.
    pub fn next(&self, interval: Duration) -> Wake {
        match self.events.recv_timeout(interval) {
            Ok(_) => {
                // Drain what else arrived meanwhile: one catch-up covers it all.
                while self.events.try_recv().is_ok() {}
                Wake::Changed
            }
            Err(RecvTimeoutError::Timeout) => Wake::Tick,
            Err(RecvTimeoutError::Disconnected) => Wake::Closed,
        }
    }
}
