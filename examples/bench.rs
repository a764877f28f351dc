//! `just bench`: builds synthetic workspaces and times the release binary as whole
//! processes (median of repeated runs), at each size given on the command line.
//!
//!     cargo run --release --example bench -- 10000 100000
//!     cargo run --release --example bench -- --gen-only 100000 /tmp/ws100k
//!     cargo run --release --example bench -- --meaning /tmp/ws100k
//!
//! `--meaning DIR` runs only the meaning-search measures, on a workspace made by
//! `--gen-only` (it caches synthetic vectors in that workspace's index).
//!
//! After each size's table come the stall measures of a long-lived `mem7 mcp` session
//! (`bench_stalls/mod.rs`; with the local model); `--no-stalls` leaves them out,
//! `--stalls-only` runs only them; `MEM7_BENCH_BIN=PATH` times another binary there (an
//! older build, to alternate with).
//!
//! Sizes count versions: each generated key is stored twice (open-ended), which yields
//! three versions (the first, its remnant, the second), so N versions take 2N/3 entries.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use mem7::core::time::{TxTime, ValidTime};

#[path = "bench_stalls/mod.rs"]
mod stalls;

const ENTRIES_PER_DAY: usize = 500;
const WORDS: &[&str] = &[
    "deploy",
    "target",
    "railway",
    "cloudflare",
    "postgres",
    "staging",
    "prod",
    "cache",
    "user",
    "prefers",
    "short",
    "answers",
    "ticket",
    "review",
    "branch",
    "merge",
    "latency",
    "budget",
    "owner",
    "team",
    "service",
    "region",
    "europe",
    "queue",
    "worker",
    "retry",
    "timeout",
    "secretless",
    "config",
    "feature",
    "flag",
];

/// A small deterministic PRNG (xorshift), so runs are comparable.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn sentence(&mut self, words: usize) -> String {
        (0..words)
            .map(|_| WORDS[(self.next() % WORDS.len() as u64) as usize])
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// Writes a workspace holding about `versions` versions through `mem7 import`; returns
/// the number of entries, how long the import took and its peak memory (KiB, 0 without
/// GNU time). The input is written to a file as it is generated, never held whole.
fn generate(versions: usize, root: &Path) -> (usize, Duration, u64) {
    use std::io::Write;
    if root.exists() {
        std::fs::remove_dir_all(root).expect("remove old workspace");
    }
    mem7::store::init(root).expect("init");
    let keys = versions.div_ceil(3);
    let entries = keys * 2;
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let start = ValidTime::parse("2024-01-01").unwrap().micros();
    let tags = ["[\"infra\"]", "[\"user\", \"prefs\"]", "[]"];
    let file = root.with_extension("jsonl");
    let mut jsonl = std::io::BufWriter::new(std::fs::File::create(&file).expect("create jsonl"));
    for i in 0..entries {
        let key_no = if i < keys { i } else { i - keys };
        let recorded = TxTime::from_micros(
            start
                + (i / ENTRIES_PER_DAY) as i64 * 86_400_000_000
                + (i % ENTRIES_PER_DAY) as i64 * 1_000_000,
        );
        let words = 20 + (rng.next() % 20) as usize;
        let value = format!("{} {}", rng.sentence(words), key_no);
        writeln!(
            jsonl,
            "{{\"key\":\"project{}:fact{}\",\"value\":\"{}\",\"tags\":{},\"agent\":\"bench\",\"recorded\":\"{}\"}}",
            key_no % 97,
            key_no,
            value,
            tags[key_no % 3],
            recorded
        )
        .expect("write jsonl");
    }
    jsonl.flush().expect("write jsonl");
    drop(jsonl);
    let (took, peak_kb) = timed_peak(root, &["import", file.to_str().unwrap()]);
    let _ = std::fs::remove_file(&file);
    (entries, took, peak_kb)
}

