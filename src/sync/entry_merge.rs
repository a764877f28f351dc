//! Merging two versions of a memory file entry by entry, for git.
//!
//! Git's built-in `union` merge works line by line and refines conflicts on lines the two
//! sides share, so two entries appended on two branches come out interleaved (their
//! common `op: store`, fence and `---` lines emitted once). `mem7 setup-git` registers
//! `mem7 merge-file` as the repository's `union` driver: it keeps our file as it is and
//! appends every entry of theirs that neither we nor the merge base have, byte for byte,
//! and every run of text outside entries (a person's note) that only theirs has, in
//! their order: nothing either side wrote is lost.

use std::collections::{HashMap, HashSet};

use crate::core::chain::{ChainHash, ChainKey};
use crate::format::{ParsedEntry, parse_file};

/// The result of a merge.
#[derive(Debug, PartialEq, Eq)]
pub struct Merged {
    pub text: String,
    /// Both sides edited the same old entry differently (ours was kept).
    pub conflict: bool,
}

/// The paragraphs of text outside entries (runs of non-blank lines, each with its line
/// feed), with the offset each starts at.
pub(crate) fn outside_entries<'a>(text: &'a str, entries: &[ParsedEntry]) -> Vec<(usize, &'a str)> {
    let mut runs = Vec::new();
    let mut at = 0;
    let bounds = entries
        .iter()
        .map(|e| (e.start, e.end))
        .chain(std::iter::once((text.len(), text.len())));
    for (start, end) in bounds {
        let gap_start = at;
        let gap = &text[gap_start..start.max(at)];
        let mut run: Option<usize> = None;
        let mut line_start = 0;
        for line in gap.split_inclusive('\n') {
            let blank = line.trim().is_empty();
            match (blank, run) {
                (false, None) => run = Some(line_start),
                (true, Some(from)) => {
                    runs.push((gap_start + from, &gap[from..line_start]));
                    run = None;
                }
                _ => {}
            }
            line_start += line.len();
        }
        if let Some(from) = run {
            runs.push((gap_start + from, &gap[from..]));
        }
        at = end.max(at);
    }
    runs
}

fn identity(e: &ParsedEntry) -> ChainHash {
    e.fields
        .hash
        .as_deref()
        .and_then(|h| ChainHash::from_hex(h.trim()))
        .unwrap_or(e.computed)
}

/// Appends an entry's bytes to a memory file's text, after a blank line and followed by
/// one, as mem7 writes them.
pub(crate) fn append_entry(out: &mut String, bytes: &str) {
    if !out.is_empty() && !out.ends_with("\n\n") {
        out.push_str(if out.ends_with('\n') { "\n" } else { "\n\n" });
    }
    out.push_str(bytes);
    out.push_str(if out.ends_with('\n') { "\n" } else { "\n\n" });
}

