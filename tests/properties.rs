//! Property tests for the risky parts: the temporal fold against a naive reference model,
//! the index's incremental path against a full rebuild, and the markdown round trip.

use mem7::core::chain::{ChainHash, ChainKey};
use mem7::core::fold::fold_all;
use mem7::core::temporal::{self, Period};
use mem7::core::time::{TxTime, ValidTime};
use mem7::core::{Event, Op, Source, StoreOp, ValidEnd, Version};
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
                        let core = temporal::confirmation(&periods_of(&believed), TxTime::from_micros(tx), |j| &believed[j].value == value).is_some();
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
                        }),
                        source,
                    };
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
                    let ev = Event { tx: TxTime::from_micros(tx), op: Op::Forget { key: KEYS[*key].into() }, source };
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
                    };
                    // Empty periods are refused; everything else is written or confirmed.
                    let _ = engine.store(&req, now);
                }
                Write::Forget { key } => {
                    engine.forget(&format!("key{key}"), "prop", now).unwrap();
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
        op: "store",
        valid_from: Some(ValidTime::from_micros(recorded)),
        valid_to: None,
        recorded: TxTime::from_micros(recorded),
        agent: "prop",
        tags: &[],
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
