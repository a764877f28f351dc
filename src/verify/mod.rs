//! `mem7 verify`: reads every memory file in chain order, recomputes every entry's hash,
//! and reports each problem at its file and line. Reads the markdown only, never the
//! index, so it checks the source of truth itself.

use std::collections::{HashMap, HashSet};

use crate::core::chain::{ChainHash, ChainKey};
use crate::core::integrity::{self, Chain, Kind};
use crate::error::{Error, Result};
use crate::format::{self, ProblemKind};
use crate::store::Workspace;

mod ahead;
mod kind;

pub use ahead::recorded_ahead;
use ahead::{ahead_at, ahead_in};
pub use kind::FindingKind;

/// One located finding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    pub file: String,
    pub line: u32,
    /// The entry's key (empty when the problem is not in an entry).
    pub key: String,
    /// What it is about; [`FindingKind::name`] is its stable name.
    pub kind: FindingKind,
    pub message: String,
    /// The hash of the entry's bytes as they are now, or the digest of a run of foreign
    /// text (what `seal` accepts).
    pub computed: Option<ChainHash>,
}

impl Finding {
    /// Whether this breaks verification (else it is a warning).
    pub fn is_break(&self) -> bool {
        self.kind.is_break()
    }
}

/// The result of verifying a workspace.
#[derive(Clone, Debug, Default)]
pub struct Report {
    pub findings: Vec<Finding>,
    /// The effective hash of the last entry (what the next entry links to).
    pub head: Option<ChainHash>,
    pub entries: usize,
    pub files: usize,
}

impl Report {
    /// Whether any finding breaks verification.
    pub fn is_broken(&self) -> bool {
        self.findings.iter().any(Finding::is_break)
    }
}

/// Verifies the workspace. With a keyed chain and no key, says so instead of reporting
/// every entry as changed.
pub fn verify(ws: &Workspace, key: &ChainKey, expect_head: Option<&str>) -> Result<Report> {
    // Writers wait while verify reads (they append in a few milliseconds; the one that
    // truncates a torn tail must not do so under a mapped file).
    let _shared = ws.lock_shared()?;
    verify_locked(ws, key, expect_head)
}

/// [`verify`], then [`recorded_ahead`]'s warnings after its findings, as `mem7 verify`
/// reports them, read in one pass over the files: each file is read once, and the fast
/// path notes its `recorded:` lines as it reads the chain (a file it leaves to the
/// general scanner is searched for them).
pub fn verify_and_ahead(
    ws: &Workspace,
    key: &ChainKey,
    expect_head: Option<&str>,
    now: crate::core::time::TxTime,
) -> Result<Report> {
    let _shared = ws.lock_shared()?;
    check(ws, key, expect_head, Some(now))
}

/// [`verify`] for a caller that already holds the writers' lock (`seal`).
pub(crate) fn verify_locked(
    ws: &Workspace,
    key: &ChainKey,
    expect_head: Option<&str>,
) -> Result<Report> {
    check(ws, key, expect_head, None)
}

