//! The vectors of one model for the versions of one index generation, held in memory as
//! one contiguous matrix for brute-force cosine search.
//!
//! They are assembled from the embedding cache (vectors keyed by the hash of the
//! embedded text), never stored in the generation: a rebuild copies nothing and computes
//! nothing it already had. A long-running process keeps the set and tops it up: new
//! versions are looked up one by one, and when the cache changes only the versions still
//! missing a vector are looked up again.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::Index;
use super::embeddings::EmbeddingCache;
use crate::embed::version_text;
use crate::error::Result;

/// A version's id and the hash of its embedded text.
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
    /// Row of each version id in `data`, `u32::MAX` for none.
    row_of: Vec<u32>,
    data: Vec<f32>,
    /// [`Vectors::words`] u64s of sign bits per row.
    bits: Vec<u64>,
    differing: fn(&[u64], &[u64]) -> u32,
    /// Versions whose text has no vector yet.
    missing: Vec<Pending>,
    /// Rows holding a vector (a loaded matrix keeps empty rows for missing versions).
    filled: usize,
    /// The largest version id looked at.
    max_id: u64,
    cache_stamp: (i64, u64),
}

/// The blake3 of the text embedded for a version.
pub fn text_hash(key: &str, value: &str) -> [u8; 32] {
    *blake3::hash(version_text(key, value).as_bytes()).as_bytes()
}

impl Vectors {
    /// A set with no rows yet.
    fn empty(model: &str, generation: &Path, cache_stamp: (i64, u64)) -> Vectors {
        Vectors {
            model: model.to_string(),
            generation: generation.to_path_buf(),
            dim: 0,
            row_of: Vec::new(),
            data: Vec::new(),
            bits: Vec::new(),
            differing: pick_differing(),
            missing: Vec::new(),
            filled: 0,
            max_id: 0,
            cache_stamp,
        }
    }

    /// Loads every vector of `model` for the versions of `index`.
    pub fn load(index: &Index, cache: &EmbeddingCache, model: &str) -> Result<Vectors> {
        let mut v = Vectors::empty(model, index.generation(), cache.stamp()?);
        // Rows are laid out in version-id order, the order a search visits them in, so
        // the scan reads the matrix front to back. The cache is streamed once, each
        // vector decoded straight into the rows of the versions holding its text.
        let versions = index.texts_after(0)?;
        let mut slots: HashMap<[u8; 32], Vec<u32>> = HashMap::new();
        for (k, (id, hash)) in versions.iter().enumerate() {
            v.max_id = v.max_id.max(*id);
            slots.entry(*hash).or_default().push(k as u32);
        }
        v.row_of = vec![u32::MAX; v.max_id as usize + 1];
        let n = versions.len();
        let (mut row, mut bits) = (Vec::new(), Vec::new());
        cache.for_each_of(model, &mut |hash, bytes| {
            let Some(ks) = slots.remove(hash) else {
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
                v.data = vec![0.0; n * v.dim];
                v.bits = vec![0; n * v.words()];
            }
            if row.len() != v.dim {
                return;
            }
            bits.clear();
            sign_bits(&row, &mut bits);
            for k in ks {
                let k = k as usize;
                v.data[k * v.dim..(k + 1) * v.dim].copy_from_slice(&row);
                let words = v.words();
                v.bits[k * words..(k + 1) * words].copy_from_slice(&bits);
                v.row_of[versions[k].0 as usize] = k as u32;
                v.filled += 1;
            }
        })?;
        v.missing = slots
            .into_iter()
            .flat_map(|(hash, ks)| ks.into_iter().map(move |k| (k, hash)))
            .map(|(k, hash)| (versions[k as usize].0, hash))
            .collect();
        Ok(v)
    }

    /// Brings the set up to date with the index and the cache. Returns false when the
    /// index is another generation or the model changed: load afresh.
    pub fn refresh(&mut self, index: &Index, cache: &EmbeddingCache, model: &str) -> Result<bool> {
        if self.model != model || self.generation != index.generation() {
            return Ok(false);
        }
        for (id, hash) in index.texts_after(self.max_id)? {
            self.max_id = self.max_id.max(id);
            match cache.get_hash(&hash, model)? {
                Some(vector) => self.push(id, &vector),
                None => self.missing.push((id, hash)),
            }
        }
        let stamp = cache.stamp()?;
        if stamp != self.cache_stamp && !self.missing.is_empty() {
            let mut still = Vec::new();
            for (id, hash) in std::mem::take(&mut self.missing) {
                match cache.get_hash(&hash, model)? {
                    Some(vector) => self.push(id, &vector),
                    None => still.push((id, hash)),
                }
            }
            self.missing = still;
        }
        self.cache_stamp = stamp;
        Ok(true)
    }

