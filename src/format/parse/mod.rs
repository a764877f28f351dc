//! Reading a memory file: a line scanner that finds entries, decodes their values,
//! computes the hash of their canonical bytes, and reports (never hides) what it cannot
//! read: git conflict markers, torn tails, malformed envelopes, and text that belongs to
//! no entry. Every byte of a file is either in an entry, a blank line, or in a problem.

use super::envelope::Fields;
use crate::core::chain::{ChainHash, ChainKey};
use crate::core::integrity::{ChainEntry, Link};

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

/// Where each line of a file starts, found with a vectorised search for line feeds.
/// Lines are sliced on demand: a few bytes per line instead of a struct with a slice.
struct Lines<'a> {
    src: &'a str,
    /// Byte offset of each line's first byte.
    starts: Vec<usize>,
    /// Line feeds in the file.
    newlines: usize,
    /// Whether the file holds a carriage return anywhere (most do not, and then no
    /// line needs one stripped before hashing).
    has_cr: bool,
}

impl<'a> Lines<'a> {
    fn new(src: &'a str) -> Lines<'a> {
        // A byte order mark is not part of the first line.
        let first = if src.starts_with('\u{feff}') { 3 } else { 0 };
        let mut starts = Vec::with_capacity(src.len() / 24 + 2);
        let mut newlines = 0;
        if first < src.len() {
            starts.push(first);
        }
        for nl in memchr::memchr_iter(b'\n', &src.as_bytes()[first..]) {
            newlines += 1;
            let next = first + nl + 1;
            if next < src.len() {
                starts.push(next);
            }
        }
        Lines {
            src,
            starts,
            newlines,
            has_cr: memchr::memchr(b'\r', src.as_bytes()).is_some(),
        }
    }

    fn len(&self) -> usize {
        self.starts.len()
    }

    fn start(&self, i: usize) -> usize {
        self.starts[i]
    }

    /// Offset just past the line's terminator (or the end of the file).
    fn end(&self, i: usize) -> usize {
        self.starts.get(i + 1).copied().unwrap_or(self.src.len())
    }

    /// The line without its terminator (`\n` or `\r\n`).
    fn text(&self, i: usize) -> &'a str {
        let raw = &self.src[self.start(i)..self.end(i)];
        let t = raw.strip_suffix('\n').unwrap_or(raw);
        t.strip_suffix('\r').unwrap_or(t)
    }
}

// The line predicates run on every line of every file: each rejects on the first bytes
// before trimming anything.

fn is_fence_open(text: &str) -> bool {
    text.starts_with("```m") && text.trim_end() == concat!("```", "mem7")
}

fn is_fence_close(text: &str) -> bool {
    text.starts_with("```") && text.trim_end() == "```"
}

fn is_terminator(text: &str) -> bool {
    text.starts_with("---") && text.trim_end() == "---"
}

fn is_blank(text: &str) -> bool {
    match text.bytes().find(|b| !b.is_ascii_whitespace()) {
        None => true,
        Some(b) if b.is_ascii() => false,
        Some(_) => text.trim().is_empty(),
    }
}

/// The line that opens a git conflict region.
fn is_conflict_open(text: &str) -> bool {
    text.strip_prefix("<<<<<<<")
        .is_some_and(|rest| rest.is_empty() || rest.starts_with(' '))
}

/// Git's conflict markers: seven `<`, `|`, `=` or `>` at the start of a line, alone or
/// followed by a space. mem7 never writes such a line (values are block-quoted with `> `).
pub fn is_conflict_marker(text: &str) -> bool {
    if !text.starts_with(['<', '|', '=', '>']) {
        return false;
    }
    ["<<<<<<<", "|||||||", "=======", ">>>>>>>"]
        .iter()
        .any(|m| {
            text.strip_prefix(m)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with(' '))
        })
}

/// Which conflict marker a line is (see [`is_conflict_marker`]): `<`, `|`, `=` or `>`.
fn conflict_marker(text: &str) -> Option<u8> {
    is_conflict_marker(text).then(|| text.as_bytes()[0])
}

/// A line the Go mem7 or mem7 reads as structure wherever it stands: a `## ` heading, a
/// fence, or a terminator (by the Go reader's rule: surrounding whitespace ignored).
fn is_structural(text: &str) -> bool {
    text.starts_with("## ") || matches!(text.trim(), "---" | "```" | "```mem7")
}

/// The last line of a whole git conflict region that starts at line `start`
/// (`<<<<<<<`, optionally `|||||||`, then `=======`, then `>>>>>>>`) with no structural
/// line and no other region inside it. A Go mem7 body holding such a region quotes a
/// conflict; anything less is an unresolved merge.
fn whole_region(lines: &Lines<'_>, start: usize) -> Option<usize> {
    if conflict_marker(lines.text(start)) != Some(b'<') {
        return None;
    }
    let mut separated = false;
    for k in start + 1..lines.len() {
        let t = lines.text(k);
        match conflict_marker(t) {
            Some(b'<') => return None,
            Some(b'|') if separated => return None,
            Some(b'=') if separated => return None,
            Some(b'=') => separated = true,
            Some(b'>') => return separated.then_some(k),
            _ if is_structural(t) => return None,
            _ => {}
        }
    }
    None
}

