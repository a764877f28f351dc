//! The local model's tokenizer: BERT's WordPiece as all-MiniLM-L6-v2's `tokenizer.json`
//! describes it, text in, token ids out (`[CLS]` … `[SEP]`, cut to the model's length).
//!
//! It does what Hugging Face's `tokenizers` does with that file, step for step, and reads
//! only what the steps need: the vocabulary, the special tokens and their ids. The other
//! sections are checked to say what these steps assume (a file that says otherwise is
//! refused, naming it). `tokenizers` deserialises the whole file into its own structures,
//! which took 25–39 ms of every process that embedded a query; this reads it in about
//! 2.5 ms, a third of a millisecond of it parsing the JSON. The equivalence is proved,
//! id for id, by a test that runs both on a
//! large corpus (`tests/it/local_model.rs`), which also keeps the embedding cache valid: it
//! is keyed by text, and the same ids give the same vector.
//!
//! The steps, as `tokenizers` 0.23 runs them for this file:
//! 1. Added tokens (`[CLS]`, `[UNK]`, … with `normalized: false`) are found in the raw
//!    text, leftmost and longest first, and become their ids as they are.
//! 2. Each stretch between them is normalised (BertNormalizer): NUL, U+FFFD and control
//!    characters (categories Cc, Cf, Co, but not tab, newline or carriage return) are
//!    dropped, white space becomes a space, CJK ideographs get a space on each side, the
//!    text is decomposed (NFD) and non-spacing marks (Mn) dropped, and it is lowercased.
//! 3. It is split at white space, and every punctuation character (ASCII punctuation or
//!    Unicode P*) is a word of its own (BertPreTokenizer).
//! 4. Each word becomes its longest vocabulary prefix, then the longest `##` piece of the
//!    rest, and so on; a word with a piece not in the vocabulary, or longer than
//!    `max_input_chars_per_word` characters, is one `[UNK]` (WordPiece).
//! 5. The ids are cut so that with `[CLS]` before and `[SEP]` after there are at most the
//!    model's maximum (truncation, which `tokenizers` applies before the specials are
//!    added, leaving room for them).
//!
//! The character tables are the ones `tokenizers` uses (`unicode_categories` for the
//! categories, `unicode-normalization-alignments` for NFD), not newer ones: a character
//! classed differently by a newer Unicode would give different ids from the same text,
//! and the cached vectors of texts holding it would no longer be what the model gives.

use std::borrow::Cow;
use std::collections::HashMap;
use std::hash::BuildHasher;
use std::path::{Path, PathBuf};

use hashbrown::{DefaultHashBuilder, HashTable};
use serde::Deserialize;
use unicode_categories::UnicodeCategories;
use unicode_normalization_alignments::UnicodeNormalization;

/// Why a tokenizer file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum TokenizerError {
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{} is not a tokenizer file mem7 can read: {source}", path.display())]
    Parse {
        path: PathBuf,
        source: serde_json::Error,
    },
    #[error(
        "{}: {what}; mem7 reads only a BERT WordPiece tokenizer as all-MiniLM-L6-v2 has it",
        path.display()
    )]
    Unsupported { path: PathBuf, what: String },
}

/// A loaded WordPiece tokenizer.
pub struct WordPiece {
    vocab: Vocab,
    /// Tokens taken from the raw text before anything else, with their ids.
    added: Vec<(Box<str>, u32)>,
    prefix: Box<str>,
    max_word_chars: usize,
    unk: u32,
    cls: u32,
    sep: u32,
}

// The parts of `tokenizer.json` that are read. Fields not named here (the decoder, the
// file's own truncation and padding, which the caller overrides) are skipped.

#[derive(Deserialize)]
struct File<'a> {
    #[serde(borrow)]
    added_tokens: Vec<AddedToken<'a>>,
    #[serde(borrow)]
    normalizer: Option<Normalizer<'a>>,
    #[serde(borrow)]
    pre_tokenizer: Option<Tagged<'a>>,
    #[serde(borrow)]
    post_processor: Option<PostProcessor<'a>>,
    #[serde(borrow)]
    model: Model<'a>,
}

