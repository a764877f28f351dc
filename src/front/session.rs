//! Opening the engine for a front end (the workspace from [`Env`], what opening found
//! said on standard error, meaning search on or a warning), one server session shared by
//! every request, and the notes for a person. The watcher loop and the background vector
//! fill that use the session are [`crate::live::serve_loop`] and [`crate::live::fill`]. The CLI, the
//! MCP server and the page are thin layers over it; it knows none of them.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::core::time::TxTime;
use crate::engine::{Engine, RebuildReason};
use crate::error::Result;
use crate::front::env::Env;

/// Who is speaking on standard error: `mem7`, `mem7 mcp`, `mem7 ui`, `mem7 watch`. Every
/// line a front end says to a person starts with it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Voice(pub &'static str);

impl Voice {
    /// The command line's voice (and what opening says for every front end).
    pub const CLI: Voice = Voice("mem7");

    /// `mem7: note: …`.
    pub fn note(self, text: &str) {
        eprintln!("{}: note: {text}", self.0);
    }

    /// `mem7: warning: …`.
    pub fn warning(self, text: &str) {
        eprintln!("{}: warning: {text}", self.0);
    }

    /// Says what the engine noted for a person (why search fell back to words, …).
    pub fn notes(self, engine: &mut Engine) {
        self.say_notes(&engine.take_notes());
    }

    /// Says `notes` for a person.
    pub fn say_notes(self, notes: &[crate::engine::Note]) {
        for n in notes {
            self.note(&super::notes::for_person(n));
        }
    }

    /// Says which entries the engine held apart as recorded more than a century ahead of
    /// this machine's clock `now` (each once: later processes do not meet them again).
    pub fn held(self, engine: &mut Engine, now: TxTime) {
        for held in engine.take_held() {
            self.warning(&format!(
                "{}:{} was recorded {}, more than a century ahead of this machine's clock ({now}): it is held apart (reads and writes go on without it) until the clock comes within a century of it; `mem7 verify` lists it",
                held.file, held.line, held.recorded
            ));
        }
    }

    /// Says which entries were recorded ahead of this machine's clock `now`: those a
    /// catch-up met (`met`) and those the engine's own refreshes met since the last call
    /// (each once: the next process does not meet them again).
    pub fn ahead(self, engine: &mut Engine, met: &[crate::engine::Ahead], now: TxTime) {
        let mut ahead = met.to_vec();
        ahead.extend(engine.take_ahead());
        for line in super::said::ahead_lines(&ahead, now) {
            self.note(&line);
        }
    }
}

/// Opens the engine of the workspace `flag` or the environment names (see
/// [`Env::workspace`]), catching the index up, and says on standard error what that
/// found: a rebuild and why, problems in the files (this run's, or an earlier run's until
/// they are fixed), entries recorded ahead of the clock.
pub fn open(env: &Env, flag: Option<&Path>) -> Result<Engine> {
    open_root(env, &env.workspace(flag))
}

/// [`open`] for the workspace at `root` (one scope of the stack).
pub fn open_root(env: &Env, root: &Path) -> Result<Engine> {
    let ws = super::owners::open(env, root)?;
    open_workspace(
        env,
        if env.no_wait {
            ws.without_waiting()
        } else {
            ws
        },
    )
}

/// [`open`] for a workspace the front end already opened (to read its settings before
/// anything is created).
pub fn open_workspace(env: &Env, ws: crate::store::Workspace) -> Result<Engine> {
    let now = env.now()?;
    let mut engine = Engine::open_workspace_at(ws, env.chain_key()?, now)?;
    if env.traces("startup") {
        let how = engine.fresh_check().map_or_else(
            || "the index was built anew".to_string(),
            super::said::fresh_check,
        );
        eprintln!(
            "mem7: trace: start-up of {}: {how}",
            engine.workspace().root().display()
        );
    }
    let voice = Voice::CLI;
    voice.ahead(&mut engine, &[], now);
    voice.held(&mut engine, now);
    let report = engine.catch_up_report();
    if let Some(reason) = &report.rebuilt
        && *reason != RebuildReason::NoIndex
    {
        eprintln!("mem7: reindexed ({reason})");
    }
    for w in &report.warnings {
        voice.warning(&w.to_string());
    }
    if report.warnings.is_empty() {
        // Problems found by an earlier process stay visible until they are fixed.
        let known = engine.problems()?;
        if let Some(first) = known.first() {
            voice.warning(&format!(
                "{} problem{} in the memory files (first: {first}); `mem7 verify` lists them",
                known.len(),
                if known.len() == 1 { "" } else { "s" }
            ));
        }
    }
    Ok(engine)
}

/// Turns meaning search on as `mem7.yaml` and the `MEM7_EMBED_*` variables say (for the
/// commands that search or fill vectors; the others never touch a provider).
pub fn enable_embeddings(engine: &mut Engine, env: &Env) -> Result<()> {
    let resolved = crate::embed::resolve(&engine.workspace().config().embeddings, &env.embed)?;
    engine.set_embeddings(resolved);
    Ok(())
}

