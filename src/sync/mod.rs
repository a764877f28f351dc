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
//!
//! This file holds the sequence (`run`) and its report; `repo.rs` the repository and
//! mem7's paths in it, `commit.rs` entries between commits and the commit step,
//! `merge.rs` the merge, its verify and moving the clone, `entry_merge.rs` the entry-wise
//! merge driver behind `mem7 merge-file`, `git.rs` running git.

mod commit;
pub mod driver;
pub mod entry_merge;
pub mod git;
mod guard;
mod merge;
mod repo;

use std::collections::{BTreeSet, HashSet};
use std::path::Path;
use std::time::Duration;

use crate::core::chain::{ChainHash, ChainKey};
use crate::core::time::TxTime;
use crate::error::{Error, Result};
use crate::format::{ParsedEntry, parse_file};
use crate::store::{self, Workspace};
use crate::text::secret;
use crate::verify::Finding;
use commit::*;
use git::{Git, MergeTree, Oid, Pushed};
use guard::*;
pub use guard::{Restored, ensure_attributes};
use merge::*;
use repo::*;

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
    /// Entries that the merge with the remote (or a fast-forward to it) would have
    /// dropped, put back in the result (see `guard.rs`).
    pub restored: Vec<Restored>,
    /// Files outside the workspace's memory folder that the remote changed (hooks,
    /// `.gitattributes`, …): mem7 runs no hook and uses its own merge attributes.
    pub outside: Vec<String>,
    /// Whether this sync wrote mem7's merge attributes into `info/attributes`.
    pub wrote_attributes: bool,
}

/// Whose entries failed to verify.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RefusedBy {
    /// The workspace's own memory (hand edits, removed entries).
    Local,
    /// What the merge with the remote branch gives (the remote holds tampered entries).
    Merged,
    /// The remote branch itself: it holds a link, a submodule or another entry that is
    /// not a regular file under the workspace.
    Remote,
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

/// Runs one sync. Errors (exit 2) leave the clone as it was; so does a refusal.
pub fn run(opts: &Options<'_>) -> Result<Outcome> {
    let ws = Workspace::open(opts.root)?;
    let repo = Repo::open(ws.root(), opts.remote)?;
    let registered_driver = ensure_driver(&repo, opts.exe)?;
    let wrote_attributes = ensure_attributes(&repo.git, &repo.prefix)?;
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
    let mut verify_warnings = 0;
    let mut restored = Vec::new();
    loop {
        attempts += 1;
        if attempts > MAX_ATTEMPTS {
            return Err(gave_up(&repo, !our_pushes.is_empty()));
        }
        // 1. Commit what the work tree has that `local` lacks.
        if let Some(findings) = commit_round(
            &repo,
            &ws,
            (&mut local, &mut tip),
            &mut committed,
            &mut committed_commits,
        )? {
            return Ok(refused(&repo, RefusedBy::Local, findings));
        }
        // 2. Fetch and merge.
        let fetched = fetch_round(
            &repo,
            local.as_ref(),
            &mut tip,
            &our_pushes,
            &mut theirs,
            &mut restored,
        )?;
        let remote_tip = match fetched {
            Ok(remote_tip) => remote_tip,
            Err(unsafe_paths) => return Ok(refused(&repo, RefusedBy::Remote, unsafe_paths)),
        };
        let Some(t) = tip.clone() else {
            // No commit anywhere and nothing to commit: nothing to do.
            break;
        };
        // 3. Verify what would be pushed and checked out.
        let (by, report) = verify_tip(&repo, &ws, &opts.key, local.as_ref(), &t)?;
        if report.is_broken() {
            return Ok(refused(&repo, by, breaks(report.findings)));
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
        let Some(now) = settled(&repo, &ws, local.as_ref())? else {
            continue;
        };
        if tip != start {
            apply(&repo, &now.paths, start.as_ref(), local.as_ref(), &t)?;
        }
        break;
    }

    let pushed = !our_pushes.is_empty();
    let set_upstream = pushed && !repo.has_upstream;
    if set_upstream {
        set_upstream_branch(&repo)?;
    }
    let warnings = catch_up_index(&ws, opts);

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
        restored,
        wrote_attributes,
        ..Report::default()
    };
    if let Some(t) = &tip {
        what_moved(
            &mut report,
            &repo,
            opts.now,
            local.as_ref(),
            t,
            &theirs,
            sent_base,
        )?;
    }
    Ok(Outcome::Synced(Box::new(report)))
}

