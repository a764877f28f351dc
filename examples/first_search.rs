//! The first search after a rebuild or a catch-up against a warm one, per search mode, as
//! whole `mem7 search` processes on a workspace made by `just gen`:
//!
//!     cargo run --release --example first_search -- DIR [CATCH_UP]
//!
//! Every version's text gets a deterministic synthetic vector in the embedding cache
//! (embedding a million texts with the model takes hours), and so does the query, so no
//! search runs the model. Then, for each mode (lexical, semantic, hybrid): `mem7
//! reindex`, the first search, the median of five warm ones; then CATCH_UP entries
//! (default 1000) appended to a memory file by hand (as `git pull` would bring them),
//! their vectors cached, the first search (which catches up) and the warm median. The
//! meaning modes are also timed with the vector file removed, which is how every first
//! search after a rebuild ran before vector files were carried across generations.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const MODEL: &str = "local/all-MiniLM-L6-v2";
const QUERY: &str = "deploy target railway";

fn mem7_bin() -> PathBuf {
    let exe = std::env::current_exe().expect("current exe");
    exe.parent()
        .and_then(Path::parent)
        .expect("target dir")
        .join("mem7")
}

/// Runs mem7 in `ws` with the local provider; returns the wall time.
fn run(ws: &Path, args: &[&str]) -> Duration {
    let started = Instant::now();
    let out = Command::new(mem7_bin())
        .args(args)
        .env("MEM7_WORKSPACE", ws)
        .env("MEM7_AGENT", "bench")
        .env("MEM7_EMBED_PROVIDER", "local")
        .output()
        .expect("run mem7");
    let took = started.elapsed();
    assert!(
        out.status.success(),
        "mem7 {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    took
}

fn search(ws: &Path, mode: &str) -> Duration {
    run(ws, &["search", QUERY, "--mode", mode])
}

fn warm(ws: &Path, mode: &str) -> Duration {
    let mut times: Vec<Duration> = (0..5).map(|_| search(ws, mode)).collect();
    times.sort();
    times[2]
}

/// A deterministic unit vector for a text hash.
fn synthetic(hash: &[u8; 32]) -> Vec<f32> {
    let mut x = u64::from_le_bytes(hash[..8].try_into().unwrap()) | 1;
    let mut v: Vec<f32> = (0..384)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % 2001) as f32 / 1000.0 - 1.0
        })
        .collect();
    mem7::embed::normalize(&mut v);
    v
}

fn cache(ws: &Path) -> mem7::index::embeddings::EmbeddingCache {
    let dir = ws.join(".mem7");
    mem7::index::embeddings::EmbeddingCache::open(&dir).expect("open the cache")
}

/// Caches a vector for every version's text that has none, and for the query.
fn cache_everything(ws: &Path) -> usize {
    let engine = mem7::engine::Engine::open(ws, mem7::core::chain::ChainKey::Plain).expect("open");
    let mut hashes = std::collections::BTreeSet::new();
    engine
        .index()
        .for_each_text(&mut |k, v| {
            hashes.insert(mem7::index::vectors::text_hash(k, v));
        })
        .expect("texts");
    drop(engine);
    let mut cache = cache(ws);
    let have = cache.hashes_for(MODEL).expect("hashes");
    let items: Vec<([u8; 32], Vec<f32>)> = hashes
        .into_iter()
        .filter(|h| !have.contains(h))
        .map(|h| (h, synthetic(&h)))
        .collect();
    for chunk in items.chunks(10_000) {
        cache.put_many(MODEL, chunk).expect("cache vectors");
    }
    let q = *blake3::hash(QUERY.as_bytes()).as_bytes();
    cache
        .put(QUERY, MODEL, &synthetic(&q))
        .expect("cache the query");
    items.len()
}

/// Appends `n` entries by hand to the last memory file, recorded after everything else
/// (the `round` keeps keys and times apart between calls); caches their vectors.
fn append_by_hand(ws: &Path, n: usize, round: usize) {
    let mut files: Vec<PathBuf> = std::fs::read_dir(ws.join("memory"))
        .expect("memory/")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    files.sort();
    let file = files.last().expect("a memory file");
    let mut text = String::new();
    let mut items = Vec::new();
    // Far in the future, and later on each run (a catch-up applies only entries that
    // sort after those indexed; an earlier one makes it a rebuild).
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let start = mem7::core::time::ValidTime::parse("2400-01-01")
        .unwrap()
        .micros();
    for i in 0..n {
        let key = format!("caught{now}.round{round}.up{i}");
        let value = format!("a fact brought in by a pull, number {i} of round {round}");
        // Seconds after 2400 (later than any probe by hand): 4 rounds a run at most, `n` entries each.
        let at = ((now - 1_796_000_000) * 4 + round as i64) * n as i64 + i as i64;
        let recorded = mem7::core::time::TxTime::from_micros(start + at * 1_000_000);
        text.push_str(&format!(
            "\n## {key}\n\n```mem7\nop: store\nrecorded: {recorded}\nagent: a person\n```\n\n> {value}\n\n---\n"
        ));
        let hash = mem7::index::vectors::text_hash(&key, &value);
        items.push((hash, synthetic(&hash)));
    }
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(file)
        .expect("open the memory file");
    f.write_all(text.as_bytes()).expect("append");
    cache(ws).put_many(MODEL, &items).expect("cache vectors");
}

fn remove_vector_files(ws: &Path) {
    for e in std::fs::read_dir(ws.join(".mem7")).unwrap().flatten() {
        if e.file_name().to_string_lossy().contains(".vectors-") {
            std::fs::remove_file(e.path()).unwrap();
        }
    }
}

fn ms(d: Duration) -> String {
    format!("{:.0} ms", d.as_secs_f64() * 1000.0)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(ws) = args.first().map(PathBuf::from) else {
        eprintln!("usage: first_search DIR [CATCH_UP]");
        std::process::exit(2);
    };
    let catch_up: usize = args.get(1).map_or(1000, |n| n.parse().expect("CATCH_UP"));
    let cached = cache_everything(&ws);
    eprintln!("cached {cached} new vectors");
    // A vector file for the current generation, so that the first reindex has one to carry.
    search(&ws, "semantic");
    println!("| mode | first after reindex | warm | first after catch-up of {catch_up} | warm |");
    println!("|---|---|---|---|---|");
    let mut round = 0;
    for mode in ["lexical", "semantic", "hybrid"] {
        let reindex = run(&ws, &["reindex"]);
        let first = search(&ws, mode);
        let warm_rebuilt = warm(&ws, mode);
        round += 1;
        append_by_hand(&ws, catch_up, round);
        let first_caught = search(&ws, mode);
        let warm_caught = warm(&ws, mode);
        println!(
            "| {mode} | {} | {} | {} | {} |",
            ms(first),
            ms(warm_rebuilt),
            ms(first_caught),
            ms(warm_caught)
        );
        eprintln!("(reindex took {})", ms(reindex));
    }
    // Without a vector file: how the first meaning search after a rebuild ran before.
    for mode in ["semantic", "hybrid"] {
        remove_vector_files(&ws);
        let first = search(&ws, mode);
        println!(
            "| {mode}, no vector file (assembled from the cache) | {} | | | |",
            ms(first)
        );
    }
}
