//! `mem7 sync`: sharing a workspace through the git repository that holds it.
//!
//! One sync commits the workspace's new entries, fetches the remote branch, merges it
//! with mem7's entry-wise driver, verifies the result, pushes it, and only then moves this
//! clone's branch, index and files to it, and brings mem7's index up to date. Until that
//! last step everything happens in git's object store (`commit-tree`, `merge-tree
//! --write-tree`), never in the work tree or the user's index: a sync that stops early
//! (no remote, a conflict, tampering, a refused push) leaves the clone exactly as it was,
//! and there is never a half-done merge to abort. It never rewrites a commit and never
//! forces a push.

pub mod git;

use std::collections::{BTreeSet, HashSet};
use std::path::Path;
use std::time::Duration;

use crate::core::chain::{ChainHash, ChainKey};
use crate::core::secret;
use crate::core::time::TxTime;
use crate::error::{Error, Result};
use crate::format::{ParsedEntry, parse_file};
use crate::store::{self, Workspace};
use crate::verify::Finding;
use git::{Git, MergeTree, Oid, Pushed};

/// How many times sync fetches and merges again when the remote branch moved under it
/// (someone else pushed first) before it gives up.
pub const MAX_ATTEMPTS: u32 = 5;

/// Entries recorded more than this far ahead of the clock are reported.
pub const AHEAD_MARGIN: Duration = Duration::from_secs(5 * 60);

/// What a sync is asked to do.
#[derive(Clone, Debug)]
pub struct Options<'a> {
    /// The workspace.
    pub root: &'a Path,
    /// The git remote to sync with (default: the branch's upstream, else the only
    /// remote, else `origin`).
    pub remote: Option<&'a str>,
    /// Push the result (`--no-push` stops after merging, verifying and updating).
    pub push: bool,
    /// This machine's clock (for the entries recorded ahead of it).
    pub now: TxTime,
    /// The chain key, for verify.
    pub key: ChainKey,
    /// The running mem7, registered as the merge driver when the clone has none.
    pub exe: &'a Path,
}

/// Entries (and the commits carrying them) that went one way.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Side {
    pub commits: usize,
    pub entries: usize,
    /// The distinct keys of those entries, sorted.
    pub keys: Vec<String>,
}

/// An entry recorded ahead of this machine's clock.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ahead {
    /// Workspace-relative memory file.
    pub file: String,
    pub line: u32,
    pub key: String,
    pub recorded: TxTime,
    /// How far ahead of the clock it was recorded.
    pub ahead_seconds: i64,
}

/// What a sync did.
#[derive(Clone, Debug, Default)]
pub struct Report {
    pub remote: String,
    /// The local branch.
    pub branch: String,
    /// The branch on the remote.
    pub remote_branch: String,
    /// The commit the branch is at afterwards (`None`: still no commit).
    pub head: Option<String>,
    /// The workspace's new entries this sync committed.
    pub committed: Side,
    /// What the remote did not have before (pushed, or with `--no-push` still to push).
    pub sent: Side,
    /// What came from the remote.
    pub received: Side,
    /// Sent or received entries recorded more than [`AHEAD_MARGIN`] ahead of the clock.
    pub ahead: Vec<Ahead>,
    pub pushed: bool,
    /// Whether this sync set the branch's upstream (its first push).
    pub set_upstream: bool,
    /// Fetch–merge–push rounds it took (more than one when someone pushed first).
    pub attempts: u32,
    /// Whether mem7's merge driver was registered in this clone now.
    pub registered_driver: bool,
    /// Warnings verify gave (`merge`: parallel appends merged; `legacy`).
    pub verify_warnings: usize,
    /// Problems the index catch-up found in the files.
    pub warnings: Vec<String>,
}

/// Whose entries failed to verify.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RefusedBy {
    /// The workspace's own memory (hand edits, removed entries).
    Local,
    /// What the merge with the remote branch gives (the remote holds tampered entries).
    Merged,
}

/// How a sync ended, short of an error.
#[derive(Clone, Debug)]
pub enum Outcome {
    Synced(Box<Report>),
    /// Verification failed: nothing was committed, merged or pushed.
    Refused {
        by: RefusedBy,
        remote: String,
        remote_branch: String,
        findings: Vec<Finding>,
    },
}

