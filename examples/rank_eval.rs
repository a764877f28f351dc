//! `just rank-eval`: how well each search mode ranks, on a small labelled set of the
//! facts a coding agent keeps, with queries written the way people ask (some share the
//! fact's words, most paraphrase them). Reports the mean reciprocal rank (MRR) and the
//! share of queries whose fact is first and in the top 5, for words only, meaning only,
//! and hybrid with several reciprocal-rank-fusion constants.
//!
//!     cargo run --release --example rank_eval
//!
//! Needs the local model (`just model`). The set is hand-made, not real conversations:
//! read the numbers as a comparison between modes, not as absolute quality.

use std::path::Path;

use mem7::core::time::{TxTime, ValidTime};
use mem7::embed::{EmbedEnv, EmbedSettings, Resolved};
use mem7::engine::{Engine, StoreRequest, fuse};
use mem7::index::SearchHit;
use mem7::index::fulltext::{SearchMode, SearchRequest};

/// (key, value) facts.
const FACTS: &[(&str, &str)] = &[
    (
        "deploy.target",
        "Production deploys go to Railway; staging runs on Fly.io",
    ),
    (
        "deploy.freeze",
        "No deploys on Fridays after 3pm without the lead's approval",
    ),
    (
        "db.primary",
        "The primary database is Postgres 16 on a managed instance",
    ),
    (
        "db.migrations",
        "Schema migrations are written with sqlx and run in CI before deploy",
    ),
    ("cache.layer", "Redis caches session tokens for 24 hours"),
    (
        "user.editor",
        "The user prefers Neovim with the LazyVim configuration",
    ),
    (
        "user.answers",
        "Keep answers short; the user dislikes long explanations",
    ),
    (
        "user.language",
        "The user writes commit messages in English but speaks German",
    ),
    (
        "user.timezone",
        "The user works from Berlin, UTC+1, mostly mornings",
    ),
    (
        "ci.provider",
        "CI runs on GitHub Actions with a self-hosted runner for GPU jobs",
    ),
    (
        "ci.flaky",
        "The integration test test_sync_remote is flaky and retried twice",
    ),
    (
        "repo.layout",
        "The monorepo keeps services under apps/ and shared code under libs/",
    ),
    (
        "repo.branching",
        "Feature branches are squash-merged into main after one review",
    ),
    (
        "lint.rules",
        "Clippy runs with -D warnings and rustfmt with the default style",
    ),
    (
        "api.auth",
        "The public API authenticates with OAuth2 bearer tokens from Auth0",
    ),
    (
        "api.rate_limit",
        "Clients are limited to 100 requests per minute per key",
    ),
    (
        "api.versioning",
        "Breaking API changes need a new /v2 prefix and a deprecation notice",
    ),
    (
        "frontend.framework",
        "The dashboard is built with React and Vite, styled with Tailwind",
    ),
    (
        "frontend.tests",
        "End-to-end tests use Playwright against a local build",
    ),
    (
        "monitoring.errors",
        "Errors are reported to Sentry; alerts page the on-call engineer",
    ),
    (
        "monitoring.metrics",
        "Metrics go to Prometheus and dashboards live in Grafana",
    ),
    (
        "oncall.rotation",
        "The on-call rotation changes every Monday at 10am",
    ),
    ("team.lead", "Ada Lovelace leads the storage team"),
    ("team.design", "Grace reviews all UI changes before release"),
    (
        "infra.region",
        "All servers run in the eu-central-1 region for data residency",
    ),
    (
        "infra.terraform",
        "Infrastructure is managed with Terraform; state is kept in S3",
    ),
    (
        "secrets.store",
        "Secrets live in 1Password and are injected at deploy time",
    ),
    (
        "billing.provider",
        "Payments are processed by Stripe with webhooks to the billing service",
    ),
    (
        "email.provider",
        "Transactional email is sent through Postmark",
    ),
    (
        "search.engine",
        "Product search uses Meilisearch with typo tolerance enabled",
    ),
    (
        "queue.system",
        "Background jobs run on a RabbitMQ queue with three workers",
    ),
    ("logs.retention", "Logs are kept for 30 days, then deleted"),
    (
        "backup.schedule",
        "Database backups run nightly at 2am and are kept for two weeks",
    ),
    (
        "perf.budget",
        "Pages must load in under two seconds on a 4G connection",
    ),
    (
        "mobile.platform",
        "The mobile app is written in Flutter for iOS and Android",
    ),
    (
        "docs.location",
        "Internal documentation lives in the Notion engineering space",
    ),
    (
        "license.policy",
        "Only MIT, Apache-2.0 and BSD dependencies are allowed",
    ),
    (
        "meeting.standup",
        "Daily standup is at 9:30 on Zoom and lasts fifteen minutes",
    ),
    (
        "pet.office",
        "The office cat is called Miso and sleeps on the server rack",
    ),
    (
        "coffee.machine",
        "The espresso machine on the third floor is broken",
    ),
];