/// The chain check, and with `now` the warnings about entries recorded ahead of it
/// (placed after the sorted findings, in file order).
fn check(
    ws: &Workspace,
    key: &ChainKey,
    expect_head: Option<&str>,
    now: Option<crate::core::time::TxTime>,
) -> Result<Report> {
    let (files, irregular) = ws.scan_all(true)?;
    let mut report = Report {
        files: files.len(),
        ..Report::default()
    };
    // Links and special files under memory/ hold no entries mem7 reads, and writes
    // refuse to go through them: each is named, so nothing hides behind one.
    report
        .findings
        .extend(irregular.iter().map(irregular_finding));
    // Parse every file (in parallel: verification is bound by hashing and scanning),
    // keeping each file's summary only. When the summaries show nothing for the checker
    // to find (each file intact, each continuing the one before, and the head as
    // expected), that is the answer; otherwise every file is read again and its records
    // kept for the serial walk that names each finding. So the usual verify holds no
    // record per entry (at 1M versions they were 100 MB, each page faulted in).
    let names: Vec<String> = files.iter().map(|f| f.name.clone()).collect();
    let keyed = matches!(key, ChainKey::Keyed(_));
    let head_of = |parsed: &Parsed| parsed.iter().rev().find_map(|(_, _, s)| s.last);
    let mut parsed = parse_all(ws, &names, key, now, false)?;
    let needs_records = !integrity::clean(parsed.iter().map(|(_, _, s)| s.run))
        || (keyed && parsed.iter().any(|(_, _, s)| s.unkeyed_sealed > 0))
        || expect_head.is_some_and(|e| ChainHash::from_hex(e.trim()) != head_of(&parsed));
    if needs_records {
        parsed = parse_all(ws, &names, key, now, true)?;
    }
    let head = head_of(&parsed);

    // The readers' records, in file order, as one chain (nothing copied; empty when
    // they were not kept).
    let chain = Chain::new(parsed.iter().map(|(_, file, _)| file.entries.as_slice()));
    // What intact seals accepted (entries by their computed hash, foreign text by its
    // digest). With a key, only keyed seals count.
    let accepted: HashSet<ChainHash> = parsed
        .iter()
        .flat_map(|(_, _, s)| s.accepts.iter().copied())
        .collect();
    for (name, file, _) in &parsed {
        problem_findings(name, file, &accepted, &mut report.findings);
    }
    report.entries = parsed.iter().map(|(_, _, s)| s.entries).sum();
    report.findings.extend(
        parsed
            .iter()
            .flat_map(|(_, _, s)| s.unfoldable.iter().cloned()),
    );

    refuse_keyed_without_key(&parsed, key, report.entries)?;

    // Records hold where their key is, not the key: the few files with findings are
    // read again to name them.
    let mut texts: HashMap<usize, String> = HashMap::new();
    let mut key_of = |fi: usize, e: &format::ChainRecord| -> Result<String> {
        if let std::collections::hash_map::Entry::Vacant(slot) = texts.entry(fi) {
            slot.insert(ws.read(&parsed[fi].0)?);
        }
        Ok(e.key(&texts[&fi]).to_string())
    };
    let findings = chain_findings(&parsed, &chain, &accepted);
    for f in findings {
        let e = chain.item(f.entry);
        let fi = e.link.file;
        report.findings.push(Finding {
            file: parsed[fi].0.clone(),
            line: e.link.line,
            key: key_of(fi, e)?,
            kind: f.kind.into(),
            message: f.message(|j| {
                let other = chain.get(j);
                format!("{}:{}", parsed[other.file].0, other.line)
            }),
            computed: Some(e.link.computed),
        });
    }
    if keyed && parsed.iter().any(|(_, _, s)| s.unkeyed_sealed > 0) {
        // Sealed entries hashed without the key could have been written by anyone.
        for e in chain.items() {
            let c = &e.link;
            if c.sealed() && !e.keyed && !accepted.contains(&c.computed) {
                report.findings.push(Finding {
                    file: parsed[c.file].0.clone(),
                    line: c.line,
                    key: key_of(c.file, e)?,
                    kind: FindingKind::NotKeyed,
                    message: "hashed without the chain key, so anyone could have written it; if it is genuine, \
                              `mem7 seal` with the key adopts it"
                        .into(),
                    computed: Some(c.computed),
                });
            }
        }
    }
    report.head = head;
    if let Some(expected) = expect_head
        && let Some(finding) = head_finding(expected, report.head, &chain, &parsed)?
    {
        report.findings.push(finding);
    }
    report
        .findings
        .sort_by(|a, b| (&a.file, a.line).cmp(&(&b.file, b.line)));
    if now.is_some() {
        report
            .findings
            .extend(parsed.into_iter().flat_map(|(_, _, s)| s.ahead));
    }
    Ok(report)
}