/// Why the heading-like line `i` begins a torn tail: an entry cut off before its
/// envelope's fence was complete, so that nothing but a prefix of what mem7 writes
/// (`## key`, blank lines, part of the ```` ```mem7 ```` line) follows it to the end of
/// the file. `None` when the line is anything else (then it is foreign text).
fn torn_heading(lines: &Lines<'_>, i: usize) -> Option<String> {
    let text = lines.text(i);
    // The last line, cut before its line feed.
    let cut = |k: usize| k + 1 == lines.len() && !lines.src.ends_with('\n');
    let Some(rest) = text.strip_prefix("## ") else {
        return (cut(i) && "## ".starts_with(text))
            .then(|| "the file ends inside a `## ` heading (an interrupted write?)".into());
    };
    let key = rest.trim();
    let j = next_nonblank(lines, i + 1);
    if j == lines.len() {
        return Some(format!(
            "entry `{key}` ends after its heading, before its envelope (an interrupted write?)"
        ));
    }
    let fence = lines.text(j);
    (cut(j) && concat!("```", "mem7").starts_with(fence)).then(|| {
        format!(
            "entry `{key}` ends inside the fence that opens its envelope (an interrupted write?)"
        )
    })
}

/// The context string of [`foreign_digest`] (BLAKE3's key derivation mode, so that the
/// digest of a run can never be mistaken for an entry's hash).
pub const FOREIGN_CONTEXT: &str = "mem7 2026-12 foreign text v1";

/// What identifies a run of foreign text: BLAKE3 in key derivation mode with
/// [`FOREIGN_CONTEXT`] over the run's lines, each followed by one LF (so CRLF
/// checkouts give the same digest). Changing any byte of the run changes it.
pub fn foreign_digest<'a>(lines: impl IntoIterator<Item = &'a str>) -> ChainHash {
    let mut hasher = blake3::Hasher::new_derive_key(FOREIGN_CONTEXT);
    for line in lines {
        hasher.update(line.as_bytes());
        hasher.update(b"\n");
    }
    ChainHash(*hasher.finalize().as_bytes())
}

/// Reports lines `first..=last` (non-blank at both ends) as one run of foreign text,
/// quoting the start of its first line so a person can find it.
fn foreign_run(lines: &Lines<'_>, first: usize, last: usize) -> Problem {
    let n = last + 1 - first;
    let raw = lines.text(first);
    let head = raw.trim();
    let mut excerpt: String = head.chars().take(40).collect();
    if excerpt.len() < head.len() {
        excerpt.push('…');
    }
    let what = if raw.starts_with("## ") {
        " (a heading without a ```mem7 envelope is not an entry)"
    } else if head.starts_with("<!--") {
        " (an HTML comment)"
    } else {
        ""
    };
    Problem {
        line: (first + 1) as u32,
        kind: ProblemKind::Foreign(foreign_digest((first..=last).map(|k| lines.text(k)))),
        message: format!(
            "{n} line{} outside any entry, from `{excerpt}`{what}",
            if n == 1 { "" } else { "s" }
        ),
    }
}

/// Whether the envelope between lines `open` and `close` is a Go mem7 one (decided as
/// the readers decide it, see [`Fields::is_legacy`]).
fn envelope_is_legacy(lines: &Lines<'_>, open: usize, close: usize) -> bool {
    ChainSummary::read((open + 1..close).map(|k| lines.text(k)), None, &mut None)
        .is_ok_and(|s| s.legacy)
}

fn next_nonblank(lines: &Lines<'_>, from: usize) -> usize {
    let mut j = from;
    while j < lines.len() && is_blank(lines.text(j)) {
        j += 1;
    }
    j
}

/// Whether an entry starts at line `i`: a `## ` heading whose next non-blank line opens
/// a ```` ```mem7 ```` block.
fn entry_starts(lines: &Lines<'_>, i: usize) -> Option<usize> {
    lines.text(i).strip_prefix("## ")?;
    let j = next_nonblank(lines, i + 1);
    (j < lines.len() && is_fence_open(lines.text(j))).then_some(j)
}

/// Parses one memory file. `key` selects plain or keyed hashing for `computed`.
pub fn parse_file(text: &str, key: &ChainKey) -> ParsedFile {
    parse(text, key)
}

/// Reads one memory file for its chain only (what `verify` needs): no values decoded,
/// no envelope kept, and plain envelopes read without allocating. Finds the same
/// entries, problems and hashes as [`parse_file`].
pub fn parse_chain(text: &str, key: &ChainKey) -> ChainFile {
    canonical_chain(text, key).unwrap_or_else(|| scan_chain(text, key))
}

