//! The command-line interface: reads the environment, resolves arguments into requests,
//! runs them through the engine, renders the answers, and maps errors to exit codes.
//! The only module that reads env variables or prints.

mod args;
mod demo;
mod setup;
mod sync;

use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Parser;

pub use args::{Cli, Command};

use crate::core::time::{TxTime, ValidTime};
use crate::engine::{Engine, ForgetOutcome, SealOutcome, StoreRequest};
use crate::env::absolute;
pub use crate::env::{CHAIN_KEY_CONTEXT, Env, safe_agent};
use crate::error::{Error, Result};
use crate::{render, request, store};

/// Exit code for success.
pub const EXIT_OK: u8 = 0;
/// Exit code when a check failed (verify).
pub const EXIT_CHECK_FAILED: u8 = 1;
/// Exit code for usage and input errors.
pub const EXIT_ERROR: u8 = 2;

/// Runs the CLI with the process's arguments and environment.
pub fn run() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { EXIT_ERROR } else { EXIT_OK });
        }
    };
    let env = Env::from_process();
    // Not locked for the whole run: the MCP server writes to standard output from
    // another thread.
    let mut out = io::stdout();
    let code = match execute(&cli, &env, &mut out) {
        Ok(code) => code,
        Err(Error::Io { source, .. }) if source.kind() == io::ErrorKind::BrokenPipe => EXIT_OK,
        Err(e) => {
            let _ = out.flush();
            report_error(&e);
            EXIT_ERROR
        }
    };
    if let Err(e) = out.flush()
        && e.kind() != io::ErrorKind::BrokenPipe
    {
        eprintln!("mem7: error: {e}");
        return ExitCode::from(EXIT_ERROR);
    }
    ExitCode::from(code)
}

fn report_error(e: &Error) {
    eprintln!("mem7: error: {e}");
    if let Some(hint) = e.hint() {
        eprintln!("  hint: {hint}");
    }
}

fn write_out(out: &mut dyn Write, text: &str) -> Result<()> {
    out.write_all(text.as_bytes())
        .map_err(|e| Error::io("<stdout>", e))
}

fn parse_valid(flag: &str, text: &str) -> Result<ValidTime> {
    request::valid_time(&format!("--{flag}"), text)
}

fn parse_tx(flag: &str, text: &str) -> Result<TxTime> {
    request::tx_time(&format!("--{flag}"), text)
}

/// The read clocks as given; a missing `as_of` is resolved by the engine
/// ([`Engine::as_of`]) once it is open.
fn read_times(at: &args::TimeArgs, now: TxTime) -> Result<(ValidTime, Option<TxTime>)> {
    request::read_times(
        ("--valid-at", at.valid_at.as_deref()),
        ("--as-of", at.as_of.as_deref()),
        now,
    )
}

/// Turns meaning search on as `mem7.yaml` and the `MEM7_EMBED_*` variables say (for the
/// commands that search or fill vectors; the others never touch a provider).
pub(crate) fn enable_embeddings(engine: &mut Engine, env: &Env) -> Result<()> {
    let resolved = crate::embed::resolve(&engine.workspace().config().embeddings, &env.embed)?;
    engine.set_embeddings(resolved);
    Ok(())
}

/// Like [`enable_embeddings`], for commands whose main job is not search (reindex,
/// context, watch, the MCP server): a bad embedding setting is a warning there, and they
/// go on with words only.
fn try_enable_embeddings(engine: &mut Engine, env: &Env, who: &str) {
    if let Err(e) = enable_embeddings(engine, env) {
        let hint = e.hint().map(|h| format!(" ({h})")).unwrap_or_default();
        eprintln!("{who}: warning: {e}{hint}; searching by words only");
    }
}

/// Prints what the engine noted for a person (why search fell back to words, …).
fn print_notes(engine: &mut Engine) {
    for n in engine.take_notes() {
        eprintln!("mem7: note: {n}");
    }
}

/// A progress bar on stderr when it is a terminal.
fn progress_bar() -> Option<indicatif::ProgressBar> {
    use std::io::IsTerminal;
    io::stderr().is_terminal().then(|| {
        let bar = indicatif::ProgressBar::new(0);
        bar.set_style(
            indicatif::ProgressStyle::with_template("{msg:<22} [{bar:30}] {pos}/{len}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
                .progress_chars("=> "),
        );
        bar
    })
}

/// Fills in missing vectors with a progress bar. Returns the stats, or the provider's
/// error (what was computed before it stays cached).
fn fill_embeddings(engine: &mut Engine) -> Result<crate::engine::FillStats> {
    let bar = progress_bar();
    if let Some(bar) = &bar {
        bar.set_message("embedding");
    }
    let result = engine.fill_embeddings(None, &mut |done, total| {
        if let Some(bar) = &bar {
            bar.set_length(total as u64);
            bar.set_position(done as u64);
        }
    });
    if let Some(bar) = &bar {
        bar.finish_and_clear();
    }
    result
}

/// `watch` fills in missing vectors after each catch-up and logs what it did; a provider
/// failure is logged once until it changes, and retried on the next wake.
fn fill_for_watch(engine: &mut Engine, out: &mut dyn Write, last_error: &mut String) -> Result<()> {
    if engine.embedding_model().is_none() {
        return Ok(());
    }
    match engine.fill_embeddings(None, &mut |_, _| {}) {
        Ok(f) => {
            last_error.clear();
            if f.computed > 0 {
                write_out(
                    out,
                    &format!(
                        "{} embedded {} text{} with {}\n",
                        now_text(),
                        f.computed,
                        if f.computed == 1 { "" } else { "s" },
                        f.model
                    ),
                )?;
            }
        }
        Err(e) => {
            let e = e.to_string();
            if *last_error != e {
                eprintln!(
                    "{} mem7 watch: vectors not filled in (retrying on the next change): {e}",
                    now_text()
                );
                *last_error = e;
            }
        }
    }
    Ok(())
}

fn open_engine(cli: &Cli, env: &Env) -> Result<Engine> {
    let root = env.workspace(cli.workspace.as_deref());
    let now = env.now()?;
    let mut engine = Engine::open_at(&root, env.chain_key()?, now)?;
    print_ahead(&mut engine, now);
    let report = engine.sync_report();
    if let Some(reason) = &report.rebuilt
        && reason != "no usable index"
    {
        eprintln!("mem7: reindexed ({reason})");
    }
    for w in &report.warnings {
        eprintln!("mem7: warning: {w}");
    }
    if report.warnings.is_empty() {
        // Problems found by an earlier process stay visible until they are fixed.
        let known = engine.index().warnings()?;
        if let Some(first) = known.first() {
            eprintln!(
                "mem7: warning: {} problem{} in the memory files (first: {first}); `mem7 verify` lists them",
                known.len(),
                if known.len() == 1 { "" } else { "s" }
            );
        }
    }
    Ok(engine)
}

/// Whether `root` is inside a git work tree that lacks mem7's merge driver. False when
/// git is not installed.
fn in_git_without_driver(root: &Path) -> bool {
    // Spawning git costs milliseconds: ask it only when a `.git` is somewhere above.
    if !root.ancestors().any(|dir| dir.join(".git").exists()) {
        return false;
    }
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .current_dir(root)
            .stderr(std::process::Stdio::null())
            .output()
            .ok()
    };
    let inside = git(&["rev-parse", "--is-inside-work-tree"]).is_some_and(|o| o.status.success());
    inside
        && !git(&["config", "--get", "merge.union.driver"])
            .is_some_and(|o| String::from_utf8_lossy(&o.stdout).contains("merge-file"))
}

