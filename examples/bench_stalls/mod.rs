//! `just bench`'s stall measures (issue 36, "no stalls"): a long-lived `mem7 mcp` session
//! with the local model on, driven over its standard input and output by a minimal
//! JSON-RPC client (no SDK in the way: the times are the server's and the pipe's).
//!
//! At each size: a workspace of N facts with keys made of words
//! (`PROJECT:ENTITY_ATTRIBUTE`, as `scripts/bench_mcp_stalls.py` makes them), then
//! - `memory_store` (a plain change of a key) while the background vector fill runs, on
//!   the workspace without vectors: median, p99, max (60 stores at 100k and over, else
//!   200, 10 ms apart, after 2 s and one untimed call of each tool);
//! - a store of a new key sharing words with existing keys, with every version's and
//!   key's vector cached (synthetic vectors under the local model's name: `mem7 embed`
//!   of 100k facts takes most of an hour), each beside a plain change (its baseline);
//! - the first `memory_search` after 100 stores at once against a warm one (10 bursts);
//! - a `memory_search` right after one store against a warm one (20 turns, before the
//!   bursts, once the fill has caught up).
//!
//! Skipped without the local model (`just model`). Not in CI (`.ci/run` runs no bench).
//! `scripts/bench-mcp --stalls` measures the same through the Python SDK, alternating
//! binaries.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const PROJECTS: &str = "acme atlas beacon cedar delta ember falcon garnet harbor indigo juniper \
    kestrel lumen maple nimbus onyx orchid pioneer quartz raven sierra tundra umber vertex willow \
    yonder zephyr aurora basalt cobalt dune fjord glacier heron iris jasper kelp lotus mesa nova";
const ENTITIES: &str = "payments deploy database cache ci auth frontend api queue search billing \
    mobile release docs infra monitoring storage network email support analytics backup \
    scheduler gateway ledger inventory catalog checkout profile session";
const ATTRIBUTES: &str = "owner host region timeout provider version port budget schedule \
    retention replicas endpoint format language limit window policy channel contact threshold \
    quota runtime bucket cluster zone tier plan framework branch target";
/// Attribute words no drift thesaurus knows: a new key made with one is judged by meaning.
const RARE: &str = "custodian steward overseer liaison curator guardian arbiter warden marshal \
    sentinel herald envoy scribe keeper pilot navigator anchor compass lantern harness";
const FILLER: &str = "the team keeps it in the main service for now and checks it every week \
    before the release so nobody forgets what changed when on call";

fn words(s: &str) -> Vec<&str> {
    s.split_whitespace().collect()
}

fn key_of(i: usize) -> String {
    let (p, e, a) = (words(PROJECTS), words(ENTITIES), words(ATTRIBUTES));
    let block = p.len() * e.len() * a.len();
    let round = if i >= block {
        (i / block).to_string()
    } else {
        String::new()
    };
    format!(
        "{}{round}:{}_{}",
        p[i % p.len()],
        e[(i / p.len()) % e.len()],
        a[(i / (p.len() * e.len())) % a.len()]
    )
}

/// Writes a workspace of `n` facts into `root` (imported, full-text index built).
fn make_workspace(bin: &Path, root: &Path, n: usize) {
    let filler = words(FILLER);
    let run = |args: &[&str]| {
        let out = Command::new(bin)
            .args(args)
            .env("MEM7_WORKSPACE", root)
            .env("MEM7_EMBED_PROVIDER", "none")
            .output()
            .expect("run mem7");
        assert!(out.status.success(), "mem7 {args:?}: {out:?}");
    };
    let out = Command::new(bin)
        .arg("init")
        .arg(root)
        .output()
        .expect("init");
    assert!(out.status.success(), "init: {out:?}");
    let file = root.with_extension("jsonl");
    let mut w = std::io::BufWriter::new(std::fs::File::create(&file).expect("jsonl"));
    for i in 0..n {
        let v: Vec<&str> = (0..8 + i % 8)
            .map(|j| filler[(i * 31 + j * 7) % filler.len()])
            .collect();
        let line = json!({"key": key_of(i), "value": format!("{} service ref{i}", v.join(" ")),
            "recorded": "2026-01-01T00:00:00Z"});
        writeln!(w, "{line}").expect("write");
    }
    drop(w);
    run(&["import", file.to_str().unwrap()]);
    std::fs::remove_file(&file).ok();
    run(&["search", "service", "--mode", "lexical"]);
}

