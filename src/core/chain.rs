//! The hash chain over canonical entry bytes: `hash = blake3(prev ‖ canonical)`.
//!
//! `prev` enters as its 32 raw bytes (all zeros before the first entry). With a chain key
//! the same input goes through blake3's keyed mode, so only the key's holder can produce
//! hashes that verify.

use std::fmt;

/// A 32-byte chain hash.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ChainHash(pub [u8; 32]);

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
    pub fn from_hex(text: &str) -> Option<ChainHash> {
        let bytes = text.as_bytes();
        if bytes.len() != 64 {
            return None;
        }
        let mut out = [0u8; 32];
        for (i, pair) in bytes.chunks_exact(2).enumerate() {
            out[i] = (nibble(pair[0])? << 4) | nibble(pair[1])?;
        }
        Some(ChainHash(out))
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

fn nibble(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

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
