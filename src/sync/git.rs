//! Running git as a subprocess: the one place that spawns it, feeds it, captures what it
//! says, and turns its failures into errors that name the command, quote git, and say
//! what to do. Everything runs from the repository's top level, in the C locale (so the
//! few messages mem7 reads stay the same everywhere).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::error::{Error, Result};

mod trees;

/// A git object id (a commit or a tree), as git prints it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Oid(String);

impl Oid {
    /// The full hex id.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The first 7 hex digits, as `git log --oneline` shows them.
    pub fn short(&self) -> &str {
        &self.0[..self.0.len().min(7)]
    }
}

impl std::fmt::Display for Oid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// What one git run printed, and whether it succeeded.
#[derive(Debug)]
pub struct Output {
    pub success: bool,
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Output {
    /// Git's own words, for an error message: standard error, else standard output.
    pub fn said(&self) -> String {
        let text = if self.stderr.trim().is_empty() {
            &self.stdout
        } else {
            &self.stderr
        };
        text.trim().to_string()
    }
}

/// A repository seen from its top-level directory.
#[derive(Clone, Debug)]
pub struct Git {
    top: PathBuf,
    /// Extra variables for every run (a temporary index).
    env: Vec<(String, PathBuf)>,
}

/// The result of `git merge-tree --write-tree`.
#[derive(Debug)]
pub enum MergeTree {
    /// A clean merge: its tree.
    Clean(Oid),
    /// Files git (or mem7's driver) could not merge, with what was said about them.
    Conflict { files: Vec<String>, said: String },
}

/// The result of a push.
#[derive(Debug)]
pub enum Pushed {
    Done,
    /// The remote branch moved since it was fetched (someone else pushed first).
    Rejected,
}

impl Git {
    /// The repository holding `dir`, and `dir`'s path inside it (`""` at the top, else
    /// `sub/dir/`). `None` when `dir` is in no git work tree.
    pub fn discover(dir: &Path) -> Result<Option<(Git, String)>> {
        let probe = Git {
            top: dir.to_path_buf(),
            env: Vec::new(),
        };
        let out = probe.output(&["rev-parse", "--show-toplevel", "--show-prefix"], None)?;
        if !out.success {
            return Ok(None);
        }
        let mut lines = out.stdout.lines();
        let top = lines.next().unwrap_or_default().trim().to_string();
        let prefix = lines.next().unwrap_or_default().trim().to_string();
        if top.is_empty() {
            // A bare repository or the inside of `.git`: no work tree to sync.
            return Ok(None);
        }
        Ok(Some((
            Git {
                top: PathBuf::from(top),
                env: Vec::new(),
            },
            prefix,
        )))
    }

    /// The repository's top-level directory.
    pub fn top(&self) -> &Path {
        &self.top
    }

    /// The same repository with its index replaced by `index` (a scratch file), so that
    /// trees can be built and files exported without touching the user's index.
    pub fn with_index(&self, index: &Path) -> Git {
        let mut g = self.clone();
        g.env.push(("GIT_INDEX_FILE".into(), index.to_path_buf()));
        g
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new("git");
        // No hook runs, whatever `core.hooksPath` or `.git/hooks` say: a hook can arrive
        // from a remote (a hooks folder in the tree), and sync must run no stranger's code.
        cmd.args(["-c", NO_HOOKS])
            .args(args)
            .current_dir(&self.top)
            .env("LC_ALL", "C")
            .env("LANGUAGE", "C")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        cmd
    }

