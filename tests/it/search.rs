//! Full-text search and timelines through the binary, on real tantivy and SQLite.

use crate::world::Sandbox;

const NOW: &str = "2026-05-01T00:00:00Z";

fn workspace() -> Sandbox {
    let s = Sandbox::new();
    s.ok(
        &[
            "store",
            "event7:host",
            "Railway deployment target",
            "--tag",
            "infra",
        ],
        Some("2026-02-15T00:00:00Z"),
    );
    s.ok(
        &[
            "store",
            "event7:host",
            "Cloudflare pages, deploying nightly",
            "--tag",
            "infra",
        ],
        Some("2026-03-20T00:00:00Z"),
    );
    s.ok(
        &[
            "store",
            "event7:host",
            "local only",
            "--valid-from",
            "2026-04-05",
            "--tag",
            "infra",
        ],
        Some("2026-04-12T00:00:00Z"),
    );
    s.ok(
        &[
            "store",
            "user:editor",
            "vim with lots of plugins",
            "--tag",
            "prefs",
        ],
        Some("2026-04-12T01:00:00Z"),
    );
    s.ok(
        &[
            "store",
            "team:oncall",
            "Alice deploys on Fridays",
            "--tag",
            "people",
        ],
        Some("2026-04-12T02:00:00Z"),
    );
    s
}

