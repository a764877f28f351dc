//! Meaning search through the real binary: the HTTP providers against a real HTTP server
//! on 127.0.0.1 (started here), the embedding cache across stores, searches, rebuilds and
//! model changes, a provider that is down, and hybrid ranking under the time filters.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

use crate::world::{Run, Sandbox, finish, wait_for};
use serde_json::{Value, json};

/// One request the provider received.
#[derive(Clone, Debug)]
struct Seen {
    path: String,
    auth: Option<String>,
    model: String,
    inputs: Vec<String>,
}

/// A small embedding server speaking both Ollama's and OpenAI's API. Its vectors are
/// bags of words (each word adds 1 to one of 64 slots), so texts that share words are
/// near each other: enough to check ranking without a model.
struct Provider {
    addr: SocketAddr,
    seen: Arc<Mutex<Vec<Seen>>>,
}

const DIM: usize = 64;

/// Words the server takes for another: meaning without a shared word.
const SYNONYMS: [(&str, &str); 2] = [("kitten", "cat"), ("rug", "mat")];

fn bag_of_words(text: &str) -> Vec<f32> {
    let mut v = vec![0.0f32; DIM];
    for word in text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        let word = word.to_lowercase();
        let word = SYNONYMS
            .iter()
            .find(|(a, _)| *a == word)
            .map_or(word.as_str(), |(_, b)| b);
        let h = blake3::hash(word.as_bytes());
        v[h.as_bytes()[0] as usize % DIM] += 1.0;
    }
    if v.iter().all(|x| *x == 0.0) {
        v[0] = 1.0;
    }
    v
}

impl Provider {
    fn start() -> Provider {
        Provider::on(TcpListener::bind("127.0.0.1:0").unwrap())
    }

    fn on(listener: TcpListener) -> Provider {
        let addr = listener.local_addr().unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = seen.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let log = log.clone();
                std::thread::spawn(move || serve(stream, &log));
            }
        });
        Provider { addr, seen }
    }

    fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    /// Every text embedded so far, in order.
    fn texts(&self) -> Vec<String> {
        self.seen().into_iter().flat_map(|s| s.inputs).collect()
    }
}

fn serve(stream: TcpStream, log: &Mutex<Vec<Seen>>) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
        return;
    }
    let path = request_line
        .split_whitespace()
        .nth(1)
        .unwrap_or("")
        .to_string();
    let (mut length, mut auth) = (0usize, None);
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        let (name, value) = line.split_once(':').unwrap();
        match name.to_ascii_lowercase().as_str() {
            "content-length" => length = value.trim().parse().unwrap(),
            "authorization" => auth = Some(value.trim().to_string()),
            _ => {}
        }
    }
    let mut body = vec![0u8; length];
    reader.read_exact(&mut body).unwrap();
    let req: Value = serde_json::from_slice(&body).unwrap();
    let inputs: Vec<String> = req["input"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    log.lock().unwrap().push(Seen {
        path: path.clone(),
        auth,
        model: req["model"].as_str().unwrap_or("").to_string(),
        inputs: inputs.clone(),
    });
    let (status, reply) = match path.as_str() {
        "/api/embed" => (
            "200 OK",
            json!({ "embeddings": inputs.iter().map(|t| bag_of_words(t)).collect::<Vec<_>>() }),
        ),
        "/v1/embeddings" => {
            assert_eq!(req["encoding_format"], "float");
            // Out of order on purpose: clients must put them back by `index`.
            let data: Vec<Value> = inputs
                .iter()
                .enumerate()
                .rev()
                .map(|(i, t)| json!({ "object": "embedding", "index": i, "embedding": bag_of_words(t) }))
                .collect();
            ("200 OK", json!({ "object": "list", "data": data }))
        }
        _ => ("404 Not Found", json!({ "error": "no such endpoint" })),
    };
    let text = reply.to_string();
    let mut stream = stream;
    let _ = write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}",
        text.len()
    );
}

/// A loopback port with nothing listening (bound, then released).
fn free_port() -> SocketAddr {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
}

