//! Reading a file for its chain only (what `verify` needs): the fast path for a file
//! exactly as mem7 writes it (`canonical_chain`), the general scanner otherwise, and the
//! chain fields of an envelope read in place (`ChainSummary`).

use super::*;

/// Reads one memory file for its chain only (what `verify` needs): no values decoded,
/// no envelope kept, and plain envelopes read without allocating. Finds the same
/// entries, problems and hashes as [`parse_file`].
pub fn parse_chain(text: &str, key: &ChainKey) -> ChainFile {
    parse_chain_in(text, key, &mut ChainScratch::default())
}

/// [`parse_chain`] with buffers kept from the files read before: `verify` reads every
/// file on a few threads, and a buffer made anew for each file (a file's entries
/// queued for hashing, a few hundred kilobytes) had every one of its pages faulted in
/// again, a fifth of verify's time in the kernel.
pub fn parse_chain_in(text: &str, key: &ChainKey, scratch: &mut ChainScratch) -> ChainFile {
    scratch.recorded.clear();
    let fast = canonical_chain(text, key, scratch);
    scratch.canonical = fast.is_some();
    fast.unwrap_or_else(|| scan_chain(text, key))
}

/// What [`parse_chain_in`] keeps between files.
#[derive(Default)]
pub struct ChainScratch {
    batch: BatchHash,
    /// Which entry each queued hash belongs to.
    queued: Vec<(usize, usize)>,
    /// Each `recorded:` line of the last file: its entry's heading line and the value's
    /// place in the text.
    recorded: Vec<(u32, std::ops::Range<usize>)>,
    /// Whether the last file was read by the fast path (and `recorded` is complete).
    canonical: bool,
    /// A file's records handed back by a caller that no longer needs them, to read the
    /// next file's into.
    spare: Vec<ChainRecord>,
}

impl ChainScratch {
    /// Takes back a file's records once the caller is done with them (their buffer is
    /// reused for the next file).
    pub fn recycle(&mut self, mut records: Vec<ChainRecord>) {
        records.clear();
        if records.capacity() > self.spare.capacity() {
            self.spare = records;
        }
    }

    /// The `recorded:` lines of the file just read (each entry's heading line and the
    /// value's place in its text), when the fast path read it; `None` otherwise (then
    /// the caller searches the text itself).
    pub fn recorded(&self) -> Option<&[(u32, std::ops::Range<usize>)]> {
        self.canonical.then_some(self.recorded.as_slice())
    }
}

