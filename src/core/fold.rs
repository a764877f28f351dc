//! The version table as a pure fold over events sorted by (transaction time, content).
//!
//! `Fold` keeps only the versions still believed; a version that stops being believed is
//! final (its `tx_to` never changes again) and is handed to the caller's sink at once, so
//! a rebuild can stream closed versions out instead of holding history in memory.

use std::collections::HashMap;

use super::chain::ChainHash;
use super::change::{self, Scope};
use super::temporal::{self, Period, ValidEnd};
use super::tier::Tier;
use super::time::{TxTime, ValidTime};

/// Where an entry lives in the workspace.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Source {
    /// Path relative to the workspace, `/`-separated (e.g. `memory/2026-02-15.md`).
    pub file: String,
    /// 1-based line of the entry's heading.
    pub line: u32,
    /// The entry's recorded hash (empty for legacy entries).
    pub hash: String,
}

/// One version of a key with its four clocks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Version {
    pub key: String,
    pub value: String,
    pub tags: Vec<String>,
    pub agent: String,
    pub valid_from: ValidTime,
    pub valid_to: ValidTime,
    pub tx_from: TxTime,
    pub tx_to: TxTime,
    /// Who vouches for it (`None`: the entry names no tier).
    pub tier: Option<Tier>,
    /// The entry whose value this version carries.
    pub source: Source,
}

impl Version {
    /// The valid-time period.
    pub fn period(&self) -> Period {
        Period {
            from: self.valid_from,
            to: self.valid_to,
        }
    }

    /// Whether this version answers a read at (`valid_at`, `as_of`).
    pub fn matches(&self, valid_at: ValidTime, as_of: TxTime) -> bool {
        temporal::matches(self.period(), self.tx_from, self.tx_to, valid_at, as_of)
    }

    /// Whether mem7 believed this version at `as_of` (any valid time).
    pub fn believed_at(&self, as_of: TxTime) -> bool {
        temporal::believed_at(self.tx_from, self.tx_to, as_of)
    }

    /// Whether this version carries every tag in `tags`.
    pub fn has_tags(&self, tags: &[String]) -> bool {
        super::read_rule::carries(&self.tags, tags)
    }
}

/// A store as recorded in an entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoreOp {
    pub key: String,
    pub value: String,
    pub tags: Vec<String>,
    pub agent: String,
    pub valid_from: ValidTime,
    pub valid_to: ValidEnd,
    /// Who vouches for it (`None`: the entry names no tier).
    pub tier: Option<Tier>,
    /// An `add` (a key of many values): the store closes nothing, and an open end means
    /// "for good", not "until the next value".
    pub many: bool,
}

/// The `op:` an entry names, as the format writes it (docs/format.md). The Go mem7's
/// `delete` and `delete_tags` are read as legacy entries, never written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryOp {
    Store,
    /// A value of a key of many values, added beside the others.
    Add,
    Forget,
    ForgetEntity,
    ForgetTagged,
    Seal,
}

impl EntryOp {
    pub const ALL: [EntryOp; 6] = [
        EntryOp::Store,
        EntryOp::Add,
        EntryOp::Forget,
        EntryOp::ForgetEntity,
        EntryOp::ForgetTagged,
        EntryOp::Seal,
    ];

    /// The word in the envelope.
    pub const fn as_str(self) -> &'static str {
        match self {
            EntryOp::Store => "store",
            EntryOp::Add => "add",
            EntryOp::Forget => "forget",
            EntryOp::ForgetEntity => "forget_entity",
            EntryOp::ForgetTagged => "forget_tagged",
            EntryOp::Seal => "seal",
        }
    }

    /// The op an envelope's word names.
    pub fn parse(word: &str) -> Option<EntryOp> {
        EntryOp::ALL.into_iter().find(|op| op.as_str() == word)
    }
}

impl std::fmt::Display for EntryOp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What an entry asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Op {
    Store(StoreOp),
    /// Stop believing every version of the key, or (with `entry`) the versions that
    /// carry that entry's value: one value of a key of many values.
    Forget {
        key: String,
        entry: Option<String>,
    },
    /// Stop believing the entity's key and every `entity:predicate` key (a Go mem7
    /// `delete` without a predicate).
    ForgetEntity {
        entity: String,
    },
    /// A `seal` entry: changes no memory, but takes its place in transaction time.
    Seal,
    /// Stop believing every version carrying all of these tags (Go mem7 `delete_tags`).
    /// An empty tag list forgets nothing.
    ForgetTagged {
        tags: Vec<String>,
    },
}

