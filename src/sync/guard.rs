//! The remote is untrusted input (DESIGN §7): what sync checks before it merges a remote
//! commit (no link, submodule or other non-regular entry under the workspace), what it
//! repairs after (every entry either side held is still in the result), what it reports
//! (files outside the memory folder that the remote changed), and mem7's own merge
//! attributes for memory files, whatever `.gitattributes` the repository carries.

use super::*;

/// Git's modes for a symbolic link and a submodule (a "gitlink").
const MODE_LINK: &str = "120000";
const MODE_SUBMODULE: &str = "160000";

/// Entries under the workspace in `commit` that are not regular files or directories:
/// each as a finding naming the path, what it is, and the commit that last touched it.
pub(super) fn unsafe_entries(repo: &Repo, commit: &Oid) -> Result<Vec<Finding>> {
    let mut found: Vec<(String, String)> = Vec::new();
    // The folders that hold the workspace: one of them made a link would move it.
    let mut above = String::new();
    let parts: Vec<&str> = repo.prefix.split('/').filter(|p| !p.is_empty()).collect();
    let mut holders = Vec::new();
    for part in parts {
        above.push_str(part);
        holders.push(above.clone());
        above.push('/');
    }
    if !holders.is_empty() {
        let refs: Vec<&str> = holders.iter().map(String::as_str).collect();
        for (path, (mode, _)) in repo.git.ls_tree(commit, &refs)? {
            if mode != "040000" {
                found.push((path, mode));
            }
        }
    }
    for (mode, path) in repo.git.ls_tree_all(commit, &repo.prefix)? {
        if !mode.starts_with("100") {
            found.push((path, mode));
        }
    }
    found.sort();
    let mut out = Vec::new();
    for (path, mode) in found {
        let what = match mode.as_str() {
            MODE_LINK => "symbolic link",
            MODE_SUBMODULE => "submodule",
            _ => "special entry",
        };
        let by = repo
            .git
            .last_commit_touching(commit, &path)?
            .unwrap_or_else(|| commit.clone());
        let shown = repo.in_workspace(&path).unwrap_or(&path).to_string();
        out.push(Finding {
            file: shown.clone(),
            line: 1,
            key: String::new(),
            kind: if mode == MODE_SUBMODULE {
                crate::verify::FindingKind::Submodule
            } else {
                crate::verify::FindingKind::Link
            },
            message: format!(
                "{} of {} adds {shown} as a {what} (mode {mode}); mem7 never follows links or opens submodules under a workspace, since writes through them would land outside it",
                by.short(),
                repo.upstream()
            ),
            computed: None,
        });
    }
    Ok(out)
}

/// Entries a source commit held that a result lost.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Restored {
    /// Workspace-relative memory file.
    pub file: String,
    /// How many entries were put back.
    pub entries: usize,
    /// Their keys, sorted and distinct.
    pub keys: Vec<String>,
    /// The commit that dropped them (the newest commit of the result that the source
    /// lacks and that changed the file).
    pub dropped_by: String,
}

