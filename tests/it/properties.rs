//! Property tests for the risky parts: the temporal fold against a naive reference model,
//! the index's incremental path against a full rebuild, and the markdown round trip.

use mem7::core::chain::{ChainHash, ChainKey};
use mem7::core::fold::fold_all;
use mem7::core::temporal::{self, Period};
use mem7::core::time::{TxTime, ValidTime};
use mem7::core::{EntryOp, Event, Op, Source, StoreOp, ValidEnd, Version, Writer};
use mem7::engine::{Engine, StoreRequest};
use mem7::format::{EntryDraft, parse_file, render_entry};
use proptest::prelude::*;

// ---------------------------------------------------------------------------------------
// The reference model: a grid of valid-time cells per key, snapshotted after every
// transaction. Each cell holds (id of the store that wrote it, value). It knows nothing
// of periods, plans or remnants.

/// Cells 0..GRID; explicit times stay below 20, so a run reaching GRID means +∞.
const GRID: usize = 24;
const KEYS: [&str; 2] = ["k1", "k2"];

type Cells = Vec<Option<(usize, String)>>;

#[derive(Clone, Debug)]
enum ModelOp {
    Store {
        key: usize,
        value: String,
        from: Option<usize>,
        end: Option<ModelEnd>,
    },
    Forget {
        key: usize,
    },
}

#[derive(Clone, Copy, Debug)]
enum ModelEnd {
    Infinity,
    At(usize),
}

fn model_op() -> impl Strategy<Value = ModelOp> {
    let store = (
        0..KEYS.len(),
        prop::sample::select(vec!["a", "b", "c"]),
        prop::option::of(0usize..20),
        prop::option::weighted(
            0.6,
            prop_oneof![
                Just(ModelEnd::Infinity),
                (1usize..20).prop_map(ModelEnd::At)
            ],
        ),
    )
        .prop_map(|(key, value, from, end)| ModelOp::Store {
            key,
            value: value.to_string(),
            from,
            end,
        });
    prop_oneof![8 => store, 1 => (0..KEYS.len()).prop_map(|key| ModelOp::Forget { key })]
}

fn is_start(cells: &Cells, t: usize) -> bool {
    match &cells[t] {
        None => false,
        Some((id, _)) => t == 0 || cells[t - 1].as_ref().is_none_or(|(p, _)| p != id),
    }
}

/// The end an open-ended write at `from` gets, found by walking cells.
fn model_open_end(cells: &Cells, from: usize) -> usize {
    (from + 1..GRID)
        .find(|&t| is_start(cells, t))
        .unwrap_or(GRID)
}

/// The run of identical cells around `t`: [from, to).
fn run_around(cells: &Cells, t: usize) -> (usize, usize) {
    let id = cells[t].as_ref().map(|(id, _)| *id);
    let mut from = t;
    while from > 0 && cells[from - 1].as_ref().map(|(i, _)| *i) == id {
        from -= 1;
    }
    let mut to = t + 1;
    while to < GRID && cells[to].as_ref().map(|(i, _)| *i) == id {
        to += 1;
    }
    (from, to)
}

fn vt(t: usize) -> ValidTime {
    if t >= GRID {
        ValidTime::INFINITY
    } else {
        ValidTime::from_micros(t as i64)
    }
}

/// A distinct content hash for the `i`-th event of a test.
fn content_of(i: usize) -> ChainHash {
    ChainHash(*blake3::hash(&i.to_le_bytes()).as_bytes())
}

