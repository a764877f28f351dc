//! `mem7 hook CLIENT` (what an agent or git just did, recorded without ever being in the
//! way: exit 0 whatever happens, nothing on standard output but a session's context
//! block, nothing on standard error) and `mem7 capture status|drain`. The rules are
//! `crate::capture`'s; writing, the spool and git are `crate::front::capture`'s.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use super::args::{self, CaptureAction, HookClient};
use super::{Cli, EXIT_OK, Env, write_out};
use crate::capture::facts::{self, Checkout, Origin};
use crate::capture::shell::Did;
use crate::capture::{Client, Event, payload};
use crate::error::Result;
use crate::front::capture::{self as shell, git};

/// The most of a hook's standard input read (a Write tool's event carries the file).
const MAX_INPUT: u64 = 16 << 20;

/// The most spooled writes one hook applies before its own (the rest wait for the next).
const SPOOL_PER_HOOK: usize = 200;

/// `mem7 hook CLIENT`: always exit 0.
pub(super) fn run(cli: &Cli, env: &Env, out: &mut dyn Write, client: &HookClient) -> u8 {
    // What mem7's layers say on standard error (a rebuild, a warning) is for a person
    // at a terminal; a hook's client shows it as a hook error. The log says what matters.
    silence_stderr();
    let mut env = env.clone();
    env.no_wait = true;
    let flag = cli.workspace.as_deref();
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match client {
        HookClient::ClaudeCode => agent(cli, &env, out, Client::ClaudeCode),
        HookClient::Codex => agent(cli, &env, out, Client::Codex),
        HookClient::Git { event, args } => git_hook(&env, flag, event, args),
    }));
    if outcome.is_err() {
        let now = env
            .now()
            .unwrap_or(crate::core::time::TxTime::from_micros(0));
        shell::log(
            &env,
            flag,
            now,
            "hook: a failure inside mem7 (a panic); the event was dropped",
        );
    }
    let _ = out.flush();
    EXIT_OK
}

/// Points standard error at /dev/null for the rest of the process.
fn silence_stderr() {
    #[cfg(unix)]
    if let Ok(null) = std::fs::OpenOptions::new().write(true).open("/dev/null") {
        use std::os::fd::AsRawFd;
        // SAFETY: dup2 onto descriptor 2 replaces the process's standard error with a
        // descriptor that stays open (`null` is leaked below); no Rust object owns fd 2.
        unsafe {
            libc::dup2(null.as_raw_fd(), 2);
        }
        std::mem::forget(null);
    }
}

/// Standard input, at most [`MAX_INPUT`] bytes.
fn input() -> Vec<u8> {
    let mut raw = Vec::new();
    let _ = std::io::stdin()
        .lock()
        .take(MAX_INPUT)
        .read_to_end(&mut raw);
    raw
}