/// [`parse_chain`] by the general scanner, for any file.
fn scan_chain(text: &str, key: &ChainKey) -> ChainFile {
    let scanned = scan(text, |lines, at, key_text| {
        let [head, open, close, _] = at;
        let key_span = span_in(text, lines.text(head)[3..].trim());
        let summary = ChainSummary::read((open + 1..close).map(|k| lines.text(k)), None, &mut None)
            .map_err(|e| format!("entry `{key_text}`: {e}"))?;
        let keyed = summary.keyed;
        // A value that cannot be decoded makes the entry unreadable, as for the index.
        if let Some(encoding) = &summary.check_value {
            decode_value(&body_lines(lines, close, at[3]), Some(encoding))
                .map_err(|e| format!("entry `{key_text}`: {e}"))?;
        }
        Ok(ChainRecord {
            key_span,
            link: ChainEntry {
                line: (head + 1) as u32,
                prev: summary.prev,
                claimed: summary.claimed,
                computed: entry_hash(text, lines, at, summary.prev, keyed, key),
                legacy: summary.legacy,
                seal: summary.seal,
                file: 0,
                first_in_file: false,
            },
            keyed,
            accepts: summary.accepts,
        })
    });
    ChainFile {
        entries: scanned.entries,
        problems: scanned.problems,
        torn_tail: scanned.torn_tail,
    }
}

/// The fast path of [`parse_chain`], for a file exactly as mem7 writes it: LF line
/// ends, entries separated by empty lines, each a `## key` line, an empty line, a
/// ```` ```mem7 ```` envelope of plain lines, and a body of `>` lines closed by `---`.
/// One pass over the bytes, no line table. `None` at the first thing it does not expect
/// (a conflict, a carriage return, a torn tail, text between entries, a hand-made
/// heading or body, an unusual line): the general scanner then reads the whole file, so
/// both give the same answer.
fn canonical_chain(text: &str, key: &ChainKey) -> Option<ChainFile> {
    let bytes = text.as_bytes();
    if bytes.is_empty() || !bytes.ends_with(b"\n") || text.starts_with('\u{feff}') {
        return None;
    }
    if memchr::memchr(b'\r', bytes).is_some() || has_conflict(text) {
        return None;
    }
    // Lines are taken strictly in order, so the line feeds are searched for as they are
    // needed (the same vectorised search as [`Lines`]). The file ends with a line feed,
    // so every line has its own.
    let mut feeds = memchr::memchr_iter(b'\n', bytes);
    let mut line_at = |at: usize| -> (&str, usize) {
        let end = feeds.next().unwrap_or(bytes.len());
        (&text[at..end], (end + 1).min(bytes.len()))
    };
    let mut entries = Vec::with_capacity(bytes.len() / 400);
    let mut envelope: Vec<&str> = Vec::with_capacity(16);
    // The previous entry's `hash` text and value (see `ChainSummary::read`).
    let mut last_hash: Option<(&str, ChainHash)> = None;
    let (mut pos, mut line_no) = (0usize, 0u32);
    while pos < bytes.len() {
        let head_start = pos;
        let (head, next) = line_at(pos);
        line_no += 1;
        pos = next;
        if head.is_empty() {
            continue;
        }
        let key_text = head.strip_prefix("## ")?;
        let head_line = line_no;
        let (blank, next) = line_at(pos);
        let (fence, next) = line_at(next);
        if !blank.is_empty() || fence != concat!("```", "mem7") {
            return None;
        }
        pos = next;
        line_no += 2;
        // The envelope, to its closing fence.
        envelope.clear();
        let mut hash_line: Option<(usize, usize)> = None;
        loop {
            if pos >= bytes.len() {
                return None;
            }
            let (line, next) = line_at(pos);
            line_no += 1;
            if line == "```" {
                pos = next;
                break;
            }
            if line.starts_with('`') || line.starts_with("## ") {
                return None;
            }
            if hash_line.is_none() && line.starts_with("hash:") {
                hash_line = Some((pos, next));
            }
            envelope.push(line);
            pos = next;
        }
        // The body, to its `---`.
        loop {
            if pos >= bytes.len() {
                return None;
            }
            let (line, next) = line_at(pos);
            line_no += 1;
            pos = next;
            if line == "---" {
                break;
            }
            // mem7 writes nothing else in a body. A hand-written or Go mem7 body (whose
            // end and conflict rules differ) is left to the general scanner.
            if !(line.is_empty() || line.starts_with('>')) {
                return None;
            }
        }
        let mut hash_text = None;
        let summary =
            ChainSummary::read(envelope.iter().copied(), last_hash, &mut hash_text).ok()?;
        last_hash = hash_text.zip(summary.claimed);
        if summary.check_value.is_some() {
            return None;
        }
        let computed = hash_lf_entry(
            bytes,
            head_start..pos,
            hash_line.map(|(start, next)| start..next),
            summary.prev,
            summary.keyed,
            key,
        );
        entries.push(ChainRecord {
            key_span: span_in(text, key_text.trim()),
            link: ChainEntry {
                line: head_line,
                prev: summary.prev,
                claimed: summary.claimed,
                computed,
                legacy: summary.legacy,
                seal: summary.seal,
                file: 0,
                first_in_file: false,
            },
            keyed: summary.keyed,
            accepts: summary.accepts,
        });
    }
    Some(ChainFile {
        entries,
        problems: Vec::new(),
        torn_tail: None,
    })
}

