//! The watcher loop of the long-running front ends (`mem7 watch`, the MCP server's
//! background thread): wake on a file change or every interval (watchers miss events),
//! catch the index up, fill in missing vectors, and run the periodic git sync
//! (`watch --sync-every`, `sync.every`). What happened is handed to a [`Log`], which the
//! front end writes as it likes.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::events::Wake;
use super::fill::{self, LastError};
use crate::core::time::TxTime;
use crate::engine::{CatchUp, Engine, FillStats};
use crate::error::{Error, Result};
use crate::front::session::Session;
use crate::store::{self, FileStat};

/// How the loop wakes.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// The longest wait without a file event before catching up anyway.
    pub interval: Duration,
    /// How often to sync through git (the first sync runs at once); `None`: never.
    pub sync_every: Option<Duration>,
    /// A server's fill: texts listed per round ([`fill::FILL_STEP`]), embedded one at a
    /// time without the engine, yielding to requests; `None`: through the engine, all at
    /// once.
    pub fill_step: Option<usize>,
    /// Whether each catch-up also commits the full-text index (`mem7 watch`, which keeps
    /// the index current for every process), or leaves it to the next search (a server,
    /// whose stores would otherwise each wait for a commit).
    pub full_text: bool,
}

/// Where the loop reports. An error returned here (a closed output) ends the loop.
pub trait Log {
    /// A catch-up ran (`engine` is still held: what it noted can be taken).
    fn caught_up(&mut self, engine: &mut Engine, c: &CatchUp, now: TxTime) -> Result<()>;
    /// A catch-up failed (a conflict, a damaged file); it is retried once the files
    /// change again.
    fn catch_up_failed(&mut self, e: &Error);
    /// Missing vectors were filled in (`computed` may be 0).
    fn filled(&mut self, f: &FillStats) -> Result<()>;
    /// Filling in vectors failed (said once until the failure changes; retried on the
    /// next wake).
    fn fill_failed(&mut self, e: &Error);
    /// This process could not vouch for the files to other mem7 commands
    /// ([`crate::store::vouch`]): their start-ups check every day file, as when no
    /// watcher runs.
    fn vouch_failed(&mut self, e: &Error);
    /// A periodic sync ran, or could not; `every` is its period.
    fn synced(&mut self, outcome: Result<crate::sync::Outcome>, every: Duration) -> Result<()>;
    /// Queued turns were sent to the chat model (`capture.model`; docs/capture.md).
    fn turns_drained(&mut self, r: &crate::front::capture::turns::Report) -> Result<()> {
        let _ = r;
        Ok(())
    }
    /// The end of one wake: a good time to flush.
    fn flush(&mut self) -> Result<()> {
        Ok(())
    }
}

/// The period of the watcher's git sync: `flag` (`mem7 watch --sync-every`), else
/// `sync.every` in `mem7.yaml`, else none.
pub fn sync_every(
    flag: Option<Duration>,
    config: &crate::config::Config,
) -> Result<Option<Duration>> {
    if flag.is_some() {
        return Ok(flag);
    }
    config
        .sync
        .every
        .as_deref()
        .map(|t| {
            crate::sync::parse_every(t).map_err(|e| {
                Error::input(
                    format!("mem7.yaml: sync.every: {e}"),
                    "fix it in mem7.yaml (e.g. `sync: {every: 5m}`), or remove it",
                )
            })
        })
        .transpose()
}

/// A watcher on the workspace's memory files, with what the loop remembers between
/// wakes.
pub struct Watch {
    /// The process's one watcher on the memory folder: it wakes the loop, and answers
    /// other commands' start-ups (and this process's own checks) while the watch lives,
    /// when no other process does (tried again on each wake, so one takes over when the
    /// other ends).
    watcher: super::events::Watcher,
    /// Why it could not answer, to be said once.
    vouch_error: Option<Error>,
    fill_error: LastError,
    /// A server's fill, its model kept between wakes.
    background: fill::Background,
    /// The files as they were when a catch-up last failed: reading them wakes the
    /// watcher again, so a failure is retried only once they change.
    failed_on: Option<Vec<FileStat>>,
    /// When queued turns may next be sent to the model: at once, or a while after it
    /// did not answer (a wake every few seconds would use up a turn's tries).
    turns_due: Instant,
    /// When the vector set was last topped up on a quiet moment ([`TOP_UP_EVERY`]).
    topped_up: Instant,
}