/// Step 1 of a round: commits what the work tree has that `local` lacks (under the
/// workspace's lock), moving `local` and `tip` past it; the findings when its entries are
/// refused.
fn commit_round(
    repo: &Repo,
    ws: &Workspace,
    (local, tip): (&mut Option<Oid>, &mut Option<Oid>),
    committed: &mut Vec<EntryInfo>,
    commits: &mut usize,
) -> Result<Option<Vec<Finding>>> {
    let _lock = ws.lock()?;
    match commit_pending(repo, ws, local.as_ref())? {
        Commit::Nothing => {}
        Commit::Refused(findings) => return Ok(Some(findings)),
        Commit::Made { commit, entries } => {
            *tip = Some(tip_after_commit(repo, &commit, tip, local)?);
            *local = Some(commit);
            committed.extend(entries);
            *commits += 1;
        }
    }
    Ok(None)
}

/// Step 2 of a round: fetches the remote branch and merges it into `tip` (every entry
/// kept; those put back are added to `restored`), answering the remote's tip, or the
/// remote's unsafe paths when it is refused. `theirs` becomes the remote's tip unless
/// this clone pushed it.
fn fetch_round(
    repo: &Repo,
    local: Option<&Oid>,
    tip: &mut Option<Oid>,
    our_pushes: &HashSet<Oid>,
    theirs: &mut Option<Oid>,
    restored: &mut Vec<Restored>,
) -> Result<std::result::Result<Option<Oid>, Vec<Finding>>> {
    let remote_tip = repo.git.fetch(&repo.remote, &repo.remote_branch)?;
    if let Some(r) = &remote_tip {
        if !our_pushes.contains(r) {
            *theirs = Some(r.clone());
            // Nothing of theirs is merged, let alone checked out, before it is
            // known to hold only regular files under the workspace.
            let unsafe_paths = unsafe_entries(repo, r)?;
            if !unsafe_paths.is_empty() {
                return Ok(Err(unsafe_paths));
            }
        }
        *tip = Some(merge_remote(repo, tip.as_ref(), local, r, restored)?);
    }
    Ok(Ok(remote_tip))
}

/// The answer when a side's entries are refused.
fn refused(repo: &Repo, by: RefusedBy, findings: Vec<Finding>) -> Outcome {
    Outcome::Refused {
        by,
        remote: repo.remote.clone(),
        remote_branch: repo.remote_branch.clone(),
        findings,
    }
}

/// The findings that break the chain.
fn breaks(findings: Vec<Finding>) -> Vec<Finding> {
    findings.into_iter().filter(|f| f.is_break()).collect()
}

/// What the work tree has to commit, when mem7 wrote nothing `local` lacks meanwhile
/// (`None`: it did, and the next round commits that too).
fn settled(repo: &Repo, ws: &Workspace, local: Option<&Oid>) -> Result<Option<Pending>> {
    let now = pending(repo, ws)?;
    if !now.deleted.is_empty()
        || tree_with(&repo.git, local, &now.paths)? != repo.git.tree_of(local)?
    {
        return Ok(None);
    }
    Ok(Some(now))
}

/// The error when the remote (or the memory files) kept moving past `MAX_ATTEMPTS`
/// rounds; `pushed` says whether this clone's entries reached the remote meanwhile.
fn gave_up(repo: &Repo, pushed: bool) -> Error {
    Error::input(
        format!(
            "gave up after {MAX_ATTEMPTS} attempts: {} kept moving while mem7 sync merged (others pushing), or the memory files kept changing",
            repo.upstream()
        ),
        if pushed {
            "this clone's entries reached the remote, but this clone was not moved to the result; run `mem7 sync` again"
        } else {
            "nothing was changed; run `mem7 sync` again"
        },
    )
}

