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
use super::Vectors;
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
    let Ok(versions) = index.texts_after(0) else {
        carried.iter().for_each(|p| drop(std::fs::remove_file(p)));
        return;
    };
    for path in carried {
        let name = path.to_string_lossy();
        let target = PathBuf::from(&name[..name.len() - CARRIED.len()]);
        if let Some(old) = Vectors::open_path(&path, index.generation()) {
            if fits(&old, &versions) {
                if std::fs::rename(&path, &target).is_ok() {
                    continue;
                }
            } else if super::file_path(index.generation(), &old.model) == target {
                let _ = remap(&old, index, &versions)
                    .and_then(|v| v.save().map_err(|e| crate::error::Error::io(&target, e)));
            }
        }
        let _ = std::fs::remove_file(&path);
    }
}

/// Whether `old` holds exactly the versions up to its largest id of `versions` (id and
/// text hash, in id order), each with a row or listed as missing.
fn fits(old: &Vectors, versions: &[(u64, [u8; 32])]) -> bool {
    let missing: HashMap<u64, [u8; 32]> = old.missing.iter().copied().collect();
    let mut seen = 0;
    for (id, hash) in versions.iter().take_while(|(id, _)| *id <= old.max_id) {
        let same = match old.row_of.get(*id as usize) {
            Some(&row) if row != u32::MAX => old.row_hash(row as usize) == *hash,
            _ => missing.get(id) == Some(hash),
        };
        if !same {
            return false;
        }
        seen += 1;
    }
    seen == old.filled + old.missing.len()
}

/// The set of `old`'s model for `versions` of `index`: each row found in `old` by its
/// text hash, else in the cache, else listed as missing.
fn remap(
    old: &Vectors,
    index: &Index,
    versions: &[(u64, [u8; 32])],
) -> crate::error::Result<Vectors> {
    let mut by_hash: HashMap<[u8; 32], u32> = HashMap::with_capacity(old.filled);
    for &row in old.row_of.iter().filter(|r| **r != u32::MAX) {
        by_hash.insert(old.row_hash(row as usize), row);
    }
    let dir = index
        .generation()
        .parent()
        .unwrap_or_else(|| Path::new("."));
    let cache = EmbeddingCache::open(dir)?;
    let mut v = Vectors::empty(&old.model, index.generation(), old.cache_stamp);
    v.dim = old.dim;
    for &(id, hash) in versions {
        v.max_id = v.max_id.max(id);
        match by_hash.get(&hash) {
            Some(&row) => v.push(id, hash, old.exact(row as usize)),
            None => match cache.get_hash(&hash, &old.model)? {
                Some(vector) => v.push(id, hash, &vector),
                None => v.missing.push((id, hash)),
            },
        }
    }
    Ok(v)
}