/// What the checker finds in the chain. Each file intact and continuing from the one
/// before: nothing to find, so the serial walk over every record is skipped.
fn chain_findings(
    parsed: &Parsed,
    chain: &Chain<'_, format::ChainRecord>,
    accepted: &HashSet<ChainHash>,
) -> Vec<integrity::Finding> {
    if integrity::clean(parsed.iter().map(|(_, _, s)| s.run)) {
        debug_assert!(integrity::check(chain, accepted).is_empty());
        Vec::new()
    } else {
        integrity::check(chain, accepted)
    }
}

/// Refuses to check a keyed chain without its key: its hashes cannot be checked.
fn refuse_keyed_without_key(parsed: &Parsed, key: &ChainKey, entries: usize) -> Result<()> {
    let keyed_entries: usize = parsed.iter().map(|(_, _, s)| s.keyed).sum();
    if keyed_entries > 0 && matches!(key, ChainKey::Plain) {
        return Err(Error::input(
            format!(
                "this workspace's chain is keyed ({keyed_entries} of {} entries were hashed with MEM7_CHAIN_KEY); without the key their hashes cannot be checked",
                entries
            ),
            "set MEM7_CHAIN_KEY to the workspace's chain key and run `mem7 verify` again",
        ));
    }
    Ok(())
}

/// The finding for a link or special file under memory/.
fn irregular_finding(odd: &crate::store::Irregular) -> Finding {
    Finding {
        file: odd.name.clone(),
        line: 1,
        key: String::new(),
        kind: if odd.target.is_some() {
            FindingKind::Link
        } else {
            FindingKind::SpecialFile
        },
        message: format!(
            "{}; mem7 never follows it, so entries written through it would be outside the chain: remove it (`git rm {}`) and restore the real file from git history",
            odd.describe(),
            odd.name
        ),
        computed: None,
    }
}

/// The findings of one file's parse problems (foreign text that intact seals accepted
/// is none).
fn problem_findings(
    name: &str,
    file: &format::ChainFile,
    accepted: &HashSet<ChainHash>,
    findings: &mut Vec<Finding>,
) {
    let tail = file.torn_tail.and_then(|_| {
        file.problems
            .iter()
            .rposition(|p| p.kind == ProblemKind::Torn)
    });
    for (pi, p) in file.problems.iter().enumerate() {
        let digest = match p.kind {
            ProblemKind::Foreign(digest) if accepted.contains(&digest) => continue,
            ProblemKind::Foreign(digest) => Some(digest),
            _ => None,
        };
        let (kind, message) = match p.kind {
            ProblemKind::Torn if Some(pi) != tail => (
                FindingKind::Truncated,
                format!(
                    "{}, with complete entries after it; its lines never became an entry: delete them by hand",
                    p.message
                ),
            ),
            ProblemKind::Conflict => (
                FindingKind::Conflict,
                format!(
                    "{}; resolve the git conflict (keep both sides' entries)",
                    p.message
                ),
            ),
            ProblemKind::Torn => (
                FindingKind::Truncated,
                format!(
                    "{}; the next mem7 write sets it aside in memory/torn/",
                    p.message
                ),
            ),
            ProblemKind::Malformed => (FindingKind::Unreadable, p.message.clone()),
            ProblemKind::Foreign(_) => (
                FindingKind::ForeignText,
                format!(
                    "{}; only blank lines may stand between entries: make it an entry, move it out of memory/, or accept it with `mem7 seal`",
                    p.message
                ),
            ),
        };
        findings.push(Finding {
            file: name.to_string(),
            line: p.line,
            key: String::new(),
            kind,
            message,
            // What `seal` accepts of foreign text: its digest.
            computed: digest,
        });
    }
}

