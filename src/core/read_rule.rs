//! The read rules, each written once: which versions answer a read ([`MATCH`], the one
//! definition every SQL query, tantivy filter and in-memory test is generated from),
//! tag containment, the open end, and what a read shows besides its matches (the
//! recent changes a context block lists as `[history]`).

use super::Version;
use super::time::{INFINITY_MICROS, TxTime, ValidTime};

/// The open end of a period on either clock, as the index stores it.
pub const OPEN: i64 = INFINITY_MICROS;

/// A version's clocks, by the names the index's tables and fields give them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Column {
    ValidFrom,
    ValidTo,
    TxFrom,
    TxTo,
}

impl Column {
    /// The column's name in SQL and its field's name in the full-text index.
    pub const fn name(self) -> &'static str {
        match self {
            Column::ValidFrom => "valid_from",
            Column::ValidTo => "valid_to",
            Column::TxFrom => "tx_from",
            Column::TxTo => "tx_to",
        }
    }
}

/// Which of a read's two clocks a bound compares a column with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Clock {
    ValidAt,
    AsOf,
}

/// How a column stands to the read's clock: a start at or before it (`column <= t`),
/// or an end after it (`column > t`: periods are half-open).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Start,
    End,
}

/// The read match rule: a version answers a read at (`valid_at`, `as_of`) when every
/// bound holds: it was valid then and believed then.
pub const MATCH: [(Column, Side, Clock); 4] = [
    (Column::ValidFrom, Side::Start, Clock::ValidAt),
    (Column::ValidTo, Side::End, Clock::ValidAt),
    (Column::TxFrom, Side::Start, Clock::AsOf),
    (Column::TxTo, Side::End, Clock::AsOf),
];

/// Whether a column's value `c` stands on `side` of the clock's reading `t`.
#[inline]
pub const fn holds(side: Side, c: i64, t: i64) -> bool {
    match side {
        Side::Start => c <= t,
        Side::End => c > t,
    }
}

/// [`MATCH`] over a version's clocks (`[valid_from, valid_to, tx_from, tx_to]`, in
/// microseconds) and a read's (`valid_at`, `as_of`).
#[inline]
pub fn matches(clocks: [i64; 4], valid_at: i64, as_of: i64) -> bool {
    let value = |c: Column| match c {
        Column::ValidFrom => clocks[0],
        Column::ValidTo => clocks[1],
        Column::TxFrom => clocks[2],
        Column::TxTo => clocks[3],
    };
    MATCH.iter().all(|&(column, side, clock)| {
        let t = match clock {
            Clock::ValidAt => valid_at,
            Clock::AsOf => as_of,
        };
        holds(side, value(column), t)
    })
}

/// Tag containment: whether a version carrying `carried` carries every tag of `wanted`
/// (every version does when `wanted` is empty), each as a whole tag, never a part of one
/// (`t1` is not carried by a version tagged `t10`). The index answers the same rule from
/// what it stores: [`stored_tags`] holds [`tag_needle`] exactly when the tag is carried.
pub fn carries(carried: &[String], wanted: &[String]) -> bool {
    wanted.iter().all(|t| carried.contains(t))
}

/// What separates tags where the index stores a version's tags as one text (a control
/// character, which no tag may hold: `core::validate` refuses it).
pub const TAG_SEP: char = '\u{1f}';

/// A version's tags as the index stores them: each between separators
/// (`␟deploy␟infra␟`), empty when there are none.
pub fn stored_tags(tags: &[String]) -> String {
    if tags.is_empty() {
        return String::new();
    }
    let mut s = String::from(TAG_SEP);
    for t in tags {
        s.push_str(&t.replace(TAG_SEP, ""));
        s.push(TAG_SEP);
    }
    s
}

