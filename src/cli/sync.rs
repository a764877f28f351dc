//! `mem7 sync` on the command line: its options from the environment, its report as
//! text or JSON, refusals as findings and exit code 1, and the timed sync of
//! `mem7 watch --sync-every`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::watch::now_text;
use super::{Cli, EXIT_CHECK_FAILED, EXIT_OK, Env, write_out};
use crate::core::level::Level;
use crate::error::{Error, Result};
use crate::sync::{self, Outcome, RefusedBy, Report, Side};
use crate::verify::Finding;

/// Keys listed by name in a text line; the rest are counted.
const KEYS_SHOWN: usize = 8;

fn run_sync_at(root: &Path, env: &Env, remote: Option<&str>, push: bool) -> Result<Outcome> {
    let root = root.to_path_buf();
    let exe: PathBuf = super::setup::invoked_binary()?;
    sync::run(&sync::Options {
        root: &root,
        remote,
        push,
        now: env.now()?,
        key: env.chain_key()?,
        exe: &exe,
    })
}

/// `mem7 sync`: every scope with a workspace (the local one is never synced), each with
/// its own repository, or the one `--scope` names. One scope syncs exactly as before
/// scopes; several say which is which, and a failure of one does not stop the others.
pub(super) fn run_scopes(
    cli: &Cli,
    env: &Env,
    out: &mut dyn Write,
    remote: Option<&str>,
    no_push: bool,
    json: bool,
    scope: Option<Level>,
) -> Result<u8> {
    if scope == Some(Level::Local) {
        return Err(Error::input(
            "the local scope is never synced: it belongs to this checkout alone",
            "sync the project or the user scope (--scope project, --scope user), or leave --scope out to sync both",
        ));
    }
    let roots: Vec<(Level, PathBuf)> = env
        .scope_roots(cli.workspace.as_deref())
        .into_iter()
        .filter(|(l, r)| *l != Level::Local && crate::store::is_workspace(r))
        .filter(|(l, _)| scope.is_none_or(|s| s == *l))
        .collect();
    if let Some(level) = scope
        && roots.is_empty()
    {
        let root = env
            .scope_roots(cli.workspace.as_deref())
            .into_iter()
            .find(|(l, _)| *l == level)
            .map(|(_, r)| r);
        return Err(match root {
            Some(root) => crate::front::workspaces::missing(level, &root),
            None => crate::front::workspaces::no_scope_here(level),
        });
    }
    // Without --scope, a scope whose workspace is in no git repository is not shared:
    // it is left out, and said so, rather than failing the sync of the others.
    let roots: Vec<(Level, PathBuf)> = match scope {
        Some(_) => roots,
        None if roots.len() > 1 => roots
            .into_iter()
            .filter(|(level, root)| {
                let shared = in_git(root);
                if !shared {
                    eprintln!(
                        "mem7: note: the {level} scope ({}) is in no git repository, so it was not synced (`git init` there and add a remote to share it)",
                        root.display()
                    );
                }
                shared
            })
            .collect(),
        None => roots,
    };
    if roots.len() <= 1 {
        if let Some((_, root)) = roots.first() {
            super::write::say_workspace(cli, env, root);
        }
        return match roots.first() {
            Some((_, root)) => run_at(root, env, out, remote, no_push, json),
            None => run_at(
                &env.workspace(cli.workspace.as_deref()),
                env,
                out,
                remote,
                no_push,
                json,
            ),
        };
    }
    let mut worst = EXIT_OK;
    let mut reports = Vec::new();
    for (level, root) in &roots {
        let mut buf: Vec<u8> = Vec::new();
        if !json {
            write_out(out, &format!("{level} scope ({}):\n", root.display()))?;
        }
        let code = match run_at(root, env, &mut buf, remote, no_push, json) {
            Ok(code) => code,
            Err(e) => {
                eprintln!("error: {level} scope: {e}");
                if let Some(hint) = e.hint() {
                    eprintln!("  hint: {hint}");
                }
                e.exit_code()
            }
        };
        worst = worst.max(code);
        let text = String::from_utf8_lossy(&buf).into_owned();
        if json {
            match serde_json::from_str::<serde_json::Value>(&text) {
                Ok(serde_json::Value::Object(mut map)) => {
                    map.insert("scope".into(), level.as_str().into());
                    reports.push(serde_json::Value::Object(map));
                }
                _ => reports.push(serde_json::json!({ "scope": level.as_str(), "error": true })),
            }
        } else {
            write_out(out, &text)?;
        }
    }
    if json {
        write_out(out, &pretty(&serde_json::Value::Array(reports)))?;
    }
    Ok(worst)
}