/// How long the loop leaves queued turns alone after the model did not answer.
const TURNS_BACKOFF: Duration = Duration::from_secs(300);

impl Watch {
    /// Starts watching the memory folder of `engine`'s workspace (created if missing).
    pub fn start(engine: &Engine) -> Result<Watch> {
        let memory = engine.workspace().root().join(store::MEMORY_DIR);
        std::fs::create_dir_all(&memory).map_err(|e| Error::io(&memory, e))?;
        let mut watcher = super::events::Watcher::start(engine.workspace())?;
        let vouch_error = watcher.keep_up();
        Ok(Watch {
            watcher,
            vouch_error,
            fill_error: LastError::default(),
            background: fill::Background::default(),
            failed_on: None,
            turns_due: Instant::now(),
            topped_up: Instant::now(),
        })
    }

    /// Catches up with whatever changed before the watcher started, then fills in
    /// vectors. A failure here is the caller's (nothing has been waited out yet).
    pub fn first(&mut self, session: &Session, opts: &Options, log: &mut dyn Log) -> Result<()> {
        if let Some(e) = self.vouch_error.take() {
            log.vouch_failed(&e);
        }
        let now = session.env().now()?;
        {
            let mut engine = session.engine();
            let c = if opts.full_text {
                engine.catch_up(now)?
            } else {
                engine.catch_up_versions(now)?
            };
            log.caught_up(&mut engine, &c, now)?;
        }
        self.fill(session, opts, log)
    }

    /// Runs until the watcher closes (or `log` fails).
    pub fn run(mut self, session: &Session, opts: &Options, log: &mut dyn Log) -> Result<()> {
        if let Some(e) = self.vouch_error.take() {
            log.vouch_failed(&e);
        }
        let mut next_sync = opts.sync_every.map(|_| Instant::now());
        // When the current wait began: quiet wakes (below) keep it, so that they never
        // put off the reconcile.
        let mut waiting_since: Option<Instant> = None;
        loop {
            let wait = next_sync.map_or(opts.interval, |due| {
                opts.interval
                    .min(due.saturating_duration_since(Instant::now()))
            });
            let left =
                wait.saturating_sub(waiting_since.get_or_insert_with(Instant::now).elapsed());
            // While writes leave the full text behind, a server wakes for its quiet
            // commit (its searches score a few new versions beside the index rather than
            // commit them: `index/fulltext/tail.rs`); such a wake reconciles nothing.
            let quiet_wake = !opts.full_text && session.engine().full_text_behind();
            let wake = self.watcher.next(if quiet_wake {
                left.min(QUIET_WAKE)
            } else {
                left
            });
            if wake == Wake::Closed {
                return Ok(());
            }
            if let Some(e) = self.watcher.keep_up() {
                log.vouch_failed(&e);
            }
            if quiet_wake && wake == Wake::Tick && left > QUIET_WAKE {
                when_quiet(session, &mut self.topped_up);
                continue;
            }
            waiting_since = None;
            if let (Some(due), Some(every)) = (next_sync, opts.sync_every)
                && Instant::now() >= due
            {
                log.synced(sync(session), every)?;
                log.flush()?;
                next_sync = Some(Instant::now() + every);
                // What the sync brought in is caught up below, failed or not.
                self.failed_on = None;
            }
            if self.failed_on.is_some() && self.scan(session) == self.failed_on {
                continue;
            }
            let now = session.env().now()?;
            let caught = {
                let mut engine = session.engine();
                // A wake without an event is the reconcile: it checks every day file,
                // for what the watcher (this process's or another's) cannot see.
                let caught = match (wake, opts.full_text) {
                    (Wake::Tick, full_text) => engine.reconcile(now, full_text),
                    (_, true) => engine.catch_up(now),
                    (_, false) => engine.catch_up_versions(now),
                };
                match caught {
                    Ok(c) => log.caught_up(&mut engine, &c, now).map(|()| true),
                    Err(e) => {
                        log.catch_up_failed(&e);
                        Ok(false)
                    }
                }
            }?;
            if caught {
                self.failed_on = None;
                self.fill(session, opts, log)?;
            } else {
                // A conflict or a damaged file is waited out: the person fixing it will
                // change the file again, which wakes us.
                self.failed_on = self.scan(session);
            }
            self.turns(session, log)?;
            log.flush()?;
        }
    }

