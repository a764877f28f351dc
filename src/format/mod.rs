//! The entry format of `memory/*.md` files: writing entries, reading them back, and the
//! canonical bytes the hash chain covers. See `docs/format.md` for the byte-level spec.

mod emit;
mod envelope;
mod parse;
pub(crate) mod yaml;

pub use emit::{EntryDraft, credential_in, render_entry};
pub(crate) use envelope::FieldValue as FieldValueExport;
pub use envelope::Fields;
pub use parse::{
    ChainFile, ChainRecord, ChainScratch, ParsedEntry, ParsedFile, Problem, ProblemKind,
    parse_chain, parse_chain_in, parse_file,
};
pub use parse::{FOREIGN_CONTEXT, foreign_digest};

use crate::core::time::{TxTime, ValidTime};
use crate::core::{EntryOp, Event, Op, Source, StoreOp, Tier, ValidEnd};

/// The info string of the fenced envelope block.
pub const FENCE_INFO: &str = "mem7";

impl ParsedEntry {
    /// Converts the entry into a fold event (`None` for entries that change no memory,
    /// such as seals), or says why it cannot be applied.
    pub fn to_event(&self, file: &str) -> Result<Option<Event>, String> {
        let source = Source {
            file: file.to_string(),
            line: self.line,
            hash: self.fields.hash.clone().unwrap_or_default(),
        };
        if self.legacy {
            return legacy_event(self, source).map(Some);
        }
        let f = &self.fields;
        let recorded = f
            .recorded
            .as_deref()
            .ok_or("the envelope has no `recorded:` time; add one (RFC 3339, UTC)")?;
        let tx = TxTime::parse(recorded).map_err(|e| format!("recorded: {e}"))?;
        let tier = match f.tier.as_deref() {
            None => None,
            Some(t) => Some(
                Tier::parse(t)
                    .ok_or_else(|| format!("unknown tier `{t}` (expected asserted or inferred)"))?,
            ),
        };
        let word = f.op.as_deref().unwrap_or("store");
        let Some(entry_op) = EntryOp::parse(word) else {
            let known: Vec<&str> = EntryOp::ALL.iter().map(|o| o.as_str()).collect();
            return Err(format!(
                "unknown op `{word}` (expected {} or {})",
                known[..known.len() - 1].join(", "),
                known[known.len() - 1]
            ));
        };
        let op = match entry_op {
            EntryOp::Store | EntryOp::Add => {
                let value = self.value.clone().ok_or("a store entry has no value")?;
                let valid_from = match f.valid_from.as_deref() {
                    Some(t) => ValidTime::parse(t).map_err(|e| format!("valid_from: {e}"))?,
                    None => tx.as_valid(),
                };
                let valid_to = match f.valid_to.as_deref() {
                    None | Some("") => ValidEnd::Open,
                    Some(t) if t.eq_ignore_ascii_case("open") => ValidEnd::Open,
                    Some(t) if t.eq_ignore_ascii_case("infinity") || t == "∞" => {
                        ValidEnd::Infinity
                    }
                    Some(t) => {
                        ValidEnd::At(ValidTime::parse(t).map_err(|e| format!("valid_to: {e}"))?)
                    }
                };
                Op::Store(StoreOp {
                    key: self.key.clone(),
                    value,
                    tags: f.tags.clone(),
                    agent: f.agent.clone().unwrap_or_else(|| "unknown".into()),
                    valid_from,
                    valid_to,
                    tier,
                    many: entry_op == EntryOp::Add,
                })
            }
            EntryOp::Seal => Op::Seal,
            EntryOp::Forget => Op::Forget {
                key: self.key.clone(),
                entry: f.entry.clone(),
            },
            // Written by `mem7 import` for the Go mem7's whole-entity and tag deletes
            // (exported as `forget_entity` / `forget_tagged`): the heading is the entity,
            // or the tags are the `tags` field.
            EntryOp::ForgetEntity => Op::ForgetEntity {
                entity: self.key.clone(),
            },
            EntryOp::ForgetTagged => Op::ForgetTagged {
                tags: f.tags.clone(),
            },
        };
        Ok(Some(Event {
            tx,
            op,
            source,
            content: self.computed,
        }))
    }
}

/// The key a Go mem7 (entity, predicate) pair maps to: the entity alone for the default
/// predicate `note`, else `entity:predicate`.
pub fn legacy_key(entity: &str, predicate: Option<&str>) -> String {
    match predicate.map(str::trim) {
        None | Some("") | Some("note") => entity.to_string(),
        Some(p) => format!("{entity}:{p}"),
    }
}