/// Caches a synthetic vector under the local model's name for every version's texts and
/// every key's own text, as `mem7 embed` would with the model (the vectors' values do
/// not matter to these timings).
fn cache_every_vector(root: &Path, model_id: &str) {
    let engine =
        mem7::engine::Engine::open(root, mem7::core::chain::ChainKey::Plain).expect("open");
    let dir = engine.workspace().index_dir().expect("index dir");
    let mut cache = mem7::index::embeddings::EmbeddingCache::open(&dir).expect("cache");
    let mut hashes = std::collections::BTreeSet::new();
    let sentences = mem7::config::SearchSettings::default().sentences();
    engine
        .index()
        .for_each_text(&mut |k, v| {
            hashes.extend(mem7::index::vectors::Texts::of(0, k, v, sentences).hashes());
            let key = mem7::index::vectors::key_text(k);
            hashes.insert(*blake3::hash(key.as_bytes()).as_bytes());
        })
        .expect("texts");
    let items: Vec<([u8; 32], Vec<f32>)> = hashes
        .into_iter()
        .map(|h| (h, super::synthetic_vector(&h, 384)))
        .collect();
    for chunk in items.chunks(10_000) {
        cache.put_many(model_id, chunk).expect("cache vectors");
    }
}

/// A `mem7 mcp` child and the next request id.
struct Session {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
    id: u64,
}