    /// Sends queued turns to the chat model, when any wait and a model is configured.
    /// The drain writes through its own handles, so a request's writer never waits
    /// behind it; a model that does not answer is left alone for [`TURNS_BACKOFF`].
    fn turns(&mut self, session: &Session, log: &mut dyn Log) -> Result<()> {
        use crate::front::capture::turns;
        let root = session.engine().workspace().root().to_path_buf();
        if Instant::now() < self.turns_due
            || turns::waiting(&root) == 0
            || turns::model(session.env()).is_none()
        {
            return Ok(());
        }
        let r = turns::drain(session.env(), Some(&root));
        if r.kept > 0 {
            self.turns_due = Instant::now() + TURNS_BACKOFF;
        }
        log.turns_drained(&r)
    }

    fn scan(&self, session: &Session) -> Option<Vec<FileStat>> {
        session.engine().workspace().scan().ok()
    }

    fn fill(&mut self, session: &Session, opts: &Options, log: &mut dyn Log) -> Result<()> {
        let filled = match opts.fill_step {
            Some(round) => self.background.fill(session, round, &mut || {
                if !opts.full_text {
                    when_quiet(session, &mut self.topped_up);
                }
            }),
            None => fill::in_steps(session, None),
        };
        if !opts.full_text {
            when_quiet(session, &mut self.topped_up);
        }
        match filled {
            None => Ok(()),
            Some(Ok(f)) => {
                self.fill_error.clear();
                log.filled(&f)
            }
            Some(Err(e)) => {
                if self.fill_error.is_new(&e) {
                    log.fill_failed(&e);
                }
                Ok(())
            }
        }
    }
}

/// How long a server waits after its last request before it commits the full-text
/// index in the background, so that the next search need not.
const QUIET: Duration = Duration::from_millis(150);
/// How often a server's loop looks for [`QUIET`] while the full text is behind.
const QUIET_WAKE: Duration = Duration::from_millis(200);
/// How often at most a server tops up its vector set on a quiet moment (between its
/// fill's texts): a top-up walks the list of waiting versions, tens of thousands after
/// an import, so that once per text would slow a long fill down.
const TOP_UP_EVERY: Duration = Duration::from_millis(50);
/// How long a server waits after its last request before it merges the segments its
/// commits left: longer, since a merge takes longer than a commit.
const MERGE_QUIET: Duration = Duration::from_secs(1);

/// When no request came for [`QUIET`]: commits the full-text index if writes left it
/// behind, and tops up the vector set with what the fill embedded (at most every
/// [`TOP_UP_EVERY`]), so that a search after a burst of stores finds both ready. A
/// failure is left to the next search, which does the same work itself and reports it.
fn when_quiet(session: &Session, topped_up: &mut Instant) {
    if session.quiet_for(QUIET) {
        let start = Instant::now();
        let _ = session.engine().commit_full_text();
        session.slow("quiet full-text commit", start);
        if topped_up.elapsed() >= TOP_UP_EVERY {
            let start = Instant::now();
            let _ = session.engine().top_up_vectors();
            session.slow("quiet vector top-up", start);
            *topped_up = Instant::now();
        }
    }
    if session.quiet_for(MERGE_QUIET) {
        let start = Instant::now();
        let _ = session.engine().merge_full_text();
        session.slow("quiet full-text merge", start);
    }
}

/// One periodic sync of the session's workspace through git.
fn sync(session: &Session) -> Result<crate::sync::Outcome> {
    let root: PathBuf = session.engine().workspace().root().to_path_buf();
    let env = session.env();
    let exe = std::env::current_exe().map_err(|e| Error::io("<current exe>", e))?;
    crate::sync::run(&crate::sync::Options {
        root: &root,
        remote: None,
        push: true,
        now: env.now()?,
        key: env.chain_key()?,
        exe: &exe,
    })
}
