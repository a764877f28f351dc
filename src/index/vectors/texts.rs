//! The texts embedded for a version (its whole text and its sentences'), by hash, and
//! which of the workspace's texts wait for a vector or are kept by a prune.

use super::super::Index;
use super::super::embeddings::EmbeddingCache;
use crate::embed::{sentence_texts, version_text};
use crate::error::Result;

/// The blake3 of the text embedded for a version.
pub fn text_hash(key: &str, value: &str) -> [u8; 32] {
    *blake3::hash(version_text(key, value).as_bytes()).as_bytes()
}

/// A version's id and the hashes of the texts embedded for it: its whole text's, then
/// its sentences' (none for a value of one sentence).
#[derive(Clone, Debug)]
pub struct Texts {
    pub id: u64,
    pub whole: [u8; 32],
    pub sentences: Vec<[u8; 32]>,
}

impl Texts {
    /// The texts of version `id` with at most `sentences` sentence texts.
    pub fn of(id: u64, key: &str, value: &str, sentences: usize) -> Texts {
        Texts {
            id,
            whole: text_hash(key, value),
            sentences: sentence_texts(key, value, sentences)
                .iter()
                .map(|t| *blake3::hash(t.as_bytes()).as_bytes())
                .collect(),
        }
    }

    /// Every hash, in row order.
    pub fn hashes(&self) -> impl Iterator<Item = &[u8; 32]> {
        std::iter::once(&self.whole).chain(&self.sentences)
    }

    /// Rows in a vector set.
    pub(super) fn rows(&self) -> usize {
        1 + self.sentences.len()
    }
}

/// The vectors of `t`'s texts in row order, if the cache holds every one.
///
/// Whether the whole text's vector is there is asked first, of the cache's index by
/// model: a version not embedded yet (hundreds, after a burst of stores) is then one
/// small lookup. A lookup by the primary key reads whole rows, vector and all, at each
/// step down the tree (SQLite compares a row that overflows its page by reading all of
/// it): 20–170 µs for a miss, about 5 ms of a server's first search after a burst of
/// 100 stores at 10k facts.
pub(super) fn cached(
    cache: &EmbeddingCache,
    model: &str,
    t: &Texts,
) -> Result<Option<Vec<Vec<f32>>>> {
    if !cache.has_hash(&t.whole, model)? {
        return Ok(None);
    }
    let mut out = Vec::with_capacity(t.rows());
    for hash in t.hashes() {
        match cache.get_hash(hash, model)? {
            Some(v) => out.push(v),
            None => return Ok(None),
        }
    }
    Ok(Some(out))
}

/// Every distinct text hash of the versions of `index`, with at most `sentences`
/// sentence texts each, and of its keys (what `embed --prune` keeps).
pub fn workspace_hashes(
    index: &Index,
    sentences: usize,
) -> Result<std::collections::HashSet<[u8; 32]>> {
    let mut keep: std::collections::HashSet<[u8; 32]> = std::collections::HashSet::new();
    for t in index.texts_after(0, sentences)? {
        keep.extend(t.hashes());
    }
    for key in index.all_keys()? {
        keep.insert(*blake3::hash(key_text(&key).as_bytes()).as_bytes());
    }
    Ok(keep)
}

/// The text of a key's own vector (one per key): its words, spaced
/// ([`crate::text::drift::KeyWords::phrase`]), what a new key is compared with.
pub fn key_text(key: &str) -> String {
    crate::text::drift::KeyWords::of(key).phrase()
}

/// How many texts wait for a vector, and the ones kept to embed (hash, text).
pub type Waiting = (usize, Vec<([u8; 32], String)>);

/// The workspace's texts without a vector of `model` (one per distinct text: whole
/// values, and at most `sentences` sentences of each), and with `keys` the keys' own
/// texts ([`key_text`]): how many
/// there are, and at most `keep` of them (all without a bound), shortest first so that a
/// batch pads little. Only the texts kept are held: counting what waits (`reindex`, a
/// server's step of 32) holds one hash per waiting text, not the texts.
pub fn missing_texts(
    index: &Index,
    cache: &EmbeddingCache,
    model: &str,
    keep: Option<usize>,
    keys: bool,
    sentences: usize,
) -> Result<Waiting> {
    let (waiting, mut kept) = waiting_texts(index, cache, model, keep, keys, sentences, false)?;
    kept.sort_by(|a, b| a.1.len().cmp(&b.1.len()).then_with(|| a.1.cmp(&b.1)));
    Ok((waiting, kept))
}

/// [`missing_texts`], the texts of the newest versions first (then the keys'): what a
/// search fills by a time budget, so that the facts just stored are the first seen.
pub fn missing_texts_newest(
    index: &Index,
    cache: &EmbeddingCache,
    model: &str,
    keep: usize,
    keys: bool,
    sentences: usize,
) -> Result<Waiting> {
    waiting_texts(index, cache, model, Some(keep), keys, sentences, true)
}

/// [`missing_texts`] of the versions `ids` only (their keys' too, with `keys`), each text
/// looked up in the cache on its own: what a search embeds when the vector set names
/// the few versions it lacks. (Listing every text of the workspace against every hash
/// of the cache took 50 ms at 10k versions, for the one version a store had just added.)
pub fn missing_texts_of(
    index: &Index,
    cache: &EmbeddingCache,
    model: &str,
    ids: &[u64],
    keys: bool,
    sentences: usize,
) -> Result<Waiting> {
    let mut seen: std::collections::HashSet<[u8; 32]> = std::collections::HashSet::new();
    let mut kept = Vec::new();
    let mut texts = Vec::new();
    index.for_each_text_of(ids, &mut |key, value| {
        texts.push(version_text(key, value));
        texts.extend(sentence_texts(key, value, sentences));
        if keys {
            texts.push(key_text(key));
        }
    })?;
    for text in texts {
        let hash = *blake3::hash(text.as_bytes()).as_bytes();
        if seen.insert(hash) && !cache.has_hash(&hash, model)? {
            kept.push((hash, text));
        }
    }
    Ok((kept.len(), kept))
}

fn waiting_texts(
    index: &Index,
    cache: &EmbeddingCache,
    model: &str,
    keep: Option<usize>,
    keys: bool,
    sentences: usize,
    newest_first: bool,
) -> Result<Waiting> {
    let have = cache.hashes_for(model)?;
    let mut waiting: std::collections::HashSet<[u8; 32]> = std::collections::HashSet::new();
    let mut kept = Vec::new();
    let mut wait = |text: String| {
        let hash = *blake3::hash(text.as_bytes()).as_bytes();
        if !have.contains(&hash) && waiting.insert(hash) && keep.is_none_or(|k| kept.len() < k) {
            kept.push((hash, text));
        }
    };
    let mut each = |key: &str, value: &str| {
        wait(version_text(key, value));
        for text in sentence_texts(key, value, sentences) {
            wait(text);
        }
    };
    if newest_first {
        index.for_each_text_newest(&mut each)?;
    } else {
        index.for_each_text(&mut each)?;
    }
    // One vector per key, for the look-alike slots of a new key.
    if keys {
        for key in index.all_keys()? {
            wait(key_text(&key));
        }
    }
    Ok((waiting.len(), kept))
}
