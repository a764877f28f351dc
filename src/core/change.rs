//! What one entry changes, decided once: the versions that stop being believed at its
//! transaction time and the versions that start. The rebuild's in-memory fold and the
//! index's incremental SQL update both execute this plan; neither decides on its own
//! which versions a write closes (STYLE 16).
//!
//! The caller finds the versions in the operation's [`Scope`] (a key, an entity's keys,
//! the keys with some tags), hands them to [`plan`], and executes the [`Change`]: the
//! fold per key in memory, the index by row id in SQL.

use super::fold::{Event, Op, Source, StoreOp, Version, belongs_to_entity};
use super::temporal::{self, EmptyPeriod, Period};
use super::tier;
use super::time::TxTime;

/// Which keys an operation can touch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope<'a> {
    /// This key alone (store, forget).
    Key(&'a str),
    /// The entity and every `entity:predicate` key (a Go mem7 `delete`).
    Entity(&'a str),
    /// Every key with a believed version carrying all these tags (Go mem7
    /// `delete_tags`); never empty.
    Tagged(&'a [String]),
    /// No key (a seal; a `delete_tags` without tags).
    Nothing,
}

impl Op {
    /// The keys this operation can touch. A caller may hand [`plan`] versions of keys
    /// outside the scope (a coarse SQL prefilter): the plan leaves them alone.
    pub fn scope(&self) -> Scope<'_> {
        match self {
            Op::Store(op) => Scope::Key(&op.key),
            Op::Forget { key, .. } => Scope::Key(key),
            Op::ForgetEntity { entity } => Scope::Entity(entity),
            Op::ForgetTagged { tags } if tags.is_empty() => Scope::Nothing,
            Op::ForgetTagged { tags } => Scope::Tagged(tags),
            Op::Seal => Scope::Nothing,
        }
    }
}

/// What an event does to the believed versions it was planned against.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Change {
    /// Indices into the believed versions given to [`plan`]: these stop being believed
    /// at the event's transaction time (their `tx_to` becomes it).
    pub close: Vec<usize>,
    /// Versions that start being believed at the event's transaction time (`tx_from` is
    /// it, `tx_to` is +∞): remnants of closed versions first, then a store's new version.
    pub start: Vec<Version>,
}

impl Change {
    /// A change planned before its entry was written, told where the entry landed: the
    /// version a store starts itself (the last one started) takes the entry's `source`;
    /// remnants keep the sources of the versions they remain of.
    pub fn landed(&mut self, op: &Op, source: &Source) {
        if matches!(op, Op::Store(_))
            && let Some(new) = self.start.last_mut()
        {
            new.source = source.clone();
        }
    }

    /// Whether the event changes nothing about this key.
    pub fn is_empty(&self) -> bool {
        self.close.is_empty() && self.start.is_empty()
    }

    /// For a store's plan: whether it would leave the believed versions exactly as they
    /// are — the versions it starts are, by value, tags and valid period (boundaries
    /// included), the versions it closes — so that it is a restatement, written as
    /// nothing (docs/temporal.md, a retry with the same explicit period). Returns the index in
    /// `believed` of the version equal to the store's own new version.
    pub fn restates(&self, believed: &[Version]) -> Option<usize> {
        let fact = |v: &Version| {
            let mut tags = v.tags.clone();
            tags.sort();
            (
                v.key.clone(),
                v.value.clone(),
                tags,
                v.valid_from,
                v.valid_to,
            )
        };
        let new_version = self.start.last()?;
        let new = fact(new_version);
        let vouched = |i: usize| tier::no_higher(new_version.tier, believed[i].tier);
        // A store that closes nothing (a key of many values, or a gap in one value's
        // time) restates a believed version equal to the one it would start.
        if self.close.is_empty() {
            return match self.start.len() {
                1 => (0..believed.len()).find(|&i| fact(&believed[i]) == new && vouched(i)),
                _ => None,
            };
        }
        if self.start.len() != self.close.len() {
            return None;
        }
        let mut closed: Vec<_> = self.close.iter().map(|&i| fact(&believed[i])).collect();
        let mut started: Vec<_> = self.start.iter().map(fact).collect();
        closed.sort();
        started.sort();
        if closed != started {
            return None;
        }
        self.close
            .iter()
            .copied()
            .find(|&i| fact(&believed[i]) == new && vouched(i))
    }
}

