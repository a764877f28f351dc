//! The write rules of docs/temporal.md as pure functions over valid-time periods.
//!
//! A store at transaction time N is planned against the versions of its key that are
//! believed at N. The plan says which of them stop being believed, which remnants of them
//! stay believed (as new versions), and which period the new version covers. Applying the
//! plan is the caller's business (an in-memory fold or SQL), so both paths share one rule.

use super::time::{TxTime, ValidTime};

/// How a store states the end of its valid period.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValidEnd {
    /// No end given: fill until the next known change of the key (or +∞).
    Open,
    /// `infinity`: override everything from `valid_from` on.
    Infinity,
    /// An explicit end, exclusive.
    At(ValidTime),
}

/// A half-open valid-time period `[from, to)`; `to` may be +∞.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Period {
    /// Inclusive start.
    pub from: ValidTime,
    /// Exclusive end (`ValidTime::INFINITY` when open).
    pub to: ValidTime,
}

impl Period {
    /// Whether `t` lies in `[from, to)`.
    pub fn contains(self, t: ValidTime) -> bool {
        self.from <= t && t < self.to
    }

    /// Whether two half-open periods share an instant.
    pub fn overlaps(self, other: Period) -> bool {
        self.from < other.to && other.from < self.to
    }
}

/// What a store does to the believed versions of its key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// The period the new version covers.
    pub new: Period,
    /// Indices (into the believed slice) of versions that stop being believed at N.
    pub close: Vec<usize>,
    /// Parts of closed versions outside `new` that stay believed: (index of the closed
    /// version whose content they carry, the remaining period).
    pub remnants: Vec<(usize, Period)>,
}

/// A store whose end is not after its start.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("valid_to ({to}) must be after valid_from ({from})")]
pub struct EmptyPeriod {
    /// The start given.
    pub from: ValidTime,
    /// The end given.
    pub to: ValidTime,
}

/// The end an open-ended write starting at `from` gets: the start of the earliest
/// believed version that starts strictly after `from`, else +∞.
pub fn open_end(believed: &[Period], from: ValidTime) -> ValidTime {
    believed
        .iter()
        .map(|p| p.from)
        .filter(|&start| start > from)
        .min()
        .unwrap_or(ValidTime::INFINITY)
}

/// Resolves the period a store covers, given what is believed about its key.
pub fn resolve_period(
    believed: &[Period],
    from: ValidTime,
    end: ValidEnd,
) -> Result<Period, EmptyPeriod> {
    let to = match end {
        ValidEnd::Open => open_end(believed, from),
        ValidEnd::Infinity => ValidTime::INFINITY,
        ValidEnd::At(to) => to,
    };
    if to <= from {
        return Err(EmptyPeriod { from, to });
    }
    Ok(Period { from, to })
}

/// The period a value of a key of many values covers: it replaces nothing, so an open
/// end is not filled up to a next value: it holds for good.
pub fn resolve_added(from: ValidTime, end: ValidEnd) -> Result<Period, EmptyPeriod> {
    resolve_period(&[], from, end)
}

/// Plans a store over `[from, end)` against the versions believed at its transaction
/// time (SQL:2011 `DELETE … FOR PORTION OF` followed by an insert).
pub fn plan_store(
    believed: &[Period],
    from: ValidTime,
    end: ValidEnd,
) -> Result<Plan, EmptyPeriod> {
    let new = resolve_period(believed, from, end)?;
    let mut close = Vec::new();
    let mut remnants = Vec::new();
    for (i, old) in believed.iter().enumerate() {
        if !old.overlaps(new) {
            continue;
        }
        close.push(i);
        if old.from < new.from {
            remnants.push((
                i,
                Period {
                    from: old.from,
                    to: new.from,
                },
            ));
        }
        if old.to > new.to {
            remnants.push((
                i,
                Period {
                    from: new.to,
                    to: old.to,
                },
            ));
        }
    }
    Ok(Plan {
        new,
        close,
        remnants,
    })
}

/// A confirmation: a store with neither `valid_from` nor `valid_to` whose value already
/// holds at `at` (the writer's clock, where the store would start) in a version that
/// would keep the same end. Returns the index of that version (so the caller can say
/// "unchanged: holds since …").
///
/// `same_content(i)` tells whether believed version `i` carries the value being stored.
pub fn confirmation(
    believed: &[Period],
    at: ValidTime,
    same_content: impl Fn(usize) -> bool,
) -> Option<usize> {
    let end = open_end(believed, at);
    believed
        .iter()
        .enumerate()
        .find(|(i, p)| p.contains(at) && p.to == end && same_content(*i))
        .map(|(i, _)| i)
}