/// `verify --index` differences as findings.
fn index_findings(check: &crate::index::IndexCheck) -> Vec<crate::verify::Finding> {
    let finding = |file: &str, line: u32, key: &str, message: String| crate::verify::Finding {
        file: file.to_string(),
        line,
        key: key.to_string(),
        kind: "index-mismatch",
        is_break: true,
        message,
        computed: None,
    };
    let mut out = Vec::new();
    for v in &check.missing {
        out.push(finding(
            &v.source.file,
            v.source.line,
            &v.key,
            format!(
                "the index lacks the version valid {} → {} recorded {} → {}",
                v.valid_from, v.valid_to, v.tx_from, v.tx_to
            ),
        ));
    }
    for v in &check.extra {
        out.push(finding(&v.source.file, v.source.line, &v.key, format!(
            "the index holds a version the markdown does not imply (valid {} → {}, recorded {} → {})",
            v.valid_from, v.valid_to, v.tx_from, v.tx_to
        )));
    }
    for (file, what) in &check.files {
        out.push(finding(
            file,
            0,
            "",
            format!("file fingerprint differs: {what}"),
        ));
    }
    if let Some((recorded, actual)) = check.head {
        out.push(finding(
            "",
            0,
            "",
            format!("the index's chain head is {recorded}, the markdown's is {actual}"),
        ));
    }
    out
}

fn now_text() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// One log line per thing a catch-up did.
fn log_catch_up(out: &mut dyn Write, c: &crate::engine::CatchUp, clock: TxTime) -> Result<()> {
    let now = now_text();
    let mut text = String::new();
    if let Some(reason) = &c.sync.rebuilt {
        text.push_str(&format!(
            "{now} rebuilt the index ({reason}): {} entries\n",
            c.sync.applied
        ));
    } else if c.sync.applied > 0 {
        text.push_str(&format!(
            "{now} applied {} new entr{}\n",
            c.sync.applied,
            if c.sync.applied == 1 { "y" } else { "ies" }
        ));
    }
    if c.indexed > 0 {
        text.push_str(&format!(
            "{now} indexed {} version{} for search\n",
            c.indexed,
            if c.indexed == 1 { "" } else { "s" }
        ));
    }
    for w in &c.sync.warnings {
        text.push_str(&format!("{now} warning: {w}\n"));
    }
    for line in crate::index::describe_ahead(&c.sync.ahead, clock) {
        text.push_str(&format!("{now} note: {line}\n"));
    }
    write_out(out, &text)
}

/// Prints versions as a JSON array (`[]` when empty) or as text; an empty text result
/// is said on standard error, so standard output stays the result alone.
fn print_versions(
    out: &mut dyn Write,
    versions: &[crate::core::Version],
    json: bool,
    empty: impl FnOnce() -> String,
    human: impl FnOnce(&[crate::core::Version]) -> String,
) -> Result<()> {
    if json {
        write_out(out, &render::versions_json(versions))
    } else if versions.is_empty() {
        eprintln!("{}", empty());
        Ok(())
    } else {
        write_out(out, &human(versions))
    }
}

/// After a read that found nothing: the existing keys near the one asked for, on
/// standard error (standard output stays the result, `[]` with `--json`).
fn print_near_keys(engine: &mut Engine, env: &Env, key: &str, now: TxTime) -> Result<()> {
    // Meaning search adds keys whose value is near the key's words, when it is on; a
    // bad embedding setting only leaves the suggestions by name.
    if enable_embeddings(engine, env).is_err() {
        engine.set_embeddings(crate::embed::Resolved::Off { explained: None });
    }
    let near = engine.near_keys(key, now)?;
    engine.take_notes();
    if let Some(hint) = render::near_keys_hint(&near) {
        eprintln!("mem7: {hint}");
    }
    Ok(())
}

/// Says which entries the last catch-up met that were recorded ahead of this machine's
/// clock (once each: the next process does not meet them again).
fn print_ahead(engine: &mut Engine, now: TxTime) {
    for line in crate::index::describe_ahead(&engine.take_ahead(), now) {
        eprintln!("mem7: note: {line}");
    }
}