/// The variables that point mem7 at the test's provider, speaking Ollama's API.
fn ollama(url: &str) -> [(&'static str, &str); 2] {
    [("MEM7_EMBED_PROVIDER", "ollama"), ("MEM7_EMBED_URL", url)]
}

fn mem7(s: &Sandbox, vars: &[(&str, &str)], args: &[&str], now: Option<&str>) -> Run {
    let mut cmd = s.command(args, now);
    for (k, v) in vars {
        cmd.env(k, v);
    }
    finish(cmd.output().unwrap())
}

fn ok(s: &Sandbox, vars: &[(&str, &str)], args: &[&str], now: Option<&str>) -> Run {
    let r = mem7(s, vars, args, now);
    assert_eq!(r.code, 0, "mem7 {args:?} failed:\n{}{}", r.stdout, r.stderr);
    r
}

const T1: Option<&str> = Some("2026-01-01T00:00:00Z");
const T2: Option<&str> = Some("2026-02-01T00:00:00Z");
const T3: Option<&str> = Some("2026-03-01T00:00:00Z");

#[test]
fn ollama_embeds_each_text_once_per_model_and_rebuilds_send_nothing() {
    let s = Sandbox::new();
    let p = Provider::start();
    let url = p.url();
    let vars = [
        ("MEM7_EMBED_PROVIDER", "ollama"),
        ("MEM7_EMBED_URL", url.as_str()),
        ("MEM7_EMBED_MODEL", "bow-1"),
    ];
    // A store never calls the provider.
    ok(
        &s,
        &vars,
        &["store", "db.engine", "postgres holds the orders"],
        T1,
    );
    ok(
        &s,
        &vars,
        &["store", "deploy.day", "friday deploys are frozen"],
        T1,
    );
    // The same key and value again (a new period): the same text, one vector.
    ok(
        &s,
        &vars,
        &[
            "store",
            "db.engine",
            "postgres holds the orders",
            "--valid-from",
            "2025-06-01",
        ],
        T2,
    );
    assert!(
        p.seen().is_empty(),
        "store called the provider: {:?}",
        p.seen()
    );

    let r = ok(&s, &vars, &["embed", "--json"], T2);
    assert_eq!(r.json()["computed"], 2, "{}", r.stdout);
    assert_eq!(r.json()["model"], "ollama/bow-1");
    let mut texts = p.texts();
    texts.sort();
    assert_eq!(
        texts,
        [
            "db engine: postgres holds the orders",
            "deploy day: friday deploys are frozen"
        ]
    );
    assert!(
        p.seen()
            .iter()
            .all(|s| s.path == "/api/embed" && s.model == "bow-1")
    );

    // Known texts are never sent again: not by embed, not by a rebuild.
    let before = p.seen().len();
    let r = ok(&s, &vars, &["embed", "--json"], T2);
    assert_eq!(r.json()["computed"], 0);
    ok(&s, &vars, &["reindex"], T2);
    assert_eq!(p.seen().len(), before, "a rebuild re-embedded known texts");

    // A search embeds only its query, once: the second identical search sends nothing.
    let r = ok(
        &s,
        &vars,
        &["search", "postgres orders", "--mode", "semantic", "--json"],
        T3,
    );
    assert_eq!(r.strings("key")[0], "db.engine");
    assert_eq!(p.texts().last().unwrap(), "postgres orders");
    let after_query = p.seen().len();
    ok(
        &s,
        &vars,
        &["search", "postgres orders", "--mode", "semantic", "--json"],
        T3,
    );
    assert_eq!(p.seen().len(), after_query);

    // Another model computes its own vectors; the first model's stay cached until pruned.
    let other = [
        ("MEM7_EMBED_PROVIDER", "ollama"),
        ("MEM7_EMBED_URL", url.as_str()),
        ("MEM7_EMBED_MODEL", "bow-2"),
    ];
    let r = ok(&s, &other, &["embed", "--json"], T3);
    assert_eq!(r.json()["computed"], 2);
    assert!(p.seen()[after_query..].iter().all(|s| s.model == "bow-2"));
    let cached_both = r.json()["cached"].as_u64().unwrap();
    assert_eq!(
        cached_both, 5,
        "2 + 2 texts and one query vector: {}",
        r.stdout
    );
    // Back to the first model: nothing to compute, its vectors were kept.
    let r = ok(&s, &vars, &["embed", "--json"], T3);
    assert_eq!(r.json()["computed"], 0);
    assert_eq!(vector_files(&s).len(), 1, "bow-1's, from its searches");
    let r = ok(&s, &other, &["embed", "--prune", "--json"], T3);
    assert!(vector_files(&s).is_empty(), "pruned with bow-1's vectors");
    assert_eq!(
        r.json()["pruned"],
        3,
        "bow-1's two texts and its query: {}",
        r.stdout
    );
    assert_eq!(r.json()["cached"], 2);
}

#[test]
fn openai_provider_sends_the_key_and_orders_by_index() {
    let s = Sandbox::new();
    let p = Provider::start();
    let url = format!("{}/v1", p.url());
    let vars = [
        ("MEM7_EMBED_PROVIDER", "openai"),
        ("MEM7_EMBED_URL", url.as_str()),
        ("MEM7_EMBED_MODEL", "bow-small"),
        ("MEM7_EMBED_API_KEY", "test-key-123"),
    ];
    ok(
        &s,
        &vars,
        &["store", "team.lead", "ada leads the storage team"],
        T1,
    );
    ok(
        &s,
        &vars,
        &["store", "ci.runner", "builds run on two cores"],
        T1,
    );
    ok(
        &s,
        &vars,
        &["store", "coffee", "the kitchen has espresso"],
        T1,
    );
    let r = ok(&s, &vars, &["embed", "--json"], T2);
    assert_eq!(r.json()["computed"], 3);
    let seen = p.seen();
    assert_eq!(seen.len(), 1, "three texts fit one batch");
    assert_eq!(seen[0].path, "/v1/embeddings");
    assert_eq!(seen[0].auth.as_deref(), Some("Bearer test-key-123"));
    // The server answered in reverse; each version still got its own vector.
    for (query, key) in [
        ("storage team lead", "team.lead"),
        ("two cores builds", "ci.runner"),
        ("espresso kitchen", "coffee"),
    ] {
        let r = ok(
            &s,
            &vars,
            &["search", query, "--mode", "semantic", "--json"],
            T2,
        );
        assert_eq!(r.strings("key")[0], key, "{query}: {}", r.stdout);
        let sim = r.json()[0]["similarity"].as_f64().unwrap();
        assert!(sim > 0.5 && sim <= 1.0001, "{sim}");
    }
}

#[test]
fn a_provider_that_is_down_never_fails_a_store_and_is_caught_up_later() {
    let s = Sandbox::new();
    let addr = free_port();
    let url = format!("http://{addr}");
    let vars = [
        ("MEM7_EMBED_PROVIDER", "ollama"),
        ("MEM7_EMBED_URL", url.as_str()),
        ("MEM7_EMBED_MODEL", "bow-1"),
    ];
    ok(
        &s,
        &vars,
        &["store", "release.train", "the train leaves on tuesdays"],
        T1,
    );
    let r = ok(&s, &vars, &["recall", "release.train", "--json"], T1);
    assert_eq!(r.strings("value"), ["the train leaves on tuesdays"]);

    // The default search falls back to words and says why.
    let r = ok(&s, &vars, &["search", "train tuesdays", "--json"], T1);
    assert_eq!(r.strings("key"), ["release.train"]);
    assert!(
        r.stderr.contains("embedding provider ollama/bow-1"),
        "{}",
        r.stderr
    );
    // Asked for explicitly, meaning search fails with the provider named.
    let r = mem7(&s, &vars, &["search", "train", "--mode", "semantic"], T1);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains(&addr.to_string()), "{}", r.stderr);
    let r = mem7(&s, &vars, &["embed"], T1);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("embedding provider"), "{}", r.stderr);

    // The provider comes up on that address: the vector is filled in.
    let p = Provider::on(TcpListener::bind(addr).unwrap());
    let r = ok(&s, &vars, &["embed", "--json"], T2);
    assert_eq!(r.json()["computed"], 1);
    assert_eq!(p.texts()[0], "release train: the train leaves on tuesdays");
    let r = ok(
        &s,
        &vars,
        &["search", "tuesdays", "--mode", "semantic", "--json"],
        T2,
    );
    assert_eq!(r.strings("key"), ["release.train"]);
}

