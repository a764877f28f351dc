//! The command-line interface: reads the environment, resolves arguments into requests,
//! runs them through the engine, renders the answers, and maps errors to exit codes.
//! The only module that reads env variables or prints.
//!
//! This file holds the entry (`run`), the error funnel, the dispatch (`execute`) and
//! `import`; each other command lives with its kind: `read.rs`, `write.rs`, `index.rs`,
//! `verify.rs`, `git.rs`, `sync.rs`, `watch.rs`, `serve.rs`, `setup.rs`, `demo.rs`,
//! `model.rs`, `hook.rs` (`hook` and `capture`). The engine is opened, and long-running work is done, by [`crate::front::session`].

mod args;
mod demo;
mod git;
mod hook;
mod hook_args;
mod index;
mod model;
mod read;
mod read_args;
mod safe;
mod serve;
mod setup;
mod sync;
mod values;
mod verify;
mod watch;
mod write;

use std::io::{self, Write};
use std::process::ExitCode;

use clap::Parser;

pub use args::{Cli, Command};

use crate::core::time::{TxTime, ValidTime};
use crate::engine::Engine;
use crate::error::{Error, Result};
pub use crate::front::env::{CHAIN_KEY_CONTEXT, Env, safe_agent};
use crate::front::request;
use crate::front::session;

/// Exit code for success.
pub const EXIT_OK: u8 = 0;
/// Exit code when a check failed (verify).
pub const EXIT_CHECK_FAILED: u8 = 1;
/// Exit code for usage and input errors ([`crate::error::Kind::Input`]).
pub const EXIT_ERROR: u8 = crate::error::EXIT_INPUT;
/// Exit code for a failure inside mem7 ([`crate::error::Kind::Internal`]).
pub const EXIT_INTERNAL: u8 = crate::error::EXIT_INTERNAL;
/// Exit code when `recall` found no version: not an error, but a script can branch on it
/// (as on `grep`'s 1, which mem7 gives to failed checks).
pub const EXIT_NOT_FOUND: u8 = 4;

/// Runs the CLI with the process's arguments and environment.
pub fn run() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { EXIT_ERROR } else { EXIT_OK });
        }
    };
    // A file-size limit (`ulimit -f`) then fails a write with an error, as a full disk
    // does, instead of killing mem7 in the middle of an append.
    // SAFETY: setting a signal's disposition to "ignore" runs no code of ours.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
    let env = Env::from_process();
    // Not locked for the whole run: the MCP server writes to standard output from
    // another thread.
    // What people read is made safe for their terminal; an export's data is not
    // touched (it goes to files and other programs, byte for byte).
    let mut out: Box<dyn Write> = match cli.command {
        Command::Export { .. } | Command::MergeFile { .. } => Box::new(io::stdout()),
        _ => Box::new(safe::Safe::new(io::stdout())),
    };
    let code = match execute(&cli, &env, &mut out) {
        Ok(code) => code,
        Err(Error::Io { source, .. }) if source.kind() == io::ErrorKind::BrokenPipe => EXIT_OK,
        Err(e) => {
            let _ = out.flush();
            report_error(&e);
            e.exit_code()
        }
    };
    if let Err(e) = out.flush()
        && e.kind() != io::ErrorKind::BrokenPipe
    {
        eprintln!("error: <stdout>: {e}");
        return ExitCode::from(EXIT_INTERNAL);
    }
    ExitCode::from(code)
}