/// An agent's hook: the event on standard input.
fn agent(cli: &Cli, env: &Env, out: &mut dyn Write, client: Client) {
    let flag = cli.workspace.as_deref();
    let now = env
        .now()
        .unwrap_or(crate::core::time::TxTime::from_micros(0));
    let raw = input();
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(&raw) else {
        shell::log(
            env,
            flag,
            now,
            &format!(
                "hook {}: the event on standard input is not JSON; nothing recorded",
                client.as_str()
            ),
        );
        return;
    };
    let hook = payload::read(client, &value);
    let dir = hook
        .cwd
        .as_deref()
        .map(PathBuf::from)
        .filter(|p| p.is_absolute() && p.is_dir())
        .unwrap_or_else(|| env.cwd.clone());
    let checkout = git::checkout_of(&dir);
    if hook.name == "Stop" {
        // The turn's text is queued for a model, when the user configured one; the
        // model is asked by a later drain, never by the hook.
        if let Some(why) =
            shell::turns::queue_stop(env, flag, client, &value, hook.session.clone(), now)
        {
            shell::log(
                env,
                flag,
                now,
                &format!("hook {} Stop: {why}", client.as_str()),
            );
        }
    }
    if hook.is_session_start() {
        // The block first: it shows where the last session left off, before this one
        // is recorded.
        match session_block(cli, env, client, &dir) {
            Ok(text) => {
                let _ = write_out(out, &text);
            }
            Err(e) => shell::log(
                env,
                flag,
                now,
                &format!(
                    "hook {} SessionStart: no context block ({e})",
                    client.as_str()
                ),
            ),
        }
    }
    if hook.events.is_empty() {
        // Nothing of this event is a fact; a spool left by an earlier hook is applied.
        if shell::spool::waiting(&env.workspace(flag)).0 > 0 {
            report(
                env,
                flag,
                now,
                &format!("hook {} {}", client.as_str(), hook.name),
                shell::record(env, flag, (client, Vec::new()), Some(SPOOL_PER_HOOK), false),
            );
        }
        return;
    }
    // The branch is asked of git only where a fact names it.
    let branch = hook
        .events
        .iter()
        .any(|e| {
            matches!(
                e,
                Event::SessionStart { .. } | Event::Shell(Did::PullRequest { .. })
            )
        })
        .then(|| git::branch(&checkout))
        .flatten();
    let events = git::resolve(&checkout, hook.events);
    let origin = Origin {
        client,
        session: hook.session,
        checkout: Checkout::new(&checkout.display().to_string()),
        branch,
        now: now.micros(),
    };
    // Unreadable settings spool every kind; the drain applies the settings then.
    let settings = shell::settings(env, flag).unwrap_or_default();
    let writes = facts::writes(&events, &origin, &settings);
    let done = shell::record(env, flag, (client, writes), Some(SPOOL_PER_HOOK), false);
    report(
        env,
        flag,
        now,
        &format!("hook {} {}", client.as_str(), hook.name),
        done,
    );
}

/// The block `mem7 context --hook CLIENT` prints, for the checkout at `dir`.
fn session_block(cli: &Cli, env: &Env, client: Client, dir: &Path) -> Result<String> {
    let a = args::ContextArgs {
        query: None,
        at: args::TimeArgs {
            valid_at: None,
            as_of: None,
        },
        tier: args::TierFilter { tier: None },
        scope: args::ScopeChoice { scope: None },
        max_chars: crate::front::block::DEFAULT_MAX_CHARS,
        hook: Some(match client {
            Client::Codex => args::Client::Codex,
            _ => args::Client::ClaudeCode,
        }),
    };
    super::read::context_text(cli, env, &a, dir)
}

/// `mem7 hook git EVENT ARGS…`, run by git in the work tree.
fn git_hook(env: &Env, flag: Option<&Path>, event: &str, args: &[String]) {
    let now = env
        .now()
        .unwrap_or(crate::core::time::TxTime::from_micros(0));
    let checkout = git::checkout_of(&env.cwd);
    let stdin = if event == "post-rewrite" {
        String::from_utf8_lossy(&input()).into_owned()
    } else {
        String::new()
    };
    let events = git::hook_events(&checkout, event, args, &stdin);
    let origin = Origin {
        client: Client::Git,
        session: None,
        checkout: Checkout::new(&checkout.display().to_string()),
        branch: None,
        now: now.micros(),
    };
    let settings = shell::settings(env, flag).unwrap_or_default();
    let writes = facts::writes(&events, &origin, &settings);
    let done = shell::record(
        env,
        flag,
        (Client::Git, writes),
        Some(SPOOL_PER_HOOK),
        false,
    );
    report(env, flag, now, &format!("hook git {event}"), done);
}

/// Logs what a hook could not write (nothing when all went in).
fn report(
    env: &Env,
    flag: Option<&Path>,
    now: crate::core::time::TxTime,
    what: &str,
    r: shell::Report,
) {
    for why in &r.why {
        shell::log(env, flag, now, &format!("{what}: {why}"));
    }
}

