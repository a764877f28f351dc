//! The remote is untrusted input (docs/sync.md): what sync checks before it merges a remote
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
    let mut index_paths = Vec::new();
    for (mode, path) in repo.git.ls_tree_all(commit, &repo.prefix)? {
        if !mode.starts_with("100") {
            found.push((path, mode));
        } else if repo
            .in_workspace(&path)
            .is_some_and(|rel| rel.starts_with(".mem7/"))
        {
            index_paths.push(path);
        }
    }
    found.sort();
    let mut out = untrusted(repo, commit, &holders, &index_paths)?;
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

/// What a remote's tree says that would change this checkout beyond its memory: the
/// index folder `.mem7/` committed (its `local/` scope would read as this checkout's own
/// rules), and `.gitattributes` lines above or in the workspace that change the bytes
/// of files in a checkout (`working-tree-encoding`, `filter`, `ident`): a fresh clone
/// would read its memory through them (as UTF-16, say: no entries at all). mem7's own
/// `info/attributes` overrides them in a clone that syncs, but not in a fresh one.
fn untrusted(
    repo: &Repo,
    commit: &Oid,
    holders: &[String],
    index_paths: &[String],
) -> Result<Vec<Finding>> {
    let mut out = Vec::new();
    let by = |path: &str| -> Result<String> {
        Ok(repo
            .git
            .last_commit_touching(commit, path)?
            .unwrap_or_else(|| commit.clone())
            .short()
            .to_string())
    };
    if let Some(first) = index_paths.first() {
        out.push(Finding {
            file: repo.in_workspace(first).unwrap_or(first).to_string(),
            line: 1,
            key: String::new(),
            kind: crate::verify::FindingKind::Untrusted,
            message: format!(
                "{} of {} commits the index folder .mem7/ ({} file{}); it is this checkout's own (git ignores it) and never comes from a remote: `git rm -r --cached .mem7` there",
                by(first)?,
                repo.upstream(),
                index_paths.len(),
                if index_paths.len() == 1 { "" } else { "s" }
            ),
            computed: None,
        });
    }
    let mut attributes = vec![".gitattributes".to_string()];
    attributes.extend(holders.iter().map(|h| format!("{h}/.gitattributes")));
    attributes.push(format!("{}memory/.gitattributes", repo.prefix));
    let requests: Vec<(Oid, String)> = attributes
        .iter()
        .map(|p| (commit.clone(), p.clone()))
        .collect();
    for (path, text) in attributes.iter().zip(repo.git.read_files(&requests)?) {
        let Some(text) = text else { continue };
        // A memory file, as seen from the folder of this `.gitattributes`.
        let dir = path.strip_suffix(".gitattributes").unwrap_or("");
        let memory = format!("{}memory/2026-01-01.md", repo.prefix);
        let Some(seen) = memory.strip_prefix(dir) else {
            continue;
        };
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            let mut words = line.split_whitespace();
            let Some(pattern) = words.next().filter(|p| !p.starts_with('#')) else {
                continue;
            };
            if !attribute_pattern_matches(pattern, seen) {
                continue;
            }
            let bad = words.find(|t| {
                t.starts_with("working-tree-encoding=")
                    || t.starts_with("filter=")
                    || *t == "filter"
                    || *t == "ident"
            });
            if let Some(attr) = bad {
                out.push(Finding {
                    file: path.clone(),
                    line: n as u32 + 1,
                    key: String::new(),
                    kind: crate::verify::FindingKind::Untrusted,
                    message: format!(
                        "{} of {} sets `{attr}` in {path}, which would change the bytes of memory files in a fresh checkout; mem7 accepts no attribute that rewrites memory: remove that line there",
                        by(path)?,
                        repo.upstream()
                    ),
                    computed: None,
                });
            }
        }
    }
    Ok(out)
}

/// Whether a `.gitattributes` pattern matches `path` (relative to that file's folder),
/// as git reads one: a pattern without a `/` matches the name at any depth, one with a
/// `/` the path from that folder; `*` and `?` stay within a name, `**` crosses folders,
/// and a `[…]` class is taken as any one character (so this errs towards a match).
fn attribute_pattern_matches(pattern: &str, path: &str) -> bool {
    fn glob(p: &[u8], s: &[u8]) -> bool {
        match p.first() {
            None => s.is_empty(),
            Some(b'*') if p.get(1) == Some(&b'*') => {
                let rest = p[2..].strip_prefix(b"/").unwrap_or(&p[2..]);
                (0..=s.len()).any(|i| glob(rest, &s[i..]))
            }
            Some(b'*') => (0..=s.len())
                .take_while(|&i| i == 0 || s[i - 1] != b'/')
                .any(|i| glob(&p[1..], &s[i..])),
            Some(b'?') => s.first().is_some_and(|&c| c != b'/') && glob(&p[1..], &s[1..]),
            Some(b'[') => match p.iter().position(|&c| c == b']') {
                Some(end) => s.first().is_some_and(|&c| c != b'/') && glob(&p[end + 1..], &s[1..]),
                None => s.first() == Some(&b'[') && glob(&p[1..], &s[1..]),
            },
            Some(&c) => s.first() == Some(&c) && glob(&p[1..], &s[1..]),
        }
    }
    let pattern = pattern.strip_prefix('!').unwrap_or(pattern);
    let pattern = pattern.strip_suffix('/').unwrap_or(pattern);
    if pattern.contains('/') {
        glob(pattern.trim_start_matches('/').as_bytes(), path.as_bytes())
    } else {
        let name = path.rsplit('/').next().unwrap_or(path);
        glob(pattern.as_bytes(), name.as_bytes())
    }
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

#[cfg(test)]
mod tests {
    use super::attribute_pattern_matches as m;

    #[test]
    fn attribute_patterns_match_as_git_reads_them() {
        let f = "ws/memory/2026-01-01.md";
        for p in [
            "*",
            "*.md",
            "ws/memory/*.md",
            "/ws/**",
            "**/*.md",
            "ws/**/*.md",
            "2026-*.md",
            "[0-9]*.md",
        ] {
            assert!(m(p, f), "{p}");
        }
        for p in [
            "*.png",
            "memory/*.md",
            "ws/*.md",
            "docs/**",
            "/ws/memory/*.txt",
        ] {
            assert!(!m(p, f), "{p}");
        }
    }
}