/// Parses a sync period: one or more `<number><unit>` (units `s`, `m`, `h`, `d`), e.g.
/// `30s`, `5m`, `1h30m`. At least one second.
pub fn parse_every(text: &str) -> std::result::Result<Duration, String> {
    let t = text.trim();
    let bad = || {
        format!(
            "{text:?} is not a duration: write a number and a unit (s, m, h or d), like 30s, 5m or 1h30m"
        )
    };
    if t.is_empty() {
        return Err(bad());
    }
    let mut total: u64 = 0;
    let mut digits = String::new();
    for c in t.chars() {
        if c.is_ascii_digit() {
            digits.push(c);
            continue;
        }
        let unit = match c {
            's' => 1,
            'm' => 60,
            'h' => 3600,
            'd' => 86_400,
            _ => return Err(bad()),
        };
        let n: u64 = digits.parse().map_err(|_| bad())?;
        digits.clear();
        total = n
            .checked_mul(unit)
            .and_then(|s| total.checked_add(s))
            .ok_or_else(bad)?;
    }
    if !digits.is_empty() {
        return Err(bad());
    }
    if total == 0 {
        return Err(format!("{text:?} is no time at all: give at least 1s"));
    }
    Ok(Duration::from_secs(total))
}

/// The repository around the workspace, and where sync reads and writes.
struct Repo {
    git: Git,
    /// The workspace's directory inside the repository (`""` or `sub/dir/`).
    prefix: String,
    branch: String,
    remote: String,
    remote_branch: String,
    has_upstream: bool,
}

impl Repo {
    fn open(root: &Path, remote: Option<&str>) -> Result<Repo> {
        let (git, prefix) = Git::discover(root)?.ok_or_else(|| {
            Error::input(
                format!("{} is not inside a git repository", root.display()),
                "mem7 sync shares memory through git: run `git init` in the workspace and `git remote add origin URL` (a bare repository made with `git init --bare` will do), or `git clone` the team's memory repository and use the workspace in that clone; nothing was changed",
            )
        })?;
        for (marker, what, abort) in [
            ("MERGE_HEAD", "a merge", "git merge --abort"),
            (
                "CHERRY_PICK_HEAD",
                "a cherry-pick",
                "git cherry-pick --abort",
            ),
            ("REVERT_HEAD", "a revert", "git revert --abort"),
            ("rebase-merge", "a rebase", "git rebase --abort"),
            ("rebase-apply", "a rebase", "git rebase --abort"),
        ] {
            if git.git_path(marker)?.exists() {
                return Err(Error::input(
                    format!("{what} is in progress in {}", git.top().display()),
                    format!(
                        "finish it (`git status` says how) or abort it (`{abort}`), then run `mem7 sync` again; nothing was changed"
                    ),
                ));
            }
        }
        let branch = git.current_branch()?.ok_or_else(|| {
            Error::input(
                "HEAD is detached: this clone is not on a branch, so there is nothing to sync to",
                "switch to the branch to sync (`git switch main`), or make one here (`git switch -c NAME`), then run `mem7 sync` again; nothing was changed",
            )
        })?;
        let remotes = git.remotes()?;
        let upstream = git.config_get(&format!("branch.{branch}.remote"))?;
        let remote = match remote {
            Some(name) => {
                if !remotes.iter().any(|r| r == name) {
                    return Err(Error::input(
                        format!(
                            "there is no git remote named `{name}`{}",
                            if remotes.is_empty() {
                                String::new()
                            } else {
                                format!(" (remotes: {})", remotes.join(", "))
                            }
                        ),
                        format!(
                            "add it with `git remote add {name} URL`, or name one of `git remote -v`; nothing was changed"
                        ),
                    ));
                }
                name.to_string()
            }
            None => match (&upstream, remotes.as_slice()) {
                (Some(u), _) if remotes.contains(u) => u.clone(),
                (_, []) => {
                    return Err(Error::input(
                        "this repository has no git remote to sync with",
                        "add one with `git remote add origin URL` (for a shared folder or server: `git init --bare PATH` makes an empty one), then run `mem7 sync` again; nothing was changed",
                    ));
                }
                (_, [only]) => only.clone(),
                (_, many) if many.iter().any(|r| r == "origin") => "origin".to_string(),
                (_, many) => {
                    return Err(Error::input(
                        format!(
                            "this repository has several remotes ({}) and `{branch}` has no upstream",
                            many.join(", ")
                        ),
                        "name the one to sync with: `mem7 sync --remote NAME`; nothing was changed",
                    ));
                }
            },
        };
        let remote_branch = match (
            &upstream,
            git.config_get(&format!("branch.{branch}.merge"))?,
        ) {
            (Some(u), Some(merge)) if *u == remote => merge
                .strip_prefix("refs/heads/")
                .unwrap_or(&merge)
                .to_string(),
            _ => branch.clone(),
        };
        Ok(Repo {
            git,
            prefix,
            branch,
            has_upstream: upstream.is_some(),
            remote,
            remote_branch,
        })
    }

    /// `memory/` as the repository names it.
    fn memory_dir(&self) -> String {
        format!("{}{}", self.prefix, store::MEMORY_DIR)
    }

    /// A repository path as the workspace names it (`None` outside the workspace).
    fn in_workspace<'p>(&self, path: &'p str) -> Option<&'p str> {
        path.strip_prefix(self.prefix.as_str())
    }

    fn upstream(&self) -> String {
        format!("{}/{}", self.remote, self.remote_branch)
    }
}