/// The tip once `commit` is made on `local`: the commit, or the commit merged with a tip
/// that had moved beyond `local`.
fn tip_after_commit(
    repo: &Repo,
    commit: &Oid,
    tip: &Option<Oid>,
    local: &Option<Oid>,
) -> Result<Oid> {
    if tip == local {
        Ok(commit.clone())
    } else {
        let previous = tip.as_ref().expect("a tip beyond local");
        merge(
            repo,
            Some(commit),
            previous,
            "mem7 sync: merge entries written while syncing\n",
        )
    }
}

/// `tip` merged with the remote's `r`. Whatever the remote dropped (or the merge lost),
/// every entry this clone held and every entry the remote holds stays; those put back
/// are added to `restored`.
fn merge_remote(
    repo: &Repo,
    tip: Option<&Oid>,
    local: Option<&Oid>,
    r: &Oid,
    restored: &mut Vec<Restored>,
) -> Result<Oid> {
    let merged = merge(
        repo,
        tip,
        r,
        &format!("mem7 sync: merge {}\n", repo.upstream()),
    )?;
    let sources: Vec<&Oid> = local.into_iter().chain([r]).collect();
    let (kept, put_back) = keep_entries(repo, &sources, &merged)?;
    restored.extend(put_back);
    Ok(kept)
}

/// Makes the remote branch the local branch's upstream (after a first push).
fn set_upstream_branch(repo: &Repo) -> Result<()> {
    repo.git
        .config_set(&format!("branch.{}.remote", repo.branch), &repo.remote)?;
    repo.git.config_set(
        &format!("branch.{}.merge", repo.branch),
        &format!("refs/heads/{}", repo.remote_branch),
    )
}

/// Brings mem7's index up to date with what arrived, returning its warnings. The sync
/// itself is done by now: a failure here is a warning, and the next mem7 command catches
/// up again.
fn catch_up_index(ws: &Workspace, opts: &Options<'_>) -> Vec<String> {
    let mut warnings = Vec::new();
    match crate::engine::Engine::open(ws.root(), opts.key).and_then(|mut engine| {
        let mut found = engine.catch_up_report().warnings.clone();
        found.extend(engine.catch_up(opts.now)?.report.warnings);
        Ok(found)
    }) {
        Ok(found) => warnings.extend(found.iter().map(ToString::to_string)),
        Err(e) => warnings.push(format!(
            "the index was not brought up to date ({e}); the next mem7 command catches up"
        )),
    }
    warnings
}

/// What moved between this clone and the remote up to `t`: the entries received and
/// sent, those recorded ahead of this machine's clock, and changes outside memory/.
fn what_moved(
    report: &mut Report,
    repo: &Repo,
    now: TxTime,
    local: Option<&Oid>,
    t: &Oid,
    theirs: &Option<Oid>,
    sent_base: Option<Option<Oid>>,
) -> Result<()> {
    let received = entries_between(repo, local, t)?;
    let received_commits = match &theirs {
        Some(r) => repo.git.count_commits(r, local)?,
        None => 0,
    };
    let base = sent_base.unwrap_or_else(|| theirs.clone());
    let sent = entries_between(repo, base.as_ref(), t)?;
    let sent_commits = repo.git.count_commits(t, base.as_ref())?;
    let margin = AHEAD_MARGIN.as_micros() as i64;
    let mut seen = HashSet::new();
    for e in sent.iter().chain(&received) {
        if let Some(rec) = e.recorded
            && rec.micros() > now.micros().saturating_add(margin)
            && seen.insert((e.file.clone(), e.line))
        {
            report.ahead.push(Ahead {
                file: e.file.clone(),
                line: e.line,
                key: e.key.clone(),
                recorded: rec,
                ahead_seconds: (rec.micros() - now.micros()) / 1_000_000,
            });
        }
    }
    report
        .ahead
        .sort_by(|a, b| (&a.file, a.line).cmp(&(&b.file, b.line)));
    report.received = side(&received, received_commits);
    report.outside = outside_memory(repo, local, t)?;
    report.sent = side(&sent, sent_commits);
    Ok(())
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