#[test]
fn a_search_fills_in_the_few_vectors_stored_since_the_last_fill() {
    let s = Sandbox::new();
    let p = Provider::start();
    let url = p.url();
    let vars = ollama(&url);
    ok(&s, &vars, &["store", "a", "alpha beta"], T1);
    ok(&s, &vars, &["embed"], T1);
    ok(&s, &vars, &["store", "b", "gamma delta"], T2);
    let r = ok(&s, &vars, &["search", "gamma", "--json"], T2);
    assert_eq!(r.strings("key")[0], "b");
    assert_eq!(r.json()[0]["semantic_rank"], 1, "{}", r.stdout);
    assert_eq!(r.json()[0]["lexical_rank"], 1, "{}", r.stdout);
    assert!(p.texts().contains(&"b: gamma delta".to_string()));
}

/// The vector files in the index directory.
fn vector_files(s: &Sandbox) -> Vec<std::path::PathBuf> {
    let mut out: Vec<_> = std::fs::read_dir(s.ws.join(".mem7"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            name.contains(".vectors-") && !name.contains(".tmp")
        })
        .collect();
    out.sort();
    out
}

#[test]
fn searches_map_the_vector_file_and_never_trust_a_broken_one() {
    let s = Sandbox::new();
    let p = Provider::start();
    let url = p.url();
    let vars = ollama(&url);
    let run = |args: &[&str], now| ok(&s, &vars, args, now);
    let search = || {
        let r = run(&["search", "cat mat", "--mode", "semantic", "--json"], T3);
        (r.strings("key"), r.stdout)
    };
    run(&["store", "pets", "the cat sat on the mat"], T1);
    run(&["store", "tax", "quarterly tax filing deadline"], T1);
    run(&["embed"], T1);
    assert!(vector_files(&s).is_empty(), "written by the first search");
    let (first, _) = search();
    assert_eq!(first[0], "pets");
    let files = vector_files(&s);
    assert_eq!(files.len(), 1, "one file for one model and generation");

    // A later process maps the file and tops it up with what was stored since.
    run(&["store", "rug", "a kitten is on the rug and the mat"], T2);
    let (keys, _) = search();
    assert_eq!(keys.len(), first.len() + 1, "{keys:?}");
    assert!(keys[..2].contains(&"rug".to_string()), "{keys:?}");
    let (again, answer) = search();
    assert_eq!(again, keys);

    // A file cut short, or filled with rubbish, is ignored and written anew; the answer
    // stays the same.
    let len = std::fs::metadata(&files[0]).unwrap().len() as usize;
    for broken in [
        std::fs::read(&files[0]).unwrap()[..len / 2].to_vec(),
        vec![0xA5; len],
    ] {
        std::fs::write(&files[0], &broken).unwrap();
        let (_, after) = search();
        assert_eq!(after, answer);
        assert_ne!(std::fs::read(&files[0]).unwrap(), broken, "written anew");
    }

    // A rebuild starts a new generation; the old generation's file goes with it.
    run(&["reindex"], T3);
    let (_, after) = search();
    assert_eq!(after, answer);
    let now = vector_files(&s);
    assert_eq!(now.len(), 1, "{now:?}");
    assert_ne!(now, files, "the new generation's file, not the old one");

    // A cache deleted (say, because the model behind a name changed) is not served from
    // the vector file made from it: the next search embeds the texts again.
    let before = p.seen().len();
    for f in [
        "embeddings.sqlite",
        "embeddings.sqlite-wal",
        "embeddings.sqlite-shm",
    ] {
        let _ = std::fs::remove_file(s.ws.join(".mem7").join(f));
    }
    let (_, after) = search();
    assert_eq!(after, answer);
    let sent: Vec<String> = p.seen()[before..]
        .iter()
        .flat_map(|seen| seen.inputs.clone())
        .collect();
    assert!(
        sent.contains(&"pets: the cat sat on the mat".to_string()),
        "{sent:?}"
    );
}