/// Plans `event`, applied at transaction time `tx`, against `believed`: versions
/// believed just before it, at least every one in its [`Scope`]. Versions the operation
/// does not select (another key, a prefilter's false hit) are left alone. A store whose
/// valid period is empty changes nothing and is an error (the caller reports it and goes
/// on).
pub fn plan(event: &Event, tx: TxTime, believed: &[Version]) -> Result<Change, EmptyPeriod> {
    let closing = |pick: &dyn Fn(&Version) -> bool| Change {
        close: (0..believed.len())
            .filter(|&i| pick(&believed[i]))
            .collect(),
        start: Vec::new(),
    };
    Ok(match &event.op {
        // A value of a key of many values: added beside the others, closing none but
        // the same value over the same period (a retry, or the same fact vouched for
        // anew, which takes its place: one value, never two).
        Op::Store(op) if op.many => {
            let new = temporal::resolve_added(op.valid_from, op.valid_to)?;
            let version = new_version(op, new, tx, event);
            let mut tags = op.tags.clone();
            tags.sort();
            let same = |v: &Version| {
                let mut t = v.tags.clone();
                t.sort();
                v.key == op.key && v.value == op.value && t == tags && v.period() == new
            };
            Change {
                close: (0..believed.len())
                    .filter(|&i| same(&believed[i]))
                    .collect(),
                start: vec![version],
            }
        }
        Op::Store(op) => {
            let (idx, periods): (Vec<usize>, Vec<Period>) = believed
                .iter()
                .enumerate()
                .filter(|(_, v)| v.key == op.key)
                .map(|(i, v)| (i, v.period()))
                .unzip();
            let p = temporal::plan_store(&periods, op.valid_from, op.valid_to)?;
            let mut start = Vec::with_capacity(p.remnants.len() + 1);
            for &(i, period) in &p.remnants {
                let mut r = believed[idx[i]].clone();
                r.valid_from = period.from;
                r.valid_to = period.to;
                r.tx_from = tx;
                r.tx_to = TxTime::INFINITY;
                start.push(r);
            }
            start.push(new_version(op, p.new, tx, event));
            Change {
                close: p.close.iter().map(|&i| idx[i]).collect(),
                start,
            }
        }
        Op::Forget { key, entry: None } => closing(&|v| v.key == *key),
        Op::Forget {
            key,
            entry: Some(entry),
        } => closing(&|v| v.key == *key && v.source.hash == *entry),
        Op::ForgetEntity { entity } => closing(&|v| belongs_to_entity(&v.key, entity)),
        Op::ForgetTagged { tags } if tags.is_empty() => Change::default(),
        Op::ForgetTagged { tags } => closing(&|v| v.has_tags(tags)),
        Op::Seal => Change::default(),
    })
}

