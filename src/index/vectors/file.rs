//! The vector file: one generation's set of one model's vectors on disk, memory-mapped by
//! the processes after the one that wrote it, and its tail, the rows added since.
//!
//! A set's file is rewritten whole (aside, then renamed) only when the rows added since
//! it was written reach a sixty-fourth of it; before that, every [`TAIL_AFTER`] added
//! rows are written to a *tail* file beside it (`….vectors-<model hash>.tail`) that
//! names the file it extends (its row count, largest id and cache write count), so that
//! later processes read them from there rather than one by one from the cache. At a
//! million versions the file is 1.6 GB and a tail of a thousand rows 6 MB (most of it
//! the id-to-row map).

use std::io::Write;
use std::ops::Range;
use std::path::{Path, PathBuf};

use super::{Mapped, RESAVE_AFTER, Vectors};
use crate::index::embeddings::Stamp;

/// The vector file of `model`'s vectors for the generation whose full-text directory is
/// `generation`. Its name starts with the generation's, so it goes when the generation does.
pub(super) fn file_path(generation: &Path, model: &str) -> PathBuf {
    let tag = blake3::hash(model.as_bytes()).to_hex();
    generation.with_extension(format!("vectors-{}", &tag[..16]))
}

/// The tail of the vector file at `path`.
fn tail_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_os_string();
    name.push(".tail");
    PathBuf::from(name)
}

/// Removes the vector files of `generation` that are not `model`'s (once `embed --prune`
/// has dropped the other models' vectors from the cache, nothing should serve them).
pub fn remove_other_files(generation: &Path, model: &str) {
    let keep = file_path(generation, model);
    let keep_tail = tail_path(&keep);
    let (Some(dir), Some(prefix)) = (
        generation.parent(),
        generation
            .with_extension("vectors-")
            .file_name()
            .map(|n| n.to_os_string()),
    ) else {
        return;
    };
    let Ok(read) = std::fs::read_dir(dir) else {
        return;
    };
    for item in read.flatten() {
        let name = item.file_name();
        let ours = name
            .as_encoded_bytes()
            .starts_with(prefix.as_encoded_bytes());
        if ours && item.path() != keep && item.path() != keep_tail {
            let _ = std::fs::remove_file(item.path());
        }
    }
}

/// The first eight bytes of a vector file; the last names the layout's version.
const MAGIC: [u8; 8] = *b"mem7vec\x03";
/// Rows filled by a process before it writes the tail again: a tail costs a few MB to
/// write at a million versions, against the file's 1.6 GB, so it is written early.
const TAIL_AFTER: usize = 128;
/// The first eight bytes of a tail file.
const TAIL_MAGIC: [u8; 8] = *b"mem7vtl\x02";
/// Header fields after the magic, each a little-endian u64.
const HEADER_FIELDS: usize = 12;

/// Where each part of a vector file lies, from its header.
///
/// After the magic: `dim`, `rows`, `max_id`, the cache stamp (origin, writes), the
/// lengths of `row_of`, the missing list and the model id, the file a tail extends
/// (its `rows`, `max_id` and stamp's writes; zeros in a whole file), and the most
/// sentence rows a version may have (`search.sentences`). Then, each part starting on 8
/// bytes: the model id (UTF-8), `row_of` (u32 per version id: its first row), `extra`
/// (u8 per version id: its rows after the first, its sentences'), the sign bits (u64s,
/// row by row), the exact rows (f32s), the rows' text hashes (32 bytes each) and the
/// missing versions (u64 id and 32-byte hash of the whole text each). Numbers are
/// little-endian; the file is only written and read on little-endian machines.
/// (Layout 2 had no `extra` and no sentence field: one row per version.)
pub(super) struct Layout {
    /// What a tail extends: the whole file's rows, largest id and cache write count.
    base: [u64; 3],
    dim: usize,
    rows: usize,
    max_id: u64,
    stamp: Stamp,
    sentences: usize,
    model: Range<usize>,
    pub(super) row_of: Range<usize>,
    pub(super) extra: Range<usize>,
    bits: Range<usize>,
    data: Range<usize>,
    hashes: Range<usize>,
    pub(super) missing: Range<usize>,
}

/// Bytes per missing version in a vector file.
const MISSING_BYTES: usize = 40;