fn print_set_aside(engine: &Engine) {
    for (file, aside) in &engine.sync_report().set_aside {
        eprintln!(
            "mem7: set aside the incomplete entry at the end of {file} in {aside} (its bytes are kept there)"
        );
    }
}

/// Runs one parsed command; returns the exit code.
pub fn execute(cli: &Cli, env: &Env, out: &mut dyn Write) -> Result<u8> {
    match &cli.command {
        Command::Init { dir } => {
            let target = match dir {
                Some(d) => absolute(&env.cwd, d),
                None => cli
                    .workspace
                    .as_deref()
                    .or(env.workspace.as_deref())
                    .map(|d| absolute(&env.cwd, d))
                    .unwrap_or_else(|| env.cwd.clone()),
            };
            let outcome = store::init(&target)?;
            let msg = match outcome {
                store::InitOutcome::Created { kept } => {
                    let mut msg = format!("Created a mem7 workspace in {}\n", target.display());
                    for k in &kept {
                        msg.push_str(&format!("  kept your existing {k}"));
                        msg.push_str(match k.as_str() {
                            ".gitignore" => {
                                ": add the line `.mem7/` to it (the index is not for git)\n"
                            }
                            ".gitattributes" => {
                                ": add `memory/*.md merge=union` and `*.md text eol=lf` to it\n"
                            }
                            _ => "\n",
                        });
                    }
                    msg.push_str(&format!(
                        "  next: mem7 --workspace {} store project:hello \"world\"\n",
                        target.display()
                    ));
                    msg
                }
                store::InitOutcome::AlreadyWorkspace => {
                    format!(
                        "{} is already a mem7 workspace; nothing changed\n",
                        target.display()
                    )
                }
            };
            write_out(out, &msg)?;
            Ok(EXIT_OK)
        }
        Command::Store(a) => {
            let now = env.now()?;
            let value = if a.value == "-" {
                read_stdin()?
            } else {
                a.value.clone()
            };
            let valid_from = a
                .valid_from
                .as_deref()
                .map(|t| parse_valid("valid-from", t))
                .transpose()?;
            let valid_to = a
                .valid_to
                .as_deref()
                .map(|t| request::valid_end("--valid-to", t))
                .transpose()?;
            let req = StoreRequest {
                key: a.key.clone(),
                value,
                valid_from,
                valid_to,
                tags: a.tags.clone(),
                agent: env.agent(a.agent.as_deref()),
                allow_secret: a.allow_secret,
            };
            // Check the request before anything (even the index) is opened or created.
            let root = env.workspace(cli.workspace.as_deref());
            request::check_store(
                &req,
                store::Workspace::open(&root)?.config(),
                now,
                ("--valid-from", "--valid-to"),
            )?;
            let mut engine = open_engine(cli, env)?;
            // Look-alike slots of a new key, by name and (meaning search on) by meaning.
            if enable_embeddings(&mut engine, env).is_err() {
                engine.set_embeddings(crate::embed::Resolved::Off { explained: None });
            }
            let similar = engine.look_alikes(&req.key, &req.value, now)?;
            engine.take_notes();
            let outcome = engine.store(&req, now)?;
            print_ahead(&mut engine, now);
            print_set_aside(&engine);
            let text = if a.json {
                render::store_json(&outcome, &similar)
            } else {
                render::store_human(&outcome, &similar)
            };
            write_out(out, &text)?;
            Ok(EXIT_OK)
        }
        Command::Recall { key, at, json } => {
            let now = env.now()?;
            let (valid_at, as_of) = read_times(at, now)?;
            crate::core::validate::lookup_key(key)?;
            let mut engine = open_engine(cli, env)?;
            let as_of = engine.as_of(as_of, now)?;
            let versions = engine.index().recall(key, valid_at, as_of)?;
            print_versions(
                out,
                &versions,
                *json,
                || format!("mem7: no version of {key} is valid at {valid_at} as of {as_of}"),
                render::versions_human,
            )?;
            if versions.is_empty() {
                print_near_keys(&mut engine, env, key, now)?;
            }
            Ok(EXIT_OK)
        }
        Command::History {
            key,
            as_of,
            json,
            svg,
            valid_at,
        } => {
            let as_of = as_of.as_deref().map(|t| parse_tx("as-of", t)).transpose()?;
            let valid_at = valid_at
                .as_deref()
                .map(|t| parse_valid("valid-at", t))
                .transpose()?;
            let now = env.now()?;
            crate::core::validate::lookup_key(key)?;
            let mut engine = open_engine(cli, env)?;
            if *svg {
                // The picture shows every version; the read's clocks are drawn as lines.
                let versions = engine.index().history(key, None)?;
                let picture = crate::view::svg::Picture {
                    key,
                    versions: &versions,
                    now: (now.as_valid(), engine.believed_now(now)?),
                    valid_at,
                    as_of,
                    link: None,
                };
                write_out(out, &crate::view::svg::render(&picture))?;
                if versions.is_empty() {
                    eprintln!("mem7: no history for {key}");
                }
                return Ok(EXIT_OK);
            }
            let versions = engine.index().history(key, as_of)?;
            print_versions(
                out,
                &versions,
                *json,
                || format!("mem7: no history for {key}"),
                render::versions_human,
            )?;
            if versions.is_empty() {
                print_near_keys(&mut engine, env, key, now)?;
            }
            Ok(EXIT_OK)
        }
        Command::List {
            prefix,
            tags,
            at,
            json,
        } => {
            let now = env.now()?;
            let (valid_at, as_of) = read_times(at, now)?;
            let engine = open_engine(cli, env)?;
            let as_of = engine.as_of(as_of, now)?;
            let versions = engine
                .index()
                .list(prefix.as_deref(), tags, valid_at, as_of)?;
            print_versions(
                out,
                &versions,
                *json,
                || format!("mem7: no keys match at valid_at {valid_at} as of {as_of}"),
                render::versions_human,
            )?;
            Ok(EXIT_OK)
        }
        Command::Search {
            query,
            at,
            tags,
            key_prefix,
            limit,
            raw,
            mode,
            json,
        } => {
            let now = env.now()?;
            let (valid_at, as_of) = read_times(at, now)?;
            let mode = match mode {
                None => crate::index::fulltext::SearchMode::Auto,
                Some(args::SearchModeArg::Lexical) => crate::index::fulltext::SearchMode::Lexical,
                Some(args::SearchModeArg::Semantic) => crate::index::fulltext::SearchMode::Semantic,
                Some(args::SearchModeArg::Hybrid) => crate::index::fulltext::SearchMode::Hybrid,
            };
            if *raw
                && !matches!(
                    mode,
                    crate::index::fulltext::SearchMode::Auto
                        | crate::index::fulltext::SearchMode::Lexical
                )
            {
                return Err(Error::input(
                    "--raw is tantivy query syntax, which only the word side understands",
                    "drop --raw, or search with --mode lexical",
                ));
            }
            let mut engine = open_engine(cli, env)?;
            let as_of = engine.as_of(as_of, now)?;
            if !*raw && mode != crate::index::fulltext::SearchMode::Lexical {
                enable_embeddings(&mut engine, env)?;
            }
            let req = crate::index::fulltext::SearchRequest {
                text: query.clone(),
                raw: *raw,
                valid_at,
                as_of,
                tags: tags.clone(),
                key_prefix: key_prefix.clone(),
                limit: *limit,
                mode,
            };
            let hits = engine.search(&req);
            print_notes(&mut engine);
            let hits = hits?;
            if *json {
                write_out(out, &render::hits_json(&hits))?;
            } else if hits.is_empty() {
                eprintln!("mem7: nothing matches {query:?} at valid_at {valid_at} as of {as_of}");
            } else {
                use std::io::IsTerminal;
                write_out(out, &render::hits_human(&hits, io::stdout().is_terminal()))?;
            }
            Ok(EXIT_OK)
        }
        Command::Timeline {
            clock,
            since,
            until,
            key_prefix,
            json,
        } => {
            let since = since
                .as_deref()
                .map(|t| parse_valid("since", t))
                .transpose()?;
            let until = until
                .as_deref()
                .map(|t| parse_valid("until", t))
                .transpose()?;
            env.now()?;
            let engine = open_engine(cli, env)?;
            let versions = engine.index().timeline(
                *clock == args::Clock::Tx,
                since.map(|t| t.micros()),
                until.map(|t| t.micros()),
                key_prefix.as_deref(),
            )?;
            let by_tx = *clock == args::Clock::Tx;
            print_versions(
                out,
                &versions,
                *json,
                || "mem7: no versions in that range".to_string(),
                |v| render::timeline_human(v, by_tx),
            )?;
            Ok(EXIT_OK)
        }
        Command::Watch {
            interval,
            sync_every,
        } => {
            let every_flag = sync_every
                .as_deref()
                .map(|t| {
                    crate::sync::parse_every(t).map_err(|e| {
                        Error::input(format!("--sync-every: {e}"), "e.g. --sync-every 5m")
                    })
                })
                .transpose()?;
            let mut engine = open_engine(cli, env)?;
            let sync_every = match every_flag {
                Some(d) => Some(d),
                None => engine
                    .workspace()
                    .config()
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
                    .transpose()?,
            };
            let memory = engine.workspace().root().join(store::MEMORY_DIR);
            std::fs::create_dir_all(&memory).map_err(|e| Error::io(&memory, e))?;
            let watcher =
                crate::watch::Watcher::new(&memory, std::time::Duration::from_millis(200))?;
            try_enable_embeddings(&mut engine, env, "mem7 watch");
            // Whatever changed before the watcher started is caught up first.
            let now = env.now()?;
            log_catch_up(out, &engine.catch_up(now)?, now)?;
            let mut fill_error = String::new();
            fill_for_watch(&mut engine, out, &mut fill_error)?;
            write_out(
                out,
                &format!(
                    "mem7 watch: keeping the index of {} current (Ctrl-C to stop)\n",
                    engine.workspace().root().display()
                ),
            )?;
            if let Some(every) = sync_every {
                write_out(
                    out,
                    &format!(
                        "mem7 watch: syncing through git every {}\n",
                        sync::duration_text(every.as_secs() as i64)
                    ),
                )?;
            }
            out.flush().map_err(|e| Error::io("<stdout>", e))?;
            let interval = std::time::Duration::from_secs((*interval).max(1));
            // The files as they were when a catch-up last failed: reading them wakes the
            // watcher again, so a failure is retried only once they change.
            let mut failed_on: Option<Vec<store::FileStat>> = None;
            // The first sync runs at once, then one every period.
            let mut next_sync = sync_every.map(|_| std::time::Instant::now());
            loop {
                let wait = next_sync.map_or(interval, |due| {
                    interval.min(due.saturating_duration_since(std::time::Instant::now()))
                });
                if watcher.next(wait) == crate::watch::Wake::Closed {
                    break;
                }
                if let (Some(due), Some(every)) = (next_sync, sync_every)
                    && std::time::Instant::now() >= due
                {
                    sync::watch_sync(cli, env, out, every)?;
                    out.flush().map_err(|e| Error::io("<stdout>", e))?;
                    next_sync = Some(std::time::Instant::now() + every);
                    // What the sync brought in is caught up below, failed or not.
                    failed_on = None;
                }
                if failed_on.is_some() && engine.workspace().scan().ok() == failed_on {
                    continue;
                }
                let now = env.now()?;
                match engine.catch_up(now) {
                    Ok(c) => {
                        failed_on = None;
                        log_catch_up(out, &c, now)?;
                        fill_for_watch(&mut engine, out, &mut fill_error)?;
                    }
                    // A conflict or a damaged file is reported and waited out: the person
                    // fixing it will change the file again, which wakes us.
                    Err(e) => {
                        eprintln!("{} mem7: error: {e}", now_text());
                        failed_on = engine.workspace().scan().ok();
                    }
                }
                out.flush().map_err(|e| Error::io("<stdout>", e))?;
            }
            Ok(EXIT_OK)
        }
        Command::Rekey {
            from,
            to,
            dry_run,
            agent,
            json,
        } => {
            let now = env.now()?;
            let agent = env.agent(agent.as_deref());
            crate::core::validate::agent(&agent)?;
            crate::core::validate::lookup_key(from)?;
            crate::core::validate::key(to)?;
            let mut engine = open_engine(cli, env)?;
            let plan = if *dry_run {
                engine.plan_rekey(from, to)?
            } else {
                engine.rekey(from, to, &agent, now)?
            };
            let text = if *json {
                render::rekey_json(&plan, !*dry_run)
            } else {
                render::rekey_human(from, to, &plan, !*dry_run)
            };
            write_out(out, &text)?;
            Ok(EXIT_OK)
        }
        Command::Forget { key, agent } => {
            let now = env.now()?;
            crate::core::validate::lookup_key(key)?;
            let agent = env.agent(agent.as_deref());
            crate::core::validate::agent(&agent)?;
            let mut engine = open_engine(cli, env)?;
            let outcome = engine.forget(key, &agent, now)?;
            print_set_aside(&engine);
            match outcome {
                ForgetOutcome::Forgotten { closed, source } => write_out(
                    out,
                    &format!(
                        "forgot {key}: {closed} version{} no longer believed ({}:{})\n",
                        if closed == 1 { "" } else { "s" },
                        source.file,
                        source.line
                    ),
                )?,
                ForgetOutcome::NothingBelieved => write_out(
                    out,
                    &format!(
                        "nothing to forget: no version of {key} is believed; nothing written\n"
                    ),
                )?,
            }
            Ok(EXIT_OK)
        }
        Command::Verify {
            index,
            expect_head,
            json,
        } => {
            let root = env.workspace(cli.workspace.as_deref());
            let ws = store::Workspace::open(&root)?;
            // Asking git about the merge driver takes a process or two: meanwhile, verify.
            let git_hint = std::thread::spawn({
                let root = root.clone();
                move || in_git_without_driver(&root)
            });
            let now = env.now()?;
            let mut report = crate::verify::verify(&ws, &env.chain_key()?, expect_head.as_deref())?;
            report
                .findings
                .extend(crate::verify::recorded_ahead(&ws, now)?);
            if *index {
                let mut engine = open_engine(cli, env)?;
                let check = engine.check_index()?;
                report.findings.extend(index_findings(&check));
                report
                    .findings
                    .sort_by(|a, b| (&a.file, a.line).cmp(&(&b.file, b.line)));
                if check.matches() {
                    eprintln!(
                        "mem7: the index matches the markdown ({} versions, chain head, file fingerprints)",
                        check.expected_versions
                    );
                } else {
                    eprintln!("mem7: the index differed from the markdown; it was rebuilt");
                }
            }
            let text = if *json {
                // The summary goes to standard error so standard output stays one array.
                eprint!("{}", render::verify_summary(&report));
                render::verify_json(&report)
            } else {
                render::verify_human(&report)
            };
            write_out(out, &text)?;
            if git_hint.join().unwrap_or(false) {
                eprintln!(
                    "mem7: hint: this workspace is in a git repository whose merges would interleave entries \
                     (git's line-wise union merge); run `mem7 setup-git` once per clone"
                );
            }
            Ok(if report.is_broken() {
                EXIT_CHECK_FAILED
            } else {
                EXIT_OK
            })
        }
        Command::Seal { agent } => {
            let now = env.now()?;
            let agent = env.agent(agent.as_deref());
            let mut engine = open_engine(cli, env)?;
            let outcome = engine.seal(&agent, now)?;
            print_set_aside(&engine);
            match outcome {
                SealOutcome::NothingToSeal { entries } => write_out(
                    out,
                    &format!("nothing to seal: all {entries} entries verify\n"),
                )?,
                SealOutcome::Sealed { accepted, source } => {
                    let mut text = format!(
                        "sealed {} ({}:{}):\n",
                        crate::verify::count_accepted(&accepted),
                        source.file,
                        source.line
                    );
                    for f in &accepted {
                        // Foreign text has no key.
                        let key = if f.key.is_empty() {
                            String::new()
                        } else {
                            format!(" {}", f.key)
                        };
                        text.push_str(&format!("  {}:{}{key} ({})\n", f.file, f.line, f.kind));
                    }
                    write_out(out, &text)?;
                }
            }
            Ok(EXIT_OK)
        }
        Command::Import { file, allow_secret } => {
            let now = env.now()?;
            let input = crate::transfer::import::Input::open(file)?;
            let agent = |a: Option<&str>| env.agent(a);
            let root = env.workspace(cli.workspace.as_deref());
            let count = crate::transfer::import::check(
                &input,
                &agent,
                *allow_secret,
                store::Workspace::open(&root)?.config(),
            )?;
            let mut engine = open_engine(cli, env)?;
            let started = std::time::Instant::now();
            let outcome = engine.import_each(&mut input.records(&agent, *allow_secret)?, now)?;
            print_set_aside(&engine);
            if let Some(first) = outcome.raised_ties.first() {
                eprintln!(
                    "mem7: note: {} record{} (first: line {first}) recorded at the same instant as an entry it does not commute with could not keep that order at one instant: recorded 1µs later (docs/cli.md, mem7 export)",
                    outcome.raised_ties.len(),
                    if outcome.raised_ties.len() == 1 {
                        ""
                    } else {
                        "s"
                    },
                );
            }
            write_out(
                out,
                &format!(
                    "imported {} record{}: {} stored, {}{} unchanged, into {} file{} in {:.2?}\n",
                    count,
                    if count == 1 { "" } else { "s" },
                    outcome.stored,
                    // Said only when there are forgets, so store-only output is as before.
                    if outcome.forgot > 0 {
                        format!("{} forgotten, ", outcome.forgot)
                    } else {
                        String::new()
                    },
                    outcome.unchanged,
                    outcome.files,
                    if outcome.files == 1 { "" } else { "s" },
                    started.elapsed()
                ),
            )?;
            Ok(EXIT_OK)
        }
        Command::Export {
            history,
            at,
            format,
            output,
        } => {
            let now = env.now()?;
            let (valid_at, as_of) = read_times(at, now)?;
            let engine = open_engine(cli, env)?;
            let format = match format {
                args::ExportFormatArg::Json => crate::transfer::export::Format::Json,
                args::ExportFormatArg::Csv => crate::transfer::export::Format::Csv,
            };
            if *history {
                let mut stats = Default::default();
                crate::transfer::write_output(output.as_deref(), out, &mut |w| {
                    stats = crate::transfer::export::history(engine.workspace(), format, w)?;
                    Ok(())
                })?;
                let stats: crate::transfer::export::HistoryStats = stats;
                if stats.sorted_in_memory {
                    eprintln!(
                        "mem7: note: an entry sits in another day's file; the history was sorted in memory"
                    );
                }
                if stats.skipped > 0 {
                    eprintln!(
                        "mem7: warning: {} entr{} the index skips (see `mem7 verify`) not exported",
                        stats.skipped,
                        if stats.skipped == 1 { "y" } else { "ies" }
                    );
                }
            } else {
                let as_of = engine.as_of(as_of, now)?;
                crate::transfer::write_output(output.as_deref(), out, &mut |w| {
                    crate::transfer::export::snapshot(engine.index(), valid_at, as_of, format, w)
                        .map(|_| ())
                })?;
            }
            Ok(EXIT_OK)
        }
        Command::ImportNotes {
            path,
            write,
            skip_bad,
        } => import_notes(cli, env, out, path, *write, *skip_bad),
        Command::SetupGit => {
            let root = env.workspace(cli.workspace.as_deref());
            store::Workspace::open(&root)?;
            let exe = std::env::current_exe().map_err(|e| Error::io("<current exe>", e))?;
            let driver = crate::sync::git::register_driver(&root, &exe)?;
            write_out(
                out,
                &format!(
                    "git merges in {} now keep memory entries whole (merge.union.driver = {driver})\n",
                    root.display()
                ),
            )?;
            Ok(EXIT_OK)
        }
        Command::Sync {
            remote,
            no_push,
            json,
        } => sync::run(cli, env, out, remote.as_deref(), *no_push, *json),
        Command::MergeFile {
            base,
            ours,
            theirs,
            path,
        } => {
            let is_memory = path
                .as_deref()
                .is_none_or(|p| p.rsplit('/').next().is_some_and(store::is_day_file_name));
            if !is_memory {
                // Not a memory file: behave exactly like git's own union merge.
                let status = std::process::Command::new("git")
                    .arg("merge-file")
                    .arg("--union")
                    .arg(ours)
                    .arg(base)
                    .arg(theirs)
                    .status()
                    .map_err(|e| Error::io("git merge-file", e))?;
                return Ok(if status.success() {
                    EXIT_OK
                } else {
                    EXIT_CHECK_FAILED
                });
            }
            let read = |p: &PathBuf| std::fs::read_to_string(p).map_err(|e| Error::io(p, e));
            let merged = crate::merge::merge_entries(&read(base)?, &read(ours)?, &read(theirs)?);
            std::fs::write(ours, &merged.text).map_err(|e| Error::io(ours, e))?;
            if merged.conflict {
                eprintln!(
                    "mem7: both sides edited the same old entry in {}; kept ours. Compare with `git diff` and run `mem7 verify`",
                    path.as_deref().unwrap_or("the memory file")
                );
                return Ok(EXIT_CHECK_FAILED);
            }
            Ok(EXIT_OK)
        }
        Command::Reindex { embed } => {
            let root = env.workspace(cli.workspace.as_deref());
            let started = std::time::Instant::now();
            let bar = progress_bar();
            let mut show = |p: crate::index::Progress| {
                if let Some(bar) = &bar {
                    match p {
                        crate::index::Progress::Reading { done, total } => {
                            bar.set_message("reading memory files");
                            bar.set_length(total);
                            bar.set_position(done);
                        }
                        crate::index::Progress::Folding { done, total } => {
                            bar.set_message("folding versions");
                            bar.set_length(total);
                            bar.set_position(done);
                        }
                        crate::index::Progress::Finishing => bar.set_message("writing indexes"),
                    }
                }
            };
            let (mut engine, stats) = Engine::open_rebuilt(&root, env.chain_key()?, &mut show)?;
            if let Some(bar) = &bar {
                bar.finish_and_clear();
            }
            for w in &stats.warnings {
                eprintln!("mem7: warning: {w}");
            }
            write_out(
                out,
                &format!(
                    "reindexed {} entries from {} files into {} versions in {:.2?}\n",
                    stats.entries,
                    stats.files,
                    stats.versions,
                    started.elapsed()
                ),
            )?;
            // The rebuild kept every cached vector. A rebuild does not embed unless
            // asked: it says how many texts wait and how to fill them.
            try_enable_embeddings(&mut engine, env, "mem7");
            if engine.embedding_model().is_some() && !*embed {
                let waiting = engine.fill_embeddings(Some(0), &mut |_, _| {})?;
                if waiting.missing > 0 {
                    write_out(
                        out,
                        &format!(
                            "{} text{} wait for vectors of {}: run `mem7 embed` (or `mem7 reindex --embed`), \
                             or leave `mem7 watch` or the MCP server running, which fill them in the background\n",
                            waiting.missing,
                            if waiting.missing == 1 { "" } else { "s" },
                            waiting.model
                        ),
                    )?;
                }
            }
            if engine.embedding_model().is_some() && *embed {
                match fill_embeddings(&mut engine) {
                    Ok(f) if f.computed > 0 => write_out(
                        out,
                        &format!(
                            "embedded {} new text{} with {}\n",
                            f.computed,
                            if f.computed == 1 { "" } else { "s" },
                            f.model
                        ),
                    )?,
                    Ok(_) => {}
                    Err(e) => eprintln!(
                        "mem7: warning: vectors not filled in: {e}; the index is rebuilt, `mem7 embed` retries"
                    ),
                }
            }
            Ok(EXIT_OK)
        }
        Command::Embed { prune, json } => {
            let mut engine = open_engine(cli, env)?;
            enable_embeddings(&mut engine, env)?;
            let filled = fill_embeddings(&mut engine);
            print_notes(&mut engine);
            let filled = filled?;
            let pruned = if *prune {
                Some(engine.prune_embeddings()?)
            } else {
                None
            };
            let cached = engine.cached_vectors()?;
            if *json {
                let v = serde_json::json!({
                    "model": filled.model,
                    "missing": filled.missing,
                    "computed": filled.computed,
                    "pruned": pruned,
                    "cached": cached,
                });
                write_out(
                    out,
                    &format!("{}\n", serde_json::to_string_pretty(&v).unwrap_or_default()),
                )?;
            } else {
                let mut s = format!(
                    "embedded {} new text{} with {}; the cache holds {cached} vector{}\n",
                    filled.computed,
                    if filled.computed == 1 { "" } else { "s" },
                    filled.model,
                    if cached == 1 { "" } else { "s" },
                );
                if let Some(n) = pruned {
                    s.push_str(&format!(
                        "pruned {n} vector{} of other models or texts no longer held\n",
                        if n == 1 { "" } else { "s" }
                    ));
                }
                write_out(out, &s)?;
            }
            Ok(EXIT_OK)
        }
        Command::Demo => {
            demo::run(out)?;
            Ok(EXIT_OK)
        }
        Command::Context {
            query,
            at,
            max_chars,
            hook,
        } => {
            let now = env.now()?;
            let (valid_at, as_of) = read_times(at, now)?;
            let mut engine = open_engine(cli, env)?;
            let as_of = engine.as_of(as_of, now)?;
            if query.as_deref().is_some_and(|q| !q.trim().is_empty()) {
                try_enable_embeddings(&mut engine, env, "mem7");
            }
            let req = crate::context::ContextRequest {
                query: query.clone(),
                valid_at,
                as_of,
                max_chars: *max_chars,
            };
            let gathered = crate::context::gather(&mut engine, &req);
            print_notes(&mut engine);
            let block = crate::context::render(&gathered?, &req);
            let text = match hook {
                Some(args::Client::ClaudeCode) => crate::context::claude_code_hook(&block),
                Some(args::Client::Codex) | None => block,
            };
            write_out(out, &text)?;
            Ok(EXIT_OK)
        }
        Command::Mcp => {
            let mut engine = open_engine(cli, env)?;
            try_enable_embeddings(&mut engine, env, "mem7");
            let server = crate::mcp::MemoryServer::new(engine, env.clone());
            server.spawn_watcher()?;
            runtime()?.block_on(async {
                use rmcp::ServiceExt;
                let running = server
                    .serve(rmcp::transport::stdio())
                    .await
                    .map_err(|e| Error::io("<stdio>", io::Error::other(e.to_string())))?;
                running
                    .waiting()
                    .await
                    .map_err(|e| Error::io("<stdio>", io::Error::other(e.to_string())))?;
                Ok::<(), Error>(())
            })?;
            Ok(EXIT_OK)
        }
        Command::Serve { listen, token } => {
            crate::auth::check_token(token)?;
            let mut engine = open_engine(cli, env)?;
            try_enable_embeddings(&mut engine, env, "mem7");
            let server = crate::mcp::MemoryServer::new(engine, env.clone());
            server.spawn_watcher()?;
            runtime()?.block_on(async {
                let (listener, addr) = bind(*listen).await?;
                eprintln!(
                    "mem7 serve: MCP on http://{addr}{} for {} (Ctrl-C to stop)",
                    crate::mcp::http::MCP_PATH,
                    env.workspace(cli.workspace.as_deref()).display()
                );
                if !addr.ip().is_loopback() {
                    eprintln!(
                        "mem7 serve: warning: {addr} is reachable from other machines; the token is all that guards it, and HTTP is not encrypted"
                    );
                }
                crate::mcp::http::serve(server, listener, token).await
            })?;
            Ok(EXIT_OK)
        }
        Command::Ui { listen, token } => {
            let token = crate::auth::token_for("mem7 ui", *listen, token.as_deref())?;
            let chain_key = env.chain_key()?;
            let mut engine = open_engine(cli, env)?;
            try_enable_embeddings(&mut engine, env, "mem7 ui");
            runtime()?.block_on(async {
                let (listener, addr) = bind(*listen).await?;
                write_out(
                    out,
                    &format!("mem7 ui: serving http://{addr}/ (Ctrl-C stops)\n"),
                )?;
                out.flush().map_err(|e| Error::io("<stdout>", e))?;
                if token.is_some() {
                    eprintln!(
                        "mem7 ui: requests need the token: `Authorization: Bearer <token>`, or open http://{addr}/?token=<token> once in a browser"
                    );
                }
                if !addr.ip().is_loopback() {
                    eprintln!(
                        "mem7 ui: warning: {addr} is reachable from other machines; the token is all that guards it, and HTTP is not encrypted"
                    );
                }
                crate::view::server::serve(engine, env.clone(), chain_key, listener, token).await
            })?;
            Ok(EXIT_OK)
        }
        Command::Setup {
            client,
            scope,
            write,
        } => setup::run(
            out,
            env,
            &env.workspace(cli.workspace.as_deref()),
            *client,
            *scope,
            *write,
        ),
    }
}

