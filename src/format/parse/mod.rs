//! Reading a memory file: a line scanner that finds entries, decodes their values,
//! computes the hash of their canonical bytes, and reports (never hides) what it cannot
//! read: git conflict markers, torn tails, malformed envelopes, and text that belongs to
//! no entry. Every byte of a file is either in an entry, a blank line, or in a problem.
//!
//! This file holds what a read yields and the general scanner (`parse_file`, `scan`,
//! values); `lines.rs` the line table and its predicates, `lanes.rs` what the readers
//! find sixteen bytes at a time, `chain.rs` the chain-only reader with its fast path,
//! `hash.rs` the entry hash, `tests.rs` the tests.

use super::envelope::Fields;
use crate::core::chain::{ChainHash, ChainKey};
use crate::core::integrity::{ChainEntry, Link};

mod chain_scan;
mod hash;
mod lanes;
mod lines;

use chain_scan::*;
pub use chain_scan::{ChainScratch, parse_chain, parse_chain_in};
use hash::*;
use lanes::LineFeeds;
use lines::*;
pub use lines::{FOREIGN_CONTEXT, foreign_digest, is_conflict_marker};

/// One entry as found in a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParsedEntry {
    /// The heading text: the key (or, for a Go mem7 entry, the entity).
    pub key: String,
    /// 1-based line of the heading.
    pub line: u32,
    /// Byte range of the entry (heading through the closing `---` line).
    pub start: usize,
    pub end: usize,
    pub fields: Fields,
    /// The decoded value; `None` for entries without one (forget).
    pub value: Option<String>,
    /// Written by the Go mem7 (no `recorded`, no chain fields).
    pub legacy: bool,
    /// Hashed with the chain key (`chain: keyed`).
    pub keyed: bool,
    /// The `prev` field, decoded (`None` when absent or not a hash).
    pub prev: Option<ChainHash>,
    /// The `hash` field, decoded (`None` when absent or not a hash).
    pub claimed: Option<ChainHash>,
    /// `hash(prev ‖ canonical bytes)` computed over what is in the file, with the
    /// entry's own `prev` (genesis when absent). Equal to `fields.hash` when intact.
    pub computed: ChainHash,
}

/// What kind of trouble a file has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProblemKind {
    /// An unresolved git conflict (`<<<<<<<` / `=======` / `>>>>>>>` lines).
    Conflict,
    /// An entry that stops before its closing `---` (an interrupted write).
    Torn,
    /// An entry whose envelope or value cannot be read.
    Malformed,
    /// A run of lines that belongs to no entry (prose, a heading without an envelope, a
    /// comment), from its first to its last non-blank line; with the run's
    /// [`foreign_digest`], which is what `mem7 seal` records to accept it.
    Foreign(ChainHash),
}

/// A located problem in a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    pub line: u32,
    pub kind: ProblemKind,
    pub message: String,
}

/// Everything read from one file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ParsedFile {
    pub entries: Vec<ParsedEntry>,
    pub problems: Vec<Problem>,
    /// Whether nothing but blank lines follows the last complete entry.
    pub clean_tail: bool,
    /// Byte offset where an incomplete entry at the end of the file begins (an
    /// interrupted write), if there is one.
    pub torn_tail: Option<usize>,
    /// Number of line feeds in the file (so an appender knows its entry's line number).
    pub newlines: usize,
}

/// What `verify` needs of an entry: its place and its chain, not its envelope.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChainRecord {
    /// Where the heading text is in the file's text (see [`ChainRecord::key`]): verify
    /// names keys only in findings, so it copies none for a clean file.
    pub key_span: std::ops::Range<usize>,
    /// Its place and chain fields, as the checker reads them: the 1-based line of the
    /// heading, `prev`, `hash`, the computed hash, legacy, seal. The reader of a file
    /// fills in `file` and `first_in_file`, which a file alone does not know.
    pub link: ChainEntry,
    pub keyed: bool,
    /// The hashes a seal accepts (empty for other entries).
    pub accepts: Vec<ChainHash>,
}

impl Link for ChainRecord {
    fn link(&self) -> &ChainEntry {
        &self.link
    }
}

