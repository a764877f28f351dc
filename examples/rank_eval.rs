//! `just rank-eval`: how well each search mode ranks, on a small labelled set of the
//! facts a coding agent keeps, with queries written the way people ask (some share the
//! fact's words, most paraphrase them). Reports the mean reciprocal rank (MRR) and the
//! share of queries whose fact is first and in the top 5, for words only, meaning only,
//! and hybrid with several reciprocal-rank-fusion constants.
//!
//!     cargo run --release --example rank_eval
//!
//! Needs the local model (`just model`). The set is hand-made, not real conversations:
//! read the numbers as a comparison between modes, not as absolute quality. It lives in
//! `examples/data/labelled.json`, which `just eval` scores too.

#[path = "eval/labelled.rs"]
mod labelled;

use std::path::Path;

use mem7::core::time::{TxTime, ValidTime};
use mem7::embed::{EmbedEnv, EmbedSettings, Resolved};
use mem7::engine::{Engine, StoreRequest, fuse};
use mem7::index::SearchHit;
use mem7::index::fulltext::{SearchMode, SearchRequest};

const POOL: usize = 30;
const LIMIT: usize = 10;

/// The meaning side's hits for `text` (the pool), at the evaluation's clocks.
fn by_meaning(
    engine: &mut Engine,
    text: String,
    valid_at: ValidTime,
    as_of: TxTime,
) -> Vec<SearchHit> {
    engine
        .search(&SearchRequest {
            text,
            raw: false,
            valid_at,
            as_of,
            tags: Vec::new(),
            key_prefix: None,
            limit: POOL,
            mode: SearchMode::Semantic,
        })
        .expect("semantic")
}

/// The rank of the first hit that is one of the query's expected keys.
fn rank_of(hits: &[SearchHit], expect: &[String]) -> Option<usize> {
    hits.iter()
        .position(|h| expect.contains(&h.version.key))
        .map(|i| i + 1)
}

#[derive(Default)]
struct Score {
    rr: f64,
    first: usize,
    top5: usize,
}

impl Score {
    fn add(&mut self, rank: Option<usize>) {
        if let Some(r) = rank.filter(|r| *r <= LIMIT) {
            self.rr += 1.0 / r as f64;
            self.first += (r == 1) as usize;
            self.top5 += (r <= 5) as usize;
        }
    }
    fn row(&self, name: &str, queries: usize) {
        let n = queries as f64;
        println!(
            "| {name} | {:.3} | {:.0}% | {:.0}% |",
            self.rr / n,
            100.0 * self.first as f64 / n,
            100.0 * self.top5 as f64 / n
        );
    }
}

