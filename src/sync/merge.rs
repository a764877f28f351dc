//! Merging, checking and applying: the merge of the remote branch by mem7's entry-wise
//! driver in git's object store, the verify of the result before anything moves, the
//! work tree's check, and moving the clone (index, files, branch) to the result.

use super::*;

/// Merges `theirs` into `ours` (commit objects only): unchanged, a fast-forward, or a
/// merge commit made with the repository's merge drivers.
pub(super) fn merge(repo: &Repo, ours: Option<&Oid>, theirs: &Oid, message: &str) -> Result<Oid> {
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
pub(super) fn verify_tip(
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
pub(super) fn check_work_tree(
    repo: &Repo,
    local: Option<&Oid>,
    tip: &Oid,
    ours: &[String],
) -> Result<()> {
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
pub(super) fn apply(
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
pub(super) fn ensure_driver(repo: &Repo, exe: &Path) -> Result<bool> {
    if super::driver::is_mem7_driver(repo.git.config_get("merge.union.driver")?.as_deref()) {
        return Ok(false);
    }
    let driver = super::driver::driver_command(exe);
    repo.git.config_set(
        "merge.union.name",
        "mem7: entry-wise merge of memory files (union for other files)",
    )?;
    repo.git.config_set("merge.union.driver", &driver)?;
    Ok(true)
}