fn search(s: &Sandbox, args: &[&str]) -> Vec<(String, String)> {
    let mut full = vec!["search"];
    full.extend_from_slice(args);
    full.push("--json");
    let r = s.ok(&full, Some(NOW));
    r.json()
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            assert!(v["score"].as_f64().unwrap() > 0.0, "{v}");
            (
                v["key"].as_str().unwrap().to_string(),
                v["value"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn time_filters_run_inside_the_search() {
    let s = workspace();
    // "What did we know about the deploy target on April 11th?"
    let hits = search(
        &s,
        &[
            "deploy",
            "--valid-at",
            "2026-04-10",
            "--as-of",
            "2026-04-11",
            "--key-prefix",
            "event7:",
        ],
    );
    assert_eq!(
        hits,
        [(
            "event7:host".to_string(),
            "Cloudflare pages, deploying nightly".to_string()
        )]
    );
    // Today we know Cloudflare stopped on 04-05: nothing about deploying holds on 04-10.
    assert!(
        search(
            &s,
            &[
                "deploy",
                "--valid-at",
                "2026-04-10",
                "--key-prefix",
                "event7:"
            ]
        )
        .is_empty()
    );
    // On 03-01 Railway held (as we know it now: the remnant version).
    let hits = search(&s, &["railway", "--valid-at", "2026-03-01"]);
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].1, "Railway deployment target");
}

#[test]
fn stemming_keys_whole_and_by_parts_and_tags() {
    let s = workspace();
    let keys =
        |args: &[&str]| -> Vec<String> { search(&s, args).into_iter().map(|h| h.0).collect() };
    // "deploying" and "deploys" meet "deploy" through the English stemmer.
    let mut k = keys(&[
        "deploy",
        "--valid-at",
        "2026-03-25",
        "--as-of",
        "2026-04-01",
    ]);
    k.sort();
    assert_eq!(k, ["event7:host"]);
    assert_eq!(keys(&["deploy"]), ["team:oncall"]);
    assert_eq!(keys(&["event7:host"]), ["event7:host"]);
    assert_eq!(keys(&["host"]), ["event7:host"]);
    assert_eq!(keys(&["editor"]), ["user:editor"]);
    assert_eq!(keys(&["plugins", "--tag", "prefs"]), ["user:editor"]);
    assert!(keys(&["plugins", "--tag", "infra"]).is_empty());
    assert_eq!(
        keys(&["people"]),
        ["team:oncall"],
        "tags are searchable text too"
    );
    assert_eq!(
        search(&s, &["the"]).len(),
        0,
        "stop words alone match nothing"
    );
}

#[test]
fn any_user_text_is_just_text() {
    let s = workspace();
    for q in [
        "\"unbalanced",
        "a:b:c",
        "-deploy",
        "*",
        "deploy AND",
        "(((",
        "key:value",
        "^2",
        "~",
        "'",
        "[1 TO 2]",
    ] {
        let r = s.run(&["search", q, "--json"], Some(NOW));
        assert_eq!(r.code, 0, "{q:?}: {}", r.stderr);
        r.json();
    }
    // No words at all is bad input, as in the MCP tool and the page: one rule
    // (`Scopes::search`), exit 2, the problem named.
    for q in ["", "   "] {
        let r = s.run(&["search", q, "--json"], Some(NOW));
        assert_eq!(r.code, 2, "{q:?}: {}", r.stderr);
        assert!(r.stderr.contains("the query is empty"), "{}", r.stderr);
        assert!(r.stdout.is_empty(), "{}", r.stdout);
    }
    let r = s.run(&["search", "deploy AND", "--raw"], Some(NOW));
    assert_eq!(r.code, 2, "bad raw syntax is a usage error: {}", r.stderr);
    let hits = search(&s, &["value:vim", "--raw"]);
    assert_eq!(hits.len(), 1);
}

#[test]
fn the_full_text_index_follows_every_write() {
    let s = workspace();
    assert_eq!(search(&s, &["plugins"]).len(), 1);
    s.ok(&["forget", "user:editor"], Some("2026-04-20T00:00:00Z"));
    assert!(
        search(&s, &["plugins"]).is_empty(),
        "forgotten versions are not believed now"
    );
    assert_eq!(
        search(&s, &["plugins", "--as-of", "2026-04-15"]).len(),
        1,
        "but they were then"
    );
    s.ok(
        &["store", "user:editor", "helix, no plugins"],
        Some("2026-04-21T00:00:00Z"),
    );
    assert_eq!(search(&s, &["helix"]).len(), 1);
    // Hand-appended entries and a deleted index are picked up too.
    std::fs::remove_dir_all(s.ws.join(".mem7")).unwrap();
    assert_eq!(search(&s, &["helix"]).len(), 1);
    let limit = s.ok(&["search", "a", "--limit", "1", "--json"], Some(NOW));
    assert!(limit.json().as_array().unwrap().len() <= 1);
}

/// A search that commits the full-text index finishes the segment merges its commit
/// started before it returns. A merge left running after the writer was dropped ended
/// outside the workspace lock, where it deleted files another server's writer had just
/// listed (that server's search failed), or was cut off with the process, leaving its
/// files behind and the segments unmerged. So after many rounds of a store and a search,
/// each a process of its own, the index has fewer segments than a merge takes (8), and
/// every file in its folder belongs to one of them.
#[test]
fn a_full_text_commit_finishes_its_merges_inside_the_lock() {
    let s = Sandbox::new();
    for i in 0..20 {
        s.ok(
            &["store", &format!("round:r{i}"), &format!("round w{i}x")],
            None,
        );
        let found = s.ok(&["search", &format!("w{i}x"), "--mode", "lexical"], None);
        assert!(
            found.stdout.contains(&format!("round:r{i}")),
            "{}",
            found.stdout
        );
    }
    let current = std::fs::read_to_string(s.ws.join(".mem7/CURRENT")).unwrap();
    let dir =
        s.ws.join(".mem7")
            .join(current.trim().replace(".sqlite", ".tantivy"));
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("meta.json")).unwrap()).unwrap();
    let segments: Vec<String> = meta["segments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|seg| seg["segment_id"].as_str().unwrap().replace('-', ""))
        .collect();
    assert!(
        segments.len() < 8,
        "{} segments: {segments:?}",
        segments.len()
    );
    for item in std::fs::read_dir(&dir).unwrap() {
        let name = item.unwrap().file_name().into_string().unwrap();
        if name == "meta.json" || name == ".managed.json" || name.ends_with(".lock") {
            continue;
        }
        let segment = name.split('.').next().unwrap();
        assert!(
            segments.iter().any(|s| s == segment),
            "{name} belongs to no segment of meta.json {segments:?}"
        );
    }
}

