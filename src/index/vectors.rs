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
pub struct Vectors {
    model: String,
    generation: PathBuf,
    dim: usize,
    /// Row of each version id in `data`, `u32::MAX` for none.
    row_of: Vec<u32>,
    data: Vec<f32>,
    /// Versions whose text has no vector yet.
    missing: Vec<Pending>,
    /// The largest version id looked at.
    max_id: u64,
    cache_stamp: (i64, u64),
}

/// The blake3 of the text embedded for a version.
pub fn text_hash(key: &str, value: &str) -> [u8; 32] {
    *blake3::hash(version_text(key, value).as_bytes()).as_bytes()
}

impl Vectors {
    /// Loads every vector of `model` for the versions of `index`.
    pub fn load(index: &Index, cache: &EmbeddingCache, model: &str) -> Result<Vectors> {
        let mut v = Vectors {
            model: model.to_string(),
            generation: index.generation().to_path_buf(),
            dim: 0,
            row_of: Vec::new(),
            data: Vec::new(),
            missing: Vec::new(),
            max_id: 0,
            cache_stamp: cache.stamp()?,
        };
        let versions = index.texts_after(0)?;
        let mut all = cache.all_for(model)?;
        for (id, hash) in versions {
            v.max_id = v.max_id.max(id);
            match all.get(&hash) {
                Some(vector) => v.push(id, vector),
                None => v.missing.push((id, hash)),
            }
        }
        all.clear();
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
    }

    /// The model these vectors belong to.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// Their length (0 before the first vector).
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// How many versions have a vector.
    pub fn len(&self) -> usize {
        self.data.len().checked_div(self.dim).unwrap_or(0)
    }

    /// Whether no version has a vector.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many versions have none yet.
    pub fn missing(&self) -> usize {
        self.missing.len()
    }

    /// The cosine similarity of version `id` to `query` (both unit length), if it has a
    /// vector.
    #[inline]
    pub fn similarity(&self, id: u64, query: &[f32]) -> Option<f32> {
        let row = *self.row_of.get(id as usize)?;
        if row == u32::MAX || query.len() != self.dim {
            return None;
        }
        let start = row as usize * self.dim;
        Some(dot(&self.data[start..start + self.dim], query))
    }
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
    for (key, value) in index.key_values()? {
        let text = version_text(&key, &value);
        let hash = *blake3::hash(text.as_bytes()).as_bytes();
        if !have.contains(&hash) {
            wanted.entry(hash).or_insert(text);
        }
    }
    let mut out: Vec<_> = wanted.into_iter().collect();
    out.sort_by(|a, b| a.1.cmp(&b.1));
    Ok(out)
}

/// Where the cache lives for an index directory.
pub fn cache_path(index_dir: &Path) -> PathBuf {
    index_dir.join(super::embeddings::FILE)
}