fn periods_of(versions: &[Version]) -> Vec<Period> {
    versions.iter().map(Version::period).collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// Random stores (explicit, `infinity`, open-ended), forgets and confirmations: every
    /// (valid_at, as_of) probe gets the same value and period from the fold as from the grid.
    #[test]
    fn fold_agrees_with_the_grid_model(ops in prop::collection::vec(model_op(), 1..16)) {
        let mut grids: Vec<Cells> = vec![vec![None; GRID]; KEYS.len()];
        let mut snapshots: Vec<(i64, Vec<Cells>)> = vec![(0, grids.clone())];
        let mut events: Vec<Event> = Vec::new();
        let mut live = mem7::core::Fold::new();
        for (i, op) in ops.iter().enumerate() {
            let tx = (i + 1) as i64;
            let source = Source { file: "f".into(), line: i as u32 + 1, hash: String::new() };
            match op {
                ModelOp::Store { key, value, from, end } => {
                    let cells = &mut grids[*key];
                    let a = from.unwrap_or(tx as usize);
                    // Confirmation: the core's rule vs the grid's reading of it.
                    if from.is_none() && end.is_none() {
                        let believed = live.believed(KEYS[*key]).to_vec();
                        let core = temporal::confirmation(&periods_of(&believed), ValidTime::from_micros(tx), |j| &believed[j].value == value).is_some();
                        let model = cells[a].as_ref().is_some_and(|(_, v)| v == value)
                            && run_around(cells, a).1 == model_open_end(cells, a);
                        prop_assert_eq!(core, model, "confirmation at tx {}", tx);
                        if core {
                            continue;
                        }
                    }
                    let b = match end {
                        None => model_open_end(cells, a),
                        Some(ModelEnd::Infinity) => GRID,
                        Some(ModelEnd::At(b)) => *b,
                    };
                    let ev = Event {
                        tx: TxTime::from_micros(tx),
                        op: Op::Store(StoreOp {
                            key: KEYS[*key].into(),
                            value: value.clone(),
                            tags: vec![],
                            agent: "p".into(),
                            valid_from: vt(a),
                            valid_to: match end {
                                None => ValidEnd::Open,
                                Some(ModelEnd::Infinity) => ValidEnd::Infinity,
                                Some(ModelEnd::At(b)) => ValidEnd::At(vt(*b)),
                            },
    tier: None,
    many: false,
}),
                        source,
                        content: content_of(i),
                    };
                    // A restatement (a retry of the same period): the core's rule vs the
                    // grid's. Unchanged when [a, b) is exactly one believed version of
                    // this value: one run of one writer's cells, no more, no less.
                    if b > a {
                        let believed = live.believed(KEYS[*key]).to_vec();
                        let planned = mem7::core::change::plan(&ev, TxTime::from_micros(tx), &believed).unwrap();
                        let core = planned.restates(&believed).is_some();
                        let writer = cells[a].as_ref().filter(|(_, v)| v == value).map(|(w, _)| *w);
                        let model = writer.is_some_and(|w| {
                            let same = |c: &Option<(usize, String)>| c.as_ref().is_some_and(|(x, _)| *x == w);
                            cells[a..b].iter().all(same)
                                && (a == 0 || !same(&cells[a - 1]))
                                && (b >= GRID || !same(&cells[b]))
                        });
                        prop_assert_eq!(core, model, "restatement at tx {} of [{}, {})", tx, a, b);
                        if core {
                            continue;
                        }
                    }
                    let anomaly = live.apply(&ev, &mut |_| {});
                    if b <= a {
                        prop_assert!(anomaly.is_some(), "an empty period must be reported");
                    } else {
                        prop_assert!(anomaly.is_none());
                        for c in cells.iter_mut().take(b).skip(a) {
                            *c = Some((i, value.clone()));
                        }
                    }
                    events.push(ev);
                }
                ModelOp::Forget { key } => {
                    grids[*key] = vec![None; GRID];
                    let ev = Event { tx: TxTime::from_micros(tx), op: Op::Forget { key: KEYS[*key].into(), entry: None }, source, content: content_of(i) };
                    live.apply(&ev, &mut |_| {});
                    events.push(ev);
                }
            }
            snapshots.push((tx, grids.clone()));
        }
        let (versions, _) = fold_all(&events);
        for as_of in 0..=(ops.len() as i64 + 1) {
            let grids = &snapshots.iter().rev().find(|(tx, _)| *tx <= as_of).unwrap().1;
            for (k, key) in KEYS.iter().enumerate() {
                for valid_at in 0..GRID {
                    let got: Vec<(String, ValidTime, ValidTime)> = versions
                        .iter()
                        .filter(|v| v.key == *key && v.matches(vt(valid_at), TxTime::from_micros(as_of)))
                        .map(|v| (v.value.clone(), v.valid_from, v.valid_to))
                        .collect();
                    let want: Vec<(String, ValidTime, ValidTime)> = match &grids[k][valid_at] {
                        None => vec![],
                        Some((_, value)) => {
                            let (from, to) = run_around(&grids[k], valid_at);
                            vec![(value.clone(), vt(from), vt(to))]
                        }
                    };
                    prop_assert_eq!(got, want, "key {} valid_at {} as_of {}", key, valid_at, as_of);
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Incremental index == full rebuild, through the engine and real SQLite.

#[derive(Clone, Debug)]
enum Write {
    Store {
        key: usize,
        value: usize,
        from: Option<i64>,
        to: Option<Option<i64>>,
        tag: bool,
    },
    Forget {
        key: usize,
    },
}

fn write_op() -> impl Strategy<Value = Write> {
    let store = (
        0..3usize,
        0..3usize,
        prop::option::of(0i64..40),
        prop::option::weighted(0.3, prop::option::of(1i64..40)),
        any::<bool>(),
    )
        .prop_map(|(key, value, from, to, tag)| Write::Store {
            key,
            value,
            from,
            to,
            tag,
        });
    prop_oneof![6 => store, 1 => (0..3usize).prop_map(|key| Write::Forget { key })]
}

const DAY: i64 = 86_400_000_000;

fn sorted(mut v: Vec<Version>) -> Vec<Version> {
    v.sort_by(|a, b| {
        (&a.key, a.tx_from, a.valid_from, &a.source, a.tx_to).cmp(&(
            &b.key,
            b.tx_from,
            b.valid_from,
            &b.source,
            b.tx_to,
        ))
    });
    v
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// After any sequence of writes (with a clock that sometimes stands still or goes
    /// back), the incrementally maintained index equals a rebuild from the markdown,
    /// down to each version's file and line.
    #[test]
    fn incremental_index_equals_rebuild(
        writes in prop::collection::vec((write_op(), -1i64..3), 1..30)
    ) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("ws");
        mem7::store::init(&root).unwrap();
        let mut engine = Engine::open(&root, ChainKey::Plain).unwrap();
        let base = ValidTime::parse("2026-01-01").unwrap().micros();
        let mut clock = base;
        for (w, step) in &writes {
            clock += step * DAY / 2;
            let now = TxTime::from_micros(clock);
            match w {
                Write::Store { key, value, from, to, tag } => {
                    let req = StoreRequest {
                        key: format!("key{key}"),
                        value: format!("value {value}"),
                        valid_from: from.map(|d| ValidTime::from_micros(base + d * DAY)),
                        valid_to: to.map(|t| match t {
                            None => ValidEnd::Infinity,
                            Some(d) => ValidEnd::At(ValidTime::from_micros(base + d * DAY)),
                        }),
                        tags: if *tag { vec!["t".into()] } else { vec![] },
                        agent: "prop".into(),
                        allow_secret: false,
                        tier: None,
                        by: mem7::core::Writer::Person,
                    };
                    // Empty periods are refused; everything else is written or confirmed.
                    let from = req.valid_from.unwrap_or(now.as_valid());
                    let empty = matches!(req.valid_to, Some(ValidEnd::At(to)) if to <= from);
                    match engine.store(&req, now) {
                        Ok(_) => prop_assert!(!empty, "an empty period was accepted: {:?}", req),
                        Err(e) => prop_assert!(empty, "store failed: {} ({:?})", e, req),
                    }
                }
                Write::Forget { key } => {
                    engine.forget(&format!("key{key}"), None, ("prop", Writer::Person), now).unwrap();
                }
            }
        }
        let incremental = sorted(engine.index().all_versions().unwrap());
        engine.reindex().unwrap();
        let rebuilt = sorted(engine.index().all_versions().unwrap());
        prop_assert_eq!(&incremental, &rebuilt);
        // And a fresh process (new engine) sees the same.
        drop(engine);
        std::fs::remove_dir_all(root.join(".mem7")).unwrap();
        let fresh = Engine::open(&root, ChainKey::Plain).unwrap();
        prop_assert_eq!(sorted(fresh.index().all_versions().unwrap()), incremental);
    }
}

// ---------------------------------------------------------------------------------------
// The markdown round trip.

fn draft<'a>(key: &'a str, value: &'a str, recorded: i64) -> EntryDraft<'a> {
    EntryDraft {
        key,
        op: EntryOp::Store,
        valid_from: Some(ValidTime::from_micros(recorded)),
        valid_to: None,
        recorded: TxTime::from_micros(recorded),
        agent: "prop",
        tags: &[],
        tier: None,
        entry: None,
        secret_allowed: false,
        accepts: &[],
        value: Some(value),
    }
}

/// Text built to look like mem7's own structure, mixed with arbitrary Unicode.
fn nasty_value() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("## key\n".to_string()),
        Just("```mem7\n".to_string()),
        Just("````\n".to_string()),
        Just("```\n".to_string()),
        Just("---\n".to_string()),
        Just("hash: 00\n".to_string()),
        Just(">".to_string()),
        Just("\n".to_string()),
        Just("\r\n".to_string()),
        Just("\r".to_string()),
        Just(" ".to_string()),
        Just("<<<<<<< HEAD\n".to_string()),
        Just("=======\n".to_string()),
        Just(">>>>>>> x\n".to_string()),
        Just("\u{feff}".to_string()),
        Just("\t".to_string()),
        any::<String>(),
        "[a-z ]{0,12}",
    ];
    prop::collection::vec(piece, 0..12).prop_map(|parts| parts.concat())
}

/// Counts top-level (outside block quotes) structure as a markdown renderer sees it.
fn top_level_structure(markdown: &str) -> (usize, usize, usize) {
    use pulldown_cmark::{CodeBlockKind, Event as Md, HeadingLevel, Parser, Tag};
    let (mut depth, mut headings, mut envelopes, mut rules) = (0usize, 0, 0, 0);
    for ev in Parser::new(markdown) {
        match ev {
            Md::Start(Tag::BlockQuote(_)) => depth += 1,
            Md::End(pulldown_cmark::TagEnd::BlockQuote(_)) => depth -= 1,
            Md::Start(Tag::Heading {
                level: HeadingLevel::H2,
                ..
            }) if depth == 0 => headings += 1,
            Md::Start(Tag::CodeBlock(CodeBlockKind::Fenced(info)))
                if depth == 0 && &*info == "mem7" =>
            {
                envelopes += 1
            }
            Md::Rule if depth == 0 => rules += 1,
            _ => {}
        }
    }
    (headings, envelopes, rules)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1024, ..ProptestConfig::default() })]

    /// parse(write(v)) == v for any value, the hash verifies, and no value can add an
    /// entry, in mem7's reading or in a markdown renderer's.
    #[test]
    fn values_round_trip_and_never_inject(values in prop::collection::vec(nasty_value(), 1..5)) {
        let mut file = String::new();
        let mut prev = ChainHash::GENESIS;
        let mut hashes = Vec::new();
        for (i, v) in values.iter().enumerate() {
            let (text, hash) = render_entry(&draft("k", v, i as i64), prev, &ChainKey::Plain);
            file.push_str(&text);
            file.push('\n');
            hashes.push(hash);
            prev = hash;
        }
        let parsed = parse_file(&file, &ChainKey::Plain);
        prop_assert!(parsed.problems.is_empty(), "{:?}", parsed.problems);
        prop_assert_eq!(parsed.entries.len(), values.len());
        for ((entry, value), hash) in parsed.entries.iter().zip(&values).zip(&hashes) {
            prop_assert_eq!(entry.value.as_deref(), Some(value.as_str()));
            prop_assert_eq!(entry.computed, *hash);
        }
        // CRLF line endings (an editor, a checkout without eol=lf) change nothing.
        let crlf = parse_file(&file.replace('\n', "\r\n"), &ChainKey::Plain);
        for ((entry, value), hash) in crlf.entries.iter().zip(&values).zip(&hashes) {
            prop_assert_eq!(entry.value.as_deref(), Some(value.as_str()));
            prop_assert_eq!(entry.computed, *hash);
        }
        let n = values.len();
        prop_assert_eq!(top_level_structure(&file), (n, n, n), "rendered structure of:\n{}", file);
    }

    /// Changing any single byte of an entry changes its computed hash (or makes it unreadable).
    #[test]
    fn any_byte_change_is_detected(value in "[ -~]{0,40}", pos in any::<prop::sample::Index>(), byte in 0x20u8..0x7f) {
        let (text, hash) = render_entry(&draft("k", &value, 0), ChainHash::GENESIS, &ChainKey::Plain);
        let mut bytes = text.into_bytes();
        let i = pos.index(bytes.len());
        prop_assume!(bytes[i] != byte && bytes[i] != b'\n');
        bytes[i] = byte;
        let changed = String::from_utf8(bytes).unwrap();
        let parsed = parse_file(&changed, &ChainKey::Plain);
        let intact = parsed.entries.len() == 1
            && parsed.entries[0].computed == hash
            && parsed.entries[0].fields.hash.as_deref() == Some(hash.to_hex().as_str());
        prop_assert!(!intact, "undetected change at byte {}:\n{}", i, changed);
    }
}

