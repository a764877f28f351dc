//! What wakes the long-running loop: the memory folder's changes, debounced, or a
//! timer. On Linux this is the process's one watcher on the folder
//! ([`crate::store::vouch::Watcher`]: one inotify queue and one thread, which also
//! answers other processes for the workspace when this process holds the part); elsewhere
//! `notify`'s native watcher, debounced, with nobody vouching. Deciding what to do with
//! a wake-up is the engine's job.

use std::time::Duration;

use crate::error::Result;
use crate::store::Workspace;
pub use crate::store::vouch::Wake;

/// How long the folder must be quiet before a change wakes the loop (the Linux watcher
/// has its own, with a cap, in `store::vouch`).
#[cfg(not(target_os = "linux"))]
const DEBOUNCE: Duration = Duration::from_millis(200);

/// Watches one workspace's memory folder (which must exist).
pub struct Watcher {
    #[cfg(target_os = "linux")]
    inner: crate::store::vouch::Watcher,
    #[cfg(not(target_os = "linux"))]
    inner: notified::Notified,
}

impl Watcher {
    /// Starts watching `ws`'s memory folder, not recursively.
    pub fn start(ws: &Workspace) -> Result<Watcher> {
        #[cfg(target_os = "linux")]
        let inner = crate::store::vouch::Watcher::start(ws)?;
        #[cfg(not(target_os = "linux"))]
        let inner = notified::Notified::new(&ws.root().join(crate::store::MEMORY_DIR), DEBOUNCE)?;
        Ok(Watcher { inner })
    }

    /// Waits for the next change, at most `interval`.
    pub fn next(&self, interval: Duration) -> Wake {
        self.inner.next(interval)
    }

    /// Makes this process the one that answers other mem7 commands for the workspace
    /// ([`crate::store::vouch`]) when no other process does; tried again at each call.
    /// The first failure is returned, to be said once. Only on Linux.
    pub fn keep_up(&mut self) -> Option<crate::error::Error> {
        #[cfg(target_os = "linux")]
        {
            self.inner.keep_up()
        }
        #[cfg(not(target_os = "linux"))]
        {
            None
        }
    }
}

/// `notify`, debounced, where there is no inotify.
#[cfg(not(target_os = "linux"))]
mod notified {
    use std::path::Path;
    use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
    use std::time::Duration;

    use notify::{RecommendedWatcher, RecursiveMode};
    use notify_debouncer_mini::{DebounceEventResult, Debouncer, new_debouncer};

    use super::Wake;
    use crate::error::{Error, Result};

    pub(super) struct Notified {
        _debouncer: Debouncer<RecommendedWatcher>,
        events: Receiver<DebounceEventResult>,
    }

    impl Notified {
        /// Starts watching `dir` (not recursively), coalescing events within `debounce`.
        pub(super) fn new(dir: &Path, debounce: Duration) -> Result<Notified> {
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
            Ok(Notified {
                _debouncer: debouncer,
                events,
            })
        }

        pub(super) fn next(&self, interval: Duration) -> Wake {
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
}
