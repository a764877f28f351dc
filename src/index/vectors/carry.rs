//! Carrying the vector files of a generation to the next one, so that the first meaning
//! search after a rebuild maps a file instead of assembling the set from the cache (11.6 s
//! at a million versions, against tens of milliseconds for a search with the file).
//!
//! Before the new generation replaces the current one, [`link`] hard-links each of the
//! current generation's vector files under the new generation's name with a `.carried`
//! suffix (the old files go with their generation; the links stay). Once the new
//! generation is open, [`settle`] checks each carried set against it, version by
//! version, by id and text hash:
//!
//! - the same versions under the same ids (a rebuild of the same files, the usual case):
//!   the file is renamed into place as it is, nothing rewritten; versions past its
//!   largest id are topped up by the first search as after any write;
//! - otherwise (a rebuild that folded in entries recorded earlier numbers the versions
//!   anew): the set is laid out again for the new ids, each row taken from the carried
//!   file by its text hash, a text it does not hold looked up in the cache, and written.
//!
//! Either way the file answers as one assembled afresh would. All of it is best effort:
//! a file that cannot be carried is dropped, and the first search assembles the set.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::super::{CURRENT, Index, fulltext_dir};
use super::texts::cached;
use super::{Texts, Vectors};
use crate::index::embeddings::EmbeddingCache;

/// The suffix of a vector file linked to a new generation and not yet checked.
const CARRIED: &str = ".carried";

/// The vector files of the generation whose full-text directory is `generation`.
fn files_of(generation: &Path) -> Vec<PathBuf> {
    let (Some(dir), Some(prefix)) = (
        generation.parent(),
        generation
            .with_extension("vectors-")
            .file_name()
            .map(|n| n.to_string_lossy().into_owned()),
    ) else {
        return Vec::new();
    };
    let Ok(read) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    read.flatten()
        .filter(|item| {
            let name = item.file_name();
            let name = name.to_string_lossy();
            name.starts_with(&prefix) && !name.contains(".tmp")
        })
        .map(|item| item.path())
        .collect()
}

/// Links each vector file of the current generation in `dir` under the name of the new
/// generation whose full-text directory is `new`, suffixed `CARRIED`. Call before the
/// new generation becomes current (which removes the old one's files).
pub fn link(dir: &Path, new: &Path) {
    let Ok(current) = std::fs::read_to_string(dir.join(CURRENT)) else {
        return;
    };
    let current = current.trim();
    if current.is_empty() || current.contains('/') {
        return;
    }
    for path in files_of(&fulltext_dir(&dir.join(current))) {
        let Some(kind) = path.extension().and_then(|e| e.to_str()) else {
            continue;
        };
        // Only whole files are carried: a tail names the file it extends, which under the
        // new generation's name may be laid out anew.
        if kind.ends_with(&CARRIED[1..]) || kind == "tail" {
            continue;
        }
        let target = new.with_extension(format!("{kind}{CARRIED}"));
        let _ = std::fs::remove_file(&target);
        let _ = std::fs::hard_link(&path, &target);
    }
}

/// Checks each carried vector file of `index`'s generation against its versions and
/// puts it in place as it is, laid out again for new ids, or not at all.
pub fn settle(index: &Index) {
    let carried: Vec<PathBuf> = files_of(index.generation())
        .into_iter()
        .filter(|p| p.to_string_lossy().ends_with(CARRIED))
        .collect();
    if carried.is_empty() {
        return;
    }
    // The versions' texts, read once for each count of sentence rows a file was made with.
    let mut texts: HashMap<usize, Vec<Texts>> = HashMap::new();
    for path in carried {
        let name = path.to_string_lossy();
        let target = PathBuf::from(&name[..name.len() - CARRIED.len()]);
        let old = Vectors::open_path(&path, index.generation());
        let versions = old
            .as_ref()
            .and_then(|old| match texts.entry(old.sentences) {
                std::collections::hash_map::Entry::Occupied(e) => Some(e.into_mut()),
                std::collections::hash_map::Entry::Vacant(e) => {
                    Some(e.insert(index.texts_after(0, old.sentences).ok()?))
                }
            });
        if let (Some(old), Some(versions)) = (old, versions) {
            if fits(&old, versions) {
                if std::fs::rename(&path, &target).is_ok() {
                    continue;
                }
            } else if super::file_path(index.generation(), &old.model) == target {
                let _ = remap(&old, index, versions)
                    .and_then(|v| v.save().map_err(|e| crate::error::Error::io(&target, e)));
            }
        }
        let _ = std::fs::remove_file(&path);
    }
}

/// Whether `old` holds exactly the versions up to its largest id of `versions` (id and
/// text hashes, in id order), each with its rows or listed as missing.
fn fits(old: &Vectors, versions: &[Texts]) -> bool {
    let missing: HashMap<u64, [u8; 32]> = old.missing.iter().copied().collect();
    let mut seen = 0;
    for t in versions.iter().take_while(|t| t.id <= old.max_id) {
        let same = match old.row_of.get(t.id as usize) {
            Some(&row) if row != u32::MAX => {
                let extra = old.extra.get(t.id as usize).copied().unwrap_or(0) as usize;
                extra == t.sentences.len()
                    && t.hashes()
                        .enumerate()
                        .all(|(k, hash)| old.row_hash(row as usize + k) == *hash)
            }
            _ => missing.get(&t.id) == Some(&t.whole),
        };
        if !same {
            return false;
        }
        seen += 1;
    }
    seen == old.filled + old.missing.len()
}

/// The set of `old`'s model for `versions` of `index`: each version's rows found in
/// `old` by the hash of its whole text (its sentences' rows follow it), else in the
/// cache, else listed as missing.
fn remap(old: &Vectors, index: &Index, versions: &[Texts]) -> crate::error::Result<Vectors> {
    let mut by_hash: HashMap<[u8; 32], (u32, u8)> = HashMap::with_capacity(old.filled);
    for (&row, &extra) in old.row_of.iter().zip(&old.extra) {
        if row != u32::MAX {
            by_hash.insert(old.row_hash(row as usize), (row, extra));
        }
    }
    let dir = index
        .generation()
        .parent()
        .unwrap_or_else(|| Path::new("."));
    let cache = EmbeddingCache::open(dir)?;
    let mut v = Vectors::empty(&old.model, index.generation(), old.cache_stamp);
    v.dim = old.dim;
    v.sentences = old.sentences;
    for t in versions {
        v.max_id = v.max_id.max(t.id);
        let rows = match by_hash.get(&t.whole) {
            Some(&(row, extra)) if extra as usize == t.sentences.len() => {
                let row = row as usize;
                Some(
                    (row..=row + extra as usize)
                        .map(|r| old.exact(r).to_vec())
                        .collect(),
                )
            }
            _ => cached(&cache, &old.model, t)?,
        };
        match rows {
            Some(rows) => v.push_rows(t, &rows),
            None => v.missing.push((t.id, t.whole)),
        }
    }
    Ok(v)
}
