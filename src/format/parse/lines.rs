//! A file's lines and what each one is: the line table (`Lines`, its line feeds found
//! sixteen bytes at a time), the predicates the scanner asks of every line (fences,
//! terminators, conflict markers, structure), conflict regions, torn headings, and runs
//! of foreign text with their digest.

use super::*;

/// Where each line of a file starts, its line feeds found sixteen bytes at a time.
/// Lines are sliced on demand: a few bytes per line instead of a struct with a slice.
pub(super) struct Lines<'a> {
    pub(super) src: &'a str,
    /// Byte offset of each line's first byte.
    pub(super) starts: Vec<usize>,
    /// Line feeds in the file.
    pub(super) newlines: usize,
    /// Whether the file holds a carriage return anywhere (most do not, and then no
    /// line needs one stripped before hashing).
    pub(super) has_cr: bool,
}

impl<'a> Lines<'a> {
    pub(super) fn new(src: &'a str) -> Lines<'a> {
        // A byte order mark is not part of the first line.
        let first = if src.starts_with('\u{feff}') { 3 } else { 0 };
        let mut starts = Vec::with_capacity(src.len() / 24 + 2);
        let mut newlines = 0;
        if first < src.len() {
            starts.push(first);
        }
        let mut feeds = LineFeeds::new(&src.as_bytes()[first..]);
        for nl in feeds.by_ref() {
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
            // Every feed taken, so every byte was looked at (a byte order mark holds
            // no carriage return).
            has_cr: feeds.saw_carriage_return(),
        }
    }

    pub(super) fn len(&self) -> usize {
        self.starts.len()
    }

    pub(super) fn start(&self, i: usize) -> usize {
        self.starts[i]
    }

    /// Offset just past the line's terminator (or the end of the file).
    pub(super) fn end(&self, i: usize) -> usize {
        self.starts.get(i + 1).copied().unwrap_or(self.src.len())
    }

    /// The line without its terminator (`\n` or `\r\n`).
    pub(super) fn text(&self, i: usize) -> &'a str {
        let raw = &self.src[self.start(i)..self.end(i)];
        let t = raw.strip_suffix('\n').unwrap_or(raw);
        t.strip_suffix('\r').unwrap_or(t)
    }
}

// The line predicates run on every line of every file: each rejects on the first bytes
// before trimming anything.

pub(super) fn is_fence_open(text: &str) -> bool {
    text.starts_with("```m") && text.trim_end() == concat!("```", "mem7")
}

pub(super) fn is_fence_close(text: &str) -> bool {
    text.starts_with("```") && text.trim_end() == "```"
}

pub(super) fn is_terminator(text: &str) -> bool {
    text.starts_with("---") && text.trim_end() == "---"
}

pub(super) fn is_blank(text: &str) -> bool {
    match text.bytes().find(|b| !b.is_ascii_whitespace()) {
        None => true,
        Some(b) if b.is_ascii() => false,
        Some(_) => text.trim().is_empty(),
    }
}

/// The line that opens a git conflict region.
pub(super) fn is_conflict_open(text: &str) -> bool {
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
pub(super) fn conflict_marker(text: &str) -> Option<u8> {
    is_conflict_marker(text).then(|| text.as_bytes()[0])
}

/// A line the Go mem7 or mem7 reads as structure wherever it stands: a `## ` heading, a
/// fence, or a terminator (by the Go reader's rule: surrounding whitespace ignored).
pub(super) fn is_structural(text: &str) -> bool {
    text.starts_with("## ") || matches!(text.trim(), "---" | "```" | "```mem7")
}

/// The last line of a whole git conflict region that starts at line `start`
/// (`<<<<<<<`, optionally `|||||||`, then `=======`, then `>>>>>>>`) with no structural
/// line and no other region inside it. A Go mem7 body holding such a region quotes a
/// conflict; anything less is an unresolved merge.
pub(super) fn whole_region(lines: &Lines<'_>, start: usize) -> Option<usize> {
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
pub(super) fn torn_heading(lines: &Lines<'_>, i: usize) -> Option<String> {
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
pub(super) fn foreign_run(lines: &Lines<'_>, first: usize, last: usize) -> Problem {
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
pub(super) fn envelope_is_legacy(lines: &Lines<'_>, open: usize, close: usize) -> bool {
    ChainSummary::read((open + 1..close).map(|k| lines.text(k)), None, &mut None)
        .is_ok_and(|s| s.legacy)
}

pub(super) fn next_nonblank(lines: &Lines<'_>, from: usize) -> usize {
    let mut j = from;
    while j < lines.len() && is_blank(lines.text(j)) {
        j += 1;
    }
    j
}

/// Whether an entry starts at line `i`: a `## ` heading whose next non-blank line opens
/// a ```` ```mem7 ```` block.
pub(super) fn entry_starts(lines: &Lines<'_>, i: usize) -> Option<usize> {
    lines.text(i).strip_prefix("## ")?;
    let j = next_nonblank(lines, i + 1);
    (j < lines.len() && is_fence_open(lines.text(j))).then_some(j)
}
