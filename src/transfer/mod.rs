//! Memory in and out: `mem7 export` (the snapshot a `list` answers, or every entry in
//! the fold's order), the exported ops `mem7 import` reads back, and `mem7 import-notes`
//! (Claude Code's auto memory and folders of frontmatter notes).
//!
//! The JSON Lines records here are wire types, converted by hand from the domain types.

pub mod export;
pub mod import;
pub mod note_files;

use serde::Deserialize;

use crate::core::time::{TxTime, ValidTime};
use crate::engine::{ImportOp, ImportRecord, StoreRequest};
use crate::error::{Error, Result};

/// One import record that names its `op` (what `mem7 export --history` writes).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OpLine {
    op: String,
    key: Option<String>,
    entity: Option<String>,
    value: Option<String>,
    valid_from: Option<String>,
    valid_to: Option<String>,
    tags: Option<Vec<String>>,
    agent: Option<String>,
    recorded: Option<String>,
    /// A store's tier (`asserted`, `inferred`), kept within `trust.agents`.
    tier: Option<String>,
    /// A forget of one value: the hash of the entry that wrote it.
    entry: Option<String>,
    /// A store's entry hash where it was exported from.
    hash: Option<String>,
}

/// A record's `tier`, read as every import record reads it; a bad one is `bad`'s error.
pub(crate) fn record_tier(
    tier: Option<&str>,
    bad: &dyn Fn(String) -> Error,
) -> Result<Option<crate::core::Tier>> {
    match tier {
        None => Ok(None),
        Some(t) => crate::core::Tier::parse(t)
            .map(Some)
            .ok_or_else(|| bad(format!("tier `{t}` is not `asserted` or `inferred`"))),
    }
}

/// Whether an import line is a JSON object with an `op` field (else it is read as a
/// store record, exactly as before ops existed).
/// A record's `valid_from` and `valid_to`, read as every import record reads them; a bad
/// one is `bad`'s error (which names the line).
pub(crate) fn record_period(
    valid_from: Option<&str>,
    valid_to: Option<&str>,
    bad: &dyn Fn(String) -> Error,
) -> Result<(Option<ValidTime>, Option<crate::core::ValidEnd>)> {
    let from = valid_from
        .map(ValidTime::parse)
        .transpose()
        .map_err(|e| bad(format!("valid_from: {e}")))?;
    let to = valid_to
        .map(|t| crate::front::request::valid_end("valid_to", t))
        .transpose()
        .map_err(|e| bad(e.to_string()))?;
    Ok((from, to))
}

pub fn has_op(line: &str) -> bool {
    line.contains("\"op\"")
        && matches!(
            serde_json::from_str::<serde_json::Value>(line),
            Ok(serde_json::Value::Object(m)) if m.contains_key("op")
        )
}

/// Parses an import line with an `op` (`store`, `forget`, `forget_entity`,
/// `forget_tagged`); `agent` gives the default agent name.
pub fn op_record(
    line: &str,
    n: usize,
    agent: &dyn Fn(Option<&str>) -> String,
    allow_secret: bool,
) -> Result<ImportRecord> {
    const HINT: &str = "a record with `op` is one of {\"op\": \"store\", \"key\", \"value\", …}, {\"op\": \"forget\", \"key\"}, {\"op\": \"forget_entity\", \"entity\"}, {\"op\": \"forget_tagged\", \"tags\"} (see docs/cli.md, mem7 import)";
    let bad = |problem: String| Error::input(format!("line {n}: {problem}"), HINT);
    let rec: OpLine = crate::front::request::json_line(line, n, HINT)?;
    let recorded = rec
        .recorded
        .as_deref()
        .map(TxTime::parse)
        .transpose()
        .map_err(|e| bad(format!("recorded: {e}")))?;
    let (op, key, value, valid_from, valid_to, tags) = match rec.op.as_str() {
        "store" => {
            refuse(
                &rec.op,
                &[
                    ("entity", rec.entity.is_some()),
                    ("entry", rec.entry.is_some()),
                ],
                &bad,
            )?;
            let (valid_from, valid_to) =
                record_period(rec.valid_from.as_deref(), rec.valid_to.as_deref(), &bad)?;
            (
                ImportOp::Store,
                need(&rec.op, "key", &rec.key, &bad)?,
                need(&rec.op, "value", &rec.value, &bad)?,
                valid_from,
                valid_to,
                rec.tags.clone().unwrap_or_default(),
            )
        }
        "forget" | "forget_entity" | "forget_tagged" => {
            let (op, key, tags) = forget_fields(&rec, &bad)?;
            (op, key, String::new(), None, None, tags)
        }
        other => {
            return Err(bad(format!(
                "unknown op `{other}` (expected store, forget, forget_entity or forget_tagged)"
            )));
        }
    };
    Ok(ImportRecord {
        op,
        req: StoreRequest {
            key,
            value,
            valid_from,
            valid_to,
            tags,
            agent: agent(rec.agent.as_deref()),
            allow_secret,
            tier: record_tier(rec.tier.as_deref(), &bad)?,
            // A record's words are not the person's: the engine records it within the
            // ceiling of the workspace it goes into.
            by: crate::core::Writer::Model,
        },
        recorded,
        line: n,
        keep_ties: true,
        entry: rec.entry.clone(),
        origin: rec.hash.clone(),
    })
}