/// The finding when the chain's head is not the one `--expect-head` pinned: entries
/// added after it, or it is in no file.
fn head_finding(
    expected: &str,
    head: Option<ChainHash>,
    chain: &Chain<'_, format::ChainRecord>,
    parsed: &Parsed,
) -> Result<Option<Finding>> {
    let want = ChainHash::from_hex(expected.trim()).ok_or_else(|| {
        Error::input(
            format!("--expect-head {expected:?} is not a hash"),
            "give the 64 hex characters `mem7 verify` printed as the head",
        )
    })?;
    if head != Some(want) {
        let pinned_still_there = chain.iter().any(|c| c.effective() == want);
        let (file, line) = chain
            .last()
            .map(|e| (parsed[e.link.file].0.clone(), e.link.line))
            .unwrap_or_default();
        return Ok(Some(Finding {
            file,
            line,
            key: String::new(),
            kind: FindingKind::HeadMismatch,
            message: if pinned_still_there {
                format!(
                    "the head is not the expected {}: entries were added after it",
                    want.to_hex()
                )
            } else {
                format!(
                    "the expected head {} is in no file: the newest entries were removed or history was rewritten",
                    want.to_hex()
                )
            },
            computed: None,
        }));
    }
    Ok(None)
}

/// Each file's name, its records (each record's link placed in its file), and what the
/// thread that read it found out along the way.
type Parsed = Vec<(String, format::ChainFile, FileSummary)>;

/// What a reader thread notes about a file as it places its records.
struct FileSummary {
    /// Entries hashed with the chain key.
    keyed: usize,
    /// Sealed (non-legacy) entries hashed without it.
    unkeyed_sealed: usize,
    /// What the file's intact seals accept (with a key, its keyed seals only).
    accepts: Vec<ChainHash>,
    /// Whether its entries are intact, and where they start and end.
    run: integrity::Run,
    /// Its entries recorded ahead of the clock (when asked).
    ahead: Vec<Finding>,
    /// Its entries that reads cannot fold (an unknown tier or op, a time that does not
    /// parse): reads skip them, so verify names each.
    unfoldable: Vec<Finding>,
    /// How many entries it holds, and the effective hash of its last.
    entries: usize,
    last: Option<ChainHash>,
}

impl FileSummary {
    fn of(file: &format::ChainFile, key: &ChainKey) -> FileSummary {
        let with_key = matches!(key, ChainKey::Keyed(_));
        let mut s = FileSummary {
            keyed: 0,
            unkeyed_sealed: 0,
            accepts: Vec::new(),
            run: integrity::Run::of(&file.entries),
            ahead: Vec::new(),
            unfoldable: Vec::new(),
            entries: file.entries.len(),
            last: file.entries.last().map(|e| e.link.effective()),
        };
        for e in &file.entries {
            let c = &e.link;
            s.keyed += usize::from(e.keyed);
            s.unkeyed_sealed += usize::from(c.sealed() && !e.keyed);
            if c.seal && c.claimed == Some(c.computed) && (!with_key || e.keyed) {
                s.accepts.extend(e.accepts.iter().copied());
            }
        }
        s
    }
}

/// Reads every file for its chain, each summed up; with `keep`, its records kept too
/// (else handed back to the reader's scratch, and the file's `entries` left empty).
fn parse_all(
    ws: &Workspace,
    names: &[String],
    key: &ChainKey,
    now: Option<crate::core::time::TxTime>,
    keep: bool,
) -> Result<Parsed> {
    let ahead = now.map(|now| {
        let (threshold, second) = ahead::threshold(now);
        (now, threshold, second)
    });
    let read = in_parallel(names, Default::default, |(buf, scratch), i, name| {
        let (text, undecodable) = ws.read_text_into(name, buf)?;
        let mut file = format::parse_chain_in(text, key, scratch);
        for &line in &undecodable {
            file.problems.push(format::Problem {
                line,
                kind: ProblemKind::Malformed,
                message: format!(
                    "line {line} holds a byte that is not UTF-8 (read as `?`); memory files are UTF-8 markdown: restore the line from git (`git diff`, `git checkout -- {name}`)"
                ),
            });
        }
        for (ei, e) in file.entries.iter_mut().enumerate() {
            e.link.file = i;
            e.link.first_in_file = ei == 0;
        }
        let mut summary = FileSummary::of(&file, key);
        // The fast path reads only files whose every envelope it understands; another
        // file is read again in full, so an entry reads would skip is named here.
        if scratch.recorded().is_none() {
            summary.unfoldable = unfoldable(name, text, key);
        }
        if let Some((now, threshold, second)) = &ahead {
            // The fast path noted the `recorded:` lines as it read them; otherwise the
            // text is searched for them.
            summary.ahead = match scratch.recorded() {
                Some(lines) => lines
                    .iter()
                    .filter_map(|(line, value)| {
                        ahead_at(name, *line, &text[value.clone()], *threshold, second, *now)
                    })
                    .collect(),
                None => ahead_in(name, text, *threshold, second, *now),
            };
        }
        if !keep {
            scratch.recycle(std::mem::take(&mut file.entries));
        }
        Ok((file, summary))
    })?;
    Ok(names
        .iter()
        .zip(read)
        .map(|(name, (file, summary))| (name.clone(), file, summary))
        .collect())
}

