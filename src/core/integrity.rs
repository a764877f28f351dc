//! Checking the hash chain: given every entry's claimed links and computed hash, in chain
//! order, say what is wrong and where. Pure: the caller reads and parses the files.
//!
//! Each entry has an *effective* hash: the `hash` it claims, or (unsealed and legacy
//! entries) the hash computed over its bytes. An entry links to the previous one through
//! its `prev`. The checker tells apart an edit (claimed ≠ computed), a missing entry (a
//! `prev` found nowhere), a reordering (a `prev` that points forward, reported once at
//! the entry that moved ahead of its predecessor), a hand-inserted entry (no `hash`), and a
//! merge (two entries continuing from the same one, as after `git merge` of two appending
//! branches), which is reported as a merge, never as tampering.

use std::collections::{HashMap, HashSet};

use super::chain::{ChainHash, ChainHashState};

/// What the checker needs of an entry: its link. Verify checks its records in place.
pub trait Link {
    fn link(&self) -> &ChainEntry;
}

impl Link for ChainEntry {
    fn link(&self) -> &ChainEntry {
        self
    }
}

/// The chain in order, as the runs it was read in (one per file): checked where the
/// readers left it, never copied into one vector.
pub struct Chain<'a, T = ChainEntry> {
    runs: Vec<&'a [T]>,
    /// The chain index of each run's first entry.
    starts: Vec<usize>,
    len: usize,
}

impl<'a, T: Link> Chain<'a, T> {
    pub fn new(runs: impl IntoIterator<Item = &'a [T]>) -> Chain<'a, T> {
        let (mut kept, mut starts, mut len) = (Vec::new(), Vec::new(), 0);
        for run in runs.into_iter().filter(|r| !r.is_empty()) {
            kept.push(run);
            starts.push(len);
            len += run.len();
        }
        Chain {
            runs: kept,
            starts,
            len,
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Every item, in chain order.
    pub fn items(&self) -> impl Iterator<Item = &'a T> + '_ {
        self.runs.iter().flat_map(|r| r.iter())
    }

    /// Every entry's link, in chain order.
    pub fn iter(&self) -> impl Iterator<Item = &'a ChainEntry> + '_ {
        self.items().map(Link::link)
    }

    /// The item at chain index `i` (panics past the end, like a slice).
    pub fn item(&self, i: usize) -> &'a T {
        let run = self.starts.partition_point(|&s| s <= i) - 1;
        &self.runs[run][i - self.starts[run]]
    }

    /// The link at chain index `i`.
    pub fn get(&self, i: usize) -> &'a ChainEntry {
        self.item(i).link()
    }

    pub fn last(&self) -> Option<&'a T> {
        self.runs.last().and_then(|r| r.last())
    }
}

/// The first index of each effective hash.
fn positions<T: Link>(entries: &Chain<'_, T>) -> HashMap<ChainHash, usize, ChainHashState> {
    let mut position = HashMap::with_capacity_and_hasher(entries.len(), ChainHashState::default());
    for (i, e) in entries.iter().enumerate() {
        position.entry(e.effective()).or_insert(i);
    }
    position
}

/// The links the checked (sealed, non-legacy) entries before `end` continue from.
fn continued_before<T: Link>(
    entries: &Chain<'_, T>,
    end: usize,
) -> HashSet<ChainHash, ChainHashState> {
    let mut continued = HashSet::with_capacity_and_hasher(entries.len(), ChainHashState::default());
    for e in entries.iter().take(end) {
        if e.sealed() {
            continued.insert(e.prev.unwrap_or(ChainHash::GENESIS));
        }
    }
    continued
}

/// One entry as the checker sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChainEntry {
    /// Index of the file in chain order (0 for the first file).
    pub file: usize,
    /// Whether this is the first entry of its file.
    pub first_in_file: bool,
    pub line: u32,
    /// The `prev` field (`None` when absent).
    pub prev: Option<ChainHash>,
    /// The `hash` field (`None` for unsealed and legacy entries).
    pub claimed: Option<ChainHash>,
    /// The hash of the entry's bytes as they are now.
    pub computed: ChainHash,
    /// Written by the Go mem7 (never sealed).
    pub legacy: bool,
    /// A `seal` entry (its acceptances are passed separately).
    pub seal: bool,
}