    fn push(&mut self, id: u64, vector: &[f32]) {
        if self.dim == 0 {
            self.dim = vector.len();
        }
        if vector.len() != self.dim {
            return;
        }
        let slot = id as usize;
        if self.row_of.len() <= slot {
            self.row_of.resize(slot + 1, u32::MAX);
        }
        self.row_of[slot] = (self.data.len() / self.dim) as u32;
        self.data.extend_from_slice(vector);
        sign_bits(vector, &mut self.bits);
        self.filled += 1;
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

    fn row(&self, id: u64, query_len: usize) -> Option<usize> {
        let row = *self.row_of.get(id as usize)?;
        (row != u32::MAX && query_len == self.dim).then_some(row as usize)
    }

    /// The cosine similarity of version `id` to `query` (both unit length), if it has a
    /// vector.
    #[inline]
    pub fn similarity(&self, id: u64, query: &Query) -> Option<f32> {
        let row = self.row(id, query.exact.len())?;
        let start = row * self.dim;
        Some(dot(&self.data[start..start + self.dim], &query.exact))
    }

    /// How many dimensions have the same sign in version `id`'s vector as in `query`:
    /// a coarse nearness (the more agree, the smaller the angle, on average) read from
    /// a thirty-second of the bytes of [`Vectors::similarity`].
    #[inline]
    pub fn agreeing_signs(&self, id: u64, query: &Query) -> Option<u32> {
        let row = self.row(id, query.exact.len())?;
        let words = self.words();
        let bits = &self.bits[row * words..(row + 1) * words];
        Some(self.dim as u32 - (self.differing)(bits, &query.bits))
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

/// A dot product written so that the compiler keeps eight independent sums in SIMD lanes.
#[inline]
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0.0f32; 8];
    let (ca, ra) = a.as_chunks::<8>();
    let (cb, rb) = b.as_chunks::<8>();
    for (x, y) in ca.iter().zip(cb) {
        for i in 0..8 {
            acc[i] += x[i] * y[i];
        }
    }
    let tail: f32 = ra.iter().zip(rb).map(|(x, y)| x * y).sum();
    acc.iter().sum::<f32>() + tail
}

/// Every distinct text hash of the versions of `index` (what `embed --prune` keeps).
pub fn workspace_hashes(index: &Index) -> Result<std::collections::HashSet<[u8; 32]>> {
    Ok(index.texts_after(0)?.into_iter().map(|(_, h)| h).collect())
}

/// The versions of `index` whose text has no vector of `model`, one per distinct text,
/// with the text to embed.
pub fn missing_texts(
    index: &Index,
    cache: &EmbeddingCache,
    model: &str,
) -> Result<Vec<([u8; 32], String)>> {
    let have = cache.hashes_for(model)?;
    let mut wanted: HashMap<[u8; 32], String> = HashMap::new();
    index.for_each_text(&mut |key, value| {
        let text = version_text(key, value);
        let hash = *blake3::hash(text.as_bytes()).as_bytes();
        if !have.contains(&hash) {
            wanted.entry(hash).or_insert(text);
        }
    })?;
    let mut out: Vec<_> = wanted.into_iter().collect();
    // By length, so that a batch holds texts of similar length and pads little.
    out.sort_by(|a, b| a.1.len().cmp(&b.1.len()).then_with(|| a.1.cmp(&b.1)));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(seed: u64, dim: usize) -> Vec<f32> {
        let mut x = seed | 1;
        let mut v: Vec<f32> = (0..dim)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x % 20_001) as f32 / 10_000.0 - 1.0
            })
            .collect();
        crate::embed::normalize(&mut v);
        v
    }

    #[test]
    fn sign_bits_count_differences_on_every_path() {
        for dim in [1, 63, 64, 65, 384, 1000] {
            let (a, b) = (unit(dim as u64, dim), unit(dim as u64 + 7, dim));
            let naive = a
                .iter()
                .zip(&b)
                .filter(|(x, y)| (**x > 0.0) != (**y > 0.0))
                .count();
            let (mut ba, mut bb) = (Vec::new(), Vec::new());
            sign_bits(&a, &mut ba);
            sign_bits(&b, &mut bb);
            assert_eq!(ba.len(), dim.div_ceil(64), "dim {dim}");
            assert_eq!(differing_portable(&ba, &bb) as usize, naive, "dim {dim}");
            assert_eq!(pick_differing()(&ba, &bb) as usize, naive, "dim {dim}");
        }
    }

    #[test]
    fn sign_agreement_shortlists_the_exact_nearest() {
        let dim = 384;
        // Odd seeds: `unit` makes a seed odd, so 2k and 2k + 1 would give the same row.
        let rows: Vec<Vec<f32>> = (0..2000).map(|i| unit(1001 + 2 * i, dim)).collect();
        let mut v = Vectors::empty("m", Path::new(""), (0, 0));
        for (i, r) in rows.iter().enumerate() {
            v.push(i as u64 + 1, r);
        }
        // Queries near a row: that row, the exact nearest, is within the 64 rows whose
        // signs agree most with the query's.
        for target in [1usize, 42, 777, 1999] {
            let mut q = rows[target - 1].clone();
            q.iter_mut()
                .zip(unit(100_001 + 2 * target as u64, dim))
                .for_each(|(a, b)| *a += 0.8 * b);
            crate::embed::normalize(&mut q);
            let query = Query::new(&q);
            let exact_best = (1..=2000u64)
                .max_by(|a, b| {
                    let s = |id| v.similarity(id, &query).unwrap();
                    s(*a).total_cmp(&s(*b))
                })
                .unwrap();
            assert_eq!(exact_best, target as u64);
            let mut by_signs: Vec<u64> = (1..=2000).collect();
            by_signs.sort_by_key(|id| std::cmp::Reverse(v.agreeing_signs(*id, &query).unwrap()));
            let place = by_signs.iter().position(|id| *id == exact_best).unwrap();
            assert!(place < 64, "row {target} came {place}th by signs");
        }
        assert_eq!(
            v.similarity(9999, &query_of(&rows[0])),
            None,
            "no row for that id"
        );
    }

    fn query_of(v: &[f32]) -> Query {
        Query::new(v)
    }
}