/// A full-text commit names the last version it holds (in tantivy's own `meta.json`), so
/// a process stopped between that commit and recording it in the index's SQLite leaves
/// nothing indexed twice: the next catch-up starts after what the commit named. (The
/// versions past it are added without first being deleted, which cost every commit a
/// lookup in each segment.)
#[test]
fn a_full_text_commit_left_unrecorded_by_a_stop_indexes_nothing_twice() {
    let s = Sandbox::new();
    for i in 0..3 {
        s.ok(
            &["store", &format!("stop:s{i}"), &format!("twice w{i}x")],
            None,
        );
    }
    s.ok(&["search", "twice", "--mode", "lexical"], None);
    let current = std::fs::read_to_string(s.ws.join(".mem7/CURRENT")).unwrap();
    let sqlite = rusqlite::Connection::open(s.ws.join(".mem7").join(current.trim())).unwrap();
    // As if the last search had stopped after tantivy's commit, before recording it.
    let changed = sqlite
        .execute("UPDATE meta SET v = '0' WHERE k = 'fulltext_max_id'", [])
        .unwrap();
    assert_eq!(changed, 1);
    drop(sqlite);
    s.ok(&["store", "stop:s3", "twice w3x"], None);
    let found = s.ok(&["search", "twice", "--mode", "lexical", "--json"], None);
    assert_eq!(
        found.json().as_array().unwrap().len(),
        4,
        "{}",
        found.stdout
    );
    let dir =
        s.ws.join(".mem7")
            .join(current.trim().replace(".sqlite", ".tantivy"));
    let index = tantivy::Index::open_in_dir(&dir).unwrap();
    let docs = index.reader().unwrap().searcher().num_docs();
    assert_eq!(docs, 4, "each version once in the full-text index");
}

#[test]
fn human_output_shows_key_snippet_and_validity() {
    let s = workspace();
    let r = s.ok(
        &[
            "search",
            "nightly",
            "--valid-at",
            "2026-03-25",
            "--as-of",
            "2026-04-01",
        ],
        Some(NOW),
    );
    assert!(r.stdout.contains("event7:host"), "{}", r.stdout);
    assert!(r.stdout.contains("**nightly**"), "{}", r.stdout);
    assert!(
        r.stdout.contains("Valid: 2026-03-20T00:00:00Z → ∞"),
        "{}",
        r.stdout
    );
}