/// Makes sure `tip` holds every entry each of `sources` holds (by identity: an entry's
/// recorded hash, else its bytes' hash, so a sealed edit is not a loss). An entry a
/// source holds and `tip` lacks (its file cut short, deleted, or its newest entry
/// replaced by a forgery) is appended back to its file, byte for byte, in a commit on
/// top of `tip`. Returns the (possibly new) tip and what was put back.
pub(super) fn keep_entries(
    repo: &Repo,
    sources: &[&Oid],
    tip: &Oid,
) -> Result<(Oid, Vec<Restored>)> {
    let mut restored = Vec::new();
    // Each file's text in the result, as repaired so far.
    let mut repaired: Vec<(String, String)> = Vec::new();
    for source in sources {
        if *source == tip {
            continue;
        }
        let files: Vec<String> = repo
            .git
            .changed_files(source, tip, Some(&repo.memory_dir()))?
            .into_iter()
            .filter(|p| repo.in_workspace(p).and_then(mem7_file) == Some(Mem7File::Day))
            .collect();
        if files.is_empty() {
            continue;
        }
        let mut requests = Vec::new();
        for f in &files {
            requests.push(((*source).clone(), f.clone()));
            requests.push((tip.clone(), f.clone()));
        }
        let texts = repo.git.read_files(&requests)?;
        for (i, path) in files.iter().enumerate() {
            let Some(held) = texts[2 * i].as_deref() else {
                continue;
            };
            let slot = match repaired.iter().position(|(p, _)| p == path) {
                Some(at) => at,
                None => {
                    let now = texts[2 * i + 1].clone().unwrap_or_default();
                    repaired.push((path.clone(), now));
                    repaired.len() - 1
                }
            };
            let now = &repaired[slot].1;
            let (_, lost) = entry_diff(held, now);
            if lost.is_empty() {
                continue;
            }
            let mut text = now.clone();
            for e in &lost {
                crate::sync::entry_merge::append_entry(&mut text, &held[e.start..e.end]);
            }
            repaired[slot].1 = text;
            let keys: BTreeSet<&str> = lost.iter().map(|e| e.key.as_str()).collect();
            let dropped_by = repo
                .git
                .last_commit_between(tip, source, path)?
                .map_or_else(|| tip.to_string(), |c| c.to_string());
            restored.push(Restored {
                file: repo.in_workspace(path).unwrap_or(path).to_string(),
                entries: lost.len(),
                keys: keys.into_iter().map(str::to_string).collect(),
                dropped_by,
            });
        }
    }
    if restored.is_empty() {
        return Ok((tip.clone(), restored));
    }
    const HINT: &str = "check the free space of the temporary directory; nothing was changed";
    let scratch = tempfile::tempdir().map_err(|e| Error::io("<temp dir>", e))?;
    let g = repo.git.with_index(&scratch.path().join("index"));
    g.run(&["read-tree", tip.as_str()], HINT)?;
    for (path, text) in &repaired {
        let blob = g.run_input(
            &["hash-object", "-w", "--stdin"],
            Some(text.as_bytes()),
            HINT,
        )?;
        let info = format!("100644,{},{path}", blob.trim());
        g.run(&["update-index", "--add", "--cacheinfo", &info], HINT)?;
    }
    let tree = g.run_oid(&["write-tree"], HINT)?;
    let count: usize = restored.iter().map(|r| r.entries).sum();
    let message = format!(
        "mem7 sync: keep {count} {} that {} dropped\n\nMemory files are append-only: a sync never lets a merge or a fast-forward remove an\nentry either side held. To forget a fact, use `mem7 forget`; git history keeps every\nbyte that was ever pushed.\n",
        if count == 1 { "entry" } else { "entries" },
        repo.upstream()
    );
    let commit = repo.git.commit_tree(&tree, &[tip], &message)?;
    Ok((commit, restored))
}

/// Files outside the workspace's memory folder that differ between `from` and `to`
/// (what the remote changed besides memory: `.gitattributes`, a hooks folder, …).
pub(super) fn outside_memory(repo: &Repo, from: Option<&Oid>, to: &Oid) -> Result<Vec<String>> {
    let from = repo.git.tree_of(from)?;
    let memory = format!("{}/", repo.memory_dir());
    Ok(repo
        .git
        .changed_files(&from, to, None)?
        .into_iter()
        .filter(|p| !p.starts_with(&memory))
        .collect())
}

/// The lines mem7 keeps in the repository's `info/attributes`, which git reads before
/// (and over) any `.gitattributes` in the tree: memory files merge with mem7's driver
/// and are checked out byte for byte, whatever a remote's `.gitattributes` says.
fn attribute_lines(prefix: &str) -> String {
    let quote = |p: String| {
        if p.contains(|c: char| c.is_whitespace() || c == '"' || c == '\\') {
            format!("\"{}\"", p.replace('\\', "\\\\").replace('"', "\\\""))
        } else {
            p
        }
    };
    format!(
        "{MARK}\n{} merge=union text eol=lf -filter -ident -working-tree-encoding\n{} -text -merge -filter -ident -working-tree-encoding\n",
        quote(format!("/{prefix}memory/*.md")),
        quote(format!("/{prefix}memory/torn/*")),
    )
}

const MARK: &str = "# mem7: memory files merge entry by entry, whatever .gitattributes says (written by mem7 sync and mem7 setup-git)";

/// Writes mem7's attribute lines (`attribute_lines`) into `info/attributes` of the repository `git` (the
/// workspace at `prefix` in it) unless they are there. Returns whether it wrote.
pub fn ensure_attributes(git: &Git, prefix: &str) -> Result<bool> {
    let path = git.git_path("info/attributes")?;
    let lines = attribute_lines(prefix);
    let current = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(Error::io(&path, e)),
    };
    if current.contains(&lines) {
        return Ok(false);
    }
    // An older block of ours (another prefix) is replaced, the rest kept.
    let mut kept = String::new();
    let mut skip = 0;
    for line in current.lines() {
        if line == MARK {
            skip = 2;
            continue;
        }
        if skip > 0 {
            skip -= 1;
            continue;
        }
        kept.push_str(line);
        kept.push('\n');
    }
    kept.push_str(&lines);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    }
    std::fs::write(&path, kept).map_err(|e| Error::io(&path, e))?;
    Ok(true)
}