/// [`parse_chain`] by the general scanner, for any file.
pub(super) fn scan_chain(text: &str, key: &ChainKey) -> ChainFile {
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
/// (a conflict, a torn tail, text between entries, a hand-made heading or body, an
/// unusual line), or at the end when a line held a carriage return: the general scanner
/// then reads the whole file, so both give the same answer.
pub(super) fn canonical_chain(
    text: &str,
    key: &ChainKey,
    scratch: &mut ChainScratch,
) -> Option<ChainFile> {
    let bytes = text.as_bytes();
    if bytes.is_empty() || !bytes.ends_with(b"\n") || text.starts_with('\u{feff}') {
        return None;
    }
    // No conflict search: every line is looked at below, and a line that starts with
    // `<` (as `<<<<<<<` does) sends the file to the general scanner. Lines are taken
    // strictly in order, so the line feeds are found as they are needed, and carriage
    // returns in the same pass (a file with one is refused at the end). The file ends
    // with a line feed, so every line has its own.
    let mut lines = Lines {
        text,
        feeds: LineFeeds::new(bytes),
    };
    let ChainScratch {
        batch,
        queued,
        recorded,
        spare,
        ..
    } = scratch;
    let mut entries: Vec<ChainRecord> = std::mem::take(spare);
    entries.reserve(bytes.len() / 400);
    batch.clear();
    queued.clear();
    // The previous entry's `hash` text and value (see `ChainSummary::read`).
    let mut last_hash: Option<(&str, ChainHash)> = None;
    let (mut pos, mut line_no) = (0usize, 0u32);
    while pos < bytes.len() {
        let head_start = pos;
        let (head, next) = lines.at(pos);
        line_no += 1;
        pos = next;
        if head.is_empty() {
            continue;
        }
        let key_text = head.strip_prefix("## ")?;
        let head_line = line_no;
        let (blank, next) = lines.at(pos);
        let (fence, next) = lines.at(next);
        if !blank.is_empty() || fence != concat!("```", "mem7") {
            return None;
        }
        pos = next;
        line_no += 2;
        let (fields, hash_line) =
            read_envelope(&mut lines, &mut pos, &mut line_no, head_line, recorded)?;
        skip_body(&mut lines, &mut pos, &mut line_no)?;
        // An envelope whose tier or op reads do not know is left to the general
        // scanner, so `verify` reads that file in full and names the entry.
        if !fields.words_known() {
            return None;
        }
        let (summary, hash_text) = fields.finish(last_hash);
        last_hash = hash_text.zip(summary.claimed);
        if summary.check_value.is_some() {
            return None;
        }
        // Hashed with the file's other entries at the end (see `BatchHash`), unless
        // it is longer than one BLAKE3 chunk.
        let (first, second) = match hash_line {
            Some((start, next)) => (&bytes[head_start..start], &bytes[next..pos]),
            None => (&bytes[head_start..pos], &[][..]),
        };
        let computed = match batch.push(summary.prev, first, second, summary.keyed) {
            Some(job) => {
                queued.push((entries.len(), job));
                ChainHash::GENESIS
            }
            None => hash_lf_entry(
                bytes,
                head_start..pos,
                hash_line.map(|(start, next)| start..next),
                summary.prev,
                summary.keyed,
                key,
            ),
        };
        entries.push(chain_record(
            span_in(text, trim(key_text)),
            head_line,
            summary,
            computed,
        ));
    }
    if lines.feeds.saw_carriage_return() {
        return None;
    }
    let hashes = batch.finish(key);
    for &(entry, job) in queued.iter() {
        entries[entry].link.computed = hashes[job];
    }
    Some(ChainFile {
        entries,
        problems: Vec::new(),
        torn_tail: None,
    })
}

/// The lines of a file that ends with a line feed, taken strictly in order: the line
/// feeds are found as they are needed, and carriage returns in the same pass.
struct Lines<'a> {
    text: &'a str,
    feeds: LineFeeds<'a>,
}

impl<'a> Lines<'a> {
    /// The line that starts at `at` (the next one), and where the line after it starts.
    #[inline(always)]
    fn at(&mut self, at: usize) -> (&'a str, usize) {
        let end = self.feeds.next().unwrap_or(self.text.len());
        (&self.text[at..end], (end + 1).min(self.text.len()))
    }
}

/// The envelope at `*pos`, to its closing fence, read as it goes: its fields and where its
/// `hash` line is, noting its `recorded:` value under `head_line`. `None`: a line that is
/// not plain, which sends the file to the general scanner (whose full parser reads it).
#[inline(always)]
fn read_envelope<'a>(
    lines: &mut Lines<'a>,
    pos: &mut usize,
    line_no: &mut u32,
    head_line: u32,
    recorded: &mut Vec<(u32, std::ops::Range<usize>)>,
) -> Option<(PlainFields<'a>, Option<(usize, usize)>)> {
    let (text, bytes) = (lines.text, lines.text.as_bytes());
    let mut fields = PlainFields::default();
    let mut hash_line: Option<(usize, usize)> = None;
    loop {
        if *pos >= bytes.len() {
            return None;
        }
        let (line, next) = lines.at(*pos);
        *line_no += 1;
        match line.as_bytes().first() {
            Some(b'`') if line == "```" => {
                *pos = next;
                break;
            }
            Some(b'`' | b'<') => return None,
            Some(b'#') if line.starts_with("## ") => return None,
            _ => {}
        }
        // The name is found in the next sixteen bytes, the line's feed stopping it.
        match fields.take_named(line, super::lanes::name_len(&bytes[*pos..]))? {
            Taken::Hash if hash_line.is_none() => hash_line = Some((*pos, next)),
            Taken::Recorded(value) => recorded.push((head_line, span_in(text, trim(value)))),
            _ => {}
        }
        *pos = next;
    }
    Some((fields, hash_line))
}