impl ChainRecord {
    /// The heading text, from the text the record was read from.
    pub fn key<'a>(&self, text: &'a str) -> &'a str {
        text.get(self.key_span.clone()).unwrap_or_default()
    }
}

/// Where `part`, a slice of `text`, lies in it.
fn span_in(text: &str, part: &str) -> std::ops::Range<usize> {
    let start = part.as_ptr() as usize - text.as_ptr() as usize;
    debug_assert!(start + part.len() <= text.len(), "a slice of the text");
    start..start + part.len()
}

/// One file read for its chain only.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ChainFile {
    pub entries: Vec<ChainRecord>,
    pub problems: Vec<Problem>,
    pub torn_tail: Option<usize>,
}

/// Parses one memory file. `key` selects plain or keyed hashing for `computed`.
pub fn parse_file(text: &str, key: &ChainKey) -> ParsedFile {
    parse(text, key)
}

fn parse(text: &str, key: &ChainKey) -> ParsedFile {
    let scanned = scan(text, |lines, at, key_text| {
        read_entry(text, lines, at, key_text, key)
    });
    ParsedFile {
        entries: scanned.entries,
        problems: scanned.problems,
        clean_tail: scanned.clean_tail,
        torn_tail: scanned.torn_tail,
        newlines: scanned.newlines,
    }
}

/// A file's structure: what `read` made of each complete entry, and the problems.
struct Scanned<T> {
    entries: Vec<T>,
    problems: Vec<Problem>,
    clean_tail: bool,
    torn_tail: Option<usize>,
    newlines: usize,
}

/// Whether a line of `text` opens a git conflict region (a vectorised search for
/// `<<<<<<<`, then a look at the lines it found).
fn has_conflict(text: &str) -> bool {
    let bytes = text.as_bytes();
    memchr::memmem::find_iter(bytes, b"<<<<<<<").any(|at| {
        let line_start =
            at == 0 || bytes[at - 1] == b'\n' || (at == 3 && text.starts_with('\u{feff}'));
        let line = &text[at..];
        let line = line.split('\n').next().unwrap_or(line);
        line_start && is_conflict_open(line.strip_suffix('\r').unwrap_or(line))
    })
}