impl Layout {
    /// The layout of a set with these counts; `None` when a size does not fit in memory.
    fn of(dim: usize, rows: usize, row_of: usize, missing: usize, model: usize) -> Option<Layout> {
        let part = |start: usize, bytes: Option<usize>| -> Option<Range<usize>> {
            let start = start.checked_next_multiple_of(8)?;
            Some(start..start.checked_add(bytes?)?)
        };
        let words = dim.div_ceil(64);
        let model = part(8 * (1 + HEADER_FIELDS), Some(model))?;
        let ids = row_of;
        let row_of = part(model.end, ids.checked_mul(4))?;
        let extra = part(row_of.end, Some(ids))?;
        let bits = part(extra.end, rows.checked_mul(words)?.checked_mul(8))?;
        let data = part(bits.end, rows.checked_mul(dim)?.checked_mul(4))?;
        let hashes = part(data.end, rows.checked_mul(32))?;
        let missing = part(hashes.end, missing.checked_mul(MISSING_BYTES))?;
        Some(Layout {
            base: [0; 3],
            dim,
            rows,
            max_id: 0,
            stamp: Stamp::default(),
            sentences: 0,
            model,
            row_of,
            extra,
            bits,
            data,
            hashes,
            missing,
        })
    }

    /// Reads the header of `bytes` and checks that the parts end where the file does.
    pub(super) fn read(bytes: &[u8], magic: [u8; 8]) -> Option<Layout> {
        let header = bytes.get(..8 * (1 + HEADER_FIELDS))?;
        if header[..8] != magic {
            return None;
        }
        let field = |i: usize| {
            let at = 8 * (1 + i);
            u64::from_le_bytes(header[at..at + 8].try_into().expect("8 bytes"))
        };
        let size = |i: usize| usize::try_from(field(i)).ok();
        let (dim, rows) = (size(0)?, size(1)?);
        if dim == 0 && rows > 0 {
            return None;
        }
        let mut layout = Layout::of(dim, rows, size(5)?, size(6)?, size(7)?)?;
        layout.max_id = field(2);
        layout.stamp = Stamp {
            origin: field(3),
            writes: field(4),
        };
        layout.base = [field(8), field(9), field(10)];
        layout.sentences = size(11)?;
        (layout.missing.end == bytes.len()).then_some(layout)
    }

    fn header(&self, magic: [u8; 8]) -> [u8; 8 * (1 + HEADER_FIELDS)] {
        let (row_of, missing) = (self.row_of.len() / 4, self.missing.len() / MISSING_BYTES);
        let fields = [
            self.dim as u64,
            self.rows as u64,
            self.max_id,
            self.stamp.origin,
            self.stamp.writes,
            row_of as u64,
            missing as u64,
            self.model.len() as u64,
            self.base[0],
            self.base[1],
            self.base[2],
            self.sentences as u64,
        ];
        let mut out = [0u8; 8 * (1 + HEADER_FIELDS)];
        out[..8].copy_from_slice(&magic);
        for (i, f) in fields.iter().enumerate() {
            out[8 * (1 + i)..8 * (2 + i)].copy_from_slice(&f.to_le_bytes());
        }
        out
    }
}

impl Vectors {
    /// The set in the vector file of `model` for `generation`, if there is one that holds
    /// together and was made from the cache whose origin is `origin` (not from one since
    /// deleted, whose vectors may differ). It is mapped, not read: only the rows a search
    /// touches are loaded. Its versions have at most `sentences` sentence rows.
    pub(super) fn open(
        generation: &Path,
        model: &str,
        origin: u64,
        sentences: usize,
    ) -> Option<Vectors> {
        let path = file_path(generation, model);
        let mut v = Vectors::open_path(&path, generation)?;
        if v.model != model || v.cache_stamp.origin != origin || v.sentences != sentences {
            return None;
        }
        v.read_tail(&tail_path(&path));
        Some(v)
    }

