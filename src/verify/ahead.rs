//! Entries recorded ahead of this machine's clock: `verify`'s warnings (found as the
//! files are read for their chain) and `recorded_ahead` on its own.

use super::{Finding, FindingKind, in_parallel};
use crate::error::Result;
use crate::store::Workspace;

/// Warnings for entries recorded more than five minutes after `now` (this machine's
/// clock): a clock that runs ahead somewhere, or a `MEM7_NOW` in the future. They break
/// nothing (reads include them: what mem7 believes now), but a person should know.
///
/// Reads the `recorded:` lines only, so it costs one search through the bytes.
pub fn recorded_ahead(ws: &Workspace, now: crate::core::time::TxTime) -> Result<Vec<Finding>> {
    let (threshold, second) = threshold(now);
    let _shared = ws.lock_shared()?;
    let names: Vec<String> = ws.scan()?.into_iter().map(|f| f.name).collect();
    let per_file = in_parallel(
        &names,
        || (),
        |_, _, name| {
            // Read, not mapped: people, git and file syncers may cut a day file short
            // without mem7's lock, and a mapped file cut short faults the process.
            // Bytes that are not UTF-8 read as `?` (verify's own finding names them).
            let text = ws.read(name)?;
            Ok(ahead_in(name, &text, threshold, &second, now))
        },
    )?;
    Ok(per_file.into_iter().flatten().collect())
}

/// The instant after which an entry is ahead of `now`, and its second as text
/// (`YYYY-MM-DDTHH:MM:SS`): a `recorded:` in UTC whose second is earlier is not ahead,
/// which settles nearly every entry without parsing a time.
pub(super) fn threshold(now: crate::core::time::TxTime) -> (crate::core::time::TxTime, String) {
    let threshold = crate::core::time::ahead_threshold(now);
    let second = threshold
        .to_rfc3339()
        .get(..19)
        .unwrap_or_default()
        .to_string();
    (threshold, second)
}

/// The entries of one file recorded after `threshold` (whose second, as text, is
/// `second`), each named at its heading.
pub(super) fn ahead_in(
    name: &str,
    text: &str,
    threshold: crate::core::time::TxTime,
    second: &str,
    now: crate::core::time::TxTime,
) -> Vec<Finding> {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    // Headings are met in order, so their lines are counted from the last one.
    let (mut counted_to, mut lines_before) = (0usize, 0u32);
    for at in memchr::memmem::find_iter(bytes, b"recorded:") {
        if at > 0 && bytes[at - 1] != b'\n' {
            continue;
        }
        let line_end = memchr::memchr(b'\n', &bytes[at..]).map_or(bytes.len(), |n| at + n);
        let value = text[at + "recorded:".len()..line_end].trim();
        if utc_second_before(value, second) {
            continue;
        }
        // Named at the entry's heading, like every other finding.
        let head = memchr::memmem::rfind(&bytes[..at], b"\n## ").map_or(0, |n| n + 1);
        if head >= counted_to {
            lines_before += memchr::memchr_iter(b'\n', &bytes[counted_to..head]).count() as u32;
        } else {
            lines_before = memchr::memchr_iter(b'\n', &bytes[..head]).count() as u32;
        }
        counted_to = head;
        out.extend(ahead_at(
            name,
            lines_before + 1,
            value,
            threshold,
            second,
            now,
        ));
    }
    out
}

/// The warning for an entry (its heading at `line`) whose `recorded:` says `value`, if
/// that is after `threshold` (whose second, as text, is `second`).
pub(super) fn ahead_at(
    name: &str,
    line: u32,
    value: &str,
    threshold: crate::core::time::TxTime,
    second: &str,
    now: crate::core::time::TxTime,
) -> Option<Finding> {
    if utc_second_before(value, second) {
        return None;
    }
    let recorded = crate::core::time::TxTime::parse(value).ok()?;
    (recorded > threshold).then(|| Finding {
        file: name.to_string(),
        line,
        key: String::new(),
        kind: FindingKind::Ahead,
        message: format!(
            "recorded {recorded}, {} ahead of this machine's clock ({now}); reads include it, and writes here are recorded after it",
            crate::core::time::span_text(recorded.micros() - now.micros())
        ),
        computed: None,
    })
}

/// Whether `value` is an RFC 3339 instant in UTC (`YYYY-MM-DDTHH:MM:SS`, an optional
/// fraction, `Z`) whose second is earlier than `second` (the same 19 characters): then
/// it cannot be ahead, whatever its fraction. Anything else is left to the parser.
fn utc_second_before(value: &str, second: &str) -> bool {
    let b = value.as_bytes();
    if b.len() < 20 || second.len() != 19 || b[b.len() - 1] != b'Z' {
        return false;
    }
    let shape = b[..19].iter().enumerate().all(|(i, &c)| match i {
        4 | 7 => c == b'-',
        10 => c == b'T',
        13 | 16 => c == b':',
        _ => c.is_ascii_digit(),
    });
    let fraction = match b[19] {
        b'Z' => b.len() == 20,
        b'.' => b[20..b.len() - 1].iter().all(u8::is_ascii_digit),
        _ => false,
    };
    shape && fraction && &b[..19] < second.as_bytes()
}