#[derive(Deserialize)]
struct AddedToken<'a> {
    id: u32,
    #[serde(borrow)]
    content: Cow<'a, str>,
    single_word: bool,
    lstrip: bool,
    rstrip: bool,
    normalized: bool,
}

#[derive(Deserialize)]
struct Tagged<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Normalizer<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    clean_text: bool,
    handle_chinese_chars: bool,
    strip_accents: Option<bool>,
    lowercase: bool,
}

#[derive(Deserialize)]
struct PostProcessor<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(borrow, default)]
    single: Vec<Piece<'a>>,
    #[serde(borrow, default)]
    special_tokens: HashMap<Cow<'a, str>, Special>,
}

#[derive(Deserialize, PartialEq)]
enum Piece<'a> {
    SpecialToken {
        #[serde(borrow)]
        id: Cow<'a, str>,
        type_id: u32,
    },
    Sequence {
        #[serde(borrow)]
        id: Cow<'a, str>,
        type_id: u32,
    },
}

#[derive(Deserialize)]
struct Special {
    ids: Vec<u32>,
}

#[derive(Deserialize)]
struct Model<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(borrow)]
    unk_token: Cow<'a, str>,
    #[serde(borrow)]
    continuing_subword_prefix: Cow<'a, str>,
    max_input_chars_per_word: usize,
    vocab: Vocab,
}

/// The vocabulary: every token's text one after another in one string, and a table of
/// (start, length, id) found by the text's hash. With a map of 30,522 owned strings, one
/// allocation each, the file took 4–6 ms to read (and its map a while to free).
struct Vocab {
    text: String,
    table: HashTable<(u32, u32, u32)>,
    hasher: DefaultHashBuilder,
}

impl Vocab {
    fn get(&self, token: &str) -> Option<u32> {
        let hash = self.hasher.hash_one(token);
        self.table
            .find(hash, |&(start, len, _)| {
                &self.text[start as usize..(start + len) as usize] == token
            })
            .map(|&(_, _, id)| id)
    }
}

impl<'de> Deserialize<'de> for Vocab {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Vocab, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = Vocab;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a map of tokens to ids")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Vocab, A::Error> {
                let mut text = String::with_capacity(256 * 1024);
                let mut entries = Vec::with_capacity(32 * 1024);
                while let Some((token, id)) = map.next_entry::<Cow<'de, str>, u32>()? {
                    let start = u32::try_from(text.len()).map_err(serde::de::Error::custom)?;
                    text.push_str(&token);
                    entries.push((start, token.len() as u32, id));
                }
                let hasher = DefaultHashBuilder::default();
                let slice = |&(start, len, _): &(u32, u32, u32)| {
                    &text[start as usize..(start + len) as usize]
                };
                let key = |entry: &(u32, u32, u32)| hasher.hash_one(slice(entry));
                let mut table = HashTable::with_capacity(entries.len());
                for entry in entries {
                    let token = slice(&entry);
                    // A token listed twice keeps its last id, as a map would.
                    match table.find_mut(key(&entry), |e| slice(e) == token) {
                        Some(found) => *found = entry,
                        None => {
                            table.insert_unique(key(&entry), entry, key);
                        }
                    }
                }
                Ok(Vocab {
                    text,
                    table,
                    hasher,
                })
            }
        }
        d.deserialize_map(Visitor)
    }
}

impl WordPiece {
    /// Reads `tokenizer.json` at `path`.
    pub fn from_file(path: &Path) -> Result<WordPiece, TokenizerError> {
        let bytes = std::fs::read(path).map_err(|source| TokenizerError::Read {
            path: path.to_owned(),
            source,
        })?;
        WordPiece::from_json(&bytes, path)
    }

