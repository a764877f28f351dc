//! The hash chain over canonical entry bytes: `hash = blake3(prev ‖ canonical)`.
//!
//! `prev` enters as its 32 raw bytes (all zeros before the first entry). With a chain key
//! the same input goes through blake3's keyed mode, so only the key's holder can produce
//! hashes that verify.

use std::fmt;

/// A 32-byte chain hash.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct ChainHash(pub [u8; 32]);

/// A hasher for tables keyed by [`ChainHash`]: passes its eight bytes through.
#[derive(Default, Clone, Copy)]
pub struct PassThroughHasher(u64);

impl std::hash::Hasher for PassThroughHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 ^= n;
    }
}

/// Builds [`PassThroughHasher`]s.
pub type ChainHashState = std::hash::BuildHasherDefault<PassThroughHasher>;

impl std::hash::Hash for ChainHash {
    /// A blake3 hash is already uniformly distributed: eight of its bytes are plenty for
    /// a hash table, and hashing all 32 was a visible cost of `verify`.
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        let mut first = [0u8; 8];
        first.copy_from_slice(&self.0[..8]);
        state.write_u64(u64::from_le_bytes(first));
    }
}

impl ChainHash {
    /// The `prev` of the very first entry.
    pub const GENESIS: ChainHash = ChainHash([0; 32]);

    /// Lower-case hex, 64 characters.
    pub fn to_hex(self) -> String {
        let mut s = String::with_capacity(64);
        for b in self.0 {
            s.push(char::from(HEX[usize::from(b >> 4)]));
            s.push(char::from(HEX[usize::from(b & 15)]));
        }
        s
    }

    /// Parses 64 hex characters (either case).
    ///
    /// Eight characters at a time as one 64-bit word (`verify` decodes every entry's
    /// `hash`, and a lookup per character was a twentieth of its time).
    pub fn from_hex(text: &str) -> Option<ChainHash> {
        let bytes: &[u8; 64] = text.as_bytes().try_into().ok()?;
        let mut out = [0u8; 32];
        for (word, four) in bytes.chunks_exact(8).zip(out.chunks_exact_mut(4)) {
            let word = u64::from_le_bytes(word.try_into().expect("8 bytes"));
            four.copy_from_slice(&hex_word(word)?.to_le_bytes());
        }
        Some(ChainHash(out))
    }
}

/// Eight hex characters (the first in the lowest byte) as four bytes, or `None` when
/// one is not a hex digit.
fn hex_word(x: u64) -> Option<u32> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // Every byte is ASCII, so below each byte's sums nothing carries into the next.
    if x & HIGH != 0 {
        return None;
    }
    let within = |lo: u8, hi: u8| {
        let at_least = x.wrapping_add(ONES * u64::from(0x80 - lo)) & HIGH;
        let at_most = !x.wrapping_add(ONES * u64::from(0x7f - hi)) & HIGH;
        at_least & at_most
    };
    if within(b'0', b'9') | within(b'a', b'f') | within(b'A', b'F') != HIGH {
        return None;
    }
    // A digit's value is its low four bits, plus 9 for a letter (bit 6 set).
    let values = (x & (ONES * 0x0f)) + ((x >> 6) & ONES) * 9;
    // Each even byte takes its value times 16 and the next byte's value; then the even
    // bytes are gathered into four.
    let pairs = ((values << 4) | (values >> 8)) & 0x00ff_00ff_00ff_00ff;
    let halves = (pairs | (pairs >> 8)) & 0x0000_ffff_0000_ffff;
    Some((halves | (halves >> 16)) as u32)
}

impl ChainHash {
    /// [`ChainHash::from_hex`] a character at a time (what the word-wise reading is
    /// held to).
    #[cfg(test)]
    fn from_hex_by_table(text: &str) -> Option<ChainHash> {
        let bytes = text.as_bytes();
        if bytes.len() != 64 {
            return None;
        }
        let mut out = [0u8; 32];
        let mut bad = 0u8;
        for (i, pair) in bytes.chunks_exact(2).enumerate() {
            let (hi, lo) = (
                HEX_VALUE[usize::from(pair[0])],
                HEX_VALUE[usize::from(pair[1])],
            );
            bad |= hi | lo;
            out[i] = (hi << 4) | (lo & 15);
        }
        // Invalid digits map to 0x80, so one check at the end covers all 64.
        (bad & 0x80 == 0).then_some(ChainHash(out))
    }
}

