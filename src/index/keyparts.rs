//! How a key is found by its parts in a search by words: each word of the key (split at
//! anything not a letter or a digit, and at camelCase steps), and each compound the key
//! writes in two words (`on_call` is also `oncall`, `dataBase` also `database`), all
//! stemmed as values are (`cache:store` is found by "caching"). A question's words go
//! through the same analyzer, and its adjacent words are joined too ([`joined_pairs`]),
//! so "on call" finds `oncall` and "oncall" finds `on_call` or `on-call`.
//!
//! Compounds are joined inside one segment of a key only (`:` `.` `/` part the
//! segments): `event7:host` is not also `event7host`.

use tantivy::tokenizer::{Token, TokenStream, Tokenizer};

/// The words of `key`, segment by segment: split at anything not alphanumeric, segments
/// at `:` `.` `/`, words also at lower-to-upper camelCase steps; lower-cased.
fn segments(key: &str) -> Vec<Vec<String>> {
    let mut out: Vec<Vec<String>> = vec![Vec::new()];
    let mut word = String::new();
    let mut prev_lower = false;
    let end_word = |word: &mut String, out: &mut Vec<Vec<String>>| {
        if !word.is_empty() {
            out.last_mut()
                .expect("one segment at least")
                .push(std::mem::take(word));
        }
    };
    for c in key.chars() {
        if !c.is_alphanumeric() {
            end_word(&mut word, &mut out);
            if matches!(c, ':' | '.' | '/') && out.last().is_some_and(|s| !s.is_empty()) {
                out.push(Vec::new());
            }
            prev_lower = false;
            continue;
        }
        if c.is_uppercase() && prev_lower {
            end_word(&mut word, &mut out);
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        word.extend(c.to_lowercase());
    }
    end_word(&mut word, &mut out);
    out.retain(|s| !s.is_empty());
    out
}

/// The terms a key is indexed under before stemming: every word, then every two
/// adjacent words of a segment joined (with their position: the first word's).
pub fn key_terms(key: &str) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    let mut position = 0;
    for segment in segments(key) {
        for (i, w) in segment.iter().enumerate() {
            out.push((w.clone(), position + i));
            if let Some(next) = segment.get(i + 1) {
                out.push((format!("{w}{next}"), position + i));
            }
        }
        position += segment.len();
    }
    out
}

/// Adjacent words of a question joined (`on call` → `oncall`, `on-call` → `oncall`),
/// lower-cased: the compounds a key may write as one word.
pub fn joined_pairs(text: &str) -> Vec<String> {
    let words: Vec<String> = text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    let mut out: Vec<String> = Vec::new();
    for pair in words.windows(2) {
        let both = format!("{}{}", pair[0], pair[1]);
        if !out.contains(&both) {
            out.push(both);
        }
    }
    out
}

/// The tokenizer of the key field: [`key_terms`] as tokens (lower-cased already; the
/// analyzer stems them).
#[derive(Clone, Default)]
pub struct KeyPartsTokenizer {
    tokens: Vec<Token>,
}

impl Tokenizer for KeyPartsTokenizer {
    type TokenStream<'a> = KeyPartsStream<'a>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> KeyPartsStream<'a> {
        self.tokens.clear();
        for (text, position) in key_terms(text) {
            self.tokens.push(Token {
                offset_from: 0,
                offset_to: 0,
                position,
                text,
                position_length: 1,
            });
        }
        KeyPartsStream {
            tokens: &mut self.tokens,
            next: 0,
        }
    }
}

/// The token stream of [`KeyPartsTokenizer`].
pub struct KeyPartsStream<'a> {
    tokens: &'a mut Vec<Token>,
    next: usize,
}

impl TokenStream for KeyPartsStream<'_> {
    fn advance(&mut self) -> bool {
        self.next += 1;
        self.next <= self.tokens.len()
    }

    fn token(&self) -> &Token {
        &self.tokens[self.next - 1]
    }

    fn token_mut(&mut self) -> &mut Token {
        &mut self.tokens[self.next - 1]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terms(key: &str) -> Vec<String> {
        key_terms(key).into_iter().map(|(t, _)| t).collect()
    }

    #[test]
    fn a_key_is_indexed_by_its_words_and_its_compounds() {
        assert_eq!(terms("cache:store"), ["cache", "store"]);
        assert_eq!(
            terms("on_call:primary"),
            ["on", "oncall", "call", "primary"]
        );
        assert_eq!(terms("team:onCall"), ["team", "on", "oncall", "call"]);
        assert_eq!(terms("on-call"), ["on", "oncall", "call"]);
        assert_eq!(terms("dataBase.host"), ["data", "database", "base", "host"]);
        assert_eq!(terms("event7:host"), ["event7", "host"]);
        assert_eq!(terms("::"), Vec::<String>::new());
        // Positions count words, not compounds.
        assert_eq!(
            key_terms("a_b:c"),
            [
                ("a".to_string(), 0),
                ("ab".to_string(), 0),
                ("b".to_string(), 1),
                ("c".to_string(), 2)
            ]
        );
    }

    #[test]
    fn a_question_joins_its_adjacent_words() {
        assert_eq!(joined_pairs("who is on call?"), ["whois", "ison", "oncall"]);
        assert_eq!(joined_pairs("On-Call"), ["oncall"]);
        assert!(joined_pairs("caching").is_empty());
    }
}
