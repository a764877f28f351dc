//! A value's sentences, each embedded on its own beside the whole text, so that meaning
//! search can find a fact by the one sentence a question asks about (a turn that also
//! greets, thanks and changes the subject has a whole-text vector that is about all of
//! it at once).
//!
//! The split is simple and predictable: a sentence ends at a line break, or after `.`,
//! `!` or `?` followed by white space. Pieces without a letter or a digit (a `---` line,
//! a fence) are dropped, and so are repeats. A value of one sentence has no sentence
//! texts of its own: its whole text already is that sentence, so it costs what it did.

use super::{EMBEDDED_VALUE_BYTES, version_text};

/// The most sentence vectors a fact gets unless `search.sentences` says otherwise. Longer
/// values keep the vectors of their first sentences (and their whole text's vector,
/// which the model reads up to its first 256 tokens).
pub const DEFAULT_SENTENCES: usize = 16;

/// The most sentence vectors `search.sentences` may ask for.
pub const MAX_SENTENCES: usize = 64;

/// The sentences of `value` (its first [`EMBEDDED_VALUE_BYTES`]), trimmed, in order,
/// without repeats or pieces that hold no letter or digit; at most `max`.
pub fn sentences<'a>(value: &'a str, max: usize) -> Vec<&'a str> {
    let value = crate::core::validate::head_of(value, EMBEDDED_VALUE_BYTES);
    let mut out: Vec<&str> = Vec::new();
    let mut start = 0;
    let take = |piece: &'a str, out: &mut Vec<&'a str>| {
        let piece = piece.trim();
        if out.len() < max && piece.chars().any(char::is_alphanumeric) && !out.contains(&piece) {
            out.push(piece);
        }
    };
    let mut chars = value.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        let end = match c {
            '\n' | '\r' => Some(at),
            '.' | '!' | '?' => chars
                .peek()
                .is_some_and(|(_, next)| next.is_whitespace())
                .then_some(at + 1),
            _ => None,
        };
        if let Some(end) = end {
            take(&value[start..end], &mut out);
            start = end;
        }
    }
    take(&value[start..], &mut out);
    out
}

/// The texts embedded for a version's sentences (`key words: sentence`, as
/// [`version_text`] writes a whole value), at most `max`; none when the value has fewer
/// than two sentences or `max` is 0.
pub fn sentence_texts(key: &str, value: &str, max: usize) -> Vec<String> {
    if max == 0 {
        return Vec::new();
    }
    // One more than kept, to tell a value of one sentence from one of several.
    let found = sentences(value, max.max(2));
    if found.len() < 2 {
        return Vec::new();
    }
    found
        .into_iter()
        .take(max)
        .map(|s| version_text(key, s))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentences_end_at_stops_before_space_and_at_line_breaks() {
        assert_eq!(
            sentences(
                "Hi Mel! I went to the support group yesterday. It was great?  Yes",
                16
            ),
            [
                "Hi Mel!",
                "I went to the support group yesterday.",
                "It was great?",
                "Yes"
            ]
        );
        assert_eq!(
            sentences("v1.2 is out\n- fast\r\n- small\n\n---\n", 16),
            ["v1.2 is out", "- fast", "- small"],
            "a dot inside a word does not end a sentence; a line without letters is no sentence"
        );
        assert_eq!(
            sentences("Thanks! Thanks! Bye.", 16),
            ["Thanks!", "Bye."],
            "repeats once"
        );
        assert_eq!(
            sentences("one. two. three. four.", 2),
            ["one.", "two."],
            "capped"
        );
        assert_eq!(sentences("", 16), Vec::<&str>::new());
    }

    #[test]
    fn a_value_of_one_sentence_has_no_sentence_texts() {
        assert!(sentence_texts("db.engine", "postgres holds the orders", 16).is_empty());
        assert!(sentence_texts("db.engine", "postgres holds the orders.\n", 16).is_empty());
        assert!(sentence_texts("a", "One. Two.", 0).is_empty(), "turned off");
        assert_eq!(
            sentence_texts("caroline:d1_3", "Hey! I adopted a dog. His name is Rex.", 2),
            ["caroline d1 3: Hey!", "caroline d1 3: I adopted a dog."]
        );
        assert_eq!(
            sentence_texts("k", "One. Two.", 1),
            ["k: One."],
            "one kept of two"
        );
    }

    #[test]
    fn a_long_value_is_read_up_to_the_embedded_bytes() {
        let long = "word. ".repeat(4000) + "last one.";
        let found = sentences(&long, usize::MAX);
        assert_eq!(
            found,
            ["word.", "wo"],
            "repeats once; the text is cut at 8 KB"
        );
        let distinct: String = (0..3000).map(|i| format!("s{i}. ")).collect();
        assert!(sentences(&distinct, usize::MAX).len() < 3000);
        assert_eq!(sentences(&distinct, 16).len(), 16);
    }
}