/// The embedding cache as a mem7 from before December 2026 laid it out: a `WITHOUT
/// ROWID` table (`index/embeddings.rs` says why it moved).
fn put_back_the_layout_before(cache: &std::path::Path) {
    let conn = rusqlite::Connection::open(cache).unwrap();
    conn.execute_batch(
        "BEGIN;
         ALTER TABLE embeddings RENAME TO moved;
         CREATE TABLE embeddings (
             text_hash BLOB NOT NULL, model TEXT NOT NULL, dim INTEGER NOT NULL,
             vector BLOB NOT NULL, PRIMARY KEY (text_hash, model, dim)
         ) WITHOUT ROWID;
         INSERT INTO embeddings SELECT text_hash, model, dim, vector FROM moved;
         DROP TABLE moved;
         CREATE INDEX embeddings_by_model ON embeddings (model, text_hash);
         COMMIT;",
    )
    .unwrap();
}

/// Whether the cache's table is laid out as before (`WITHOUT ROWID`).
fn laid_out_as_before(cache: &std::path::Path) -> bool {
    let conn = rusqlite::Connection::open(cache).unwrap();
    let sql = "SELECT sql LIKE '%WITHOUT ROWID%' FROM sqlite_master WHERE name = 'embeddings'";
    conn.query_row(sql, [], |r| r.get(0)).unwrap()
}

