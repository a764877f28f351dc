//! Entries between commits: what one version of a file has that another lacks, the
//! entries each side of a sync brings (`Side`), and the commit of the workspace's new
//! entries, refusing hand-written credentials and removed entries.

use super::*;

/// An entry found in one version of a file and not in another.
#[derive(Clone, Debug)]
pub(super) struct EntryInfo {
    /// Workspace-relative file.
    pub(super) file: String,
    pub(super) line: u32,
    pub(super) key: String,
    pub(super) recorded: Option<TxTime>,
    pub(super) secret_allowed: bool,
}

pub(super) fn entry_info(file: &str, e: &ParsedEntry) -> EntryInfo {
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
    }
}

/// An entry's identity across edits: its recorded hash, else its bytes' hash.
pub(super) fn identity(e: &ParsedEntry) -> ChainHash {
    e.claimed.unwrap_or(e.computed)
}

/// The entries of `new` that `old` lacks (by their bytes), and the entries of `old`
/// that `new` lost (by identity, so an edited entry is not counted as lost).
pub(super) fn entry_diff(old: &str, new: &str) -> (Vec<ParsedEntry>, Vec<ParsedEntry>) {
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
pub(super) fn entries_between(repo: &Repo, from: Option<&Oid>, to: &Oid) -> Result<Vec<EntryInfo>> {
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

pub(super) fn side(entries: &[EntryInfo], commits: usize) -> Side {
    let keys: BTreeSet<&str> = entries.iter().map(|e| e.key.as_str()).collect();
    Side {
        commits,
        entries: entries.len(),
        keys: keys.into_iter().map(str::to_string).collect(),
    }
}

/// What the commit step found.
pub(super) enum Commit {
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
pub(super) fn commit_pending(repo: &Repo, ws: &Workspace, local: Option<&Oid>) -> Result<Commit> {
    let pending = pending(repo, ws)?;
    let base_tree = repo.git.tree_of(local)?;
    let mut findings = deleted_findings(repo, &pending, &base_tree);
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
                kind: crate::verify::FindingKind::FileDeleted,
                message: format!(
                    "this entry (line {} in the last commit) is no longer in the file; memory files are append-only: restore it with `git checkout -- {rel}` and append instead",
                    e.line
                ),
                computed: None,
            });
        }
        for e in &added {
            let info = entry_info(rel, e);
            // Every byte a person wrote into the entry (an unknown field too), unless
            // its envelope says the writer allowed a credential (`--allow-secret`).
            let found = (!info.secret_allowed)
                .then(|| secret::find(&now[e.start..e.end]))
                .flatten()
                .map(|f| format!("the entry looks like a credential ({})", f.kind));
            if let Some(what) = found {
                secrets.push(format!("{rel}:{}: `{}`: {what}", info.line, info.key));
            }
            entries.push(info);
        }
        secrets_between_entries(rel, &now, old.as_deref().unwrap_or(""), &mut secrets);
    }
    secrets_in_other_files(repo, ws, &pending.paths, &mut secrets)?;
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

/// The findings of memory files deleted from the work tree since the last commit: their
/// entries are gone.
fn deleted_findings(repo: &Repo, pending: &Pending, base_tree: &Oid) -> Vec<Finding> {
    let mut findings = Vec::new();
    // Files deleted since the last commit: their entries are gone.
    let deleted: Vec<&String> = pending
        .deleted
        .iter()
        .filter(|p| {
            repo.git
                .ls_tree(base_tree, &[p.as_str()])
                .is_ok_and(|m| !m.is_empty())
        })
        .collect();
    for p in deleted {
        let rel = repo.in_workspace(p).unwrap_or(p);
        findings.push(Finding {
            file: rel.to_string(),
            line: 0,
            key: String::new(),
            kind: crate::verify::FindingKind::FileDeleted,
            message: format!(
                "the file was deleted, with every entry committed in it; memory files are append-only: restore it with `git checkout -- {rel}`"
            ),
            computed: None,
        });
    }
    findings
}

/// Text between entries of day file `rel` (a note by hand) that the last commit (`old`)
/// did not have and that looks like a credential.
fn secrets_between_entries(rel: &str, now: &str, old: &str, secrets: &mut Vec<String>) {
    // Text between entries (a note by hand) that the last commit did not have.
    let parsed = parse_file(now, &ChainKey::Plain);
    for (at, run) in crate::sync::entry_merge::outside_entries(now, &parsed.entries) {
        let line = now[..at].matches('\n').count() + 1;
        if !old.contains(run.trim()) && secret::find(run).is_some() {
            secrets.push(format!(
                "{rel}:{line}: text between entries looks like a credential"
            ));
        }
    }
}

/// Credentials in the torn tails and the settings file, which are pushed too.
fn secrets_in_other_files(
    repo: &Repo,
    ws: &Workspace,
    paths: &[String],
    secrets: &mut Vec<String>,
) -> Result<()> {
    // Torn tails and the settings file are pushed too: they must not carry secrets.
    for p in paths {
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
    Ok(())
}

pub(super) fn commit_message(entries: &[EntryInfo]) -> String {
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