/// Merges entry by entry: `ours`, with old entries that only `theirs` edited replaced
/// by their edit, then the entries only `theirs` added (in their order).
pub fn merge_entries(base: &str, ours: &str, theirs: &str) -> Merged {
    let key = ChainKey::Plain;
    let ours_parsed = parse_file(ours, &key);
    let base_parsed = parse_file(base, &key);
    let theirs_parsed = parse_file(theirs, &key);
    let known: HashSet<ChainHash> = ours_parsed
        .entries
        .iter()
        .chain(&base_parsed.entries)
        .map(|e| e.computed)
        .collect();
    let base_by_id: HashMap<ChainHash, ChainHash> = base_parsed
        .entries
        .iter()
        .map(|e| (identity(e), e.computed))
        .collect();
    let mut replace: HashMap<usize, &str> = HashMap::new();
    // What only theirs has, by its offset in theirs: entries and runs of other text.
    let mut added: Vec<(usize, &str)> = Vec::new();
    // Paragraphs outside entries are counted, so a note they wrote twice stays twice.
    let mut known_text: HashMap<&str, usize> = HashMap::new();
    for (side, parsed) in [(ours, &ours_parsed), (base, &base_parsed)] {
        let mut counts: HashMap<&str, usize> = HashMap::new();
        for (_, t) in outside_entries(side, &parsed.entries) {
            *counts.entry(t.trim_end()).or_default() += 1;
        }
        for (t, n) in counts {
            let k = known_text.entry(t).or_default();
            *k = (*k).max(n);
        }
    }
    for (at, t) in outside_entries(theirs, &theirs_parsed.entries) {
        match known_text.get_mut(t.trim_end()) {
            Some(n) if *n > 0 => *n -= 1,
            _ => added.push((at, t)),
        }
    }
    let mut conflict = false;
    for e in theirs_parsed
        .entries
        .iter()
        .filter(|e| !known.contains(&e.computed))
    {
        let bytes = &theirs[e.start..e.end];
        match base_by_id.get(&identity(e)) {
            // An old entry that they edited: take the edit if we left it as it was.
            Some(base_computed) => {
                let ours_copy = ours_parsed
                    .entries
                    .iter()
                    .position(|o| identity(o) == identity(e));
                match ours_copy {
                    Some(i) if ours_parsed.entries[i].computed == *base_computed => {
                        replace.insert(i, bytes);
                    }
                    _ => conflict = true,
                }
            }
            None => added.push((e.start, bytes)),
        }
    }
    added.sort_by_key(|&(at, _)| at);
    let mut out =
        String::with_capacity(ours.len() + added.iter().map(|(_, a)| a.len() + 2).sum::<usize>());
    let mut at = 0;
    for (i, e) in ours_parsed.entries.iter().enumerate() {
        if let Some(bytes) = replace.get(&i) {
            out.push_str(&ours[at..e.start]);
            out.push_str(bytes);
            at = e.end;
        }
    }
    out.push_str(&ours[at..]);
    for (_, bytes) in added {
        append_entry(&mut out, bytes);
    }
    Merged {
        text: out,
        conflict,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::time::{TxTime, ValidTime};
    use crate::format::{EntryDraft, render_entry};

    fn entry(key: &str, value: &str, prev: ChainHash, t: i64) -> (String, ChainHash) {
        let draft = EntryDraft {
            key,
            op: crate::core::EntryOp::Store,
            valid_from: Some(ValidTime::from_micros(t)),
            valid_to: None,
            recorded: TxTime::from_micros(t),
            agent: "t",
            tags: &[],
            tier: None,
            entry: None,
            secret_allowed: false,
            accepts: &[],
            value: Some(value),
        };
        let (text, h) = render_entry(&draft, prev, &ChainKey::Plain);
        (format!("{text}\n"), h)
    }

    #[test]
    fn both_sides_entries_survive_whole() {
        let (b0, h0) = entry("base", "b", ChainHash::GENESIS, 0);
        let (o1, _) = entry("a:only", "from A", h0, 1);
        let (t1, _) = entry("b:only", "from B", h0, 2);
        let base = b0.clone();
        let ours = format!("{b0}{o1}");
        let theirs = format!("{b0}{t1}");
        let merged = merge_entries(&base, &ours, &theirs);
        assert_eq!(merged.text, format!("{b0}{o1}{t1}"));
        assert!(!merged.conflict);
        let parsed = parse_file(&merged.text, &ChainKey::Plain);
        assert!(parsed.problems.is_empty());
        assert_eq!(parsed.entries.len(), 3);
        // Merging again changes nothing.
        assert_eq!(
            merge_entries(&base, &merged.text, &theirs).text,
            merged.text
        );
    }

    #[test]
    fn a_note_only_theirs_has_survives_in_its_place_among_their_entries() {
        let (b0, h0) = entry("base", "b", ChainHash::GENESIS, 0);
        let (o1, _) = entry("a:only", "from A", h0, 1);
        let (t1, h1) = entry("b:one", "from B", h0, 2);
        let (t2, _) = entry("b:two", "again B", h1, 3);
        let base = b0.clone();
        let ours = format!("{b0}{o1}");
        let note = "A note by hand: ask Ada before changing the deploy target.\n";
        let theirs = format!("{b0}{t1}\n{note}\n{t2}");
        let merged = merge_entries(&base, &ours, &theirs);
        assert_eq!(merged.text, format!("{b0}{o1}{t1}{note}\n{t2}"));
        let parsed = parse_file(&merged.text, &ChainKey::Plain);
        assert_eq!(parsed.entries.len(), 4);
        assert_eq!(
            parsed.problems.len(),
            1,
            "the note is still foreign text, and still there"
        );
        // A note both sides already have, or that the base had, is not repeated.
        let ours = format!("{b0}{note}\n{o1}");
        let merged = merge_entries(&base, &ours, &theirs);
        assert_eq!(merged.text.matches(note).count(), 1, "{}", merged.text);
        let merged = merge_entries(&format!("{b0}{note}"), &format!("{b0}{o1}"), &theirs);
        assert_eq!(
            merged.text.matches(note).count(),
            0,
            "ours removed the base's note: {}",
            merged.text
        );
        // Merging again changes nothing.
        let once = merge_entries(&base, &format!("{b0}{o1}"), &theirs).text;
        assert_eq!(merge_entries(&base, &once, &theirs).text, once);
    }

    #[test]
    fn an_edit_on_one_side_replaces_the_entry_in_place() {
        let (b0, h0) = entry("base", "b", ChainHash::GENESIS, 0);
        let (b1, _) = entry("next", "n", h0, 1);
        let base = format!("{b0}{b1}");
        let edited = b0.replace("> b", "> b, corrected");
        let theirs = format!("{edited}{b1}");
        let (o2, _) = entry("ours", "o", h0, 2);
        let ours = format!("{b0}{b1}{o2}");
        let merged = merge_entries(&base, &ours, &theirs);
        assert_eq!(merged.text, format!("{edited}{b1}{o2}"));
        assert!(!merged.conflict);
        // Both sides edit the same entry: ours is kept and the conflict is reported.
        let ours = format!("{}{b1}", b0.replace("> b", "> b, ours"));
        let merged = merge_entries(&base, &ours, &theirs);
        assert_eq!(merged.text, ours);
        assert!(merged.conflict);
    }

    mod prop {
        use super::*;
        use proptest::prelude::*;

        /// One item a side appends: an entry (by its number) or a note by hand.
        #[derive(Clone, Debug)]
        enum Item {
            Entry(u8),
            Note(u8),
        }

        fn item() -> impl Strategy<Value = Item> {
            prop_oneof![
                4 => any::<u8>().prop_map(Item::Entry),
                1 => any::<u8>().prop_map(Item::Note),
            ]
        }

        /// A file: the shared base, then `items` appended, each entry chained to the one
        /// before it, as a side writes them.
        fn side(base: &str, base_head: ChainHash, tag: &str, items: &[Item]) -> String {
            let mut text = base.to_string();
            let mut prev = base_head;
            for (i, it) in items.iter().enumerate() {
                match it {
                    Item::Entry(n) => {
                        let (e, h) = entry(
                            &format!("{tag}:k{n}"),
                            &format!("{tag} {i}"),
                            prev,
                            10 + i as i64,
                        );
                        text.push_str(&e);
                        prev = h;
                    }
                    Item::Note(n) => text.push_str(&format!("{tag} note {n} at {i}\n\n")),
                }
            }
            text
        }

        fn pieces(text: &str) -> (Vec<ChainHash>, Vec<String>) {
            let parsed = parse_file(text, &ChainKey::Plain);
            let notes = outside_entries(text, &parsed.entries)
                .into_iter()
                .map(|(_, t)| t.trim_end().to_string())
                .collect();
            (parsed.entries.iter().map(|e| e.computed).collect(), notes)
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(64))]
            /// Whichever side merges, every entry and every note either side wrote is in
            /// the result exactly once, each side's in its own order, and merging again
            /// changes nothing.
            #[test]
            fn nothing_either_side_wrote_is_lost_or_doubled(
                ours_items in proptest::collection::vec(item(), 0..8),
                theirs_items in proptest::collection::vec(item(), 0..8),
            ) {
                let (b0, h0) = entry("base", "b", ChainHash::GENESIS, 0);
                let base = format!("{b0}shared note\nof two lines\n\n");
                let ours = side(&base, h0, "a", &ours_items);
                let theirs = side(&base, h0, "b", &theirs_items);
                for (x, y) in [(&ours, &theirs), (&theirs, &ours)] {
                    let merged = merge_entries(&base, x, y);
                    prop_assert!(!merged.conflict);
                    let (entries, notes) = pieces(&merged.text);
                    let (xe, xn) = pieces(x);
                    let (ye, yn) = pieces(y);
                    let mut want_e: Vec<ChainHash> = xe.clone();
                    want_e.extend(ye.iter().filter(|h| !xe.contains(h)));
                    prop_assert_eq!(&entries, &want_e);
                    let mut want_n: Vec<String> = xn.clone();
                    want_n.extend(yn.iter().filter(|n| !xn.contains(n)).cloned());
                    prop_assert_eq!(&notes, &want_n);
                    prop_assert_eq!(merge_entries(&base, &merged.text, y).text, merged.text);
                }
            }
        }
    }
}