/// Whether `dir` is inside a git work tree (a `.git` directory or file in it or above).
fn in_git(dir: &Path) -> bool {
    dir.ancestors().any(|d| d.join(".git").exists())
}

/// `mem7 sync` of the workspace at `root`.
fn run_at(
    root: &Path,
    env: &Env,
    out: &mut dyn Write,
    remote: Option<&str>,
    no_push: bool,
    json: bool,
) -> Result<u8> {
    let settings = || std::fs::read(root.join(crate::store::CONFIG_FILE)).ok();
    let before = settings();
    match run_sync_at(root, env, remote, !no_push)? {
        Outcome::Synced(report) => {
            for w in &report.warnings {
                eprintln!("mem7: warning: {w}");
            }
            // A changed settings file is the remote's word: an approval named the old
            // content's hash, so it no longer holds, and this says so.
            let changed = settings() != before;
            let mut text = if json {
                report_json(&report)
            } else {
                report_human(&report)
            };
            if changed {
                let ws = crate::front::owners::open_quietly(env, root)?;
                let widened = !ws.ignored_settings().is_empty();
                if json {
                    if let Ok(serde_json::Value::Object(mut map)) =
                        serde_json::from_str::<serde_json::Value>(&text)
                    {
                        map.insert("settings_changed".into(), true.into());
                        map.insert(
                            "settings_ignored".into(),
                            ws.ignored_settings()
                                .iter()
                                .map(|i| serde_json::Value::from(i.setting))
                                .collect(),
                        );
                        text = pretty(&serde_json::Value::Object(map));
                    }
                } else {
                    text.push_str(&format!(
                        "mem7.yaml changed in this sync; {}\n",
                        if crate::front::owners::is_users_own(env, root) {
                            "it is your own workspace's, so it applies".to_string()
                        } else if widened {
                            crate::front::owners::ignored_line(&ws)
                        } else {
                            "it widens nothing, so it applies as it is (any earlier approval of it is withdrawn)".to_string()
                        }
                    ));
                }
            }
            write_out(out, &text)?;
            Ok(EXIT_OK)
        }
        Outcome::Refused {
            by,
            remote,
            remote_branch,
            findings,
        } => {
            let upstream = format!("{remote}/{remote_branch}");
            eprint!("{}", refusal_human(by, &upstream, &findings));
            if json {
                let v = serde_json::json!({
                    "refused": true,
                    "by": match by {
                        RefusedBy::Local => "local",
                        RefusedBy::Merged => "merged",
                        RefusedBy::Remote => "remote",
                    },
                    "remote": remote,
                    "remote_branch": remote_branch,
                    "pushed": false,
                    "findings": findings.iter().map(finding_json).collect::<Vec<_>>(),
                });
                write_out(out, &pretty(&v))?;
            }
            Ok(EXIT_CHECK_FAILED)
        }
    }
}

/// One timed sync of `mem7 watch` (run by [`crate::live::serve_loop`]): its report as log
/// lines on standard output, a failure or refusal on standard error. Never fails the
/// watch (only a closed output does).
pub(super) fn watch_sync(
    out: &mut dyn Write,
    outcome: Result<Outcome>,
    every: Duration,
) -> Result<()> {
    let next = format!("next try in {}", duration_text(every.as_secs() as i64));
    match outcome {
        Ok(Outcome::Synced(report)) => {
            for w in &report.warnings {
                eprintln!("{} mem7 watch: warning: {w}", now_text());
            }
            let now = now_text();
            let mut text = String::new();
            for line in report_human(&report).lines() {
                text.push_str(&format!("{now} sync: {line}\n"));
            }
            write_out(out, &text)?;
        }
        Ok(Outcome::Refused {
            by,
            remote,
            remote_branch,
            findings,
        }) => {
            let upstream = format!("{remote}/{remote_branch}");
            eprint!(
                "{} mem7 watch: sync failed ({next}): {}",
                now_text(),
                refusal_human(by, &upstream, &findings).trim_start_matches("error: ")
            );
        }
        Err(e) => {
            let hint = e
                .hint()
                .map(|h| format!(" (hint: {h})"))
                .unwrap_or_default();
            eprintln!("{} mem7 watch: sync failed ({next}): {e}{hint}", now_text());
        }
    }
    Ok(())
}