fn report_error(e: &Error) {
    eprintln!("error: {}", safe::neutralise(&e.to_string()));
    if e.kind() == crate::error::Kind::Internal {
        eprintln!("  (a failure inside mem7, not a problem with the request)");
    }
    if let Some(hint) = e.hint() {
        eprintln!("  hint: {}", safe::neutralise(&hint));
    }
    if matches!(e, Error::Credential { .. }) {
        eprintln!(
            "  if it is not a secret, pass --allow-secret (the entry says so, and sync still checks it)"
        );
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

fn open_engine(cli: &Cli, env: &Env) -> Result<Engine> {
    session::open(env, cli.workspace.as_deref())
}

fn print_set_aside(engine: &Engine) {
    for (file, aside) in &engine.catch_up_report().set_aside {
        eprintln!(
            "mem7: set aside the incomplete entry at the end of {file} in {aside} (its bytes are kept there)"
        );
    }
}

/// Runs one parsed command; returns the exit code.
pub fn execute(cli: &Cli, env: &Env, out: &mut dyn Write) -> Result<u8> {
    match &cli.command {
        Command::Init { dir } => write::init(cli, env, out, dir),
        Command::Allow { dir, revoke } => write::allow(cli, env, out, dir.as_deref(), *revoke),
        Command::Store(a) => write::store(cli, env, out, a),
        Command::Recall {
            key,
            at,
            tier,
            scope,
            json,
        } => read::recall(
            cli,
            env,
            out,
            key,
            at,
            (tier.wanted(), scope.level()),
            *json,
        ),
        Command::History(a) => read::history(cli, env, out, a),
        Command::List(a) => read::list(cli, env, out, a),
        Command::Search(a) => read::search(cli, env, out, a),
        Command::Timeline(a) => read::timeline(cli, env, out, a),
        Command::Watch {
            interval,
            sync_every,
        } => watch::run(cli, env, out, *interval, sync_every.as_deref()),
        Command::Rekey(a) => write::rekey(cli, env, out, a),
        Command::Forget {
            key,
            entry,
            agent,
            scope,
        } => write::forget(
            cli,
            env,
            out,
            key,
            entry.as_deref(),
            agent.as_deref(),
            scope.level(),
        ),
        Command::Verify {
            index,
            expect_head,
            json,
        } => verify::verify(cli, env, out, *index, expect_head.as_deref(), *json),
        Command::Seal { agent } => write::seal(cli, env, out, agent.as_deref()),
        Command::Import { file, allow_secret } => write::import(cli, env, out, file, *allow_secret),
        Command::Export {
            history,
            at,
            format,
            output,
            scope,
        } => read::export(
            cli,
            env,
            out,
            (*history, scope.level()),
            at,
            *format,
            output,
        ),
        Command::ImportNotes {
            path,
            write,
            skip_bad,
        } => write::import_notes(cli, env, out, path, *write, *skip_bad),
        Command::SetupGit { capture } => git::setup_git(cli, env, out, *capture),
        Command::Hook { client } => Ok(hook::run(cli, env, out, client)),
        Command::Capture { action } => hook::capture(cli, env, out, action),
        Command::Sync {
            remote,
            no_push,
            json,
            scope,
        } => sync::run_scopes(
            cli,
            env,
            out,
            remote.as_deref(),
            *no_push,
            *json,
            scope.level(),
        ),
        Command::MergeFile {
            base,
            ours,
            theirs,
            path,
        } => git::merge_file(base, ours, theirs, path.as_deref()),
        Command::Reindex { embed } => index::reindex(cli, env, out, *embed),
        Command::Embed { prune, json } => index::embed(cli, env, out, *prune, *json),
        Command::Model { action } => model::run(cli, env, out, action),
        Command::Demo => demo::run(out).map(|()| EXIT_OK),
        Command::Context(a) => read::context(cli, env, out, a),
        Command::Mcp => serve::mcp(cli, env),
        Command::Serve { listen, token } => serve::serve(cli, env, *listen, token),
        Command::Ui { listen, token } => serve::ui(cli, env, out, *listen, token.as_deref()),
        Command::Setup {
            client,
            scope,
            write,
            capture,
        } => setup(cli, env, out, *client, *scope, (*write, *capture)),
    }
}

/// `mem7 setup`: the agent's configuration for the workspace. A project's configuration
/// that would point at the person's own workspace only because the project has none yet
/// is said, with the way to make one.
fn setup(
    cli: &Cli,
    env: &Env,
    out: &mut dyn Write,
    client: args::Client,
    scope: args::Scope,
    (write, capture): (bool, bool),
) -> Result<u8> {
    if scope == args::Scope::Project && env.project_workspace(cli.workspace.as_deref()).is_none() {
        eprintln!(
            "mem7: note: there is no mem7 workspace in this project ({} holds no mem7.yaml, nor does any folder above it), so this configuration points the agent at your own workspace ({}); to give the project a memory of its own, run `mem7 init .` here first, then this command again",
            env.cwd.display(),
            env.user_workspace().display()
        );
    }
    setup::run(
        out,
        env,
        &env.workspace(cli.workspace.as_deref()),
        client,
        scope,
        (write, capture),
    )
}
