//! The vectors of one model for the versions of one index generation, held in memory as
//! one contiguous matrix for brute-force cosine search.
//!
//! They are assembled from the embedding cache (vectors keyed by the hash of the
//! embedded text): a rebuild copies nothing and computes nothing it already had. A
//! long-running process keeps the set and tops it up: new versions are looked up one by
//! one, and when the cache changes only the versions still missing a vector are looked up
//! again.
//!
//! Assembling the set reads every vector out of SQLite, most of a second at 100k
//! versions, so the set is also written to a *vector file* beside its generation
//! (`index-<generation>.vectors-<model hash>`). A later process maps that file instead and
//! tops it up the same way; only the rows a search touches are ever read from disk. The
//! file is a cache of a cache: it is replaced whole (written aside, then renamed), removed
//! with its generation, and ignored when it does not hold together.
//!
//! A version has a row for its whole text and, when its value has several sentences, a
//! row for each of them (at most `search.sentences`), next to one another; its
//! similarity to a query is that of its nearest row (`embed/sentences.rs`).
//!
//! The file's layout and its tail are in `vectors/file.rs`, the texts a version embeds
//! and those waiting for a vector in `vectors/texts.rs`, carrying it to a new
//! generation in `vectors/carry.rs`. (This file passes 600 lines by its tests, which
//! check the search rows, the file and the tail together.)

use std::collections::{HashMap, HashSet};
use std::ops::Range;
use std::path::{Path, PathBuf};

use super::Index;
use super::embeddings::{EmbeddingCache, Stamp};

pub mod carry;
mod file;
mod texts;

use crate::embed::dot;
use crate::error::Result;
use file::file_path;
pub use file::remove_other_files;
use texts::cached;
pub use texts::{
    Texts, Waiting, key_text, missing_texts, missing_texts_newest, missing_texts_of, text_hash,
    workspace_hashes,
};

/// A version's id and the hash of its whole embedded text.
type Pending = (u64, [u8; 32]);

/// The vectors of one model for one index generation.
///
/// Each row is kept twice: exact (`f32`) and as sign bits, one per dimension (48 bytes
/// for 384 dimensions, a thirty-second of the exact row). A search scans the bits to
/// shortlist candidates by how many signs agree with the query's, then ranks the
/// shortlist by the exact cosine.
pub struct Vectors {
    model: String,
    generation: PathBuf,
    dim: usize,
    /// The most sentence rows a version has (`search.sentences`).
    sentences: usize,
    /// First row of each version id, `u32::MAX` for none.
    row_of: Vec<u32>,
    /// Rows after the first of each version id (its sentences'), as long as `row_of`.
    extra: Vec<u8>,
    /// The first rows, from a vector file.
    mapped: Option<Mapped>,
    /// The rows after the mapped ones, exact.
    data: Vec<f32>,
    /// The same rows as `data`, [`Vectors::words`] u64s of sign bits each.
    bits: Vec<u64>,
    /// The text hash of each row in `data` (a row is found again by its text when the
    /// set is carried to a new generation).
    hashes: Vec<[u8; 32]>,
    differing: fn(&[u64], &[u64]) -> u32,
    /// Versions whose text has no vector yet.
    missing: Vec<Pending>,
    /// The versions in `missing` whose whole text has a vector and some sentence none;
    /// the others' whole text has none (as of `cache_stamp`, once `classified`).
    partial: HashSet<u64>,
    /// `partial` was found by this process's lookups, so that a change of the cache need
    /// only be looked at through its journal of added texts: a version missing its whole
    /// text waits for a write that adds it; a partial one is looked at on every change.
    classified: bool,
    /// Rows holding a vector (a loaded matrix keeps empty rows for missing versions).
    filled: usize,
    /// The largest version id looked at.
    max_id: u64,
    /// The cache's [`EmbeddingCache::stamp`] when it was last looked at.
    cache_stamp: Stamp,
    /// Rows filled since the set was last read from or written to its vector file.
    unsaved: usize,
}

/// Rows filled by a process before it writes the whole set to its vector file again,
/// when the rows after the file are a sixty-fourth of all or more (fewer go to the
/// file's tail: see `file.rs`); until then, each later process looks those rows up in
/// the cache one by one. The first load from the cache is always written.
const RESAVE_AFTER: usize = 1024;

