//! The repository around a workspace: finding it, its branch and remote, where the
//! workspace sits in it, which paths are mem7's own, and what differs from the last
//! commit (`Pending`), written as trees in git's object store.

use super::*;

/// The repository around the workspace, and where sync reads and writes.
pub(super) struct Repo {
    pub(super) git: Git,
    /// The workspace's directory inside the repository (`""` or `sub/dir/`).
    pub(super) prefix: String,
    pub(super) branch: String,
    pub(super) remote: String,
    pub(super) remote_branch: String,
    pub(super) has_upstream: bool,
}

impl Repo {
    pub(super) fn open(root: &Path, remote: Option<&str>) -> Result<Repo> {
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
    pub(super) fn memory_dir(&self) -> String {
        format!("{}{}", self.prefix, store::MEMORY_DIR)
    }

    /// A repository path as the workspace names it (`None` outside the workspace).
    pub(super) fn in_workspace<'p>(&self, path: &'p str) -> Option<&'p str> {
        path.strip_prefix(self.prefix.as_str())
    }

    pub(super) fn upstream(&self) -> String {
        format!("{}/{}", self.remote, self.remote_branch)
    }
}

/// Which of mem7's own files a workspace path is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Mem7File {
    /// `memory/YYYY-MM-DD.md`.
    Day,
    /// `memory/torn/*`: a torn tail set aside.
    Torn,
    /// A file `mem7 init` wrote.
    Scaffold,
}

pub(super) fn mem7_file(rel: &str) -> Option<Mem7File> {
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
pub(super) struct Pending {
    /// Repository paths to commit (they exist).
    pub(super) paths: Vec<String>,
    /// Memory files deleted from the work tree (repository paths).
    pub(super) deleted: Vec<String>,
}

pub(super) fn pending(repo: &Repo, ws: &Workspace) -> Result<Pending> {
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
pub(super) fn tree_with(git: &Git, base: Option<&Oid>, paths: &[String]) -> Result<Oid> {
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
