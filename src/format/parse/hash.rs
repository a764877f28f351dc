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
