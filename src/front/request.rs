//! Requests as the front ends receive them (CLI flags, MCP tool arguments): text that
//! still has to become times and checked requests. Both front ends call these, so a
//! value means the same and fails with the same message wherever it comes from; only
//! the name of the field (`--valid-at` or `valid_at`) differs.

use crate::core::time::{TxTime, ValidTime};
use crate::core::{Tier, ValidEnd};
use crate::error::{Error, Result};

/// Parses a valid-time instant given as `field`.
pub fn valid_time(field: &str, text: &str) -> Result<ValidTime> {
    ValidTime::parse(text).map_err(|e| {
        Error::input(
            format!("{field}: {e}"),
            "for example 2026-04-05 or 2026-04-05T09:30:00Z",
        )
    })
}

/// Parses a transaction-time instant given as `field`.
pub fn tx_time(field: &str, text: &str) -> Result<TxTime> {
    TxTime::parse(text).map_err(|e| {
        Error::input(
            format!("{field}: {e}"),
            "for example 2026-04-11 or 2026-04-11T18:00:00Z",
        )
    })
}

/// Parses the end of a validity: an instant, or `infinity` (`∞`) to override every
/// later version.
pub fn valid_end(field: &str, text: &str) -> Result<ValidEnd> {
    if text.eq_ignore_ascii_case("infinity") || text == "∞" {
        Ok(ValidEnd::Infinity)
    } else {
        Ok(ValidEnd::At(valid_time(field, text)?))
    }
}

/// The two read clocks as given (by these field names): `valid_at` defaulting to `now`,
/// and `as_of` when given. A missing `as_of` means "what mem7 believes now", which only
/// the engine can resolve ([`crate::engine::Engine::clocks`]): it includes entries
/// recorded ahead of this clock.
pub fn read_times(
    (valid_field, valid_at): (&str, Option<&str>),
    (as_of_field, as_of): (&str, Option<&str>),
    now: TxTime,
) -> Result<(ValidTime, Option<TxTime>)> {
    let valid_at = match valid_at {
        Some(t) => valid_time(valid_field, t)?,
        None => now.as_valid(),
    };
    let as_of = as_of.map(|t| tx_time(as_of_field, t)).transpose()?;
    Ok((valid_at, as_of))
}

/// Reads line `n` of a JSON Lines input as one `T`: a line that is not such an object is
/// an input error naming the line and the column (serde_json counts lines within the
/// one line, so only the column means anything), with `hint` as the fix.
pub fn json_line<T: serde::de::DeserializeOwned>(line: &str, n: usize, hint: &str) -> Result<T> {
    serde_json::from_str(line).map_err(|e| {
        Error::input(
            format!(
                "line {n}: {} (column {})",
                e.to_string().split(" at line ").next().unwrap_or(""),
                e.column()
            ),
            hint,
        )
    })
}

/// A tier named by a flag or a tool argument (`field`); `None` when not given.
pub fn tier(field: &str, text: Option<&str>) -> Result<Option<Tier>> {
    let Some(text) = text else {
        return Ok(None);
    };
    Tier::parse(text.trim()).map(Some).ok_or_else(|| {
        Error::input(
            format!("{field} `{text}` is not a tier"),
            format!(
                "give {field} as `inferred` (a guess to verify) or `asserted` (stated by a person)"
            ),
        )
    })
}

/// A scope named by a tool argument (`field`); `None` when not given.
pub fn level(field: &str, text: Option<&str>) -> Result<Option<crate::core::level::Level>> {
    let Some(text) = text else {
        return Ok(None);
    };
    crate::core::level::Level::parse(text.trim())
        .map(Some)
        .ok_or_else(|| {
            Error::input(
                format!("{field} `{text}` is not a scope"),
                format!(
                    "give {field} as `local` (this checkout), `project` (the project's workspace) or `user` (yours, everywhere), or leave it out"
                ),
            )
        })
}

/// A search mode named by a tool argument or the page's `mode` (the command line's
/// `--mode` is clap's, the same four words): `lexical`, `semantic`, `hybrid`, or none
/// (auto).
pub fn search_mode(mode: Option<&str>) -> Result<crate::engine::SearchMode> {
    use crate::engine::SearchMode;
    match mode.map(str::trim) {
        None | Some("") => Ok(SearchMode::Auto),
        Some(word) => SearchMode::named(word).ok_or_else(|| {
            Error::input(
                format!("mode: {word:?} is not a search mode"),
                "use lexical, semantic or hybrid (or leave it out)",
            )
        }),
    }
}