/// Finds the entries and problems of a file; `read` turns each complete entry (heading,
/// fence open, fence close, terminator lines, and its key) into a `T`.
///
/// Every line ends up in one of four places: an entry, a blank line, a torn entry, or a
/// problem (a conflict marker, or a run of foreign text between two of the others).
fn scan<T>(
    text: &str,
    mut read: impl FnMut(&Lines<'_>, [usize; 4], String) -> Result<T, String>,
) -> Scanned<T> {
    let lines = Lines::new(text);
    // Only a file with a `<<<<<<<` line holds a conflict; elsewhere a `=======` line is
    // markdown (a setext heading in a hand-written or Go body).
    let conflicted = has_conflict(text);
    let mut out = Scanned {
        entries: Vec::new(),
        problems: Vec::new(),
        clean_tail: false,
        torn_tail: None,
        newlines: lines.newlines,
    };
    let mut last_end_line = 0usize; // index after the last complete entry
    let mut last_torn: Option<usize> = None; // byte offset of the last torn entry
    // The first and last non-blank line of the run of foreign text being read.
    let mut foreign: Option<(usize, usize)> = None;
    let end_run = |out: &mut Scanned<T>, run: &mut Option<(usize, usize)>| {
        if let Some((first, last)) = run.take() {
            out.problems.push(foreign_run(&lines, first, last));
        }
    };
    let mut i = 0;
    while i < lines.len() {
        let line_no = (i + 1) as u32;
        let t = lines.text(i);
        if is_blank(t) {
            i += 1;
            continue;
        }
        if conflicted && is_conflict_marker(t) {
            end_run(&mut out, &mut foreign);
            out.problems.push(Problem {
                line: line_no,
                kind: ProblemKind::Conflict,
                message: "unresolved git conflict marker".into(),
            });
            i += 1;
            continue;
        }
        let Some(open) = entry_starts(&lines, i) else {
            if let Some(message) = torn_heading(&lines, i) {
                // The rest of the file is the beginning of an entry: a torn tail.
                end_run(&mut out, &mut foreign);
                out.problems.push(Problem {
                    line: line_no,
                    kind: ProblemKind::Torn,
                    message,
                });
                last_torn = Some(lines.start(i));
                break;
            }
            foreign = Some((foreign.map_or(i, |(first, _)| first), i));
            i += 1;
            continue;
        };
        end_run(&mut out, &mut foreign);
        let key_text = t[3..].trim().to_string();
        let close = envelope_close(&lines, open, conflicted);
        if close >= lines.len() || !is_fence_close(lines.text(close)) {
            out.problems.push(Problem {
                line: line_no,
                kind: ProblemKind::Torn,
                message: format!(
                    "entry `{key_text}` ends inside its envelope (an interrupted write?)"
                ),
            });
            last_torn = Some(lines.start(i));
            i = close.max(i + 1);
            continue;
        }
        let (term, found) = body_end(&lines, open, close, conflicted);
        if !found {
            out.problems.push(Problem {
                line: line_no,
                kind: ProblemKind::Torn,
                message: format!(
                    "entry `{key_text}` has no closing `---` line (an interrupted write?)"
                ),
            });
            last_torn = Some(lines.start(i));
            i = term;
            continue;
        }
        match read(&lines, [i, open, close, term], key_text) {
            Ok(entry) => out.entries.push(entry),
            Err(message) => out.problems.push(Problem {
                line: line_no,
                kind: ProblemKind::Malformed,
                message,
            }),
        }
        last_end_line = term + 1;
        i = term + 1;
    }
    end_run(&mut out, &mut foreign);
    mark_tail(&mut out, &lines, last_end_line, last_torn);
    out
}

/// The line of the envelope's closing fence, from its opening at `open` (or the line a
/// conflict marker or a new entry stops it at, or past the end).
#[inline]
fn envelope_close(lines: &Lines<'_>, open: usize, conflicted: bool) -> usize {
    let mut close = open + 1;
    while close < lines.len()
        && !is_fence_close(lines.text(close))
        && !(conflicted && is_conflict_marker(lines.text(close)))
        && entry_starts(lines, close).is_none()
    {
        close += 1;
    }
    close
}

/// The body after the envelope (`open`..`close`) runs to the `---` line: that line and
/// `true`, or, when a new entry or a conflict comes first (torn), where it stopped and
/// `false`. A Go mem7 body is read as the Go mem7 read it: any line whose trimmed text is
/// `---` ends it, and git conflict regions inside it are text when they are whole (see
/// `whole_region`). Whether the entry is a Go one is asked only when a line makes the
/// difference, which is rare.
#[inline]
fn body_end(lines: &Lines<'_>, open: usize, close: usize, conflicted: bool) -> (usize, bool) {
    let mut legacy: Option<bool> = None;
    let mut is_legacy = || *legacy.get_or_insert_with(|| envelope_is_legacy(lines, open, close));
    let mut term = close + 1;
    while term < lines.len() {
        let t = lines.text(term);
        if is_terminator(t) || (t.trim() == "---" && is_legacy()) {
            return (term, true);
        }
        if conflicted && is_conflict_marker(t) {
            match is_legacy().then(|| whole_region(lines, term)).flatten() {
                Some(end) => {
                    term = end + 1;
                    continue;
                }
                None => break,
            }
        }
        if entry_starts(lines, term).is_some() {
            break;
        }
        term += 1;
    }
    (term, false)
}

/// Where the file's torn tail starts (the last torn entry, when nothing complete follows
/// it) and whether its tail is clean (blank after the last complete entry, nothing torn).
fn mark_tail<T>(
    out: &mut Scanned<T>,
    lines: &Lines<'_>,
    last_end_line: usize,
    last_torn: Option<usize>,
) {
    let complete_end = last_end_line
        .checked_sub(1)
        .filter(|&l| l < lines.len())
        .map_or(0, |l| lines.end(l));
    out.torn_tail = last_torn.filter(|&start| start >= complete_end);
    out.clean_tail = (last_end_line.min(lines.len())..lines.len())
        .all(|k| lines.text(k).trim().is_empty())
        && out.problems.iter().all(|p| p.kind != ProblemKind::Torn);
}

/// Reads the entry whose heading, envelope fences and terminator are at `at`.
fn read_entry(
    src: &str,
    lines: &Lines<'_>,
    at: [usize; 4],
    key_text: String,
    key: &ChainKey,
) -> Result<ParsedEntry, String> {
    let [head, open, close, term] = at;
    let envelope = (open + 1..close).map(|k| lines.text(k));
    let fields = Fields::parse(envelope).map_err(|e| format!("entry `{key_text}`: {e}"))?;
    let legacy = fields.is_legacy();

    let prev = fields
        .prev
        .as_deref()
        .and_then(|p| ChainHash::from_hex(p.trim()));
    let claimed = fields
        .hash
        .as_deref()
        .and_then(|h| ChainHash::from_hex(h.trim()));
    let keyed = fields.chain.as_deref() == Some("keyed");
    let computed = entry_hash(src, lines, at, prev, keyed, key);

    let op = fields.op.as_deref().unwrap_or("store");
    let value = if !has_value(op) {
        None
    } else if legacy {
        Some(legacy_value(lines, close, term))
    } else {
        let body = body_lines(lines, close, term);
        Some(
            decode_value(&body, fields.encoding.as_deref())
                .map_err(|e| format!("entry `{key_text}`: {e}"))?,
        )
    };
    Ok(ParsedEntry {
        key: key_text,
        line: (head + 1) as u32,
        start: lines.start(head),
        end: lines.end(term),
        fields,
        value,
        legacy,
        keyed,
        prev,
        claimed,
        computed,
    })
}

fn unquote(line: &str) -> Option<&str> {
    let rest = line.strip_prefix('>')?;
    Some(rest.strip_prefix(' ').unwrap_or(rest))
}

/// The body lines between the envelope's closing fence and the terminator, without
/// blank lines around them.
fn body_lines<'a>(lines: &Lines<'a>, close: usize, term: usize) -> Vec<&'a str> {
    let body = close + 1..term;
    let first = body.clone().find(|&k| !is_blank(lines.text(k)));
    let last = body.clone().rev().find(|&k| !is_blank(lines.text(k)));
    match (first, last) {
        (Some(a), Some(b)) => (a..=b).map(|k| lines.text(k)).collect(),
        _ => Vec::new(),
    }
}

