//! The hash of an entry's canonical bytes: `hash(prev ‖ bytes)` over the entry as it
//! stands when it has LF line ends (one call for an entry of one BLAKE3 chunk), line by
//! line otherwise, so CRLF checkouts hash alike.

use super::*;

/// The hasher an entry's hash starts from: keyed when the entry says so, seeded with
/// its `prev` (genesis when absent).
pub(super) fn chain_hasher(prev: Option<ChainHash>, keyed: bool, key: &ChainKey) -> blake3::Hasher {
    let prev = prev.unwrap_or(ChainHash::GENESIS);
    if keyed {
        key.hasher(prev)
    } else {
        ChainKey::Plain.hasher(prev)
    }
}

/// The hash of an LF-only entry: `bytes[entry]` without the `hash:` line at `skip`,
/// as at most two contiguous ranges.
pub(super) fn hash_lf_entry(
    bytes: &[u8],
    entry: std::ops::Range<usize>,
    skip: Option<std::ops::Range<usize>>,
    prev: Option<ChainHash>,
    keyed: bool,
    key: &ChainKey,
) -> ChainHash {
    let (first, second) = match skip {
        Some(line) => (&bytes[entry.start..line.start], &bytes[line.end..entry.end]),
        None => (&bytes[entry], &[][..]),
    };
    let prev = prev.unwrap_or(ChainHash::GENESIS);
    // An entry is usually one BLAKE3 chunk (1 KiB) with its link: hashed in one call from
    // a buffer on the stack, which costs less than setting up and moving a `Hasher`
    // (2 KiB) for each of a hundred thousand entries.
    const CHUNK: usize = 1024;
    let len = prev.0.len() + first.len() + second.len();
    if len <= CHUNK {
        // Zeroing the buffer costs less than a call to the hasher; no byte of it is read
        // unwritten, so it needs no `unsafe`.
        let mut buf = [0u8; CHUNK];
        let mut at = 0;
        for part in [&prev.0[..], first, second] {
            buf[at..at + part.len()].copy_from_slice(part);
            at += part.len();
        }
        let input = &buf[..len];
        let hash = match key {
            ChainKey::Keyed(k) if keyed => blake3::keyed_hash(k, input),
            _ => blake3::hash(input),
        };
        return ChainHash(*hash.as_bytes());
    }
    let mut hasher = chain_hasher(Some(prev), keyed, key);
    hasher.update(first);
    hasher.update(second);
    ChainHash(*hasher.finalize().as_bytes())
}

/// `hash(prev ‖ canonical bytes)`: every line of the entry at `at`, LF-terminated,
/// without its first `hash:` line.
pub(super) fn entry_hash(
    src: &str,
    lines: &Lines<'_>,
    [head, open, close, term]: [usize; 4],
    prev: Option<ChainHash>,
    keyed: bool,
    key: &ChainKey,
) -> ChainHash {
    let hash_line = (open + 1..close).find(|&k| lines.text(k).starts_with("hash:"));
    let entry = lines.start(head)..lines.end(term);
    if !lines.has_cr && src.as_bytes()[entry.clone()].ends_with(b"\n") {
        // The common case (LF only): the entry's bytes as they stand.
        let skip = hash_line.map(|k| lines.start(k)..lines.end(k));
        return hash_lf_entry(src.as_bytes(), entry, skip, prev, keyed, key);
    }
    // Otherwise line by line, each with an LF, so CRLF files hash like LF ones.
    let mut hasher = chain_hasher(prev, keyed, key);
    for k in head..=term {
        if Some(k) == hash_line {
            continue;
        }
        hasher.update(lines.text(k).as_bytes());
        hasher.update(b"\n");
    }
    ChainHash(*hasher.finalize().as_bytes())
}