/// Refuses the first of `fields` that is present: it has no meaning for op `op`.
fn refuse(op: &str, fields: &[(&str, bool)], bad: &dyn Fn(String) -> Error) -> Result<()> {
    match fields.iter().find(|(_, present)| *present) {
        Some((name, _)) => Err(bad(format!("`{name}` has no meaning for op `{op}`"))),
        None => Ok(()),
    }
}

/// The field `name` that op `op` needs.
fn need(op: &str, name: &str, v: &Option<String>, bad: &dyn Fn(String) -> Error) -> Result<String> {
    v.clone()
        .ok_or_else(|| bad(format!("op `{op}` needs `{name}`")))
}

/// A forget record's op, key (or entity) and tags, refusing the fields a forget has no
/// use for.
fn forget_fields(
    rec: &OpLine,
    bad: &dyn Fn(String) -> Error,
) -> Result<(ImportOp, String, Vec<String>)> {
    refuse(
        &rec.op,
        &[
            ("tier", rec.tier.is_some()),
            ("hash", rec.hash.is_some()),
            ("value", rec.value.is_some()),
            ("valid_from", rec.valid_from.is_some()),
            ("valid_to", rec.valid_to.is_some()),
        ],
        bad,
    )?;
    match rec.op.as_str() {
        "forget" => {
            refuse(
                &rec.op,
                &[
                    ("entity", rec.entity.is_some()),
                    ("tags", rec.tags.is_some()),
                ],
                bad,
            )?;
            Ok((
                ImportOp::Forget,
                need(&rec.op, "key", &rec.key, bad)?,
                Vec::new(),
            ))
        }
        "forget_entity" => {
            refuse(
                &rec.op,
                &[
                    ("key", rec.key.is_some()),
                    ("tags", rec.tags.is_some()),
                    ("entry", rec.entry.is_some()),
                ],
                bad,
            )?;
            Ok((
                ImportOp::ForgetEntity,
                need(&rec.op, "entity", &rec.entity, bad)?,
                Vec::new(),
            ))
        }
        _ => {
            refuse(
                &rec.op,
                &[
                    ("key", rec.key.is_some()),
                    ("entity", rec.entity.is_some()),
                    ("entry", rec.entry.is_some()),
                ],
                bad,
            )?;
            let tags = rec
                .tags
                .clone()
                .ok_or_else(|| bad("op `forget_tagged` needs `tags`".into()))?;
            Ok((ImportOp::ForgetTagged, String::new(), tags))
        }
    }
}

/// Writes `FILE` atomically (a temporary file in the same directory, fsync, rename), or
/// standard output for `None`. `write` streams into the buffered writer it is given.
pub fn write_output(
    path: Option<&std::path::Path>,
    stdout: &mut dyn std::io::Write,
    write: &mut dyn FnMut(&mut dyn std::io::Write) -> Result<()>,
) -> Result<()> {
    use std::io::Write;
    match path {
        None => {
            let mut buf = std::io::BufWriter::with_capacity(1 << 16, stdout);
            write(&mut buf)?;
            buf.flush().map_err(|e| Error::io("<stdout>", e))
        }
        Some(path) => {
            let dir = match path.parent() {
                Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
                _ => std::path::PathBuf::from("."),
            };
            let tmp =
                tempfile::NamedTempFile::new_in(&dir).map_err(|e| Error::named_file(&dir, e))?;
            let mut buf = std::io::BufWriter::with_capacity(1 << 16, tmp);
            write(&mut buf)?;
            let tmp = buf
                .into_inner()
                .map_err(|e| Error::io(path, e.into_error()))?;
            tmp.as_file().sync_all().map_err(|e| Error::io(path, e))?;
            tmp.persist(path)
                .map_err(|e| Error::named_file(path, e.error))?;
            Ok(())
        }
    }
}
