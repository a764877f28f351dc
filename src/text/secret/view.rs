//! The normalised views of a text: format characters removed, look-alikes folded, line
//! breaks joined; each keeps a map back to offsets in the original text.

/// A normalised copy of a text with a way back to offsets in the original.
pub(super) struct View {
    pub(super) text: String,
    /// `(offset in view, offset in original)` at every place the two shift apart;
    /// sorted, starting with `(0, 0)`.
    pub(super) marks: Vec<(usize, usize)>,
}

impl View {
    /// Removes format characters and folds look-alikes; with `join`, also removes line
    /// breaks with the white space and quote marks around them. `None` if nothing
    /// changed.
    pub(super) fn new(text: &str, join: bool) -> Option<View> {
        let b = text.as_bytes();
        let mut out = String::with_capacity(text.len());
        let mut marks = vec![(0, 0)];
        let mut copied = 0;
        let mut i = 0;
        while i < b.len() {
            let c = b[i];
            let skip_to = if c < 0x80 {
                if join && matches!(c, b' ' | b'\t' | b'\r' | b'\n' | b'\\') {
                    match line_break(b, i) {
                        Break::At(end) => Some((end, None)),
                        Break::Not(end) => {
                            i = end;
                            continue;
                        }
                    }
                } else {
                    None
                }
            } else {
                // A non-ASCII byte at `i` starts a character: earlier steps only stop
                // at ASCII bytes or after whole characters.
                let ch = text.get(i..)?.chars().next()?;
                let len = ch.len_utf8();
                if is_format(ch) {
                    Some((i + len, None))
                } else {
                    fold(ch).map(|a| (i + len, Some(a)))
                }
            };
            match skip_to {
                Some((end, replacement)) => {
                    out.push_str(&text[copied..i]);
                    if let Some(a) = replacement {
                        out.push(a);
                    }
                    i = end;
                    copied = end;
                    marks.push((out.len(), end));
                }
                None => i += if c < 0x80 { 1 } else { utf8_len(c) },
            }
        }
        if marks.len() == 1 {
            return None;
        }
        out.push_str(&text[copied..]);
        Some(View { text: out, marks })
    }

    /// The offset in the original text of an offset in the view.
    pub(super) fn to_original(&self, at: usize) -> usize {
        let idx = self.marks.partition_point(|&(v, _)| v <= at);
        let (v, o) = self.marks[idx.saturating_sub(1)];
        o + (at - v)
    }
}

pub(super) fn utf8_len(first: u8) -> usize {
    match first {
        0xF0.. => 4,
        0xE0.. => 3,
        0xC0.. => 2,
        _ => 1,
    }
}

pub(super) enum Break {
    /// A line break (with its surrounding blanks) ends here.
    At(usize),
    /// No line break; ordinary text continues here.
    Not(usize),
}

/// At a blank, backslash or line break: `[ \t]* \\? (\r?\n | literal \n) [ \t]* (> [ \t]*)?`.
pub(super) fn line_break(b: &[u8], start: usize) -> Break {
    let mut i = start;
    while i < b.len() && matches!(b[i], b' ' | b'\t') {
        i += 1;
    }
    let mut j = i;
    if b.get(j) == Some(&b'\\') && matches!(b.get(j + 1), Some(b'\r' | b'\n')) {
        j += 1;
    }
    let broke = if b.get(j) == Some(&b'\r') && b.get(j + 1) == Some(&b'\n') {
        j += 2;
        true
    } else if b.get(j) == Some(&b'\n') {
        j += 1;
        true
    } else if b.get(j) == Some(&b'\\') && b.get(j + 1) == Some(&b'n') {
        j += 2;
        true
    } else if b[j..].starts_with(br"\r\n") {
        j += 4;
        true
    } else {
        false
    };
    if !broke {
        return Break::Not(if i > start { i } else { start + 1 });
    }
    while j < b.len() && matches!(b[j], b' ' | b'\t') {
        j += 1;
    }
    if b.get(j) == Some(&b'>') {
        j += 1;
        while j < b.len() && matches!(b[j], b' ' | b'\t') {
            j += 1;
        }
    }
    Break::At(j)
}

pub(super) fn has_line_break(text: &str) -> bool {
    text.contains('\n') || text.contains(r"\n")
}

/// Invisible characters that can hide inside a token: zero-width space, joiners and
/// non-joiner, word joiner and invisible operators, BOM, soft hyphen, bidi controls,
/// variation selectors, Mongolian vowel separator, Hangul fillers, tag controls.
pub(super) fn is_format(c: char) -> bool {
    matches!(c,
        '\u{00AD}' | '\u{034F}' | '\u{061C}' | '\u{115F}' | '\u{1160}' | '\u{17B4}' | '\u{17B5}'
        | '\u{180B}'..='\u{180F}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}'
        | '\u{2060}'..='\u{206F}' | '\u{3164}' | '\u{FE00}'..='\u{FE0F}' | '\u{FEFF}'
        | '\u{FFA0}' | '\u{1BCA0}'..='\u{1BCA3}' | '\u{1D173}'..='\u{1D17A}'
        | '\u{E0000}'..='\u{E001F}' | '\u{E007F}'..='\u{E0FFF}')
}

/// ASCII look-alikes: full-width forms and Unicode tag characters (which invisibly
/// spell ASCII).
pub(super) fn fold(c: char) -> Option<char> {
    let u = u32::from(c);
    match u {
        0xFF01..=0xFF5E => char::from_u32(u - 0xFEE0),
        0xE0020..=0xE007E => char::from_u32(u - 0xE0000),
        _ => None,
    }
}

/// The largest character boundary at or before `at` (and within `text`).
pub(super) fn char_floor(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}