/// The first rows of a set, memory-mapped from its vector file.
struct Mapped {
    map: memmap2::Mmap,
    /// The same file, for reading scattered rows without mapping them
    /// ([`Vectors::similarities`]).
    file: std::fs::File,
    /// What identifies the file to its tail: its rows, largest id and cache write count.
    base: [u64; 3],
    rows: usize,
    /// Byte ranges of the sign bits, the exact rows and the rows' text hashes in `map`.
    bits: Range<usize>,
    data: Range<usize>,
    hashes: Range<usize>,
}

impl Mapped {
    fn bits(&self) -> &[u64] {
        bytemuck::cast_slice(&self.map[self.bits.clone()])
    }

    fn data(&self) -> &[f32] {
        bytemuck::cast_slice(&self.map[self.data.clone()])
    }

    fn hashes(&self) -> &[u8] {
        &self.map[self.hashes.clone()]
    }
}

impl Vectors {
    /// A set with no rows yet.
    fn empty(model: &str, generation: &Path, cache_stamp: Stamp) -> Vectors {
        Vectors {
            model: model.to_string(),
            generation: generation.to_path_buf(),
            dim: 0,
            sentences: 0,
            row_of: Vec::new(),
            extra: Vec::new(),
            mapped: None,
            data: Vec::new(),
            bits: Vec::new(),
            hashes: Vec::new(),
            differing: pick_differing(),
            missing: Vec::new(),
            partial: HashSet::new(),
            classified: false,
            filled: 0,
            max_id: 0,
            cache_stamp,
            unsaved: 0,
        }
    }

    /// Every vector of `model` for the versions of `index`, with at most `sentences`
    /// sentence rows per version: from the generation's vector file, topped up, when
    /// there is a sound one; else from the cache, and then written to the file (best
    /// effort: a search never fails for want of it).
    pub fn load(
        index: &Index,
        cache: &EmbeddingCache,
        model: &str,
        sentences: usize,
    ) -> Result<Vectors> {
        let origin = cache.stamp()?.origin;
        if let Some(mut v) = Vectors::open(index.generation(), model, origin, sentences) {
            v.refresh(index, cache, model, sentences)?;
            return Ok(v);
        }
        let mut v = Vectors::assemble(index, cache, model, sentences)?;
        v.unsaved = usize::MAX;
        v.save_if_due();
        Ok(v)
    }