/// (query, the key it asks about).
const QUERIES: &[(&str, &str)] = &[
    ("where does production get deployed", "deploy.target"),
    ("which hosting platform runs the live app", "deploy.target"),
    ("can I ship code on friday afternoon", "deploy.freeze"),
    ("which database do we use", "db.primary"),
    ("what SQL server stores our data", "db.primary"),
    ("how are schema changes applied", "db.migrations"),
    ("where are login sessions stored temporarily", "cache.layer"),
    ("what text editor does the user like", "user.editor"),
    ("vim setup", "user.editor"),
    ("how long should my replies be", "user.answers"),
    ("be brief", "user.answers"),
    ("what language are commits written in", "user.language"),
    ("what time zone is the user in", "user.timezone"),
    ("when is the user usually online", "user.timezone"),
    (
        "which continuous integration service do we use",
        "ci.provider",
    ),
    ("where do GPU builds run", "ci.provider"),
    ("a test keeps failing randomly", "ci.flaky"),
    (
        "where is shared library code in the repository",
        "repo.layout",
    ),
    ("how do pull requests get merged", "repo.branching"),
    ("code formatting and linter settings", "lint.rules"),
    ("how do API clients log in", "api.auth"),
    (
        "how many calls per minute can a client make",
        "api.rate_limit",
    ),
    ("throttling limits", "api.rate_limit"),
    (
        "how to introduce an incompatible change to the API",
        "api.versioning",
    ),
    ("what is the web UI built with", "frontend.framework"),
    ("browser automation tests", "frontend.tests"),
    ("where do exceptions get tracked", "monitoring.errors"),
    (
        "who gets woken up when production breaks",
        "monitoring.errors",
    ),
    (
        "where can I see graphs of system health",
        "monitoring.metrics",
    ),
    ("when does the pager duty switch", "oncall.rotation"),
    ("who runs the storage group", "team.lead"),
    ("who must approve interface changes", "team.design"),
    ("which AWS datacenter hosts our machines", "infra.region"),
    ("how is cloud infrastructure provisioned", "infra.terraform"),
    ("where are passwords and API keys kept", "secrets.store"),
    ("how do we charge customers", "billing.provider"),
    ("which service sends our emails", "email.provider"),
    ("what powers product search", "search.engine"),
    ("how are async tasks processed", "queue.system"),
    ("how long do we keep log files", "logs.retention"),
    ("when are database snapshots taken", "backup.schedule"),
    ("how fast must the website be", "perf.budget"),
    (
        "what framework is the phone app written in",
        "mobile.platform",
    ),
    ("where is the wiki", "docs.location"),
    (
        "which open source licences may we depend on",
        "license.policy",
    ),
    ("when is the morning sync meeting", "meeting.standup"),
    ("what is the name of the kitten in the office", "pet.office"),
    ("is the coffee maker working", "coffee.machine"),
    // Exact names and identifiers, as people paste them.
    ("test_sync_remote", "ci.flaky"),
    ("eu-central-1", "infra.region"),
    ("Miso", "pet.office"),
    ("Postmark", "email.provider"),
    ("RabbitMQ workers", "queue.system"),
    ("Sentry", "monitoring.errors"),
    ("Meilisearch typo tolerance", "search.engine"),
    ("Auth0", "api.auth"),
    ("LazyVim", "user.editor"),
    ("Terraform state", "infra.terraform"),
    ("Ada Lovelace", "team.lead"),
    ("Stripe webhooks", "billing.provider"),
];

/// Questions about things none of the facts mention, for the floor under meaning-only
/// hits: meaning search always has nearest neighbours, and for these they are noise.
const UNRELATED: &[&str] = &[
    "Hetzner",
    "what is the weather in Lisbon tomorrow",
    "who won the football match last night",
    "recipe for sourdough bread",
    "how tall is Mount Kilimanjaro",
    "best hiking boots for winter",
    "exchange rate of yen to euro",
    "which planets have rings",
    "guitar chords for a blues song",
    "when does the museum open on Sunday",
    "symptoms of a cold",
    "translate good morning into Italian",
];