impl ChainEntry {
    /// The hash the next entry is expected to link to.
    pub fn effective(&self) -> ChainHash {
        self.claimed.unwrap_or(self.computed)
    }

    /// Sealed by mem7: it records its hash, and is not a Go mem7 entry.
    pub fn sealed(&self) -> bool {
        self.claimed.is_some() && !self.legacy
    }
}

/// A run of entries (one file) as [`clean`] sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Run {
    Empty,
    /// Every entry sealed, its bytes as sealed, and linked to the one before it: the
    /// first entry's link and the last entry's hash.
    Intact {
        first_prev: ChainHash,
        last: ChainHash,
    },
    /// Anything else.
    Other,
}

impl Run {
    pub fn of<T: Link>(run: &[T]) -> Run {
        let mut ends: Option<(ChainHash, ChainHash)> = None;
        for e in run.iter().map(Link::link) {
            let prev = e.prev.unwrap_or(ChainHash::GENESIS);
            let linked = ends.is_none_or(|(_, before)| before == prev);
            if !(e.sealed() && e.claimed == Some(e.computed) && linked) {
                return Run::Other;
            }
            ends = Some((ends.map_or(prev, |(first, _)| first), e.effective()));
        }
        match ends {
            None => Run::Empty,
            Some((first_prev, last)) => Run::Intact { first_prev, last },
        }
    }
}

/// Whether runs in chain order are all intact and continue one another from genesis:
/// then [`check`] has nothing to report, and a caller that summed up its runs in
/// parallel can skip the serial walk.
pub fn clean(runs: impl IntoIterator<Item = Run>) -> bool {
    let mut expected = ChainHash::GENESIS;
    runs.into_iter().all(|run| match run {
        Run::Empty => true,
        Run::Intact { first_prev, last } if first_prev == expected => {
            expected = last;
            true
        }
        _ => false,
    })
}

/// What is wrong with an entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// Its bytes changed after it was sealed (claimed hash ≠ computed hash).
    Changed,
    /// Its `prev` names an entry that exists nowhere: the entry before it was removed.
    Removed,
    /// The first entry of a file links to an entry that exists nowhere: an earlier file
    /// (or the end of one) was removed.
    FileRemoved,
    /// Its `prev` points to an entry later in the chain, or back past other entries.
    Reordered,
    /// It has no `hash`: appended or inserted by hand and not sealed.
    Unsealed,
    /// Written by the Go mem7, which had no chain (a warning).
    Legacy,
    /// It continues from an entry another entry already continues from: two writers
    /// appended in parallel and git merged them (a warning).
    Merge,
}

impl Kind {
    /// Whether this finding breaks verification (else it is a warning).
    pub fn is_break(self) -> bool {
        !matches!(self, Kind::Legacy | Kind::Merge)
    }

    /// A stable name for JSON and tests.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Changed => "changed",
            Kind::Removed => "removed",
            Kind::FileRemoved => "file-removed",
            Kind::Reordered => "reordered",
            Kind::Unsealed => "unsealed",
            Kind::Legacy => "legacy",
            Kind::Merge => "merge",
        }
    }
}

/// One finding, located by the entry's position in `entries`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    pub entry: usize,
    pub kind: Kind,
    pub detail: String,
    /// The other entry the finding is about (the one a `reordered` entry links to, the
    /// one a `merge` continues from), by its position in `entries`: only the caller knows
    /// its file's name, so [`Finding::message`] asks for it.
    pub other: Option<usize>,
}

impl Finding {
    /// What is wrong, for a person: `at` names where an entry is (`memory/2026-04-12.md:14`).
    pub fn message(&self, at: impl FnOnce(usize) -> String) -> String {
        match self.other {
            Some(j) => self.detail.replacen(OTHER, &at(j), 1),
            None => self.detail.clone(),
        }
    }
}

/// Where a detail names the other entry; [`Finding::message`] fills it in.
const OTHER: &str = "{other}";

fn short(h: ChainHash) -> String {
    h.to_hex()[..12].to_string()
}

