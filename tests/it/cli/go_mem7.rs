//! Workspaces of the Go mem7: loaded, their embeddings carried over, their bodies read as
//! the Go mem7 read them.

use super::*;

/// Copies the hand-made Go mem7 data directory into the sandbox; returns its path.
fn legacy_dir(s: &Sandbox) -> std::path::PathBuf {
    s.copy_fixture("legacy-go")
}

#[test]
fn go_mem7_workspaces_load() {
    let s = Sandbox::bare();
    let dir = legacy_dir(&s);
    let run = |args: &[&str]| {
        let out = s
            .command(args, Some("2025-02-01T00:00:00Z"))
            .env_remove("MEM7_WORKSPACE")
            .env("MEM7_DIR", &dir)
            .output()
            .unwrap();
        let r = world::finish(out);
        // A recall that finds nothing exits 4.
        let miss = args[0] == "recall" && r.stdout.trim() == "[]";
        assert_eq!(r.code, if miss { 4 } else { 0 }, "{args:?}: {}", r.stderr);
        assert!(r.stderr.is_empty(), "{args:?}: {}", r.stderr);
        r.json()
    };
    // (entity, predicate) → entity:predicate; a later `updated` supersedes.
    let v = run(&["recall", "event7:host", "--json"]);
    assert_eq!(v[0]["value"], "Cloudflare");
    assert_eq!(v[0]["valid_from"], "2025-01-11T07:00:00.123456Z");
    assert_eq!(v[0]["tags"], serde_json::json!(["infra"]));
    assert_eq!(v[0]["agent"], "claude-code");
    let v = run(&[
        "recall",
        "event7:host",
        "--valid-at",
        "2025-01-10T12:00:00Z",
        "--json",
    ]);
    assert_eq!(v[0]["value"], "Railway");
    assert_eq!(v[0]["file"], "memory/2025-01-10.md");
    assert_eq!(v[0]["line"], 1);
    // The default predicate `note` maps to the entity alone; ttl bounds valid time.
    let v = run(&[
        "recall",
        "user",
        "--valid-at",
        "2025-01-10T10:30:00Z",
        "--json",
    ]);
    assert_eq!(v[0]["value"], "Prefers short answers.\nUses **vim**.");
    assert_eq!(v[0]["valid_to"], "2025-01-10T11:00:00Z");
    assert_eq!(
        run(&[
            "recall",
            "user",
            "--valid-at",
            "2025-01-10T11:30:00Z",
            "--json"
        ]),
        serde_json::json!([])
    );
    // delete forgets one key; delete_tags forgets every key with the tags.
    let keys = |v: serde_json::Value| -> Vec<String> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|x| x["key"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(keys(run(&["list", "--json"])), ["event7:host"]);
    let before = run(&[
        "list",
        "--as-of",
        "2025-01-11T09:15:00Z",
        "--valid-at",
        "2025-01-11T09:15:00Z",
        "--json",
    ]);
    assert_eq!(
        keys(before),
        [
            "event7:db",
            "event7:host",
            "oldproj",
            "oldproj:lang",
            "scratch"
        ]
    );
    // A delete without a predicate forgets the whole entity.
    let before = run(&[
        "list",
        "--as-of",
        "2025-01-11T10:59:00Z",
        "--prefix",
        "oldproj",
        "--json",
    ]);
    assert_eq!(keys(before), ["oldproj", "oldproj:lang"]);
    let h = run(&["history", "event7:host", "--json"]);
    assert_eq!(h.as_array().unwrap().len(), 3, "{h}");
    // New writes go on top of the legacy files and chain after them.
    let out = s
        .command(
            &["store", "event7:host", "Fly.io"],
            Some("2025-02-01T00:00:00Z"),
        )
        .env_remove("MEM7_WORKSPACE")
        .env("MEM7_DIR", &dir)
        .output()
        .unwrap();
    assert_eq!(world::finish(out).code, 0);
    assert_eq!(
        run(&["recall", "event7:host", "--json"])[0]["value"],
        "Fly.io"
    );
}

#[test]
fn go_mem7_embeddings_are_carried_over_and_survive_rebuilds() {
    let s = Sandbox::bare();
    let dir = legacy_dir(&s);
    // A Go mem7 index.db: one row per (entity, predicate), float32 embedding BLOBs.
    let vector: Vec<f32> = vec![0.25, -0.5, 1.0];
    let blob: Vec<u8> = vector.iter().flat_map(|f| f.to_le_bytes()).collect();
    {
        let conn = rusqlite::Connection::open(dir.join("index.db")).unwrap();
        conn.execute_batch(
            "CREATE TABLE memories (entity TEXT, predicate TEXT, content TEXT, tags TEXT, updated TEXT, embedding BLOB);",
        )
        .unwrap();
        conn.execute(
            "INSERT INTO memories VALUES ('event7', 'host', 'Cloudflare', 'infra', '2025-01-11T07:00:00Z', ?1)",
            [&blob],
        )
        .unwrap();
        conn.execute(
            "INSERT INTO memories VALUES ('user', 'note', 'Prefers short answers.', '', '2025-01-10T10:00:00Z', NULL)",
            [],
        )
        .unwrap();
    }
    let run = |args: &[&str]| {
        let out = s
            .command(args, Some("2025-02-01T00:00:00Z"))
            .env_remove("MEM7_WORKSPACE")
            .env("MEM7_DIR", &dir)
            .output()
            .unwrap();
        let r = world::finish(out);
        assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
        r
    };
    assert_eq!(
        run(&["recall", "event7:host", "--json"]).json()[0]["value"],
        "Cloudflare"
    );
    let cache = dir.join("workspace/.mem7/embeddings.sqlite");
    let rows = || -> Vec<(Vec<u8>, String, i64, Vec<u8>)> {
        let conn = rusqlite::Connection::open(&cache).unwrap();
        let mut stmt = conn
            .prepare("SELECT text_hash, model, dim, vector FROM embeddings")
            .unwrap();
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    let carried = rows();
    assert_eq!(carried.len(), 1, "one Go row had a vector");
    assert_eq!(
        carried[0].0,
        blake3::hash(b"Cloudflare").as_bytes().to_vec(),
        "keyed by the hash of the text"
    );
    assert_eq!((carried[0].1.as_str(), carried[0].2), ("mem7-go", 3));
    assert_eq!(carried[0].3, blob);
    // Rebuilds keep the cache and do not duplicate it.
    run(&["reindex"]);
    assert_eq!(rows(), carried);
}

/// Runs mem7 on the Go mem7 data directory `dir` (through `MEM7_DIR`, as a Go user would).
fn in_go_dir(s: &Sandbox, dir: &std::path::Path, args: &[&str]) -> world::Run {
    let out = s
        .command(args, Some("2025-04-01T00:00:00Z"))
        .env_remove("MEM7_WORKSPACE")
        .env("MEM7_DIR", dir)
        .output()
        .unwrap();
    world::finish(out)
}

#[test]
fn go_bodies_with_conflict_markers_escapes_and_headings_read_as_the_go_mem7_did() {
    let s = Sandbox::bare();
    let dir = s.copy_fixture("legacy-go-bodies");
    let run = |args: &[&str]| {
        let r = in_go_dir(&s, &dir, args);
        assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
        assert!(r.stderr.is_empty(), "{args:?}: {}", r.stderr);
        r.json()
    };
    // The Go mem7's reader: every line up to the one that is `---` once trimmed is body,
    // joined with LF, without the empty lines around it; escapes are kept.
    let want = [
        (
            "deploy:incident",
            "The release branch would not merge; git left this in config.yaml:\n\n\
             <<<<<<< HEAD\nport: 8080\n=======\nport: 9090\n>>>>>>> release\nWe kept 9090.",
        ),
        (
            "merge-help",
            "A diff3 conflict has a base section:\n<<<<<<< ours\na\n||||||| base\nb\n\
             =======\nc\n>>>>>>> theirs",
        ),
        (
            "runbook",
            "## Deploy\n\n1. Build the image.\n2. Push it.\n\n\\---\n\n## Rollback\n\n\
             Front matter in the chart looks like this:\n\n\\```mem7\nname: api\n\\---\n\\```",
        ),
    ];
    for (key, value) in want {
        let v = run(&["recall", key, "--json"]);
        assert_eq!(v[0]["value"], value, "{key}");
    }
    let listed: Vec<String> = run(&["list", "--json"])
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["key"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(listed, want.map(|(k, _)| k));
    // verify: three Go entries, which had no chain; no conflict, nothing else.
    let r = in_go_dir(&s, &dir, &["verify", "--json"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let kinds = r.strings("kind");
    assert_eq!(kinds, ["legacy", "legacy", "legacy"], "{}", r.stdout);
    let lines: Vec<u64> = r
        .json()
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["line"].as_u64().unwrap())
        .collect();
    assert_eq!(lines, [1, 23, 50]);
}

#[test]
fn a_real_conflict_in_a_go_workspace_still_stops_every_command() {
    let conflicts = [
        // Two clones appended different entries: the markers stand between entries.
        (
            "around entries",
            "\n<<<<<<< HEAD\n## a\n\n```mem7\nop: store\nupdated: 2025-03-02T00:00:00Z\n```\n\none\n\n---\n\
             =======\n## b\n\n```mem7\nop: store\nupdated: 2025-03-02T00:00:00Z\n```\n\ntwo\n\n---\n>>>>>>> other\n",
        ),
        // Both edited one Go note across its terminator.
        (
            "around a terminator",
            "\n## c\n\n```mem7\nop: store\nupdated: 2025-03-02T00:00:00Z\n```\n\n<<<<<<< HEAD\nthree\n\n---\n\
             =======\nfour\n\n---\n>>>>>>> other\n",
        ),
    ];
    for (name, conflict) in conflicts {
        let s = Sandbox::bare();
        let dir = s.copy_fixture("legacy-go-bodies");
        let file = dir.join("workspace/memory/2025-03-01.md");
        let text = std::fs::read_to_string(&file).unwrap();
        std::fs::write(&file, format!("{text}{conflict}")).unwrap();
        let marker = text.matches('\n').count()
            + 1
            + conflict
                .find('<')
                .map_or(0, |i| conflict[..i].matches('\n').count());
        let r = in_go_dir(&s, &dir, &["recall", "runbook"]);
        assert_eq!(r.code, 2, "{name}: {}", r.stdout);
        assert!(
            r.stderr.contains(&format!(
                "memory/2025-03-01.md:{marker}: unresolved git merge conflict"
            )),
            "{name}: {}",
            r.stderr
        );
        let r = in_go_dir(&s, &dir, &["verify", "--json"]);
        assert_eq!(r.code, 1, "{name}");
        assert!(
            r.strings("kind").contains(&"conflict".to_string()),
            "{name}: {}",
            r.stdout
        );
    }

    // In an entry mem7 wrote, whose values are always block-quoted, any marker is a
    // conflict, even a whole region.
    let s = Sandbox::new();
    s.ok(&["store", "k", "v"], Some("2026-02-15T00:00:00Z"));
    let file = s.memory_dir().join("2026-02-15.md");
    let text = std::fs::read_to_string(&file).unwrap();
    let edited = text.replace("> v\n", "<<<<<<< HEAD\n> v\n=======\n> w\n>>>>>>> theirs\n");
    std::fs::write(&file, &edited).unwrap();
    let r = s.run(&["recall", "k"], None);
    assert_eq!(r.code, 2, "{}", r.stdout);
    let line = edited[..edited.find("<<<<<<<").unwrap()]
        .matches('\n')
        .count()
        + 1;
    assert!(
        r.stderr.contains(&format!(
            "memory/2026-02-15.md:{line}: unresolved git merge conflict"
        )),
        "{}",
        r.stderr
    );
}

#[test]
fn two_go_facts_that_map_to_one_key_are_named_with_both_sources() {
    let s = Sandbox::bare();
    let dir = s.dir.path().join("mem7-go");
    let memory = dir.join("workspace/memory");
    std::fs::create_dir_all(&memory).unwrap();
    let go = |entity: &str, predicate: &str, updated: &str, body: &str| {
        format!(
            "## {entity}\n\n```mem7\nop: store\n{predicate}updated: {updated}\n```\n\n{body}\n\n---\n\n"
        )
    };
    // `a:b` with the default predicate, again later (the same fact: no warning), `c`
    // with and without `predicate: note` (the same key by the documented rule).
    std::fs::write(
        memory.join("2025-01-10.md"),
        [
            go("a:b", "", "2025-01-10T09:00:00Z", "first"),
            go("a:b", "predicate: note\n", "2025-01-10T09:30:00Z", "again"),
            go("c", "", "2025-01-10T09:40:00Z", "one"),
            go("c", "predicate: note\n", "2025-01-10T09:50:00Z", "two"),
        ]
        .concat(),
    )
    .unwrap();
    std::fs::write(
        memory.join("2025-01-11.md"),
        go("a", "predicate: b\n", "2025-01-11T09:00:00Z", "second"),
    )
    .unwrap();
    let r = in_go_dir(&s, &dir, &["recall", "a:b", "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    // Both read as one key, the later one winning, and a warning names both sources.
    assert_eq!(r.json()[0]["value"], "second");
    let warnings: Vec<&str> = r.stderr.lines().filter(|l| l.contains("warning")).collect();
    assert_eq!(warnings.len(), 1, "{}", r.stderr);
    assert!(
        warnings[0].contains("memory/2025-01-11.md:1:")
            && warnings[0].contains("entity `a` with predicate `b`")
            && warnings[0].contains("entity `a:b` with predicate `note` at memory/2025-01-10.md:1")
            && warnings[0].contains("key `a:b`"),
        "{}",
        r.stderr
    );

    // A colliding Go entry that arrives later (the Go mem7 still writing here) is
    // caught too: the index is rebuilt to see every Go fact.
    std::fs::write(
        memory.join("2025-01-12.md"),
        go("c:d", "", "2025-01-12T09:00:00Z", "x")
            + &go("c", "predicate: d\n", "2025-01-12T10:00:00Z", "y"),
    )
    .unwrap();
    let r = in_go_dir(&s, &dir, &["recall", "c:d", "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr.contains(
            "memory/2025-01-12.md:12: Go mem7 entity `c` with predicate `d` maps to the key `c:d`, \
             as entity `c:d` with predicate `note` at memory/2025-01-12.md:1 does"
        ),
        "{}",
        r.stderr
    );
}
