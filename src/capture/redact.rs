//! What may leave a tool call: text between `<private>` and `</private>` never does, a
//! field holding a credential is dropped whole (the event is kept), and every string is
//! cut to a bounded, one-line summary. Every captured string passes through [`clean`].

use crate::text::secret;

/// The longest one-line text a captured field keeps, in characters.
pub const MAX_FIELD_CHARS: usize = 200;

/// `text` without its private parts: everything from `<private>` to the next
/// `</private>` (any case), and everything after a `<private>` that is never closed.
pub fn strip_private(text: &str) -> String {
    const OPEN: &str = "<private>";
    const CLOSE: &str = "</private>";
    let lower = text.to_ascii_lowercase();
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    while let Some(open) = lower[at..].find(OPEN) {
        out.push_str(&text[at..at + open]);
        let inside = at + open + OPEN.len();
        match lower[inside..].find(CLOSE) {
            Some(close) => at = inside + close + CLOSE.len(),
            None => return out,
        }
    }
    out.push_str(&text[at..]);
    out
}

/// A field as it may be captured: private parts removed, whitespace runs made one
/// space, cut to `max` characters (with `…`); `None` when nothing is left or when it
/// holds something that looks like a credential (the whole field is dropped, never
/// the event).
pub fn clean(text: &str, max: usize) -> Option<String> {
    let open = strip_private(text);
    if secret::find(&open).is_some() {
        return None;
    }
    let one_line = open.split_whitespace().collect::<Vec<_>>().join(" ");
    let cut = cut(&one_line, max);
    // A credential can only be cut shorter, never made: checked once more all the same,
    // since the joined line is what is stored.
    (!cut.is_empty() && secret::find(&cut).is_none()).then_some(cut)
}

/// [`clean`] with the usual bound.
pub fn field(text: &str) -> Option<String> {
    clean(text, MAX_FIELD_CHARS)
}

/// `text` cut to `max` characters, marked with `…` when cut.
pub fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut s: String = text.chars().take(max.saturating_sub(1)).collect();
    s.push('…');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_text_never_passes() {
        let cases = [
            ("fix <private>the ACME deal</private> parser", "fix  parser"),
            ("a <PRIVATE>x</Private> b <private>y</private> c", "a  b  c"),
            ("kept <private>unclosed to the end", "kept "),
            ("no tags at all", "no tags at all"),
            ("</private> alone", "</private> alone"),
        ];
        for (text, want) in cases {
            assert_eq!(strip_private(text), want, "{text}");
        }
        assert_eq!(
            field("fix <private>the ACME deal</private> parser").as_deref(),
            Some("fix parser")
        );
        assert_eq!(field("<private>all of it</private>"), None);
    }

    #[test]
    fn a_credential_drops_the_field_and_text_is_bounded() {
        let token = format!("ghp_{}", "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8");
        assert_eq!(field(&format!("deploy with {token}")), None);
        assert_eq!(
            field("  many\n\n spaces\tand lines ").as_deref(),
            Some("many spaces and lines")
        );
        let long = "x".repeat(500);
        let kept = field(&long).unwrap();
        assert_eq!(kept.chars().count(), MAX_FIELD_CHARS);
        assert!(kept.ends_with('…'));
        assert_eq!(cut("short", 10), "short");
    }
}
