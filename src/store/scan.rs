//! A scan's fingerprints: day files `stat`ed on the cores (`stat_all`), and what they
//! come to as one value (`FileStat::mark`, `ScanStamp`), which the index keeps so that a
//! start-up with nothing changed compares one value rather than a row per file.

use std::fs;

use super::{FileStat, mtime_ns};
use crate::error::{Error, Result};

impl FileStat {
    /// The fingerprint as 128 bits: any change of the name, size or mtime changes it
    /// (a fixed mixing function, the same in every build, since stamps are stored).
    pub fn mark(&self) -> u128 {
        file_mark(&self.name, self.size, self.mtime_ns)
    }
}

/// [`FileStat::mark`] of a fingerprint given by its parts.
pub fn file_mark(name: &str, size: u64, mtime_ns: i64) -> u128 {
    // SplitMix64's finaliser over the name's bytes, eight at a time, then the size and
    // the mtime, in two lanes seeded differently.
    fn mix(mut z: u64) -> u64 {
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    let mut lanes = [0x9E37_79B9_7F4A_7C15u64, 0xD1B5_4A32_D192_ED03u64];
    let mut feed = |word: u64| {
        for (i, lane) in lanes.iter_mut().enumerate() {
            *lane = mix(*lane ^ word.wrapping_add(i as u64));
        }
    };
    let bytes = name.as_bytes();
    feed(bytes.len() as u64);
    for chunk in bytes.chunks(8) {
        let mut word = [0u8; 8];
        word[..chunk.len()].copy_from_slice(chunk);
        feed(u64::from_le_bytes(word));
    }
    feed(size);
    feed(mtime_ns as u64);
    (u128::from(lanes[0]) << 64) | u128::from(lanes[1])
}

/// What a set of fingerprints comes to: how many, and the XOR of their marks. The index
/// stores the stamp of the files it reflects, so a start-up compares one value with the
/// scan instead of reading a row per file; and an append updates it by two XORs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ScanStamp {
    pub files: u64,
    pub marks: u128,
}

impl ScanStamp {
    /// The stamp of a scan.
    pub fn of(scan: &[FileStat]) -> ScanStamp {
        let mut stamp = ScanStamp::default();
        for file in scan {
            stamp.add(file.mark());
        }
        stamp
    }

    /// Counts a fingerprint in.
    pub fn add(&mut self, mark: u128) {
        self.files += 1;
        self.marks ^= mark;
    }

    /// Counts a fingerprint out.
    pub fn remove(&mut self, mark: u128) {
        self.files = self.files.wrapping_sub(1);
        self.marks ^= mark;
    }

    /// As stored: `files:marks` in hex.
    pub fn to_text(self) -> String {
        format!("{}:{:032x}", self.files, self.marks)
    }

    /// Read back from [`ScanStamp::to_text`].
    pub fn parse(text: &str) -> Option<ScanStamp> {
        let (files, marks) = text.split_once(':')?;
        Some(ScanStamp {
            files: files.parse().ok()?,
            marks: u128::from_str_radix(marks, 16).ok()?,
        })
    }
}

/// Below this many day files they are looked at on one thread: a thread costs more
/// than a few hundred `stat`s.
const STATS_PER_THREAD: usize = 512;

/// The fingerprints of day files (each `stat`ed relative to the memory folder's handle,
/// without following a link), in the order given. Many files are shared out among the
/// cores: at ten million versions (13,334 day files) the `stat`s are most of what a
/// start-up with nothing changed costs.
pub(super) fn stat_all(days: Vec<(String, fs::DirEntry)>) -> Result<Vec<FileStat>> {
    let stat = |(name, item): (String, fs::DirEntry)| -> Result<FileStat> {
        let meta = item.metadata().map_err(|e| Error::io(item.path(), e))?;
        Ok(FileStat {
            name,
            size: meta.len(),
            mtime_ns: mtime_ns(&meta),
        })
    };
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(days.len() / STATS_PER_THREAD)
        .max(1);
    if threads == 1 {
        return days.into_iter().map(stat).collect();
    }
    let per = days.len().div_ceil(threads);
    let mut parts: Vec<Vec<(String, fs::DirEntry)>> = Vec::with_capacity(threads);
    let mut rest = days;
    while rest.len() > per {
        let tail = rest.split_off(per);
        parts.push(rest);
        rest = tail;
    }
    parts.push(rest);
    let done: Vec<Result<Vec<FileStat>>> = std::thread::scope(|s| {
        let handles: Vec<_> = parts
            .into_iter()
            .map(|part| s.spawn(move || part.into_iter().map(stat).collect()))
            .collect();
        handles
            .into_iter()
            .map(|h| Error::joined(h, "a thread reading the memory folder"))
            .collect()
    });
    let mut out = Vec::new();
    for part in done {
        out.extend(part?);
    }
    Ok(out)
}
