//! `mem7 watch`: the shell's watcher loop ([`crate::live::serve_loop`]) with a log of
//! timestamped lines, what was applied and filled in on standard output, failures on
//! standard error.

use std::io::Write;
use std::time::Duration;

use super::{Cli, EXIT_OK, Env, sync, write_out};
use crate::core::time::TxTime;
use crate::engine::{CatchUp, Engine, FillStats};
use crate::error::{Error, Result};
use crate::front::session::{self, Session, Voice};
use crate::live::serve_loop;
use crate::live::serve_loop::{Log, Options, Watch};

/// `mem7 watch`.
pub(super) fn run(
    cli: &Cli,
    env: &Env,
    out: &mut dyn Write,
    interval: u64,
    sync_every: Option<&str>,
) -> Result<u8> {
    let voice = Voice("mem7 watch");
    // A bad flag is said before anything is opened.
    let flag = sync_every
        .map(|t| {
            crate::sync::parse_every(t)
                .map_err(|e| Error::input(format!("--sync-every: {e}"), "e.g. --sync-every 5m"))
        })
        .transpose()?;
    let mut engine = session::open(env, cli.workspace.as_deref())?;
    let sync_every = serve_loop::sync_every(flag, engine.workspace().config())?;
    let mut watch = Watch::start(&engine)?;
    session::try_enable_embeddings(&mut engine, env, voice);
    let root = engine.workspace().root().display().to_string();
    let session = Session::new(engine, env.clone(), voice);
    let mut log = WatchLog { out };
    let opts = Options {
        interval: Duration::from_secs(interval.max(1)),
        sync_every,
        // Nobody else waits for this engine: the vectors are filled in at one go.
        fill_step: None,
        full_text: true,
    };
    // Whatever changed before the watcher started is caught up first.
    watch.first(&session, &opts, &mut log)?;
    write_out(
        log.out,
        &format!("mem7 watch: keeping the index of {root} current (Ctrl-C to stop)\n"),
    )?;
    if let Some(every) = sync_every {
        write_out(
            log.out,
            &format!(
                "mem7 watch: syncing through git every {}\n",
                sync::duration_text(every.as_secs() as i64)
            ),
        )?;
    }
    log.flush()?;
    watch.run(&session, &opts, &mut log)?;
    Ok(EXIT_OK)
}

/// The watch's log: one timestamped line per thing done.
struct WatchLog<'a> {
    out: &'a mut dyn Write,
}

impl Log for WatchLog<'_> {
    fn caught_up(&mut self, _engine: &mut Engine, c: &CatchUp, now: TxTime) -> Result<()> {
        log_catch_up(self.out, c, now)
    }

    fn catch_up_failed(&mut self, e: &Error) {
        eprintln!("{} mem7 watch: error: {e}", now_text());
    }

    fn vouch_failed(&mut self, e: &Error) {
        eprintln!(
            "{} mem7 watch: warning: other mem7 commands will check every day file at start-up: {e}",
            now_text()
        );
    }

    fn filled(&mut self, f: &FillStats) -> Result<()> {
        if f.computed == 0 {
            return Ok(());
        }
        write_out(
            self.out,
            &format!(
                "{} embedded {} text{} with {}\n",
                now_text(),
                f.computed,
                if f.computed == 1 { "" } else { "s" },
                f.model
            ),
        )
    }

    fn fill_failed(&mut self, e: &Error) {
        eprintln!(
            "{} mem7 watch: vectors not filled in (retrying on the next change): {e}",
            now_text()
        );
    }

    fn synced(&mut self, outcome: Result<crate::sync::Outcome>, every: Duration) -> Result<()> {
        sync::watch_sync(self.out, outcome, every)
    }

    fn turns_drained(&mut self, r: &crate::front::capture::turns::Report) -> Result<()> {
        writeln!(
            self.out,
            "{} turn facts: {} turns answered, {} facts written, {} still queued, {} dropped",
            now_text(),
            r.answered,
            r.facts,
            r.kept,
            r.dropped
        )
        .map_err(|e| Error::io("<stdout>", e))
    }

    fn flush(&mut self) -> Result<()> {
        self.out.flush().map_err(|e| Error::io("<stdout>", e))
    }
}

/// The wall clock for log lines.
pub(super) fn now_text() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// One log line per thing a catch-up did.
fn log_catch_up(out: &mut dyn Write, c: &CatchUp, clock: TxTime) -> Result<()> {
    let now = now_text();
    let mut text = String::new();
    if let Some(reason) = &c.report.rebuilt {
        text.push_str(&format!(
            "{now} rebuilt the index ({reason}): {} entries\n",
            c.report.applied
        ));
    } else if c.report.applied > 0 {
        text.push_str(&format!(
            "{now} applied {} new entr{}\n",
            c.report.applied,
            if c.report.applied == 1 { "y" } else { "ies" }
        ));
    }
    if c.indexed > 0 {
        text.push_str(&format!(
            "{now} indexed {} version{} for search\n",
            c.indexed,
            if c.indexed == 1 { "" } else { "s" }
        ));
    }
    for w in &c.report.warnings {
        text.push_str(&format!("{now} warning: {w}\n"));
    }
    for line in crate::front::said::ahead_lines(&c.report.ahead, clock) {
        text.push_str(&format!("{now} note: {line}\n"));
    }
    write_out(out, &text)
}