/// Which of mem7's own files a workspace path is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mem7File {
    /// `memory/YYYY-MM-DD.md`.
    Day,
    /// `memory/torn/*`: a torn tail set aside.
    Torn,
    /// A file `mem7 init` wrote.
    Scaffold,
}

fn mem7_file(rel: &str) -> Option<Mem7File> {
    if let Some(name) = rel.strip_prefix("memory/") {
        if store::is_day_file_name(name) {
            return Some(Mem7File::Day);
        }
        if name.strip_prefix("torn/").is_some_and(|n| !n.contains('/')) {
            return Some(Mem7File::Torn);
        }
    }
    store::scaffold()
        .any(|(name, _)| name == rel)
        .then_some(Mem7File::Scaffold)
}

/// The workspace's files that differ from the last commit and that sync commits.
#[derive(Debug, Default)]
struct Pending {
    /// Repository paths to commit (they exist).
    paths: Vec<String>,
    /// Memory files deleted from the work tree (repository paths).
    deleted: Vec<String>,
}

fn pending(repo: &Repo, ws: &Workspace) -> Result<Pending> {
    let mut pathspecs = vec![repo.memory_dir()];
    for (name, _) in store::scaffold() {
        pathspecs.push(format!("{}{name}", repo.prefix));
    }
    let specs: Vec<&str> = pathspecs.iter().map(String::as_str).collect();
    let mut out = Pending::default();
    for (code, path) in repo.git.status(&specs)? {
        let Some(rel) = repo.in_workspace(&path) else {
            continue;
        };
        let Some(kind) = mem7_file(rel) else {
            continue;
        };
        if code.contains('U') || code == "AA" || code == "DD" {
            return Err(Error::input(
                format!("{rel} has an unresolved git conflict"),
                "resolve it (for a memory file: keep both sides' entries), `git add` it and commit, then run `mem7 sync` again; nothing was changed",
            ));
        }
        let on_disk = ws.path(rel).is_file();
        match kind {
            Mem7File::Day if !on_disk => out.deleted.push(path),
            Mem7File::Day => out.paths.push(path),
            Mem7File::Torn if on_disk => out.paths.push(path),
            Mem7File::Torn => {}
            // A scaffold file is mem7's while nobody changed it (the settings file
            // always is): a project's own README or .gitignore is left alone.
            Mem7File::Scaffold if code == "??" && on_disk => {
                let ours = rel == store::CONFIG_FILE
                    || store::scaffold().any(|(name, content)| {
                        name == rel
                            && std::fs::read(ws.path(rel)).is_ok_and(|b| b == content.as_bytes())
                    });
                if ours {
                    out.paths.push(path);
                }
            }
            Mem7File::Scaffold => {}
        }
    }
    Ok(out)
}

/// The tree of `base` with `paths` replaced by the work tree's files, built in a scratch
/// index (the user's index is not touched).
fn tree_with(git: &Git, base: Option<&Oid>, paths: &[String]) -> Result<Oid> {
    const HINT: &str = "check that the work tree's files are readable; nothing was changed";
    let scratch = tempfile::tempdir().map_err(|e| Error::io("<temp dir>", e))?;
    let g = git.with_index(&scratch.path().join("index"));
    match base {
        Some(b) => g.run(&["read-tree", b.as_str()], HINT)?,
        None => g.run(&["read-tree", "--empty"], HINT)?,
    };
    if !paths.is_empty() {
        let mut input = Vec::new();
        for p in paths {
            input.extend_from_slice(p.as_bytes());
            input.push(0);
        }
        g.run_input(
            &["update-index", "--add", "--remove", "-z", "--stdin"],
            Some(&input),
            HINT,
        )?;
    }
    g.run_oid(&["write-tree"], HINT)
}

/// An entry found in one version of a file and not in another.
#[derive(Clone, Debug)]
struct EntryInfo {
    /// Workspace-relative file.
    file: String,
    line: u32,
    key: String,
    recorded: Option<TxTime>,
    secret_allowed: bool,
    value: Option<String>,
}

fn entry_info(file: &str, e: &ParsedEntry) -> EntryInfo {
    let f = &e.fields;
    let recorded = [&f.recorded, &f.updated, &f.created]
        .into_iter()
        .find_map(|t| t.as_deref().and_then(|t| TxTime::parse(t).ok()));
    EntryInfo {
        file: file.to_string(),
        line: e.line,
        key: e.key.clone(),
        recorded,
        secret_allowed: f.secret.as_deref().is_some_and(|s| s.trim() == "allowed"),
        value: e.value.clone(),
    }
}

/// An entry's identity across edits: its recorded hash, else its bytes' hash.
fn identity(e: &ParsedEntry) -> ChainHash {
    e.claimed.unwrap_or(e.computed)
}

