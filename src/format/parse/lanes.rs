//! What the readers find sixteen bytes at a time (SSE2, which every x86-64 processor
//! has): the line feeds of a text, and the name of an envelope line.
//!
//! Memory files are lines of a few dozen bytes. A vectorised search started once per
//! line (`memchr`) pays its set-up, and a look at up to 128 bytes, for each one: at a
//! million versions that was a sixth of `verify`'s time. Here each byte is compared
//! once, whatever the length of its line, and carriage returns are noted in the same
//! pass (the fast path refuses a file that has one). Likewise a field's name was read
//! a byte at a time, with a branch the processor could not foretell at its end.

/// An iterator over the offsets of the line feeds of `bytes`, in order.
pub(super) struct LineFeeds<'a> {
    bytes: &'a [u8],
    /// Where the block of `feeds` starts (`bytes.len()` or past it when done).
    block: usize,
    /// The feeds of the block not yet taken, a bit per byte.
    feeds: u64,
    /// Whether a block read so far holds a carriage return.
    carriage_return: bool,
}

/// How many bytes one mask covers.
const BLOCK: usize = 64;

impl<'a> LineFeeds<'a> {
    pub(super) fn new(bytes: &'a [u8]) -> LineFeeds<'a> {
        let (feeds, carriage_return) = masks(bytes);
        LineFeeds {
            bytes,
            block: 0,
            feeds,
            carriage_return,
        }
    }

    /// Whether any byte up to the end of the block of the last feed taken is a carriage
    /// return (once the last feed of the text is taken: whether the text has one).
    pub(super) fn saw_carriage_return(&self) -> bool {
        self.carriage_return
    }
}

impl Iterator for LineFeeds<'_> {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        while self.feeds == 0 {
            self.block += BLOCK;
            if self.block >= self.bytes.len() {
                return None;
            }
            let (feeds, carriage_return) = masks(&self.bytes[self.block..]);
            self.feeds = feeds;
            self.carriage_return |= carriage_return;
        }
        let at = self.block + self.feeds.trailing_zeros() as usize;
        self.feeds &= self.feeds - 1;
        Some(at)
    }
}

/// The line feeds of the first 64 bytes of `bytes` (fewer at its end), a bit per byte,
/// and whether any of them is a carriage return.
fn masks(bytes: &[u8]) -> (u64, bool) {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    if let Some(block) = bytes.first_chunk::<BLOCK>() {
        // SAFETY: `block_masks` only needs SSE2, which this build's target has (the
        // `cfg` above): every x86-64 processor has it.
        return unsafe { block_masks(block) };
    }
    bytewise(bytes.get(..BLOCK).unwrap_or(bytes))
}

/// [`masks`] a byte at a time: at a text's end, and on processors without SSE2.
fn bytewise(bytes: &[u8]) -> (u64, bool) {
    bytes
        .iter()
        .enumerate()
        .fold((0, false), |(feeds, cr), (i, &b)| {
            (feeds | u64::from(b == b'\n') << i, cr || b == b'\r')
        })
}

/// How many of the bytes that start `bytes` are lower-case ASCII letters or `_` (the
/// characters of a field's name), up to the first other byte or the end.
pub(super) fn name_len(bytes: &[u8]) -> usize {
    let scalar = |bytes: &[u8]| {
        bytes
            .iter()
            .position(|&c| !(c.is_ascii_lowercase() || c == b'_'))
            .unwrap_or(bytes.len())
    };
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    if let Some(lane) = bytes.first_chunk::<16>() {
        // SAFETY: `name_mask` only needs SSE2, which this build's target has.
        let in_name = unsafe { name_mask(lane) };
        let len = (!in_name).trailing_zeros() as usize;
        return if len < 16 {
            len
        } else {
            16 + scalar(&bytes[16..])
        };
    }
    scalar(bytes)
}