fn refusal_human(by: RefusedBy, upstream: &str, findings: &[Finding]) -> String {
    let (what, hint) = match by {
        RefusedBy::Local => (
            "this workspace's memory does not verify".to_string(),
            "restore what was changed by mistake from git (`git checkout -- FILE`), or accept a deliberate edit with `mem7 seal`; then run `mem7 sync` again".to_string(),
        ),
        RefusedBy::Merged => (
            format!("merged with {upstream}, the memory does not verify: someone pushed altered or hand-written entries"),
            format!("see who changed the file and how (`git log -p {upstream} -- FILE`); the change must be undone there, or accepted with `mem7 seal` by whoever made it"),
        ),
        RefusedBy::Remote => (
            format!("{upstream} holds something under the workspace that is not a regular file"),
            format!("this clone was left as it was. Whoever can push to {upstream} must remove it there (`git rm PATH`, commit, push; restore a memory file from history if it replaced one); then run `mem7 sync` again"),
        ),
    };
    let mut s =
        format!("error: refusing to sync: {what}; nothing was committed, merged or pushed\n");
    for f in findings {
        let key = if f.key.is_empty() {
            String::new()
        } else {
            format!(" `{}`", f.key)
        };
        s.push_str(&format!(
            "  {}:{}:{key} {}: {}\n",
            f.file, f.line, f.kind, f.message
        ));
    }
    s.push_str(&format!("  hint: {hint}\n"));
    s
}

fn finding_json(f: &Finding) -> serde_json::Value {
    serde_json::json!({
        "file": f.file,
        "line": f.line,
        "key": f.key,
        "kind": f.kind.name(),
        "message": f.message,
    })
}

fn side_json(s: &Side) -> serde_json::Value {
    serde_json::json!({ "commits": s.commits, "entries": s.entries, "keys": s.keys })
}

fn pretty(v: &serde_json::Value) -> String {
    format!("{}\n", serde_json::to_string_pretty(v).unwrap_or_default())
}

/// The `--json` object (see docs/cli.md).
pub(super) fn report_json(r: &Report) -> String {
    let ahead: Vec<serde_json::Value> = r
        .ahead
        .iter()
        .map(|a| {
            serde_json::json!({
                "file": a.file,
                "line": a.line,
                "key": a.key,
                "recorded": a.recorded.to_rfc3339(),
                "ahead_seconds": a.ahead_seconds,
            })
        })
        .collect();
    pretty(&serde_json::json!({
        "remote": r.remote,
        "branch": r.branch,
        "remote_branch": r.remote_branch,
        "head": r.head,
        "committed": side_json(&r.committed),
        "sent": side_json(&r.sent),
        "received": side_json(&r.received),
        "ahead": ahead,
        "pushed": r.pushed,
        "set_upstream": r.set_upstream,
        "attempts": r.attempts,
        "registered_driver": r.registered_driver,
        "verify_warnings": r.verify_warnings,
        "restored": r.restored.iter().map(|k| serde_json::json!({
            "file": k.file,
            "entries": k.entries,
            "keys": k.keys,
            "dropped_by": k.dropped_by,
        })).collect::<Vec<_>>(),
        "outside_memory": r.outside,
    }))
}

fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn keys_text(keys: &[String]) -> String {
    if keys.is_empty() {
        return String::new();
    }
    let shown: Vec<String> = keys
        .iter()
        .take(KEYS_SHOWN)
        .map(|k| format!("`{k}`"))
        .collect();
    let more = keys.len().saturating_sub(KEYS_SHOWN);
    format!(
        " ({}: {}{})",
        if keys.len() == 1 { "key" } else { "keys" },
        shown.join(", "),
        if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        }
    )
}

fn side_text(s: &Side) -> String {
    format!(
        "{} in {}{}",
        count(s.entries, "entry", "entries"),
        count(s.commits, "commit", "commits"),
        keys_text(&s.keys)
    )
}