/// Moves `*pos` past the body at it, to its `---`. `None`: a line mem7 does not write in
/// a body (a hand-written or Go mem7 body, whose end and conflict rules differ, is left to
/// the general scanner), or no `---`.
#[inline(always)]
fn skip_body(lines: &mut Lines<'_>, pos: &mut usize, line_no: &mut u32) -> Option<()> {
    loop {
        if *pos >= lines.text.len() {
            return None;
        }
        let (line, next) = lines.at(*pos);
        *line_no += 1;
        *pos = next;
        if line == "---" {
            return Some(());
        }
        if !(line.is_empty() || line.starts_with('>')) {
            return None;
        }
    }
}

/// The record of an entry read by the fast path (its file placed later).
#[inline(always)]
fn chain_record(
    key_span: std::ops::Range<usize>,
    head_line: u32,
    summary: ChainSummary,
    computed: ChainHash,
) -> ChainRecord {
    ChainRecord {
        key_span,
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
    }
}

/// The chain fields of an envelope.
#[derive(Default)]
pub(super) struct ChainSummary {
    pub(super) prev: Option<ChainHash>,
    pub(super) claimed: Option<ChainHash>,
    pub(super) keyed: bool,
    pub(super) seal: bool,
    pub(super) legacy: bool,
    pub(super) accepts: Vec<ChainHash>,
    /// The encoding of a value whose decoding can fail (rare: values with control
    /// characters), to be checked.
    pub(super) check_value: Option<String>,
}