impl Op {
    /// The `op:` an entry asking for this is written with.
    pub fn entry_op(&self) -> EntryOp {
        match self {
            Op::Store(s) if s.many => EntryOp::Add,
            Op::Store(_) => EntryOp::Store,
            Op::Forget { .. } => EntryOp::Forget,
            Op::ForgetEntity { .. } => EntryOp::ForgetEntity,
            Op::ForgetTagged { .. } => EntryOp::ForgetTagged,
            Op::Seal => EntryOp::Seal,
        }
    }
}

/// An entry of the log, reduced to what the fold needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    /// Transaction time (`recorded`).
    pub tx: TxTime,
    pub op: Op,
    pub source: Source,
    /// The hash of the entry's own bytes (with its own `prev`, plain blake3): what
    /// orders entries recorded at the same instant. It depends on nothing but the
    /// entry, so the order is the same in every clone, whichever way a merge went.
    pub content: ChainHash,
}

/// The order the fold takes entries in: by `recorded`, then by content, never by file or
/// line. So the versions depend only on the set of entries (docs/temporal.md, "Order is content,
/// not position"): two clones that merged each other in either direction fold alike.
pub fn event_order(a: &Event, b: &Event) -> std::cmp::Ordering {
    (a.tx, a.content.0).cmp(&(b.tx, b.content.0))
}

/// Something the fold could apply only by bending a rule; reported, never fatal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Anomaly {
    pub source: Source,
    pub message: String,
}

/// The in-memory fold.
#[derive(Default, Debug)]
pub struct Fold {
    believed: HashMap<String, Vec<Version>>,
    last_tx: Option<TxTime>,
}

impl Fold {
    /// An empty fold.
    pub fn new() -> Self {
        Self::default()
    }

    /// Starts `key` from versions believed elsewhere (the index), before applying more.
    pub fn seed(&mut self, key: &str, versions: Vec<Version>) {
        if versions.is_empty() {
            self.believed.remove(key);
        } else {
            self.believed.insert(key.to_string(), versions);
        }
    }

    /// The versions of `key` believed now (after the last applied event).
    pub fn believed(&self, key: &str) -> &[Version] {
        self.believed.get(key).map(Vec::as_slice).unwrap_or(&[])
    }

    /// Applies one event. Versions that stop being believed go to `closed`.
    ///
    /// Events must come in [`event_order`]; an event older than the last one is applied
    /// at the last transaction time and reported as an anomaly.
    pub fn apply(&mut self, event: &Event, closed: &mut impl FnMut(Version)) -> Option<Anomaly> {
        let mut anomaly = None;
        let tx = match self.last_tx {
            Some(last) if event.tx < last => {
                anomaly = Some(Anomaly {
                    source: event.source.clone(),
                    message: format!(
                        "recorded {} is earlier than an entry already applied ({}); applied at the later time",
                        event.tx, last
                    ),
                });
                last
            }
            _ => event.tx,
        };
        self.last_tx = Some(tx);
        let keys: Vec<String> = match event.op.scope() {
            Scope::Key(key) => vec![key.to_string()],
            Scope::Entity(entity) => self
                .believed
                .keys()
                .filter(|k| belongs_to_entity(k, entity))
                .cloned()
                .collect(),
            Scope::Tagged(tags) => self
                .believed
                .iter()
                .filter(|(_, vs)| vs.iter().any(|v| v.has_tags(tags)))
                .map(|(k, _)| k.clone())
                .collect(),
            Scope::Nothing => Vec::new(),
        };
        for key in keys {
            let versions = self.believed.entry(key.clone()).or_default();
            match change::plan(event, tx, versions) {
                Ok(change) => execute(versions, change, tx, closed),
                Err(e) => {
                    anomaly = Some(Anomaly {
                        source: event.source.clone(),
                        message: format!("ignored: {e}"),
                    })
                }
            }
            if versions.is_empty() {
                self.believed.remove(&key);
            }
        }
        anomaly
    }

    /// Hands every still-believed version to `sink` (sorted by key, then valid_from).
    pub fn finish(self, sink: &mut impl FnMut(Version)) {
        let mut keys: Vec<_> = self.believed.into_iter().collect();
        keys.sort_by(|a, b| a.0.cmp(&b.0));
        for (_, mut versions) in keys {
            versions.sort_by_key(|v| v.valid_from);
            for v in versions {
                sink(v);
            }
        }
    }
}

/// Whether `key` is the entity itself or one of its `entity:predicate` keys.
pub fn belongs_to_entity(key: &str, entity: &str) -> bool {
    key == entity
        || key
            .strip_prefix(entity)
            .is_some_and(|rest| rest.starts_with(':'))
}