/// A case the property found: a bracket after `hash:` was read as a list holding the
/// same hash, so the edit went unseen.
#[test]
fn a_bracketed_hash_line_is_a_change() {
    let (text, hash) = render_entry(
        &draft("k", "value", 0),
        ChainHash::GENESIS,
        &ChainKey::Plain,
    );
    for edited in [
        text.replace("hash: ", "hash:["),
        text.replace("hash: ", "hash: ["),
        text.replace("hash: ", "hash: [")
            .replace("\n```\n\n>", "]\n```\n\n>"),
    ] {
        assert_ne!(edited, text);
        let parsed = parse_file(&edited, &ChainKey::Plain);
        let intact = parsed.entries.len() == 1
            && parsed.entries[0].computed == hash
            && parsed.entries[0].fields.hash.as_deref() == Some(hash.to_hex().as_str());
        assert!(!intact, "undetected:\n{edited}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// `parse_chain` (verify's allocation-free reader) finds the same entries, chain
    /// fields, hashes and problems as `parse_file`, on intact and damaged files alike:
    /// edited bytes, text between entries, and files cut anywhere.
    #[test]
    fn chain_reader_agrees_with_the_full_parser(
        values in prop::collection::vec(nasty_value(), 1..4),
        edits in prop::collection::vec((any::<prop::sample::Index>(), prop::sample::select(
            b"\n :[]'\"#{-`>abcdefhpr0123456789".to_vec())), 0..3),
        foreign in prop::option::of((any::<prop::sample::Index>(), prop::sample::select(vec![
            "a note\n", "## heading\n", "## heading\n\nprose\n", "<!-- comment -->\n",
            "```mem7\n", "---\n", "  \n", "<<<<<<< HEAD\n", "=======\n", "## k\n\n```me",
        ]))),
        cut in prop::option::of(any::<prop::sample::Index>()),
    ) {
        let mut file = String::new();
        let mut prev = ChainHash::GENESIS;
        for (i, v) in values.iter().enumerate() {
            let (text, hash) = render_entry(&draft("k", v, i as i64), prev, &ChainKey::Plain);
            file.push_str(&text);
            file.push('\n');
            prev = hash;
        }
        let mut bytes = file.into_bytes();
        for (pos, byte) in &edits {
            let i = pos.index(bytes.len());
            bytes[i] = *byte;
        }
        let mut file = String::from_utf8_lossy(&bytes).into_owned();
        if let Some((at, text)) = foreign {
            // At the start of a line: between entries, inside one, or at the end.
            let starts: Vec<usize> = std::iter::once(0)
                .chain(file.match_indices('\n').map(|(i, _)| i + 1))
                .collect();
            file.insert_str(starts[at.index(starts.len())], text);
        }
        if let Some(cut) = cut {
            let mut at = cut.index(file.len() + 1);
            while !file.is_char_boundary(at) {
                at -= 1;
            }
            file.truncate(at);
        }
        let full = parse_file(&file, &ChainKey::Plain);
        let chain = mem7::format::parse_chain(&file, &ChainKey::Plain);
        prop_assert_eq!(&chain.problems, &full.problems);
        prop_assert_eq!(chain.torn_tail, full.torn_tail);
        prop_assert_eq!(chain.entries.len(), full.entries.len());
        for (c, f) in chain.entries.iter().zip(&full.entries) {
            prop_assert_eq!(c.key(&file), f.key.as_str());
            prop_assert_eq!(c.link.line, f.line);
            prop_assert_eq!(c.link.prev, f.prev);
            prop_assert_eq!(c.link.claimed, f.claimed);
            prop_assert_eq!(c.link.computed, f.computed);
            prop_assert_eq!(c.link.legacy, f.legacy);
            prop_assert_eq!(c.keyed, f.keyed);
            prop_assert_eq!(c.link.seal, f.fields.op.as_deref() == Some("seal"));
        }
    }
}

// ---------------------------------------------------------------------------------------
// Merges that agree: the versions depend on the set of entries, not on their order in the
// files or on which way a merge went.

/// One write of a clone: key, value, recorded (in hours from a base), explicit valid_from.
type CloneWrite = (usize, usize, i64, Option<i64>);

fn clone_writes() -> impl Strategy<Value = Vec<CloneWrite>> {
    prop::collection::vec(
        (0..3usize, 0..3usize, 0i64..60, prop::option::of(0i64..60)),
        0..8,
    )
}

const HOUR: i64 = 3_600_000_000;

/// A clone's memory files: its writes rendered as mem7 writes them (recorded made
/// strictly increasing within the clone, as its monotonic clock would), chained from
/// `prev`, appended to `files` (day file → text).
fn render_clone(
    writes: &[CloneWrite],
    base: i64,
    mut prev: ChainHash,
    after: i64,
    files: &mut std::collections::BTreeMap<String, String>,
) -> (ChainHash, i64) {
    let mut last = after;
    let keys: Vec<String> = (0..3).map(|k| format!("k{k}")).collect();
    let values: Vec<String> = (0..3).map(|v| format!("value {v}")).collect();
    for (key, value, at, from) in writes {
        let recorded = (base + at * HOUR).max(last + 1);
        last = recorded;
        let draft = EntryDraft {
            key: &keys[*key],
            op: EntryOp::Store,
            valid_from: Some(ValidTime::from_micros(base + from.unwrap_or(*at) * HOUR)),
            valid_to: None,
            recorded: TxTime::from_micros(recorded),
            agent: "prop",
            tags: &[],
            tier: None,
            entry: None,
            secret_allowed: false,
            accepts: &[],
            value: Some(&values[*value]),
        };
        let (text, hash) = render_entry(&draft, prev, &ChainKey::Plain);
        prev = hash;
        let file = files
            .entry(format!(
                "memory/{}.md",
                TxTime::from_micros(recorded).utc_day()
            ))
            .or_default();
        file.push_str(&text);
        file.push('\n');
    }
    (prev, last)
}

/// The versions a workspace holding `files` folds to, without their place in the files
/// (which differs between merges): key, value, the four clocks, the entry's hash.
fn folded(
    files: &std::collections::BTreeMap<String, String>,
) -> Vec<(String, String, i64, i64, i64, i64, String)> {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("ws");
    mem7::store::init(&root).unwrap();
    for (name, text) in files {
        std::fs::write(root.join(name), text).unwrap();
    }
    let engine = Engine::open(&root, ChainKey::Plain).unwrap();
    let mut out: Vec<_> = engine
        .index()
        .all_versions()
        .unwrap()
        .into_iter()
        .map(|v| {
            (
                v.key,
                v.value,
                v.valid_from.micros(),
                v.valid_to.micros(),
                v.tx_from.micros(),
                v.tx_to.micros(),
                v.source.hash,
            )
        })
        .collect();
    out.sort();
    out
}

/// Merges two clones' files the way `mem7 merge-file` does, `ours` into which `theirs`
/// comes.
fn merge_files(
    base: &std::collections::BTreeMap<String, String>,
    ours: &std::collections::BTreeMap<String, String>,
    theirs: &std::collections::BTreeMap<String, String>,
) -> std::collections::BTreeMap<String, String> {
    let mut names: Vec<&String> = ours.keys().chain(theirs.keys()).collect();
    names.sort();
    names.dedup();
    let empty = String::new();
    names
        .into_iter()
        .map(|name| {
            let get = |m: &std::collections::BTreeMap<String, String>| {
                m.get(name).unwrap_or(&empty).clone()
            };
            let merged =
                mem7::sync::entry_merge::merge_entries(&get(base), &get(ours), &get(theirs));
            assert!(!merged.conflict);
            (name.clone(), merged.text)
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Two clones share a base and each append writes, some recorded at the very same
    /// instant as the other's. Clone A merging B and clone B merging A give files in
    /// different orders, and fold to the same versions, down to each version's entry.
    #[test]
    fn merges_in_either_direction_fold_alike(
        shared in clone_writes(),
        a in clone_writes(),
        b in clone_writes(),
        same_instant in any::<bool>(),
    ) {
        let base_time = ValidTime::parse("2026-03-01").unwrap().micros();
        let mut base = std::collections::BTreeMap::new();
        let (head, last) = render_clone(&shared, base_time, ChainHash::GENESIS, base_time, &mut base);
        let mut ours = base.clone();
        render_clone(&a, base_time, head, last, &mut ours);
        let mut theirs = base.clone();
        // With `same_instant`, B writes at A's instants: ties broken by content alone.
        let b_writes: Vec<CloneWrite> = if same_instant {
            a.iter().zip(b.iter().cycle()).map(|(wa, wb)| (wb.0, wb.1, wa.2, wb.3)).collect()
        } else {
            b.clone()
        };
        render_clone(&b_writes, base_time, head, last, &mut theirs);
        let a_into_b = merge_files(&base, &theirs, &ours);
        let b_into_a = merge_files(&base, &ours, &theirs);
        prop_assert_eq!(folded(&a_into_b), folded(&b_into_a));
    }

    /// The fold's order is the events' own: any permutation of a set of events, sorted
    /// by `event_order`, folds to the same versions.
    #[test]
    fn the_fold_depends_on_the_set_of_events_only(
        writes in prop::collection::vec((0..2usize, 0..3usize, 0i64..6, prop::option::of(0i64..6)), 1..12),
        seed in any::<u64>(),
    ) {
        let events: Vec<Event> = writes
            .iter()
            .enumerate()
            .map(|(i, (key, value, tx, from))| Event {
                tx: TxTime::from_micros(*tx),
                op: Op::Store(StoreOp {
                    key: KEYS[*key].into(),
                    value: format!("v{value}"),
                    tags: vec![],
                    agent: "p".into(),
                    valid_from: ValidTime::from_micros(from.unwrap_or(*tx)),
                    valid_to: ValidEnd::Open,
    tier: None,
    many: false,
}),
                source: Source { file: "f".into(), line: i as u32, hash: format!("{i}") },
                content: content_of(i),
            })
            .collect();
        let mut shuffled = events.clone();
        // A deterministic shuffle from the seed.
        let mut x = seed | 1;
        for i in (1..shuffled.len()).rev() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            shuffled.swap(i, (x % (i as u64 + 1)) as usize);
        }
        let fold = |mut evs: Vec<Event>| {
            evs.sort_by(mem7::core::event_order);
            let (mut v, anomalies) = fold_all(&evs);
            assert!(anomalies.is_empty());
            v.sort_by(|a, b| (&a.source.hash, a.tx_from, a.valid_from).cmp(&(&b.source.hash, b.tx_from, b.valid_from)));
            v
        };
        prop_assert_eq!(fold(events), fold(shuffled));
    }
}

// ---------------------------------------------------------------------------------------
// Every read predicate (SQL for recall, list and history; tantivy's clock filters for
// search by words; the meaning side's scan of the clocks and its filtered path) against
// the core's match rule, over random versions and probes, in every search mode.

/// An embedding provider on 127.0.0.1 speaking Ollama's API, for the read-rule oracle:
/// every vector has all components positive (from a hash of the text), so every version
/// is near every query (cosine well above the search's floor) and ranking still varies.
/// Which versions a meaning search answers is then decided by its filters alone.
fn positive_vectors_provider() -> String {
    use std::io::{BufRead, BufReader, Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut length = 0usize;
            let mut line = String::new();
            while reader.read_line(&mut line).unwrap_or(0) > 0 && !line.trim_end().is_empty() {
                if let Some((name, value)) = line.split_once(':')
                    && name.eq_ignore_ascii_case("content-length")
                {
                    length = value.trim().parse().unwrap();
                }
                line.clear();
            }
            let mut body = vec![0u8; length];
            reader.read_exact(&mut body).unwrap();
            let req: serde_json::Value = serde_json::from_slice(&body).unwrap();
            let vectors: Vec<Vec<f32>> = req["input"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| {
                    let h = blake3::hash(t.as_str().unwrap().as_bytes());
                    h.as_bytes()[..8]
                        .iter()
                        .map(|b| 1.0 + f32::from(*b) / 255.0)
                        .collect()
                })
                .collect();
            let reply = serde_json::json!({ "embeddings": vectors }).to_string();
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{reply}",
                reply.len()
            );
        }
    });
    url
}