    /// Reads a `tokenizer.json` held in `bytes`; `path` names it in errors.
    pub fn from_json(bytes: &[u8], path: &Path) -> Result<WordPiece, TokenizerError> {
        let file: File = serde_json::from_slice(bytes).map_err(|source| TokenizerError::Parse {
            path: path.to_owned(),
            source,
        })?;
        let refuse = |what: String| TokenizerError::Unsupported {
            path: path.to_owned(),
            what,
        };

        match &file.normalizer {
            Some(Normalizer {
                kind,
                clean_text: true,
                handle_chinese_chars: true,
                strip_accents,
                lowercase: true,
            }) if kind == "BertNormalizer" && strip_accents.unwrap_or(true) => {}
            _ => {
                return Err(refuse(
                    "its normalizer is not BertNormalizer with clean_text, \
                     handle_chinese_chars, strip_accents and lowercase"
                        .into(),
                ));
            }
        }
        if !matches!(&file.pre_tokenizer, Some(t) if t.kind == "BertPreTokenizer") {
            return Err(refuse("its pre_tokenizer is not BertPreTokenizer".into()));
        }
        let model = file.model;
        if model.kind != "WordPiece" {
            return Err(refuse(format!(
                "its model is {}, not WordPiece",
                model.kind
            )));
        }
        let id = |token: &str| {
            model
                .vocab
                .get(token)
                .ok_or_else(|| refuse(format!("the vocabulary has no {token}")))
        };
        let unk = id(&model.unk_token)?;

        // [CLS] the text [SEP], as TemplateProcessing says it.
        let post = file
            .post_processor
            .filter(|p| p.kind == "TemplateProcessing")
            .ok_or_else(|| refuse("its post_processor is not TemplateProcessing".into()))?;
        let special = |piece: Option<&Piece>| match piece {
            Some(Piece::SpecialToken { id, type_id: 0 }) => {
                match post.special_tokens.get(id).map(|s| s.ids.as_slice()) {
                    Some(&[id]) => Some(id),
                    _ => None,
                }
            }
            _ => None,
        };
        let sequence = Piece::Sequence {
            id: "A".into(),
            type_id: 0,
        };
        let (cls, sep) = match (special(post.single.first()), special(post.single.get(2))) {
            (Some(cls), Some(sep)) if post.single.len() == 3 && post.single[1] == sequence => {
                (cls, sep)
            }
            _ => {
                return Err(refuse(
                    "its post_processor does not put one special token before a single \
                     text and one after"
                        .into(),
                ));
            }
        };

        let mut added = Vec::with_capacity(file.added_tokens.len());
        for t in file.added_tokens {
            if t.normalized || t.single_word || t.lstrip || t.rstrip || t.content.is_empty() {
                return Err(refuse(format!(
                    "its added token {:?} is matched after normalizing, as a single word or \
                     with spaces stripped",
                    t.content
                )));
            }
            added.push((Box::from(t.content), t.id));
        }

        Ok(WordPiece {
            vocab: model.vocab,
            added,
            prefix: Box::from(model.continuing_subword_prefix),
            max_word_chars: model.max_input_chars_per_word,
            unk,
            cls,
            sep,
        })
    }

    /// The ids of `text`: `[CLS]`, its tokens, `[SEP]`, at most `max_tokens` in all (the
    /// text's tokens cut at the end to make room for the two).
    pub fn encode(&self, text: &str, max_tokens: usize) -> Vec<u32> {
        let room = max_tokens.saturating_sub(2);
        let mut ids = Vec::with_capacity(room.min(text.len() + 1) + 2);
        ids.push(self.cls);
        let mut scratch = Scratch::default();
        let mut rest = text;
        while ids.len() <= room {
            match self.next_added(rest) {
                Some((at, len, id)) => {
                    self.encode_stretch(&rest[..at], room, &mut ids, &mut scratch);
                    if ids.len() <= room {
                        ids.push(id);
                    }
                    rest = &rest[at + len..];
                }
                None => {
                    self.encode_stretch(rest, room, &mut ids, &mut scratch);
                    break;
                }
            }
        }
        ids.push(self.sep);
        ids
    }

    /// The leftmost added token in `text` (the longest, where several start there): its
    /// byte offset, length and id.
    fn next_added(&self, text: &str) -> Option<(usize, usize, u32)> {
        let mut best: Option<(usize, usize, u32)> = None;
        for (token, id) in &self.added {
            if let Some(at) = text.find(&**token) {
                let better = match best {
                    None => true,
                    Some((b, len, _)) => at < b || (at == b && token.len() > len),
                };
                if better {
                    best = Some((at, token.len(), *id));
                }
            }
        }
        best
    }