/// The tags of a stored text ([`stored_tags`]).
pub fn tags_of_stored(text: &str) -> Vec<String> {
    text.split(TAG_SEP)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// One tag between separators: a stored text contains it exactly when its version
/// carries the tag (SQL's `instr` tests that).
pub fn tag_needle(tag: &str) -> String {
    format!("{TAG_SEP}{tag}{TAG_SEP}")
}

/// The versions of `changed` (recorded or retracted lately) that a reader of `shown`
/// should see as history at (`valid_at`, `as_of`): each no longer answers the read, and
/// says something `shown` does not.
///
/// - A version that still answers the read is not history.
/// - A still-believed version that starts after `valid_at` is a plan, not history.
/// - A retracted version whose entry still speaks through a believed remnant (the part
///   of its period before a change) says nothing the remnant does not.
/// - With `only_shown_keys` (a block for a query), only keys `shown` holds.
/// - A version saying what a shown version of its key says (the same value restated, or
///   stored again after a forget) would read as a retraction of it: never history.
pub fn history<'a>(
    changed: &'a [Version],
    shown: &[Version],
    (valid_at, as_of): (ValidTime, TxTime),
    only_shown_keys: bool,
) -> impl Iterator<Item = &'a Version> {
    let believed = move |v: &Version| v.believed_at(as_of);
    changed
        .iter()
        .filter(move |v| !v.matches(valid_at, as_of))
        .filter(move |v| !believed(v) || v.valid_to <= valid_at)
        .filter(move |v| {
            believed(v)
                || !changed
                    .iter()
                    .any(|r| believed(r) && r.key == v.key && r.source.hash == v.source.hash)
        })
        .filter(move |v| !only_shown_keys || shown.iter().any(|f| f.key == v.key))
        .filter(move |v| !shown.iter().any(|f| f.key == v.key && f.value == v.value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stored_tag_list_holds_a_tags_needle_exactly_when_the_tag_is_carried() {
        let tags = |ts: &[&str]| ts.iter().map(|t| t.to_string()).collect::<Vec<_>>();
        let lists = [
            tags(&[]),
            tags(&["t1"]),
            tags(&["t10"]),
            tags(&["t1", "t2"]),
            tags(&["a:b", "b"]),
        ];
        for carried in &lists {
            let stored = stored_tags(carried);
            assert_eq!(&tags_of_stored(&stored), carried);
            for wanted in ["t1", "t10", "t2", "t", "1", "b", "a:b", "a"] {
                assert_eq!(
                    stored.contains(&tag_needle(wanted)),
                    carries(carried, &tags(&[wanted])),
                    "{carried:?} / {wanted}"
                );
            }
        }
    }
    use crate::core::Source;

    fn v(key: &str, value: &str, hash: &str, valid: (i64, i64), tx: (i64, i64)) -> Version {
        let end = |m: i64| if m < 0 { i64::MAX } else { m };
        Version {
            key: key.into(),
            value: value.into(),
            tags: vec![],
            agent: "t".into(),
            valid_from: ValidTime::from_micros(valid.0),
            valid_to: ValidTime::from_micros(end(valid.1)),
            tx_from: TxTime::from_micros(tx.0),
            tx_to: TxTime::from_micros(end(tx.1)),
            tier: None,
            source: Source {
                hash: hash.into(),
                ..Source::default()
            },
        }
    }

    fn keys<'a>(h: impl Iterator<Item = &'a Version>) -> Vec<(&'a str, &'a str)> {
        h.map(|v| (v.key.as_str(), v.value.as_str())).collect()
    }

    const AT: (ValidTime, TxTime) = (ValidTime::from_micros(100), TxTime::from_micros(100));

    #[test]
    fn a_superseded_value_is_history_and_the_holding_one_is_not() {
        let old = v("ci", "Jenkins", "a", (0, -1), (10, 50));
        let remnant = v("ci", "Jenkins", "a", (0, 40), (50, -1));
        let new = v("ci", "Buildkite", "b", (40, -1), (50, -1));
        let changed = [old, remnant.clone(), new.clone()];
        let shown = [new];
        // The remnant (Jenkins until 40) is believed and ended before the read: history.
        // The retracted whole-period version speaks through that remnant: left out.
        assert_eq!(
            keys(history(&changed, &shown, AT, false)),
            [("ci", "Jenkins")]
        );
        let h: Vec<_> = history(&changed, &shown, AT, false).collect();
        assert_eq!(h[0].valid_to, remnant.valid_to);
    }

    #[test]
    fn the_match_rule_is_valid_then_and_believed_then_with_half_open_ends() {
        // Every ordering of each clock against each bound, at the edges.
        for vf in 0..4 {
            for vt in 0..4 {
                for tf in 0..4 {
                    for tt in 0..4 {
                        for va in 0..4 {
                            for ao in 0..4 {
                                let want = vf <= va && va < vt && tf <= ao && ao < tt;
                                assert_eq!(matches([vf, vt, tf, tt], va, ao), want);
                            }
                        }
                    }
                }
            }
        }
        assert!(matches([0, OPEN, 0, OPEN], OPEN - 1, OPEN - 1));
    }

    #[test]
    fn a_plan_is_not_history() {
        let plan = v("deploy", "friday", "p", (200, -1), (90, -1));
        assert!(history(&[plan], &[], AT, false).next().is_none());
    }

    #[test]
    fn a_restated_value_is_never_history_beside_itself() {
        let forgotten = v("ci", "Buildkite", "a", (0, -1), (10, 60));
        let again = v("ci", "Buildkite", "b", (0, -1), (70, -1));
        let changed = [forgotten, again.clone()];
        assert!(history(&changed, &[again], AT, false).next().is_none());
    }

    #[test]
    fn with_a_query_only_the_shown_keys_have_history() {
        let gone = v("db", "postgres", "a", (0, -1), (10, 60));
        let other = v("ci", "Jenkins", "c", (0, -1), (10, 60));
        let shown = [v("db", "mysql", "b", (0, -1), (60, -1))];
        let changed = [gone, other];
        assert_eq!(
            keys(history(&changed, &shown, AT, true)),
            [("db", "postgres")]
        );
        assert_eq!(keys(history(&changed, &shown, AT, false)).len(), 2);
    }
}