/// Meaning search on, through the provider above.
fn with_meaning(engine: &mut Engine, url: &str) {
    engine.set_embeddings(mem7::embed::Resolved::On(mem7::embed::ProviderSpec {
        kind: mem7::embed::ProviderKind::Ollama,
        url: url.to_string(),
        model: "oracle".into(),
        api_key: None,
        model_dir: std::path::PathBuf::new(),
        batch_size: 64,
        timeout: std::time::Duration::from_secs(60),
    }));
}

/// A scratch folder in memory when the machine has one (`/dev/shm`): the oracle's
/// hundreds of workspaces check predicates, not durability, and need no disk flushes.
fn scratch() -> tempfile::TempDir {
    let shm = std::path::Path::new("/dev/shm");
    if shm.is_dir()
        && let Ok(dir) = tempfile::tempdir_in(shm)
    {
        return dir;
    }
    tempfile::tempdir().unwrap()
}

/// Key prefixes a probe may filter by (`None`: no prefix).
const PREFIXES: [Option<&str>; 3] = [None, Some("key1"), Some("k")];

#[derive(Clone, Debug)]
enum ReadWrite {
    Store {
        key: usize,
        value: usize,
        from: Option<i64>,
        to: Option<i64>,
        tag: usize,
    },
    Forget {
        key: usize,
    },
    /// A Go mem7 `delete_tags` appended by hand, recorded at the clock.
    LegacyForgetTagged {
        tag: usize,
    },
}

