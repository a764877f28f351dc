//! Fuzzes the markdown format two ways:
//! - any text as a value: parse(write(v)) == v, with the hash intact and exactly one entry;
//! - any bytes as a whole memory file: the parser never panics, and every entry it
//!   reports lies inside the file.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mem7::core::chain::{ChainHash, ChainKey};
use mem7::core::time::{TxTime, ValidTime};
use mem7::format::{EntryDraft, parse_file, render_entry};

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else { return };
    let text = String::from_utf8_lossy(rest);
    if mode % 2 == 0 {
        let draft = EntryDraft {
            key: "fuzz:key",
            op: "store",
            valid_from: Some(ValidTime::from_micros(0)),
            valid_to: None,
            recorded: TxTime::from_micros(0),
            agent: "fuzz",
            tags: &[],
            secret_allowed: false,
            accepts: &[],
            value: Some(&text),
        };
        let (entry, hash) = render_entry(&draft, ChainHash::GENESIS, &ChainKey::Plain);
        let file = format!("{entry}\n{entry}");
        let parsed = parse_file(&file, &ChainKey::Plain);
        assert!(parsed.problems.is_empty(), "{:?}", parsed.problems);
        assert_eq!(parsed.entries.len(), 2);
        for e in &parsed.entries {
            assert_eq!(e.value.as_deref(), Some(&*text));
            assert_eq!(e.computed, hash);
        }
    } else {
        let parsed = parse_file(&text, &ChainKey::Plain);
        for e in &parsed.entries {
            assert!(e.start < e.end && e.end <= text.len());
        }
    }
});