#[test]
fn a_cache_from_a_mem7_before_is_moved_once_and_nothing_is_embedded_again() {
    let s = Sandbox::new();
    let p = Provider::start();
    let url = p.url();
    let vars = ollama(&url);
    let run = |args: &[&str], now| ok(&s, &vars, args, now);
    let search = || run(&["search", "cat mat", "--mode", "semantic", "--json"], T3).stdout;
    run(&["store", "pets", "the cat sat on the mat"], T1);
    run(&["store", "tax", "quarterly tax filing deadline"], T1);
    run(&["embed"], T1);
    let answer = search();
    let files = vector_files(&s);
    assert_eq!(files.len(), 1);
    let file = std::fs::read(&files[0]).unwrap();
    let cache = s.ws.join(".mem7/embeddings.sqlite");
    put_back_the_layout_before(&cache);
    assert!(laid_out_as_before(&cache));

    let sent = p.seen().len();
    assert_eq!(search(), answer, "the same answer from the moved cache");
    assert!(!laid_out_as_before(&cache), "moved");
    assert_eq!(
        p.seen().len(),
        sent,
        "nothing embedded again, not even the query"
    );
    assert_eq!(
        vector_files(&s),
        files,
        "the vector file made from the cache before stays good"
    );
    assert_eq!(std::fs::read(&files[0]).unwrap(), file);

    // The moved cache takes new vectors and answers with them.
    run(&["store", "rug", "a kitten is on the rug and the mat"], T2);
    let after = run(&["search", "cat mat", "--mode", "semantic", "--json"], T3);
    assert!(
        after.strings("key").contains(&"rug".to_string()),
        "{}",
        after.stdout
    );
    assert_eq!(p.seen().len(), sent + 1, "one new text, embedded once");
}

/// The answers of a few searches by meaning and by both, as JSON text.
fn meaning_answers(s: &Sandbox, vars: &[(&str, &str)]) -> Vec<String> {
    let mut out = Vec::new();
    for query in ["cat mat", "tax deadline", "kitten rug"] {
        for mode in ["semantic", "hybrid"] {
            let args = ["search", query, "--mode", mode, "--json"];
            out.push(ok(s, vars, &args, T3).stdout);
        }
    }
    out
}