/// The Go mem7 facts read so far, by the key each maps to: two different
/// (entity, predicate) pairs that map to one key (entity `a:b` and entity `a` with
/// predicate `b` both give `a:b`) are read as one key, which a person should know.
#[derive(Debug, Default)]
pub struct LegacyKeys {
    /// Key → the first (entity, predicate) pair seen for it, and where.
    first: std::collections::HashMap<String, ((String, String), String, u32)>,
    /// (key, entity, predicate) already warned about.
    warned: std::collections::HashSet<(String, String, String)>,
}

impl LegacyKeys {
    /// Notes the Go mem7 entries of one file; returns (line, warning) for each entry
    /// whose key an earlier, different (entity, predicate) pair already produced (once
    /// per pair).
    pub fn note(&mut self, file: &str, entries: &[ParsedEntry]) -> Vec<(u32, String)> {
        let mut found = Vec::new();
        for e in entries.iter().filter(|e| e.legacy) {
            let predicate = e.fields.predicate.as_deref().map(str::trim);
            let predicate = match (e.fields.op.as_deref().unwrap_or("store"), predicate) {
                ("store", None | Some("") | Some("note")) => "note",
                ("store", Some(p)) => p,
                // A delete names a key only with a predicate (without one it forgets the
                // whole entity); delete_tags names none.
                ("delete", None | Some("")) | ("delete_tags", _) => continue,
                ("delete", Some(p)) => p,
                _ => continue,
            };
            let key = legacy_key(&e.key, Some(predicate));
            let pair = (e.key.clone(), predicate.to_string());
            match self.first.get(&key) {
                None => {
                    self.first.insert(key, (pair, file.to_string(), e.line));
                }
                Some((seen, at_file, at_line)) if *seen != pair => {
                    if self
                        .warned
                        .insert((key.clone(), pair.0.clone(), pair.1.clone()))
                    {
                        found.push((
                            e.line,
                            format!(
                                "Go mem7 entity `{}` with predicate `{}` maps to the key `{key}`, as entity `{}` with predicate `{}` at {at_file}:{at_line} does: both are read as that one key",
                                pair.0, pair.1, seen.0, seen.1
                            ),
                        ));
                    }
                }
                Some(_) => {}
            }
        }
        found
    }
}

fn legacy_event(entry: &ParsedEntry, source: Source) -> Result<Event, String> {
    let f = &entry.fields;
    let time = |name: &str, v: &Option<String>| -> Result<Option<TxTime>, String> {
        v.as_deref()
            .map(|t| TxTime::parse(t).map_err(|e| format!("{name}: {e}")))
            .transpose()
    };
    let created = time("created", &f.created)?;
    let updated = time("updated", &f.updated)?;
    let deleted = time("deleted", &f.deleted)?;
    let key = legacy_key(&entry.key, f.predicate.as_deref());
    let op = f.op.as_deref().unwrap_or("store");
    let when = match op {
        "delete" | "delete_tags" => deleted.or(updated).or(created),
        _ => updated.or(created),
    }
    .ok_or("legacy entry without `updated` or `created` time")?;
    let op = match op {
        "store" => {
            let valid_from = when.as_valid();
            let valid_to = match f.ttl.as_deref().map(str::trim) {
                None | Some("") | Some("0") => ValidEnd::Infinity,
                Some(ttl) => {
                    let secs: i64 = ttl
                        .trim_end_matches('s')
                        .parse()
                        .map_err(|_| format!("ttl {ttl:?} is not a number of seconds"))?;
                    ValidEnd::At(ValidTime::from_micros(
                        valid_from
                            .micros()
                            .saturating_add(secs.saturating_mul(1_000_000)),
                    ))
                }
            };
            Op::Store(StoreOp {
                key,
                value: entry.value.clone().unwrap_or_default(),
                tags: f.tags.clone(),
                agent: f.agent.clone().unwrap_or_else(|| "mem7-go".into()),
                valid_from,
                valid_to,
                tier: None,
                many: false,
            })
        }
        // Go mem7 wrote deletes without a predicate for a whole entity.
        "delete" if f.predicate.as_deref().is_none_or(|p| p.trim().is_empty()) => {
            Op::ForgetEntity {
                entity: entry.key.clone(),
            }
        }
        "delete" => Op::Forget { key, entry: None },
        "delete_tags" => Op::ForgetTagged {
            tags: f.tags.clone(),
        },
        other => return Err(format!("unknown legacy op `{other}`")),
    };
    Ok(Event {
        tx: when,
        op,
        source,
        content: entry.computed,
    })
}
