//! The server's background watcher: a thread that keeps the index current while files
//! change under it and fills in missing vectors, and what it says on standard error.

use std::time::Duration;

use super::{MemoryServer, RECONCILE_EVERY};
use crate::core::time::TxTime;
use crate::engine::{CatchUp, Engine};
use crate::error::{Error, Result};
use crate::front::session::Voice;
use crate::live::serve_loop::{Log, Options, Watch};

impl MemoryServer {
    /// Keeps the index current in the background: catches up when files change and
    /// every [`RECONCILE_EVERY`] anyway, and fills in missing vectors a step at a time.
    /// Runs until the process ends.
    pub fn spawn_watcher(&self) -> Result<()> {
        let watch = Watch::start(&self.session.engine())?;
        // The meaning side of a store's look-alike check finishes after its answer, in
        // this thread's fill (docs/agents.md).
        self.session.engine().serve_in_background(true);
        let session = self.session.clone();
        std::thread::Builder::new()
            .name("mem7-watch".into())
            .spawn(move || {
                let opts = Options {
                    interval: RECONCILE_EVERY,
                    sync_every: None,
                    fill_step: Some(crate::live::fill::FILL_STEP),
                    full_text: false,
                };
                if let Err(e) = watch.run(&session, &opts, &mut WatchLog) {
                    eprintln!("mem7 mcp: the watcher stopped: {e}");
                }
            })
            .map_err(|e| Error::io("<thread>", e))?;
        Ok(())
    }
}

/// Who speaks on standard error (the client's log).
pub(super) const VOICE: Voice = Voice("mem7 mcp");

/// The watcher thread's log, on standard error: failures only, and the entries a
/// catch-up met that were recorded ahead of this machine's clock.
struct WatchLog;

impl Log for WatchLog {
    fn caught_up(&mut self, engine: &mut Engine, c: &CatchUp, now: TxTime) -> Result<()> {
        VOICE.ahead(engine, &c.report.ahead, now);
        VOICE.held(engine, now);
        Ok(())
    }

    fn catch_up_failed(&mut self, e: &Error) {
        eprintln!("mem7 mcp: catching up with the files failed: {e}");
    }

    fn vouch_failed(&mut self, e: &Error) {
        eprintln!(
            "mem7 mcp: warning: other mem7 commands will check every day file at start-up: {e}"
        );
    }

    fn filled(&mut self, _: &crate::engine::FillStats) -> Result<()> {
        Ok(())
    }

    fn fill_failed(&mut self, e: &Error) {
        eprintln!("mem7 mcp: filling in vectors failed (retrying later): {e}");
    }

    fn synced(&mut self, _: Result<crate::sync::Outcome>, _: Duration) -> Result<()> {
        // The server's watcher runs no sync (its options have no period).
        Ok(())
    }
}
