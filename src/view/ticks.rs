//! The words under the picture's ticks: each label as short as its neighbours allow.
//!
//! An axis has one precision, the coarsest at which every labelled tick still differs
//! from the next labelled one: years, months or days when the ticks are at least that far
//! apart (a span of years reads in years; dates typed as dates keep their day),
//! otherwise a time of day to the minute, second, millisecond or microsecond. A time of day is cut to the minute only when every
//! labelled tick is a whole minute, so a write's label names its second as `history`
//! does. With a time of day the date is written once, on the first label and wherever it
//! changes, instead of on every tick.
//!
//! Which ticks carry a label is the caller's geometry ([`fit`] tries every k-th tick for
//! growing k); this module only decides the words, so it can be tested as data.

use chrono::{DateTime, Datelike, Timelike, Utc};

/// How much of an instant an axis's labels name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Precision {
    Year,
    Month,
    Day,
    Minute,
    Second,
    Milli,
    Micro,
}

/// One tick's label.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Label {
    /// Which tick (an index into the axis's ticks).
    pub index: usize,
    /// The words at the tick: a date, month or year, or a time of day.
    pub text: String,
    /// On a time-of-day axis, the date, where it is new (the first label, a new day).
    pub date: Option<String>,
}

const DAY: i64 = 86_400_000_000;

/// The fields of an instant, UTC.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Parts {
    year: i32,
    month: u32,
    day: u32,
    hour: u32,
    minute: u32,
    second: u32,
    micro: u32,
}

fn parts(micros: i64) -> Parts {
    // Instants mem7 writes lie in years 1 to 9999; anything else reads as the epoch
    // rather than failing to draw.
    let t = DateTime::<Utc>::from_timestamp_micros(micros).unwrap_or_default();
    Parts {
        year: t.year(),
        month: t.month(),
        day: t.day(),
        hour: t.hour(),
        minute: t.minute(),
        second: t.second(),
        micro: t.timestamp_subsec_micros(),
    }
}

impl Parts {
    /// The instant cut to the fields that `precision` shows (the start of its year,
    /// month, day, minute…).
    fn cut(self, precision: Precision) -> Parts {
        use Precision::*;
        let keep = |p: Precision, v: u32, start: u32| if precision >= p { v } else { start };
        Parts {
            year: self.year,
            month: keep(Month, self.month, 1),
            day: keep(Day, self.day, 1),
            hour: keep(Minute, self.hour, 0),
            minute: keep(Minute, self.minute, 0),
            second: keep(Second, self.second, 0),
            micro: match precision {
                Milli => self.micro / 1000 * 1000,
                Micro => self.micro,
                _ => 0,
            },
        }
    }