/// The entries of `new` that `old` lacks (by their bytes), and the entries of `old`
/// that `new` lost (by identity, so an edited entry is not counted as lost).
fn entry_diff(old: &str, new: &str) -> (Vec<ParsedEntry>, Vec<ParsedEntry>) {
    let key = ChainKey::Plain;
    let old = parse_file(old, &key);
    let new = parse_file(new, &key);
    let old_bytes: HashSet<ChainHash> = old.entries.iter().map(|e| e.computed).collect();
    let new_ids: HashSet<ChainHash> = new.entries.iter().map(identity).collect();
    let added = new
        .entries
        .iter()
        .filter(|e| !old_bytes.contains(&e.computed))
        .cloned()
        .collect();
    let lost = old
        .entries
        .into_iter()
        .filter(|e| !new_ids.contains(&identity(e)))
        .collect();
    (added, lost)
}

/// Entries in `to`'s memory files that `from`'s lack (`None`: no commit).
fn entries_between(repo: &Repo, from: Option<&Oid>, to: &Oid) -> Result<Vec<EntryInfo>> {
    let from_tree = repo.git.tree_of(from)?;
    let files: Vec<String> = repo
        .git
        .changed_files(&from_tree, to, Some(&repo.memory_dir()))?
        .into_iter()
        .filter(|p| repo.in_workspace(p).and_then(mem7_file) == Some(Mem7File::Day))
        .collect();
    let mut requests = Vec::new();
    for f in &files {
        requests.push((from_tree.clone(), f.clone()));
        requests.push((to.clone(), f.clone()));
    }
    let texts = repo.git.read_files(&requests)?;
    let mut out = Vec::new();
    for (i, f) in files.iter().enumerate() {
        let old = texts[2 * i].as_deref().unwrap_or("");
        let new = texts[2 * i + 1].as_deref().unwrap_or("");
        let rel = repo.in_workspace(f).unwrap_or(f);
        let (added, _) = entry_diff(old, new);
        out.extend(added.iter().map(|e| entry_info(rel, e)));
    }
    Ok(out)
}

fn side(entries: &[EntryInfo], commits: usize) -> Side {
    let keys: BTreeSet<&str> = entries.iter().map(|e| e.key.as_str()).collect();
    Side {
        commits,
        entries: entries.len(),
        keys: keys.into_iter().map(str::to_string).collect(),
    }
}

/// What the commit step found.
enum Commit {
    Nothing,
    Made {
        commit: Oid,
        entries: Vec<EntryInfo>,
    },
    Refused(Vec<Finding>),
}

