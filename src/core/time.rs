//! Instants on the two clocks, as distinct newtypes so that a valid time can never be
//! passed where a transaction time is expected.
//!
//! Both are microseconds since the Unix epoch, UTC. `i64::MAX` stands for +∞ (an open
//! end), which keeps period tests (`from <= t < to`) uniform in Rust and in SQL.

use chrono::{DateTime, NaiveDate, SecondsFormat, Utc};
use std::fmt;

/// The sentinel for an open end (+∞) on either clock.
pub const INFINITY_MICROS: i64 = i64::MAX;

macro_rules! instant_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(i64);

        impl $name {
            /// +∞: the open end of a period.
            pub const INFINITY: $name = $name(INFINITY_MICROS);

            /// An instant from microseconds since the Unix epoch (UTC).
            pub const fn from_micros(micros: i64) -> Self {
                $name(micros)
            }

            /// Microseconds since the Unix epoch; `i64::MAX` for +∞.
            pub const fn micros(self) -> i64 {
                self.0
            }

            /// Whether this is the open end (+∞).
            pub const fn is_infinite(self) -> bool {
                self.0 == INFINITY_MICROS
            }

            /// Parses `YYYY-MM-DD` (midnight UTC) or RFC 3339 (any offset).
            pub fn parse(text: &str) -> Result<Self, TimeError> {
                parse_micros(text).map($name)
            }

            /// RFC 3339 in UTC with `Z`; fractional seconds only when non-zero.
            /// +∞ renders as `∞`.
            pub fn to_rfc3339(self) -> String {
                format_micros(self.0)
            }

            /// The `YYYY-MM-DD` UTC day of this instant.
            pub fn utc_day(self) -> String {
                match DateTime::<Utc>::from_timestamp_micros(self.0) {
                    Some(dt) => dt.format("%Y-%m-%d").to_string(),
                    None => "9999-12-31".to_string(),
                }
            }

            /// The next representable instant (one microsecond later).
            pub const fn next(self) -> Self {
                $name(self.0.saturating_add(1))
            }

            /// The next instant, if it is still inside the range mem7 can write
            /// (years 1 to 9999).
            pub const fn checked_next(self) -> Option<Self> {
                if self.0 >= MAX_INPUT_MICROS { None } else { Some($name(self.0 + 1)) }
            }

            /// Whether this finite instant lies in years 1 to 9999, the range mem7
            /// accepts as input and writes (every such instant names a day file
            /// `YYYY-MM-DD.md` and renders in RFC 3339).
            pub const fn in_range(self) -> bool {
                self.0 >= MIN_INPUT_MICROS && self.0 <= MAX_INPUT_MICROS
            }

            /// `None` for +∞, the instant otherwise.
            pub fn finite(self) -> Option<Self> {
                if self.is_infinite() { None } else { Some(self) }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.to_rfc3339())
            }
        }
    };
}

instant_type!(
    /// An instant of valid time: when a fact held in the world.
    ValidTime
);
instant_type!(
    /// An instant of transaction time: when mem7 recorded (believed) something.
    TxTime
);

impl TxTime {
    /// The same instant on the valid-time clock (a store without `valid_from` starts at
    /// its transaction time).
    pub const fn as_valid(self) -> ValidTime {
        ValidTime(self.0)
    }
}

impl ValidTime {
    /// The same instant on the transaction clock, for reads whose default `as_of` and
    /// `valid_at` are both "now".
    pub const fn as_tx(self) -> TxTime {
        TxTime(self.0)
    }
}

/// How far ahead of this machine's clock an entry may be recorded before mem7 says so
/// (5 minutes: more than clocks kept by NTP drift, less than a wrong time zone).
pub const AHEAD_TOLERANCE_MICROS: i64 = 5 * 60 * 1_000_000;

/// The instant after which an entry counts as recorded ahead of `now`.
pub fn ahead_threshold(now: TxTime) -> TxTime {
    TxTime::from_micros(now.micros().saturating_add(AHEAD_TOLERANCE_MICROS))
}

/// How far ahead of this machine's clock an entry may be recorded before it is *held
/// apart*: a century (36,525 days). mem7 follows entries recorded ahead of its clock, so
/// that clones whose clocks disagree answer alike and replays with `MEM7_NOW` work
/// (docs/temporal.md, "Clocks that disagree"); holding one apart gives that up, so only
/// a time no clock that is merely wrong gives is held: one a remote recorded at
/// 9999-12-31, which would push every later write past the last instant mem7 keeps. A
/// held entry is reported, and left out of the index (reads and writes go on as if it
/// had not arrived) until the clock comes within this bound of it.
pub const HOLD_APART_MICROS: i64 = 36_525 * 24 * 3600 * 1_000_000;