#[test]
fn a_rebuild_carries_the_vector_file_and_it_answers_as_one_built_afresh() {
    let s = Sandbox::new();
    let p = Provider::start();
    let url = p.url();
    let vars = ollama(&url);
    let run = |args: &[&str], now| ok(&s, &vars, args, now);
    run(&["store", "pets", "the cat sat on the mat"], T1);
    run(&["store", "tax", "quarterly tax filing deadline"], T1);
    run(&["store", "rug", "a kitten is on the rug"], T2);
    run(&["embed"], T2);
    let answers = meaning_answers(&s, &vars);
    let old = vector_files(&s);
    assert_eq!(old.len(), 1, "{old:?}");

    // A rebuild of the same files: the new generation has its vector file before any
    // search, and it is the one a search would assemble, byte for byte (but for the
    // cache's write count in the header, which the searches' queries moved on).
    run(&["reindex"], T3);
    let carried = vector_files(&s);
    assert_eq!(
        carried.len(),
        1,
        "carried to the new generation: {carried:?}"
    );
    assert_ne!(carried, old);
    let carried_bytes = std::fs::read(&carried[0]).unwrap();
    assert_eq!(meaning_answers(&s, &vars), answers);
    std::fs::remove_file(&carried[0]).unwrap();
    assert_eq!(meaning_answers(&s, &vars), answers, "assembled afresh");
    let fresh = std::fs::read(&carried[0]).unwrap();
    assert_eq!(fresh.len(), carried_bytes.len());
    assert_eq!(
        fresh[..32],
        carried_bytes[..32],
        "header up to the cache stamp"
    );
    assert_eq!(fresh[48..], carried_bytes[48..], "everything after it");

    // Entries recorded before the ones indexed (a merge, an import of old notes) make
    // the rebuild number the versions anew: the carried set is laid out for the new ids
    // and still answers as one assembled afresh.
    let file = std::fs::read_dir(s.memory_dir())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "md"))
        .unwrap();
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&file)
        .unwrap();
    f.write_all(
        b"\n## early\n\n```mem7\nop: store\nrecorded: 2025-06-01T00:00:00Z\nagent: a person\n```\n\n> the first cat on the first mat\n\n---\n",
    )
    .unwrap();
    drop(f);
    run(&["embed"], T3);
    run(&["reindex"], T3);
    let remapped = vector_files(&s);
    assert_eq!(remapped.len(), 1, "{remapped:?}");
    assert_ne!(remapped, carried, "a new generation");
    let answers = meaning_answers(&s, &vars);
    assert!(answers[0].contains("\"early\""), "{}", answers[0]);
    std::fs::remove_file(&remapped[0]).unwrap();
    assert_eq!(meaning_answers(&s, &vars), answers, "assembled afresh");
}

#[test]
fn hybrid_and_semantic_ranking_honour_the_time_and_tag_filters() {
    let s = Sandbox::new();
    let p = Provider::start();
    let url = p.url();
    let vars = ollama(&url);
    ok(
        &s,
        &vars,
        &[
            "store",
            "db.primary",
            "postgres is the primary database",
            "--valid-from",
            "2020-01-01",
            "--tag",
            "infra",
        ],
        T1,
    );
    ok(
        &s,
        &vars,
        &[
            "store",
            "db.primary",
            "mysql is the primary database",
            "--valid-from",
            "2022-01-01",
            "--tag",
            "infra",
        ],
        T2,
    );
    ok(
        &s,
        &vars,
        &["store", "db.note", "the database team meets weekly"],
        T2,
    );
    ok(&s, &vars, &["embed"], T2);
    for mode in ["hybrid", "semantic"] {
        let search = |extra: &[&str]| {
            let mut args = vec!["search", "primary database", "--mode", mode, "--json"];
            args.extend_from_slice(extra);
            ok(&s, &vars, &args, T3)
        };
        let values = |r: &Run| r.strings("value");
        // In 2021 only the postgres version held; in 2023 only mysql.
        let r = search(&["--valid-at", "2021-06-01", "--key-prefix", "db.primary"]);
        assert_eq!(values(&r), ["postgres is the primary database"], "{mode}");
        let r = search(&["--valid-at", "2023-06-01", "--key-prefix", "db.primary"]);
        assert_eq!(values(&r), ["mysql is the primary database"], "{mode}");
        // As believed before the second store, 2023 still had postgres.
        let r = search(&[
            "--valid-at",
            "2023-06-01",
            "--as-of",
            "2026-01-15",
            "--key-prefix",
            "db.primary",
        ]);
        assert_eq!(values(&r), ["postgres is the primary database"], "{mode}");
        // The note is not tagged infra, and did not exist before T2.
        let r = search(&["--tag", "infra"]);
        assert_eq!(r.strings("key"), ["db.primary"], "{mode}");
        let r = search(&["--as-of", "2026-01-15"]);
        assert_eq!(r.strings("key"), ["db.primary"], "{mode}: {}", r.stdout);
        let r = search(&[]);
        let mut keys = r.strings("key");
        keys.sort();
        assert_eq!(keys, ["db.note", "db.primary"], "{mode}");
    }
}