fn main() {
    let set = labelled::load(&labelled::default_path()).unwrap_or_else(|e| {
        eprintln!("rank_eval: {e}");
        std::process::exit(2);
    });
    let dir = tempfile::tempdir().expect("tempdir");
    let root: &Path = &dir.path().join("ws");
    mem7::store::init(root).expect("init");
    // Every meaning hit, however far: the floor is what this measures.
    std::fs::write(root.join("mem7.yaml"), "search:\n  min_similarity: 0\n").expect("mem7.yaml");
    let mut engine = Engine::open(root, mem7::core::chain::ChainKey::Plain).expect("open");
    let now = TxTime::parse("2026-01-01T00:00:00Z").unwrap();
    for (i, fact) in set.facts.iter().enumerate() {
        let req = StoreRequest {
            key: fact.key.clone(),
            value: fact.value.clone(),
            tags: Vec::new(),
            agent: "eval".into(),
            valid_from: None,
            valid_to: None,
            allow_secret: false,
            tier: None,
            by: mem7::core::Writer::Person,
        };
        let at = TxTime::from_micros(now.micros() + i as i64);
        engine.store(&req, at).expect("store");
    }
    let resolved = mem7::embed::resolve(
        &EmbedSettings {
            provider: Some("local".into()),
            ..Default::default()
        },
        &EmbedEnv::from_process(),
    )
    .expect("resolve");
    if let Resolved::On(spec) = &resolved
        && !mem7::embed::local::is_present(&spec.model_dir)
    {
        eprintln!(
            "rank_eval needs the local model in {}: run `just model`",
            spec.model_dir.display()
        );
        std::process::exit(2);
    }
    engine.set_embeddings(resolved);
    engine.fill_embeddings(None, &mut |_, _| {}).expect("embed");

    let ks = [1.0, 5.0, 10.0, 20.0, 30.0, 60.0, 100.0];
    let (mut lexical, mut semantic) = (Score::default(), Score::default());
    let mut hybrid: Vec<Score> = ks.iter().map(|_| Score::default()).collect();
    let valid_at = ValidTime::parse("2026-06-01").unwrap();
    let as_of = TxTime::parse("2026-06-01T00:00:00Z").unwrap();
    let mut relevant: Vec<f32> = Vec::new();
    for q in &set.queries {
        let req = |mode| SearchRequest {
            text: q.query.clone(),
            raw: false,
            valid_at,
            as_of,
            tags: Vec::new(),
            key_prefix: None,
            limit: POOL,
            mode,
        };
        let words = engine.search(&req(SearchMode::Lexical)).expect("lexical");
        let meaning = engine.search(&req(SearchMode::Semantic)).expect("semantic");
        if let Some(hit) = meaning.iter().find(|h| q.expect.contains(&h.version.key)) {
            relevant.push(hit.similarity.unwrap_or(0.0));
        }
        lexical.add(rank_of(&words, &q.expect));
        semantic.add(rank_of(&meaning, &q.expect));
        for (k, score) in ks.iter().zip(hybrid.iter_mut()) {
            let fused = fuse(words.clone(), meaning.clone(), *k, LIMIT);
            score.add(rank_of(&fused, &q.expect));
        }
    }
    let paraphrases = set
        .queries
        .iter()
        .filter(|q| q.category == "paraphrase")
        .count();
    println!(
        "{} facts, {} queries ({paraphrases} paraphrases); the fact's rank in the top {LIMIT} \
         (each side contributes {POOL})",
        set.facts.len(),
        set.queries.len()
    );
    println!("| mode | MRR@{LIMIT} | first | top 5 |");
    println!("|---|---|---|---|");
    let n = set.queries.len();
    lexical.row("lexical (BM25)", n);
    semantic.row("semantic (all-MiniLM-L6-v2)", n);
    for (k, score) in ks.iter().zip(&hybrid) {
        score.row(&format!("hybrid, rrf_k = {k}"), n);
    }

    // The floor: for each candidate, the share of labelled queries whose fact stays a
    // meaning hit, and the share of unrelated questions that get no meaning hit at all.
    let mut noise: Vec<f32> = Vec::new();
    for query in &set.unrelated {
        let hits = by_meaning(&mut engine, query.clone(), valid_at, as_of);
        noise.push(hits.first().and_then(|h| h.similarity).unwrap_or(0.0));
    }
    println!();
    println!(
        "The floor under meaning-only hits ({} labelled queries, {} unrelated questions; \
         cosine similarity of the labelled fact, and of the nearest fact to an unrelated question)",
        relevant.len(),
        noise.len()
    );
    println!("| floor | labelled facts kept | unrelated questions answered with nothing |");
    println!("|---|---|---|");
    for floor in [
        0.10f32, 0.15, 0.20, 0.25, 0.28, 0.29, 0.30, 0.35, 0.40, 0.45, 0.50,
    ] {
        let kept = relevant.iter().filter(|&&s| s >= floor).count();
        let silent = noise.iter().filter(|&&s| s < floor).count();
        println!(
            "| {floor:.2} | {kept}/{} ({:.0}%) | {silent}/{} ({:.0}%) |",
            relevant.len(),
            100.0 * kept as f64 / relevant.len().max(1) as f64,
            noise.len(),
            100.0 * silent as f64 / noise.len().max(1) as f64
        );
    }
    let mut sorted = noise.clone();
    sorted.sort_by(f32::total_cmp);
    println!("nearest similarity of each unrelated question: {sorted:.3?}");
    let mut rel = relevant.clone();
    rel.sort_by(f32::total_cmp);
    println!("similarity of each labelled fact: {rel:.3?}");

    // The threshold for a new slot: how near a new key and value, embedded together as
    // meaning search embeds versions, are to the slot they belong in, and to the
    // nearest existing fact when they belong nowhere.
    let (mut same, mut other) = (Vec::new(), Vec::new());
    for new in &set.new_slots {
        let hits = by_meaning(
            &mut engine,
            mem7::embed::version_text(&new.key, &new.value),
            valid_at,
            as_of,
        );
        let key = new.key.as_str();
        match &new.belongs {
            Some(slot) => same.push((
                key,
                hits.iter()
                    .find(|h| h.version.key == *slot)
                    .and_then(|h| h.similarity)
                    .unwrap_or(0.0),
            )),
            None => other.push((key, hits.first().and_then(|h| h.similarity).unwrap_or(0.0))),
        }
    }
    println!();
    println!(
        "New slots: similarity of a new key and value to the slot it belongs in, and of a new fact to its nearest existing one"
    );
    println!("belongs in a slot: {same:.3?}");
    println!("belongs nowhere:   {other:.3?}");
    for t in [0.35f32, 0.40, 0.45, 0.50, 0.55] {
        let found = same.iter().filter(|(_, s)| *s >= t).count();
        let quiet = other.iter().filter(|(_, s)| *s < t).count();
        println!(
            "| {t:.2} | {found}/{} look-alikes named | {quiet}/{} new facts left alone |",
            same.len(),
            other.len()
        );
    }
}