fn read_write() -> impl Strategy<Value = ReadWrite> {
    let store = (
        0..3usize,
        0..3usize,
        prop::option::of(0i64..12),
        prop::option::weighted(0.3, 1i64..12),
        0..TAGS.len(),
    )
        .prop_map(|(key, value, from, to, tag)| ReadWrite::Store {
            key,
            value,
            from,
            to,
            tag,
        });
    prop_oneof![
        8 => store,
        1 => (0..3usize).prop_map(|key| ReadWrite::Forget { key }),
        1 => (1..TAGS.len()).prop_map(|tag| ReadWrite::LegacyForgetTagged { tag }),
    ]
}

/// Tag sets stored and asked for: `t10` holds `t1` as text but does not carry it.
const TAGS: [&[&str]; 4] = [&[], &["t1"], &["t1", "t2"], &["t10"]];

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// recall, list (with and without tags and a key prefix), history --as-of and search
    /// in every mode (words, meaning, both, and the default), with tags and a key prefix,
    /// answer exactly the versions the core's `Version::matches` selects from the index's
    /// own version table, at every probe: clocks that stand still (equal instants), go
    /// back (out-of-order recorded times are raised), legacy forgets. Meaning search runs
    /// both of its scans: the clocks read from the fast fields (no tag, no prefix) and the
    /// filtered one (tags or a prefix).
    #[test]
    fn every_read_predicate_agrees_with_the_core_match_rule(
        writes in prop::collection::vec((read_write(), -1i64..3), 1..20),
        probes in prop::collection::vec((0i64..14, 0i64..14, 0..PREFIXES.len()), 1..6),
    ) {
        let dir = scratch();
        let root = dir.path().join("ws");
        mem7::store::init(&root).unwrap();
        let base = ValidTime::parse("2026-01-01").unwrap().micros();
        let at = |d: i64| base + d * DAY;
        let provider = positive_vectors_provider();
        let mut engine = Engine::open(&root, ChainKey::Plain).unwrap();
        with_meaning(&mut engine, &provider);
        let mut clock = base;
        for (w, step) in &writes {
            clock += step * DAY;
            let now = TxTime::from_micros(clock);
            match w {
                ReadWrite::Store { key, value, from, to, tag } => {
                    let req = StoreRequest {
                        key: format!("key{key}"),
                        value: format!("value {value}"),
                        valid_from: from.map(|d| ValidTime::from_micros(at(d))),
                        valid_to: to.map(|d| ValidEnd::At(ValidTime::from_micros(at(d)))),
                        tags: TAGS[*tag].iter().map(|t| t.to_string()).collect(),
                        agent: "prop".into(),
                        allow_secret: false,
                        tier: None,
                        by: mem7::core::Writer::Person,
                    };
                    let start = req.valid_from.unwrap_or(now.as_valid());
                    let empty = matches!(req.valid_to, Some(ValidEnd::At(to)) if to <= start);
                    match engine.store(&req, now) {
                        Ok(_) => prop_assert!(!empty),
                        Err(e) => prop_assert!(empty, "store failed: {}", e),
                    }
                }
                ReadWrite::Forget { key } => {
                    engine.forget(&format!("key{key}"), None, ("prop", Writer::Person), now).unwrap();
                }
                ReadWrite::LegacyForgetTagged { tag } => {
                    drop(engine);
                    let recorded = TxTime::from_micros(clock.max(base));
                    let day = root.join(format!("memory/{}.md", recorded.utc_day()));
                    let mut text = std::fs::read_to_string(&day).unwrap_or_default();
                    text.push_str(&format!(
                        "\n## [delete-tags: {t}]\n\n```mem7\nop: delete_tags\ntags: {t}\ndeleted: {}\n```\n\n---\n",
                        chrono::DateTime::from_timestamp_micros(recorded.micros()).unwrap().format("%Y-%m-%dT%H:%M:%SZ"),
                        t = TAGS[*tag].join(", ")
                    ));
                    std::fs::write(&day, text).unwrap();
                    engine = Engine::open(&root, ChainKey::Plain).unwrap();
                    with_meaning(&mut engine, &provider);
                }
            }
        }
        let all = engine.index().all_versions().unwrap();
        let id = |v: &Version| (v.key.clone(), v.tx_from, v.valid_from, v.source.clone());
        let ids = |mut vs: Vec<Version>| {
            let mut out: Vec<_> = vs.drain(..).map(|v| id(&v)).collect();
            out.sort();
            out
        };
        for (valid_day, as_of_day, prefix) in &probes {
            let valid_at = ValidTime::from_micros(at(*valid_day));
            let as_of = TxTime::from_micros(at(*as_of_day));
            let prefix = PREFIXES[*prefix];
            let want = |key: Option<&str>, prefix: Option<&str>, tags: &[String]| {
                ids(all
                    .iter()
                    .filter(|v| {
                        v.matches(valid_at, as_of)
                            && key.is_none_or(|k| v.key == k)
                            && prefix.is_none_or(|p| v.key.starts_with(p))
                            && v.has_tags(tags)
                    })
                    .cloned()
                    .collect())
            };
            for k in 0..3 {
                let key = format!("key{k}");
                prop_assert_eq!(ids(engine.index().recall(&key, valid_at, as_of).unwrap()), want(Some(&key), None, &[]));
                let believed: Vec<_> = ids(all.iter().filter(|v| v.key == key && v.believed_at(as_of)).cloned().collect());
                prop_assert_eq!(ids(engine.index().history(&key, Some(as_of)).unwrap()), believed);
            }
            for tags in TAGS {
                let tags: Vec<String> = tags.iter().map(|t| t.to_string()).collect();
                for prefix in [None, prefix].into_iter().collect::<std::collections::BTreeSet<_>>() {
                    prop_assert_eq!(
                        ids(engine.index().list(prefix, &tags, valid_at, as_of).unwrap()),
                        want(None, prefix, &tags),
                        "list prefix {:?} tags {:?}", prefix, tags
                    );
                }
                // Through the engine, which brings the word index and the vectors up to
                // date first; every mode, with no prefix (the meaning side's scan of the
                // clocks when no tag is asked for either) and with the probe's.
                // The default mode is the hybrid one here (vectors exist): asked once.
                let auto = tags.is_empty().then_some(mem7::index::fulltext::SearchMode::Auto);
                let modes = mem7::index::fulltext::SearchMode::NAMED.into_iter().chain(auto);
                for mode in modes {
                    for prefix in [None, prefix].into_iter().collect::<std::collections::BTreeSet<_>>() {
                        let hits = engine
                            .search(&mem7::index::fulltext::SearchRequest {
                                text: "value".into(),
                                raw: false,
                                valid_at,
                                as_of,
                                tags: tags.clone(),
                                key_prefix: prefix.map(str::to_string),
                                limit: 1000,
                                mode,
                            })
                            .unwrap();
                        if mode == mem7::index::fulltext::SearchMode::Semantic {
                            prop_assert!(hits.iter().all(|h| h.similarity.is_some()));
                        }
                        prop_assert_eq!(
                            ids(hits.into_iter().map(|h| h.version).collect()),
                            want(None, prefix, &tags),
                            "search {:?} prefix {:?} tags {:?}", mode, prefix, tags
                        );
                    }
                }
            }
        }
        // Meaning search answered every time: nothing fell back to words.
        prop_assert_eq!(engine.take_notes(), Vec::new());
    }
}