/// Entries hashed together. BLAKE3 compresses many inputs of the same number of blocks
/// at once, one per SIMD lane (16 with AVX-512), where an entry hashed alone (one chunk
/// of a few hundred bytes) uses one lane: so `verify`, which hashes every entry, queues
/// each entry of a file here and hashes the file's entries in groups of equal length.
///
/// This uses `blake3::platform`, which the crate marks unstable (it is what `b3sum`'s
/// speed rests on, exposed for benchmarks). The test below holds it to `blake3::hash`
/// and `blake3::keyed_hash` at every length a queued entry can have, in both modes, so
/// an update of the crate that changed it fails there rather than in a user's verify.
#[derive(Default)]
pub(super) struct BatchHash {
    /// Every queued message (`prev ‖ entry bytes`), one after another.
    bytes: Vec<u8>,
    /// Each message's start, length, and whether it is hashed with the chain key.
    jobs: Vec<(usize, usize, bool)>,
}

/// The BLAKE3 flags used here (the specification's values).
const CHUNK_START: u8 = 1;
const CHUNK_END: u8 = 2;
const ROOT: u8 = 8;
const KEYED_HASH: u8 = 16;
/// BLAKE3's initial value (the specification's).
const IV: [u32; 8] = [
    0x6A09_E667,
    0xBB67_AE85,
    0x3C6E_F372,
    0xA54F_F53A,
    0x510E_527F,
    0x9B05_688C,
    0x1F83_D9AB,
    0x5BE0_CD19,
];

impl BatchHash {
    /// Empties the queue, keeping its buffers.
    pub(super) fn clear(&mut self) {
        self.bytes.clear();
        self.jobs.clear();
    }

    /// Queues `prev ‖ first ‖ second` and returns its number among the queued, or `None`
    /// when it is longer than one chunk (hash it alone).
    pub(super) fn push(
        &mut self,
        prev: Option<ChainHash>,
        first: &[u8],
        second: &[u8],
        keyed: bool,
    ) -> Option<usize> {
        let len = 32 + first.len() + second.len();
        if len > blake3::CHUNK_LEN {
            return None;
        }
        let at = self.bytes.len();
        self.bytes
            .extend_from_slice(&prev.unwrap_or(ChainHash::GENESIS).0);
        self.bytes.extend_from_slice(first);
        self.bytes.extend_from_slice(second);
        self.jobs.push((at, len, keyed));
        Some(self.jobs.len() - 1)
    }

    /// The hash of each queued message, in the order queued (keyed with `key` where the
    /// message said so and `key` is a key, as [`hash_lf_entry`] does).
    pub(super) fn finish(&self, key: &ChainKey) -> Vec<ChainHash> {
        use blake3::platform::{Platform, le_bytes_from_words_32, words_from_le_bytes_32};
        let platform = Platform::detect();
        let mut out = vec![ChainHash::GENESIS; self.jobs.len()];
        // The blocks before the last (which may be partial), and the mode: messages alike
        // in both are compressed side by side up to their last block.
        let group_of = |j: usize| {
            let (_, len, keyed) = self.jobs[j];
            let keyed = keyed && matches!(key, ChainKey::Keyed(_));
            ((len - 1) / blake3::BLOCK_LEN, keyed)
        };
        let mut order: Vec<usize> = (0..self.jobs.len()).collect();
        order.sort_by_key(|&j| group_of(j));
        for group in order.chunk_by(|&a, &b| group_of(a) == group_of(b)) {
            let (lead, keyed) = group_of(group[0]);
            let (words, flags) = match key {
                ChainKey::Keyed(k) if keyed => (words_from_le_bytes_32(k), KEYED_HASH),
                _ => (IV, 0),
            };
            // The chaining value of each message after its leading full blocks.
            let mut cvs = vec![0u8; group.len() * blake3::OUT_LEN];
            macro_rules! lanes {
                ($($n:literal)*) => {
                    match lead {
                        0 => {
                            let start = le_bytes_from_words_32(&words);
                            for cv in cvs.chunks_exact_mut(blake3::OUT_LEN) {
                                cv.copy_from_slice(&start);
                            }
                        }
                        $($n => self.lanes::<{ $n * blake3::BLOCK_LEN }>(
                            &platform, group, &words, flags, &mut cvs,
                        ),)*
                        _ => unreachable!("a message of one chunk has at most 15 full blocks before its last"),
                    }
                };
            }
            lanes!(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15);
            for (cv_bytes, &j) in cvs.chunks_exact(blake3::OUT_LEN).zip(group) {
                let (at, len, _) = self.jobs[j];
                let tail = &self.bytes[at + lead * blake3::BLOCK_LEN..at + len];
                let mut block = [0u8; blake3::BLOCK_LEN];
                block[..tail.len()].copy_from_slice(tail);
                let mut cv = words_from_le_bytes_32(
                    cv_bytes.try_into().expect("a chaining value is 32 bytes"),
                );
                let start = if lead == 0 { CHUNK_START } else { 0 };
                platform.compress_in_place(
                    &mut cv,
                    &block,
                    tail.len() as u8,
                    0,
                    flags | start | CHUNK_END | ROOT,
                );
                out[j] = ChainHash(le_bytes_from_words_32(&cv));
            }
        }
        out
    }