impl Session {
    fn start(bin: &Path, root: &Path) -> Session {
        let mut child = Command::new(bin)
            .arg("mcp")
            .env("MEM7_WORKSPACE", root)
            .env("MEM7_AGENT", "bench")
            .env("MEM7_EMBED_PROVIDER", "local")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("mem7 mcp");
        let input = child.stdin.take().unwrap();
        let output = BufReader::new(child.stdout.take().unwrap());
        let mut s = Session {
            child,
            input,
            output,
            id: 0,
        };
        s.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "mem7-bench", "version": "0"}}),
        );
        s.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        s
    }

    fn send(&mut self, v: &Value) {
        writeln!(self.input, "{v}").expect("write to mem7 mcp");
        self.input.flush().expect("flush");
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        self.id += 1;
        let id = self.id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let mut line = String::new();
        loop {
            line.clear();
            let n = self.output.read_line(&mut line).expect("read mem7 mcp");
            assert!(n > 0, "mem7 mcp ended");
            let v: Value = serde_json::from_str(&line).expect("a JSON line");
            if v.get("id").and_then(Value::as_u64) == Some(id) {
                assert!(v.get("error").is_none(), "{method}: {v}");
                return v;
            }
        }
    }

    /// One tool call, timed from the request written to the answer read.
    fn call(&mut self, tool: &str, args: Value) -> Duration {
        let t = Instant::now();
        let v = self.request("tools/call", json!({"name": tool, "arguments": args}));
        let took = t.elapsed();
        assert!(v["result"]["isError"] != json!(true), "{tool}: {v}");
        took
    }

    /// The first call of each tool, untimed (it pays for things a long session pays once).
    fn warm_up(&mut self) {
        self.call(
            "memory_store",
            json!({"key": "bench:warm_up", "value": "warm"}),
        );
        self.call("memory_recall", json!({"key": key_of(1)}));
        self.call("memory_search", json!({"query": "warm up"}));
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn copy_dir(from: &Path, to: &Path) {
    let ok = Command::new("cp")
        .arg("-a")
        .arg(from)
        .arg(to)
        .status()
        .expect("cp");
    assert!(ok.success(), "cp -a {} {}", from.display(), to.display());
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn median(xs: &[Duration]) -> f64 {
    let mut v: Vec<f64> = xs.iter().map(|d| ms(*d)).collect();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn p99(xs: &[Duration]) -> f64 {
    let mut v: Vec<f64> = xs.iter().map(|d| ms(*d)).collect();
    v.sort_by(f64::total_cmp);
    v[(v.len() * 99 / 100).min(v.len() - 1)]
}

/// The stall measures at `n` facts, in `scratch`.
pub fn bench(bin: &Path, scratch: &Path, n: usize) {
    let env = mem7::embed::EmbedEnv::from_process();
    let settings = mem7::embed::EmbedSettings {
        provider: Some("local".into()),
        ..Default::default()
    };
    let Ok(mem7::embed::Resolved::On(spec)) = mem7::embed::resolve(&settings, &env) else {
        println!("\n(stalls not measured: the local model does not resolve; `just model`)");
        return;
    };
    if !mem7::embed::local::is_present(&spec.model_dir) {
        println!("\n(stalls not measured: no local model; `just model`)");
        return;
    }
    let bare = scratch.join(format!("stalls{n}-bare"));
    make_workspace(bin, &bare, n);
    let filled = scratch.join(format!("stalls{n}-filled"));
    copy_dir(&bare, &filled);
    cache_every_vector(&filled, &spec.id());
    println!("\n### Stalls at {n} facts (`mem7 mcp`, local model)\n");
    println!("| measure | ms |\n|---|--:|");

    // A store while the fill runs (nothing cached: the fill has the whole workspace).
    let ws = scratch.join("stalls-run");
    copy_dir(&bare, &ws);
    let mut s = Session::start(bin, &ws);
    s.warm_up();
    std::thread::sleep(Duration::from_secs(2));
    let count = if n >= 100_000 { 60 } else { 200 };
    let fill: Vec<Duration> = (0..count)
        .map(|i| {
            let took = s.call(
                "memory_store",
                json!({"key": key_of((i * 7919) % n), "value": format!("changed {i} zz{i}")}),
            );
            std::thread::sleep(Duration::from_millis(10));
            took
        })
        .collect();
    drop(s);
    std::fs::remove_dir_all(&ws).ok();
    println!(
        "| `memory_store` while the fill runs, median / p99 / max ({count}) | {:.1} / {:.1} / {:.1} |",
        median(&fill),
        p99(&fill),
        fill.iter().map(|d| ms(*d)).fold(0.0, f64::max)
    );

    // New keys sharing words, every vector cached; then the first search after bursts.
    copy_dir(&filled, &ws);
    let mut s = Session::start(bin, &ws);
    s.warm_up();
    let (rare, entities, projects) = (words(RARE), words(ENTITIES), words(PROJECTS));
    let (mut new, mut plain) = (Vec::new(), Vec::new());
    for i in 0..100 {
        let key = format!(
            "{}:{}_{}{}",
            projects[(i * 7) % projects.len()],
            entities[(i * 11) % entities.len()],
            rare[(i * 3) % rare.len()],
            if i % 2 == 1 {
                format!("_{i}")
            } else {
                String::new()
            }
        );
        new.push(s.call(
            "memory_store",
            json!({"key": key, "value": format!("new slot {i}")}),
        ));
        plain.push(s.call(
            "memory_store",
            json!({"key": key_of((i * 104_729) % n), "value": format!("plain {i}")}),
        ));
    }
    println!(
        "| store of a new key sharing words, median / p99 (a plain change beside it, median) | {:.1} / {:.1} ({:.1}) |",
        median(&new),
        p99(&new),
        median(&plain)
    );
    let q = json!({"query": "release schedule for the payments team"});
    std::thread::sleep(Duration::from_secs(1));
    for _ in 0..3 {
        s.call("memory_search", q.clone());
    }
    let warm: Vec<Duration> = (0..20)
        .map(|_| s.call("memory_search", q.clone()))
        .collect();
    // An agent's usual turn, once the fill has caught up: one store, then a search (it
    // embeds the new fact's texts itself, beside the full-text commit).
    std::thread::sleep(Duration::from_secs(3));
    let mut after_one = Vec::new();
    for r in 0..20 {
        s.call(
            "memory_store",
            json!({"key": format!("turn{r}:owner"), "value": format!("team {r} owns the payments release {r}")}),
        );
        after_one.push(s.call("memory_search", q.clone()));
        std::thread::sleep(Duration::from_millis(300));
    }
    let mut first = Vec::new();
    for r in 0..10 {
        for i in 0..100 {
            s.call(
                "memory_store",
                json!({"key": format!("burst{r}:fact{i}"), "value": format!("burst value {r} {i}")}),
            );
        }
        first.push(s.call("memory_search", q.clone()));
        std::thread::sleep(Duration::from_millis(300));
    }
    drop(s);
    std::fs::remove_dir_all(&ws).ok();
    println!(
        "| first `memory_search` after 100 stores / a warm one | {:.1} / {:.1} = {:.2}x |",
        median(&first),
        median(&warm),
        median(&first) / median(&warm)
    );
    println!(
        "| `memory_search` right after one store / a warm one | {:.1} / {:.1} = {:.2}x |",
        median(&after_one),
        median(&warm),
        median(&after_one) / median(&warm)
    );
}