/// `1h 5m`, `3m 20s`, `2d 4h`: the two largest units.
pub(super) fn duration_text(secs: i64) -> String {
    let units = [(86_400, "d"), (3600, "h"), (60, "m"), (1, "s")];
    let mut parts = Vec::new();
    let mut rest = secs.max(0);
    for (size, name) in units {
        if rest >= size || (parts.is_empty() && size == 1) {
            parts.push(format!("{}{name}", rest / size));
            rest %= size;
        }
        if parts.len() == 2 {
            break;
        }
    }
    parts.join(" ")
}

/// The text report: one line per thing done.
pub(super) fn report_human(r: &Report) -> String {
    let upstream = format!("{}/{}", r.remote, r.remote_branch);
    let mut s = String::new();
    if r.registered_driver {
        s.push_str("registered mem7's merge driver in this clone (as `mem7 setup-git` does)\n");
    }
    let c = &r.committed;
    if c.commits > 0 {
        s.push_str(&format!(
            "committed {}{}\n",
            if c.entries == 0 {
                "the workspace's files".to_string()
            } else {
                format!(
                    "{} new {}",
                    c.entries,
                    if c.entries == 1 { "entry" } else { "entries" }
                )
            },
            keys_text(&c.keys)
        ));
    }
    if r.received.commits > 0 {
        s.push_str(&format!(
            "received {} from {upstream}\n",
            side_text(&r.received)
        ));
    }
    if r.pushed {
        s.push_str(&format!("sent {} to {upstream}\n", side_text(&r.sent)));
        if r.set_upstream {
            s.push_str(&format!("`{}` now tracks {upstream}\n", r.branch));
        }
    } else if r.sent.commits > 0 {
        s.push_str(&format!(
            "not pushed (--no-push): {} to send to {upstream}\n",
            side_text(&r.sent)
        ));
    }
    if !r.ahead.is_empty() {
        s.push_str(&format!(
            "{} recorded ahead of this clock (a writer's clock runs fast; entries written here are recorded after {}):\n",
            count(r.ahead.len(), "entry", "entries"),
            if r.ahead.len() == 1 { "it" } else { "them" }
        ));
        for a in &r.ahead {
            s.push_str(&format!(
                "  {}:{} `{}` recorded {}, {} ahead\n",
                a.file,
                a.line,
                a.key,
                a.recorded,
                duration_text(a.ahead_seconds)
            ));
        }
    }
    if !r.restored.is_empty() {
        let n: usize = r.restored.iter().map(|k| k.entries).sum();
        s.push_str(&format!(
            "kept {} that {upstream} had dropped (memory files are append-only; the repaired tree was {}):\n",
            count(n, "entry", "entries"),
            if r.pushed { "pushed" } else { "not pushed yet" }
        ));
        for k in &r.restored {
            s.push_str(&format!(
                "  {}: {}{}, dropped by commit {}\n",
                k.file,
                count(k.entries, "entry", "entries"),
                keys_text(&k.keys),
                &k.dropped_by[..k.dropped_by.len().min(7)]
            ));
        }
    }
    if !r.outside.is_empty() {
        const SHOWN: usize = 10;
        let more = r.outside.len().saturating_sub(SHOWN);
        s.push_str(&format!(
            "{upstream} also changed {} outside the memory folder (mem7 runs no hook and merges memory with its own attributes): {}{}\n",
            count(r.outside.len(), "file", "files"),
            r.outside.iter().take(SHOWN).map(String::as_str).collect::<Vec<_>>().join(", "),
            if more > 0 { format!(" and {more} more") } else { String::new() }
        ));
    }
    if c.commits == 0 && r.received.commits == 0 && r.sent.commits == 0 {
        s.push_str(&format!(
            "up to date with {upstream}: nothing to send or receive\n"
        ));
    }
    if r.attempts > 1 {
        s.push_str(&format!(
            "took {} attempts: {upstream} moved while syncing (someone pushed first)\n",
            r.attempts
        ));
    }
    // Merge warnings stay until sealed: said when this sync merged, not every time.
    if r.verify_warnings > 0 && r.received.commits > 0 {
        s.push_str(&format!(
            "verified, with {} (parallel appends merged; `mem7 verify` lists them, `mem7 seal` records them)\n",
            count(r.verify_warnings, "warning", "warnings")
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_well() {
        assert_eq!(duration_text(0), "0s");
        assert_eq!(duration_text(59), "59s");
        assert_eq!(duration_text(3600), "1h");
        assert_eq!(duration_text(3725), "1h 2m");
        assert_eq!(duration_text(90_061), "1d 1h");
    }
}