    fn date(self) -> String {
        format!("{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }

    fn midnight(self) -> bool {
        (self.hour, self.minute, self.second, self.micro) == (0, 0, 0, 0)
    }

    fn text(self, precision: Precision) -> String {
        let hm = format!("{:02}:{:02}", self.hour, self.minute);
        match precision {
            Precision::Year => format!("{:04}", self.year),
            Precision::Month => format!("{:04}-{:02}", self.year, self.month),
            Precision::Day => self.date(),
            Precision::Minute => hm,
            Precision::Second => format!("{hm}:{:02}", self.second),
            Precision::Milli => format!("{hm}:{:02}.{:03}", self.second, self.micro / 1000),
            Precision::Micro => format!("{hm}:{:02}.{:06}", self.second, self.micro),
        }
    }
}

/// The coarsest precision that tells each of `ticks` (sorted) from the next.
pub fn precision(ticks: &[i64]) -> Precision {
    use Precision::*;
    let ps: Vec<Parts> = ticks.iter().map(|&t| parts(t)).collect();
    let differ = |p: Precision| ps.windows(2).all(|w| w[0].cut(p) != w[1].cut(p));
    let min_gap = ticks.windows(2).map(|w| w[1] - w[0]).min();
    // Dates as people type them (midnights) keep their day, unless they are all
    // firsts of months or of years.
    let dates = ps.iter().all(|x| x.midnight());
    for (p, unit) in [(Year, 365 * DAY), (Month, 28 * DAY), (Day, DAY)] {
        let spaced = min_gap.is_some_and(|g| g >= unit);
        let exact = ps.iter().all(|x| x.cut(p) == *x);
        if differ(p) && (exact || (spaced && !dates)) {
            return p;
        }
    }
    if ps.iter().all(|x| x.cut(Minute) == *x) && differ(Minute) {
        return Minute;
    }
    [Second, Milli]
        .into_iter()
        .find(|&p| differ(p))
        .unwrap_or(Micro)
}

/// The labels of the ticks at `indices` (ascending) of `ticks`.
pub fn labels(ticks: &[i64], indices: &[usize]) -> Vec<Label> {
    let chosen: Vec<i64> = indices.iter().map(|&i| ticks[i]).collect();
    let precision = precision(&chosen);
    let mut last_date: Option<String> = None;
    indices
        .iter()
        .zip(&chosen)
        .map(|(&index, &t)| {
            let p = parts(t);
            let date = (precision >= Precision::Minute)
                .then(|| p.date())
                .filter(|d| last_date.as_ref() != Some(d));
            if let Some(d) = &date {
                last_date = Some(d.clone());
            }
            Label {
                index,
                text: p.text(precision),
                date,
            }
        })
        .collect()
}

/// The labels of every k-th tick (from the first), for the smallest k that `fits`
/// accepts (it is given the labels and k); one label when none does.
pub fn fit(ticks: &[i64], fits: impl Fn(&[Label], usize) -> bool) -> Vec<Label> {
    let n = ticks.len();
    for k in 1..n {
        let indices: Vec<usize> = (0..n).step_by(k).collect();
        let labels = labels(ticks, &indices);
        if fits(&labels, k) {
            return labels;
        }
    }
    labels(ticks, if n == 0 { &[] } else { &[0] })
}

/// An instant in full, as short as it stays exact: the date alone at midnight, else the
/// date and the time to the second (or the fraction it has).
pub fn full(micros: i64) -> String {
    let p = parts(micros);
    if p.midnight() {
        return p.date();
    }
    let precision = if p.micro == 0 {
        Precision::Second
    } else if p.micro.is_multiple_of(1000) {
        Precision::Milli
    } else {
        Precision::Micro
    };
    format!("{} {}", p.date(), p.text(precision))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> i64 {
        crate::core::time::ValidTime::parse(text).unwrap().micros()
    }

    fn words(ticks: &[&str]) -> Vec<String> {
        let ticks: Vec<i64> = ticks.iter().map(|t| at(t)).collect();
        let all: Vec<usize> = (0..ticks.len()).collect();
        labels(&ticks, &all)
            .into_iter()
            .map(|l| match l.date {
                Some(d) => format!("{} / {d}", l.text),
                None => l.text,
            })
            .collect()
    }

    #[test]
    fn labels_are_as_short_as_their_neighbours_allow() {
        let table: &[(&[&str], &[&str])] = &[
            // Writes on one day: the date once, then times to the second.
            (
                &[
                    "2026-12-03T09:11:21.123456Z",
                    "2026-12-03T09:12:22.5Z",
                    "2026-12-03T10:00:00Z",
                ],
                &["09:11:21 / 2026-12-03", "09:12:22", "10:00:00"],
            ),
            // Whole minutes.
            (
                &["2026-12-03T09:00:00Z", "2026-12-03T09:30:00Z"],
                &["09:00 / 2026-12-03", "09:30"],
            ),
            // Milliseconds apart: the milliseconds, and only they.
            (
                &[
                    "2026-12-03T09:00:00.001Z",
                    "2026-12-03T09:00:00.002Z",
                    "2026-12-03T09:00:00.0025Z",
                ],
                &[
                    "09:00:00.001000 / 2026-12-03",
                    "09:00:00.002000",
                    "09:00:00.002500",
                ],
            ),
            (
                &["2026-12-03T09:00:00.001Z", "2026-12-03T09:00:00.002Z"],
                &["09:00:00.001 / 2026-12-03", "09:00:00.002"],
            ),
            // Across midnight, minutes apart: the new date where it changes.
            (
                &["2026-12-03T23:59:00Z", "2026-12-04T00:01:00Z"],
                &["23:59 / 2026-12-03", "00:01 / 2026-12-04"],
            ),
            // Days, months, years.
            (
                &["2026-04-05", "2026-04-10T12:00:00Z", "2026-04-12T08:00:00Z"],
                &["2026-04-05", "2026-04-10", "2026-04-12"],
            ),
            (
                &["2026-02-15", "2026-03-20", "2026-05-01"],
                &["2026-02-15", "2026-03-20", "2026-05-01"],
            ),
            (
                &[
                    "2026-02-15T10:00:00Z",
                    "2026-03-20T10:00:00Z",
                    "2026-06-01T10:00:00Z",
                ],
                &["2026-02", "2026-03", "2026-06"],
            ),
            (
                &[
                    "2019-03-01T10:00:00Z",
                    "2022-07-01T10:00:00Z",
                    "2026-12-03T10:00:00Z",
                ],
                &["2019", "2022", "2026"],
            ),
            // One tick.
            (&["2026-12-03T09:11:21.5Z"], &["09:11:21 / 2026-12-03"]),
            (&["2026-12-03"], &["2026-12-03"]),
            (&["2024-01-01", "2026-01-01"], &["2024", "2026"]),
            (&["2026-01-01", "2026-03-01"], &["2026-01", "2026-03"]),
        ];
        for (ticks, want) in table {
            assert_eq!(words(ticks), *want, "{ticks:?}");
        }
    }

    #[test]
    fn fit_labels_every_kth_tick_until_they_fit() {
        let ticks: Vec<i64> = (0..10).map(|i| at("2026-12-03T09:00:00Z") + i).collect();
        let got = fit(&ticks, |_, k| k >= 3);
        let idx: Vec<usize> = got.iter().map(|l| l.index).collect();
        assert_eq!(idx, [0, 3, 6, 9]);
        // Fewer labels, coarser neighbours: still microseconds apart.
        assert_eq!(got[1].text, "09:00:00.000003");
        assert_eq!(fit(&ticks, |_, _| false).len(), 1);
        assert!(fit(&[], |_, _| true).is_empty());
    }

    #[test]
    fn full_names_an_instant_exactly() {
        assert_eq!(full(at("2026-04-10")), "2026-04-10");
        assert_eq!(full(at("2026-04-10T08:00:00Z")), "2026-04-10 08:00:00");
        assert_eq!(
            full(at("2026-04-10T08:00:00.25Z")),
            "2026-04-10 08:00:00.250"
        );
        assert_eq!(
            full(at("2026-04-10T08:00:00.000001Z")),
            "2026-04-10 08:00:00.000001"
        );
    }
}