/// The instant after which an entry is held apart, given the ahead threshold the index
/// is handed ([`ahead_threshold`] of the clock).
pub fn hold_after(ahead_after: TxTime) -> TxTime {
    TxTime::from_micros(
        ahead_after
            .micros()
            .saturating_add(HOLD_APART_MICROS - AHEAD_TOLERANCE_MICROS),
    )
}

/// How far apart two instants are, in words, to the two largest units ("3 days 13
/// hours", "7 minutes", "less than a second"). The one wording of a span: `verify`'s
/// finding about an entry recorded ahead of the clock says it in its report, and the
/// front ends say it in their notes (`front::said`); kept here, below both, so that
/// neither reaches into the other or into `index` for it.
pub fn span_text(micros: i64) -> String {
    let secs = (micros / 1_000_000).max(0);
    let units = [
        ("day", 86_400),
        ("hour", 3_600),
        ("minute", 60),
        ("second", 1),
    ];
    let mut parts = Vec::new();
    let mut rest = secs;
    for (name, size) in units {
        let n = rest / size;
        if n > 0 && parts.len() < 2 {
            parts.push(format!("{n} {name}{}", if n == 1 { "" } else { "s" }));
            rest -= n * size;
        } else if !parts.is_empty() {
            break;
        }
    }
    if parts.is_empty() {
        "less than a second".to_string()
    } else {
        parts.join(" ")
    }
}

/// A time that could not be understood.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", describe(.text, *.out_of_range))]
pub struct TimeError {
    /// The text as given.
    pub text: String,
    /// It was a time, but outside years 1 to 9999.
    pub out_of_range: bool,
}

fn describe(text: &str, out_of_range: bool) -> String {
    if out_of_range {
        format!("{text:?} is outside the times mem7 keeps ({RANGE_TEXT})")
    } else {
        format!(
            "cannot read {text:?} as a time: use YYYY-MM-DD (midnight UTC) or RFC 3339 such as 2026-04-05T09:30:00Z"
        )
    }
}

/// Largest instant accepted as input: 9999-12-31T23:59:59.999999Z, so every finite
/// instant renders in RFC 3339, names a four-digit day file, and stays below the +∞
/// sentinel.
pub const MAX_INPUT_MICROS: i64 = 253_402_300_799_999_999;
/// Smallest instant accepted as input: 0001-01-01T00:00:00Z.
pub const MIN_INPUT_MICROS: i64 = -62_135_596_800_000_000;

/// The accepted range, as people read it (for error messages).
pub const RANGE_TEXT: &str = "0001-01-01T00:00:00Z … 9999-12-31T23:59:59.999999Z";