/// The chain fields of an envelope.
#[derive(Default)]
struct ChainSummary {
    prev: Option<ChainHash>,
    claimed: Option<ChainHash>,
    keyed: bool,
    seal: bool,
    legacy: bool,
    accepts: Vec<ChainHash>,
    /// The encoding of a value whose decoding can fail (rare: values with control
    /// characters), to be checked.
    check_value: Option<String>,
}

impl ChainSummary {
    /// Reads plain `name: value` lines in place; anything else (quotes, flow
    /// mappings, a line without `: `) goes through the full envelope parser, so both
    /// paths agree on every input.
    ///
    /// `known` is the previous entry's `hash` text and value: a `prev` that repeats it
    /// (the usual case) is not decoded again. `hash_text` receives this entry's `hash`
    /// text when it was read in place.
    fn read<'a>(
        envelope: impl Iterator<Item = &'a str> + Clone,
        known: Option<(&str, ChainHash)>,
        hash_text: &mut Option<&'a str>,
    ) -> Result<ChainSummary, String> {
        let (mut op, mut chain, mut prev, mut hash, mut accepts) = (None, None, None, None, None);
        let mut encoding = None;
        let (mut recorded, mut go_times) = (false, false);
        for line in envelope.clone() {
            // `name: value` with a name of lowercase letters and `_`, read in one scan.
            let b = line.as_bytes();
            let name_len = b
                .iter()
                .position(|&c| !(c.is_ascii_lowercase() || c == b'_'))
                .unwrap_or(b.len());
            let split = (name_len > 0 && b.get(name_len) == Some(&b':'))
                .then(|| (&line[..name_len], &line[name_len + 1..]))
                .and_then(|(name, rest)| Some((name, rest.strip_prefix(' ')?)));
            let Some((name, value)) = split else {
                if is_blank(line) || line.starts_with('#') {
                    continue;
                }
                return Self::from_fields(&Fields::parse(envelope)?);
            };
            // What the plain envelope reader leaves to YAML: quoted or flow values, block
            // scalars, anchors, tags, and a list without its closing bracket.
            let special = value.starts_with(['"', '\'', '{', '|', '>', '&', '*', '!'])
                || (value.starts_with('[') && !value.trim_end().ends_with(']'));
            if special {
                return Self::from_fields(&Fields::parse(envelope)?);
            }
            match name {
                "op" => op = Some(value.trim()),
                "chain" => chain = Some(value.trim()),
                "prev" => prev = Some(value),
                "hash" => hash = Some(value),
                "accepts" => accepts = Some(value),
                "encoding" => encoding = Some(value.trim()),
                "recorded" => recorded = true,
                "updated" | "created" | "deleted" => go_times = true,
                _ => {}
            }
        }
        let accepts = accepts.map_or_else(Vec::new, |a| {
            let a = a.trim();
            let list = a
                .strip_prefix('[')
                .and_then(|inner| inner.strip_suffix(']'))
                .unwrap_or(a);
            hashes(list.split(','))
        });
        let flags = [recorded, go_times];
        *hash_text = hash.map(str::trim);
        let mut summary = Self::summarise(op, chain, None, hash, encoding, flags, accepts);
        summary.prev = prev.and_then(|p| {
            let p = p.trim();
            match known {
                Some((text, value)) if text == p => Some(value),
                _ => ChainHash::from_hex(p),
            }
        });
        Ok(summary)
    }

    fn summarise(
        op: Option<&str>,
        chain: Option<&str>,
        prev: Option<&str>,
        hash: Option<&str>,
        encoding: Option<&str>,
        [recorded, go_times]: [bool; 2],
        accepts: Vec<ChainHash>,
    ) -> ChainSummary {
        let seal = op == Some("seal");
        let legacy = !recorded && (go_times || matches!(op, Some("delete" | "delete_tags")));
        ChainSummary {
            prev: prev.and_then(|p| ChainHash::from_hex(p.trim())),
            claimed: hash.and_then(|h| ChainHash::from_hex(h.trim())),
            keyed: chain == Some("keyed"),
            legacy,
            accepts: if seal { accepts } else { Vec::new() },
            seal,
            check_value: (!legacy && has_value(op.unwrap_or("store")) && can_fail(encoding))
                .then(|| encoding.unwrap_or_default().to_string()),
        }
    }

    fn from_fields(fields: &Fields) -> Result<ChainSummary, String> {
        let op = fields.op.as_deref();
        Ok(ChainSummary {
            prev: fields
                .prev
                .as_deref()
                .and_then(|p| ChainHash::from_hex(p.trim())),
            claimed: fields
                .hash
                .as_deref()
                .and_then(|h| ChainHash::from_hex(h.trim())),
            keyed: fields.chain.as_deref() == Some("keyed"),
            legacy: fields.is_legacy(),
            seal: op == Some("seal"),
            check_value: (!fields.is_legacy()
                && has_value(op.unwrap_or("store"))
                && can_fail(fields.encoding.as_deref()))
            .then(|| fields.encoding.clone().unwrap_or_default()),
            accepts: if op == Some("seal") {
                hashes(fields.accepts.iter().map(String::as_str))
            } else {
                Vec::new()
            },
        })
    }
}

fn hashes<'a>(items: impl Iterator<Item = &'a str>) -> Vec<ChainHash> {
    items
        .filter_map(|h| ChainHash::from_hex(h.trim()))
        .collect()
}