/// The entries of a file that reads skip because they cannot be folded into versions.
fn unfoldable(name: &str, text: &str, key: &ChainKey) -> Vec<Finding> {
    format::parse_file(text, key)
        .entries
        .iter()
        .filter_map(|e| {
            let problem = e.to_event(name).err()?;
            Some(Finding {
                file: name.to_string(),
                line: e.line,
                key: e.key.clone(),
                kind: FindingKind::Unreadable,
                message: format!(
                    "{problem}; every read skips this entry: correct the field by hand (its hash then changes: `mem7 seal` accepts it once it reads)"
                ),
                computed: None,
            })
        })
        .collect()
}

/// The findings `seal` can accept: breaks and merges of entries, and foreign text (not
/// what cannot be read: conflicts, torn and unreadable entries).
pub fn acceptable(report: &Report) -> Vec<&Finding> {
    report
        .findings
        .iter()
        .filter(|f| f.computed.is_some() && f.kind != FindingKind::Chain(Kind::Legacy))
        .collect()
}

/// Runs `read` on every file of `names` (with its index), on one thread per core, each
/// taking the next file when done with one (day files of very different sizes still
/// keep every core busy to the end) and keeping its own state from `init` (a buffer
/// to read into); the results in file order, or the first error.
fn in_parallel<T: Send, S>(
    names: &[String],
    init: impl Fn() -> S + Sync,
    read: impl Fn(&mut S, usize, &str) -> Result<T> + Sync,
) -> Result<Vec<T>> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(8)
        .min(names.len().max(1));
    let next = AtomicUsize::new(0);
    let results: Vec<Result<Vec<(usize, T)>>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let mut done = Vec::new();
                    let mut state = init();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(name) = names.get(i) else {
                            return Ok(done);
                        };
                        done.push((i, read(&mut state, i, name)?));
                    }
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| Error::joined(h, "a verify thread"))
            .collect()
    });
    let mut slots: Vec<Option<T>> = names.iter().map(|_| None).collect();
    for r in results {
        for (i, t) in r? {
            slots[i] = Some(t);
        }
    }
    // Each thread read files until none was left, or its error returned above.
    Ok(slots
        .into_iter()
        .map(|t| t.expect("every file was read"))
        .collect())
}

/// How many entries and runs of foreign text `findings` are, for people: "1 entry",
/// "2 entries and 1 run of foreign text".
pub fn count_accepted<'a>(findings: impl IntoIterator<Item = &'a Finding>) -> String {
    let (mut entries, mut text) = (0, 0);
    for f in findings {
        if f.kind == FindingKind::ForeignText {
            text += 1;
        } else {
            entries += 1;
        }
    }
    let count =
        |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let runs = count(text, "run of foreign text", "runs of foreign text");
    match (entries, text) {
        (_, 0) => count(entries, "entry", "entries"),
        (0, _) => runs,
        _ => format!("{} and {runs}", count(entries, "entry", "entries")),
    }
}
