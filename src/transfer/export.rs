//! `mem7 export`: the snapshot a `list` answers, or (`--history`) every entry in the
//! fold's order, as JSON Lines or CSV, written as it is read.

use std::io::Write;

use serde::Serialize;

use crate::core::level::Level;
use crate::core::time::TxTime;
use crate::core::{EntryOp, Event, Op, ValidEnd, Version, event_order};
use crate::engine::Scoped;
use crate::engine::{Clocks, Engine};
use crate::error::{Error, Result};
use crate::store::Workspace;

/// The output format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// One JSON object per line.
    Json,
    /// RFC 4180: a header, then one row per record, CRLF line ends.
    Csv,
}

/// The columns of the snapshot in CSV: the fields of `list --json`, in its order.
const SNAPSHOT_COLUMNS: [&str; 11] = [
    "key",
    "value",
    "valid_from",
    "valid_to",
    "tx_from",
    "tx_to",
    "tags",
    "agent",
    "file",
    "line",
    "hash",
];

/// The columns of `--history` in CSV.
const HISTORY_COLUMNS: [&str; 9] = [
    "op",
    "key",
    "entity",
    "value",
    "valid_from",
    "valid_to",
    "tags",
    "agent",
    "recorded",
];

fn out_err(e: std::io::Error) -> Error {
    Error::io("<output>", e)
}

/// Writes one CSV row (RFC 4180: a field holding `,`, `"`, CR or LF is quoted, with
/// its quotes doubled).
pub fn csv_row(out: &mut dyn Write, fields: &[&str]) -> std::io::Result<()> {
    for (i, f) in fields.iter().enumerate() {
        if i > 0 {
            out.write_all(b",")?;
        }
        if f.contains([',', '"', '\r', '\n']) {
            out.write_all(b"\"")?;
            out.write_all(f.replace('"', "\"\"").as_bytes())?;
            out.write_all(b"\"")?;
        } else {
            out.write_all(f.as_bytes())?;
        }
    }
    out.write_all(b"\r\n")
}

/// Tags in one CSV field: joined with `;` (the key alphabet has no `;`).
fn tags_field(tags: &[String]) -> String {
    tags.join(";")
}

/// The snapshot: every version valid at `valid_at` as believed at `as_of`, one per line,
/// sorted by key (the objects of `list --json`). Returns how many were written.
pub fn snapshot(
    engine: &Engine,
    at: Clocks,
    scope: Option<Level>,
    format: Format,
    out: &mut dyn Write,
) -> Result<usize> {
    let mut n = 0;
    if format == Format::Csv {
        csv_row(out, &SNAPSHOT_COLUMNS).map_err(out_err)?;
    }
    engine.each_version(at, &mut |v: Version| {
        n += 1;
        match format {
            Format::Json => {
                let line = match scope {
                    Some(level) => crate::front::wire::scoped_json_line(&Scoped {
                        level,
                        version: v,
                        shadowed: false,
                    }),
                    None => crate::front::wire::version_json_line(&v),
                };
                out.write_all(line.as_bytes()).map_err(out_err)
            }
            Format::Csv => {
                let finite = |t: Option<String>| t.unwrap_or_default();
                csv_row(
                    out,
                    &[
                        &v.key,
                        &v.value,
                        &v.valid_from.to_rfc3339(),
                        &finite(v.valid_to.finite().map(|t| t.to_rfc3339())),
                        &v.tx_from.to_rfc3339(),
                        &finite(v.tx_to.finite().map(|t| t.to_rfc3339())),
                        &tags_field(&v.tags),
                        &v.agent,
                        &v.source.file,
                        &v.source.line.to_string(),
                        &v.source.hash,
                    ],
                )
                .map_err(out_err)
            }
        }
    })?;
    Ok(n)
}

/// One exported entry (the wire type of `--history`).
#[derive(Serialize)]
struct EntryLine<'a> {
    op: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    key: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    entity: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    value: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    valid_from: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    valid_to: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tags: Option<&'a [String]>,
    agent: &'a str,
    recorded: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    tier: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    entry: Option<&'a str>,
    /// A store's entry hash here, which a later forget of that one value names.
    #[serde(skip_serializing_if = "Option::is_none")]
    hash: Option<&'a str>,
}

/// What `--history` counted.
#[derive(Debug, Default)]
pub struct HistoryStats {
    pub entries: usize,
    /// Seal entries, which change no memory and are not exported.
    pub seals: usize,
    /// Entries the fold ignores (unreadable, or a store with an empty period), and so
    /// does the export.
    pub skipped: usize,
    /// Whether the files were out of order (an entry in another day's file), so the
    /// whole history was sorted in memory.
    pub sorted_in_memory: bool,
}

/// An entry as the fold reads it, with the agent its envelope names.
struct Item {
    event: Event,
    agent: String,
}