/// The hasher an entry's hash starts from: keyed when the entry says so, seeded with
/// its `prev` (genesis when absent).
fn chain_hasher(prev: Option<ChainHash>, keyed: bool, key: &ChainKey) -> blake3::Hasher {
    let prev = prev.unwrap_or(ChainHash::GENESIS);
    if keyed {
        key.hasher(prev)
    } else {
        ChainKey::Plain.hasher(prev)
    }
}

/// The hash of an LF-only entry: `bytes[entry]` without the `hash:` line at `skip`,
/// as at most two contiguous ranges.
fn hash_lf_entry(
    bytes: &[u8],
    entry: std::ops::Range<usize>,
    skip: Option<std::ops::Range<usize>>,
    prev: Option<ChainHash>,
    keyed: bool,
    key: &ChainKey,
) -> ChainHash {
    let (first, second) = match skip {
        Some(line) => (&bytes[entry.start..line.start], &bytes[line.end..entry.end]),
        None => (&bytes[entry], &[][..]),
    };
    let prev = prev.unwrap_or(ChainHash::GENESIS);
    // An entry is usually one BLAKE3 chunk (1 KiB) with its link: hashed in one call from
    // a buffer on the stack, which costs less than setting up and moving a `Hasher`
    // (2 KiB) for each of a hundred thousand entries.
    const CHUNK: usize = 1024;
    let len = prev.0.len() + first.len() + second.len();
    if len <= CHUNK {
        let mut buf = [std::mem::MaybeUninit::<u8>::uninit(); CHUNK];
        let mut at = 0;
        for part in [&prev.0[..], first, second] {
            for (slot, byte) in buf[at..at + part.len()].iter_mut().zip(part) {
                slot.write(*byte);
            }
            at += part.len();
        }
        // SAFETY: the first `len` bytes were all just written.
        let input = unsafe { std::slice::from_raw_parts(buf.as_ptr().cast::<u8>(), len) };
        let hash = match key {
            ChainKey::Keyed(k) if keyed => blake3::keyed_hash(k, input),
            _ => blake3::hash(input),
        };
        return ChainHash(*hash.as_bytes());
    }
    let mut hasher = chain_hasher(Some(prev), keyed, key);
    hasher.update(first);
    hasher.update(second);
    ChainHash(*hasher.finalize().as_bytes())
}

