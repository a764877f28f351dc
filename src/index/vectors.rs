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
/// Each row is kept twice: exact (`f32`) and as 8-bit codes with a scale per row. A search
/// scans the codes, a quarter of the bytes, to shortlist candidates, then ranks the
/// shortlist by the exact cosine.
pub struct Vectors {
    model: String,
    generation: PathBuf,
    dim: usize,
    /// Row of each version id in `data`, `u32::MAX` for none.
    row_of: Vec<u32>,
    data: Vec<f32>,
    codes: Vec<i8>,
    scales: Vec<f32>,
    dot_codes: fn(&[i8], &[i8]) -> i32,
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
            codes: Vec::new(),
            scales: Vec::new(),
            dot_codes: pick_dot_codes(),
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
        let (mut row, mut codes) = (Vec::new(), Vec::new());
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
                v.codes = vec![0; n * v.dim];
                v.scales = vec![0.0; n];
            }
            if row.len() != v.dim {
                return;
            }
            codes.clear();
            let scale = quantize(&row, &mut codes);
            for k in ks {
                let k = k as usize;
                let at = k * v.dim..(k + 1) * v.dim;
                v.data[at.clone()].copy_from_slice(&row);
                v.codes[at].copy_from_slice(&codes);
                v.scales[k] = scale;
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
        self.scales.push(quantize(vector, &mut self.codes));
        self.filled += 1;
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

    /// The cosine from the 8-bit codes: within about 1% of [`Vectors::similarity`], at a
    /// quarter of the memory traffic.
    #[inline]
    pub fn approx_similarity(&self, id: u64, query: &Query) -> Option<f32> {
        let row = self.row(id, query.exact.len())?;
        let start = row * self.dim;
        let codes = &self.codes[start..start + self.dim];
        let sum = (self.dot_codes)(codes, &query.codes);
        Some(sum as f32 * self.scales[row] * query.scale)
    }
}

/// A query vector, exact and as 8-bit codes.
pub struct Query {
    exact: Vec<f32>,
    codes: Vec<i8>,
    scale: f32,
}

impl Query {
    pub fn new(exact: &[f32]) -> Query {
        let mut codes = Vec::with_capacity(exact.len());
        let scale = quantize(exact, &mut codes);
        Query {
            exact: exact.to_vec(),
            codes,
            scale,
        }
    }
}

/// Appends `v` as signed 8-bit codes scaled to its largest magnitude; returns the scale
/// (code × scale ≈ value).
fn quantize(v: &[f32], codes: &mut Vec<i8>) -> f32 {
    let max = v.iter().fold(0.0f32, |m, x| m.max(x.abs()));
    let scale = if max > 0.0 { max / 127.0 } else { 1.0 };
    codes.extend(
        v.iter()
            .map(|x| (x / scale).round().clamp(-127.0, 127.0) as i8),
    );
    scale
}

/// The dot product of two code rows, in lanes the compiler turns into SIMD
/// multiply-adds.
#[inline(always)]
fn dot_codes_lanes(a: &[i8], b: &[i8]) -> i32 {
    let mut acc = [0i32; 16];
    let (ca, ra) = a.as_chunks::<16>();
    let (cb, rb) = b.as_chunks::<16>();
    for (x, y) in ca.iter().zip(cb) {
        for i in 0..16 {
            acc[i] += x[i] as i32 * y[i] as i32;
        }
    }
    let tail: i32 = ra.iter().zip(rb).map(|(x, y)| *x as i32 * *y as i32).sum();
    acc.iter().sum::<i32>() + tail
}

fn dot_codes_portable(a: &[i8], b: &[i8]) -> i32 {
    dot_codes_lanes(a, b)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn dot_codes_avx2(a: &[i8], b: &[i8]) -> i32 {
    dot_codes_lanes(a, b)
}

/// The widest code dot product this CPU runs (release builds target baseline x86-64,
/// which has no AVX2, so it is chosen at run time).
fn pick_dot_codes() -> fn(&[i8], &[i8]) -> i32 {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU was just found to support AVX2.
        return |a, b| unsafe { dot_codes_avx2(a, b) };
    }
    dot_codes_portable
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
    fn code_dot_products_agree_on_every_path() {
        for dim in [1, 15, 16, 17, 384, 1000] {
            let (mut a, mut b) = (Vec::new(), Vec::new());
            quantize(&unit(dim as u64, dim), &mut a);
            quantize(&unit(dim as u64 + 7, dim), &mut b);
            let naive: i32 = a.iter().zip(&b).map(|(x, y)| *x as i32 * *y as i32).sum();
            assert_eq!(dot_codes_portable(&a, &b), naive, "dim {dim}");
            assert_eq!(pick_dot_codes()(&a, &b), naive, "dim {dim}");
        }
    }

    #[test]
    fn codes_rank_like_the_exact_vectors() {
        let dim = 384;
        let rows: Vec<Vec<f32>> = (0..200).map(|i| unit(1000 + i, dim)).collect();
        let mut v = Vectors::empty("m", Path::new(""), (0, 0));
        for (i, r) in rows.iter().enumerate() {
            v.push(i as u64 + 1, r);
        }
        // A query near row 42: the exact and the coded cosine agree closely.
        let mut q = rows[41].clone();
        q.iter_mut()
            .zip(unit(5, dim))
            .for_each(|(a, b)| *a += 0.3 * b);
        crate::embed::normalize(&mut q);
        let query = Query::new(&q);
        for id in 1..=200u64 {
            let exact = v.similarity(id, &query).unwrap();
            let approx = v.approx_similarity(id, &query).unwrap();
            assert!((exact - approx).abs() < 0.01, "{id}: {exact} vs {approx}");
        }
        let best = (1..=200u64)
            .max_by(|a, b| {
                let s = |id| v.approx_similarity(id, &query).unwrap();
                s(*a).total_cmp(&s(*b))
            })
            .unwrap();
        assert_eq!(best, 42);
        assert_eq!(v.similarity(999, &query), None, "no row for that id");
    }
}
