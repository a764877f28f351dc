//! The bodies of the fuzz targets (`fuzz/`, run by `just fuzz`), kept in the library so
//! that every `cargo test` compiles them and `tests/it/properties.rs` runs them on random
//! input: a target that stops building, or whose rule stops holding, fails CI instead of
//! the next person who fuzzes. Each takes arbitrary bytes and panics only when a rule is
//! broken.

use std::collections::HashSet;

use crate::core::chain::{ChainHash, ChainKey};
use crate::core::time::{TxTime, ValidTime};
use crate::core::{Op, ValidEnd};
use crate::format::{EntryDraft, parse_file, render_entry};

/// The markdown round trip, two ways: any text as a value comes back as it went in,
/// with the hash intact (`parse(write(v)) == v`); and any bytes as a whole memory file
/// parse without a panic, every entry found lying inside the file.
pub fn round_trip(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(rest);
    if mode.is_multiple_of(2) {
        let draft = draft("fuzz:key", &text, &[]);
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
}

/// The merge driver (`mem7 merge-file`), two ways. On any three texts it neither panics
/// nor depends on anything but its input. On three files made of real entries (each
/// byte picks an entry of a pool and the sides that hold it), no entry is lost: every
/// entry either side added to the base is in the merge, and nothing conflicts.
pub fn merge_driver(data: &[u8]) {
    use crate::sync::entry_merge::merge_entries;
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    if mode.is_multiple_of(2) {
        let text = String::from_utf8_lossy(rest);
        let mut parts = text.splitn(3, '\u{1}');
        let (base, ours, theirs) = (
            parts.next().unwrap_or(""),
            parts.next().unwrap_or(""),
            parts.next().unwrap_or(""),
        );
        let once = merge_entries(base, ours, theirs);
        let again = merge_entries(base, ours, theirs);
        assert_eq!(once.text, again.text);
        assert_eq!(once.conflict, again.conflict);
        return;
    }
    const POOL: usize = 8;
    let pool: Vec<String> = (0..POOL)
        .map(|i| {
            let value = format!("value {i}");
            render_entry(
                &draft("fuzz:key", &value, &[]),
                ChainHash::GENESIS,
                &ChainKey::Plain,
            )
            .0
        })
        .collect();
    let (mut base, mut ours, mut theirs) = (String::new(), String::new(), String::new());
    for &b in rest {
        let entry = &pool[usize::from(b) % POOL];
        let sides = b / POOL as u8;
        let in_base = sides.is_multiple_of(4);
        // An entry in the base is in both sides (an append-only history keeps it).
        for (side, holds) in [
            (&mut base, in_base),
            (&mut ours, in_base || sides & 1 == 1),
            (&mut theirs, in_base || sides & 2 == 2),
        ] {
            if holds {
                crate::sync::entry_merge::append_entry(side, entry);
            }
        }
    }
    let merged = merge_entries(&base, &ours, &theirs);
    assert!(
        !merged.conflict,
        "no entry was edited, so nothing conflicts"
    );
    let hashes = |text: &str| -> HashSet<ChainHash> {
        parse_file(text, &ChainKey::Plain)
            .entries
            .iter()
            .map(|e| e.computed)
            .collect()
    };
    let kept = hashes(&merged.text);
    for side in [&ours, &theirs] {
        for h in hashes(side) {
            assert!(kept.contains(&h), "an entry of one side was lost");
        }
    }
}

/// One line of `mem7 import`: any bytes parse to a record or to an error, never a
/// panic; and a store record that import accepts (it validates, credential check
/// included) renders to an entry that reads back as the same store.
pub fn import_line(data: &[u8]) {
    let line = String::from_utf8_lossy(data);
    let agent = |named: Option<&str>| named.unwrap_or("fuzz").to_string();
    let Ok(Some(record)) = crate::transfer::import::record(&line, 1, &agent, false) else {
        return;
    };
    let config = crate::config::Config::default();
    if record.op != crate::engine::ImportOp::Store
        || crate::engine::validate_record(&record, &config).is_err()
    {
        return;
    }
    let req = &record.req;
    let recorded = record.recorded.unwrap_or(TxTime::from_micros(0));
    let from = req.valid_from.unwrap_or(ValidTime::from_micros(0));
    if matches!(req.valid_to, Some(ValidEnd::At(to)) if to <= from) {
        // Without a start of its own the record starts at the writer's clock; at the
        // epoch chosen here its end would come first.
        return;
    }
    let entry = EntryDraft {
        valid_from: Some(from),
        valid_to: req.valid_to,
        recorded,
        agent: &req.agent,
        tier: req.tier,
        ..draft(&req.key, &req.value, &req.tags)
    };
    let (text, _) = render_entry(&entry, ChainHash::GENESIS, &ChainKey::Plain);
    let parsed = parse_file(&text, &ChainKey::Plain);
    assert!(parsed.problems.is_empty(), "{:?}", parsed.problems);
    assert_eq!(parsed.entries.len(), 1);
    let event = parsed.entries[0]
        .to_event("fuzz.md")
        .expect("an accepted record reads back")
        .expect("a store is an event");
    let Op::Store(s) = event.op else {
        panic!("a store record reads back as {:?}", event.op);
    };
    assert_eq!(s.key, req.key);
    assert_eq!(s.value, req.value);
    assert_eq!(s.tags, req.tags);
    assert_eq!(s.agent, req.agent);
    assert_eq!(s.tier, req.tier);
    assert_eq!(s.valid_from, from);
    assert_eq!(s.valid_to, req.valid_to.unwrap_or(ValidEnd::Open));
    assert_eq!(event.tx, recorded);
}

/// A store entry of `key` = `value` at the epoch.
fn draft<'a>(key: &'a str, value: &'a str, tags: &'a [String]) -> EntryDraft<'a> {
    EntryDraft {
        key,
        op: crate::core::EntryOp::Store,
        valid_from: Some(ValidTime::from_micros(0)),
        valid_to: None,
        recorded: TxTime::from_micros(0),
        agent: "fuzz",
        tier: None,
        tags,
        entry: None,
        secret_allowed: false,
        accepts: &[],
        value: Some(value),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plain_record_reaches_the_read_back_and_shared_entries_reach_the_merge() {
        let line = r#"{"key":"deploy:target","value":"Render","tags":["ops"],"valid_from":"2026-01-01","valid_to":"infinity"}"#;
        let agent = |named: Option<&str>| named.unwrap_or("fuzz").to_string();
        let record = crate::transfer::import::record(line, 1, &agent, false)
            .unwrap()
            .unwrap();
        let config = crate::config::Config::default();
        assert!(crate::engine::validate_record(&record, &config).is_ok());
        import_line(line.as_bytes());
        // Odd mode: entries 1 and 2 in the base, 3 added by ours, 4 by theirs.
        merge_driver(&[1, 1, 2, 8 + 3, 16 + 4]);
    }
}
