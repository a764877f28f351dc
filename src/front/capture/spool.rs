//! The spool: captured writes a hook could not make (the writers' lock held by a long
//! import, an index that needs a rebuild, a broken `mem7.yaml`), kept as JSON lines in
//! `.mem7/spool/capture.jsonl` of the hook's workspace, appended with `O_APPEND` (one
//! `write` per line, so hooks running at once never interleave). The next hook that
//! can write, and `mem7 capture drain`, apply them in order; applying one twice
//! changes nothing, because every capture rule is a confirmation when its event was
//! seen already.
//!
//! A drainer claims the live file by renaming it to a name of its own (only one
//! rename wins); a claimed file left behind by a drainer that died is claimed again
//! once it is a minute old. The records are the writes after the rules and the
//! credential check ran: a spool never holds a payload, a file's content or a
//! command's output.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde_json::{Value, json};

use crate::capture::facts::{Rule, Write};
use crate::capture::{Client, Kind, TaskState};

/// The spool's folder in a workspace.
pub fn dir(workspace: &Path) -> PathBuf {
    workspace.join(crate::store::INDEX_DIR).join("spool")
}

/// The live spool file.
fn live(workspace: &Path) -> PathBuf {
    dir(workspace).join("capture.jsonl")
}

/// The spool stops growing at this size (a workspace broken for weeks): later writes
/// are dropped, each with a line in the log.
pub const MAX_BYTES: u64 = 8 << 20;

/// A claimed file older than this belongs to a drainer that died.
const ABANDONED: Duration = Duration::from_secs(60);

/// One spooled write and the client that saw it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    pub client: Client,
    pub write: Write,
}

/// Appends `records` to the spool of `workspace` (creating its folder); an error when
/// the spool is full or cannot be written.
pub fn append(workspace: &Path, records: &[Record]) -> std::io::Result<()> {
    if records.is_empty() {
        return Ok(());
    }
    let text: String = records.iter().map(|r| to_line(r) + "\n").collect();
    append_bounded(&live(workspace), &text, MAX_BYTES, "the spool")
}

/// Appends `text` (whole lines) to `path`, creating its folder, durably: one write with
/// `O_APPEND`, then `sync_data`. An error naming `what` when the file already holds more
/// than `max` bytes (a workspace broken for weeks: later lines are dropped, not kept).
pub(super) fn append_bounded(path: &Path, text: &str, max: u64, what: &str) -> std::io::Result<()> {
    if let Some(folder) = path.parent() {
        std::fs::create_dir_all(folder)?;
    }
    if std::fs::metadata(path).is_ok_and(|m| m.len() > max) {
        return Err(std::io::Error::other(format!(
            "{what} {} is full ({} MiB); run `mem7 capture drain`",
            path.display(),
            max >> 20
        )));
    }
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    f.write_all(text.as_bytes())?;
    f.sync_data()
}

/// How many records wait in the spool of `workspace`, and its size in bytes.
pub fn waiting(workspace: &Path) -> (usize, u64) {
    let mut count = 0;
    let mut bytes = 0;
    for path in files(workspace) {
        if let Ok(text) = std::fs::read_to_string(&path) {
            count += text.lines().filter(|l| !l.trim().is_empty()).count();
            bytes += text.len() as u64;
        }
    }
    (count, bytes)
}

fn files(workspace: &Path) -> Vec<PathBuf> {
    jsonl_in(&dir(workspace))
}

/// The `.jsonl` files of `dir`, in name order (none when it does not exist).
pub(super) fn jsonl_in(dir: &Path) -> Vec<PathBuf> {
    let Ok(read) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = read
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    files
}

/// The spool files this process now owns: the live one, and claimed ones abandoned by
/// a drainer that died. Each was renamed to a name of this process's.
pub fn claim(workspace: &Path) -> Vec<PathBuf> {
    claim_in(&dir(workspace), "capture.jsonl", ABANDONED)
}

/// Claims the files of `dir` this process may drain: the live one (`live`) and any a
/// drainer left more than `abandoned` ago, each renamed to a name of this process's, so
/// one drainer has each (a rename is atomic: two drainers never both win one file).
pub(super) fn claim_in(dir: &Path, live: &str, abandoned: Duration) -> Vec<PathBuf> {
    let mut claimed = Vec::new();
    let stamp = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    for (n, path) in jsonl_in(dir).into_iter().enumerate() {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let left = name.starts_with("draining-")
            && std::fs::metadata(&path)
                .and_then(|m| m.modified())
                .is_ok_and(|t| t.elapsed().is_ok_and(|age| age > abandoned));
        if name != live && !left {
            continue;
        }
        let mine = dir.join(format!("draining-{}-{stamp}-{n}.jsonl", std::process::id()));
        if std::fs::rename(&path, &mine).is_ok() {
            claimed.push(mine);
        }
    }
    claimed
}