/// The version a store starts, over `period`.
fn new_version(op: &StoreOp, period: Period, tx: TxTime, event: &Event) -> Version {
    Version {
        key: op.key.clone(),
        value: op.value.clone(),
        tags: op.tags.clone(),
        agent: op.agent.clone(),
        valid_from: period.from,
        valid_to: period.to,
        tx_from: tx,
        tx_to: TxTime::INFINITY,
        tier: op.tier,
        source: event.source.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::chain::ChainHash;
    use crate::core::fold::{Source, StoreOp};
    use crate::core::temporal::ValidEnd;
    use crate::core::time::ValidTime;

    fn version(key: &str, value: &str, from: i64, to: i64, tags: &[&str]) -> Version {
        Version {
            key: key.into(),
            value: value.into(),
            tags: tags.iter().map(|t| t.to_string()).collect(),
            agent: "t".into(),
            valid_from: ValidTime::from_micros(from),
            valid_to: if to < 0 {
                ValidTime::INFINITY
            } else {
                ValidTime::from_micros(to)
            },
            tx_from: TxTime::from_micros(1),
            tx_to: TxTime::INFINITY,
            tier: None,
            source: Source {
                file: "f".into(),
                line: 1,
                hash: value.into(),
            },
        }
    }

    fn event(op: Op) -> Event {
        Event {
            tx: TxTime::from_micros(9),
            op,
            source: Source {
                file: "g".into(),
                line: 2,
                hash: "new".into(),
            },
            content: ChainHash::GENESIS,
        }
    }

    fn store(key: &str, from: i64, end: ValidEnd) -> Event {
        event(Op::Store(StoreOp {
            key: key.into(),
            value: "new".into(),
            tags: vec![],
            agent: "t".into(),
            valid_from: ValidTime::from_micros(from),
            valid_to: end,
            tier: None,
            many: false,
        }))
    }

    /// (valid_from, valid_to, value) of each started version, and the closed indices.
    fn summary(c: &Change) -> (Vec<usize>, Vec<(i64, i64, String)>) {
        (
            c.close.clone(),
            c.start
                .iter()
                .map(|v| {
                    assert_eq!(v.tx_from, TxTime::from_micros(9));
                    assert!(v.tx_to.is_infinite());
                    (v.valid_from.micros(), v.valid_to.micros(), v.value.clone())
                })
                .collect(),
        )
    }

    const INF: i64 = i64::MAX;

    /// The store plans at the seams: a start exactly at a boundary, a window equal to a
    /// version, a window that touches and closes nothing, a window spanning several
    /// versions with remnants on both ends, `infinity` starting at a version's start.
    #[test]
    fn store_plans_at_the_seams() {
        let at = |t: i64| ValidEnd::At(ValidTime::from_micros(t));
        let three = vec![
            version("k", "a", 0, 10, &[]),
            version("k", "b", 10, 20, &[]),
            version("k", "c", 20, -1, &[]),
        ];
        #[allow(clippy::type_complexity)]
        let rows: Vec<(&str, Event, (Vec<usize>, Vec<(i64, i64, String)>))> = vec![
            (
                "an open-ended start exactly at a boundary replaces what starts there",
                store("k", 10, ValidEnd::Open),
                (vec![1], vec![(10, 20, "new".into())]),
            ),
            (
                "a window equal to an existing version replaces it, no remnant",
                store("k", 10, at(20)),
                (vec![1], vec![(10, 20, "new".into())]),
            ),
            (
                "a window inside one version splits it around the new one",
                event(Op::Store(StoreOp {
                    key: "k".into(),
                    value: "new".into(),
                    tags: vec![],
                    agent: "t".into(),
                    valid_from: ValidTime::from_micros(30),
                    valid_to: at(40),
                    tier: None,
                    many: false,
                })),
                (
                    vec![2],
                    vec![
                        (20, 30, "c".into()),
                        (40, INF, "c".into()),
                        (30, 40, "new".into()),
                    ],
                ),
            ),
            (
                "a window spanning several versions leaves remnants on both ends",
                store("k", 5, at(25)),
                (
                    vec![0, 1, 2],
                    vec![
                        (0, 5, "a".into()),
                        (25, INF, "c".into()),
                        (5, 25, "new".into()),
                    ],
                ),
            ),
            (
                "infinity starting exactly at a version's start closes it and all after",
                store("k", 10, ValidEnd::Infinity),
                (vec![1, 2], vec![(10, INF, "new".into())]),
            ),
        ];
        for (what, ev, want) in rows {
            let change = plan(&ev, ev.tx, &three).unwrap();
            assert_eq!(summary(&change), want, "{what}");
        }
        // A window that exactly fills a gap touches both neighbours and closes neither.
        let gap = vec![
            version("k", "a", 0, 10, &[]),
            version("k", "c", 20, -1, &[]),
        ];
        let change = plan(&store("k", 10, at(20)), TxTime::from_micros(9), &gap).unwrap();
        assert_eq!(summary(&change), (vec![], vec![(10, 20, "new".into())]));
        // An empty window is refused.
        assert!(plan(&store("k", 10, at(10)), TxTime::from_micros(9), &three).is_err());
    }

    #[test]
    fn forgets_close_what_they_select_and_nothing_else() {
        let believed = vec![
            version("e", "a", 0, -1, &["x", "y"]),
            version("e:p", "b", 0, -1, &["x"]),
            version("ex", "c", 0, -1, &["x", "y"]),
        ];
        let forget = |op| plan(&event(op), TxTime::from_micros(9), &believed).unwrap();
        assert_eq!(
            forget(Op::Forget {
                key: "e".into(),
                entry: None,
            })
            .close,
            [0]
        );
        assert_eq!(
            forget(Op::ForgetEntity { entity: "e".into() }).close,
            [0, 1]
        );
        assert_eq!(
            forget(Op::ForgetTagged {
                tags: vec!["x".into(), "y".into()]
            })
            .close,
            [0, 2]
        );
        assert!(forget(Op::ForgetTagged { tags: vec![] }).is_empty());
        assert!(forget(Op::Seal).is_empty());
        assert_eq!(Op::ForgetTagged { tags: vec![] }.scope(), Scope::Nothing);
    }
}