/// Executes a planned change on one key's believed versions: closed ones go to `closed`
/// with `tx_to = tx`, started ones join the believed.
fn execute(
    versions: &mut Vec<Version>,
    change: change::Change,
    tx: TxTime,
    closed: &mut impl FnMut(Version),
) {
    if change.close.is_empty() {
        versions.extend(change.start);
        return;
    }
    let mut kept = Vec::with_capacity(versions.len() + change.start.len());
    for (i, mut v) in std::mem::take(versions).into_iter().enumerate() {
        if change.close.contains(&i) {
            v.tx_to = tx;
            closed(v);
        } else {
            kept.push(v);
        }
    }
    kept.extend(change.start);
    *versions = kept;
}

/// Folds a whole sequence of events, taken in the order given, and returns every version
/// (closed and believed). Sort them by [`event_order`] first for the workspace's answer.
pub fn fold_all<'a>(events: impl IntoIterator<Item = &'a Event>) -> (Vec<Version>, Vec<Anomaly>) {
    let mut fold = Fold::new();
    let mut out = Vec::new();
    let mut anomalies = Vec::new();
    for e in events {
        if let Some(a) = fold.apply(e, &mut |v| out.push(v)) {
            anomalies.push(a);
        }
    }
    fold.finish(&mut |v| out.push(v));
    (out, anomalies)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_entry_op_reads_back_from_its_word_and_no_other_word_is_one() {
        for op in EntryOp::ALL {
            assert_eq!(EntryOp::parse(op.as_str()), Some(op));
        }
        for word in ["", "Store", "delete", "delete_tags", "remove"] {
            assert_eq!(EntryOp::parse(word), None, "{word}");
        }
        let forget = Op::Forget {
            key: "k".into(),
            entry: None,
        };
        assert_eq!(forget.entry_op(), EntryOp::Forget);
        assert_eq!(Op::Seal.entry_op(), EntryOp::Seal);
    }

    fn day(d: &str) -> i64 {
        ValidTime::parse(d).unwrap().micros()
    }

    fn store(key: &str, value: &str, tx: &str, from: Option<&str>) -> Event {
        Event {
            tx: TxTime::from_micros(day(tx)),
            op: Op::Store(StoreOp {
                key: key.into(),
                value: value.into(),
                tags: vec![],
                agent: "t".into(),
                valid_from: ValidTime::from_micros(day(from.unwrap_or(tx))),
                valid_to: ValidEnd::Open,
                tier: None,
                many: false,
            }),
            source: Source {
                file: "f".into(),
                line: 1,
                hash: String::new(),
            },
            content: ChainHash(*blake3::hash(format!("{key}{value}{tx}").as_bytes()).as_bytes()),
        }
    }

    fn answer(versions: &[Version], valid_at: &str, as_of: &str) -> Vec<String> {
        versions
            .iter()
            .filter(|v| {
                v.matches(
                    ValidTime::parse(valid_at).unwrap(),
                    TxTime::parse(as_of).unwrap(),
                )
            })
            .map(|v| v.value.clone())
            .collect()
    }

    #[test]
    fn the_worked_example() {
        let events = [
            store("event7:host", "Railway", "2026-02-15", None),
            store("event7:host", "Cloudflare", "2026-03-20", None),
            store(
                "event7:host",
                "local only",
                "2026-04-12",
                Some("2026-04-05"),
            ),
        ];
        let (versions, anomalies) = fold_all(&events);
        assert!(anomalies.is_empty());
        assert_eq!(
            answer(&versions, "2026-04-10", "2026-04-11"),
            ["Cloudflare"]
        );
        assert_eq!(
            answer(&versions, "2026-04-10", "2026-05-01"),
            ["local only"]
        );
        assert_eq!(answer(&versions, "2026-03-01", "2026-05-01"), ["Railway"]);
        assert!(answer(&versions, "2026-02-01", "2026-05-01").is_empty());
    }

    #[test]
    fn forget_keeps_the_past_readable() {
        let mut events = vec![store("k", "a", "2026-01-01", None)];
        events.push(Event {
            tx: TxTime::from_micros(day("2026-02-01")),
            op: Op::Forget {
                key: "k".into(),
                entry: None,
            },
            source: Source {
                file: "f".into(),
                line: 9,
                hash: String::new(),
            },
            content: ChainHash::GENESIS,
        });
        let (versions, _) = fold_all(&events);
        assert!(answer(&versions, "2026-03-01", "2026-03-01").is_empty());
        assert_eq!(answer(&versions, "2026-01-15", "2026-01-15"), ["a"]);
    }

    #[test]
    fn out_of_order_events_are_reported_not_fatal() {
        let events = [
            store("k", "a", "2026-02-01", None),
            store("k", "b", "2026-01-01", None),
        ];
        let (versions, anomalies) = fold_all(&events);
        assert_eq!(anomalies.len(), 1);
        assert_eq!(versions.len(), 2);
    }
}