    /// Normalises, splits and tokenizes a stretch of text without added tokens, pushing
    /// ids while `ids` holds no more than `room` after `[CLS]`.
    fn encode_stretch(&self, text: &str, room: usize, ids: &mut Vec<u32>, s: &mut Scratch) {
        normalize(text, s);
        for word in s.normal.split(char::is_whitespace) {
            let mut start = 0;
            for (i, c) in word.char_indices() {
                if is_punctuation(c) {
                    self.word(&word[start..i], room, ids, &mut s.piece);
                    self.word(&word[i..i + c.len_utf8()], room, ids, &mut s.piece);
                    start = i + c.len_utf8();
                }
            }
            self.word(&word[start..], room, ids, &mut s.piece);
        }
    }

    /// One word's pieces, greedily longest first.
    fn word(&self, word: &str, room: usize, ids: &mut Vec<u32>, piece: &mut String) {
        if word.is_empty() || ids.len() > room {
            return;
        }
        let first = ids.len();
        if word.chars().count() <= self.max_word_chars {
            let mut start = 0;
            while start < word.len() {
                let mut end = word.len();
                let found = loop {
                    let id = if start == 0 {
                        self.vocab.get(&word[..end])
                    } else {
                        piece.clear();
                        piece.push_str(&self.prefix);
                        piece.push_str(&word[start..end]);
                        self.vocab.get(piece)
                    };
                    if let Some(id) = id {
                        break Some(id);
                    }
                    match word[start..end].char_indices().next_back() {
                        Some((last, _)) if last > 0 => end = start + last,
                        _ => break None,
                    }
                };
                match found {
                    Some(id) => {
                        ids.push(id);
                        start = end;
                    }
                    None => {
                        ids.truncate(first);
                        break;
                    }
                }
            }
            if ids.len() > first {
                ids.truncate(room + 1);
                return;
            }
        }
        ids.push(self.unk);
    }
}

/// Buffers reused across a text's stretches.
#[derive(Default)]
struct Scratch {
    clean: String,
    normal: String,
    piece: String,
}

/// BertNormalizer's steps (see the module's documentation) from `text` into `s.normal`.
fn normalize(text: &str, s: &mut Scratch) {
    s.clean.clear();
    for c in text.chars() {
        if c == '\0' || c == '\u{fffd}' || is_control(c) {
            continue;
        }
        if is_whitespace(c) {
            s.clean.push(' ');
        } else if is_chinese(c) {
            s.clean.push(' ');
            s.clean.push(c);
            s.clean.push(' ');
        } else {
            s.clean.push(c);
        }
    }
    s.normal.clear();
    for (c, _) in s.clean.as_str().nfd() {
        if !c.is_mark_nonspacing() {
            s.normal.extend(c.to_lowercase());
        }
    }
}

/// White space as BertNormalizer means it: tab, newline and carriage return (control
/// characters otherwise) and Unicode's white space.
fn is_whitespace(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r') || c.is_whitespace()
}

/// Control characters as BertNormalizer means them: categories Cc, Cf and Co, except
/// tab, newline and carriage return.
fn is_control(c: char) -> bool {
    !matches!(c, '\t' | '\n' | '\r') && c.is_other()
}

/// BERT's punctuation: every ASCII character that is not a letter, digit or space (`$`,
/// `+`, `^` and `` ` `` too, which Unicode does not class as punctuation), and Unicode's
/// P* categories.
fn is_punctuation(c: char) -> bool {
    c.is_ascii_punctuation() || c.is_punctuation()
}

/// The CJK ideograph blocks BERT sets apart (not Hangul, Hiragana or Katakana, which are
/// written with spaces between words).
fn is_chinese(c: char) -> bool {
    matches!(
        c as u32,
        0x4E00..=0x9FFF
            | 0x3400..=0x4DBF
            | 0x20000..=0x2A6DF
            | 0x2A700..=0x2B73F
            | 0x2B740..=0x2B81F
            | 0x2B920..=0x2CEAF
            | 0xF900..=0xFAFF
            | 0x2F800..=0x2FA1F
    )
}

#[cfg(test)]
mod tests;