impl ChainSummary {
    /// Reads plain `name: value` lines in place; anything else (quotes, flow
    /// mappings, a line without `: `) goes through the full envelope parser, so both
    /// paths agree on every input.
    ///
    /// `known` is the previous entry's `hash` text and value: a `prev` that repeats it
    /// (the usual case) is not decoded again. `hash_text` receives this entry's `hash`
    /// text when it was read in place.
    pub(super) fn read<'a>(
        envelope: impl Iterator<Item = &'a str> + Clone,
        known: Option<(&str, ChainHash)>,
        hash_text: &mut Option<&'a str>,
    ) -> Result<ChainSummary, String> {
        let mut fields = PlainFields::default();
        for line in envelope.clone() {
            if !fields.take(line) {
                return Self::from_fields(&Fields::parse(envelope)?);
            }
        }
        let (summary, text) = fields.finish(known);
        *hash_text = text;
        Ok(summary)
    }

    pub(super) fn summarise(
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
            claimed: hash.and_then(|h| ChainHash::from_hex(trim(h))),
            keyed: chain == Some("keyed"),
            legacy,
            accepts: if seal { accepts } else { Vec::new() },
            seal,
            check_value: (!legacy && has_value(op.unwrap_or("store")) && can_fail(encoding))
                .then(|| encoding.unwrap_or_default().to_string()),
        }
    }

    pub(super) fn from_fields(fields: &Fields) -> Result<ChainSummary, String> {
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

/// What a plain envelope line was, for the fast path.
pub(super) enum Taken<'a> {
    /// A `hash` field.
    Hash,
    /// A `recorded` field, with its value.
    Recorded(&'a str),
    /// Any other plain line.
    Plain,
}

/// The chain fields of an envelope's plain `name: value` lines, read in place one line
/// at a time (by [`ChainSummary::read`], and by the fast path as it meets each line).
#[derive(Default)]
pub(super) struct PlainFields<'a> {
    op: Option<&'a str>,
    chain: Option<&'a str>,
    prev: Option<&'a str>,
    hash: Option<&'a str>,
    accepts: Option<&'a str>,
    encoding: Option<&'a str>,
    tier: Option<&'a str>,
    /// The values of `recorded`, `valid_from` and `valid_to`, for [`Self::words_known`].
    times: [Option<&'a str>; 3],
    recorded: bool,
    go_times: bool,
}

impl<'a> PlainFields<'a> {
    /// Takes one envelope line: `false` when it is not a plain line (quotes, flow
    /// mappings, block scalars, a line without `: `), which only the full parser reads.
    pub(super) fn take(&mut self, line: &'a str) -> bool {
        self.take_named(line, super::lanes::name_len(line.as_bytes()))
            .is_some()
    }

    /// [`PlainFields::take`] of a line whose name (its leading lower-case letters and
    /// `_`) is `name_len` bytes long: found by the caller, which may look past the
    /// line's end. What the line was, or `None` when it is not plain.
    pub(super) fn take_named(&mut self, line: &'a str, name_len: usize) -> Option<Taken<'a>> {
        // `name: value` with a name of lowercase letters and `_`.
        let b = line.as_bytes();
        let split = (name_len > 0 && b.get(name_len) == Some(&b':'))
            .then(|| (&line[..name_len], &line[name_len + 1..]))
            .and_then(|(name, rest)| Some((name, rest.strip_prefix(' ')?)));
        let Some((name, value)) = split else {
            return (is_blank(line) || line.starts_with('#')).then_some(Taken::Plain);
        };
        // What the plain envelope reader leaves to YAML: quoted or flow values, block
        // scalars, anchors, tags, and a list without its closing bracket (a list that
        // ends in one needs no trimming to say so).
        let special = match value.as_bytes().first() {
            Some(b'"' | b'\'' | b'{' | b'|' | b'>' | b'&' | b'*' | b'!') => true,
            Some(b'[') => !value.ends_with(']') && !value.trim_end().ends_with(']'),
            _ => false,
        };
        if special {
            return None;
        }
        match name {
            "op" => self.op = Some(trim(value)),
            "chain" => self.chain = Some(trim(value)),
            "prev" => self.prev = Some(value),
            "hash" => {
                self.hash = Some(value);
                return Some(Taken::Hash);
            }
            "accepts" => self.accepts = Some(value),
            "encoding" => self.encoding = Some(trim(value)),
            "tier" => self.tier = Some(trim(value)),
            "valid_from" => self.times[1] = Some(trim(value)),
            "valid_to" => self.times[2] = Some(trim(value)),
            "recorded" => {
                self.recorded = true;
                self.times[0] = Some(trim(value));
                return Some(Taken::Recorded(value));
            }
            "updated" | "created" | "deleted" => self.go_times = true,
            _ => {}
        }
        Some(Taken::Plain)
    }

    /// Whether the tier and op (when given) are words reads know, and the times are in
    /// a shape they surely read (else the general scanner reads the file in full).
    pub(super) fn words_known(&self) -> bool {
        let [recorded, from, to] = self.times;
        let plain = crate::core::time::plainly_valid;
        if !(recorded.is_none_or(plain)
            && from.is_none_or(plain)
            && to.is_none_or(|t| {
                plain(t)
                    || t.is_empty()
                    || t.eq_ignore_ascii_case("open")
                    || t.eq_ignore_ascii_case("infinity")
                    || t == "∞"
            }))
        {
            return false;
        }
        self.tier
            .is_none_or(|t| crate::core::Tier::parse(t).is_some())
            && self.op.is_none_or(|o| {
                crate::core::EntryOp::parse(o).is_some() || matches!(o, "delete" | "delete_tags")
            })
    }

    /// The summary, `known` being the previous entry's `hash` text and value (a `prev`
    /// that repeats it, the usual case, is not decoded again); and this entry's `hash`
    /// text.
    pub(super) fn finish(
        self,
        known: Option<(&str, ChainHash)>,
    ) -> (ChainSummary, Option<&'a str>) {
        let accepts = self.accepts.map_or_else(Vec::new, |a| {
            let a = a.trim();
            let list = a
                .strip_prefix('[')
                .and_then(|inner| inner.strip_suffix(']'))
                .unwrap_or(a);
            hashes(list.split(','))
        });
        let hash_text = self.hash.map(trim);
        let flags = [self.recorded, self.go_times];
        let mut summary = ChainSummary::summarise(
            self.op,
            self.chain,
            None,
            hash_text,
            self.encoding,
            flags,
            accepts,
        );
        summary.prev = self.prev.and_then(|p| {
            let p = trim(p);
            match known {
                Some((text, value)) if text == p => Some(value),
                _ => ChainHash::from_hex(p),
            }
        });
        (summary, hash_text)
    }
}

/// [`str::trim`], at once when the text starts and ends with a visible ASCII character
/// (as mem7's own values do).
fn trim(text: &str) -> &str {
    let b = text.as_bytes();
    match (b.first(), b.last()) {
        (Some(first), Some(last)) if first.is_ascii_graphic() && last.is_ascii_graphic() => text,
        _ => text.trim(),
    }
}

pub(super) fn hashes<'a>(items: impl Iterator<Item = &'a str>) -> Vec<ChainHash> {
    items
        .filter_map(|h| ChainHash::from_hex(h.trim()))
        .collect()
}