// ---------------------------------------------------------------------------------------
// The rebuild streams (events staged in SQLite, folded key by key, cross-key forgets
// merged in): it must give the versions of the in-memory fold over every event sorted.

/// One random entry: op (0 store, 1 forget, 2 forget_entity, 3 forget_tagged), key,
/// value, recorded (small: many equal instants), explicit valid_from and end, tag,
/// and the file it is written to (whatever its day: recorded times out of file order).
type RandomEntry = (
    u8,
    usize,
    usize,
    i64,
    Option<i64>,
    Option<Option<i64>>,
    usize,
    usize,
);

fn random_entry() -> impl Strategy<Value = RandomEntry> {
    (
        prop_oneof![6 => Just(0u8), 2 => Just(1u8), 1 => Just(2u8), 1 => Just(3u8)],
        0..5usize,
        0..3usize,
        0i64..8,
        prop::option::of(0i64..8),
        prop::option::of(prop::option::of(0i64..10)),
        0..3usize,
        0..3usize,
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn the_streaming_rebuild_gives_the_folds_versions(
        entries in prop::collection::vec(random_entry(), 1..24),
    ) {
        const KEYS: [&str; 5] = ["e1", "e1:p", "e1:q", "e1x", "e2:p"];
        const ENTITIES: [&str; 5] = ["e1", "e1", "e2", "e1x", "e3"];
        const TAGS: [&str; 3] = ["a", "b", "c"];
        let base = ValidTime::parse("2026-03-01").unwrap().micros();
        let mut files: std::collections::BTreeMap<String, String> = Default::default();
        let values: Vec<String> = (0..3).map(|v| format!("value {v}")).collect();
        let forget_tagged = "mem7:forget_tagged".to_string();
        for (op, key, value, at, from, end, tag, file) in &entries {
            let tags = vec![TAGS[*tag].to_string()];
            let from_t = ValidTime::from_micros(base + from.unwrap_or(*at) * HOUR);
            let end = end.map(|e| match e {
                None => ValidEnd::Infinity,
                Some(h) => ValidEnd::At(ValidTime::from_micros(base + h * HOUR)),
            });
            let (heading, op_name) = match op {
                0 => (KEYS[*key], EntryOp::Store),
                1 => (KEYS[*key], EntryOp::Forget),
                2 => (ENTITIES[*key], EntryOp::ForgetEntity),
                _ => (forget_tagged.as_str(), EntryOp::ForgetTagged),
            };
            let draft = EntryDraft {
                key: heading,
                op: op_name,
                valid_from: (*op == 0).then_some(from_t),
                valid_to: if *op == 0 { end } else { None },
                recorded: TxTime::from_micros(base + at * HOUR),
                agent: "prop",
                tags: if *op == 0 || *op == 3 { &tags } else { &[] },
                tier: None,
                entry: None,
                secret_allowed: false,
                accepts: &[],
                value: (*op == 0).then_some(values[*value].as_str()),
            };
            let (text, _) = render_entry(&draft, ChainHash::GENESIS, &ChainKey::Plain);
            let f = files.entry(format!("memory/2026-03-0{}.md", file + 1)).or_default();
            f.push_str(&text);
            f.push_str("\n\n");
        }
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("ws");
        mem7::store::init(&root).unwrap();
        let mut events = Vec::new();
        for (name, text) in &files {
            std::fs::write(root.join(name), text).unwrap();
            for e in parse_file(text, &ChainKey::Plain).entries {
                if let Some(ev) = e.to_event(name).unwrap() {
                    events.push(ev);
                }
            }
        }
        prop_assert_eq!(events.len(), entries.len());
        events.sort_by(mem7::core::event_order);
        let (expected, _) = fold_all(&events);
        let ws = mem7::store::Workspace::open(&root).unwrap();
        let (index, stats) = mem7::index::Index::rebuild(&ws).unwrap();
        prop_assert_eq!(stats.versions, expected.len());
        let key = |v: &Version| (
            v.key.clone(), v.tx_from, v.valid_from, v.valid_to, v.tx_to,
            v.source.clone(), v.value.clone(), v.tags.clone(), v.agent.clone(),
        );
        let mut want: Vec<_> = expected.iter().map(key).collect();
        let mut have: Vec<_> = index.all_versions().unwrap().iter().map(key).collect();
        want.sort();
        have.sort();
        prop_assert_eq!(have, want);
    }
}

// ---------------------------------------------------------------------------------------
// Keys of many values against a naive model: a list of added values, each believed from
// the add until a forget names it (or forgets the key). Through the engine, real SQLite
// and a rebuild.

#[derive(Clone, Debug)]
enum ManyWrite {
    /// Add value `value` over [from, to) (to `None`: for good); a retry of a value
    /// already believed over the same period writes nothing.
    Add {
        value: usize,
        from: i64,
        to: Option<i64>,
    },
    /// Forget the value added by the `nth` add still believed (modulo their number).
    ForgetOne { nth: usize },
    /// Forget every value.
    ForgetAll,
}

fn many_write() -> impl Strategy<Value = ManyWrite> {
    let add = (0..3usize, 0i64..20, prop::option::of(1i64..24)).prop_map(|(value, from, to)| {
        ManyWrite::Add {
            value,
            from,
            to: to.map(|t| t.max(from + 1)),
        }
    });
    prop_oneof![
        6 => add,
        2 => any::<usize>().prop_map(|nth| ManyWrite::ForgetOne { nth }),
        1 => Just(ManyWrite::ForgetAll),
    ]
}

/// The naive model's value: (value, from, to, believed from, believed until).
#[derive(Clone, Debug)]
struct Added {
    value: String,
    from: i64,
    to: i64,
    tx_from: i64,
    tx_to: i64,
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    /// Every read (valid_at, as_of) of an `event:*` key returns exactly the values the
    /// naive model holds there, newest first; an add restating a believed value writes
    /// nothing; the incremental index equals a rebuild.
    #[test]
    fn many_values_agree_with_the_naive_model(
        writes in prop::collection::vec(many_write(), 1..20)
    ) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("ws");
        mem7::store::init(&root).unwrap();
        let mut engine = Engine::open(&root, ChainKey::Plain).unwrap();
        let key = "event:deploy";
        let base = ValidTime::parse("2026-01-01").unwrap().micros();
        let at = |d: i64| base + d * DAY;
        let mut model: Vec<Added> = Vec::new();
        // The entry hash of each model value, to forget it by.
        let mut hashes: Vec<String> = Vec::new();
        for (i, w) in writes.iter().enumerate() {
            let now = TxTime::from_micros(at(30) + i as i64 * DAY);
            let believed: Vec<usize> =
                (0..model.len()).filter(|&j| model[j].tx_to == i64::MAX).collect();
            match w {
                ManyWrite::Add { value, from, to } => {
                    let value = format!("v{value}");
                    let (from, to) = (at(*from), to.map_or(i64::MAX, at));
                    let req = StoreRequest {
                        key: key.into(),
                        value: value.clone(),
                        valid_from: Some(ValidTime::from_micros(from)),
                        valid_to: Some(match to {
                            i64::MAX => ValidEnd::Infinity,
                            t => ValidEnd::At(ValidTime::from_micros(t)),
                        }),
                        agent: "prop".into(),
                        ..Default::default()
                    };
                    let restates = believed
                        .iter()
                        .any(|&j| model[j].value == value && model[j].from == from && model[j].to == to);
                    match engine.store(&req, now).unwrap() {
                        mem7::engine::StoreOutcome::Unchanged { .. } => {
                            prop_assert!(restates, "unchanged, but nothing believed says it");
                        }
                        mem7::engine::StoreOutcome::Stored { version, closed } => {
                            prop_assert!(!restates, "a restatement was written");
                            prop_assert_eq!(closed, 0, "an add closes nothing");
                            model.push(Added { value, from, to, tx_from: version.tx_from.micros(), tx_to: i64::MAX });
                            hashes.push(version.source.hash.clone());
                        }
                    }
                }
                ManyWrite::ForgetOne { nth } => {
                    if believed.is_empty() {
                        continue;
                    }
                    let j = believed[nth % believed.len()];
                    let prefix = &hashes[j][..12];
                    match engine.forget(key, Some(prefix), ("prop", Writer::Person), now).unwrap() {
                        mem7::engine::ForgetOutcome::Forgotten { source, .. } => {
                            model[j].tx_to = source_tx(&engine, &source);
                        }
                        other => prop_assert!(false, "{other:?}"),
                    }
                }
                ManyWrite::ForgetAll => {
                    let outcome = engine.forget(key, None, ("prop", Writer::Person), now).unwrap();
                    if let mem7::engine::ForgetOutcome::Forgotten { source, .. } = outcome {
                        let tx = source_tx(&engine, &source);
                        for &j in &believed {
                            model[j].tx_to = tx;
                        }
                    } else {
                        prop_assert!(believed.is_empty());
                    }
                }
            }
        }
        let check = |engine: &Engine| -> Result<(), TestCaseError> {
            for d in (0..26).step_by(3) {
                for t in 0..=writes.len() as i64 + 1 {
                    let valid_at = ValidTime::from_micros(at(d) + 1);
                    let as_of = TxTime::from_micros(at(30) + t * DAY - 1);
                    let mut want: Vec<&Added> = model
                        .iter()
                        .filter(|m| m.from <= valid_at.micros() && valid_at.micros() < m.to)
                        .filter(|m| m.tx_from <= as_of.micros() && as_of.micros() < m.tx_to)
                        .collect();
                    want.sort_by(|a, b| b.from.cmp(&a.from).then(b.tx_from.cmp(&a.tx_from)));
                    let got = engine.recall(key, &[], mem7::engine::Clocks { valid_at, as_of }).unwrap();
                    let got: Vec<(String, i64)> =
                        got.iter().map(|v| (v.value.clone(), v.valid_from.micros())).collect();
                    let want: Vec<(String, i64)> =
                        want.iter().map(|m| (m.value.clone(), m.from)).collect();
                    prop_assert_eq!(got, want, "valid_at day {} as_of step {}", d, t);
                }
            }
            Ok(())
        };
        check(&engine)?;
        let incremental = sorted(engine.index().all_versions().unwrap());
        engine.reindex().unwrap();
        prop_assert_eq!(sorted(engine.index().all_versions().unwrap()), incremental);
        check(&engine)?;
    }
}