#[test]
fn timelines_follow_either_clock() {
    let s = workspace();
    let timeline = |args: &[&str]| -> Vec<(String, String)> {
        let mut full = vec!["timeline", "--json"];
        full.extend_from_slice(args);
        s.ok(&full, Some(NOW))
            .json()
            .as_array()
            .unwrap()
            .iter()
            .map(|v| {
                (
                    v["key"].as_str().unwrap().to_string(),
                    v["value"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    let valid = timeline(&["--key-prefix", "event7:"]);
    let values: Vec<&str> = valid.iter().map(|v| v.1.as_str()).collect();
    assert_eq!(
        values,
        [
            "Railway deployment target",
            "Cloudflare pages, deploying nightly",
            "local only"
        ]
    );
    let tx = timeline(&["--clock", "tx", "--key-prefix", "event7:"]);
    assert_eq!(tx.len(), 5, "every version ever recorded: {tx:?}");
    let since = timeline(&[
        "--clock",
        "tx",
        "--since",
        "2026-04-12",
        "--until",
        "2026-04-12T01:30:00Z",
    ]);
    assert_eq!(since.len(), 3, "{since:?}");
    assert_eq!(
        s.run(&["timeline", "--clock", "sideways"], Some(NOW)).code,
        2
    );
}

#[test]
fn verify_index_proves_the_index_matches_and_repairs_it() {
    let s = workspace();
    let r = s.run(&["verify", "--index", "--json"], Some(NOW));
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("the index matches the markdown"),
        "{}",
        r.stderr
    );
    // Damage the index behind mem7's back: a changed value and a phantom row.
    let dir = s.ws.join(".mem7");
    let current = std::fs::read_to_string(dir.join("CURRENT")).unwrap();
    {
        let conn = rusqlite::Connection::open(dir.join(current.trim())).unwrap();
        conn.execute(
            "UPDATE versions SET value = 'tampered' WHERE key = 'user:editor'",
            [],
        )
        .unwrap();
        conn.execute(
            "INSERT INTO versions (key, value, tags, agent, valid_from, valid_to, tx_from, tx_to, file, line, hash)
             VALUES ('phantom', 'x', '', 'x', 0, 9223372036854775807, 0, 9223372036854775807, 'memory/none.md', 1, '')",
            [],
        )
        .unwrap();
    }
    assert_eq!(
        search(&s, &["tampered"]).len(),
        1,
        "the damage is visible before the check"
    );
    let r = s.run(&["verify", "--index", "--json"], Some(NOW));
    assert_eq!(r.code, 1, "{}", r.stderr);
    let kinds: Vec<String> = r
        .json()
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["kind"].as_str().unwrap().to_string())
        .collect();
    assert!(
        kinds.iter().all(|k| k == "index-mismatch") && kinds.len() >= 3,
        "{kinds:?}"
    );
    assert!(r.stderr.contains("rebuilt"), "{}", r.stderr);
    // Repaired: the check passes and the phantom is gone.
    assert_eq!(s.run(&["verify", "--index"], Some(NOW)).code, 0);
    assert!(search(&s, &["tampered"]).is_empty());
    let keys = s.ok(&["list", "--json"], Some(NOW));
    assert!(!keys.stdout.contains("phantom"));
}

/// A small workspace of facts a team keeps, as an agent stores them in one session.
fn team() -> Sandbox {
    let s = Sandbox::new();
    let facts = [
        ("payments:owner", "Ada Lovelace owns the payments service"),
        ("payments:provider", "Card payments go through Stripe"),
        ("ci:provider", "CI runs on Buildkite with two agents"),
        ("team:oncall", "This week the on-call engineer is Bo"),
        (
            "deploy:target",
            "Production deploys to Render, staging to Fly.io",
        ),
        (
            "support:group",
            "Caroline went to the LGBTQ support group on 7 May 2023",
        ),
        (
            "support:note",
            "She said it was powerful and she felt accepted",
        ),
        ("user:greeting", "Hey Caroline! Good to see you!"),
    ];
    store_a_second_apart(&s, &facts);
    s
}

fn first_key(s: &Sandbox, query: &str) -> String {
    let hits = s.ok(&["search", query, "--json", "--mode", "lexical"], Some(NOW));
    hits.strings("key").into_iter().next().unwrap_or_default()
}

#[test]
fn a_question_and_its_keyword_form_find_the_same_fact() {
    let s = team();
    for (question, keywords, expected) in [
        (
            "When did Caroline go to the support group?",
            "Caroline support group",
            "support:group",
        ),
        (
            "Who owns the payments service?",
            "payments owner",
            "payments:owner",
        ),
        ("What does our CI run on?", "ci provider", "ci:provider"),
        (
            "Where do we deploy production to?",
            "deploy production",
            "deploy:target",
        ),
        (
            "Who is on call this week?",
            "on-call engineer",
            "team:oncall",
        ),
    ] {
        assert_eq!(first_key(&s, question), expected, "{question}");
        assert_eq!(first_key(&s, keywords), expected, "{keywords}");
    }
}

#[test]
fn facts_written_together_lend_each_other_a_little() {
    let s = Sandbox::new();
    // `g:red` and `k:blue` match the question alike (a tie goes to the one written
    // first); `k:blue` was written right after the fact that matches best, so it
    // borrows a little of its score and comes before `g:red`.
    let facts = [
        ("g:red", "Bring the red tent"),
        ("m:one", "Unrelated note about the printer"),
        ("m:two", "Another unrelated note about lunch"),
        ("p:one", "We plan a camping trip to the lake in June"),
        ("k:blue", "Bring the blue tent"),
    ];
    store_a_second_apart(&s, &facts);
    let query = "camping trip to the lake in June, with a tent";
    let keys = |s: &Sandbox| {
        s.ok(&["search", query, "--json", "--mode", "lexical"], Some(NOW))
            .strings("key")
    };
    assert_eq!(
        keys(&s),
        ["p:one", "k:blue", "g:red"],
        "only matches are results"
    );
    std::fs::write(
        s.ws.join("mem7.yaml"),
        "search:\n  fusion:\n    beside: 0\n",
    )
    .unwrap();
    assert_eq!(
        keys(&s),
        ["p:one", "g:red", "k:blue"],
        "without lending, the tie"
    );
}

#[test]
fn a_question_that_names_an_owner_finds_the_owners_fact_first() {
    let s = Sandbox::new();
    // Bob's fact shares more of the question's words; the question names Alice, and
    // `alice:pets` is kept under her. Days apart, so that no fact lends to another.
    let facts = [
        ("alice:pets", "Adopted a beagle"),
        ("bob:pets", "Adopted a cat from the shelter last spring"),
        ("alice:work", "Works on the billing team"),
        ("bob:work", "Runs the search team"),
        ("alice:home", "Lives in Lisbon"),
        ("bob:home", "Lives in Porto"),
    ];
    for (i, (k, v)) in facts.iter().enumerate() {
        s.ok(
            &["store", k, v],
            Some(&format!("2026-04-0{}T10:00:00Z", i + 1)),
        );
    }
    let query = "What pet did Alice adopt from the shelter last spring?";
    let first_two = |s: &Sandbox| {
        let keys = s
            .ok(&["search", query, "--json", "--mode", "lexical"], Some(NOW))
            .strings("key");
        keys[..2].to_vec()
    };
    assert_eq!(first_two(&s), ["alice:pets", "bob:pets"]);
    std::fs::write(s.ws.join("mem7.yaml"), "search:\n  fusion:\n    owner: 0\n").unwrap();
    assert_eq!(
        first_two(&s),
        ["bob:pets", "alice:pets"],
        "without the owner's gain, the better word match"
    );
}

#[test]
fn a_fact_can_lend_to_what_its_entity_wrote_next() {
    let s = Sandbox::new();
    // `c:one` matches one word more than `z:two`; `z:two` is what `z` wrote next after
    // the fact that matches best, with `b`'s reply between them.
    let facts = [
        ("z:one", "We plan a camping trip to the lake in June"),
        ("b:one", "Sounds fun"),
        ("z:two", "Bring the blue tent"),
        ("c:one", "Bring the red tent for June"),
    ];
    store_a_second_apart(&s, &facts);
    let query = "camping trip to the lake in June, with a tent";
    let keys = |s: &Sandbox| {
        s.ok(&["search", query, "--json", "--mode", "lexical"], Some(NOW))
            .strings("key")
    };
    assert_eq!(keys(&s), ["z:one", "c:one", "z:two"], "off by default");
    std::fs::write(
        s.ws.join("mem7.yaml"),
        "search:\n  fusion:\n    entity_next: 0.5\n",
    )
    .unwrap();
    assert_eq!(
        keys(&s),
        ["z:one", "z:two", "c:one"],
        "z's next fact borrows"
    );
}

/// Stores `facts` in order, a second apart (from 2026-04-01T10:00:00Z).
fn store_a_second_apart(s: &Sandbox, facts: &[(&str, &str)]) {
    for (i, (k, v)) in facts.iter().enumerate() {
        s.ok(&["store", k, v], Some(&format!("2026-04-01T10:00:{i:02}Z")));
    }
}