fn mem7_bin() -> PathBuf {
    let exe = std::env::current_exe().expect("current exe");
    // target/release/examples/bench → target/release/mem7
    exe.parent()
        .and_then(Path::parent)
        .expect("target dir")
        .join("mem7")
}

/// Runs mem7 with words-only search (the embedding benchmarks opt in with `run_with`).
fn run(ws: &Path, args: &[&str]) -> Duration {
    run_with(ws, args, &[("MEM7_EMBED_PROVIDER", "none")])
}

fn run_with(ws: &Path, args: &[&str], vars: &[(&str, &str)]) -> Duration {
    let started = Instant::now();
    let mut cmd = Command::new(mem7_bin());
    for (k, v) in vars {
        cmd.env(k, v);
    }
    let out = cmd
        .args(args)
        .env("MEM7_WORKSPACE", ws)
        .env("MEM7_AGENT", "bench")
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

/// `mem7 hook claude-code` with one PostToolUse event (an Edit of file `i`) on standard
/// input, as Claude Code runs it after every edit: the whole process's time.
fn hook_post_tool_use(ws: &Path, i: usize) -> Duration {
    use std::io::Write;
    let payload = format!(
        r#"{{"session_id":"bench-session","transcript_path":"/dev/null","cwd":"{}","hook_event_name":"PostToolUse","tool_name":"Edit","tool_input":{{"file_path":"src/bench{i}.rs","old_string":"a","new_string":"b"}},"tool_response":{{"filePath":"src/bench{i}.rs","success":true}}}}"#,
        ws.display()
    );
    let started = Instant::now();
    let mut child = Command::new(mem7_bin())
        .args(["hook", "claude-code"])
        .env("MEM7_WORKSPACE", ws)
        .env("MEM7_AGENT", "bench")
        .env("MEM7_EMBED_PROVIDER", "none")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("run mem7 hook");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(payload.as_bytes())
        .expect("write the payload");
    let status = child.wait().expect("wait for mem7 hook");
    let took = started.elapsed();
    assert!(status.success(), "a hook exits 0");
    took
}

/// The slowest of five PostToolUse hooks while another process holds the writers' lock
/// (as a long import does): a hook spools instead of waiting.
fn hook_with_the_lock_held(ws: &Path) -> Duration {
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(ws.join(".mem7/lock"))
        .expect("open the lock file");
    lock.lock().expect("take the writers' lock");
    let worst = (0..5)
        .map(|i| hook_post_tool_use(ws, 1000 + i))
        .max()
        .unwrap_or_default();
    drop(lock);
    worst
}

/// Median latency of a search with time filters, inside one process (the engine kept
/// open, as the MCP server will).
fn search_in_process(ws: &Path) -> Duration {
    let mut engine =
        mem7::engine::Engine::open(ws, mem7::core::chain::ChainKey::Plain).expect("open");
    let valid_at = ValidTime::parse("2024-06-01").unwrap();
    let as_of = TxTime::parse("2030-01-01T00:00:00Z").unwrap();
    let mut times = Vec::new();
    for i in 0..100 {
        let req = mem7::index::fulltext::SearchRequest {
            text: format!(
                "{} {}",
                WORDS[i % WORDS.len()],
                WORDS[(i * 7) % WORDS.len()]
            ),
            raw: false,
            valid_at,
            as_of,
            tags: Vec::new(),
            key_prefix: None,
            limit: 10,
            mode: mem7::index::fulltext::SearchMode::Lexical,
        };
        let t = Instant::now();
        engine.search(&req).expect("search");
        times.push(t.elapsed());
    }
    median(times)
}

/// Wall time and peak resident memory (KiB) of one words-only run, the memory from GNU
/// time (`/usr/bin/time -v`; 0 when it is not installed).
fn timed_peak(ws: &Path, args: &[&str]) -> (Duration, u64) {
    let started = Instant::now();
    let out = Command::new("/usr/bin/time")
        .arg("-v")
        .arg(mem7_bin())
        .args(args)
        .env("MEM7_WORKSPACE", ws)
        .env("MEM7_AGENT", "bench")
        .env("MEM7_EMBED_PROVIDER", "none")
        .output();
    let took = started.elapsed();
    let Ok(out) = out else {
        return (run(ws, args), 0);
    };
    assert!(
        out.status.success(),
        "mem7 {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let peak = String::from_utf8_lossy(&out.stderr)
        .lines()
        .find_map(|l| l.trim().strip_prefix("Maximum resident set size (kbytes):"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    (took, peak)
}

/// 32 writers storing at once, each its own process, three rounds: the median and the
/// 99th percentile of one store's whole-process time.
fn concurrent_stores(ws: &Path) -> (Duration, Duration) {
    let mut times = Vec::new();
    for round in 0..3 {
        let handles: Vec<_> = (0..32)
            .map(|w| {
                let ws = ws.to_path_buf();
                std::thread::spawn(move || {
                    run(
                        &ws,
                        &[
                            "store",
                            &format!("writer{w}:round{round}"),
                            &format!("value {w} {round}"),
                        ],
                    )
                })
            })
            .collect();
        times.extend(handles.into_iter().map(|h| h.join().expect("writer")));
    }
    times.sort();
    let p = |q: f64| times[((times.len() as f64 * q) as usize).min(times.len() - 1)];
    (p(0.5), p(0.99))
}

/// Median whole-process time of `b3sum` over the same memory files (the day files, in
/// name order, as `verify` reads them), if installed; `threads` as `--num-threads`
/// (0: one per core, b3sum's default, which hashes each large file on every core).
fn b3sum_time(ws: &Path, threads: usize) -> Option<Duration> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(ws.join("memory"))
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    files.sort();
    Command::new("b3sum").arg("--version").output().ok()?;
    Some(time_n(5, |_| {
        let t = Instant::now();
        let out = Command::new("b3sum")
            .args(["--num-threads", &threads.to_string()])
            .args(&files)
            .output()
            .expect("b3sum");
        assert!(out.status.success());
        t.elapsed()
    }))
}

fn median(mut xs: Vec<Duration>) -> Duration {
    xs.sort();
    xs[xs.len() / 2]
}

fn time_n(n: usize, mut f: impl FnMut(usize) -> Duration) -> Duration {
    median((0..n).map(&mut f).collect())
}

fn dir_size(p: &Path) -> u64 {
    let mut total = 0;
    if let Ok(read) = std::fs::read_dir(p) {
        for e in read.flatten() {
            let m = e.metadata().unwrap();
            total += if m.is_dir() {
                dir_size(&e.path())
            } else {
                m.len()
            };
        }
    }
    total
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}

fn bench(versions: usize, root: &Path) {
    let (entries, import, import_kb) = generate(versions, root);
    let markdown = dir_size(&root.join("memory"));
    // The first command after the import (its catch-up and checkpoint left the index
    // current): no slow path.
    let after_import = run(root, &["list", "--prefix", "no-such-prefix:"]);
    let runs: Vec<(Duration, u64)> = (0..3).map(|_| timed_peak(root, &["reindex"])).collect();
    let reindex = median(runs.iter().map(|r| r.0).collect());
    let peak_kb = runs.iter().map(|r| r.1).max().unwrap_or(0);
    let search_args = |i: usize| {
        vec![
            "search".to_string(),
            WORDS[i % WORDS.len()].to_string(),
            "--valid-at".into(),
            "2024-06-01".into(),
            "--limit".into(),
            "10".into(),
        ]
    };
    let search_once = |i: usize| {
        let args = search_args(i);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        run(root, &args)
    };
    // The first search after a rebuild (the full-text index is built by the rebuild).
    let search_first = time_n(3, |i| {
        run(root, &["reindex"]);
        search_once(i)
    });
    let verify = time_n(5, |_| run(root, &["verify"]));
    // The same at a clock after the last entry: at 1M versions the generated days run
    // past today, and `verify` then also warns about each entry recorded ahead of the
    // clock (130k lines); this is the chain check alone, like `b3sum`'s one line a file.
    let verify_clean = time_n(5, |_| {
        run_with(
            root,
            &["verify"],
            &[
                ("MEM7_EMBED_PROVIDER", "none"),
                ("MEM7_NOW", "9999-01-01T00:00:00Z"),
            ],
        )
    });
    let b3sum = b3sum_time(root, 0);
    let b3sum_one = b3sum_time(root, 1);
    let index = dir_size(&root.join(".mem7"));
    let spawn = time_n(20, |_| run(root, &["--version"]));
    // A prefix no key has: the start-up check and one indexed query that finds nothing
    // (a recall that misses would also look for near keys among every key).
    let startup = time_n(20, |_| run(root, &["list", "--prefix", "no-such-prefix:"]));
    let recall = time_n(20, |i| {
        let key_no = (i * 7919) % versions.div_ceil(3);
        run(
            root,
            &["recall", &format!("project{}:fact{key_no}", key_no % 97)],
        )
    });
    // A miss (exit 4): the near-key hint looks for keys a small edit away.
    let miss = time_n(20, |i| {
        let key_no = (i * 7919) % versions.div_ceil(3);
        let started = Instant::now();
        let out = Command::new(mem7_bin())
            .args(["recall", &format!("project{}:factt{key_no}", key_no % 97)])
            .env("MEM7_WORKSPACE", root)
            .env("MEM7_EMBED_PROVIDER", "none")
            .output()
            .expect("run mem7");
        assert_eq!(out.status.code(), Some(4), "a miss exits 4");
        started.elapsed()
    });
    let list = time_n(5, |_| run(root, &["list", "--prefix", "project5:"]));
    let search = time_n(20, search_once);
    let in_process = search_in_process(root);
    // A hook and a store alternated, so both meet the same machine.
    let (mut stores, mut hooks) = (Vec::new(), Vec::new());
    for i in 0..20 {
        stores.push(run(
            root,
            &["store", &format!("bench:new{i}"), &format!("value {i}")],
        ));
        hooks.push(hook_post_tool_use(root, i));
    }
    let (store, hook) = (median(stores), median(hooks));
    let hook_locked = hook_with_the_lock_held(root);
    println!(
        "\n## {versions} versions ({entries} entries, {:.1} MB markdown)",
        markdown as f64 / 1e6
    );
    println!("| measure (median) | time |");
    println!("|---|---|");
    println!(
        "| process spawn baseline (`mem7 --version`) | {} |",
        ms(spawn)
    );
    println!(
        "| bulk import (`mem7 import`, {entries} records, once) | {} |",
        ms(import)
    );
    println!(
        "| peak memory during `mem7 import` | {:.1} MB |",
        import_kb as f64 / 1024.0
    );
    println!(
        "| first command after the import (`mem7 list --prefix no-such-prefix:`, once) | {} |",
        ms(after_import)
    );
    println!(
        "| full rebuild (`mem7 reindex`, whole process) | {} |",
        ms(reindex)
    );
    println!(
        "| peak memory during `mem7 reindex` | {:.1} MB |",
        peak_kb as f64 / 1024.0
    );
    println!(
        "| `mem7 search WORD --valid-at T` (lexical, whole process): first after a rebuild / warm | {} / {} |",
        ms(search_first),
        ms(search)
    );
    println!(
        "| search with time filters inside one process (median of 100) | {} |",
        ms(in_process)
    );
    match (b3sum, b3sum_one) {
        (Some(b), Some(one)) => {
            println!(
                "| `mem7 verify` / `b3sum memory/*.md` (every core) | {} / {} = {:.2}x |",
                ms(verify),
                ms(b),
                verify.as_secs_f64() / b.as_secs_f64()
            );
            println!(
                "| `mem7 verify`, clock after the last entry / `b3sum` (every core) | {} / {} = {:.2}x |",
                ms(verify_clean),
                ms(b),
                verify_clean.as_secs_f64() / b.as_secs_f64()
            );
            println!("| `b3sum --num-threads 1 memory/*.md` | {} |", ms(one));
        }
        _ => println!(
            "| `mem7 verify` / at a clock after the last entry (b3sum not installed) | {} / {} |",
            ms(verify),
            ms(verify_clean)
        ),
    }
    println!(
        "| no-change start-up (`mem7 list --prefix no-such-prefix:`) | {} |",
        ms(startup)
    );
    println!("| `mem7 recall KEY` | {} |", ms(recall));
    println!(
        "| `mem7 recall` of a missing key (near-key hint) | {} |",
        ms(miss)
    );
    println!("| `mem7 list --prefix P` | {} |", ms(list));
    println!("| `mem7 store KEY VALUE` | {} |", ms(store));
    println!(
        "| `mem7 hook claude-code`, one PostToolUse (Edit), alternated with the stores | {} |",
        ms(hook)
    );
    println!(
        "| the same hook with the writers' lock held (slowest of 5; it spools) | {} |",
        ms(hook_locked)
    );
    let (p50, p99) = concurrent_stores(root);
    println!(
        "| 32 concurrent writers, one `mem7 store` each (3 rounds): p50 / p99 | {} / {} |",
        ms(p50),
        ms(p99)
    );
    println!("| index size on disk | {:.1} MB |", index as f64 / 1e6);
    // A cache of a synthetic vector for every text takes about 1.5 KB per version (and
    // as much again for the generation's vector file): beyond 2M versions that does not
    // fit this machine's disk beside the workspace.
    if versions <= 2_000_000 {
        bench_embeddings(root, reindex);
    } else {
        println!(
            "\n(meaning search not measured above 2M versions: the synthetic vectors would not fit on disk)"
        );
    }
}

/// A deterministic unit vector for a text hash (the cost of search does not depend on
/// the values, and embedding 100k texts for real takes minutes: see the throughput row).
fn synthetic_vector(hash: &[u8; 32], dim: usize) -> Vec<f32> {
    let mut rng = Rng(u64::from_le_bytes(hash[..8].try_into().unwrap()) | 1);
    let mut v: Vec<f32> = (0..dim)
        .map(|_| (rng.next() % 2001) as f32 / 1000.0 - 1.0)
        .collect();
    mem7::embed::normalize(&mut v);
    v
}

/// Meaning search: local model throughput, and hybrid search and rebuild with every
/// version's vector cached. Skipped without the local model (`just model`).
fn bench_embeddings(root: &Path, reindex_words_only: Duration) {
    use mem7::embed::Embedder;
    let env = mem7::embed::EmbedEnv::from_process();
    let resolved = mem7::embed::resolve(
        &mem7::embed::EmbedSettings {
            provider: Some("local".into()),
            ..Default::default()
        },
        &env,
    )
    .expect("resolve local");
    let mem7::embed::Resolved::On(spec) = resolved.clone() else {
        unreachable!("local was asked for")
    };
    if !mem7::embed::local::is_present(&spec.model_dir) {
        println!(
            "\n(meaning search not measured: no local model in {}; `just model`)",
            spec.model_dir.display()
        );
        return;
    }
    // Throughput: 256 generated texts in batches of 32, after one warm-up batch.
    let mut model = mem7::embed::local::LocalModel::load(&spec.model_dir, spec.id()).expect("load");
    let mut rng = Rng(42);
    let texts: Vec<String> = (0..288)
        .map(|_| {
            let words = 12 + (rng.next() % 20) as usize;
            rng.sentence(words)
        })
        .collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    model.embed(&refs[..32]).expect("warm up");
    let started = Instant::now();
    for chunk in refs[32..].chunks(32) {
        model.embed(chunk).expect("embed");
    }
    let per_sec = 256.0 / started.elapsed().as_secs_f64();
    let one_query = time_n(20, |i| {
        let q = format!(
            "{} {} {i}",
            WORDS[i % WORDS.len()],
            WORDS[(i * 5) % WORDS.len()]
        );
        let t = Instant::now();
        model.embed(&[q.as_str()]).expect("embed");
        t.elapsed()
    });
    let load = time_n(5, |_| {
        let t = Instant::now();
        mem7::embed::local::LocalModel::load(&spec.model_dir, spec.id()).expect("load");
        t.elapsed()
    });

    // Cache a vector for every version's text, as `mem7 embed` would.
    let model_id = spec.id();
    let mut engine =
        mem7::engine::Engine::open(root, mem7::core::chain::ChainKey::Plain).expect("open");
    let dir = engine.workspace().index_dir().expect("index dir");
    let mut cache = mem7::index::embeddings::EmbeddingCache::open(&dir).expect("cache");
    let mut hashes = std::collections::BTreeSet::new();
    engine
        .index()
        .for_each_text(&mut |k, v| {
            // The whole text's and its sentences' (`search.sentences`, by default).
            let sentences = mem7::config::SearchSettings::default().sentences();
            hashes.extend(mem7::index::vectors::Texts::of(0, k, v, sentences).hashes());
        })
        .expect("texts");
    let items: Vec<([u8; 32], Vec<f32>)> = hashes
        .into_iter()
        .map(|h| (h, synthetic_vector(&h, 384)))
        .collect();
    for chunk in items.chunks(10_000) {
        cache.put_many(&model_id, chunk).expect("cache vectors");
    }
    drop(cache);

    engine.set_embeddings(resolved);
    let valid_at = ValidTime::parse("2024-06-01").unwrap();
    let as_of = TxTime::parse("2030-01-01T00:00:00Z").unwrap();
    // Query vectors are cached beside the versions' ones: drop those of earlier runs
    // (texts no version holds), so that "new" queries are new.
    engine.prune_embeddings().expect("prune");
    let query = |i: usize, mode| mem7::index::fulltext::SearchRequest {
        text: format!(
            "{} {} {i}",
            WORDS[i % WORDS.len()],
            WORDS[(i * 7) % WORDS.len()]
        ),
        raw: false,
        valid_at,
        as_of,
        tags: Vec::new(),
        key_prefix: None,
        limit: 10,
        mode,
    };
    use mem7::index::fulltext::SearchMode;
    engine
        .search(&query(0, SearchMode::Hybrid))
        .expect("warm up");
    let mut timed = |mode| {
        time_n(100, |i| {
            let t = Instant::now();
            engine.search(&query(i + 1, mode)).expect("search");
            t.elapsed()
        })
    };
    // New queries the first time: each pays for embedding its text. The same queries
    // again: their vectors come from the cache.
    let hybrid_new = timed(SearchMode::Hybrid);
    let hybrid_cached = timed(SearchMode::Hybrid);
    let semantic_cached = timed(SearchMode::Semantic);
    let local = [("MEM7_EMBED_PROVIDER", "local")];
    let whole = |mode: &str, i: usize| {
        let q = format!(
            "{} {}",
            WORDS[i % WORDS.len()],
            WORDS[(i * 3) % WORDS.len()]
        );
        run_with(
            root,
            &["search", &q, "--mode", mode, "--valid-at", "2024-06-01"],
            &local,
        )
    };
    let whole_search = |i: usize| whole("hybrid", i);
    // The in-process searches above wrote the generation's vector file, so these map it.
    // Ten new queries (each process loads the model and embeds its query), then the same
    // ten again (their vectors come from the cache).
    let whole_new = time_n(10, whole_search);
    let whole_cached = time_n(10, whole_search);
    let semantic_new = time_n(10, |i| whole("semantic", i + 100));
    let semantic_warm = time_n(10, |i| whole("semantic", i + 100));
    let reindex_cached = time_n(3, |_| run_with(root, &["reindex"], &local));
    // The first search of a new generation reads the vectors out of the cache and writes
    // the vector file that later processes map (cached query vectors: this measures the
    // vector set, not the model).
    let first_after_rebuild = time_n(3, |i| {
        run_with(root, &["reindex"], &local);
        whole_search(i)
    });
    let semantic_first = time_n(3, |i| {
        run_with(root, &["reindex"], &local);
        whole("semantic", i + 100)
    });
    println!(
        "\n### meaning search ({} cached 384-dim vectors; the query embedded by the local model)",
        items.len()
    );
    println!("| measure (median) | time |");
    println!("|---|---|");
    println!("| local model: load weights + tokenizer | {} |", ms(load));
    println!("| local model: embedding throughput, batches of 32 | {per_sec:.0} texts/s |");
    println!("| local model: one short query | {} |", ms(one_query));
    println!(
        "| hybrid search inside one process, new query (median of 100) | {} |",
        ms(hybrid_new)
    );
    println!(
        "| hybrid search inside one process, cached query vector | {} |",
        ms(hybrid_cached)
    );
    println!(
        "| semantic search inside one process, cached query vector | {} |",
        ms(semantic_cached)
    );
    println!(
        "| `mem7 search Q --mode hybrid` (whole process), new / cached query | {} / {} |",
        ms(whole_new),
        ms(whole_cached)
    );
    println!(
        "| the same, first search after a rebuild (writes the vector file) | {} |",
        ms(first_after_rebuild)
    );
    println!(
        "| `mem7 search Q --mode semantic` (whole process): new query / cached / first after a rebuild | {} / {} / {} |",
        ms(semantic_new),
        ms(semantic_warm),
        ms(semantic_first)
    );
    println!(
        "| `mem7 reindex` with every vector cached / words only | {} / {} |",
        ms(reindex_cached),
        ms(reindex_words_only)
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // `mem7 init` approves the settings file it writes in the person's own list of
    // approvals (`$XDG_CONFIG_HOME/mem7/allowed`); scratch workspaces stay out of it.
    let approvals = tempfile::tempdir().expect("a scratch folder for approvals");
    // SAFETY: set before this process starts a thread; the mem7 processes inherit it.
    unsafe { std::env::set_var("XDG_CONFIG_HOME", approvals.path()) };
    if args.first().map(String::as_str) == Some("--gen-only") {
        let n: usize = args
            .get(1)
            .and_then(|s| s.parse().ok())
            .expect("--gen-only N DIR");
        let dir = PathBuf::from(args.get(2).expect("--gen-only N DIR"));
        let (entries, took, peak_kb) = generate(n, &dir);
        println!(
            "wrote {entries} entries (~{n} versions) to {} (import {}, peak memory {:.1} MB)",
            dir.display(),
            ms(took),
            peak_kb as f64 / 1024.0
        );
        return;
    }
    if args.first().map(String::as_str) == Some("--meaning") {
        let dir = PathBuf::from(args.get(1).expect("--meaning DIR"));
        let reindex = time_n(3, |_| run(&dir, &["reindex"]));
        bench_embeddings(&dir, reindex);
        return;
    }
    let no_stalls = args.iter().any(|a| a == "--no-stalls");
    let stalls_only = args.iter().any(|a| a == "--stalls-only");
    let args: Vec<&String> = args.iter().filter(|a| !a.starts_with("--")).collect();
    let sizes: Vec<usize> = if args.is_empty() {
        vec![10_000, 100_000]
    } else {
        args.iter()
            .map(|s| s.parse().expect("sizes are numbers of versions"))
            .collect()
    };
    let scratch = tempfile::tempdir().expect("tempdir");
    println!(
        "mem7 bench: {} (medians; machine is shared, compare ratios)",
        mem7_bin().display()
    );
    for n in sizes {
        if !stalls_only {
            bench(n, &scratch.path().join(format!("ws{n}")));
        }
        if !no_stalls {
            let bin = std::env::var_os("MEM7_BENCH_BIN").map_or_else(mem7_bin, PathBuf::from);
            stalls::bench(&bin, scratch.path(), n);
        }
    }
}