/// Binds a server's listener; a busy or foreign address is an input error (exit 2).
async fn bind(
    listen: std::net::SocketAddr,
) -> Result<(tokio::net::TcpListener, std::net::SocketAddr)> {
    let listener = tokio::net::TcpListener::bind(listen).await.map_err(|e| {
        Error::input(
            format!("cannot listen on {listen}: {e}"),
            "pick another port with --listen 127.0.0.1:PORT (0 picks a free one)",
        )
    })?;
    let addr = listener
        .local_addr()
        .map_err(|e| Error::io("<listener>", e))?;
    Ok((listener, addr))
}

/// The async runtime of the servers: two workers (tool calls run on blocking threads).
fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| Error::io("<tokio runtime>", e))
}

/// `mem7 import-notes`: reads the notes (`crate::transfer::notes`), names the bad ones,
/// then prints what it would store or stores it in one batch through the import path.
fn import_notes(
    cli: &Cli,
    env: &Env,
    out: &mut dyn Write,
    path: &Path,
    write: bool,
    skip_bad: bool,
) -> Result<u8> {
    use crate::transfer::notes;
    let now = env.now()?;
    let root = env.workspace(cli.workspace.as_deref());
    let max = store::Workspace::open(&root)?.config().max_value_bytes();
    if !path.exists() {
        return Err(Error::input(
            format!("{} does not exist", path.display()),
            "give a notes folder, a Claude Code memory folder (~/.claude/projects/<project>/memory) or one .md file",
        ));
    }
    let batch = notes::collect(path, max)?;
    let shown = |file: &str| path.join(file).display().to_string();
    if !batch.bad.is_empty() {
        for b in &batch.bad {
            let verb = if skip_bad { "skipped " } else { "" };
            eprintln!("mem7: {verb}{}:{}: {}", shown(&b.file), b.line, b.problem);
        }
        if !skip_bad {
            return Err(Error::input(
                format!(
                    "{} bad note{}; nothing was written",
                    batch.bad.len(),
                    if batch.bad.len() == 1 { "" } else { "s" }
                ),
                "fix them, or pass --skip-bad to import the rest",
            ));
        }
    }
    let mut engine = open_engine(cli, env)?;
    let mut records = Vec::new();
    let mut unchanged = 0;
    let mut text = String::new();
    for (i, f) in batch.facts.iter().enumerate() {
        let believed = engine.index().believed(&f.key)?;
        let mut want = f.tags.clone();
        want.sort();
        let holds = believed.iter().any(|v| {
            let mut tags = v.tags.clone();
            tags.sort();
            v.value == f.value
                && tags == want
                && match f.valid_from {
                    Some(from) => v.valid_from == from,
                    None => v.valid_from <= now.as_valid() && now.as_valid() < v.valid_to,
                }
        });
        let from = f
            .valid_from
            .map_or_else(|| "now".to_string(), |t| t.to_string());
        if holds {
            unchanged += 1;
            text.push_str(&format!(
                "unchanged {} (holds; {}:{})\n",
                f.key,
                shown(&f.file),
                f.line
            ));
            continue;
        }
        if !write {
            text.push_str(&format!(
                "would store {} = {} (valid from {from}; {}:{})\n",
                f.key,
                notes::shorten(&f.value, 60),
                shown(&f.file),
                f.line
            ));
        }
        records.push(crate::engine::ImportRecord {
            op: crate::engine::ImportOp::Store,
            req: StoreRequest {
                key: f.key.clone(),
                value: f.value.clone(),
                valid_from: f.valid_from,
                valid_to: None,
                tags: f.tags.clone(),
                agent: notes::agent_for(&f.file),
                allow_secret: false,
            },
            recorded: None,
            line: i + 1,
            keep_ties: false,
        });
    }
    let files = format!(
        "{} file{}",
        batch.files,
        if batch.files == 1 { "" } else { "s" }
    );
    if !write {
        text.push_str(&format!(
            "dry run: {} to store, {unchanged} unchanged, {} bad, from {files}; nothing written (pass --write to store)\n",
            records.len(),
            batch.bad.len()
        ));
        write_out(out, &text)?;
        return Ok(EXIT_OK);
    }
    let outcome = if records.is_empty() {
        Default::default()
    } else {
        engine.import(&records, now)?
    };
    print_set_aside(&engine);
    let outcome: crate::engine::ImportOutcome = outcome;
    text.push_str(&format!(
        "imported notes: {} stored, {} unchanged, {} bad skipped, from {files}\n",
        outcome.stored,
        unchanged + outcome.unchanged,
        batch.bad.len()
    ));
    write_out(out, &text)?;
    Ok(EXIT_OK)
}

/// Reads a value from standard input; one trailing line break is dropped (as `$(…)` would).
fn read_stdin() -> Result<String> {
    let mut bytes = Vec::new();
    io::stdin()
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io("<stdin>", e))?;
    let mut text = String::from_utf8(bytes)
        .map_err(|_| Error::input("standard input is not valid UTF-8", "values are UTF-8 text"))?;
    if text.ends_with('\n') {
        text.pop();
        if text.ends_with('\r') {
            text.pop();
        }
    }
    Ok(text)
}
