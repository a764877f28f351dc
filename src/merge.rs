//! Merging two versions of a memory file entry by entry, for git.
//!
//! Git's built-in `union` merge works line by line and refines conflicts on lines the two
//! sides share, so two entries appended on two branches come out interleaved (their
//! common `op: store`, fence and `---` lines emitted once). `mem7 setup-git` registers
//! `mem7 merge-file` as the repository's `union` driver: it keeps our file as it is and
//! appends every entry of theirs that neither we nor the merge base have, byte for byte.

use std::collections::HashSet;

use crate::core::chain::{ChainHash, ChainKey};
use crate::format::parse_file;

/// The merged text: `ours`, then the entries only `theirs` added (in their order).
pub fn merge_entries(base: &str, ours: &str, theirs: &str) -> String {
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
    let mut out = ours.to_string();
    for e in theirs_parsed
        .entries
        .iter()
        .filter(|e| !known.contains(&e.computed))
    {
        if !out.is_empty() && !out.ends_with("\n\n") {
            out.push_str(if out.ends_with('\n') { "\n" } else { "\n\n" });
        }
        out.push_str(&theirs[e.start..e.end]);
        // Entries are followed by a blank line, as mem7 writes them.
        out.push_str(if out.ends_with('\n') { "\n" } else { "\n\n" });
    }
    out
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
        assert_eq!(merged, format!("{b0}{o1}{t1}"));
        let parsed = parse_file(&merged, &ChainKey::Plain);
        assert!(parsed.problems.is_empty());
        assert_eq!(parsed.entries.len(), 3);
        // Merging again changes nothing.
        assert_eq!(merge_entries(&base, &merged, &theirs), merged);
    }
}