#[test]
fn without_a_provider_search_is_lexical_and_says_so_once() {
    let s = Sandbox::new();
    ok(&s, &[], &["store", "k", "plain words here"], T1);
    let r = ok(&s, &[], &["search", "words"], T1);
    assert!(r.stderr.contains("searching by words only"), "{}", r.stderr);
    assert!(r.stderr.contains("`mem7 model fetch`"), "{}", r.stderr);
    let r = ok(&s, &[], &["search", "words"], T1);
    assert!(!r.stderr.contains("words only"), "said twice: {}", r.stderr);
    // Meaning search asked for explicitly is a usage error with the fix.
    let r = mem7(&s, &[], &["search", "words", "--mode", "semantic"], T1);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("MEM7_EMBED_PROVIDER"), "{}", r.stderr);
    // `none` is a choice: nothing is said.
    let quiet = Sandbox::new();
    ok(&quiet, &[], &["store", "k", "plain words here"], T1);
    let r = ok(
        &quiet,
        &[("MEM7_EMBED_PROVIDER", "none")],
        &["search", "words"],
        T1,
    );
    assert_eq!(r.stderr, "");
}

#[test]
fn an_unknown_provider_is_a_usage_error_that_never_blocks_a_store() {
    let s = Sandbox::new();
    let vars = [("MEM7_EMBED_PROVIDER", "bogus")];
    ok(&s, &vars, &["store", "k", "v"], T1);
    let r = mem7(&s, &vars, &["search", "v"], T1);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("unknown embedding provider \"bogus\""),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("local, ollama, openai or none"),
        "{}",
        r.stderr
    );
    let r = mem7(&s, &vars, &["search", "v", "--mode", "lexical"], T1);
    assert_eq!(r.code, 0, "lexical search needs no provider: {}", r.stderr);
}

#[test]
fn the_provider_comes_from_mem7_yaml_when_no_variable_is_set() {
    let s = Sandbox::new();
    let p = Provider::start();
    std::fs::write(
        s.ws.join("mem7.yaml"),
        format!(
            "embeddings:\n  provider: ollama\n  url: {}\n  model: from-yaml\n  batch_size: 2\n",
            p.url()
        ),
    )
    .unwrap();
    // A provider that sends text to an address is a project's word that widens: it
    // counts once approved.
    s.ok(&["allow"], None);
    for i in 0..5 {
        ok(
            &s,
            &[],
            &["store", &format!("k{i}"), &format!("value number {i}")],
            T1,
        );
    }
    let r = ok(&s, &[], &["embed", "--json"], T1);
    assert_eq!(r.json()["model"], "ollama/from-yaml");
    let sizes: Vec<usize> = p.seen().iter().map(|s| s.inputs.len()).collect();
    assert_eq!(sizes, [2, 2, 1], "batches of batch_size");
    // The variable wins over the file.
    let r = mem7(
        &s,
        &[("MEM7_EMBED_PROVIDER", "none")],
        &["search", "value", "--mode", "semantic"],
        T1,
    );
    assert_eq!(r.code, 2);
}

