//! Merging two versions of a memory file entry by entry, for git.
//!
//! Git's built-in `union` merge works line by line and refines conflicts on lines the two
//! sides share, so two entries appended on two branches come out interleaved (their
//! common `op: store`, fence and `---` lines emitted once). `mem7 setup-git` registers
//! `mem7 merge-file` as the repository's `union` driver: it keeps our file as it is and
//! appends every entry of theirs that neither we nor the merge base have, byte for byte.

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

fn identity(e: &ParsedEntry) -> ChainHash {
    e.fields
        .hash
        .as_deref()
        .and_then(|h| ChainHash::from_hex(h.trim()))
        .unwrap_or(e.computed)
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
    let mut added: Vec<&str> = Vec::new();
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
            None => added.push(bytes),
        }
    }
    let mut out =
        String::with_capacity(ours.len() + added.iter().map(|a| a.len() + 1).sum::<usize>());
    let mut at = 0;
    for (i, e) in ours_parsed.entries.iter().enumerate() {
        if let Some(bytes) = replace.get(&i) {
            out.push_str(&ours[at..e.start]);
            out.push_str(bytes);
            at = e.end;
        }
    }
    out.push_str(&ours[at..]);
    for bytes in added {
        if !out.is_empty() && !out.ends_with("\n\n") {
            out.push_str(if out.ends_with('\n') { "\n" } else { "\n\n" });
        }
        out.push_str(bytes);
        // Entries are followed by a blank line, as mem7 writes them.
        out.push_str(if out.ends_with('\n') { "\n" } else { "\n\n" });
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
            op: "store",
            valid_from: Some(ValidTime::from_micros(t)),
            valid_to: None,
            recorded: TxTime::from_micros(t),
            agent: "t",
            tags: &[],
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
}