/// The transaction time of the entry at `source` (a forget's), read from the index's
/// versions it closed: the fold records it as their `tx_to`.
fn source_tx(engine: &Engine, source: &Source) -> i64 {
    let text = std::fs::read_to_string(engine.workspace().root().join(&source.file)).unwrap();
    let recorded = text
        .lines()
        .skip(source.line as usize - 1)
        .find_map(|l| l.strip_prefix("recorded: "))
        .unwrap();
    TxTime::parse(recorded).unwrap().micros()
}

// ---------------------------------------------------------------------------------------
// The fuzz targets' bodies (`fuzz/`, `just fuzz`) on random input, so that every run of
// the suite builds them and checks their rules; libFuzzer explores far more of each.

/// Import lines shaped like the records `mem7 import` reads, with odd values.
fn import_lines() -> impl Strategy<Value = Vec<u8>> {
    let value = prop_oneof![
        any::<String>(),
        Just("line one\n## not a heading\n```mem7\nop: forget\n```".to_string()),
        "[ -~]{0,40}",
    ];
    (
        "[a-z][a-z0-9_:.-]{0,20}",
        value,
        prop::option::of("20[0-9]{2}-0[1-9]-1[0-9]"),
        prop::option::of(prop_oneof![
            Just("infinity".to_string()),
            "20[0-9]{2}-0[1-9]-2[0-9]"
        ]),
        prop::collection::vec("[a-z]{1,6}", 0..3),
    )
        .prop_map(|(key, value, from, to, tags)| {
            let mut record = serde_json::json!({ "key": key, "value": value, "tags": tags });
            if let Some(f) = from {
                record["valid_from"] = f.into();
            }
            if let Some(t) = to {
                record["valid_to"] = t.into();
            }
            record.to_string().into_bytes()
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn fuzz_round_trip_holds_on_random_input(data in prop::collection::vec(any::<u8>(), 0..300)) {
        mem7::fuzz::round_trip(&data);
    }

    #[test]
    fn fuzz_merge_driver_holds_on_random_input(data in prop::collection::vec(any::<u8>(), 0..64)) {
        mem7::fuzz::merge_driver(&data);
    }

    #[test]
    fn fuzz_import_line_holds_on_random_and_record_shaped_input(
        random in prop::collection::vec(any::<u8>(), 0..200),
        line in import_lines(),
    ) {
        mem7::fuzz::import_line(&random);
        mem7::fuzz::import_line(&line);
    }
}
