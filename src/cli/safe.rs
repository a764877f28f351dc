//! What reaches a terminal: every character that could drive it (C0 controls but line
//! feed and tab, DEL, C1 controls, bidirectional overrides) is written as a `\uXXXX`
//! escape instead, so a stored value can neither clear the screen, set the title, write
//! the clipboard (OSC 52) nor reorder what a person reads. The same escape is valid
//! inside a JSON string and decodes to the same character, and raw control characters
//! appear nowhere else in JSON, so `--json` output still parses to exactly the same
//! values.

use std::io::{self, Write};

/// Whether `c` must not reach a terminal as it is.
pub fn is_unsafe(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// `text` with every unsafe character written as `\uXXXX`.
pub fn neutralise(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(is_unsafe) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if is_unsafe(c) {
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// A writer that neutralises what it passes on (bytes that are not UTF-8 pass as they
/// are: mem7 writes only text).
pub struct Safe<W: Write> {
    inner: W,
    /// The start of a character split across two writes.
    pending: Vec<u8>,
}

impl<W: Write> Safe<W> {
    pub fn new(inner: W) -> Safe<W> {
        Safe {
            inner,
            pending: Vec::new(),
        }
    }
}

impl<W: Write> Write for Safe<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut bytes = std::mem::take(&mut self.pending);
        bytes.extend_from_slice(buf);
        let (text, rest) = match std::str::from_utf8(&bytes) {
            Ok(t) => (t, &[][..]),
            Err(e) if e.error_len().is_none() => {
                // A character cut at the end: keep its start for the next write.
                let (head, tail) = bytes.split_at(e.valid_up_to());
                (std::str::from_utf8(head).unwrap_or_default(), tail)
            }
            Err(_) => {
                self.inner.write_all(&bytes)?;
                return Ok(buf.len());
            }
        };
        self.inner.write_all(neutralise(text).as_bytes())?;
        self.pending = rest.to_vec();
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if !self.pending.is_empty() {
            let rest = std::mem::take(&mut self.pending);
            self.inner.write_all(&rest)?;
        }
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_become_visible_and_text_stays() {
        assert_eq!(neutralise("plain ünïcödé\n\tok"), "plain ünïcödé\n\tok");
        assert_eq!(
            neutralise("a\u{1b}]52;c;aGk=\u{7}b"),
            "a\\u001b]52;c;aGk=\\u0007b"
        );
        assert_eq!(
            neutralise("x\u{9b}2J\r\u{202e}"),
            "x\\u009b2J\\u000d\\u202e"
        );
    }

    #[test]
    fn json_through_it_parses_to_the_same_value() {
        let value = serde_json::json!({ "v": "\u{1b}[2J\u{9b}\u{7f}\u{202e}é\n" });
        let mut out = Safe::new(Vec::new());
        let text = serde_json::to_string_pretty(&value).unwrap();
        // Written in pieces that split characters.
        for chunk in text.as_bytes().chunks(3) {
            out.write_all(chunk).unwrap();
        }
        out.flush().unwrap();
        let written = String::from_utf8(out.inner).unwrap();
        assert!(!written.chars().any(|c| is_unsafe(c) && c != '\n'));
        let back: serde_json::Value = serde_json::from_str(&written).unwrap();
        assert_eq!(back, value);
    }
}
