//! What a read shows besides its matches: the recent changes a context block lists as
//! `[history]`. A temporal rule, so it lives beside the match rule it is the complement
//! of ([`Version::matches`]), not in a front end.

use super::Version;
use super::time::{TxTime, ValidTime};

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