/// Whether a version with these clocks answers a read at (`valid_at`, `as_of`): the
/// read match rule, [`super::read_rule::MATCH`].
pub fn matches(
    valid: Period,
    tx_from: TxTime,
    tx_to: TxTime,
    valid_at: ValidTime,
    as_of: TxTime,
) -> bool {
    super::read_rule::matches(
        [
            valid.from.micros(),
            valid.to.micros(),
            tx_from.micros(),
            tx_to.micros(),
        ],
        valid_at.micros(),
        as_of.micros(),
    )
}

/// Whether a version believed over `[tx_from, tx_to)` was believed at `as_of`.
pub fn believed_at(tx_from: TxTime, tx_to: TxTime, as_of: TxTime) -> bool {
    tx_from <= as_of && as_of < tx_to
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(m: i64) -> ValidTime {
        ValidTime::from_micros(m)
    }
    fn p(from: i64, to: i64) -> Period {
        Period {
            from: v(from),
            to: if to < 0 { ValidTime::INFINITY } else { v(to) },
        }
    }

    /// Each row: believed periods, store (from, end) → new period, closed, remnants.
    #[test]
    fn table_of_store_plans() {
        let inf = -1;
        #[allow(clippy::type_complexity)]
        let rows: Vec<(
            Vec<Period>,
            i64,
            ValidEnd,
            Period,
            Vec<usize>,
            Vec<(usize, Period)>,
        )> = vec![
            // Nothing believed: open-ended write runs to +∞.
            (vec![], 10, ValidEnd::Open, p(10, inf), vec![], vec![]),
            // A later value replaces an open one: the old keeps [10, 20).
            (
                vec![p(10, inf)],
                20,
                ValidEnd::Open,
                p(20, inf),
                vec![0],
                vec![(0, p(10, 20))],
            ),
            // Late-arriving older value fills history up to the next known change.
            (
                vec![p(10, inf)],
                5,
                ValidEnd::Open,
                p(5, 10),
                vec![],
                vec![],
            ),
            // The worked example's third write: starts inside Cloudflare's open period.
            (
                vec![p(0, 20), p(20, inf)],
                25,
                ValidEnd::Open,
                p(25, inf),
                vec![1],
                vec![(1, p(20, 25))],
            ),
            // An explicit window punches a hole and leaves both sides believed.
            (
                vec![p(0, inf)],
                10,
                ValidEnd::At(v(20)),
                p(10, 20),
                vec![0],
                vec![(0, p(0, 10)), (0, p(20, inf))],
            ),
            // infinity overrides everything after its start.
            (
                vec![p(0, 10), p(10, 20), p(30, inf)],
                5,
                ValidEnd::Infinity,
                p(5, inf),
                vec![0, 1, 2],
                vec![(0, p(0, 5))],
            ),
            // Open-ended write in a gap fills only the gap.
            (
                vec![p(0, 10), p(30, inf)],
                15,
                ValidEnd::Open,
                p(15, 30),
                vec![],
                vec![],
            ),
        ];
        for (believed, from, end, new, close, remnants) in rows {
            let plan = plan_store(&believed, v(from), end).unwrap();
            assert_eq!(
                plan,
                Plan {
                    new,
                    close,
                    remnants
                },
                "believed {believed:?} store {from} {end:?}"
            );
        }
    }

    #[test]
    fn empty_periods_are_refused() {
        assert!(plan_store(&[], v(10), ValidEnd::At(v(10))).is_err());
        assert!(plan_store(&[], v(10), ValidEnd::At(v(5))).is_err());
    }

    #[test]
    fn confirmation_needs_same_value_and_same_end() {
        let believed = [p(0, 20), p(20, inf_p())];
        let now = v(5);
        assert_eq!(confirmation(&believed, now, |i| i == 0), Some(0));
        assert_eq!(confirmation(&believed, now, |_| false), None);
        // A version that holds but whose end differs from the open end is not confirmed.
        let believed = [p(0, 10), p(20, inf_p())];
        assert_eq!(confirmation(&believed, now, |i| i == 0), None);
    }

    fn inf_p() -> i64 {
        -1
    }
}