/// The records of a claimed file, in order; lines that do not read are skipped (and
/// counted).
pub fn read(path: &Path) -> (Vec<Record>, usize) {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let mut bad = 0;
    let mut records = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        match serde_json::from_str::<Value>(line)
            .ok()
            .as_ref()
            .and_then(from_value)
        {
            Some(r) => records.push(r),
            None => bad += 1,
        }
    }
    (records, bad)
}

fn to_line(r: &Record) -> String {
    let w = &r.write;
    let rule = match &w.rule {
        Rule::Once(value) => json!({ "once": value }),
        Rule::State { value, after } => json!({ "state": value, "after": after }),
        Rule::Grow { title, items } => json!({ "grow": title, "items": items }),
        Rule::End { base, end } => json!({ "end": end, "base": base }),
        Rule::Task {
            state,
            agent,
            description,
            summary,
        } => json!({
            "task": match state { TaskState::Running => "running", TaskState::Done => "done", TaskState::Failed => "failed" },
            "agent": agent, "description": description, "summary": summary,
        }),
    };
    json!({
        "client": r.client.as_str(),
        "kind": w.kind.as_str(),
        "key": w.key,
        "tags": w.tags,
        "at": w.at,
        "rule": rule,
    })
    .to_string()
}

fn from_value(v: &Value) -> Option<Record> {
    let s = |v: &Value, f: &str| v.get(f).and_then(Value::as_str).map(str::to_string);
    let client = match v.get("client")?.as_str()? {
        "claude-code" => Client::ClaudeCode,
        "codex" => Client::Codex,
        "git" => Client::Git,
        _ => return None,
    };
    let r = v.get("rule")?;
    let rule = if let Some(value) = s(r, "once") {
        Rule::Once(value)
    } else if let Some(value) = s(r, "state") {
        Rule::State {
            value,
            after: s(r, "after"),
        }
    } else if let Some(title) = s(r, "grow") {
        Rule::Grow {
            title,
            items: r
                .get("items")?
                .as_array()?
                .iter()
                .filter_map(|i| i.as_str().map(str::to_string))
                .collect(),
        }
    } else if let Some(end) = s(r, "end") {
        Rule::End {
            base: s(r, "base")?,
            end,
        }
    } else if let Some(state) = s(r, "task") {
        Rule::Task {
            state: match state.as_str() {
                "running" => TaskState::Running,
                "done" => TaskState::Done,
                "failed" => TaskState::Failed,
                _ => return None,
            },
            agent: s(r, "agent"),
            description: s(r, "description"),
            summary: s(r, "summary"),
        }
    } else {
        return None;
    };
    Some(Record {
        client,
        write: Write {
            kind: Kind::parse(v.get("kind")?.as_str()?)?,
            key: s(v, "key")?,
            tags: v
                .get("tags")?
                .as_array()?
                .iter()
                .filter_map(|t| t.as_str().map(str::to_string))
                .collect(),
            at: v.get("at")?.as_i64()?,
            rule,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_through_lines() {
        let rules = [
            Rule::Once("c".into()),
            Rule::State {
                value: "v".into(),
                after: Some("failing:".into()),
            },
            Rule::State {
                value: "v".into(),
                after: None,
            },
            Rule::Grow {
                title: "t".into(),
                items: vec!["a".into(), "b".into()],
            },
            Rule::End {
                base: "b".into(),
                end: "; ended".into(),
            },
            Rule::Task {
                state: TaskState::Running,
                agent: None,
                description: Some("d".into()),
                summary: None,
            },
        ];
        for rule in rules {
            let r = Record {
                client: Client::Codex,
                write: Write {
                    kind: Kind::Files,
                    key: "local:k".into(),
                    tags: vec!["captured".into()],
                    at: 42,
                    rule,
                },
            };
            let line = to_line(&r);
            let back = from_value(&serde_json::from_str(&line).unwrap());
            assert_eq!(back.as_ref(), Some(&r), "{line}");
        }
    }

    #[test]
    fn append_claim_and_read() {
        let ws = tempfile::tempdir().unwrap();
        let r = Record {
            client: Client::Git,
            write: Write {
                kind: Kind::Commits,
                key: "git:commit:abc".into(),
                tags: vec![],
                at: 1,
                rule: Rule::Once("x".into()),
            },
        };
        append(ws.path(), &[r.clone(), r.clone()]).unwrap();
        append(ws.path(), std::slice::from_ref(&r)).unwrap();
        assert_eq!(waiting(ws.path()).0, 3);
        let claimed = claim(ws.path());
        assert_eq!(claimed.len(), 1);
        // A second drainer finds nothing to claim: the first one's file is fresh.
        assert!(claim(ws.path()).is_empty());
        let (records, bad) = read(&claimed[0]);
        assert_eq!((records.len(), bad), (3, 0));
    }
}
