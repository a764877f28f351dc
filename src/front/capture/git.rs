//! What a hook asks git, in bounded time: the commit an agent's output named, the
//! branch a checkout is on, what a merge did, what git's own hooks pass. A git that is
//! missing, slow (over [`PATIENCE`]) or not in a repository answers nothing, and the
//! event is recorded with what the hook saw, or not at all.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::capture::facts::MAX_ITEMS;
use crate::capture::{Commit, Event, redact, shell};

/// How long one git command may take before the hook gives up on it.
pub const PATIENCE: Duration = Duration::from_millis(1500);

/// The most commits one rewrite (a rebase) records.
const MAX_REWRITTEN: usize = 20;

/// `git ARGS` in `dir`: its standard output when it succeeded within [`PATIENCE`].
pub fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let mut child = Command::new("git")
        .arg("--no-optional-locks")
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let mut stdout = child.stdout.take()?;
    // Read on a thread so that a full pipe never stalls the wait below.
    let reader = std::thread::spawn(move || {
        let mut out = Vec::new();
        let _ = stdout.by_ref().take(1 << 20).read_to_end(&mut out);
        out
    });
    let deadline = Instant::now() + PATIENCE;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(2)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    };
    let out = reader.join().ok()?;
    status
        .success()
        .then(|| String::from_utf8_lossy(&out).into_owned())
}

/// The work tree `dir` is in (the nearest folder above it holding `.git`), else `dir`;
/// without links, so that a hook and git name one checkout alike.
pub fn checkout_of(dir: &Path) -> std::path::PathBuf {
    let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    dir.ancestors()
        .find(|d| d.join(".git").exists())
        .unwrap_or(&dir)
        .to_path_buf()
}

/// The branch HEAD is on, `None` when detached or outside git.
pub fn branch(dir: &Path) -> Option<String> {
    git(dir, &["symbolic-ref", "--short", "-q", "HEAD"]).and_then(|b| redact::field(b.trim()))
}

/// A commit as git describes it (`rev`: a hash, a prefix, `HEAD`).
pub fn commit(dir: &Path, rev: &str) -> Option<Commit> {
    let out = git(
        dir,
        &[
            "log",
            "-1",
            "--no-renames",
            "--format=%H%x1f%ct%x1f%P%x1f%s",
            "--name-only",
            rev,
            "--",
        ],
    )?;
    let mut lines = out.lines();
    let head = lines.next()?;
    let mut parts = head.split('\u{1f}');
    let hash = parts.next()?.trim().to_string();
    if hash.len() < 40 {
        return None;
    }
    let seconds: i64 = parts.next()?.trim().parse().ok()?;
    let parents = parts.next()?.split_whitespace().count();
    let subject = parts.next().and_then(redact::field);
    let names: Vec<String> = lines
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect();
    let file_count = names.len();
    let files: Vec<String> = names
        .iter()
        .filter_map(|n| redact::field(n))
        .take(MAX_ITEMS.min(10))
        .collect();
    Some(Commit {
        hash,
        time: seconds.saturating_mul(1_000_000),
        subject,
        branch: branch(dir),
        files,
        file_count,
        parents,
        rewrote: None,
    })
}

/// The events of what an agent's shell did, with what git says of it: the commit an
/// output named, a merge commit, the branch after a switch, the commit a new branch's
/// push sent. What git cannot say is left as the output said it (a commit is then not
/// recorded: its key needs the hash git gives).
pub fn resolve(dir: &Path, events: Vec<Event>) -> Vec<Event> {
    let mut out = Vec::with_capacity(events.len());
    for e in events {
        match e {
            Event::Shell(shell::Did::Commit { rev, .. }) => {
                if let Some(c) = commit(dir, &rev) {
                    out.push(Event::Commit(c));
                }
            }
            Event::Shell(shell::Did::Merge) => {
                if let Some(c) = commit(dir, "HEAD").filter(|c| c.parents >= 2) {
                    out.push(Event::Commit(c));
                }
            }
            Event::Shell(shell::Did::Switch) => {
                if let Some(b) = branch(dir) {
                    out.push(Event::Branch { branch: b });
                }
            }
            Event::Shell(shell::Did::Push { remote, mut refs }) => {
                for r in refs.iter_mut().filter(|r| r.rev.is_none() && !r.rejected) {
                    r.rev = git(
                        dir,
                        &[
                            "rev-parse",
                            "--verify",
                            "-q",
                            &format!("refs/heads/{}", r.branch),
                        ],
                    )
                    .map(|h| h.trim().to_string());
                }
                out.push(Event::Shell(shell::Did::Push { remote, refs }));
            }
            other => out.push(other),
        }
    }
    out
}