/// A Go mem7 body as the Go mem7 read it: its lines joined with LF, with the empty
/// lines at its start and end removed (lines of spaces are kept, as they were there).
fn legacy_value(lines: &Lines<'_>, close: usize, term: usize) -> String {
    let body = close + 1..term;
    let first = body.clone().find(|&k| !lines.text(k).is_empty());
    let last = body.clone().rev().find(|&k| !lines.text(k).is_empty());
    match (first, last) {
        (Some(a), Some(b)) => (a..=b)
            .map(|k| lines.text(k))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// Whether entries of this op carry a value.
fn has_value(op: &str) -> bool {
    !matches!(
        op,
        "forget" | "forget_entity" | "forget_tagged" | "delete" | "delete_tags" | "seal"
    )
}

/// Whether decoding a value with this encoding can fail (only `json` and unknown
/// encodings can: quoted and hand-written values are taken as they stand).
fn can_fail(encoding: Option<&str>) -> bool {
    !matches!(encoding, None | Some("") | Some("quote"))
}

fn decode_value(body: &[&str], encoding: Option<&str>) -> Result<String, String> {
    match encoding {
        Some("json") => {
            let joined: String = body.iter().map(|l| unquote(l).unwrap_or(l)).collect();
            serde_json::from_str::<String>(&joined).map_err(|e| {
                format!("the value is marked `encoding: json` but is not a JSON string: {e}")
            })
        }
        None | Some("") | Some("quote") => {
            if !body.is_empty() && body.iter().all(|l| l.starts_with('>')) {
                Ok(body
                    .iter()
                    .filter_map(|l| unquote(l))
                    .collect::<Vec<_>>()
                    .join("\n"))
            } else {
                // Hand-written markdown without the quote marks is taken as it stands.
                Ok(body.join("\n"))
            }
        }
        Some(other) => Err(format!(
            "unknown value encoding `{other}` (expected json or none)"
        )),
    }
}

#[cfg(test)]
mod tests;