#[test]
fn watch_and_the_mcp_server_fill_in_vectors_in_the_background() {
    let s = Sandbox::new();
    let p = Provider::start();
    let url = p.url();
    let vars = ollama(&url);
    ok(&s, &vars, &["store", "seed", "first fact"], T1);
    let spawn = |args: &[&str]| {
        let mut cmd = s.command(args, None);
        for (k, v) in vars {
            cmd.env(k, v);
        }
        cmd.stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap()
    };
    // `mcp` with no client attached still runs its watcher (stdin stays open).
    for (args, key) in [(&["watch"][..], "from.watch"), (&["mcp"][..], "from.mcp")] {
        let mut child = spawn(args);
        let wanted = "seed: first fact".to_string();
        wait_for(&format!("{args:?} embeds what was there"), || {
            p.texts().contains(&wanted)
        });
        ok(&s, &vars, &["store", key, "written while serving"], None);
        let wanted = format!("{}: written while serving", key.replace('.', " "));
        wait_for(&format!("{args:?} embeds a new store"), || {
            p.texts().contains(&wanted)
        });
        child.kill().unwrap();
        child.wait().unwrap();
    }
    // Each text was sent once, whichever process filled it in.
    let texts = p.texts();
    assert_eq!(
        texts.iter().filter(|t| *t == "seed: first fact").count(),
        1,
        "{texts:?}"
    );
}

#[test]
fn context_with_a_query_finds_facts_by_meaning() {
    let s = Sandbox::new();
    let p = Provider::start();
    let url = p.url();
    let vars = ollama(&url);
    ok(
        &s,
        &vars,
        &["store", "pets.note", "the cat sleeps on the mat"],
        T1,
    );
    ok(
        &s,
        &vars,
        &["store", "infra.note", "the build server runs debian"],
        T1,
    );
    // "kitten" and "rug" share no word with the fact; the provider knows they mean it.
    let words = ok(
        &s,
        &vars,
        &["search", "kitten rug", "--mode", "lexical", "--json"],
        T2,
    );
    assert_eq!(words.json(), json!([]));
    let r = ok(&s, &vars, &["context", "kitten rug"], T2);
    assert!(
        r.stdout.contains("the cat sleeps on the mat"),
        "{}",
        r.stdout
    );
    // The unrelated fact (no shared meaning at all: cosine 0) is left out.
    assert!(!r.stdout.contains("debian"), "{}", r.stdout);
}

#[test]
fn reindex_rebuilds_without_embedding_unless_asked() {
    let s = Sandbox::new();
    let p = Provider::start();
    let url = p.url();
    let vars = [
        ("MEM7_EMBED_PROVIDER", "ollama"),
        ("MEM7_EMBED_URL", url.as_str()),
        ("MEM7_EMBED_MODEL", "bow-1"),
    ];
    ok(
        &s,
        &vars,
        &["store", "db.engine", "postgres holds the orders"],
        T1,
    );
    ok(&s, &vars, &["embed"], T1);
    let sent = p.seen().len();
    ok(
        &s,
        &vars,
        &["store", "deploy.day", "friday deploys are frozen"],
        T1,
    );
    ok(&s, &vars, &["store", "team.lead", "ada leads the team"], T1);
    let cache = s.ws.join(".mem7/embeddings.sqlite");
    let digest = || blake3::hash(&std::fs::read(&cache).unwrap());
    let before = digest();
    let r = ok(&s, &vars, &["reindex"], T2);
    assert_eq!(p.seen().len(), sent, "reindex called the provider");
    assert!(
        r.stdout
            .contains("2 texts wait for vectors of ollama/bow-1: run `mem7 embed`"),
        "{}",
        r.stdout
    );
    assert_eq!(
        digest(),
        before,
        "reindex without --embed changed the cache"
    );
    let r = ok(&s, &vars, &["reindex", "--embed"], T2);
    assert!(r.stdout.contains("embedded 2 new texts"), "{}", r.stdout);
    assert_eq!(p.seen().len(), sent + 1, "one batch");
    let r = ok(&s, &vars, &["reindex"], T2);
    assert!(!r.stdout.contains("wait for vectors"), "{}", r.stdout);
}