    /// Reads every vector of `model` for the versions of `index` out of the cache.
    fn assemble(
        index: &Index,
        cache: &EmbeddingCache,
        model: &str,
        sentences: usize,
    ) -> Result<Vectors> {
        let mut v = Vectors::empty(model, index.generation(), cache.stamp()?);
        v.sentences = sentences;
        // Rows are laid out in version-id order, the order a search visits them in, so
        // the scan reads the matrix front to back; a version's rows (its whole text's,
        // then its sentences') lie together. The cache is streamed once, each vector
        // decoded straight into the rows holding its text.
        let versions = index.texts_after(0, sentences)?;
        let mut owner: Vec<u32> = Vec::with_capacity(versions.len());
        let mut slots: HashMap<[u8; 32], Vec<u32>> = HashMap::new();
        for (k, t) in versions.iter().enumerate() {
            v.max_id = v.max_id.max(t.id);
            for hash in t.hashes() {
                slots.entry(*hash).or_default().push(owner.len() as u32);
                owner.push(k as u32);
            }
        }
        v.row_of = vec![u32::MAX; v.max_id as usize + 1];
        v.extra = vec![0; v.row_of.len()];
        let rows = owner.len();
        // Rows filled of each version: it has a vector once all of them are.
        let mut done = vec![0usize; versions.len()];
        let (mut row, mut bits) = (Vec::new(), Vec::new());
        cache.for_each_of(model, &mut |hash, bytes| {
            let Some(rs) = slots.remove(hash) else {
                return;
            };
            row.clear();
            row.extend(
                bytes
                    .chunks_exact(4)
                    .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])),
            );
            if v.dim == 0 && !row.is_empty() {
                v.dim = row.len();
                v.data = vec![0.0; rows * v.dim];
                v.bits = vec![0; rows * v.words()];
                v.hashes = versions.iter().flat_map(|t| t.hashes().copied()).collect();
            }
            if row.len() != v.dim {
                return;
            }
            bits.clear();
            sign_bits(&row, &mut bits);
            let words = v.words();
            for r in rs {
                let r = r as usize;
                v.data[r * v.dim..(r + 1) * v.dim].copy_from_slice(&row);
                v.bits[r * words..(r + 1) * words].copy_from_slice(&bits);
                done[owner[r] as usize] += 1;
            }
        })?;
        let mut first = 0;
        for (t, done) in versions.iter().zip(done) {
            if done == t.rows() {
                v.row_of[t.id as usize] = first as u32;
                v.extra[t.id as usize] = t.sentences.len() as u8;
                v.filled += 1;
            } else {
                v.missing.push((t.id, t.whole));
            }
            first += t.rows();
        }
        Ok(v)
    }

    /// Brings the set up to date with the index and the cache, and writes it to its
    /// vector file when enough has changed. Returns false when the index is another
    /// generation, or the model or the sentence rows changed: load afresh.
    pub fn refresh(
        &mut self,
        index: &Index,
        cache: &EmbeddingCache,
        model: &str,
        sentences: usize,
    ) -> Result<bool> {
        if self.model != model
            || self.generation != index.generation()
            || self.sentences != sentences
        {
            return Ok(false);
        }
        // The stamp is read before anything is looked up: a vector cached meanwhile moves
        // it on, so the next refresh looks again.
        let stamp = cache.stamp()?;
        if stamp != self.cache_stamp && !self.missing.is_empty() {
            // Through the journal, only the versions whose whole text was just added (and
            // the partial ones) are looked up: at a server's first search after a burst of
            // stores, looking up each of the hundreds waiting for the fill was most of it.
            let added = match self.classified && stamp.origin == self.cache_stamp.origin {
                true => cache.added_since(self.cache_stamp.writes, stamp.writes, model)?,
                false => None,
            };
            let mut still = Vec::new();
            let partial = std::mem::take(&mut self.partial);
            for (id, hash) in std::mem::take(&mut self.missing) {
                let look = added
                    .as_ref()
                    .is_none_or(|a| a.contains(&hash) || partial.contains(&id));
                if !look || !self.look_up(index, cache, model, sentences, (id, hash))? {
                    still.push((id, hash));
                }
            }
            self.missing = still;
            self.classified = true;
        }
        for t in index.texts_after(self.max_id, sentences)? {
            self.max_id = self.max_id.max(t.id);
            match cached(cache, model, &t)? {
                Some(vs) => self.push_rows(&t, &vs),
                None => {
                    if !t.sentences.is_empty() && cache.has_hash(&t.whole, model)? {
                        self.partial.insert(t.id);
                    }
                    self.missing.push((t.id, t.whole));
                }
            }
        }
        self.cache_stamp = stamp;
        self.save_if_due();
        Ok(true)
    }

    /// Takes version `id`'s rows from the cache when it has every one (true); else
    /// notes it as partial when the whole text's row is there.
    fn look_up(
        &mut self,
        index: &Index,
        cache: &EmbeddingCache,
        model: &str,
        sentences: usize,
        (id, hash): Pending,
    ) -> Result<bool> {
        // The whole text's first: a version still missing mostly lacks it too.
        if cache.has_hash(&hash, model)? {
            if let Some(t) = index.texts_of(id, sentences)?
                && let Some(vs) = cached(cache, model, &t)?
            {
                self.push_rows(&t, &vs);
                return Ok(true);
            }
            self.partial.insert(id);
        }
        Ok(false)
    }

    /// Adds a version of one row (its whole text's).
    #[cfg(test)]
    fn push(&mut self, id: u64, hash: [u8; 32], vector: &[f32]) {
        let t = Texts {
            id,
            whole: hash,
            sentences: Vec::new(),
        };
        self.push_rows(&t, &[vector.to_vec()]);
    }

    /// Adds version `t.id`'s rows, one vector per text of `t` in order (a version with a
    /// vector of another dimension is left out, as one that has none).
    fn push_rows(&mut self, t: &Texts, vectors: &[Vec<f32>]) {
        if self.dim == 0
            && let Some(v) = vectors.first()
        {
            self.dim = v.len();
        }
        if vectors.len() != t.rows() || vectors.iter().any(|v| v.len() != self.dim) {
            return;
        }
        let slot = t.id as usize;
        if self.row_of.len() <= slot {
            self.row_of.resize(slot + 1, u32::MAX);
            self.extra.resize(slot + 1, 0);
        }
        self.row_of[slot] = self.rows() as u32;
        self.extra[slot] = t.sentences.len() as u8;
        for (hash, vector) in t.hashes().zip(vectors) {
            self.data.extend_from_slice(vector);
            sign_bits(vector, &mut self.bits);
            self.hashes.push(*hash);
        }
        self.filled += 1;
        self.unsaved += vectors.len();
    }

    /// Rows in the mapped file.
    fn mapped_rows(&self) -> usize {
        self.mapped.as_ref().map_or(0, |m| m.rows)
    }

    /// Rows in all, mapped and added (empty rows included).
    fn rows(&self) -> usize {
        self.mapped_rows() + self.data.len().checked_div(self.dim).unwrap_or(0)
    }

    /// The exact vector of a row.
    #[inline]
    fn exact(&self, row: usize) -> &[f32] {
        self.row_in(row, self.dim, Mapped::data, &self.data)
    }

    /// The sign bits of a row.
    #[inline]
    fn signs(&self, row: usize) -> &[u64] {
        self.row_in(row, self.words(), Mapped::bits, &self.bits)
    }

    /// The text hash of a row.
    fn row_hash(&self, row: usize) -> [u8; 32] {
        let bytes = self.row_in(row, 32, Mapped::hashes, self.hashes.as_flattened());
        bytes.try_into().expect("32 bytes")
    }

    /// Row `row`, `width` wide, of a matrix whose first rows are mapped (`mapped`) and
    /// the rest `added`.
    #[inline]
    fn row_in<'a, T>(
        &'a self,
        row: usize,
        width: usize,
        mapped: fn(&Mapped) -> &[T],
        added: &'a [T],
    ) -> &'a [T] {
        let (rows, row) = match &self.mapped {
            Some(m) if row < m.rows => (mapped(m), row),
            _ => (added, row - self.mapped_rows()),
        };
        &rows[row * width..(row + 1) * width]
    }

    /// u64s of sign bits per row.
    fn words(&self) -> usize {
        self.dim.div_ceil(64)
    }

    /// How many versions have a vector.
    pub fn len(&self) -> usize {
        self.filled
    }

    /// Whether no version has a vector.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many versions have none yet.
    pub fn missing(&self) -> usize {
        self.missing.len()
    }

    /// The ids of the versions without a vector.
    pub fn missing_ids(&self) -> Vec<u64> {
        self.missing.iter().map(|(id, _)| *id).collect()
    }

    /// The rows of version `id` (its whole text's, then its sentences'), if it has a
    /// vector of the query's dimension.
    #[inline]
    fn rows_of(&self, id: u64, query_len: usize) -> Option<Range<usize>> {
        let row = *self.row_of.get(id as usize)?;
        if row == u32::MAX || query_len != self.dim {
            return None;
        }
        let extra = self.extra.get(id as usize).copied().unwrap_or(0) as usize;
        Some(row as usize..row as usize + 1 + extra)
    }

    /// The cosine similarity of version `id` to `query` (both unit length): that of its
    /// nearest row, if it has a vector.
    #[inline]
    pub fn similarity(&self, id: u64, query: &Query) -> Option<f32> {
        let rows = self.rows_of(id, query.exact.len())?;
        rows.map(|row| dot(self.exact(row), &query.exact))
            .reduce(f32::max)
    }

    /// The cosine similarities of versions `ids` to `query`, in their order (`None` for
    /// a version without a vector). Rows of the vector file are read with positional
    /// reads, in file order, instead of through the mapping: a search rescoring a
    /// shortlist of a thousand rows scattered over a 150 MB file touched a thousand
    /// 64 KB windows of it, each a page fault that mapped sixteen pages, and unmapping
    /// them all at exit cost as much again; a read copies the row's 1.5 KB and maps
    /// nothing.
    pub fn similarities(&self, ids: &[u64], query: &Query) -> Vec<Option<f32>> {
        use std::os::unix::fs::FileExt;
        let mut out: Vec<Option<f32>> = vec![None; ids.len()];
        let best = |out: &mut Vec<Option<f32>>, i: usize, s: f32| {
            out[i] = Some(out[i].map_or(s, |b| b.max(s)));
        };
        // A version's rows lie together, all in the file or all after it: one read each.
        let mut to_read: Vec<(Range<usize>, usize)> = Vec::new();
        for (i, &id) in ids.iter().enumerate() {
            let Some(rows) = self.rows_of(id, query.exact.len()) else {
                continue;
            };
            match &self.mapped {
                Some(m) if rows.end <= m.rows => to_read.push((rows, i)),
                _ => {
                    for row in rows {
                        best(&mut out, i, dot(self.exact(row), &query.exact));
                    }
                }
            }
        }
        let Some(m) = &self.mapped else {
            return out;
        };
        to_read.sort_unstable_by_key(|(rows, _)| rows.start);
        let mut buf = Vec::new();
        for (rows, i) in to_read {
            buf.resize(rows.len() * self.dim, 0f32);
            let at = (m.data.start + rows.start * self.dim * 4) as u64;
            let read = m.file.read_exact_at(bytemuck::cast_slice_mut(&mut buf), at);
            for (k, row) in rows.enumerate() {
                let exact = match read {
                    Ok(()) => &buf[k * self.dim..(k + 1) * self.dim],
                    // The mapping reads the same bytes.
                    Err(_) => self.exact(row),
                };
                best(&mut out, i, dot(exact, &query.exact));
            }
        }
        out
    }

    /// How many dimensions have the same sign in version `id`'s vector as in `query`
    /// (the most over its rows): a coarse nearness (the more agree, the smaller the
    /// angle, on average) read from a thirty-second of the bytes of
    /// [`Vectors::similarity`].
    #[inline]
    pub fn agreeing_signs(&self, id: u64, query: &Query) -> Option<u32> {
        let rows = self.rows_of(id, query.exact.len())?;
        // Saturating: a vector file's padding bits are not checked.
        rows.map(|row| {
            let differing = (self.differing)(self.signs(row), &query.bits);
            (self.dim as u32).saturating_sub(differing)
        })
        .max()
    }
}

