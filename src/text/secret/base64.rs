//! Base64 runs, decoded and scanned again (twice deep at most).

use super::*;

/// Decodes each long base64 run (both alphabets, each alignment) and scans its printable
/// parts; a finding is reported at the start of the run.
pub(super) fn find_in_base64(text: &str, depth: u8) -> Option<(&'static str, usize)> {
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if base64_value(b[i]).is_none() {
            i += 1;
            continue;
        }
        let start = i;
        while i < b.len() && base64_value(b[i]).is_some() {
            i += 1;
        }
        let run = &b[start..i];
        // Base64 of text always mixes upper and lower case; hex digests, UUIDs and
        // identifiers (`user_preferences_v2`) do not, and are not decoded.
        if run.len() < MIN_BASE64_RUN
            || !run.iter().any(u8::is_ascii_uppercase)
            || !run.iter().any(u8::is_ascii_lowercase)
        {
            continue;
        }
        // A run is decoded from its start; other alignments matter only where it may
        // have glued onto a path or another token (`secrets/Z2hw…`), so only when it
        // holds one of the symbols.
        let shifts = if run.iter().any(|&c| BASE64[usize::from(c)] >= 62) {
            4
        } else {
            1
        };
        for shift in 0..shifts {
            let decoded = decode_base64(&text[start + shift..i]);
            for part in printable_parts(&decoded) {
                if let Some((kind, _)) = scan(part, depth + 1) {
                    return Some((kind, start));
                }
            }
        }
    }
    None
}

/// The 6-bit value of a base64 digit (both alphabets), or `NOT_BASE64`.
pub(super) const BASE64: [u8; 256] = {
    let mut table = [NOT_BASE64; 256];
    let mut i = 0;
    while i < 26 {
        table[b'A' as usize + i] = i as u8;
        table[b'a' as usize + i] = 26 + i as u8;
        if i < 10 {
            table[b'0' as usize + i] = 52 + i as u8;
        }
        i += 1;
    }
    table[b'+' as usize] = 62;
    table[b'-' as usize] = 62;
    table[b'/' as usize] = 63;
    table[b'_' as usize] = 63;
    table
};

pub(super) const NOT_BASE64: u8 = 0xFF;

pub(super) fn base64_value(b: u8) -> Option<u8> {
    let v = BASE64[usize::from(b)];
    (v != NOT_BASE64).then_some(v)
}

/// Decodes base64 (standard or URL-safe, padding optional); stops at the first byte
/// outside the alphabet.
pub(super) fn decode_base64(s: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len() / 4 * 3 + 2);
    let mut acc: u32 = 0;
    let mut bits = 0;
    for b in s.bytes() {
        let Some(v) = base64_value(b) else {
            break;
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            // Truncation keeps the 8 bits just completed.
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    out
}

/// Runs of printable ASCII (and tabs and line breaks) long enough to hold a credential.
pub(super) fn printable_parts(bytes: &[u8]) -> impl Iterator<Item = &str> {
    bytes
        .split(|&b| !(b == b'\t' || b == b'\n' || b == b'\r' || (0x20..0x7f).contains(&b)))
        .filter(|part| part.len() >= 10)
        .filter_map(|part| std::str::from_utf8(part).ok())
}