/// Checks the chain. `accepted` holds computed hashes that a valid `seal` entry
/// accepted as they are: findings about those entries (other than being legacy) are not
/// reported.
pub fn check<T: Link>(entries: &Chain<'_, T>, accepted: &HashSet<ChainHash>) -> Vec<Finding> {
    // Where each effective hash first appears, and which links earlier entries already
    // continued: only an unusual link asks, so both are built when one first does (a
    // clean chain is checked with comparisons alone).
    let mut position: Option<HashMap<ChainHash, usize, ChainHashState>> = None;
    let mut continued: Option<HashSet<ChainHash, ChainHashState>> = None;
    let mut findings = Vec::new();
    // The effective hash of the last sealed entry, and of the entry just before.
    let mut last_sealed: Option<ChainHash> = None;
    let mut previous: Option<ChainHash> = None;
    // The previous entry's computed hash: when only its `hash:` line was edited, the next
    // entry still links to its bytes, and the edit is reported once, as a change.
    let mut previous_computed: Option<ChainHash> = None;
    for (i, e) in entries.iter().enumerate() {
        let ok = !accepted.is_empty() && accepted.contains(&e.computed);
        let mut report = |kind: Kind, detail: String, other: Option<usize>| {
            if !ok || kind == Kind::Legacy {
                findings.push(Finding {
                    entry: i,
                    kind,
                    detail,
                    other,
                });
            }
        };
        if e.legacy {
            report(
                Kind::Legacy,
                "written by the Go mem7, which did not chain entries".into(),
                None,
            );
        } else if e.claimed.is_none() {
            report(
                Kind::Unsealed,
                format!(
                    "no hash: added by hand and not sealed (its bytes hash to {})",
                    short(e.computed)
                ),
                None,
            );
        } else {
            if let Some(claimed) = e.claimed.filter(|c| *c != e.computed) {
                report(
                    Kind::Changed,
                    format!(
                        "changed after sealing: recorded hash {}, bytes now hash to {}",
                        short(claimed),
                        short(e.computed)
                    ),
                    None,
                );
            }
            let prev = e.prev.unwrap_or(ChainHash::GENESIS);
            // Linking to the entry before (or the last sealed one, past hand-inserted
            // entries) is the normal case; linking back to an earlier entry that nobody
            // continued yet is what the rest of a reordering looks like, and is reported
            // once, at the entry that moved ahead of its predecessor.
            let usual = Some(prev) == previous
                || Some(prev) == previous_computed
                || Some(prev) == last_sealed
                || (previous.is_none() && prev == ChainHash::GENESIS);
            if !usual {
                let position = position.get_or_insert_with(|| positions(entries));
                let continued = continued.get_or_insert_with(|| continued_before(entries, i));
                let links_back =
                    position.get(&prev).is_some_and(|&j| j < i) && !continued.contains(&prev);
                // Linking back to an earlier entry nobody continued yet is the rest of a
                // reordering (reported where it began).
                if !links_back {
                    match position.get(&prev) {
                        _ if prev == ChainHash::GENESIS => report(
                            Kind::Merge,
                            "starts a chain of its own (a workspace merged with another one)"
                                .into(),
                            None,
                        ),
                        Some(&j) if j > i => report(
                            Kind::Reordered,
                            format!("links to an entry that comes after it, at {OTHER}"),
                            Some(j),
                        ),
                        Some(&j) if continued.contains(&prev) => report(
                            Kind::Merge,
                            format!(
                                "continues from the entry at {OTHER}, as another entry before it does: two branches appended in parallel and were merged"
                            ),
                            Some(j),
                        ),
                        Some(_) => {}
                        None if e.first_in_file && e.file > 0 => report(
                            Kind::FileRemoved,
                            format!(
                                "links to {}, which is in no file: an earlier file (or its last entries) was removed",
                                short(prev)
                            ),
                            None,
                        ),
                        None => report(
                            Kind::Removed,
                            format!(
                                "links to {}, which is in no file: the entry before it was removed",
                                short(prev)
                            ),
                            None,
                        ),
                    }
                }
            }
            if let Some(continued) = continued.as_mut() {
                continued.insert(prev);
            }
        }
        if e.sealed() {
            last_sealed = Some(e.effective());
        }
        previous = Some(e.effective());
        previous_computed = Some(e.computed);
    }
    findings
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::chain::ChainKey;

    /// A well-formed chain of `n` entries in one file.
    fn chain(n: usize) -> Vec<ChainEntry> {
        let mut prev = ChainHash::GENESIS;
        (0..n)
            .map(|i| {
                let h = ChainKey::Plain.hash(prev, format!("entry {i}").as_bytes());
                let e = ChainEntry {
                    file: 0,
                    first_in_file: i == 0,
                    line: (i * 10 + 1) as u32,
                    prev: Some(prev),
                    claimed: Some(h),
                    computed: h,
                    legacy: false,
                    seal: false,
                };
                prev = h;
                e
            })
            .collect()
    }

    fn kinds(entries: &[ChainEntry]) -> Vec<(usize, Kind)> {
        check(&Chain::new([entries]), &HashSet::new())
            .into_iter()
            .map(|f| (f.entry, f.kind))
            .collect()
    }

    #[test]
    fn a_clean_chain_has_no_findings() {
        assert!(kinds(&chain(5)).is_empty());
    }

    #[test]
    fn each_kind_of_damage_is_named() {
        let mut c = chain(5);
        c[2].computed = ChainHash([9; 32]);
        assert_eq!(kinds(&c), [(2, Kind::Changed)]);

        let mut c = chain(5);
        c.remove(2);
        assert_eq!(kinds(&c), [(2, Kind::Removed)]);

        let mut c = chain(5);
        c.swap(2, 3);
        assert_eq!(kinds(&c), [(2, Kind::Reordered)]);

        let mut c = chain(5);
        let mut hand = c[1].clone();
        hand.claimed = None;
        hand.computed = ChainHash([7; 32]);
        c.insert(2, hand);
        assert_eq!(kinds(&c), [(2, Kind::Unsealed)]);

        let mut c = chain(6);
        for e in c.iter_mut().skip(3) {
            e.file = 1;
        }
        c[3].first_in_file = true;
        c.remove(2);
        c.remove(1);
        let c: Vec<_> = c
            .into_iter()
            .enumerate()
            .map(|(i, mut e)| {
                e.file = if i == 0 { 0 } else { 1 };
                e
            })
            .collect();
        assert_eq!(kinds(&c), [(1, Kind::FileRemoved)]);
    }

    #[test]
    fn a_merge_is_a_merge() {
        // Base b0 b1; ours appends o2 o3 from b1; theirs appends t2 from b1.
        let base = chain(2);
        let fork = |n: &str, prev: ChainHash| {
            let h = ChainKey::Plain.hash(prev, n.as_bytes());
            ChainEntry {
                prev: Some(prev),
                claimed: Some(h),
                computed: h,
                ..base[0].clone()
            }
        };
        let o2 = fork("o2", base[1].effective());
        let o3 = fork("o3", o2.effective());
        let t2 = fork("t2", base[1].effective());
        let merged = [base[0].clone(), base[1].clone(), o2, o3, t2];
        let found = check(&Chain::new([&merged[..2], &merged[2..]]), &HashSet::new());
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].kind, Kind::Merge);
        assert!(!found[0].kind.is_break());
    }

    #[test]
    fn clean_runs_are_those_the_checker_finds_nothing_in() {
        let c = chain(6);
        let runs = |c: &[ChainEntry]| [Run::of(&c[..2]), Run::of(&c[2..2]), Run::of(&c[2..])];
        assert!(clean(runs(&c)));
        assert!(check(&Chain::new([&c[..2], &c[2..]]), &HashSet::new()).is_empty());
        // Changed, unsealed, legacy, a broken link inside a run or between runs, and a
        // chain not starting at genesis: not clean, and the checker finds something.
        let mut damaged = Vec::new();
        let mut changed = c.clone();
        changed[3].computed = ChainHash([9; 32]);
        damaged.push(changed);
        let mut unsealed = c.clone();
        unsealed[4].claimed = None;
        damaged.push(unsealed);
        let mut legacy = c.clone();
        legacy[1].legacy = true;
        damaged.push(legacy);
        damaged.push([&c[..3], &c[4..]].concat());
        damaged.push([&c[..2], &c[3..]].concat());
        damaged.push(c[1..].to_vec());
        for d in &damaged {
            assert!(!clean(runs(d)), "{d:?}");
            assert!(!check(&Chain::new([&d[..2], &d[2..]]), &HashSet::new()).is_empty());
        }
    }

    #[test]
    fn sealed_acceptance_silences_findings() {
        let mut c = chain(3);
        c[1].computed = ChainHash([9; 32]);
        let accepted: HashSet<_> = [ChainHash([9; 32])].into_iter().collect();
        assert!(check(&Chain::new([c.as_slice()]), &accepted).is_empty());
    }
}