/// Commits the workspace's files that differ from `local` (a commit object on top of it;
/// no branch moves). Refuses credentials written by hand (an error) and entries removed
/// from the files (findings).
fn commit_pending(repo: &Repo, ws: &Workspace, local: Option<&Oid>) -> Result<Commit> {
    let pending = pending(repo, ws)?;
    let base_tree = repo.git.tree_of(local)?;
    let mut findings = Vec::new();
    // Files deleted since the last commit: their entries are gone.
    let deleted: Vec<&String> = pending
        .deleted
        .iter()
        .filter(|p| {
            repo.git
                .ls_tree(&base_tree, &[p.as_str()])
                .is_ok_and(|m| !m.is_empty())
        })
        .collect();
    for p in deleted {
        let rel = repo.in_workspace(p).unwrap_or(p);
        findings.push(Finding {
            file: rel.to_string(),
            line: 0,
            key: String::new(),
            kind: "removed",
            is_break: true,
            message: format!(
                "the file was deleted, with every entry committed in it; memory files are append-only: restore it with `git checkout -- {rel}`"
            ),
            computed: None,
        });
    }
    if pending.paths.is_empty() {
        return Ok(if findings.is_empty() {
            Commit::Nothing
        } else {
            Commit::Refused(findings)
        });
    }
    let tree = tree_with(&repo.git, local, &pending.paths)?;
    if tree == base_tree && findings.is_empty() {
        return Ok(Commit::Nothing);
    }
    // What is new in each memory file, and what went missing.
    let days: Vec<&String> = pending
        .paths
        .iter()
        .filter(|p| repo.in_workspace(p).and_then(mem7_file) == Some(Mem7File::Day))
        .collect();
    let requests: Vec<(Oid, String)> = days
        .iter()
        .map(|p| (base_tree.clone(), (*p).clone()))
        .collect();
    let committed = repo.git.read_files(&requests)?;
    let mut entries = Vec::new();
    let mut secrets = Vec::new();
    for (p, old) in days.iter().zip(&committed) {
        let rel = repo.in_workspace(p).unwrap_or(p);
        let now = ws.read(rel)?;
        let (added, lost) = entry_diff(old.as_deref().unwrap_or(""), &now);
        for e in &lost {
            findings.push(Finding {
                file: rel.to_string(),
                line: e.line,
                key: e.key.clone(),
                kind: "removed",
                is_break: true,
                message: format!(
                    "this entry (line {} in the last commit) is no longer in the file; memory files are append-only: restore it with `git checkout -- {rel}` and append instead",
                    e.line
                ),
                computed: None,
            });
        }
        for e in &added {
            let info = entry_info(rel, e);
            if !info.secret_allowed {
                let found = secret::find(&info.key).map(|f| ("key", f)).or_else(|| {
                    info.value
                        .as_deref()
                        .and_then(secret::find)
                        .map(|f| ("value", f))
                });
                if let Some((what, f)) = found {
                    secrets.push(format!(
                        "{rel}:{}: the {what} of `{}` looks like a credential ({})",
                        info.line, info.key, f.kind
                    ));
                }
            }
            entries.push(info);
        }
    }
    // Torn tails and the settings file are pushed too: they must not carry secrets.
    for p in &pending.paths {
        let rel = repo.in_workspace(p).unwrap_or(p);
        let kind = mem7_file(rel);
        if kind == Some(Mem7File::Torn) || rel == store::CONFIG_FILE {
            let text = String::from_utf8_lossy(
                &std::fs::read(ws.path(rel)).map_err(|e| Error::io(ws.path(rel), e))?,
            )
            .into_owned();
            if !text.contains("secret: allowed")
                && let Some(f) = secret::find(&text)
            {
                let line = text[..f.offset].matches('\n').count() + 1;
                secrets.push(format!(
                    "{rel}:{line}: looks like a credential ({})",
                    f.kind
                ));
            }
        }
    }
    if !secrets.is_empty() {
        return Err(Error::input(
            format!(
                "refusing to commit what looks like a credential, written into the workspace by hand:\n  {}",
                secrets.join("\n  ")
            ),
            "nothing was committed or pushed. Delete that text from the file (it never reached git, so no trace is left) and keep the secret in a secret manager, storing where to find it instead; if it is not a secret, add `secret: allowed` to the entry's envelope and run `mem7 seal`, then `mem7 sync` again",
        ));
    }
    if !findings.is_empty() {
        return Ok(Commit::Refused(findings));
    }
    let message = commit_message(&entries);
    let parents: Vec<&Oid> = local.into_iter().collect();
    let commit = repo.git.commit_tree(&tree, &parents, &message)?;
    Ok(Commit::Made { commit, entries })
}

fn commit_message(entries: &[EntryInfo]) -> String {
    let keys: BTreeSet<&str> = entries.iter().map(|e| e.key.as_str()).collect();
    let mut msg = match entries.len() {
        0 => "mem7 sync: the workspace's files".to_string(),
        1 => "mem7 sync: 1 new entry".to_string(),
        n => format!("mem7 sync: {n} new entries"),
    };
    if !keys.is_empty() {
        msg.push_str("\n\nKeys: ");
        msg.push_str(&keys.into_iter().collect::<Vec<_>>().join(", "));
    }
    msg.push('\n');
    msg
}

/// Merges `theirs` into `ours` (commit objects only): unchanged, a fast-forward, or a
/// merge commit made with the repository's merge drivers.
fn merge(repo: &Repo, ours: Option<&Oid>, theirs: &Oid, message: &str) -> Result<Oid> {
    let Some(ours) = ours else {
        return Ok(theirs.clone());
    };
    if repo.git.is_ancestor(theirs, ours)? {
        return Ok(ours.clone());
    }
    if repo.git.is_ancestor(ours, theirs)? {
        return Ok(theirs.clone());
    }
    match repo.git.merge_tree(ours, theirs)? {
        MergeTree::Clean(tree) => repo.git.commit_tree(&tree, &[ours, theirs], message),
        MergeTree::Conflict { files, said } => {
            let upstream = repo.upstream();
            let shown: Vec<&str> = files
                .iter()
                .map(|f| repo.in_workspace(f).unwrap_or(f))
                .collect();
            let memory = files
                .iter()
                .any(|f| repo.in_workspace(f).and_then(mem7_file) == Some(Mem7File::Day));
            let said: Vec<&str> = said.lines().filter(|l| l.starts_with("CONFLICT")).collect();
            let problem = if memory {
                format!(
                    "cannot merge {upstream}: both sides edited the same old entry in {} (mem7 merges appended entries, not two edits of one entry)",
                    shown.join(", ")
                )
            } else {
                format!(
                    "cannot merge {upstream}: {} changed on both sides and git cannot merge {}{}",
                    shown.join(", "),
                    if files.len() == 1 { "it" } else { "them" },
                    if said.is_empty() {
                        String::new()
                    } else {
                        format!(" ({})", said.join("; "))
                    }
                )
            };
            let hint = if memory {
                format!(
                    "nothing was changed. Compare the two versions (`git fetch {r}` then `git diff HEAD {upstream} -- FILE`), merge by hand (commit your memory files, `git merge {upstream}`, keep the right edit, `mem7 seal`, commit), then `mem7 sync` again",
                    r = repo.remote
                )
            } else {
                format!(
                    "nothing was changed. Merge by hand: commit your work, `git merge {upstream}`, resolve the conflict and commit, then `mem7 sync` again"
                )
            };
            Err(Error::input(problem, hint))
        }
    }
}

