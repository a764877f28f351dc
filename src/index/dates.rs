//! The times a question names (`on 9 November, 2022`, `in July 2023`, `2023-07-07`), read
//! apart from its words: a question about a store of dated facts often names the time it
//! asks about, and the facts' valid times answer that better than their words do
//! (`index::fusion` lets the facts that became valid then gain a little).

/// A time a question names: the facts that became valid within it are what the question
/// is about ("What did Maria share on 16 June, 2023?", "who joined in March 2024?").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NamedTime {
    /// Valid times from `from` (inclusive) to `to` (exclusive), in microseconds since the
    /// epoch: a day (with [`DAY_SLACK_DAYS`] either side), a month of a year.
    Span { from: i64, to: i64 },
    /// A month of any year ("in July").
    Month(u32),
}

/// The days either side of a named day that count as that day: a person names a day in
/// their own time zone, and valid times are kept in UTC.
pub const DAY_SLACK_DAYS: i64 = 1;

const MONTHS: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

impl NamedTime {
    /// Whether a fact valid from `valid_from` (microseconds since the epoch) became
    /// valid within this time.
    pub fn holds(&self, valid_from: i64) -> bool {
        match *self {
            NamedTime::Span { from, to } => from <= valid_from && valid_from < to,
            NamedTime::Month(m) => chrono::DateTime::from_timestamp_micros(valid_from)
                .is_some_and(|t| chrono::Datelike::month(&t) == m),
        }
    }
}

/// The times `text` names: a day (`9 November, 2022`, `November 9th 2022`,
/// `2022-11-09`), a month of a year (`November 2022`, `2022-11`), or a month alone after
/// `in` or `during`, capitalised (`in July`; a lower-case `may` is a modal). A day or
/// month without its year, other than that, is not read (`August 11 and August 15 2023`
/// names the 15th only).
pub fn named_times(text: &str) -> Vec<NamedTime> {
    use chrono::NaiveDate;
    let words: Vec<&str> = text
        .split(|c: char| c.is_whitespace() || c == ',')
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric() && c != '-'))
        .filter(|w| !w.is_empty())
        .collect();
    let month = |w: &str| -> Option<u32> {
        let lower = w.to_lowercase();
        let at = MONTHS
            .iter()
            .position(|m| *m == lower || (lower.len() == 3 && m.starts_with(lower.as_str())))?;
        Some(at as u32 + 1)
    };
    let day = |w: &str| -> Option<u32> {
        let digits = ["st", "nd", "rd", "th"]
            .iter()
            .find_map(|s| w.strip_suffix(s))
            .unwrap_or(w);
        let d: u32 = digits.parse().ok()?;
        (1..=31).contains(&d).then_some(d)
    };
    let year = |w: &str| -> Option<i32> {
        (w.len() == 4 && w.bytes().all(|b| b.is_ascii_digit()))
            .then(|| w.parse().ok())
            .flatten()
            .filter(|y| *y >= 1)
    };
    let micros = |d: NaiveDate| {
        d.and_time(chrono::NaiveTime::MIN)
            .and_utc()
            .timestamp_micros()
    };
    let a_day = |y: i32, m: u32, d: u32| {
        let date = NaiveDate::from_ymd_opt(y, m, d)?;
        let slack = chrono::Days::new(DAY_SLACK_DAYS as u64);
        Some(NamedTime::Span {
            from: micros(date.checked_sub_days(slack)?),
            to: micros(date.checked_add_days(chrono::Days::new(1 + DAY_SLACK_DAYS as u64))?),
        })
    };
    let a_month = |y: i32, m: u32| {
        let first = NaiveDate::from_ymd_opt(y, m, 1)?;
        Some(NamedTime::Span {
            from: micros(first),
            to: micros(first.checked_add_months(chrono::Months::new(1))?),
        })
    };
    let mut out = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let w = |k: usize| words.get(i + k).copied().unwrap_or("");
        let (found, used) = if let Ok(d) = NaiveDate::parse_from_str(w(0), "%Y-%m-%d") {
            (
                a_day(
                    chrono::Datelike::year(&d),
                    chrono::Datelike::month(&d),
                    chrono::Datelike::day(&d),
                ),
                1,
            )
        } else if let Some((y, m)) = w(0)
            .split_once('-')
            .filter(|(y, m)| m.len() == 2 && year(y).is_some())
            .and_then(|(y, m)| {
                Some((
                    year(y)?,
                    m.parse::<u32>().ok().filter(|m| (1..=12).contains(m))?,
                ))
            })
        {
            (a_month(y, m), 1)
        } else if let (Some(d), Some(m), Some(y)) = (day(w(0)), month(w(1)), year(w(2))) {
            (a_day(y, m, d), 3)
        } else if let (Some(m), Some(d), Some(y)) = (month(w(0)), day(w(1)), year(w(2))) {
            (a_day(y, m, d), 3)
        } else if let (Some(m), Some(y)) = (month(w(0)), year(w(1))) {
            (a_month(y, m), 2)
        } else if i > 0
            && matches!(words[i - 1].to_lowercase().as_str(), "in" | "during")
            && w(0).len() > 3
            && w(0).starts_with(char::is_uppercase)
            && let Some(m) = month(w(0))
        {
            (Some(NamedTime::Month(m)), 1)
        } else {
            (None, 1)
        };
        out.extend(found);
        i += used;
    }
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_question_names_days_and_months() {
        let day = |y, m, d| {
            let t = chrono::NaiveDate::from_ymd_opt(y, m, d)
                .unwrap()
                .and_time(chrono::NaiveTime::MIN)
                .and_utc()
                .timestamp_micros();
            t + 12 * 3_600_000_000
        };
        let nov9 = named_times("What dish did Nate make on 9 November, 2022?");
        assert_eq!(nov9.len(), 1, "{nov9:?}");
        assert!(nov9[0].holds(day(2022, 11, 9)));
        // A day either side (time zones), no further.
        assert!(nov9[0].holds(day(2022, 11, 10)));
        assert!(!nov9[0].holds(day(2022, 11, 11)));
        assert!(!nov9[0].holds(day(2023, 11, 9)));
        for text in [
            "what happened on November 9th, 2022",
            "what happened on 2022-11-09",
            "what happened on Nov 9 2022",
        ] {
            assert_eq!(named_times(text), nov9, "{text}");
        }
        let month = named_times("Where did Joanna travel to in July 2022?");
        assert_eq!(month.len(), 1);
        assert!(month[0].holds(day(2022, 7, 31)));
        assert!(!month[0].holds(day(2022, 8, 1)));
        assert_eq!(named_times("who joined in 2022-07"), month);
        // A month alone, after `in`: that month of any year.
        assert_eq!(
            named_times("When did Melanie go camping in July?"),
            [NamedTime::Month(7)]
        );
        assert!(NamedTime::Month(7).holds(day(2019, 7, 4)));
        // Not a time: a modal, a number, a month without `in`.
        assert!(named_times("may I ask what 2022 looked like").is_empty());
        assert!(named_times("who leads march planning").is_empty());
        assert!(named_times("how many of the 12 services").is_empty());
    }
}