/// Like [`enable_embeddings`], for front ends whose main job is not search (reindex,
/// context, watch, the servers): a bad embedding setting is a warning there, and they go
/// on with words only.
pub fn try_enable_embeddings(engine: &mut Engine, env: &Env, voice: Voice) {
    if let Err(e) = enable_embeddings(engine, env) {
        let hint = e.hint().map(|h| format!(" ({h})")).unwrap_or_default();
        voice.warning(&format!("{e}{hint}; searching by words only"));
    }
}

/// Meaning search as [`enable_embeddings`] sets it, or off without a word when the
/// setting is bad: for the extras of a command (look-alike keys, near keys) that still
/// answer by name.
pub fn embeddings_or_off(engine: &mut Engine, env: &Env) {
    if enable_embeddings(engine, env).is_err() {
        engine.set_embeddings(crate::embed::Resolved::Off { explained: None });
    }
}

/// One engine shared by every request of a long-running front end (the MCP server's
/// sessions, the page's requests, the watcher thread), behind a lock, with the
/// environment read at start.
pub struct Session {
    engine: Mutex<Engine>,
    env: Env,
    voice: Voice,
    /// Requests being answered (or waiting for the engine): background work yields to
    /// them between its steps ([`Session::wait_for_requests`]).
    requests: AtomicUsize,
    /// When the last request ended.
    last_request: Mutex<Option<Instant>>,
}

/// A request in flight, counted while it lives.
struct InFlight<'a>(&'a Session);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        *self
            .0
            .last_request
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = Some(Instant::now());
        self.0.requests.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Session {
    /// A session on an open engine; `voice` says its notes.
    pub fn new(engine: Engine, env: Env, voice: Voice) -> Session {
        Session {
            engine: Mutex::new(engine),
            env,
            voice,
            requests: AtomicUsize::new(0),
            last_request: Mutex::new(None),
        }
    }

    /// Returns once no request is in flight: background work calls it before each
    /// step (a text to embed), so that a request never shares the machine with it for
    /// longer than one step.
    pub fn wait_for_requests(&self) {
        while self.requests.load(Ordering::Acquire) > 0 {
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// Whether no request was in flight or ended for `quiet`.
    pub fn quiet_for(&self, quiet: Duration) -> bool {
        self.requests.load(Ordering::Acquire) == 0
            && self
                .last_request
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .is_none_or(|t| t.elapsed() >= quiet)
    }

    /// Says on standard error that `what`, begun at `since`, took over 10 ms
    /// (`MEM7_TRACE=stalls`).
    pub fn slow(&self, what: &str, since: Instant) {
        let took = since.elapsed();
        if took >= Duration::from_millis(10) && self.env.traces("stalls") {
            eprintln!(
                "mem7: trace: stalls: {what} took {:.1} ms",
                took.as_secs_f64() * 1e3
            );
        }
    }

    /// The environment read at start (the clock, the default agent).
    pub fn env(&self) -> &Env {
        &self.env
    }

    /// Who speaks for this session.
    pub fn voice(&self) -> Voice {
        self.voice
    }

    /// The engine, for one request or one step of background work.
    pub fn engine(&self) -> MutexGuard<'_, Engine> {
        // A panic while holding the lock leaves the engine usable: every request catches
        // up from the files first.
        self.engine.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// One request: catch the index up with the files (a cheap check of sizes and
    /// modification times, so a write by another process shows at once), run `f` with
    /// the clock, then say the notes it left.
    pub fn call<T>(&self, f: impl FnOnce(&mut Engine, TxTime, &Env) -> Result<T>) -> Result<T> {
        self.call_noting(f).0
    }

    /// [`Session::call`], also handing back the notes it said, for a front end that words
    /// them for its own audience too (the MCP tools tell the model).
    pub fn call_noting<T>(
        &self,
        f: impl FnOnce(&mut Engine, TxTime, &Env) -> Result<T>,
    ) -> (Result<T>, Vec<crate::engine::Note>) {
        self.requests.fetch_add(1, Ordering::AcqRel);
        let _in_flight = InFlight(self);
        let now = match self.env.now() {
            Ok(now) => now,
            Err(e) => return (Err(e), Vec::new()),
        };
        let start = Instant::now();
        let mut engine = self.engine();
        self.slow("call: engine wait", start);
        // Searches bring the full text up to date themselves; a store need not wait for it.
        let t = Instant::now();
        let caught = match engine.catch_up_versions(now) {
            Ok(caught) => caught,
            Err(e) => return (Err(e), Vec::new()),
        };
        self.slow("call: catch up", t);
        if self.env.traces("requests")
            && let Some(check) = engine.fresh_check()
        {
            eprintln!(
                "mem7: trace: request in {}: {}",
                engine.workspace().root().display(),
                super::said::fresh_check(check)
            );
        }
        self.voice.ahead(&mut engine, &caught.report.ahead, now);
        let t = Instant::now();
        let result = f(&mut engine, now, &self.env);
        self.slow("call: tool", t);
        self.voice.ahead(&mut engine, &[], now);
        let notes = engine.take_notes();
        self.voice.say_notes(&notes);
        (result, notes)
    }
}