fn items(ws: &Workspace, name: &str, stats: &mut HistoryStats) -> Result<Vec<Item>> {
    let parsed = crate::engine::load_file(ws, name)?;
    let mut out = Vec::with_capacity(parsed.entries.len());
    for entry in &parsed.entries {
        match entry.to_event(name) {
            Ok(Some(event)) => {
                if let Op::Store(s) = &event.op
                    && let ValidEnd::At(to) = s.valid_to
                    && to <= s.valid_from
                {
                    stats.skipped += 1;
                    continue;
                }
                let agent = crate::engine::entry_agent(entry, &event);
                out.push(Item { event, agent });
            }
            Ok(None) => stats.seals += 1,
            Err(_) => stats.skipped += 1,
        }
    }
    out.sort_by(|a, b| event_order(&a.event, &b.event));
    Ok(out)
}

/// Where an entry falls in the fold's order: (`recorded`, content hash).
type Place = (TxTime, [u8; 32]);

/// Every entry in the fold's order (`recorded`, then the entry's own hash): day files
/// are read one at a time, and only when an entry sits in a file that would put it out
/// of order is the whole history sorted in memory instead (as a rebuild does).
pub fn history(ws: &Workspace, format: Format, out: &mut dyn Write) -> Result<HistoryStats> {
    use rayon::prelude::*;
    let scan = ws.scan()?;
    // First pass, over the files in parallel: are they in order? (Each file's entries
    // are sorted on their own; only the first and last of each are kept.)
    let bounds: Vec<Option<(Place, Place)>> = scan
        .par_iter()
        .map(|file| {
            let items = items(ws, &file.name, &mut HistoryStats::default())?;
            let at = |i: &Item| (i.event.tx, i.event.content.0);
            Ok(items.first().map(at).zip(items.last().map(at)))
        })
        .collect::<Result<_>>()?;
    let mut stats = HistoryStats::default();
    let mut last = None;
    let mut in_order = true;
    for (first, end) in bounds.into_iter().flatten() {
        if last.is_some_and(|l| l >= first) {
            in_order = false;
            break;
        }
        last = Some(end);
    }
    if format == Format::Csv {
        csv_row(out, &HISTORY_COLUMNS).map_err(out_err)?;
    }
    if in_order {
        for file in &scan {
            for item in items(ws, &file.name, &mut stats)? {
                write_item(&item, format, out)?;
                stats.entries += 1;
            }
        }
    } else {
        stats.sorted_in_memory = true;
        let mut all = Vec::new();
        for file in &scan {
            all.extend(items(ws, &file.name, &mut stats)?);
        }
        all.sort_by(|a, b| event_order(&a.event, &b.event));
        for item in &all {
            write_item(item, format, out)?;
            stats.entries += 1;
        }
    }
    Ok(stats)
}

fn end_text(end: ValidEnd) -> Option<String> {
    match end {
        ValidEnd::Open => None,
        ValidEnd::Infinity => Some("infinity".into()),
        ValidEnd::At(t) => Some(t.to_rfc3339()),
    }
}

fn write_item(item: &Item, format: Format, out: &mut dyn Write) -> Result<()> {
    let recorded = item.event.tx.to_rfc3339();
    let line = match &item.event.op {
        Op::Store(s) => EntryLine {
            op: EntryOp::Store.as_str(),
            key: Some(&s.key),
            entity: None,
            value: Some(&s.value),
            valid_from: Some(s.valid_from.to_rfc3339()),
            valid_to: end_text(s.valid_to),
            tags: Some(&s.tags),
            agent: &item.agent,
            recorded,
            tier: s.tier.map(|t| t.as_str()),
            entry: None,
            hash: Some(item.event.source.hash.as_str()).filter(|h| !h.is_empty()),
        },
        Op::Forget { key, entry } => EntryLine {
            op: EntryOp::Forget.as_str(),
            key: Some(key),
            entity: None,
            value: None,
            valid_from: None,
            valid_to: None,
            tags: None,
            agent: &item.agent,
            recorded,
            tier: None,
            entry: entry.as_deref(),
            hash: None,
        },
        Op::ForgetEntity { entity } => EntryLine {
            op: EntryOp::ForgetEntity.as_str(),
            key: None,
            entity: Some(entity),
            value: None,
            valid_from: None,
            valid_to: None,
            tags: None,
            agent: &item.agent,
            recorded,
            tier: None,
            entry: None,
            hash: None,
        },
        Op::ForgetTagged { tags } => EntryLine {
            op: EntryOp::ForgetTagged.as_str(),
            key: None,
            entity: None,
            value: None,
            valid_from: None,
            valid_to: None,
            tags: Some(tags),
            agent: &item.agent,
            recorded,
            tier: None,
            entry: None,
            hash: None,
        },
        Op::Seal => return Ok(()),
    };
    match format {
        Format::Json => {
            let mut s = serde_json::to_string(&line)
                .map_err(|e| Error::input(format!("export: {e}"), "report this as a bug"))?;
            s.push('\n');
            out.write_all(s.as_bytes()).map_err(out_err)
        }
        Format::Csv => {
            let tags = line.tags.map(tags_field).unwrap_or_default();
            csv_row(
                out,
                &[
                    line.op,
                    line.key.unwrap_or(""),
                    line.entity.unwrap_or(""),
                    line.value.unwrap_or(""),
                    line.valid_from.as_deref().unwrap_or(""),
                    line.valid_to.as_deref().unwrap_or(""),
                    &tags,
                    line.agent,
                    &line.recorded,
                ],
            )
            .map_err(out_err)
        }
    }
}