    /// Takes the rows, id map and missing list of the tail at `path`, if it extends this
    /// very file and holds together; else leaves the set as the file has it.
    fn read_tail(&mut self, path: &Path) {
        let Some(base) = self.mapped.as_ref().map(|m| m.base) else {
            return;
        };
        let Ok(bytes) = std::fs::read(path) else {
            return;
        };
        let Some(layout) = Layout::read(&bytes, TAIL_MAGIC) else {
            return;
        };
        let dim_fits = layout.dim == self.dim || (self.mapped_rows() == 0 && layout.rows == 0);
        if layout.base != base
            || &bytes[layout.model.clone()] != self.model.as_bytes()
            || layout.stamp.origin != self.cache_stamp.origin
            || layout.sentences != self.sentences
            || !dim_fits
        {
            return;
        }
        let Some(Maps {
            row_of,
            extra,
            missing,
            filled,
        }) = checked_maps(&bytes, &layout, self.mapped_rows())
        else {
            return;
        };
        // Read, not mapped: the bytes may lie at any alignment, so they are decoded.
        self.data = bytes[layout.data.clone()]
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes(b.try_into().expect("4 bytes")))
            .collect();
        self.bits = bytes[layout.bits.clone()]
            .chunks_exact(8)
            .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
            .collect();
        self.hashes = bytes[layout.hashes.clone()]
            .chunks_exact(32)
            .map(|h| h.try_into().expect("32 bytes"))
            .collect();
        self.row_of = row_of;
        self.extra = extra;
        self.missing = missing;
        self.partial.clear();
        self.classified = false;
        self.filled = filled;
        self.max_id = layout.max_id;
        self.cache_stamp = layout.stamp;
    }

    /// The set in the vector file at `path`, if it holds together, whatever its model
    /// and cache; it is taken to belong to `generation`.
    pub(super) fn open_path(path: &Path, generation: &Path) -> Option<Vectors> {
        if cfg!(target_endian = "big") {
            return None;
        }
        let file = std::fs::File::open(path).ok()?;
        // SAFETY: vector files are never changed in place: a new one is written aside and
        // renamed over the old, and a generation's files are only ever removed whole, so
        // the mapped bytes stay as they were (the model weights are mapped on the same
        // terms). A file cut short by hand is caught by the size check below, before any
        // row is read.
        let map = unsafe { memmap2::Mmap::map(&file) }.ok()?;
        let layout = Layout::read(&map, MAGIC)?;
        let model = std::str::from_utf8(&map[layout.model.clone()])
            .ok()?
            .to_string();
        let maps = checked_maps(&map, &layout, 0)?;
        let mut v = Vectors::empty(&model, generation, layout.stamp);
        v.dim = layout.dim;
        v.sentences = layout.sentences;
        let Maps {
            row_of,
            extra,
            missing,
            filled,
        } = maps;
        v.row_of = row_of;
        v.extra = extra;
        v.missing = missing;
        v.filled = filled;
        v.max_id = layout.max_id;
        v.mapped = Some(Mapped {
            base: [layout.rows as u64, layout.max_id, layout.stamp.writes],
            rows: layout.rows,
            bits: layout.bits,
            data: layout.data,
            hashes: layout.hashes,
            map,
            file,
        });
        // The checks above read the header, `row_of` and the missing list; the casts
        // below must not fail on a search's hot path.
        let m = v.mapped.as_ref().expect("just set");
        bytemuck::try_cast_slice::<u8, u64>(&m.map[m.bits.clone()]).ok()?;
        bytemuck::try_cast_slice::<u8, f32>(&m.map[m.data.clone()]).ok()?;
        Some(v)
    }

    /// Writes what was filled since the set was last read or written: to the tail, once
    /// that is [`TAIL_AFTER`] rows, while the rows after the mapped file are fewer than a
    /// sixty-fourth of all; else the whole file anew, once it is [`RESAVE_AFTER`] rows.
    /// A failure (a read-only or full disk) leaves the old files, or none, and is not
    /// retried before as many rows again: the next process looks the rows up in the
    /// cache, or assembles the set.
    pub(super) fn save_if_due(&mut self) {
        let added = self.rows() - self.mapped_rows();
        let to_tail = self.mapped.is_some() && added < self.rows() / 64;
        let due = if to_tail { TAIL_AFTER } else { RESAVE_AFTER };
        if self.unsaved < due || cfg!(target_endian = "big") {
            return;
        }
        let _ = match &self.mapped {
            Some(m) if to_tail => self.write(
                &tail_path(&file_path(&self.generation, &self.model)),
                TAIL_MAGIC,
                m.rows,
                m.base,
            ),
            _ => self.save(),
        };
        self.unsaved = 0;
    }

    /// Writes the whole set to its vector file (and removes the tail of the file it
    /// replaces: a tail never outlives the file it extends).
    pub(super) fn save(&self) -> std::io::Result<()> {
        let path = file_path(&self.generation, &self.model);
        match std::fs::remove_file(tail_path(&path)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
        self.write(&path, MAGIC, 0, [0; 3])
    }

    /// Writes the set's rows from `first` on, with its whole id map and missing list, to
    /// a file at `path` that starts with `magic` and names `base` as what it extends.
    fn write(
        &self,
        path: &Path,
        magic: [u8; 8],
        first: usize,
        base: [u64; 3],
    ) -> std::io::Result<()> {
        let invalid = || std::io::Error::other("the vector set is too large to lay out");
        // Every id up to `max_id` has a `row_of` entry in the file (`open` checks it).
        let ids = usize::try_from(self.max_id)
            .ok()
            .and_then(|m| m.checked_add(1))
            .filter(|ids| *ids >= self.row_of.len())
            .ok_or_else(invalid)?;
        let mut layout = Layout::of(
            self.dim,
            self.rows() - first,
            ids,
            self.missing.len(),
            self.model.len(),
        )
        .ok_or_else(invalid)?;
        layout.max_id = self.max_id;
        layout.stamp = self.cache_stamp;
        layout.base = base;
        layout.sentences = self.sentences;
        let unlisted = vec![u32::MAX; ids - self.row_of.len()];
        let no_extra = vec![0u8; ids.checked_sub(self.extra.len()).ok_or_else(invalid)?];
        let (mapped_bits, mapped_data, mapped_hashes) = match &self.mapped {
            Some(m) if first == 0 => (m.bits(), m.data(), m.hashes()),
            _ => (&[][..], &[][..], &[][..]),
        };
        let missing: Vec<u8> = self
            .missing
            .iter()
            .flat_map(|(id, hash)| id.to_le_bytes().into_iter().chain(*hash))
            .collect();
        // Each part at its offset, after up to 7 bytes of padding.
        let parts: [(usize, &[&[u8]]); 8] = [
            (0, &[&layout.header(magic)]),
            (layout.model.start, &[self.model.as_bytes()]),
            (
                layout.row_of.start,
                &[
                    bytemuck::cast_slice(&self.row_of),
                    bytemuck::cast_slice(&unlisted),
                ],
            ),
            (layout.extra.start, &[&self.extra, &no_extra]),
            (
                layout.bits.start,
                &[
                    bytemuck::cast_slice(mapped_bits),
                    bytemuck::cast_slice(&self.bits),
                ],
            ),
            (
                layout.data.start,
                &[
                    bytemuck::cast_slice(mapped_data),
                    bytemuck::cast_slice(&self.data),
                ],
            ),
            (
                layout.hashes.start,
                &[mapped_hashes, self.hashes.as_flattened()],
            ),
            (layout.missing.start, &[&missing]),
        ];
        // A new file of its own (created exclusively), renamed over the old one: a mapped
        // file is never written to. Its name starts with the generation's, so a leftover
        // goes with the generation.
        let dir = path.parent().ok_or_else(invalid)?;
        let mut prefix = path.file_name().ok_or_else(invalid)?.to_os_string();
        prefix.push(".tmp");
        let tmp = tempfile::Builder::new().prefix(&prefix).tempfile_in(dir)?;
        let mut out = std::io::BufWriter::with_capacity(1 << 20, tmp.as_file());
        let mut at = 0;
        for (start, bytes) in parts {
            let pad = start
                .checked_sub(at)
                .filter(|p| *p < 8)
                .ok_or_else(invalid)?;
            out.write_all(&[0u8; 8][..pad])?;
            at = start;
            for b in bytes {
                out.write_all(b)?;
                at += b.len();
            }
        }
        if at != layout.missing.end {
            return Err(invalid());
        }
        out.flush()?;
        drop(out);
        tmp.persist(path).map_err(|e| e.error)?;
        Ok(())
    }
}

