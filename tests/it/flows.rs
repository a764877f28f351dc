//! Every flow finds it (issue 36), through the binary with the local model: a fact is
//! found by inflected and compound forms of its key's words in search and in the context
//! block (an index of the old schema is rebuilt to get there), a burst of command-line
//! stores is searchable by meaning at once, and the drift check names renames of one
//! slot in the classes the issue names, on keys the tuning data does not use.

use std::path::PathBuf;

use crate::local_model::model;
use crate::world::{self, Sandbox, finish};

/// Runs mem7 in `s` with the local model on, at `now` (else the pinned clock's next
/// second); it must succeed.
fn with_model(s: &Sandbox, args: &[&str]) -> world::Run {
    let dir: &PathBuf = model().expect("the test checked for the model");
    let mut cmd = s.command(args, None);
    cmd.env("MEM7_MODEL_DIR", dir);
    let r = finish(cmd.output().unwrap());
    assert_eq!(r.code, 0, "mem7 {args:?}: {}", r.stderr);
    r
}

/// The keys of a `search --json` answer, best first.
fn keys(r: &world::Run) -> Vec<String> {
    r.json()
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["key"].as_str().unwrap().to_string())
        .collect()
}

/// A workspace of a team's facts, two of them about who is on call, one written as a
/// compound and one spaced.
fn team_facts() -> Sandbox {
    let s = Sandbox::new();
    for (key, value) in [
        ("cache:store", "Valkey 8"),
        ("payments:on_call", "Dana Whit"),
        ("search:oncall", "Rui Prado"),
        ("deploy:target", "Fly.io"),
        ("ci:provider", "Buildkite"),
        ("db:engine", "PostgreSQL 16"),
        ("team:lead", "Ada Moss"),
    ] {
        with_model(&s, &["store", key, value]);
    }
    s
}

#[test]
fn a_fact_is_found_by_inflected_and_compound_forms_of_its_key() {
    if model().is_none() {
        return;
    }
    let s = team_facts();
    // "caching" is `cache` inflected; the value holds no word of the question.
    for mode in ["lexical", "hybrid"] {
        let r = with_model(
            &s,
            &[
                "search",
                "what are we caching with",
                "--mode",
                mode,
                "--json",
            ],
        );
        assert_eq!(
            keys(&r).first().map(String::as_str),
            Some("cache:store"),
            "{mode}: {}",
            r.stdout
        );
    }
    // One word against a key's two, and two words against a key's one.
    let r = with_model(
        &s,
        &[
            "search",
            "who is oncall for payments",
            "--mode",
            "lexical",
            "--json",
        ],
    );
    assert_eq!(keys(&r)[0], "payments:on_call", "{}", r.stdout);
    let r = with_model(
        &s,
        &[
            "search",
            "who is on call for search",
            "--mode",
            "lexical",
            "--json",
        ],
    );
    assert_eq!(keys(&r)[0], "search:oncall", "{}", r.stdout);
    // The context block, as a person asks for it and as a hook hands it to an agent.
    let block = with_model(&s, &["context", "what are we caching with?"]).stdout;
    assert!(block.contains("Valkey 8"), "{block}");
    let hook = with_model(
        &s,
        &[
            "context",
            "who is on call for search?",
            "--hook",
            "claude-code",
        ],
    )
    .json();
    let text = hook["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(text.contains("Rui Prado"), "{text}");
}

#[test]
fn an_index_of_the_old_schema_is_rebuilt_and_finds_keys_by_their_forms() {
    let s = Sandbox::new();
    assert_eq!(s.run(&["store", "cache:store", "Valkey 8"], None).code, 0);
    // The index as the last release left it: its schema 9 (unstemmed key parts).
    let index = s.ws.join(".mem7");
    let current = std::fs::read_to_string(index.join("CURRENT")).unwrap();
    let db = index.join(current.trim());
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute("UPDATE meta SET v = '9' WHERE k = 'schema'", [])
        .unwrap();
    drop(conn);
    let r = s.run(&["search", "caching", "--mode", "lexical", "--json"], None);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(keys(&r), ["cache:store"], "{}", r.stdout);
    let now = std::fs::read_to_string(index.join("CURRENT")).unwrap();
    assert_ne!(now.trim(), current.trim(), "a new generation was built");
}

#[test]
fn a_burst_of_command_line_stores_is_found_by_meaning_at_once() {
    if model().is_none() {
        return;
    }
    let s = Sandbox::new();
    // 199 stores of routine facts, then the one asked about: 200 `mem7 store` runs, as
    // an agent without the server makes them. None of them fills vectors.
    for i in 0..199 {
        let key = format!("burst:item{i}");
        let value = format!("Routine entry {i} of the release checklist was ticked off");
        with_model(&s, &["store", &key, &value]);
    }
    with_model(
        &s,
        &[
            "store",
            "garden:watering",
            "The tomato plants are given water every morning at six",
        ],
    );
    let question = "when do the vegetables get irrigated?";
    let r = with_model(
        &s,
        &[
            "search", question, "--mode", "semantic", "--json", "--limit", "3",
        ],
    );
    assert!(
        keys(&r).iter().any(|k| k == "garden:watering"),
        "meaning alone finds the newest fact: {}",
        r.stdout
    );
    let block = with_model(&s, &["context", question]).stdout;
    assert!(block.contains("garden:watering"), "{block}");
}

#[test]
fn drift_names_compound_and_qualifier_renames_on_keys_the_tuning_data_does_not_use() {
    if model().is_none() {
        return;
    }
    let s = Sandbox::new();
    let jsonl: String = [
        ("hot_fix:approver", "Sam Ito"),
        ("playtest:lead", "Noor Haddad"),
        ("frame_rate:target", "60 fps"),
        ("matchmaking:backend", "OpenMatch"),
        ("voice_chat:provider", "Vivox"),
    ]
    .iter()
    .map(|(k, v)| format!("{}\n", serde_json::json!({"key": k, "value": v})))
    .collect();
    let r = s.run_stdin(&["import", "-"], Some("2026-01-01T00:00:00Z"), &jsonl);
    assert_eq!(r.code, 0, "import: {}", r.stderr);
    let named = |key: &str, value: &str| -> Vec<String> {
        with_model(&s, &["store", key, value, "--json"]).json()["similar"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x["key"].as_str().unwrap().to_string())
            .collect()
    };
    // A compound written as one word, as two, in camelCase.
    assert_eq!(named("hotfix:approver", "Dara Quinn"), ["hot_fix:approver"]);
    assert_eq!(named("play_test:owner", "Iris Vale"), ["playtest:lead"]);
    assert_eq!(named("frameRate:target", "120 fps"), ["frame_rate:target"]);
    // A generic word swapped for a specific one.
    assert_eq!(
        named("matchmaking:server", "Nakama"),
        ["matchmaking:backend"]
    );
    // Another attribute of the same thing is another slot.
    assert!(named("voice_chat:max_channel_size", "16").is_empty());
}