/// Whether `text` is an instant in one of the plain shapes mem7 writes, which
/// [`TxTime::parse`] surely reads: `YYYY-MM-DD`, or `YYYY-MM-DDTHH:MM:SS[.fraction]Z`,
/// with a real date and clock reading. A cheap test for a fast reader; `false` says
/// only "read it the slow way", not that it is wrong.
pub fn plainly_valid(text: &str) -> bool {
    let b = text.trim().as_bytes();
    let num = |r: std::ops::Range<usize>| -> Option<u32> {
        let digits = b.get(r)?;
        digits.iter().try_fold(0u32, |n, d| {
            d.is_ascii_digit().then(|| n * 10 + u32::from(d - b'0'))
        })
    };
    let date = || -> Option<()> {
        (b.get(4) == Some(&b'-') && b.get(7) == Some(&b'-')).then_some(())?;
        let (y, m, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
        (y >= 1).then_some(())?;
        NaiveDate::from_ymd_opt(y as i32, m, d).map(|_| ())
    };
    if b.len() == 10 {
        return date().is_some();
    }
    let clock = || -> Option<()> {
        (b.get(10) == Some(&b'T') && b.get(13) == Some(&b':') && b.get(16) == Some(&b':'))
            .then_some(())?;
        (num(11..13)? < 24 && num(14..16)? < 60 && num(17..19)? < 60).then_some(())?;
        let rest = &b[19..];
        let rest = match rest.strip_prefix(b".") {
            Some(f) => {
                let digits = f.iter().take_while(|c| c.is_ascii_digit()).count();
                (1..=9).contains(&digits).then_some(())?;
                &f[digits..]
            }
            None => rest,
        };
        (rest == b"Z").then_some(())
    };
    b.len() >= 20 && date().is_some() && clock().is_some()
}

fn parse_micros(text: &str) -> Result<i64, TimeError> {
    let err = || TimeError {
        text: text.to_string(),
        out_of_range: false,
    };
    let t = text.trim();
    let micros = if t.len() == 10 {
        let date = NaiveDate::parse_from_str(t, "%Y-%m-%d").map_err(|_| err())?;
        date.and_hms_opt(0, 0, 0)
            .ok_or_else(err)?
            .and_utc()
            .timestamp_micros()
    } else {
        let dt = DateTime::parse_from_rfc3339(t).map_err(|_| err())?;
        let utc = dt.with_timezone(&Utc);
        // Truncate below a microsecond: mem7's instants have microsecond precision.
        utc.timestamp_micros()
    };
    if !(MIN_INPUT_MICROS..=MAX_INPUT_MICROS).contains(&micros) {
        return Err(TimeError {
            text: text.to_string(),
            out_of_range: true,
        });
    }
    Ok(micros)
}

fn format_micros(micros: i64) -> String {
    if micros == INFINITY_MICROS {
        return "∞".to_string();
    }
    match DateTime::<Utc>::from_timestamp_micros(micros) {
        Some(dt) => dt.to_rfc3339_opts(SecondsFormat::AutoSi, true),
        None => format!("@{micros}µs"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plainly_valid_times_parse_and_odd_ones_go_the_slow_way() {
        for t in [
            "2026-04-05",
            "2026-04-05T09:30:00Z",
            "2026-04-05T09:30:00.000001Z",
            "9999-12-31T23:59:59.999999Z",
        ] {
            assert!(plainly_valid(t), "{t}");
            assert!(TxTime::parse(t).is_ok(), "{t}");
        }
        for t in [
            "2026-02-30",
            "2026-13-01T00:00:00Z",
            "2026-04-05T24:00:00Z",
            "2026-04-05T09:30:00+02:00",
            "yesterday",
            "",
            "2026-04-05T09:30:00.Z",
            "0000-01-01",
        ] {
            assert!(!plainly_valid(t), "{t}");
        }
    }

    #[test]
    fn dates_are_midnight_utc() {
        let t = ValidTime::parse("2026-04-05").unwrap();
        assert_eq!(t.to_rfc3339(), "2026-04-05T00:00:00Z");
    }

    #[test]
    fn offsets_convert_to_utc_and_keep_microseconds() {
        let t = TxTime::parse("2026-04-05T09:30:00.000123+02:00").unwrap();
        assert_eq!(t.to_rfc3339(), "2026-04-05T07:30:00.000123Z");
        assert_eq!(TxTime::parse(&t.to_rfc3339()).unwrap(), t);
    }

    #[test]
    fn nonsense_is_refused_with_the_text() {
        let e = ValidTime::parse("next tuesday").unwrap_err();
        assert!(e.to_string().contains("next tuesday"));
        assert!(ValidTime::parse("2026-13-01").is_err());
        assert!(ValidTime::parse("").is_err());
    }

    #[test]
    fn years_outside_1_to_9999_are_refused_by_name() {
        for text in [
            "0000-06-01T00:00:00Z",
            "0000-12-31T23:59:59.999999Z",
            "10000-01-01T00:00:00Z",
            "9999-12-31T23:59:59.999999-00:01",
        ] {
            let e = TxTime::parse(text).unwrap_err();
            assert!(e.out_of_range || text.starts_with("10000"), "{text}: {e}");
        }
        let first = TxTime::parse("0001-01-01T00:00:00Z").unwrap();
        assert!(first.in_range());
        assert!(!TxTime::from_micros(first.micros() - 1).in_range());
        let last = TxTime::parse("9999-12-31T23:59:59.999999Z").unwrap();
        assert!(last.in_range());
        assert_eq!(last.checked_next(), None);
        assert_eq!(last.utc_day(), "9999-12-31");
        assert_eq!(
            TxTime::from_micros(5).checked_next(),
            Some(TxTime::from_micros(6))
        );
    }

    #[test]
    fn days_and_infinity() {
        let t = TxTime::parse("2026-02-15T23:59:59.999999Z").unwrap();
        assert_eq!(t.utc_day(), "2026-02-15");
        assert_eq!(t.next().utc_day(), "2026-02-16");
        assert_eq!(ValidTime::INFINITY.to_rfc3339(), "∞");
        assert!(ValidTime::INFINITY.finite().is_none());
    }
}