/// New facts stored under a new key, and the existing key they belong under (None: a
/// genuinely new fact): for the threshold at which a store names a look-alike slot.
const NEW_SLOTS: &[(&str, &str, Option<&str>)] = &[
    (
        "ci.platform",
        "Our continuous integration now runs on Buildkite",
        Some("ci.provider"),
    ),
    (
        "deploy.host",
        "Production now deploys to Render instead",
        Some("deploy.target"),
    ),
    (
        "db.main",
        "The main database moved to Postgres 17",
        Some("db.primary"),
    ),
    (
        "team.manager",
        "Ada Lovelace manages the storage team",
        Some("team.lead"),
    ),
    (
        "mail.service",
        "We send transactional email with SendGrid now",
        Some("email.provider"),
    ),
    (
        "jobs.queue",
        "Background jobs moved to a Redis queue",
        Some("queue.system"),
    ),
    (
        "cloud.region",
        "Servers now run in eu-west-1",
        Some("infra.region"),
    ),
    (
        "errors.tracking",
        "Error reports go to Rollbar from now on",
        Some("monitoring.errors"),
    ),
    (
        "user.ide",
        "The user switched to VS Code",
        Some("user.editor"),
    ),
    (
        "db.backups",
        "Backups now run every six hours",
        Some("backup.schedule"),
    ),
    (
        "office.plants",
        "The ficus by the window needs water on Mondays",
        None,
    ),
    (
        "conference.talk",
        "Our talk at RustConf is on the second day",
        None,
    ),
    (
        "hiring.plan",
        "We are hiring two backend engineers this quarter",
        None,
    ),
    (
        "travel.policy",
        "Book trains instead of flights for trips under four hours",
        None,
    ),
    ("snack.budget", "The snack budget is 50 euros a week", None),
    (
        "vendor.laptops",
        "New laptops are ordered from Framework",
        None,
    ),
    ("release.name", "The next release is code-named Heron", None),
    ("parking.spots", "Visitors park in spots 12 to 15", None),
];

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

fn rank_of(hits: &[SearchHit], key: &str) -> Option<usize> {
    hits.iter()
        .position(|h| h.version.key == key)
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
    fn row(&self, name: &str) {
        let n = QUERIES.len() as f64;
        println!(
            "| {name} | {:.3} | {:.0}% | {:.0}% |",
            self.rr / n,
            100.0 * self.first as f64 / n,
            100.0 * self.top5 as f64 / n
        );
    }
}

fn main() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root: &Path = &dir.path().join("ws");
    mem7::store::init(root).expect("init");
    // Every meaning hit, however far: the floor is what this measures.
    std::fs::write(root.join("mem7.yaml"), "search:\n  min_similarity: 0\n").expect("mem7.yaml");
    let mut engine = Engine::open(root, mem7::core::chain::ChainKey::Plain).expect("open");
    let now = TxTime::parse("2026-01-01T00:00:00Z").unwrap();
    for (i, (key, value)) in FACTS.iter().enumerate() {
        let req = StoreRequest {
            key: key.to_string(),
            value: value.to_string(),
            tags: Vec::new(),
            agent: "eval".into(),
            valid_from: None,
            valid_to: None,
            allow_secret: false,
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
    for (query, key) in QUERIES {
        let req = |mode| SearchRequest {
            text: query.to_string(),
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
        if let Some(hit) = meaning.iter().find(|h| h.version.key == *key) {
            relevant.push(hit.similarity.unwrap_or(0.0));
        }
        lexical.add(rank_of(&words, key));
        semantic.add(rank_of(&meaning, key));
        for (k, score) in ks.iter().zip(hybrid.iter_mut()) {
            let fused = fuse(words.clone(), meaning.clone(), *k, LIMIT);
            score.add(rank_of(&fused, key));
        }
    }
    println!(
        "{} facts, {} queries; the fact's rank in the top {LIMIT} (each side contributes {POOL})",
        FACTS.len(),
        QUERIES.len()
    );
    println!("| mode | MRR@{LIMIT} | first | top 5 |");
    println!("|---|---|---|---|");
    lexical.row("lexical (BM25)");
    semantic.row("semantic (all-MiniLM-L6-v2)");
    for (k, score) in ks.iter().zip(&hybrid) {
        score.row(&format!("hybrid, rrf_k = {k}"));
    }

    // The floor: for each candidate, the share of labelled queries whose fact stays a
    // meaning hit, and the share of unrelated questions that get no meaning hit at all.
    let mut noise: Vec<f32> = Vec::new();
    for query in UNRELATED {
        let hits = by_meaning(&mut engine, query.to_string(), valid_at, as_of);
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
    for (key, value, belongs) in NEW_SLOTS {
        let hits = by_meaning(
            &mut engine,
            mem7::embed::version_text(key, value),
            valid_at,
            as_of,
        );
        match belongs {
            Some(slot) => same.push((
                *key,
                hits.iter()
                    .find(|h| h.version.key == *slot)
                    .and_then(|h| h.similarity)
                    .unwrap_or(0.0),
            )),
            None => other.push((*key, hits.first().and_then(|h| h.similarity).unwrap_or(0.0))),
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