/// Verifies the memory `tip` holds. When it is the work tree's own memory, the workspace
/// itself is verified; else `tip`'s memory files are exported to a scratch workspace.
fn verify_tip(
    repo: &Repo,
    ws: &Workspace,
    key: &ChainKey,
    local: Option<&Oid>,
    tip: &Oid,
) -> Result<(RefusedBy, crate::verify::Report)> {
    let memory = repo.memory_dir();
    let tree_of_memory = |c: Option<&Oid>| -> Result<Option<Oid>> {
        match c {
            Some(c) => repo.git.resolve(&format!("{c}:{memory}")),
            None => Ok(None),
        }
    };
    let tip_memory = tree_of_memory(Some(tip))?;
    if tip_memory == tree_of_memory(local)? {
        return Ok((RefusedBy::Local, crate::verify::verify(ws, key, None)?));
    }
    let scratch = tempfile::tempdir().map_err(|e| Error::io("<temp dir>", e))?;
    let dir = scratch.path().join("workspace");
    let memory_dir = dir.join(store::MEMORY_DIR);
    std::fs::create_dir_all(&memory_dir).map_err(|e| Error::io(&memory_dir, e))?;
    if let Some(tree) = tip_memory {
        let g = repo.git.with_index(&scratch.path().join("index"));
        const HINT: &str = "check the free space of the temporary directory; nothing was changed";
        g.run(&["read-tree", tree.as_str()], HINT)?;
        let prefix = format!("--prefix={}/", memory_dir.display());
        g.run(&["checkout-index", "-a", "-f", &prefix], HINT)?;
    }
    let exported = Workspace::open(&dir)?;
    Ok((
        RefusedBy::Merged,
        crate::verify::verify(&exported, key, None)?,
    ))
}

/// Checks that moving the work tree from `local` to `tip` changes no file the user has
/// changed (or left untracked), other than the files sync commits (`ours`).
fn check_work_tree(repo: &Repo, local: Option<&Oid>, tip: &Oid, ours: &[String]) -> Result<()> {
    let from = repo.git.tree_of(local)?;
    let changed = repo.git.changed_files(&from, tip, None)?;
    let others: Vec<&str> = changed
        .iter()
        .filter(|p| !ours.contains(p))
        .map(String::as_str)
        .collect();
    if others.is_empty() {
        return Ok(());
    }
    let dirty: Vec<String> = others
        .chunks(200)
        .map(|chunk| repo.git.status(chunk))
        .collect::<Result<Vec<_>>>()?
        .into_iter()
        .flatten()
        .map(|(_, p)| p)
        .collect();
    if dirty.is_empty() {
        return Ok(());
    }
    Err(Error::input(
        format!(
            "{} brings changes to {}, which {} local changes (or {} untracked here)",
            repo.upstream(),
            dirty.join(", "),
            if dirty.len() == 1 { "has" } else { "have" },
            if dirty.len() == 1 { "is" } else { "are" },
        ),
        "commit or stash them (`git stash -u`), then run `mem7 sync` again; nothing was changed",
    ))
}

/// Moves this clone to `tip`: the branch (only if it is still at `start`), the index
/// entries and the files that differ between `local` and `tip`. The user's other staged
/// and unstaged changes stay as they are.
fn apply(
    repo: &Repo,
    paths: &[String],
    start: Option<&Oid>,
    local: Option<&Oid>,
    tip: &Oid,
) -> Result<()> {
    let index = repo.git.git_path("index")?;
    let backup = tempfile::NamedTempFile::new().map_err(|e| Error::io("<temp file>", e))?;
    let had_index = index.exists();
    if had_index {
        std::fs::copy(&index, backup.path()).map_err(|e| Error::io(&index, e))?;
    }
    let restore_index = || {
        if had_index {
            let _ = std::fs::copy(backup.path(), &index);
        } else {
            let _ = std::fs::remove_file(&index);
        }
    };
    const HINT: &str = "nothing was changed in this clone; run `mem7 sync` again";
    // The index gets our files as committed (their work tree content), so that git
    // sees them clean when it moves them on.
    if !paths.is_empty() {
        let mut args = vec![git::LITERAL, "add", "--"];
        args.extend(paths.iter().map(String::as_str));
        if let Err(e) = repo.git.run(&args, HINT) {
            restore_index();
            return Err(e);
        }
    }
    if let Err(e) = repo.git.move_branch(&repo.branch, tip, start) {
        restore_index();
        return Err(e);
    }
    let from = repo.git.tree_of(local)?;
    if from != repo.git.tree_of(Some(tip))? {
        let out = repo.git.output(
            &["read-tree", "-m", "-u", from.as_str(), tip.as_str()],
            None,
        )?;
        if !out.success {
            let _ = match start {
                Some(s) => repo.git.move_branch(&repo.branch, s, Some(tip)),
                None => repo
                    .git
                    .run(
                        &[
                            "update-ref",
                            "-d",
                            &format!("refs/heads/{}", repo.branch),
                            tip.as_str(),
                        ],
                        HINT,
                    )
                    .map(drop),
            };
            restore_index();
            return Err(git::failed(
                &["read-tree", "-m", "-u"],
                &out,
                "commit or stash your changes to those files (`git stash -u`), then run `mem7 sync` again",
            ));
        }
    }
    Ok(())
}