/// A file's id-to-row map, its rows after the first per id, its missing versions, and
/// how many ids have a row.
struct Maps {
    row_of: Vec<u32>,
    extra: Vec<u8>,
    missing: Vec<super::Pending>,
    filled: usize,
}

/// The id-to-row maps and the missing list of a file laid out as `layout`, checked: every
/// row below `earlier` (rows before the file's own) plus the file's rows, one entry per
/// id up to the largest, no version with more sentence rows than the file allows, and no
/// missing version with a row. Also how many ids have a row.
fn checked_maps(bytes: &[u8], layout: &Layout, earlier: usize) -> Option<Maps> {
    let row_of: Vec<u32> = bytes[layout.row_of.clone()]
        .chunks_exact(4)
        .map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")))
        .collect();
    let extra = bytes[layout.extra.clone()].to_vec();
    let rows = earlier.checked_add(layout.rows)?;
    let mut filled = 0;
    for (&row, &more) in row_of.iter().zip(&extra) {
        if row != u32::MAX {
            if row as usize + more as usize >= rows || more as usize > layout.sentences {
                return None;
            }
            filled += 1;
        }
    }
    // `row_of` covers every id up to `max_id`, so a wrong `max_id` (which would hide
    // versions from the top-up) shows as a wrong size.
    if row_of.len() as u64 != layout.max_id.checked_add(1)? {
        return None;
    }
    let mut missing = Vec::with_capacity(layout.missing.len() / MISSING_BYTES);
    for m in bytes[layout.missing.clone()].chunks_exact(MISSING_BYTES) {
        let id = u64::from_le_bytes(m[..8].try_into().expect("8 bytes"));
        if row_of.get(id as usize) != Some(&u32::MAX) {
            return None;
        }
        missing.push((id, m[8..].try_into().expect("32 bytes")));
    }
    Some(Maps {
        row_of,
        extra,
        missing,
        filled,
    })
}
