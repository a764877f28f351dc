//! `just bench-embed`: the local model's throughput on a fixed set of texts, for
//! `scripts/bench-embed`, which compares it with an independent runtime on the same texts.
//!
//!     cargo run --release --example embed_speed -- texts FILE [COUNT] [LONG_EVERY]
//!     cargo run --release --example embed_speed -- run FILE [--batch N] [--repeat N]
//!         [--sorted] [--vectors OUT]
//!
//! `texts` writes COUNT texts (default 512), one per line: short facts of mixed lengths
//! in the form mem7 embeds them (`key words: value`), and one in LONG_EVERY (default 8;
//! 0 for none) a long note that runs past the model's 256 tokens. `run` embeds the file's texts in batches (32 by
//! default) in the file's order (`--sorted`: shortest first, as `mem7 embed` orders them),
//! after one warm-up batch, `--repeat` times (default 5), and prints texts per second of
//! each pass and their median. `--vectors` writes the vectors (f32, little-endian, in
//! the order embedded) for comparing two builds.
//!
//! It uses only `LocalModel::load` and `Embedder::embed`, so the script can build it
//! against an older mem7 too.

use std::io::Write;
use std::path::Path;
use std::time::Instant;

use mem7::embed::Embedder;

const WORDS: &[&str] = &[
    "the",
    "deploy",
    "target",
    "is",
    "railway",
    "and",
    "cloudflare",
    "for",
    "static",
    "pages",
    "postgres",
    "runs",
    "in",
    "staging",
    "before",
    "prod",
    "cache",
    "keys",
    "expire",
    "after",
    "ten",
    "minutes",
    "user",
    "prefers",
    "short",
    "answers",
    "with",
    "code",
    "examples",
    "ticket",
    "review",
    "needs",
    "two",
    "approvals",
    "branch",
    "names",
    "start",
    "from",
    "merge",
    "only",
    "when",
    "tests",
    "pass",
    "latency",
    "budget",
    "of",
    "200ms",
    "owner",
    "team",
    "platform",
    "service",
    "region",
    "europe",
    "west",
    "queue",
    "worker",
    "retry",
    "three",
    "times",
    "timeout",
    "30s",
    "config",
    "lives",
    "yaml",
    "feature",
    "flag",
    "dark",
    "mode",
    "default",
    "on",
    "mobile",
    "billing",
    "invoices",
    "monthly",
    "customer",
    "asked",
    "about",
    "refunds",
    "meeting",
    "moved",
    "to",
    "thursday",
    "afternoon",
    "api",
    "rate",
    "limit",
    "per",
    "minute",
    "database",
    "migration",
    "scheduled",
    "tonight",
    "rollback",
    "plan",
    "documented",
    "wiki",
    "alice",
    "bob",
    "on-call",
    "rotation",
    "weekly",
    "kubernetes",
    "cluster",
    "upgrade",
    "version",
    "1.29",
    "python",
    "rust",
    "typescript",
    "frontend",
    "backend",
    "logs",
    "shipped",
    "grafana",
    "alerts",
    "slack",
];

/// A small deterministic PRNG (xorshift), so runs compare.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn words(&mut self, n: usize) -> String {
        (0..n)
            .map(|_| WORDS[self.below(WORDS.len())])
            .collect::<Vec<_>>()
            .join(" ")
    }
}

fn write_texts(path: &Path, count: usize, long_every: usize) {
    let mut rng = Rng(0x5eed_1234_abcd_0001);
    let mut out = String::new();
    for i in 0..count {
        let (project, key_words) = (rng.below(40), 1 + rng.below(2));
        let key = format!("project{project}:{}", rng.words(key_words));
        let key = mem7::embed::version_text(&key, "");
        let value = if long_every > 0 && i % long_every == long_every - 1 {
            // A long note: 150 to 400 words, cut at 256 tokens by the model.
            let n = 150 + rng.below(250);
            rng.words(n)
        } else {
            // A fact of 3 to 40 words, most of them short.
            let n = 3 + rng.below(12) + rng.below(12) * rng.below(3);
            rng.words(n)
        };
        out.push_str(&format!("{key}{value} {i}\n"));
    }
    std::fs::write(path, out).expect("write the texts");
}

fn median(xs: &mut [f64]) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

fn run(path: &Path, batch: usize, repeat: usize, sorted: bool, vectors: Option<&Path>) {
    let text = std::fs::read_to_string(path).expect("read the texts");
    let mut texts: Vec<&str> = text.lines().collect();
    if sorted {
        texts.sort_by_key(|t| t.len());
    }
    let env = mem7::embed::EmbedEnv::from_process();
    let settings = mem7::embed::EmbedSettings {
        provider: Some("local".into()),
        ..Default::default()
    };
    let Ok(mem7::embed::Resolved::On(spec)) = mem7::embed::resolve(&settings, &env) else {
        panic!("the local provider did not resolve");
    };
    let mut model =
        mem7::embed::local::LocalModel::load(&spec.model_dir, spec.id()).expect("load the model");
    // Warm up: one batch (pages in the weights it touches).
    model
        .embed(&texts[..batch.min(texts.len())])
        .expect("embed");
    let mut pass = || {
        let started = Instant::now();
        let mut all = Vec::with_capacity(texts.len());
        for chunk in texts.chunks(batch) {
            all.extend(model.embed(chunk).expect("embed"));
        }
        (texts.len() as f64 / started.elapsed().as_secs_f64(), all)
    };
    let mut rates = Vec::with_capacity(repeat);
    let mut last = Vec::new();
    for _ in 0..repeat {
        let (rate, all) = pass();
        rates.push(rate);
        last = all;
    }
    let each: Vec<String> = rates.iter().map(|r| format!("{r:.1}")).collect();
    println!(
        "mem7 local: {} texts, batches of {batch}{}: {:.1} texts/s (median of {repeat}: {})",
        texts.len(),
        if sorted { ", shortest first" } else { "" },
        median(&mut rates),
        each.join(" ")
    );
    if let Some(out) = vectors {
        let mut f = std::io::BufWriter::new(std::fs::File::create(out).expect("create"));
        for v in &last {
            for x in v {
                f.write_all(&x.to_le_bytes()).expect("write");
            }
        }
        f.flush().expect("flush");
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: embed_speed texts FILE [COUNT] [LONG_EVERY] | run FILE [--batch N] [--repeat N] [--sorted] [--vectors OUT]";
    match args.first().map(String::as_str) {
        Some("texts") if args.len() >= 2 => {
            let count = args.get(2).map_or(512, |c| c.parse().expect(usage));
            let long_every = args.get(3).map_or(8, |c| c.parse().expect(usage));
            write_texts(Path::new(&args[1]), count, long_every);
        }
        Some("run") if args.len() >= 2 => {
            let (mut batch, mut repeat, mut sorted, mut vectors) = (32, 5, false, None);
            let mut rest = args[2..].iter();
            while let Some(a) = rest.next() {
                match a.as_str() {
                    "--batch" => batch = rest.next().expect(usage).parse().expect(usage),
                    "--repeat" => repeat = rest.next().expect(usage).parse().expect(usage),
                    "--sorted" => sorted = true,
                    "--vectors" => vectors = Some(rest.next().expect(usage).clone()),
                    _ => panic!("{usage}"),
                }
            }
            run(
                Path::new(&args[1]),
                batch,
                repeat.max(1),
                sorted,
                vectors.as_deref().map(Path::new),
            );
        }
        _ => {
            eprintln!("{usage}");
            std::process::exit(2);
        }
    }
}