/// The events of one of git's own hooks (`post-commit`, `post-merge`, `post-checkout`,
/// `post-rewrite`) run in `dir` with `args`; `stdin` is what git passed (post-rewrite's
/// `old new` lines).
pub fn hook_events(dir: &Path, hook: &str, args: &[String], stdin: &str) -> Vec<Event> {
    match hook {
        "post-commit" => commit(dir, "HEAD").map(Event::Commit).into_iter().collect(),
        "post-merge" => {
            let Some(head) = commit(dir, "HEAD") else {
                return Vec::new();
            };
            if head.parents >= 2 {
                return vec![Event::Commit(head)];
            }
            let count = git(dir, &["rev-list", "--count", "ORIG_HEAD..HEAD"])
                .and_then(|n| n.trim().parse().ok())
                .unwrap_or(0);
            match (&head.branch, count) {
                (Some(b), n) if n > 0 => vec![Event::FastForward {
                    branch: b.clone(),
                    to: head.hash,
                    commits: n,
                }],
                _ => Vec::new(),
            }
        }
        // `post-checkout PREV NEW FLAG`: FLAG 1 is a branch checkout (0: files).
        "post-checkout" if args.get(2).map(String::as_str) == Some("1") => {
            let branch = branch(dir).or_else(|| {
                args.get(1)
                    .map(|h| format!("detached at {}", crate::capture::facts::abbrev(h)))
            });
            branch
                .map(|b| Event::Branch { branch: b })
                .into_iter()
                .collect()
        }
        "post-rewrite" => stdin
            .lines()
            .filter_map(|l| {
                let mut words = l.split_whitespace();
                Some((words.next()?.to_string(), words.next()?.to_string()))
            })
            .take(MAX_REWRITTEN)
            .filter_map(|(old, new)| {
                commit(dir, &new).map(|mut c| {
                    c.rewrote = Some(old);
                    Event::Commit(c)
                })
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// The git hooks `mem7 setup-git --capture` installs.
pub const HOOKS: [&str; 4] = ["post-commit", "post-merge", "post-checkout", "post-rewrite"];

/// The line that marks a hook file as mem7's capture hook.
const MARK: &str = "# mem7 capture hook (written by `mem7 setup-git --capture`)";

/// What installing one hook did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Installed {
    /// mem7's hook was written (or rewritten) at this path.
    Written(PathBuf),
    /// A hook that is not mem7's is there: left alone; the line to add to it.
    KeptTheirs(PathBuf, String),
}

use std::path::PathBuf;

/// Installs the capture hooks in the hooks folder of the repository holding `dir`
/// (`git rev-parse --git-path hooks`, so `core.hooksPath` is followed): each runs `mem7
/// --workspace WORKSPACE hook git EVENT` and can never fail a git command. A hook that
/// is not mem7's is kept. An error when `dir` is in no repository.
pub fn install_hooks(
    dir: &Path,
    exe: &Path,
    workspace: &Path,
) -> std::result::Result<Vec<Installed>, String> {
    let hooks = git(dir, &["rev-parse", "--git-path", "hooks"])
        .ok_or_else(|| format!("{} is not inside a git repository", dir.display()))?;
    let hooks = crate::front::env::absolute(dir, Path::new(hooks.trim()));
    std::fs::create_dir_all(&hooks).map_err(|e| format!("{}: {e}", hooks.display()))?;
    let quote = |p: &Path| format!("'{}'", p.display().to_string().replace('\'', "'\\''"));
    let mut done = Vec::new();
    for event in HOOKS {
        let path = hooks.join(event);
        let line = format!(
            "mem7 --workspace {} hook git {event} \"$@\"",
            quote(workspace)
        );
        match std::fs::read_to_string(&path) {
            Ok(text) if !text.contains(MARK) => {
                done.push(Installed::KeptTheirs(path, line));
                continue;
            }
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(format!("{}: {e}", path.display())),
        }
        let script = format!(
            "#!/bin/sh\n{MARK}\n# Records what git just did in mem7's memory (docs/capture.md). It never fails\n# the git command: mem7 hook always exits 0, and a missing mem7 is skipped.\nif command -v mem7 >/dev/null 2>&1; then mem7=mem7; else mem7={exe}; fi\n[ -x \"$mem7\" ] || command -v \"$mem7\" >/dev/null 2>&1 || exit 0\n\"$mem7\" --workspace {ws} hook git {event} \"$@\" || true\n",
            exe = quote(exe),
            ws = quote(workspace),
        );
        std::fs::write(&path, script).map_err(|e| format!("{}: {e}", path.display()))?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
                .map_err(|e| format!("{}: {e}", path.display()))?;
        }
        done.push(Installed::Written(path));
    }
    Ok(done)
}