    /// Compresses the first `N` bytes (whole blocks) of each message of `group` side by
    /// side, writing each one's chaining value into `cvs`.
    fn lanes<const N: usize>(
        &self,
        platform: &blake3::platform::Platform,
        group: &[usize],
        words: &[u32; 8],
        flags: u8,
        cvs: &mut [u8],
    ) {
        let inputs: Vec<&[u8; N]> = group
            .iter()
            .map(|&j| {
                let at = self.jobs[j].0;
                self.bytes[at..at + N]
                    .try_into()
                    .expect("a message longer than its leading blocks")
            })
            .collect();
        platform.hash_many(
            &inputs,
            words,
            0,
            blake3::IncrementCounter::No,
            flags,
            CHUNK_START,
            0,
            cvs,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batched_hashes_are_blake3_at_every_length_in_both_modes() {
        let key = ChainKey::Keyed(*blake3::hash(b"a chain key").as_bytes());
        let text: Vec<u8> = (0..2000u32).map(|i| (i * 7 + i / 13) as u8).collect();
        let prev_hash = ChainHash(*blake3::hash(b"prev").as_bytes());
        let prev = Some(prev_hash);
        let mut batch = BatchHash::default();
        let mut want = Vec::new();
        // Every length a queued message can have, keyed and plain, split at two places,
        // queued in an order that mixes the groups.
        for len in (0..=blake3::CHUNK_LEN - 32).rev() {
            for keyed in [false, true] {
                let body = &text[len % 11..len % 11 + len];
                let (first, second) = body.split_at(len / 3);
                let mut whole = prev_hash.0.to_vec();
                whole.extend_from_slice(body);
                want.push(if keyed {
                    blake3::keyed_hash(
                        match &key {
                            ChainKey::Keyed(k) => k,
                            ChainKey::Plain => unreachable!(),
                        },
                        &whole,
                    )
                } else {
                    blake3::hash(&whole)
                });
                assert_eq!(batch.push(prev, first, second, keyed), Some(want.len() - 1));
            }
        }
        assert_eq!(batch.push(prev, &text[..993], &[], false), None);
        let got = batch.finish(&key);
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(g.0, *w.as_bytes(), "message {i}");
        }
        // Without the key, entries that say `keyed` hash plainly, as `hash_lf_entry` does.
        let mut plain = BatchHash::default();
        plain.push(None, b"## k\n", b"", true);
        let mut whole = ChainHash::GENESIS.0.to_vec();
        whole.extend_from_slice(b"## k\n");
        assert_eq!(
            plain.finish(&ChainKey::Plain)[0].0,
            *blake3::hash(&whole).as_bytes()
        );
    }
}