/// `mem7 capture status|drain`.
pub(super) fn capture(
    cli: &Cli,
    env: &Env,
    out: &mut dyn Write,
    action: &CaptureAction,
) -> Result<u8> {
    let flag = cli.workspace.as_deref();
    match action {
        CaptureAction::Status => {
            let s = shell::status(env, flag);
            let mut text = String::new();
            match &s.settings {
                Ok(settings) => {
                    let on: Vec<&str> = crate::capture::Kind::ALL
                        .into_iter()
                        .filter(|k| settings.captures(*k) && *k != crate::capture::Kind::Turns)
                        .map(|k| k.as_str())
                        .collect();
                    text.push_str(&format!(
                        "captured: {}\n",
                        if on.is_empty() { "nothing (capture.enabled is false)".to_string() } else { on.join(", ") }
                    ));
                    if !settings.off.is_empty() {
                        let off: Vec<&str> = settings.off.iter().map(|k| k.as_str()).collect();
                        text.push_str(&format!("turned off: {}\n", off.join(", ")));
                    }
                    text.push_str(&format!(
                        "session trail (sessions, files, commands, subagents, branches): the local scope{}\n",
                        scope_where(&s, crate::core::level::Level::Local)
                    ));
                    text.push_str(&format!(
                        "project facts (commits, merges, pushes, prs): {}\n",
                        if settings.share {
                            format!("the project scope{}", scope_where(&s, crate::core::level::Level::Project))
                        } else {
                            "the local scope (capture.share is false)".to_string()
                        }
                    ));
                }
                Err(e) => text.push_str(&format!(
                    "settings: mem7.yaml does not read ({e}); hooks spool every event until it does\n"
                )),
            }
            let home = env.workspace(flag);
            text.push_str(&match shell::turns::model(env) {
                Some(m) => format!(
                    "turn facts: asked of {} at {} by `mem7 capture drain`; {} turns queued in {}\n",
                    m.model,
                    m.endpoint,
                    shell::turns::waiting(&home),
                    shell::turns::dir(&home).display()
                ),
                None => "turn facts: off (no `capture.model` in your own mem7.yaml)\n".to_string(),
            });
            text.push_str(&format!(
                "spool: {} writes waiting in {}\n",
                s.waiting,
                s.spool.display()
            ));
            text.push_str(&format!("log: {}\n", s.log.display()));
            for line in &s.log_tail {
                text.push_str(&format!("  {line}\n"));
            }
            write_out(out, &text)?;
        }
        CaptureAction::Drain => {
            let r = shell::record(env, flag, (Client::Git, Vec::new()), None, true);
            let mut text = format!(
                "drained the spool: {} written, {} already held, {} still waiting, {} dropped\n",
                r.written, r.unchanged, r.spooled, r.dropped
            );
            for why in &r.why {
                text.push_str(&format!("  {why}\n"));
            }
            let t = shell::turns::drain(env, flag);
            if t != shell::turns::Report::default() {
                text.push_str(&format!(
                    "drained the turn queue: {} turns answered, {} facts written, {} still queued, {} dropped\n",
                    t.answered, t.facts, t.kept, t.dropped
                ));
                for why in &t.why {
                    text.push_str(&format!("  {why}\n"));
                }
            }
            write_out(out, &text)?;
        }
    }
    Ok(EXIT_OK)
}

/// ` (WORKSPACE)`, or where it will be made, for a scope of the status.
fn scope_where(s: &shell::Status, level: crate::core::level::Level) -> String {
    match s.scopes.iter().find(|(l, _, _)| *l == level) {
        Some((_, root, true)) => format!(" ({})", root.display()),
        Some((_, root, false)) if level == crate::core::level::Level::Local => {
            format!(" ({}, made on its first write)", root.display())
        }
        Some((_, root, false)) => format!(
            " ({}, which does not exist: those writes go to the next scope that does)",
            root.display()
        ),
        None => " (no project here: the user's workspace)".to_string(),
    }
}