/// A query vector, exact and as sign bits.
pub struct Query {
    exact: Vec<f32>,
    bits: Vec<u64>,
}

impl Query {
    pub fn new(exact: &[f32]) -> Query {
        let mut bits = Vec::with_capacity(exact.len().div_ceil(64));
        sign_bits(exact, &mut bits);
        Query {
            exact: exact.to_vec(),
            bits,
        }
    }
}

/// Appends the signs of `v`, one bit per dimension (set for positive), packed into u64s;
/// the last word is padded with clear bits.
fn sign_bits(v: &[f32], bits: &mut Vec<u64>) {
    bits.extend(v.chunks(64).map(|chunk| {
        chunk
            .iter()
            .enumerate()
            .fold(0u64, |w, (i, x)| w | (u64::from(*x > 0.0) << i))
    }));
}

/// How many bits differ between two rows of sign bits.
#[inline(always)]
fn differing_bits(a: &[u64], b: &[u64]) -> u32 {
    a.iter().zip(b).map(|(x, y)| (x ^ y).count_ones()).sum()
}

fn differing_portable(a: &[u64], b: &[u64]) -> u32 {
    differing_bits(a, b)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt")]
fn differing_popcnt(a: &[u64], b: &[u64]) -> u32 {
    differing_bits(a, b)
}

/// The bit count this CPU does in one instruction when it can (release builds target
/// baseline x86-64, which has no `popcnt`, so it is chosen at run time).
fn pick_differing() -> fn(&[u64], &[u64]) -> u32 {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("popcnt") {
        // SAFETY: the CPU was just found to support POPCNT.
        return |a, b| unsafe { differing_popcnt(a, b) };
    }
    differing_portable
}

#[cfg(test)]
mod tests;