impl fmt::Debug for ChainHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ChainHash({})", self.to_hex())
    }
}

impl fmt::Display for ChainHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_hex())
    }
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// The value of each hex digit; 0x80 marks bytes that are not hex digits (the reading a
/// character at a time that tests hold the word-wise one to).
#[cfg(test)]
const HEX_VALUE: [u8; 256] = {
    let mut t = [0x80u8; 256];
    let mut i = 0;
    while i < 10 {
        t[b'0' as usize + i] = i as u8;
        i += 1;
    }
    let mut i = 0;
    while i < 6 {
        t[b'a' as usize + i] = 10 + i as u8;
        t[b'A' as usize + i] = 10 + i as u8;
        i += 1;
    }
    t
};

/// How entries are hashed: plain blake3, or blake3 keyed with a 32-byte secret.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
pub enum ChainKey {
    #[default]
    Plain,
    Keyed([u8; 32]),
}

impl fmt::Debug for ChainKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never print the secret.
        match self {
            ChainKey::Plain => f.write_str("Plain"),
            ChainKey::Keyed(_) => f.write_str("Keyed(…)"),
        }
    }
}

impl ChainKey {
    /// Starts hashing one entry that links to `prev`; feed it the canonical bytes.
    pub fn hasher(&self, prev: ChainHash) -> blake3::Hasher {
        let mut h = match self {
            ChainKey::Plain => blake3::Hasher::new(),
            ChainKey::Keyed(k) => blake3::Hasher::new_keyed(k),
        };
        h.update(&prev.0);
        h
    }

    /// `hash(prev ‖ canonical)` in one call.
    pub fn hash(&self, prev: ChainHash, canonical: &[u8]) -> ChainHash {
        let mut h = self.hasher(prev);
        h.update(canonical);
        ChainHash(*h.finalize().as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_read_word_wise_is_hex_read_a_character_at_a_time() {
        // Every byte value in every position of a word, around valid hashes.
        let valid = ChainHash(*blake3::hash(b"x").as_bytes()).to_hex();
        for at in 0..64 {
            for b in 0..=255u8 {
                let mut bytes = valid.clone().into_bytes();
                bytes[at] = b;
                if let Ok(text) = String::from_utf8(bytes) {
                    assert_eq!(
                        ChainHash::from_hex(&text),
                        ChainHash::from_hex_by_table(&text),
                        "{text:?}"
                    );
                }
            }
        }
        // Upper case, mixed case, and text that is not 64 bytes (a character of several).
        let upper = valid.to_uppercase();
        assert_eq!(ChainHash::from_hex(&upper), ChainHash::from_hex(&valid));
        let mixed: String = valid
            .chars()
            .enumerate()
            .map(|(i, c)| {
                if i % 3 == 0 {
                    c.to_ascii_uppercase()
                } else {
                    c
                }
            })
            .collect();
        assert_eq!(ChainHash::from_hex(&mixed), ChainHash::from_hex(&valid));
        assert_eq!(ChainHash::from_hex(&valid[..63]), None);
        assert_eq!(ChainHash::from_hex(&format!("é{}", &valid[2..])), None);
    }

    #[test]
    fn hex_round_trip() {
        let h = ChainKey::Plain.hash(ChainHash::GENESIS, b"entry");
        assert_eq!(ChainHash::from_hex(&h.to_hex()), Some(h));
        assert_eq!(ChainHash::from_hex("xyz"), None);
    }

    #[test]
    fn prev_and_key_change_the_hash() {
        let a = ChainKey::Plain.hash(ChainHash::GENESIS, b"entry");
        let b = ChainKey::Plain.hash(a, b"entry");
        let c = ChainKey::Keyed([7; 32]).hash(ChainHash::GENESIS, b"entry");
        assert_ne!(a, b);
        assert_ne!(a, c);
    }
}