/// Sixteen bytes as one SSE2 value, built from two words (no pointer read), which the
/// compiler turns into one load.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[target_feature(enable = "sse2")]
fn lane(bytes: &[u8]) -> std::arch::x86_64::__m128i {
    let word = |at: usize| i64::from_le_bytes(bytes[at..at + 8].try_into().expect("a word"));
    std::arch::x86_64::_mm_set_epi64x(word(8), word(0))
}

/// A bit for each byte of `lane` that may be in a field's name (`a`–`z`, `_`). Bytes
/// from 0x80 are negative as signed bytes, so the signed comparisons leave them out.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[target_feature(enable = "sse2")]
fn name_mask(bytes: &[u8; 16]) -> u32 {
    use std::arch::x86_64::{
        _mm_and_si128, _mm_cmpeq_epi8, _mm_cmpgt_epi8, _mm_movemask_epi8, _mm_or_si128,
        _mm_set1_epi8,
    };
    let v = lane(bytes);
    let from_a = _mm_cmpgt_epi8(v, _mm_set1_epi8(b'a' as i8 - 1));
    let to_z = _mm_cmpgt_epi8(_mm_set1_epi8(b'z' as i8 + 1), v);
    let underscore = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'_' as i8));
    let in_name = _mm_or_si128(_mm_and_si128(from_a, to_z), underscore);
    u32::from(_mm_movemask_epi8(in_name) as u16)
}

/// [`masks`] of a whole block, sixteen bytes compared at once.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[target_feature(enable = "sse2")]
fn block_masks(block: &[u8; BLOCK]) -> (u64, bool) {
    use std::arch::x86_64::{_mm_cmpeq_epi8, _mm_movemask_epi8, _mm_set1_epi8};
    let feed = _mm_set1_epi8(b'\n' as i8);
    let carriage_return = _mm_set1_epi8(b'\r' as i8);
    let (mut feeds, mut returns) = (0u64, 0);
    for (i, bytes) in block.chunks_exact(16).enumerate() {
        let v = lane(bytes);
        let bits = |of| _mm_movemask_epi8(_mm_cmpeq_epi8(v, of)) as u16;
        feeds |= u64::from(bits(feed)) << (16 * i);
        returns |= bits(carriage_return);
    }
    (feeds, returns != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every feed at every offset, in texts of every length around the block size, in
    /// both the vector and the byte-at-a-time readings, and every carriage return seen.
    #[test]
    fn finds_every_line_feed_and_carriage_return() {
        let mut seed = 7u32;
        for len in 0..300 {
            for density in [2u32, 9, 70] {
                let text: Vec<u8> = (0..len)
                    .map(|_| {
                        seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                        match (seed >> 16) % (density * 2) {
                            0 => b'\n',
                            1 if density > 2 => b'\r',
                            n => b'a' + (n % 26) as u8,
                        }
                    })
                    .collect();
                let want: Vec<usize> = memchr::memchr_iter(b'\n', &text).collect();
                let mut feeds = LineFeeds::new(&text);
                let got: Vec<usize> = feeds.by_ref().collect();
                assert_eq!(got, want, "length {len}");
                assert_eq!(feeds.saw_carriage_return(), text.contains(&b'\r'), "{len}");
                for block in text.chunks_exact(BLOCK) {
                    assert_eq!(masks(block), bytewise(block), "{block:?}");
                }
            }
        }
    }

    /// The name's length, for every byte value at every place of a 16-byte lane and
    /// past it, against the plain reading.
    #[test]
    fn a_names_length_is_its_run_of_lowercase_letters_and_underscores() {
        let plain = |b: &[u8]| {
            b.iter()
                .take_while(|&&c| c.is_ascii_lowercase() || c == b'_')
                .count()
        };
        for len in 0..40 {
            for at in 0..len {
                for byte in 0..=255u8 {
                    let mut text = vec![b'n'; len];
                    text[at] = byte;
                    assert_eq!(name_len(&text), plain(&text), "{byte:#x} at {at} of {len}");
                }
            }
        }
    }
}