    /// Runs git, feeding `input` on standard input; fails only when git cannot start.
    pub fn output(&self, args: &[&str], input: Option<&[u8]>) -> Result<Output> {
        let mut cmd = self.command(args);
        if input.is_some() {
            cmd.stdin(Stdio::piped());
        }
        let mut child = cmd.spawn().map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                Error::input(
                    "git is not installed (or not on PATH)",
                    "install git; `mem7 sync` shares memory through a git repository",
                )
            } else {
                Error::io("git", e)
            }
        })?;
        // Feed standard input from another thread, so that a large answer cannot block
        // git while we are still writing the question.
        let feeder = match (input, child.stdin.take()) {
            (Some(bytes), Some(mut stdin)) => {
                let bytes = bytes.to_vec();
                Some(std::thread::spawn(move || {
                    let _ = stdin.write_all(&bytes);
                }))
            }
            _ => None,
        };
        let out = child.wait_with_output().map_err(|e| Error::io("git", e))?;
        if let Some(f) = feeder {
            let _ = f.join();
        }
        Ok(Output {
            success: out.status.success(),
            code: out.status.code(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        })
    }

    /// Runs git and returns its standard output; a failure is an error quoting git,
    /// with `hint` as the remedy.
    pub fn run(&self, args: &[&str], hint: &str) -> Result<String> {
        self.run_input(args, None, hint)
    }

    /// [`Git::run`] with standard input.
    pub fn run_input(&self, args: &[&str], input: Option<&[u8]>, hint: &str) -> Result<String> {
        let out = self.output(args, input)?;
        if out.success {
            Ok(out.stdout)
        } else {
            Err(failed(args, &out, hint))
        }
    }

    /// The commit (or other object) `spec` names, if it exists.
    pub fn resolve(&self, spec: &str) -> Result<Option<Oid>> {
        let out = self.output(&["rev-parse", "-q", "--verify", spec], None)?;
        Ok(out
            .success
            .then(|| Oid(out.stdout.trim().to_string()))
            .filter(|o| !o.0.is_empty()))
    }

    /// The tree of `commit`, or the empty tree for none (an unborn branch).
    pub fn tree_of(&self, commit: Option<&Oid>) -> Result<Oid> {
        match commit {
            Some(c) => self
                .resolve(&format!("{c}^{{tree}}"))?
                .ok_or_else(|| Error::internal(format!("git has no tree for {c}"), BUG)),
            None => self.empty_tree(),
        }
    }

    /// The empty tree's id (in this repository's hash).
    pub fn empty_tree(&self) -> Result<Oid> {
        let out = self.run_input(&["hash-object", "-t", "tree", "--stdin"], Some(b""), BUG)?;
        Ok(Oid(out.trim().to_string()))
    }

    /// A config value of this repository (with the user's and system's).
    pub fn config_get(&self, name: &str) -> Result<Option<String>> {
        let out = self.output(&["config", "--get", name], None)?;
        Ok(out
            .success
            .then(|| out.stdout.trim().to_string())
            .filter(|v| !v.is_empty()))
    }

    /// Sets a config value in this repository's own config.
    pub fn config_set(&self, name: &str, value: &str) -> Result<()> {
        self.run(
            &["config", "--local", name, value],
            "check that the repository's .git/config is writable",
        )
        .map(drop)
    }

    /// The branch HEAD is on (`None` when HEAD is detached).
    pub fn current_branch(&self) -> Result<Option<String>> {
        let out = self.output(&["symbolic-ref", "-q", "--short", "HEAD"], None)?;
        Ok(out
            .success
            .then(|| out.stdout.trim().to_string())
            .filter(|b| !b.is_empty()))
    }

    /// The names of the configured remotes.
    pub fn remotes(&self) -> Result<Vec<String>> {
        let out = self.run(&["remote"], BUG)?;
        Ok(out.lines().map(|l| l.trim().to_string()).collect())
    }

    /// Whether `git-path NAME` (a file or directory in `.git`) exists: a merge, rebase or
    /// cherry-pick in progress leaves one.
    pub fn git_path(&self, name: &str) -> Result<PathBuf> {
        let out = self.run(&["rev-parse", "--git-path", name], BUG)?;
        Ok(self.top.join(out.trim()))
    }

    /// Whether `a` is an ancestor of (or equal to) `b`.
    pub fn is_ancestor(&self, a: &Oid, b: &Oid) -> Result<bool> {
        let out = self.output(
            &["merge-base", "--is-ancestor", a.as_str(), b.as_str()],
            None,
        )?;
        match out.code {
            Some(0) => Ok(true),
            Some(1) => Ok(false),
            _ => Err(failed(&["merge-base", "--is-ancestor"], &out, BUG)),
        }
    }

    /// Commits reachable from `from` but not from `not`.
    pub fn count_commits(&self, from: &Oid, not: Option<&Oid>) -> Result<usize> {
        let not_arg = not.map(|n| format!("^{n}"));
        let mut args = vec!["rev-list", "--count", from.as_str()];
        if let Some(n) = &not_arg {
            args.push(n);
        }
        Ok(self.run(&args, BUG)?.trim().parse().unwrap_or(0))
    }

    /// Fetches `refs/heads/BRANCH` of `remote` into `refs/remotes/REMOTE/BRANCH`.
    /// `None` when the remote has no such branch yet (an empty remote).
    pub fn fetch(&self, remote: &str, branch: &str) -> Result<Option<Oid>> {
        let tracking = format!("refs/remotes/{remote}/{branch}");
        let refspec = format!("+refs/heads/{branch}:{tracking}");
        let args = ["fetch", "--no-tags", "--quiet", remote, refspec.as_str()];
        let out = self.output(&args, None)?;
        if !out.success {
            if out.stderr.contains("couldn't find remote ref") {
                return Ok(None);
            }
            return Err(failed(
                &args,
                &out,
                &format!(
                    "check that `{remote}` is reachable (`git fetch {remote}` shows the same error); nothing was changed"
                ),
            ));
        }
        self.resolve(&format!("{tracking}^{{commit}}"))
    }

    /// Merges two commits into a tree without touching the index or the work tree. The
    /// repository's merge drivers (mem7's for memory files) run as in `git merge`.
    pub fn merge_tree(&self, ours: &Oid, theirs: &Oid) -> Result<MergeTree> {
        let args = [
            "merge-tree",
            "--write-tree",
            "--name-only",
            ours.as_str(),
            theirs.as_str(),
        ];
        let out = self.output(&args, None)?;
        let mut lines = out.stdout.lines();
        let tree = lines.next().unwrap_or_default().trim().to_string();
        match out.code {
            Some(0) if !tree.is_empty() => Ok(MergeTree::Clean(Oid(tree))),
            Some(1) if !tree.is_empty() => {
                let files: Vec<String> = lines
                    .by_ref()
                    .take_while(|l| !l.trim().is_empty())
                    .map(str::to_string)
                    .collect();
                let messages: Vec<&str> = lines.filter(|l| !l.trim().is_empty()).collect();
                let mut said = out.stderr.trim().to_string();
                for m in messages {
                    if !said.is_empty() {
                        said.push('\n');
                    }
                    said.push_str(m);
                }
                Ok(MergeTree::Conflict { files, said })
            }
            _ if out.stderr.contains("unrelated histories") => Err(Error::input(
                "this clone's history and the remote branch's share no commit (two repositories started separately)",
                "start from the remote instead: `git clone URL` it and work in that clone (copy this workspace's memory entries over with `mem7 import` if needed); nothing was changed",
            )),
            _ => Err(failed(
                &args,
                &out,
                "mem7 sync merges with `git merge-tree --write-tree` (git 2.38 or newer); nothing was changed",
            )),
        }
    }

    /// Writes a commit of `tree` with these parents; returns it. Nothing points to it
    /// until a branch is moved there.
    pub fn commit_tree(&self, tree: &Oid, parents: &[&Oid], message: &str) -> Result<Oid> {
        let mut args = vec!["commit-tree".to_string(), tree.to_string()];
        for p in parents {
            args.push("-p".into());
            args.push(p.to_string());
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = self.run_input(
            &args,
            Some(message.as_bytes()),
            "tell git who you are in this repository: `git config user.name \"Your Name\"` and `git config user.email you@example.com`; nothing was changed",
        )?;
        Ok(Oid(out.trim().to_string()))
    }

    /// Pushes `commit` to `refs/heads/BRANCH` of `remote`, never forcing.
    pub fn push(&self, remote: &str, commit: &Oid, branch: &str) -> Result<Pushed> {
        let refspec = format!("{commit}:refs/heads/{branch}");
        let args = ["push", "--porcelain", remote, refspec.as_str()];
        let out = self.output(&args, None)?;
        if out.success {
            return Ok(Pushed::Done);
        }
        // `--porcelain` prints one line per ref: `!` flags a rejection, and
        // `[rejected]` (unlike `[remote rejected]`, a hook's refusal) means the branch
        // moved on: fetch, merge and try again.
        // The branch can also move between git's check and the remote's update of the
        // ref (a push landing meanwhile): the remote then refuses to lock it.
        let raced = out.stdout.lines().any(|l| {
            l.starts_with('!')
                && (l.contains("[rejected]")
                    || (l.contains("[remote rejected]")
                        && ["cannot lock ref", "but expected", "failed to update ref"]
                            .iter()
                            .any(|m| l.contains(m))))
        });
        if raced {
            return Ok(Pushed::Rejected);
        }
        Err(failed(
            &args,
            &out,
            &format!(
                "check that you may push to `{remote}` (`git push {remote}` shows the same error); this clone was left as it was"
            ),
        ))
    }

    /// Runs a git command whose only output is an object id.
    pub fn run_oid(&self, args: &[&str], hint: &str) -> Result<Oid> {
        Ok(Oid(self.run(args, hint)?.trim().to_string()))
    }

    /// Moves `refs/heads/BRANCH` from `old` (`None`: the branch must not exist yet) to
    /// `new`, atomically; fails if someone moved it meanwhile.
    pub fn move_branch(&self, branch: &str, new: &Oid, old: Option<&Oid>) -> Result<()> {
        let zero = "0".repeat(new.as_str().len());
        let old = old.map_or(zero.as_str(), Oid::as_str);
        let name = format!("refs/heads/{branch}");
        self.run(
            &["update-ref", "-m", "mem7 sync", &name, new.as_str(), old],
            &format!(
                "`{branch}` moved while mem7 sync ran (a commit meanwhile?); run `mem7 sync` again"
            ),
        )
        .map(drop)
    }
}

/// The setting every git run of mem7's gets: an empty hooks path.
pub const NO_HOOKS: &str = "core.hooksPath=/dev/null";

/// Put first for commands given paths: they are file names, never patterns. (Only for
/// those: git exports it to its children, and a user's hooks may use patterns.)
pub const LITERAL: &str = "--literal-pathspecs";

/// The hint for failures that should not happen.
const BUG: &str = "this is unexpected: please report it with git's message; nothing was changed";

/// An error for a failed git run: the command, git's words, the remedy.
pub fn failed(args: &[&str], out: &Output, hint: &str) -> Error {
    let shown: Vec<&str> = args
        .iter()
        .copied()
        .filter(|a| !a.starts_with("--porcelain") && !matches!(*a, "--quiet" | LITERAL))
        .collect();
    let said = out.said();
    let problem = if said.is_empty() {
        format!("`git {}` failed", shown.join(" "))
    } else {
        format!("`git {}` failed: {said}", shown.join(" "))
    };
    // A failure the user cannot cause (BUG) is mem7's; the others come with their remedy.
    if hint == BUG {
        Error::internal(problem, hint)
    } else {
        Error::input(problem, hint)
    }
}