/// Registers mem7's merge driver when the clone has none. Returns whether it did.
fn ensure_driver(repo: &Repo, exe: &Path) -> Result<bool> {
    if git::is_mem7_driver(repo.git.config_get("merge.union.driver")?.as_deref()) {
        return Ok(false);
    }
    let driver = git::driver_command(exe);
    repo.git.config_set(
        "merge.union.name",
        "mem7: entry-wise merge of memory files (union for other files)",
    )?;
    repo.git.config_set("merge.union.driver", &driver)?;
    Ok(true)
}

/// Runs one sync. Errors (exit 2) leave the clone as it was; so does a refusal.
pub fn run(opts: &Options<'_>) -> Result<Outcome> {
    let ws = Workspace::open(opts.root)?;
    let repo = Repo::open(ws.root(), opts.remote)?;
    let registered_driver = ensure_driver(&repo, opts.exe)?;
    let start = repo.git.resolve("HEAD^{commit}")?;
    // `local`: the work tree's own commits (HEAD plus what this sync committed).
    // `tip`: `local` merged with the remote branch: what is pushed and checked out.
    let mut local = start.clone();
    let mut tip = start.clone();
    let mut committed: Vec<EntryInfo> = Vec::new();
    let mut committed_commits = 0;
    // The remote branch as others left it, and as it was when we first pushed.
    let mut theirs: Option<Oid> = None;
    let mut sent_base: Option<Option<Oid>> = None;
    let mut our_pushes: HashSet<Oid> = HashSet::new();
    let mut attempts = 0;
    let refused = |by, findings| Outcome::Refused {
        by,
        remote: repo.remote.clone(),
        remote_branch: repo.remote_branch.clone(),
        findings,
    };
    let mut verify_warnings = 0;
    loop {
        attempts += 1;
        if attempts > MAX_ATTEMPTS {
            return Err(Error::input(
                format!(
                    "gave up after {MAX_ATTEMPTS} attempts: {} kept moving while mem7 sync merged (others pushing), or the memory files kept changing",
                    repo.upstream()
                ),
                if our_pushes.is_empty() {
                    "nothing was changed; run `mem7 sync` again"
                } else {
                    "this clone's entries reached the remote, but this clone was not moved to the result; run `mem7 sync` again"
                },
            ));
        }
        // 1. Commit what the work tree has that `local` lacks.
        {
            let _lock = ws.lock()?;
            match commit_pending(&repo, &ws, local.as_ref())? {
                Commit::Nothing => {}
                Commit::Refused(findings) => return Ok(refused(RefusedBy::Local, findings)),
                Commit::Made { commit, entries } => {
                    tip = if tip == local {
                        Some(commit.clone())
                    } else {
                        let previous = tip.as_ref().expect("a tip beyond local");
                        Some(merge(
                            &repo,
                            Some(&commit),
                            previous,
                            "mem7 sync: merge entries written while syncing\n",
                        )?)
                    };
                    local = Some(commit);
                    committed.extend(entries);
                    committed_commits += 1;
                }
            }
        }
        // 2. Fetch and merge.
        let remote_tip = repo.git.fetch(&repo.remote, &repo.remote_branch)?;
        if let Some(r) = &remote_tip {
            if !our_pushes.contains(r) {
                theirs = Some(r.clone());
            }
            tip = Some(merge(
                &repo,
                tip.as_ref(),
                r,
                &format!("mem7 sync: merge {}\n", repo.upstream()),
            )?);
        }
        let Some(t) = tip.clone() else {
            // No commit anywhere and nothing to commit: nothing to do.
            break;
        };
        // 3. Verify what would be pushed and checked out.
        let (by, report) = verify_tip(&repo, &ws, &opts.key, local.as_ref(), &t)?;
        if report.is_broken() {
            let findings = report.findings.into_iter().filter(|f| f.is_break).collect();
            return Ok(refused(by, findings));
        }
        verify_warnings = report.findings.len();
        // 4. Check that this clone can take it, before anything leaves it.
        check_work_tree(&repo, local.as_ref(), &t, &pending(&repo, &ws)?.paths)?;
        // 5. Push.
        if opts.push && remote_tip.as_ref() != Some(&t) {
            match repo.git.push(&repo.remote, &t, &repo.remote_branch)? {
                Pushed::Rejected => continue,
                Pushed::Done => {
                    sent_base.get_or_insert(remote_tip.clone());
                    our_pushes.insert(t.clone());
                }
            }
        }
        // 6. Move this clone to the result, unless mem7 wrote meanwhile (then the
        // next round commits that too).
        let _lock = ws.lock()?;
        let now = pending(&repo, &ws)?;
        if !now.deleted.is_empty()
            || tree_with(&repo.git, local.as_ref(), &now.paths)?
                != repo.git.tree_of(local.as_ref())?
        {
            continue;
        }
        if tip != start {
            apply(&repo, &now.paths, start.as_ref(), local.as_ref(), &t)?;
        }
        break;
    }

    let pushed = !our_pushes.is_empty();
    let mut set_upstream = false;
    if pushed && !repo.has_upstream {
        repo.git
            .config_set(&format!("branch.{}.remote", repo.branch), &repo.remote)?;
        repo.git.config_set(
            &format!("branch.{}.merge", repo.branch),
            &format!("refs/heads/{}", repo.remote_branch),
        )?;
        set_upstream = true;
    }

    // Bring mem7's index up to date with what arrived. The sync itself is done by now:
    // a failure here is a warning, and the next mem7 command catches up again.
    let mut warnings = Vec::new();
    match crate::engine::Engine::open(ws.root(), opts.key).and_then(|mut engine| {
        let mut found = engine.sync_report().warnings.clone();
        found.extend(engine.catch_up(opts.now)?.sync.warnings);
        Ok(found)
    }) {
        Ok(found) => warnings.extend(found.iter().map(ToString::to_string)),
        Err(e) => warnings.push(format!(
            "the index was not brought up to date ({e}); the next mem7 command catches up"
        )),
    }

    let mut report = Report {
        remote: repo.remote.clone(),
        branch: repo.branch.clone(),
        remote_branch: repo.remote_branch.clone(),
        head: tip.as_ref().map(|t| t.to_string()),
        committed: side(&committed, committed_commits),
        pushed,
        set_upstream,
        attempts,
        registered_driver,
        verify_warnings,
        warnings,
        ..Report::default()
    };
    if let Some(t) = &tip {
        let received = entries_between(&repo, local.as_ref(), t)?;
        let received_commits = match &theirs {
            Some(r) => repo.git.count_commits(r, local.as_ref())?,
            None => 0,
        };
        let base = sent_base.unwrap_or_else(|| theirs.clone());
        let sent = entries_between(&repo, base.as_ref(), t)?;
        let sent_commits = repo.git.count_commits(t, base.as_ref())?;
        let margin = AHEAD_MARGIN.as_micros() as i64;
        let mut seen = HashSet::new();
        for e in sent.iter().chain(&received) {
            if let Some(rec) = e.recorded
                && rec.micros() > opts.now.micros().saturating_add(margin)
                && seen.insert((e.file.clone(), e.line))
            {
                report.ahead.push(Ahead {
                    file: e.file.clone(),
                    line: e.line,
                    key: e.key.clone(),
                    recorded: rec,
                    ahead_seconds: (rec.micros() - opts.now.micros()) / 1_000_000,
                });
            }
        }
        report
            .ahead
            .sort_by(|a, b| (&a.file, a.line).cmp(&(&b.file, b.line)));
        report.received = side(&received, received_commits);
        report.sent = side(&sent, sent_commits);
    }
    Ok(Outcome::Synced(Box::new(report)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn periods_parse_and_nonsense_is_refused() {
        assert_eq!(parse_every("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_every("5m"), Ok(Duration::from_secs(300)));
        assert_eq!(parse_every("1h30m"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_every(" 2d "), Ok(Duration::from_secs(172_800)));
        for bad in [
            "",
            "5",
            "m",
            "5x",
            "-5m",
            "1.5h",
            "0s",
            "5 m",
            "99999999999999999999h",
        ] {
            assert!(parse_every(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn mem7_files_are_recognised() {
        assert_eq!(mem7_file("memory/2026-04-12.md"), Some(Mem7File::Day));
        assert_eq!(
            mem7_file("memory/torn/2026-04-12.at-40.torn"),
            Some(Mem7File::Torn)
        );
        assert_eq!(mem7_file("mem7.yaml"), Some(Mem7File::Scaffold));
        assert_eq!(mem7_file(".gitattributes"), Some(Mem7File::Scaffold));
        assert_eq!(mem7_file("memory/notes.md"), None);
        assert_eq!(mem7_file("memory/torn/deep/x"), None);
        assert_eq!(mem7_file("src/main.rs"), None);
    }
}