/// `hash(prev ‖ canonical bytes)`: every line of the entry at `at`, LF-terminated,
/// without its first `hash:` line.
fn entry_hash(
    src: &str,
    lines: &Lines<'_>,
    [head, open, close, term]: [usize; 4],
    prev: Option<ChainHash>,
    keyed: bool,
    key: &ChainKey,
) -> ChainHash {
    let hash_line = (open + 1..close).find(|&k| lines.text(k).starts_with("hash:"));
    let entry = lines.start(head)..lines.end(term);
    if !lines.has_cr && src.as_bytes()[entry.clone()].ends_with(b"\n") {
        // The common case (LF only): the entry's bytes as they stand.
        let skip = hash_line.map(|k| lines.start(k)..lines.end(k));
        return hash_lf_entry(src.as_bytes(), entry, skip, prev, keyed, key);
    }
    // Otherwise line by line, each with an LF, so CRLF files hash like LF ones.
    let mut hasher = chain_hasher(prev, keyed, key);
    for k in head..=term {
        if Some(k) == hash_line {
            continue;
        }
        hasher.update(lines.text(k).as_bytes());
        hasher.update(b"\n");
    }
    ChainHash(*hasher.finalize().as_bytes())
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
        // The envelope runs to the closing fence.
        let mut close = open + 1;
        while close < lines.len()
            && !is_fence_close(lines.text(close))
            && !(conflicted && is_conflict_marker(lines.text(close)))
            && entry_starts(&lines, close).is_none()
        {
            close += 1;
        }
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
        // The body runs to the `---` line; a new entry or a conflict first means torn.
        // A Go mem7 body is read as the Go mem7 read it: any line whose trimmed text is
        // `---` ends it, and git conflict regions inside it are text when they are whole
        // (see `whole_region`). Whether the entry is a Go one is asked only when a line
        // makes the difference, which is rare.
        let mut legacy: Option<bool> = None;
        let mut is_legacy =
            || *legacy.get_or_insert_with(|| envelope_is_legacy(&lines, open, close));
        let mut term = close + 1;
        let mut found = false;
        while term < lines.len() {
            let t = lines.text(term);
            if is_terminator(t) || (t.trim() == "---" && is_legacy()) {
                found = true;
                break;
            }
            if conflicted && is_conflict_marker(t) {
                match is_legacy().then(|| whole_region(&lines, term)).flatten() {
                    Some(end) => {
                        term = end + 1;
                        continue;
                    }
                    None => break,
                }
            }
            if entry_starts(&lines, term).is_some() {
                break;
            }
            term += 1;
        }
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
    let complete_end = last_end_line
        .checked_sub(1)
        .filter(|&l| l < lines.len())
        .map_or(0, |l| lines.end(l));
    out.torn_tail = last_torn.filter(|&start| start >= complete_end);
    out.clean_tail = (last_end_line.min(lines.len())..lines.len())
        .all(|k| lines.text(k).trim().is_empty())
        && out.problems.iter().all(|p| p.kind != ProblemKind::Torn);
    out
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
mod tests {
    use super::*;
    use crate::core::time::{TxTime, ValidTime};
    use crate::format::{EntryDraft, render_entry};

    fn draft(value: &str) -> EntryDraft<'_> {
        EntryDraft {
            key: "k",
            op: "store",
            valid_from: Some(ValidTime::from_micros(0)),
            valid_to: None,
            recorded: TxTime::from_micros(0),
            agent: "t",
            tags: &[],
            secret_allowed: false,
            accepts: &[],
            value: Some(value),
        }
    }

    #[test]
    fn entries_of_one_chunk_and_more_hash_alike_on_both_readers() {
        // Under 1 KiB with its link an entry is hashed in one call; longer ones go
        // through a `Hasher`. Plain and keyed, the chain reader agrees with the full one
        // and with the hash the writer recorded.
        for key in [ChainKey::Plain, ChainKey::Keyed([7; 32])] {
            let mut file = String::new();
            let mut prev = ChainHash::GENESIS;
            let mut recorded = Vec::new();
            for value in ["short".to_string(), "long ".repeat(400), "x".repeat(900)] {
                let (text, hash) = render_entry(&draft(&value), prev, &key);
                file.push_str(&text);
                file.push('\n');
                recorded.push(hash);
                prev = hash;
            }
            let chain = parse_chain(&file, &key);
            let full = parse_file(&file, &key);
            assert_eq!(chain.entries.len(), 3);
            for ((c, f), want) in chain.entries.iter().zip(&full.entries).zip(&recorded) {
                assert_eq!(c.link.computed, f.computed);
                assert_eq!(c.link.computed, *want);
                assert_eq!(c.link.claimed, Some(*want));
            }
        }
    }

    #[test]
    fn written_entries_read_back_with_their_hash() {
        for value in [
            "",
            "\n",
            "plain",
            "a\n\n## b\n---\n```mem7\n",
            "x\r\ny",
            "\u{0}nul",
            " lead",
            "trail ",
        ] {
            let (text, hash) = render_entry(&draft(value), ChainHash::GENESIS, &ChainKey::Plain);
            let parsed = parse_file(&text, &ChainKey::Plain);
            assert!(
                parsed.problems.is_empty(),
                "{value:?}: {:?}",
                parsed.problems
            );
            assert_eq!(parsed.entries.len(), 1, "{value:?}");
            let e = &parsed.entries[0];
            assert_eq!(e.value.as_deref(), Some(value));
            assert_eq!(e.computed, hash);
            assert_eq!(e.fields.hash.as_deref(), Some(hash.to_hex().as_str()));
            assert!(parsed.clean_tail);
        }
    }

    #[test]
    fn crlf_files_hash_the_same() {
        let (text, hash) = render_entry(&draft("a\nb"), ChainHash::GENESIS, &ChainKey::Plain);
        let crlf = text.replace('\n', "\r\n");
        let parsed = parse_file(&crlf, &ChainKey::Plain);
        assert_eq!(parsed.entries[0].computed, hash);
        assert_eq!(parsed.entries[0].value.as_deref(), Some("a\nb"));
    }

    #[test]
    fn torn_tail_and_conflicts_are_reported() {
        let (text, _) = render_entry(&draft("v"), ChainHash::GENESIS, &ChainKey::Plain);
        let torn = &text[..text.len() - 10];
        let parsed = parse_file(&format!("{text}\n{torn}"), &ChainKey::Plain);
        assert_eq!(parsed.entries.len(), 1);
        assert_eq!(parsed.problems[0].kind, ProblemKind::Torn);
        assert!(!parsed.clean_tail);

        let conflicted = format!("<<<<<<< HEAD\n{text}=======\n{text}>>>>>>> other\n");
        let parsed = parse_file(&conflicted, &ChainKey::Plain);
        assert!(
            parsed
                .problems
                .iter()
                .any(|p| p.kind == ProblemKind::Conflict && p.line == 1)
        );
    }

    /// Two entries as mem7 writes them, linked, with the blank line mem7 puts after each.
    fn two_entries() -> String {
        let (a, h) = render_entry(&draft("one"), ChainHash::GENESIS, &ChainKey::Plain);
        let (b, _) = render_entry(&draft("two"), h, &ChainKey::Plain);
        format!("{a}\n{b}\n")
    }

    /// Both readers (and, when it takes the file, the fast path) give the same chain.
    fn both(text: &str) -> (ParsedFile, ChainFile) {
        let full = parse_file(text, &ChainKey::Plain);
        let general = scan_chain(text, &ChainKey::Plain);
        if let Some(fast) = canonical_chain(text, &ChainKey::Plain) {
            assert_eq!(fast, general, "fast path and scanner differ on:\n{text}");
        }
        assert_eq!(parse_chain(text, &ChainKey::Plain), general);
        assert_eq!(general.problems, full.problems, "{text}");
        assert_eq!(general.torn_tail, full.torn_tail, "{text}");
        assert_eq!(general.entries.len(), full.entries.len(), "{text}");
        for (c, f) in general.entries.iter().zip(&full.entries) {
            assert_eq!(
                (c.link.line, c.link.computed),
                (f.line, f.computed),
                "{text}"
            );
        }
        (full, general)
    }

    fn kinds(problems: &[Problem]) -> Vec<(u32, &'static str)> {
        problems
            .iter()
            .map(|p| {
                let kind = match p.kind {
                    ProblemKind::Conflict => "conflict",
                    ProblemKind::Torn => "torn",
                    ProblemKind::Malformed => "malformed",
                    ProblemKind::Foreign(_) => "foreign",
                };
                (p.line, kind)
            })
            .collect()
    }

    #[test]
    fn text_outside_entries_is_foreign_at_its_first_line() {
        let file = two_entries();
        let second = file[1..].find("## k").map(|i| i + 1).unwrap();
        let line_of = |at: usize| file[..at].matches('\n').count() as u32 + 1;
        // The fast path reads the file as written (so the comparisons below test it).
        assert!(canonical_chain(&file, &ChainKey::Plain).is_some());
        let (before, after) = file.split_at(second);
        let end = line_of(file.len()); // the line after the last entry's blank line
        for (name, text, want) in [
            (
                "prose between entries",
                format!("{before}a note\nmore of it\n\n{after}"),
                vec![(line_of(second), "foreign")],
            ),
            (
                "a heading without an envelope",
                format!("{before}## notes\n\nsome text\n\n{after}"),
                vec![(line_of(second), "foreign")],
            ),
            (
                "a lone heading before an entry",
                format!("{before}## notes\n\n{after}"),
                vec![(line_of(second), "foreign")],
            ),
            (
                "an HTML comment",
                format!("{before}<!-- reviewed -->\n\n{after}"),
                vec![(line_of(second), "foreign")],
            ),
            (
                "text before the first entry",
                format!("# Memory\n\n{file}"),
                vec![(1, "foreign")],
            ),
            (
                "text after the last entry",
                format!("{file}trailing words"),
                vec![(end, "foreign")],
            ),
            (
                "a heading and prose after the last entry",
                format!("{file}## later\n\ntext\n"),
                vec![(end, "foreign")],
            ),
            (
                "a stray fence and rule",
                format!("{file}```mem7\n---\n"),
                vec![(end, "foreign")],
            ),
            (
                "blank lines only",
                format!("\n \n{before}\n\t\n\n{after}\n  \n"),
                vec![],
            ),
        ] {
            let (full, chain) = both(&text);
            assert_eq!(kinds(&full.problems), want, "{name}:\n{text}");
            assert_eq!(chain.entries.len(), 2, "{name}");
            assert_eq!(full.torn_tail, None, "{name}");
        }
    }

    #[test]
    fn a_run_of_foreign_text_is_known_by_its_bytes() {
        let file = two_entries();
        let digest = |note: &str| {
            let (full, _) = both(&format!("{file}{note}"));
            match full.problems[..] {
                [
                    Problem {
                        kind: ProblemKind::Foreign(d),
                        ..
                    },
                ] => d,
                _ => panic!("{:?}", full.problems),
            }
        };
        let note = "a note\n\nin two paragraphs\n";
        // One run from its first to its last non-blank line, whatever surrounds it and
        // whatever the line endings.
        assert_eq!(digest(note), digest(&format!("\n\n{note}\n\n")));
        assert_eq!(digest(note), digest("a note\r\n\r\nin two paragraphs"));
        assert_eq!(
            digest(note),
            foreign_digest(["a note", "", "in two paragraphs"])
        );
        assert_ne!(digest(note), digest("a note\n\nin two paragraphs!\n"));
        assert_ne!(digest(note), digest("a note\n\nin two paragraphs \n"));
    }

    #[test]
    fn every_cut_of_an_entry_is_a_torn_tail_at_its_heading() {
        let file = two_entries();
        let (third, _) = render_entry(
            &draft("three\nlines\n"),
            ChainHash([1; 32]),
            &ChainKey::Plain,
        );
        let heading_line = file.matches('\n').count() as u32 + 1;
        // Everything short of the terminator's last byte: inside the heading, before the
        // fence, inside it, inside the envelope, inside the value, inside `---`.
        let complete = third.len() - "\n".len();
        for cut in 1..complete {
            let text = format!("{file}{}", &third[..cut]);
            let (full, chain) = both(&text);
            let at = &third[..cut].escape_debug().to_string();
            assert_eq!(
                kinds(&full.problems),
                [(heading_line, "torn")],
                "cut {cut}: {at}"
            );
            assert_eq!(full.torn_tail, Some(file.len()), "cut {cut}: {at}");
            assert_eq!(chain.entries.len(), 2);
            assert!(!full.clean_tail);
        }
        for cut in [complete, third.len()] {
            let (full, _) = both(&format!("{file}{}", &third[..cut]));
            assert!(
                full.problems.is_empty() && full.torn_tail.is_none(),
                "{cut}"
            );
            assert_eq!(full.entries.len(), 3);
        }
    }

    #[test]
    fn a_heading_fragment_is_torn_only_at_the_end_of_the_file() {
        let file = two_entries();
        let end = file.matches('\n').count() as u32 + 1;
        for (fragment, torn) in [
            ("#", true),
            ("##", true),
            ("## k", true),
            ("## k\n", true),
            ("## k\n\n", true),
            ("## k\n \n\t", true),
            ("## k\n\n`", true),
            ("## k\n\n```me", true),
            ("## k\r\n\r\n```me", true),
            // Not what a cut write leaves: a complete line after the heading that is not
            // the fence, or more than a heading.
            ("## k\n\n```me\n", false),
            ("## k\n\n```js", false),
            ("## k\nprose", false),
            ("#\n", false),
            ("### k", false),
            ("# k", false),
        ] {
            let (full, _) = both(&format!("{file}{fragment}"));
            let want = if torn { "torn" } else { "foreign" };
            assert_eq!(kinds(&full.problems), [(end, want)], "{fragment:?}");
            assert_eq!(full.torn_tail.is_some(), torn, "{fragment:?}");
        }
        // A torn heading with foreign text before it: both, and only the heading is the tail.
        let text = format!("{file}a note\n\n## k\n");
        let (full, _) = both(&text);
        assert_eq!(kinds(&full.problems), [(end, "foreign"), (end + 2, "torn")]);
        assert_eq!(full.torn_tail, Some(file.len() + "a note\n\n".len()));
    }

    /// A Go mem7 entry with `body` (lines as they stand in the file).
    fn go_entry(entity: &str, body: &str) -> String {
        format!(
            "## {entity}\n\n```mem7\nop: store\ncreated: 2025-01-10T09:00:00Z\nupdated: 2025-01-10T09:00:00Z\n```\n\n{body}\n\n---\n\n"
        )
    }

    #[test]
    fn go_bodies_are_read_by_the_go_rule() {
        let quoted = "merge said:\n<<<<<<< HEAD\nport: 1\n||||||| base\nport: 0\n=======\nport: 2\n>>>>>>> other\nkept 2\n\\---\n## not a heading\n\\```mem7\n\\```";
        let text = format!("{}{}", go_entry("a", quoted), go_entry("b", "plain"));
        let (full, _) = both(&text);
        assert_eq!(kinds(&full.problems), [], "{text}");
        assert_eq!(full.entries.len(), 2);
        assert!(full.entries[0].legacy);
        assert_eq!(full.entries[0].value.as_deref(), Some(quoted));
        assert_eq!(full.entries[1].value.as_deref(), Some("plain"));

        // Only empty lines around a Go body go; a line of spaces stays, as it did there.
        let (full, _) = both(&go_entry("a", "  \nvalue\n\t"));
        assert_eq!(full.entries[0].value.as_deref(), Some("  \nvalue\n\t"));

        // The Go mem7 ended a body at any line that is `---` once trimmed; what follows
        // up to the next entry belongs to none.
        let text = go_entry("a", "one\n  ---  \ntwo");
        let (full, _) = both(&text);
        assert_eq!(full.entries[0].value.as_deref(), Some("one"));
        assert_eq!(kinds(&full.problems), [(11, "foreign")]);
        // In a current-format entry such a line is value text, as before.
        let text =
            "## k\n\n```mem7\nrecorded: 2026-01-01T00:00:00Z\n```\n\none\n  ---\ntwo\n\n---\n";
        let (full, _) = both(text);
        assert_eq!(full.entries[0].value.as_deref(), Some("one\n  ---\ntwo"));
    }

    #[test]
    fn a_real_conflict_is_still_a_conflict() {
        let go = go_entry("a", "note");
        let region = |inner: &str| format!("<<<<<<< HEAD\n{inner}=======\nx\n>>>>>>> other\n");
        let current = "## k\n\n```mem7\nrecorded: 2026-01-01T00:00:00Z\n```\n\n";
        for (name, text) in [
            ("around entries", format!("{go}{}", region(&go))),
            ("between entries", format!("{go}{}{go}", region("y\n"))),
            ("around a heading", go_entry("a", &region("## b\n"))),
            ("around a fence", go_entry("a", &region("```\n"))),
            ("around a terminator", go_entry("a", &region("---\n"))),
            (
                "unclosed in a Go body",
                go_entry("a", "<<<<<<< HEAD\nx\n=======\ny"),
            ),
            (
                "without a separator",
                go_entry("a", "<<<<<<< HEAD\nx\n>>>>>>> other"),
            ),
            ("nested", go_entry("a", &region(&region("")))),
            (
                "a lone marker in a Go body",
                go_entry("a", &format!("{}\n=======", region("y\n"))),
            ),
            (
                "in a current entry's body",
                format!("{current}{}\n---\n", region("y\n")),
            ),
            (
                "in a Go envelope",
                format!(
                    "## a\n\n```mem7\n{}```\n\nbody\n\n---\n",
                    region("op: store\n")
                ),
            ),
        ] {
            let (full, _) = both(&text);
            assert!(
                kinds(&full.problems).iter().any(|(_, k)| *k == "conflict"),
                "{name}: {:?}\n{text}",
                full.problems
            );
        }
    }
}
