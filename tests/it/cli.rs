//! End-to-end tests of the `mem7` binary: real files, real SQLite, real processes.

use crate::world::{self, Sandbox, worked_example};
use serde_json::Value;

const T1: &str = "2026-02-15T00:00:00Z";
const T2: &str = "2026-03-20T00:00:00Z";
const T3: &str = "2026-04-12T00:00:00Z";
const NOW: &str = "2026-04-12T12:00:00Z";

/// The keys a `store --json` answer names as look-alike slots.
fn similar_keys(answer: &Value) -> Vec<&str> {
    answer["similar"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["key"].as_str().unwrap())
        .collect()
}

fn recall_values(s: &Sandbox, args: &[&str]) -> Vec<String> {
    let mut full = vec!["recall", "event7:host", "--json"];
    full.extend_from_slice(args);
    let r = s.read(&full, Some(NOW));
    r.json()
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["value"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn worked_example_answers_the_four_questions() {
    let s = worked_example(&[]);
    assert_eq!(
        recall_values(&s, &["--valid-at", "2026-04-10", "--as-of", "2026-04-11"]),
        ["Cloudflare"]
    );
    assert_eq!(
        recall_values(&s, &["--valid-at", "2026-04-10"]),
        ["local only"]
    );
    assert_eq!(
        recall_values(&s, &["--valid-at", "2026-03-01"]),
        ["Railway"]
    );
    assert!(recall_values(&s, &["--valid-at", "2026-02-01"]).is_empty());
}

#[test]
fn recall_json_carries_the_contract_fields() {
    let s = worked_example(&[]);
    let r = s.ok(
        &[
            "recall",
            "event7:host",
            "--valid-at",
            "2026-03-25",
            "--json",
        ],
        Some(NOW),
    );
    let v = &r.json()[0];
    assert_eq!(v["key"], "event7:host");
    assert_eq!(v["value"], "Cloudflare");
    assert_eq!(v["valid_from"], "2026-03-20T00:00:00Z");
    assert_eq!(v["valid_to"], "2026-04-05T00:00:00Z");
    assert_eq!(v["tx_from"], "2026-04-12T00:00:00Z");
    assert_eq!(v["tx_to"], Value::Null);
    assert_eq!(v["tags"], serde_json::json!([]));
    assert_eq!(v["agent"], "tester");
    assert_eq!(v["file"], "memory/2026-03-20.md");
    assert_eq!(v["line"], 1);
    // The open version has null valid_to.
    let r = s.ok(&["recall", "event7:host", "--json"], Some(NOW));
    assert_eq!(r.json()[0]["valid_to"], Value::Null);
}

#[test]
fn human_output_shows_the_valid_line() {
    let s = worked_example(&[]);
    let r = s.ok(
        &["recall", "event7:host", "--valid-at", "2026-03-01"],
        Some(NOW),
    );
    assert!(r.stdout.contains("event7:host = Railway"), "{}", r.stdout);
    assert!(
        r.stdout
            .contains("Valid: 2026-02-15T00:00:00Z → 2026-03-20T00:00:00Z"),
        "{}",
        r.stdout
    );
}

#[test]
fn history_lists_every_version_with_its_source() {
    let s = worked_example(&[]);
    let r = s.ok(&["history", "event7:host", "--json"], Some(NOW));
    let json = r.json();
    let rows = json.as_array().unwrap();
    let field = |i: usize, f: &str| rows[i][f].as_str().map(str::to_string);
    // Railway [02-15, ∞) believed until 03-20; its remnant [02-15, 03-20) from 03-20 on;
    // Cloudflare [03-20, ∞) until 04-12, its remnant [03-20, 04-05) from 04-12; local only.
    assert_eq!(rows.len(), 5, "{json}");
    assert_eq!(field(0, "value").as_deref(), Some("Railway"));
    assert_eq!(field(0, "tx_to").as_deref(), Some(T2));
    assert_eq!(field(1, "value").as_deref(), Some("Railway"));
    assert_eq!(field(1, "valid_to").as_deref(), Some(T2));
    assert_eq!(field(1, "tx_from").as_deref(), Some(T2));
    assert_eq!(field(1, "file").as_deref(), Some("memory/2026-02-15.md"));
    assert!(
        rows.iter()
            .any(|r| r["value"] == "local only" && r["tx_to"].is_null() && r["valid_to"].is_null())
    );
    // as_of restricts to what was believed then.
    let r = s.ok(
        &["history", "event7:host", "--as-of", "2026-04-11", "--json"],
        Some(NOW),
    );
    let json = r.json();
    let values: Vec<&str> = json
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["value"].as_str().unwrap())
        .collect();
    assert_eq!(values, ["Railway", "Cloudflare"]);
}

#[test]
fn empty_results_are_empty_arrays_and_a_recall_miss_exits_4() {
    let s = Sandbox::new();
    for (args, code) in [
        (vec!["recall", "nothing:here", "--json"], 4),
        (vec!["history", "nothing:here", "--json"], 0),
        (vec!["list", "--json"], 0),
    ] {
        let r = s.run(&args, Some(NOW));
        assert_eq!(r.code, code, "{args:?}: {}", r.stderr);
        assert_eq!(r.json(), serde_json::json!([]), "{args:?}");
    }
}

#[test]
fn confirmation_writes_nothing_but_explicit_periods_always_apply() {
    let s = Sandbox::new();
    s.ok(&["store", "k", "v"], Some(T1));
    let before = s.snapshot();
    let r = s.ok(&["store", "k", "v"], Some(T2));
    assert!(r.stdout.starts_with("unchanged"), "{}", r.stdout);
    assert_eq!(s.snapshot(), before, "a confirmation must not write");
    let r = s.ok(&["store", "k", "v", "--json"], Some(T2));
    assert_eq!(r.json()["status"], "unchanged");
    // Same value with an explicit valid_from is a statement about a start: applied.
    let r = s.ok(
        &["store", "k", "v", "--valid-from", "2026-03-01", "--json"],
        Some(T3),
    );
    assert_eq!(r.json()["status"], "stored");
    assert_ne!(s.snapshot(), before);
}

#[test]
fn open_ended_late_write_fills_history_without_overwriting() {
    let s = Sandbox::new();
    s.ok(
        &["store", "k", "new", "--valid-from", "2026-03-01"],
        Some(T2),
    );
    s.ok(
        &["store", "k", "old", "--valid-from", "2026-01-01"],
        Some(T3),
    );
    let r = s.ok(
        &["recall", "k", "--valid-at", "2026-02-01", "--json"],
        Some(NOW),
    );
    assert_eq!(r.json()[0]["value"], "old");
    assert_eq!(r.json()[0]["valid_to"], "2026-03-01T00:00:00Z");
    let r = s.ok(&["recall", "k", "--json"], Some(NOW));
    assert_eq!(r.json()[0]["value"], "new");
    // infinity overrides the later change.
    s.ok(
        &[
            "store",
            "k",
            "forever",
            "--valid-from",
            "2026-01-15",
            "--valid-to",
            "infinity",
        ],
        Some(NOW),
    );
    let r = s.ok(&["recall", "k", "--json"], Some(NOW));
    assert_eq!(r.json()[0]["value"], "forever");
}

#[test]
fn explicit_window_keeps_both_sides() {
    let s = Sandbox::new();
    s.ok(
        &["store", "k", "base", "--valid-from", "2026-01-01"],
        Some(T1),
    );
    s.ok(
        &[
            "store",
            "k",
            "window",
            "--valid-from",
            "2026-02-01",
            "--valid-to",
            "2026-02-10",
        ],
        Some(T2),
    );
    for (at, want) in [
        ("2026-01-15", "base"),
        ("2026-02-05", "window"),
        ("2026-02-10", "base"),
    ] {
        let r = s.ok(&["recall", "k", "--valid-at", at, "--json"], Some(NOW));
        assert_eq!(r.json()[0]["value"], want, "at {at}");
    }
}

#[test]
fn forget_stops_belief_but_keeps_the_past() {
    let s = Sandbox::new();
    s.ok(&["store", "k", "v", "--tag", "infra"], Some(T1));
    let r = s.ok(&["forget", "k"], Some(T2));
    assert!(r.stdout.contains("forgot k"), "{}", r.stdout);
    let r = s.miss(&["recall", "k", "--json"], Some(NOW));
    assert_eq!(r.json(), serde_json::json!([]));
    let r = s.ok(
        &["recall", "k", "--as-of", "2026-03-01", "--json"],
        Some(NOW),
    );
    assert_eq!(r.json()[0]["value"], "v");
    // Forgetting again writes nothing.
    let before = s.snapshot();
    let r = s.ok(&["forget", "k"], Some(T3));
    assert!(r.stdout.contains("nothing to forget"));
    assert_eq!(s.snapshot(), before);
}

#[test]
fn list_filters_by_prefix_and_tag() {
    let s = Sandbox::new();
    s.ok(&["store", "proj:a", "1", "--tag", "x"], Some(T1));
    s.ok(
        &["store", "proj:b", "2", "--tag", "x", "--tag", "y"],
        Some(T1),
    );
    s.ok(&["store", "other", "3", "--tag", "y"], Some(T1));
    let keys = |args: &[&str]| -> Vec<String> {
        let mut full = vec!["list", "--json"];
        full.extend_from_slice(args);
        s.ok(&full, Some(NOW))
            .json()
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v["key"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(keys(&[]), ["other", "proj:a", "proj:b"]);
    assert_eq!(keys(&["--prefix", "proj:"]), ["proj:a", "proj:b"]);
    assert_eq!(keys(&["--tag", "y"]), ["other", "proj:b"]);
    assert_eq!(keys(&["--tag", "x", "--tag", "y"]), ["proj:b"]);
    assert!(keys(&["--valid-at", "2026-01-01"]).is_empty());
}

#[test]
fn transaction_time_is_monotonic_under_a_fixed_clock() {
    let s = Sandbox::new();
    s.ok(&["store", "a", "1"], Some(T1));
    s.ok(&["store", "b", "2"], Some(T1));
    s.ok(&["store", "c", "3"], Some("2026-01-01T00:00:00Z")); // a clock that went back
    let tx = s.ok(&["list", "--json"], Some(NOW)).strings("tx_from");
    assert_eq!(
        tx,
        [
            "2026-02-15T00:00:00Z",
            "2026-02-15T00:00:00.000001Z",
            "2026-02-15T00:00:00.000002Z"
        ]
    );
}

#[test]
fn value_from_stdin_round_trips_awkward_text() {
    let s = Sandbox::new();
    let value =
        "line one\n\n## not a heading\n---\n```mem7\nop: forget\n```\n> quoted\n  trailing  ";
    s.run_stdin(&["store", "k", "-"], Some(T1), &format!("{value}\n"));
    let r = s.ok(&["recall", "k", "--json"], Some(NOW));
    assert_eq!(r.json()[0]["value"], value);
    // Drop the index: the markdown alone gives the same value back.
    std::fs::remove_dir_all(s.ws.join(".mem7")).unwrap();
    let r = s.ok(&["recall", "k", "--json"], Some(NOW));
    assert_eq!(r.json()[0]["value"], value);
    let r = s.ok(&["list", "--json"], Some(NOW));
    assert_eq!(
        r.json().as_array().unwrap().len(),
        1,
        "the value must not inject entries"
    );
}

#[test]
fn carriage_returns_and_control_characters_survive() {
    let s = Sandbox::new();
    let value = "windows\r\nline\u{7}bell";
    s.ok(&["store", "k", value], Some(T1));
    std::fs::remove_dir_all(s.ws.join(".mem7")).unwrap();
    let r = s.ok(&["recall", "k", "--json"], Some(NOW));
    assert_eq!(r.json()[0]["value"], value);
}

#[test]
fn deleting_the_index_between_commands_gives_the_same_answers() {
    let s = worked_example(&[]);
    s.ok(&["forget", "event7:host"], Some(NOW));
    s.ok(&["store", "other", "x", "--tag", "t"], Some(NOW));
    let queries: Vec<Vec<&str>> = vec![
        vec!["history", "event7:host", "--json"],
        vec![
            "recall",
            "event7:host",
            "--valid-at",
            "2026-04-10",
            "--as-of",
            "2026-04-11",
            "--json",
        ],
        vec!["list", "--json"],
        vec!["list", "--as-of", "2026-03-25", "--json"],
    ];
    let answers: Vec<String> = queries
        .iter()
        .map(|q| s.ok(q, Some("2026-05-01T00:00:00Z")).stdout)
        .collect();
    std::fs::remove_dir_all(s.ws.join(".mem7")).unwrap();
    let again: Vec<String> = queries
        .iter()
        .map(|q| s.ok(q, Some("2026-05-01T00:00:00Z")).stdout)
        .collect();
    assert_eq!(answers, again);
    let r = s.ok(&["reindex"], None);
    assert!(r.stdout.contains("reindexed 5 entries"), "{}", r.stdout);
    let third: Vec<String> = queries
        .iter()
        .map(|q| s.ok(q, Some("2026-05-01T00:00:00Z")).stdout)
        .collect();
    assert_eq!(answers, third);
}

#[test]
fn entries_appended_by_hand_or_by_git_are_picked_up() {
    let s = Sandbox::new();
    s.ok(&["store", "k", "first"], Some(T1));
    // A person appends an entry by hand (no chain fields), in the YAML style they like.
    let file = s.memory_dir().join("2026-02-15.md");
    let mut text = std::fs::read_to_string(&file).unwrap();
    text.push_str("\n## k\n\n```mem7\nop: store\nrecorded: \"2026-02-16T00:00:00Z\"\nagent: a person\n```\n\nsecond, by hand\n\n---\n");
    std::fs::write(&file, text).unwrap();
    let r = s.ok(&["recall", "k", "--json"], Some(NOW));
    assert_eq!(r.json()[0]["value"], "second, by hand");
    assert_eq!(r.json()[0]["valid_from"], "2026-02-16T00:00:00Z");
    // An edit of an older entry is picked up too (by a rebuild).
    let text = std::fs::read_to_string(&file)
        .unwrap()
        .replace("> first", "> first, edited");
    std::fs::write(&file, text).unwrap();
    let r = s.ok(&["history", "k", "--json"], Some(NOW));
    assert_eq!(r.json()[0]["value"], "first, edited");
}

#[test]
fn only_day_files_are_memory() {
    let s = Sandbox::new();
    s.ok(&["store", "k", "v"], Some(T1));
    let entry = std::fs::read_to_string(s.memory_dir().join("2026-02-15.md")).unwrap();
    std::fs::write(
        s.memory_dir().join("notes.md"),
        entry.replace("> v", "> from notes"),
    )
    .unwrap();
    std::fs::write(
        s.memory_dir().join("2026-02-30.md.bak"),
        entry.replace("> v", "> from a backup"),
    )
    .unwrap();
    let r = s.ok(&["list", "--json"], Some(NOW));
    assert_eq!(r.json().as_array().unwrap().len(), 1);
    assert_eq!(r.json()[0]["value"], "v");
}

#[test]
fn git_conflict_markers_are_never_read_as_memory() {
    let s = Sandbox::new();
    s.ok(&["store", "k", "v"], Some(T1));
    let file = s.memory_dir().join("2026-02-15.md");
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(
        &file,
        format!(
            "<<<<<<< HEAD\n{text}=======\n{}>>>>>>> theirs\n",
            text.replace("> v", "> w")
        ),
    )
    .unwrap();
    let r = s.run(&["recall", "k"], Some(NOW));
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("memory/2026-02-15.md:1"), "{}", r.stderr);
    assert!(r.stderr.contains("conflict"), "{}", r.stderr);
    assert!(r.stderr.contains("hint"), "{}", r.stderr);
    let r = s.run(&["store", "k", "x"], Some(NOW));
    assert_eq!(r.code, 2, "no writes on top of a conflict");
}

#[test]
fn an_internal_failure_exits_3_and_says_so_while_bad_input_exits_2() {
    let s = Sandbox::new();
    s.ok(&["store", "k", "hello world"], Some(T1));
    s.ok(&["search", "hello", "--mode", "lexical"], Some(NOW));
    // Break the full-text index under mem7's feet: the request is fine, mem7 is not.
    let mut broken = 0;
    for e in std::fs::read_dir(s.ws.join(".mem7")).unwrap() {
        let dir = e.unwrap().path();
        if dir.extension().is_some_and(|x| x == "tantivy") {
            std::fs::write(dir.join("meta.json"), "not json").unwrap();
            broken += 1;
        }
    }
    assert_eq!(broken, 1, "one generation's full-text index");
    let before = s.snapshot();
    let r = s.run(&["search", "hello", "--mode", "lexical"], Some(NOW));
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert!(
        r.stderr.contains("error: full-text index at "),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr
            .contains("a failure inside mem7, not a problem with the request"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("mem7 reindex"),
        "the hint names the cure: {}",
        r.stderr
    );
    assert_eq!(s.snapshot(), before, "a failed read changes nothing");
    s.ok(&["reindex"], Some(NOW));
    let r = s.ok(
        &["search", "hello", "--mode", "lexical", "--json"],
        Some(NOW),
    );
    assert_eq!(r.strings("key"), ["k"]);

    // What the user names is theirs to fix: exit 2, and the hint says what is wrong.
    let missing = s.dir.path().join("nowhere.jsonl");
    let r = s.run(&["import", missing.to_str().unwrap()], Some(NOW));
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("nowhere.jsonl"), "{}", r.stderr);
    assert!(r.stderr.contains("it does not exist"), "{}", r.stderr);
    assert!(!r.stderr.contains("inside mem7"), "{}", r.stderr);
    let out = s.dir.path().join("no-such-dir").join("out.jsonl");
    let r = s.run(&["export", "-o", out.to_str().unwrap()], Some(NOW));
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("no-such-dir"), "{}", r.stderr);
    assert!(!out.exists());
}

#[test]
fn torn_tails_are_reported_and_skipped() {
    let s = Sandbox::new();
    s.ok(&["store", "k", "v"], Some(T1));
    let file = s.memory_dir().join("2026-02-15.md");
    let mut text = std::fs::read_to_string(&file).unwrap();
    text.push_str("\n## k\n\n```mem7\nop: store\nrecorded: 2026-02-15T01:00:00Z\n");
    std::fs::write(&file, text).unwrap();
    let r = s.ok(&["recall", "k", "--json"], Some(NOW));
    assert_eq!(r.json()[0]["value"], "v");
    assert!(r.stderr.contains("memory/2026-02-15.md:"), "{}", r.stderr);
    // The next write starts on a line of its own and is read back.
    s.ok(&["store", "k", "after the tear"], Some(NOW));
    std::fs::remove_dir_all(s.ws.join(".mem7")).unwrap();
    let r = s.ok(&["recall", "k", "--json"], Some(NOW));
    assert_eq!(r.json()[0]["value"], "after the tear");
}

#[test]
fn bad_input_is_refused_with_exit_2_and_nothing_written() {
    let s = Sandbox::new();
    s.ok(&["store", "k", "v"], Some(T1));
    let before = s.snapshot();
    let long_key = "k".repeat(201);
    let big = "x".repeat(64 * 1024 + 1);
    let cases: Vec<(Vec<&str>, Option<&str>, &str)> = vec![
        (
            vec!["store", "k", "v", "--valid-from", "yesterday"],
            Some(NOW),
            "valid-from",
        ),
        (
            vec!["store", "k", "v", "--valid-to", "2026-13-01"],
            Some(NOW),
            "valid-to",
        ),
        (
            vec![
                "store",
                "k",
                "v",
                "--valid-from",
                "2026-03-01",
                "--valid-to",
                "2026-03-01",
            ],
            Some(NOW),
            "after",
        ),
        (
            vec![
                "store",
                "k",
                "v",
                "--valid-from",
                "2026-03-01",
                "--valid-to",
                "2026-02-01",
            ],
            Some(NOW),
            "after",
        ),
        (
            vec!["store", "k", "v", "--valid-to", "2026-01-01"],
            Some(NOW),
            "after",
        ),
        (vec!["store", "", "v"], Some(NOW), "empty"),
        (vec!["store", "a b", "v"], Some(NOW), "whitespace"),
        (vec!["store", "a\nb", "v"], Some(NOW), "whitespace"),
        (vec!["store", &long_key, "v"], Some(NOW), "200"),
        (vec!["store", "k", &big], Some(NOW), "limit"),
        (vec!["store", "k", "v"], Some("2026-04-12"), "MEM7_NOW"),
        (vec!["store", "k", "v"], Some("tomorrow"), "MEM7_NOW"),
        (
            vec![
                "store",
                "k",
                "my key is sk-proj-abcdefghijklmnopqrstuvwxyz123",
            ],
            Some(NOW),
            "credential",
        ),
        (
            vec!["store", "k", "ghp_abcdefghijklmnopqrstuvwxyz0123456789"],
            Some(NOW),
            "credential",
        ),
        (
            vec!["store", "k", "-----BEGIN RSA PRIVATE KEY-----\nMIIE"],
            Some(NOW),
            "credential",
        ),
        (
            vec!["store", "k", "password=hunter2hunter2"],
            Some(NOW),
            "credential",
        ),
        (
            vec!["store", "AKIAIOSFODNN7EXAMPLE", "v"],
            Some(NOW),
            "credential",
        ),
        (
            vec!["store", "k", "v", "--tag", "two words"],
            Some(NOW),
            "tag",
        ),
        (
            vec!["recall", "k", "--valid-at", "soon"],
            Some(NOW),
            "valid-at",
        ),
        (
            vec!["recall", "k", "--as-of", "2026-02-30"],
            Some(NOW),
            "as-of",
        ),
        (vec!["store"], Some(NOW), "Usage"),
        (vec!["frobnicate"], Some(NOW), "unrecognized"),
    ];
    for (args, now, needle) in cases {
        let r = s.run(&args, now);
        assert_eq!(r.code, 2, "{args:?} should fail with 2: {}", r.stderr);
        assert!(
            r.stderr.contains(needle),
            "{args:?}: stderr should mention {needle:?}: {}",
            r.stderr
        );
        assert_eq!(s.snapshot(), before, "{args:?} changed the workspace");
    }
}

#[test]
fn allow_secret_overrides_and_says_so_in_the_entry() {
    let s = Sandbox::new();
    let r = s.run(
        &[
            "store",
            "k",
            "sk-test-abcdefghijklmnopqrstuvwxyz",
            "--allow-secret",
        ],
        Some(T1),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let text = std::fs::read_to_string(s.memory_dir().join("2026-02-15.md")).unwrap();
    assert!(text.contains("secret: allowed"), "{text}");
}

#[test]
fn value_limit_is_configurable() {
    let s = Sandbox::new();
    std::fs::write(s.ws.join("mem7.yaml"), "max_value_bytes: 10\n").unwrap();
    let r = s.run(&["store", "k", "01234567890"], Some(T1));
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("max_value_bytes"), "{}", r.stderr);
    s.ok(&["store", "k", "0123456789"], Some(T1));
}

#[test]
fn no_workspace_suggests_init_and_creates_nothing() {
    let s = Sandbox::bare();
    let r = s.run(&["recall", "k"], Some(NOW));
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("mem7 init"), "{}", r.stderr);
    let r = s.run(&["store", "k", "v"], Some(NOW));
    assert_eq!(r.code, 2);
    assert!(
        !s.ws.exists(),
        "a failed store must not create the workspace"
    );
}

/// With nothing set, the no-workspace error and a bare `mem7 init` name the same place,
/// `~/.mem7/workspace`, and every command then finds it; `init .` still makes the
/// current directory one, and a bare `init` inside a workspace leaves that one as it is.
#[test]
fn a_bare_init_creates_the_workspace_every_command_finds() {
    let s = Sandbox::bare();
    let default = s.dir.path().join("home/.mem7/workspace");
    let unset = |args: &[&str]| {
        let mut cmd = s.command(args, Some(NOW));
        cmd.env_remove("MEM7_WORKSPACE");
        world::finish(cmd.output().unwrap())
    };
    let r = unset(&["recall", "k"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr
            .contains(&format!("no mem7 workspace at {}", default.display())),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("hint: `mem7 init` creates it"),
        "{}",
        r.stderr
    );

    let r = unset(&["init"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        r.stdout,
        format!(
            "Created a mem7 workspace in {}\n  next: mem7 store project:hello \"world\"\n",
            default.display()
        )
    );
    assert_eq!(unset(&["store", "project:hello", "world"]).code, 0);
    let r = unset(&["recall", "project:hello"]);
    assert!(
        r.stdout.starts_with("project:hello = world\n"),
        "{}{}",
        r.stdout,
        r.stderr
    );
    assert!(std::fs::read_dir(default.join("memory")).unwrap().count() > 1);

    // Inside a workspace, a bare init names that one and changes nothing.
    let inside = default.join("memory");
    let mut cmd = s.command(&["init"], Some(NOW));
    cmd.env_remove("MEM7_WORKSPACE").current_dir(&inside);
    let r = world::finish(cmd.output().unwrap());
    assert_eq!(
        r.stdout,
        format!(
            "{} is already a mem7 workspace; nothing changed\n",
            default.display()
        )
    );

    // The current directory, named.
    let project = s.dir.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    let mut cmd = s.command(&["init", "."], Some(NOW));
    cmd.env_remove("MEM7_WORKSPACE").current_dir(&project);
    let r = world::finish(cmd.output().unwrap());
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(project.join("mem7.yaml").is_file());
    assert!(r.stdout.contains("next: mem7 store"), "{}", r.stdout);
}

/// `setup` run through a link on PATH records the link, not the file it resolves to (a
/// package upgrade or a rebuilt build directory moves that), and writes new files with
/// the user's usual mode (0666 less the umask); a file it replaces keeps its own mode.
#[test]
fn setup_records_the_binary_as_found_on_path_with_the_usual_modes() {
    use std::os::unix::fs::PermissionsExt;
    let s = Sandbox::new();
    let bin = s.dir.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let link = bin.join("mem7");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_mem7"), &link).unwrap();
    let project = s.dir.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    let codex = s.dir.path().join("home/.codex");
    std::fs::create_dir_all(&codex).unwrap();
    std::fs::write(codex.join("config.toml"), "model = \"o3\"\n").unwrap();
    std::fs::set_permissions(
        codex.join("config.toml"),
        std::fs::Permissions::from_mode(0o600),
    )
    .unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = s
        .shell(
            "umask 022 && cd project && mem7 setup claude-code --write \
             && mem7 setup codex --scope user --write",
        )
        .env("PATH", path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let read = |p: &std::path::Path| -> Value {
        serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
    };
    let mcp = read(&project.join(".mcp.json"));
    assert_eq!(mcp["mcpServers"]["mem7"]["command"], link.to_str().unwrap());
    let settings = read(&project.join(".claude/settings.json"));
    let hook = settings["hooks"]["SessionStart"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap();
    assert!(
        hook.starts_with(&format!("{} --workspace ", link.display())),
        "{hook}"
    );
    let toml = std::fs::read_to_string(codex.join("config.toml")).unwrap();
    assert!(
        toml.contains(&format!("command = \"{}\"", link.display())),
        "{toml}"
    );
    let mode = |p: std::path::PathBuf| std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(project.join(".mcp.json")), 0o644);
    assert_eq!(mode(project.join(".claude/settings.json")), 0o644);
    assert_eq!(mode(codex.join("hooks.json")), 0o644);
    assert_eq!(
        mode(codex.join("config.toml")),
        0o600,
        "a replaced file keeps its mode"
    );
}

#[test]
fn init_is_idempotent_and_never_clobbers() {
    let s = Sandbox::bare();
    let r = s.ok(&["init"], None);
    assert!(r.stdout.contains("Created"), "{}", r.stdout);
    for f in ["mem7.yaml", "README.md", ".gitattributes", ".gitignore"] {
        assert!(s.ws.join(f).is_file(), "{f}");
    }
    let gitattributes = std::fs::read_to_string(s.ws.join(".gitattributes")).unwrap();
    assert!(gitattributes.contains("memory/*.md merge=union"));
    std::fs::write(s.ws.join("mem7.yaml"), "# mine\n").unwrap();
    let r = s.ok(&["init"], None);
    assert!(r.stdout.contains("already"), "{}", r.stdout);
    assert_eq!(
        std::fs::read_to_string(s.ws.join("mem7.yaml")).unwrap(),
        "# mine\n"
    );
    // An explicit DIR wins; a project's own files are kept, never overwritten.
    let other = s.dir.path().join("other");
    std::fs::create_dir_all(other.join("memory")).unwrap();
    std::fs::write(other.join("README.md"), "mine").unwrap();
    std::fs::write(other.join(".gitignore"), "target/\n").unwrap();
    let r = s.ok(&["init", other.to_str().unwrap()], None);
    assert!(
        r.stdout.contains("kept your existing README.md"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("add the line `.mem7/`"), "{}", r.stdout);
    assert_eq!(
        std::fs::read_to_string(other.join("README.md")).unwrap(),
        "mine"
    );
    assert_eq!(
        std::fs::read_to_string(other.join(".gitignore")).unwrap(),
        "target/\n"
    );
    assert!(other.join("mem7.yaml").is_file());
    // A file where the workspace should go is refused.
    std::fs::write(s.dir.path().join("afile"), "x").unwrap();
    let r = s.run(
        &["init", s.dir.path().join("afile").to_str().unwrap()],
        None,
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
}

#[test]
fn workspace_is_found_from_an_ancestor_directory() {
    let s = Sandbox::new();
    s.ok(&["store", "k", "v"], Some(T1));
    let deep = s.ws.join("memory").join("sub");
    std::fs::create_dir_all(&deep).unwrap();
    let out = s
        .command(&["recall", "k", "--json"], Some(NOW))
        .env_remove("MEM7_WORKSPACE")
        .current_dir(&deep)
        .output()
        .unwrap();
    let r = world::finish(out);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.json()[0]["value"], "v");
    // --workspace beats MEM7_WORKSPACE.
    let r = s.run(
        &[
            "--workspace",
            s.ws.to_str().unwrap(),
            "recall",
            "k",
            "--json",
        ],
        Some(NOW),
    );
    assert_eq!(r.json()[0]["value"], "v");
}

#[test]
fn demo_prints_the_four_answers_and_the_markdown() {
    let s = Sandbox::bare();
    let r = s.ok(&["demo"], None);
    let answers: Vec<&str> = r
        .stdout
        .lines()
        .filter(|l| l.trim_start().starts_with("→"))
        .collect();
    assert_eq!(answers.len(), 4, "{}", r.stdout);
    assert!(answers[0].contains("Cloudflare"));
    assert!(answers[1].contains("local only"));
    assert!(answers[2].contains("Railway"));
    assert!(answers[3].contains("nothing"));
    assert!(r.stdout.contains("```mem7"));
    assert!(r.stdout.contains("> local only"));
}

#[test]
fn concurrent_writers_lose_nothing() {
    let s = Sandbox::new();
    let writers = 8;
    let per = 200;
    let mut children = Vec::new();
    for w in 0..writers {
        // Each writer is a shell loop of real `mem7 store` processes.
        let script = format!(
            "for i in $(seq 1 {per}); do \"$MEM7\" store w{w}:k$i \"value $i from writer {w}\" || exit 1; done"
        );
        let child = s
            .shell(&script)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        children.push(child);
    }
    // Two readers query while the writers write: locks are waited out, never errors.
    let mut readers = Vec::new();
    for _ in 0..2 {
        let script =
            format!("for i in $(seq 1 {per}); do \"$MEM7\" list --json >/dev/null || exit 1; done");
        readers.push(
            s.shell(&script)
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap(),
        );
    }
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "a writer failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    for c in readers {
        let out = c.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "a reader failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            out.stderr.is_empty(),
            "a reader complained: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let r = s.ok(&["list", "--json"], None);
    let versions = r.json();
    assert_eq!(versions.as_array().unwrap().len(), writers * per);
    // Every entry intact on disk: rebuild from the markdown and count again.
    std::fs::remove_dir_all(s.ws.join(".mem7")).unwrap();
    let r = s.ok(&["list", "--json"], None);
    assert_eq!(r.json().as_array().unwrap().len(), writers * per);
    assert!(
        r.stderr.is_empty(),
        "no torn or malformed entries: {}",
        r.stderr
    );
    let text: String = std::fs::read_dir(s.memory_dir())
        .unwrap()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "md"))
        .map(|e| std::fs::read_to_string(e.path()).unwrap())
        .collect();
    assert_eq!(text.matches("\n---\n").count(), writers * per);
    for w in 0..writers {
        for i in [1, per / 2, per] {
            assert!(text.contains(&format!("> value {i} from writer {w}\n")));
        }
    }
}

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
fn import_equals_successive_stores_byte_for_byte() {
    let records = [
        (
            r#"{"key":"event7:host","value":"Railway","recorded":"2026-02-15T00:00:00Z","tags":["infra"]}"#,
            vec!["store", "event7:host", "Railway", "--tag", "infra"],
            T1,
        ),
        (
            r#"{"key":"event7:host","value":"Cloudflare","recorded":"2026-03-20T00:00:00Z","tags":["infra"]}"#,
            vec!["store", "event7:host", "Cloudflare", "--tag", "infra"],
            T2,
        ),
        (
            r#"{"key":"event7:host","value":"Cloudflare","recorded":"2026-03-21T00:00:00Z","tags":["infra"]}"#,
            vec!["store", "event7:host", "Cloudflare", "--tag", "infra"],
            "2026-03-21T00:00:00Z",
        ),
        (
            r#"{"key":"event7:host","value":"local only","valid_from":"2026-04-05","recorded":"2026-04-12T00:00:00Z","tags":["infra"]}"#,
            vec![
                "store",
                "event7:host",
                "local only",
                "--valid-from",
                "2026-04-05",
                "--tag",
                "infra",
            ],
            T3,
        ),
        (
            r#"{"key":"note","value":"multi\nline","valid_from":"2026-01-01","valid_to":"infinity","recorded":"2026-04-12T00:00:00Z"}"#,
            vec![
                "store",
                "note",
                "multi\nline",
                "--valid-from",
                "2026-01-01",
                "--valid-to",
                "infinity",
            ],
            T3,
        ),
    ];
    // A person's stores are `asserted`; an import keeps a record's tier only where the
    // workspace lets imports assert (trust.agents), so both workspaces say so.
    let trusting = "trust:\n  agents: asserted\n";
    let jsonl: String = records
        .iter()
        .map(|r| format!("{}\n", r.0.replacen("{", r#"{"tier":"asserted","#, 1)))
        .collect();
    let lowered = Sandbox::new();
    let r = lowered.run_stdin(&["import", "-"], Some(NOW), &jsonl);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("5 records named a tier above what imports may record here"),
        "{}",
        r.stderr
    );
    let tiers = lowered
        .ok(&["history", "event7:host", "--json"], Some(NOW))
        .strings("tier");
    assert!(
        !tiers.is_empty() && tiers.iter().all(|t| t == "inferred"),
        "lowered to the ceiling: {tiers:?}"
    );
    let imported = Sandbox::new();
    std::fs::write(imported.ws.join("mem7.yaml"), trusting).unwrap();
    imported.ok(&["allow"], Some(NOW));
    let r = imported.run_stdin(&["import", "-"], Some(NOW), &jsonl);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("4 stored, 1 unchanged"), "{}", r.stdout);
    let stored = Sandbox::new();
    std::fs::write(stored.ws.join("mem7.yaml"), trusting).unwrap();
    stored.ok(&["allow"], Some(NOW));
    for (_, args, now) in &records {
        stored.ok(args, Some(now));
    }
    let text = |s: &Sandbox| -> Vec<(String, String)> {
        s.snapshot()
            .into_iter()
            .map(|(n, b)| (n, String::from_utf8(b).unwrap()))
            .collect()
    };
    assert_eq!(
        text(&imported),
        text(&stored),
        "import writes what the stores write"
    );
    let q = ["history", "event7:host", "--json"];
    assert_eq!(
        imported.ok(&q, Some(NOW)).stdout,
        stored.ok(&q, Some(NOW)).stdout
    );
}

#[test]
fn a_bad_import_line_stops_everything_and_names_the_line() {
    let s = Sandbox::new();
    s.ok(&["store", "k", "v"], Some(T2));
    let before = s.snapshot();
    let cases = [
        (
            "{\"key\":\"a\",\"value\":\"1\"}\n{\"key\":\"b\",\"value\":\"2\",\"valid_from\":\"someday\"}\n",
            "line 2",
        ),
        ("{\"key\":\"a\",\"value\":\"1\"}\n\nnot json\n", "line 3"),
        (
            "{\"key\":\"a\",\"value\":\"ghp_abcdefghijklmnopqrstuvwxyz0123456789\"}\n",
            "line 1",
        ),
        (
            "{\"key\":\"a\",\"value\":\"1\",\"recorded\":\"2026-01-01T00:00:00Z\"}\n",
            "before the workspace's last transaction",
        ),
        (
            "{\"key\":\"a\",\"value\":\"1\",\"recorded\":\"2026-05-01T00:00:00Z\"}\n{\"key\":\"a\",\"value\":\"2\",\"recorded\":\"2026-04-01T00:00:00Z\"}\n",
            "line 2",
        ),
        (
            "{\"key\":\"a\",\"value\":\"1\",\"valid_from\":\"2026-05-01\",\"valid_to\":\"2026-04-01\"}\n",
            "line 1",
        ),
    ];
    for (input, needle) in cases {
        let r = s.run_stdin(&["import", "-"], Some(NOW), input);
        assert_eq!(r.code, 2, "{input}: {}", r.stderr);
        assert!(r.stderr.contains(needle), "{input}: {}", r.stderr);
        assert_eq!(s.snapshot(), before, "{input} wrote something");
    }
}

#[test]
fn a_torn_envelope_never_swallows_the_next_entry() {
    let s = Sandbox::new();
    s.ok(&["store", "a", "one"], Some(T1));
    let file = s.memory_dir().join("2026-02-15.md");
    let good = std::fs::read_to_string(&file).unwrap();
    // A crash mid-envelope, then a complete entry arriving by hand (or git) in the same file.
    let c = good.replace("## a", "## c").replace("> one", "> three");
    std::fs::write(
        &file,
        format!("{good}## b\n\n```mem7\nop: store\nrecor\n\n{c}"),
    )
    .unwrap();
    let keys = |s: &Sandbox| -> Vec<String> {
        s.ok(&["list", "--json"], Some(NOW))
            .json()
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v["key"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(keys(&s), ["a", "c"]);
    s.ok(&["reindex"], None);
    assert_eq!(keys(&s), ["a", "c"]);
}

#[test]
fn text_added_before_entries_moves_their_lines_in_the_index_too() {
    let s = Sandbox::new();
    s.ok(&["store", "a", "1"], Some(T1));
    s.ok(&["store", "b", "2"], Some("2026-02-15T01:00:00Z"));
    let file = s.memory_dir().join("2026-02-15.md");
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, format!("Notes for the day.\n\n{text}")).unwrap();
    s.ok(&["store", "c", "3"], Some("2026-02-15T02:00:00Z"));
    let lines = |s: &Sandbox| -> Vec<u64> {
        s.ok(&["list", "--json"], Some(NOW))
            .json()
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v["line"].as_u64().unwrap())
            .collect()
    };
    let incremental = lines(&s);
    s.ok(&["reindex"], None);
    assert_eq!(incremental, lines(&s));
    assert_eq!(incremental[0], 3);
}

#[test]
fn bad_input_creates_no_index_either() {
    let s = Sandbox::new();
    for args in [
        vec!["store", "", "v"],
        vec!["store", "k", "v", "--valid-to", "2020-01-01"],
        vec!["store", "k", "ghp_abcdefghijklmnopqrstuvwxyz0123456789"],
    ] {
        let r = s.run(&args, Some(NOW));
        assert_eq!(r.code, 2, "{args:?}");
        assert!(!s.ws.join(".mem7").exists(), "{args:?} created the index");
    }
    let r = s.run_stdin(
        &["import", "-"],
        Some(NOW),
        "{\"key\":\"a b\",\"value\":\"1\"}\n",
    );
    assert_eq!(r.code, 2);
    assert!(
        !s.ws.join(".mem7").exists(),
        "a bad import created the index"
    );
}

#[test]
fn a_corrupt_index_is_rebuilt_not_trusted() {
    let s = worked_example(&[]);
    let before = s
        .ok(&["history", "event7:host", "--json"], Some(NOW))
        .stdout;
    let dir = s.ws.join(".mem7");
    let current = std::fs::read_to_string(dir.join("CURRENT")).unwrap();
    let db = dir.join(current.trim());
    let mut bytes = std::fs::read(&db).unwrap();
    for b in bytes.iter_mut().skip(100) {
        *b = 0x41;
    }
    std::fs::write(&db, bytes).unwrap();
    let r = s.ok(&["history", "event7:host", "--json"], Some(NOW));
    assert_eq!(r.stdout, before);
}

#[test]
fn a_setext_heading_in_a_hand_written_body_is_not_a_conflict() {
    let s = Sandbox::new();
    std::fs::write(
        s.memory_dir().join("2026-02-15.md"),
        "## checklist\n\n```mem7\nop: store\nrecorded: 2026-02-15T00:00:00Z\n```\n\nRelease checklist\n=======\n\n- tag\n\n---\n",
    )
    .unwrap();
    let r = s.ok(&["recall", "checklist", "--json"], Some(NOW));
    assert_eq!(r.json()[0]["value"], "Release checklist\n=======\n\n- tag");
}

#[test]
fn known_problems_are_mentioned_by_every_command_until_fixed() {
    let s = Sandbox::new();
    s.ok(&["store", "a", "1"], Some(T1));
    let file = s.memory_dir().join("2026-02-15.md");
    let mut text = std::fs::read_to_string(&file).unwrap();
    text.push_str("## b\n\n```mem7\nop: store\nrecorded: not a time\n```\n\n> x\n\n---\n");
    std::fs::write(&file, text).unwrap();
    let first = s.ok(&["list"], Some(NOW));
    assert!(
        first.stderr.contains("memory/2026-02-15.md:"),
        "{}",
        first.stderr
    );
    let second = s.ok(&["list"], Some(NOW));
    assert!(second.stderr.contains("1 problem"), "{}", second.stderr);
}

#[test]
fn an_odd_user_name_does_not_break_writes() {
    let s = Sandbox::new();
    let out = s
        .command(&["store", "k", "v", "--json"], Some(NOW))
        .env_remove("MEM7_AGENT")
        .env("USER", "o'brien")
        .output()
        .unwrap();
    let r = world::finish(out);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.json()["version"]["agent"], "o-brien");
}

#[test]
fn import_takes_equal_recorded_times_and_skipped_records_take_no_time() {
    let s = Sandbox::new();
    let same = "{\"key\":\"k\",\"value\":\"1\",\"recorded\":\"2026-02-15T00:00:00Z\"}\n{\"key\":\"j\",\"value\":\"2\",\"recorded\":\"2026-02-15T00:00:00Z\"}\n{\"key\":\"i\",\"value\":\"3\",\"recorded\":\"2026-02-15T00:00:00Z\"}\n";
    let r = s.run_stdin(&["import", "-"], Some(NOW), same);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let tx = s
        .ok(&["timeline", "--clock", "tx", "--json"], Some(NOW))
        .strings("tx_from");
    assert_eq!(
        tx,
        [
            "2026-02-15T00:00:00Z",
            "2026-02-15T00:00:00.000001Z",
            "2026-02-15T00:00:00.000002Z"
        ]
    );
    // A confirmation inside an import uses no transaction time, as with single stores.
    let other = Sandbox::new();
    let r = other.run_stdin(&["import", "-"], Some(NOW), "{\"key\":\"a:b\",\"value\":\"x\"}\n{\"key\":\"a:b\",\"value\":\"x\"}\n{\"key\":\"a:c\",\"value\":\"y\"}\n");
    assert!(r.stdout.contains("2 stored, 1 unchanged"), "{}", r.stdout);
    let c = other.ok(&["history", "a:c", "--json"], Some(NOW));
    assert_eq!(c.json()[0]["tx_from"], "2026-04-12T12:00:00.000001Z");
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

#[test]
fn a_rebuild_orders_entries_by_recorded_time_even_across_files() {
    let s = Sandbox::new();
    let entry = |value: &str, recorded: &str| {
        format!(
            "## k\n\n```mem7\nop: store\nrecorded: {recorded}\nagent: hand\n```\n\n> {value}\n\n---\n\n"
        )
    };
    // An entry recorded on 03-01 sits in the 02-15 file (moved by hand): the fold must
    // still apply the 02-20 entry of the later file before it.
    std::fs::write(
        s.memory_dir().join("2026-02-15.md"),
        format!(
            "{}{}",
            entry("A", "2026-02-15T00:00:00Z"),
            entry("C", "2026-03-01T00:00:00Z")
        ),
    )
    .unwrap();
    std::fs::write(
        s.memory_dir().join("2026-02-20.md"),
        entry("B", "2026-02-20T00:00:00Z"),
    )
    .unwrap();
    for _ in 0..2 {
        let r = s.ok(&["recall", "k", "--json"], Some(NOW));
        assert_eq!(r.json()[0]["value"], "C");
        let r = s.ok(
            &[
                "recall",
                "k",
                "--as-of",
                "2026-02-25",
                "--valid-at",
                "2026-02-25",
                "--json",
            ],
            Some(NOW),
        );
        assert_eq!(r.json()[0]["value"], "B");
        s.ok(&["reindex"], None);
    }
}

// ---------------------------------------------------------------------------------------
// Clocks that disagree (docs/temporal.md "Clocks that disagree").

const TODAY: &str = "2026-12-01T09:00:00Z";
const AHEAD: &str = "2026-12-05T00:00:00Z";

fn recall_now(s: &Sandbox, key: &str, now: &str) -> Vec<String> {
    s.read(&["recall", key, "--json"], Some(now))
        .strings("value")
}

#[test]
fn a_store_after_an_entry_recorded_ahead_is_seen_by_the_next_read() {
    let s = Sandbox::new();
    // An entry from a machine whose clock runs four days ahead.
    s.ok(&["store", "k", "future"], Some(AHEAD));
    let stored = s.ok(&["store", "k", "now-value", "--json"], Some(TODAY));
    let v = &stored.json()["version"];
    // Valid time is world time: it holds from this clock, up to the start it knew.
    assert_eq!(v["valid_from"], "2026-12-01T09:00:00Z", "{}", stored.stdout);
    assert_eq!(v["valid_to"], AHEAD);
    // Transaction time stays monotonic: recorded just after the entry ahead.
    assert_eq!(v["tx_from"], "2026-12-05T00:00:00.000001Z");
    for _ in 0..2 {
        assert_eq!(recall_now(&s, "k", TODAY), ["now-value"]);
        assert_eq!(
            s.ok(&["list", "--json"], Some(TODAY)).strings("value"),
            ["now-value"]
        );
        let text = s.ok(&["recall", "k"], Some(TODAY));
        assert!(text.stdout.contains("k = now-value"), "{}", text.stdout);
        // The pulled entry keeps its own period.
        assert_eq!(
            s.ok(
                &["recall", "k", "--valid-at", "2026-12-06", "--json"],
                Some(TODAY)
            )
            .strings("value"),
            ["future"]
        );
        // And the same answers after a rebuild from the markdown.
        s.ok(&["reindex"], Some(TODAY));
    }
}

#[test]
fn two_stores_at_one_clock_and_a_clock_behind_the_last_entry() {
    let s = Sandbox::new();
    s.ok(&["store", "k", "first"], Some(TODAY));
    s.ok(&["store", "k", "second"], Some(TODAY));
    let r = s.ok(&["recall", "k", "--json"], Some(TODAY));
    assert_eq!(r.strings("value"), ["second"]);
    assert!(r.json()[0]["tx_to"].is_null(), "believed: {}", r.stdout);
    // A clock that went back a day: the write is recorded after the last entry, holds
    // from the clock, and is what the next read at that clock sees.
    let behind = "2026-11-30T09:00:00Z";
    s.ok(&["store", "k", "third"], Some(behind));
    assert_eq!(recall_now(&s, "k", behind), ["third"]);
    s.ok(&["store", "other", "x"], Some(behind));
    assert_eq!(recall_now(&s, "other", behind), ["x"]);
    // Being open-ended, it stopped at the later start mem7 knew: back on time, the
    // value stored at that later start holds again.
    assert_eq!(recall_now(&s, "k", TODAY), ["second"]);
    // Asking as of the clock behind shows what was believed then: nothing recorded yet.
    let r = s.miss(&["recall", "k", "--as-of", behind, "--json"], Some(behind));
    assert!(r.strings("value").is_empty(), "{}", r.stdout);
}

#[test]
fn entries_recorded_ahead_are_noted_once_and_listed_by_verify() {
    let s = Sandbox::new();
    s.ok(&["store", "k", "future"], Some(AHEAD));
    // A fresh index, as after a clone: the catch-up meets the entry and says so.
    std::fs::remove_dir_all(s.ws.join(".mem7")).unwrap();
    let first = s.miss(&["recall", "k"], Some(TODAY));
    assert!(
        first
            .stderr
            .contains("memory/2026-12-05.md:1 was recorded 2026-12-05T00:00:00Z, 3 days 15 hours ahead of this machine's clock"),
        "{}",
        first.stderr
    );
    let second = s.miss(&["recall", "k"], Some(TODAY));
    assert!(!second.stderr.contains("ahead"), "{}", second.stderr);
    // Within five minutes is not ahead.
    let r = s.ok(&["verify"], Some("2026-12-04T23:56:00Z"));
    assert!(!r.stdout.contains("ahead"), "{}", r.stdout);
    let r = s.ok(&["verify", "--json"], Some(TODAY));
    let findings = r.json();
    let ahead: Vec<&Value> = findings
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kind"] == "ahead")
        .collect();
    assert_eq!(ahead.len(), 1, "{}", r.stdout);
    assert_eq!(ahead[0]["file"], "memory/2026-12-05.md");
    assert_eq!(ahead[0]["line"], 1);
    assert_eq!(ahead[0]["severity"], "warning");
}

#[test]
fn instants_outside_years_1_to_9999_are_refused_and_nothing_is_written() {
    let s = Sandbox::new();
    s.ok(&["store", "k", "a"], Some(TODAY));
    let before = s.snapshot();
    let refused = |args: &[&str], now: Option<&str>, needle: &str| {
        let r = s.run(args, now);
        assert_eq!(r.code, 2, "{args:?}: {}{}", r.stdout, r.stderr);
        assert!(r.stderr.contains(needle), "{args:?}: {}", r.stderr);
        assert_eq!(s.snapshot(), before, "{args:?} changed the files");
    };
    refused(
        &["store", "k", "b"],
        Some("0000-06-01T00:00:00Z"),
        "outside the times mem7 keeps",
    );
    refused(
        &["store", "k", "b", "--valid-from", "0000-06-01T00:00:00Z"],
        Some(TODAY),
        "outside the times mem7 keeps",
    );
    refused(
        &["recall", "k", "--as-of", "0000-12-31T23:59:59Z"],
        Some(TODAY),
        "outside the times mem7 keeps",
    );
    let r = s.run_stdin(
        &["import", "-"],
        Some(TODAY),
        "{\"key\":\"j\",\"value\":\"v\",\"recorded\":\"0000-06-01T00:00:00Z\"}\n",
    );
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("line 1"), "{}", r.stderr);
    assert_eq!(s.snapshot(), before);

    // The last instant mem7 keeps: one write fits, the next one would step past it.
    let end = "9999-12-31T23:59:59.999999Z";
    s.ok(&["store", "z", "a"], Some(end));
    let at_end = s.snapshot();
    let r = s.run(&["store", "z", "b"], Some(end));
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("outside the times mem7 keeps"),
        "{}",
        r.stderr
    );
    assert_eq!(s.snapshot(), at_end);
    let r = s.run(&["forget", "z"], Some(end));
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert_eq!(s.snapshot(), at_end);
    // Every memory file mem7 wrote is one its scans list and verify counts.
    let names: Vec<String> = at_end.iter().map(|(n, _)| n.clone()).collect();
    assert!(names.iter().all(|n| !n.contains('+')), "{names:?}");
    let r = s.ok(&["verify"], Some(TODAY));
    assert!(r.stdout.contains("2 entries in 2 files"), "{}", r.stdout);
    s.ok(&["reindex"], Some(TODAY));
    assert_eq!(recall_now(&s, "z", end), ["a"]);
}

// ---------------------------------------------------------------------------------------
// The bitemporal picture.

#[test]
fn history_svg_draws_every_version_deterministically_and_escapes_values() {
    let s = worked_example(&[]);
    let args = [
        "history",
        "event7:host",
        "--svg",
        "--as-of",
        "2026-04-11",
        "--valid-at",
        "2026-04-10",
    ];
    let a = s.ok(&args, Some(NOW));
    let b = s.ok(&args, Some(NOW));
    assert_eq!(a.stdout, b.stdout, "the same history gives the same bytes");
    let svg = &a.stdout;
    assert!(
        svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""),
        "{svg}"
    );
    assert!(svg.trim_end().ends_with("</svg>"));
    let history = s.ok(&["history", "event7:host", "--json"], Some(NOW));
    let n = history.json().as_array().unwrap().len();
    assert_eq!(svg.matches("<rect ").count(), n, "{svg}");
    for value in ["Railway", "Cloudflare", "local only"] {
        // Labelled (shortened when the rectangle is narrow), and whole in its tooltip.
        assert!(
            svg.contains(&format!("<title>event7:host = {value}\n")),
            "{value}: {svg}"
        );
        let label = format!(">{}", &value[..4]);
        assert!(svg.contains(&label), "{value}: {svg}");
    }
    assert!(svg.contains(">now</text>"));
    assert!(svg.contains(">as_of 2026-04-11</text>"));
    assert!(svg.contains(">valid_at 2026-04-10</text>"));
    // --valid-at belongs to the picture only.
    assert_eq!(
        s.run(
            &["history", "event7:host", "--valid-at", "2026-04-10"],
            Some(NOW)
        )
        .code,
        2
    );

    // Hostile values and tags stay text.
    let hostile = [
        "<script>alert(1)</script>",
        "<img src=x onerror=alert(1)>",
        "\"><svg onload=alert(1)>",
        "[link](javascript:alert(1))",
    ];
    for v in hostile {
        s.ok(&["store", "evil", v, "--tag", "x"], None);
    }
    s.ok(&["store", "evil", &"long ".repeat(2000)], None);
    let svg = s.ok(&["history", "evil", "--svg"], None).stdout;
    assert_eq!(svg.matches("<svg").count(), 1, "{svg}");
    assert!(
        !svg.contains("<script") && !svg.contains("<img") && !svg.contains("<svg onload"),
        "{svg}"
    );
    assert!(!svg.contains("href=\"javascript"), "{svg}");
    assert!(svg.contains("&lt;script&gt;"));
    assert!(
        svg.len() < 40_000,
        "a long value is shortened: {} bytes",
        svg.len()
    );
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

// ---------------------------------------------------------------------------------------
// Names that don't drift.

#[test]
fn near_keys_are_found_by_index_beyond_ascii_and_two_edits_away() {
    // The index finds ASCII keys by their slots and lists keys beyond ASCII apart
    // (SQLite lowers ASCII only): both kinds must still be named.
    let s = Sandbox::new();
    s.ok(&["store", "Équipe:lead", "Ada"], Some(T1));
    s.ok(&["store", "café:menu", "soup"], Some(T1));
    s.ok(&["store", "team:oncall", "Grace"], Some(T1));
    s.ok(&["store", "project7:fact12345", "x"], Some(T1));
    let r = s.miss(&["recall", "équipe:lead"], Some(NOW));
    assert!(
        r.stderr
            .contains("near keys: Équipe:lead (the same key ignoring case and separators)"),
        "{}",
        r.stderr
    );
    let r = s.miss(&["recall", "cafe:menu"], Some(NOW));
    assert!(
        r.stderr
            .contains("near keys: café:menu (one character away)"),
        "{}",
        r.stderr
    );
    let r = s.miss(&["recall", "team:on-cal"], Some(NOW));
    assert!(
        r.stderr
            .contains("near keys: team:oncall (2 characters away)"),
        "{}",
        r.stderr
    );
    let r = s.ok(&["history", "project7:fact1234"], Some(NOW));
    assert!(
        r.stderr
            .contains("near keys: project7:fact12345 (one character away)"),
        "{}",
        r.stderr
    );
}

#[test]
fn a_miss_names_the_near_keys_and_a_new_look_alike_slot_is_reported() {
    let s = Sandbox::new();
    s.ok(&["store", "team:CDN", "Fastly"], Some(T1));
    s.ok(
        &["store", "team:ci_provider", "CI runs on CircleCI"],
        Some(T1),
    );
    s.ok(&["store", "team:lead", "Ada"], Some(T1));
    let r = s.miss(&["recall", "team:cdn"], Some(NOW));
    assert!(r.stdout.is_empty(), "{}", r.stdout);
    assert!(
        r.stderr
            .contains("near keys: team:CDN (the same key ignoring case and separators)"),
        "{}",
        r.stderr
    );
    // With --json standard output stays the array; the hint goes to standard error.
    let r = s.miss(&["recall", "team-ci-provider", "--json"], Some(NOW));
    assert_eq!(r.stdout.trim(), "[]");
    assert!(r.stderr.contains("team:ci_provider"), "{}", r.stderr);
    let r = s.ok(&["history", "team:leed", "--json"], Some(NOW));
    assert_eq!(r.stdout.trim(), "[]");
    assert!(
        r.stderr.contains("team:lead (one character away)"),
        "{}",
        r.stderr
    );
    let r = s.miss(&["recall", "weather:today"], Some(NOW));
    assert!(!r.stderr.contains("near keys"), "{}", r.stderr);

    // A store of a new key beside a look-alike slot succeeds and says so.
    let r = s.ok(&["store", "team:cdn", "Cloudflare", "--json"], Some(T2));
    let j = r.json();
    assert_eq!(j["status"], "stored");
    assert_eq!(j["similar"][0]["key"], "team:CDN");
    assert!(
        j["hint"]
            .as_str()
            .unwrap()
            .contains("use `team:CDN` from now on: `mem7 rekey team:cdn team:CDN` moves"),
        "{}",
        r.stdout
    );
    let r = s.ok(&["store", "team.ci.provider", "Buildkite"], Some(T2));
    assert!(
        r.stdout.contains("note: `team.ci.provider` is a new key"),
        "{}",
        r.stdout
    );
    // A known key, and an unrelated new key, report nothing.
    let r = s.ok(&["store", "team:cdn", "Akamai", "--json"], Some(T3));
    assert_eq!(r.json()["similar"], serde_json::json!([]));
    assert!(r.json().get("hint").is_none());
    let r = s.ok(&["store", "office:wifi", "guest", "--json"], Some(T3));
    assert_eq!(r.json()["similar"], serde_json::json!([]));

    // The slots are the same whichever way the index learnt the keys: a rebuild, a
    // catch-up of an entry written by hand, the process's own writes. So are drifted
    // words (the index files each key under its words' stems on each of those paths).
    s.ok(&["store", "payments:owner", "Karim"], Some(T3));
    s.ok(&["reindex"], Some(T3));
    let r = s.ok(
        &["store", "payments:owner_name", "Lena", "--json"],
        Some(T3),
    );
    assert_eq!(similar_keys(&r.json()), ["payments:owner"], "{}", r.stdout);
    s.append_by_hand("ci:provider", "CircleCI");
    let r = s.ok(&["store", "ci:platform", "Buildkite", "--json"], Some(T3));
    assert_eq!(similar_keys(&r.json()), ["ci:provider"], "{}", r.stdout);
    let r = s.ok(&["store", "TEAM_CDN", "Fastly", "--json"], Some(T3));
    let j = r.json();
    let similar = similar_keys(&j);
    assert!(
        similar.contains(&"team:CDN") && similar.contains(&"team:cdn"),
        "{similar:?}"
    );
    s.append_by_hand("office:Printer", "second floor");
    let r = s.ok(
        &["store", "office-printer", "third floor", "--json"],
        Some(T3),
    );
    assert_eq!(
        r.json()["similar"][0]["key"],
        "office:Printer",
        "{}",
        r.stdout
    );
}

#[test]
fn rekey_moves_a_fact_with_its_periods_and_keeps_history_on_both_keys() {
    let s = Sandbox::new();
    // TO holds Fastly from January on; the fact drifted to FROM in March.
    s.ok(
        &["store", "team:CDN", "Fastly", "--valid-from", "2026-01-01"],
        Some(T1),
    );
    s.ok(
        &[
            "store",
            "team:cdn",
            "Cloudflare",
            "--valid-from",
            "2026-03-01",
            "--valid-to",
            "2026-05-01",
        ],
        Some(T2),
    );
    let before = s.snapshot();
    let dry = s.ok(&["rekey", "team:cdn", "team:CDN", "--dry-run"], Some(T3));
    assert!(
        dry.stdout
            .contains("would move 1 version of team:cdn to team:CDN"),
        "{}",
        dry.stdout
    );
    assert!(dry.stdout.contains("team:CDN = Fastly"), "{}", dry.stdout);
    assert!(
        dry.stdout.contains("nothing written (--dry-run)"),
        "{}",
        dry.stdout
    );
    assert_eq!(s.snapshot(), before, "a dry run writes nothing");
    let moved_at = s.ok(&["history", "team:CDN", "--json"], Some(T3)).json();
    let r = s.ok(&["rekey", "team:cdn", "team:CDN", "--json"], Some(T3));
    let j = r.json();
    assert_eq!(j["written"], true);
    assert_eq!(j["moved"][0]["value"], "Cloudflare");
    assert_eq!(j["superseded"][0]["value"], "Fastly");
    let at = |valid: &str, key: &str| {
        s.read(&["recall", key, "--valid-at", valid, "--json"], Some(NOW))
            .strings("value")
    };
    // TO holds FROM's value over FROM's period and keeps its own outside it.
    assert_eq!(at("2026-02-01", "team:CDN"), ["Fastly"]);
    assert_eq!(at("2026-03-15", "team:CDN"), ["Cloudflare"]);
    assert_eq!(at("2026-06-01", "team:CDN"), ["Fastly"]);
    // FROM holds nothing now, and both stay readable as of before the move.
    assert!(at("2026-03-15", "team:cdn").is_empty());
    let old = |key: &str| {
        s.ok(
            &[
                "recall",
                key,
                "--valid-at",
                "2026-03-15",
                "--as-of",
                T2,
                "--json",
            ],
            Some(NOW),
        )
        .strings("value")
    };
    assert_eq!(old("team:cdn"), ["Cloudflare"]);
    assert_eq!(old("team:CDN"), ["Fastly"]);
    assert!(
        moved_at.as_array().unwrap().len()
            < s.ok(&["history", "team:CDN", "--json"], Some(NOW))
                .json()
                .as_array()
                .unwrap()
                .len()
    );
    s.ok(&["verify"], Some(NOW));
    // Nothing left to move, and a key onto itself: exit 2, nothing written.
    let after = s.snapshot();
    let r = s.run(&["rekey", "team:cdn", "team:CDN"], Some(NOW));
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("nothing is believed about `team:cdn`"),
        "{}",
        r.stderr
    );
    assert_eq!(s.run(&["rekey", "team:CDN", "team:CDN"], Some(NOW)).code, 2);
    assert_eq!(s.snapshot(), after);
}

// --- The smaller holes of a hostile or careless input (issue 21) ----------------------

#[test]
fn control_characters_never_reach_the_terminal_and_json_stays_exact() {
    let s = Sandbox::new();
    // A clipboard write (OSC 52), a screen clear, a title change, a C1 CSI, a bidi
    // override and a carriage return.
    let hostile =
        "ok\u{1b}]52;c;ZWNobyBwd25lZA==\u{7}\u{1b}[2J\u{1b}]0;pwned\u{7}\u{9b}1m\u{202e}txt\rX";
    s.ok(&["store", "term:evil", hostile, "--tag", "t"], Some(T1));
    for args in [
        vec!["recall", "term:evil"],
        vec!["history", "term:evil"],
        vec!["list"],
        vec!["timeline", "--since", "2026-01-01"],
        vec!["search", "ok"],
        vec!["context"],
    ] {
        let r = s.ok(&args, Some(NOW));
        assert!(
            !r.stdout
                .chars()
                .any(|c| (c.is_control() && c != '\n' && c != '\t')
                    || ('\u{202a}'..='\u{202e}').contains(&c)),
            "{args:?} printed a control character: {:?}",
            r.stdout
        );
        assert!(r.stdout.contains("\\u001b"), "{args:?}: {:?}", r.stdout);
    }
    for args in [
        vec!["recall", "term:evil", "--json"],
        vec!["history", "term:evil", "--json"],
        vec!["list", "--json"],
    ] {
        let r = s.ok(&args, Some(NOW));
        assert!(!r.stdout.contains('\u{1b}') && !r.stdout.contains('\u{9b}'));
        let v = r.json();
        let first = v.as_array().map_or(&v, |a| &a[0]);
        assert_eq!(first["value"], hostile, "{args:?}: the JSON value is exact");
    }
}

#[test]
fn a_byte_that_is_not_utf8_is_a_finding_at_its_line_and_the_rest_stays_usable() {
    let s = Sandbox::new();
    s.ok(&["store", "a:1", "first"], Some(T1));
    s.ok(&["store", "b:1", "second"], Some(T1));
    let file = s.memory_dir().join("2026-02-15.md");
    let mut bytes = std::fs::read(&file).unwrap();
    let at = bytes.windows(6).position(|w| w == b"second").unwrap();
    bytes[at] = 0xff;
    std::fs::write(&file, &bytes).unwrap();
    let line = bytes[..at].iter().filter(|&&b| b == b'\n').count() + 1;

    // Other keys still answer; the damaged one reads with `?`.
    assert_eq!(
        s.ok(&["recall", "a:1", "--json"], Some(NOW))
            .strings("value"),
        ["first"]
    );
    assert_eq!(
        s.ok(&["recall", "b:1", "--json"], Some(NOW))
            .strings("value"),
        ["?econd"]
    );
    s.ok(&["list"], Some(NOW));
    let v = s.run(&["verify"], None);
    assert_eq!(v.code, 1, "{}{}", v.stdout, v.stderr);
    let named = format!("memory/2026-02-15.md:{line}:");
    assert!(
        v.stdout
            .lines()
            .any(|l| l.starts_with(&named) && l.contains("UTF-8")),
        "verify names {named}: {}",
        v.stdout
    );
    // A write still goes through.
    s.ok(&["store", "c:1", "third"], Some(T2));
    assert_eq!(
        s.run(&["recall", "c:1", "--json"], Some(NOW))
            .strings("value"),
        ["third"]
    );
}

#[test]
fn the_entry_size_limit_counts_tags_too() {
    let s = Sandbox::new();
    std::fs::write(s.ws.join("mem7.yaml"), "max_value_bytes: 200\n").unwrap();
    let before = s.snapshot();
    let mut args = vec!["store".to_string(), "k:1".into(), "short".into()];
    for i in 0..40 {
        args.push("--tag".into());
        args.push(format!("tag-number-{i}"));
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let r = s.run(&args, Some(T1));
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("tags"), "{}", r.stderr);
    assert_eq!(s.snapshot(), before, "nothing written");
    // One import record the same.
    let record = format!(
        "{{\"key\":\"k:2\",\"value\":\"v\",\"tags\":[{}]}}\n",
        (0..40)
            .map(|i| format!("\"tag-number-{i}\""))
            .collect::<Vec<_>>()
            .join(",")
    );
    let r = s.run_stdin(&["import", "-"], Some(T1), &record);
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert_eq!(s.snapshot(), before, "nothing written");
}

#[test]
fn search_reads_only_the_start_of_a_huge_value_and_recall_keeps_all_of_it() {
    let s = Sandbox::new();
    let value = format!("{} needle-at-the-end", "lorem ipsum ".repeat(20_000));
    std::fs::write(s.ws.join("mem7.yaml"), "max_value_bytes: 1000000\n").unwrap();
    s.ok(&["allow"], Some(T1));
    let stored = s.run_stdin(&["store", "doc:long", "-", "--tag", "t"], Some(T1), &value);
    assert_eq!(stored.code, 0, "{}", stored.stderr);
    s.ok(&["store", "doc:short", "a needle-at-the-end too"], Some(T1));
    let found = s.ok(&["search", "needle-at-the-end", "--json"], Some(NOW));
    assert_eq!(
        found.strings("key"),
        ["doc:short"],
        "past the indexed start"
    );
    let found = s.ok(&["search", "lorem", "--json"], Some(NOW));
    assert_eq!(found.strings("key"), ["doc:long"]);
    let back = s.ok(&["recall", "doc:long", "--json"], Some(NOW));
    assert_eq!(back.strings("value"), [value]);
}

#[test]
fn export_refuses_to_write_into_the_memory_folder_or_the_index() {
    let s = worked_example(&[]);
    let before = s.snapshot();
    for target in [
        "memory/2026-02-15.md",
        "memory/new.json",
        ".mem7/x.json",
        "memory/../memory/y",
    ] {
        let path = s.ws.join(target);
        let r = s.run(
            &["export", "--history", "-o", path.to_str().unwrap()],
            Some(NOW),
        );
        assert_eq!(r.code, 2, "{target}: {}{}", r.stdout, r.stderr);
        assert!(r.stderr.contains("inside the workspace"), "{}", r.stderr);
    }
    assert_eq!(s.snapshot(), before);
    // Beside the workspace is fine.
    let out = s.dir.path().join("memory.jsonl");
    s.ok(
        &["export", "--history", "-o", out.to_str().unwrap()],
        Some(NOW),
    );
    assert!(out.is_file());
}

#[test]
fn an_import_that_cannot_finish_writes_nothing_and_a_rerun_completes_it() {
    let s = Sandbox::new();
    s.ok(&["store", "seed:1", "s"], Some("2026-01-02T00:00:00Z"));
    // Records over three days: the seed's file is appended to, two files are new.
    let mut records = String::new();
    for day in ["2026-01-02", "2026-01-03", "2026-01-04"] {
        for i in 0..100 {
            records.push_str(&format!(
                "{{\"key\":\"bulk:{day}:{i}\",\"value\":\"{}\",\"recorded\":\"{day}T01:00:00.{i:06}Z\"}}\n",
                "v".repeat(200),
            ));
        }
    }
    let input = s.dir.path().join("records.jsonl");
    std::fs::write(&input, &records).unwrap();
    let before = s.snapshot();
    // The second new file cannot be written (a folder stands where it goes): the
    // appends before it are undone, as after a full disk.
    let blocker = s.memory_dir().join("2026-01-04.md");
    std::fs::create_dir(&blocker).unwrap();
    let r = s.run(&["import", input.to_str().unwrap()], None);
    // Writing the workspace's own files failed: mem7's failure, not the request's.
    assert_eq!(r.code, 3, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("undone"), "{}", r.stderr);
    std::fs::remove_dir(&blocker).unwrap();
    assert_eq!(s.snapshot(), before, "all or nothing");
    assert!(
        !std::fs::read_dir(s.ws.join(".mem7"))
            .unwrap()
            .flatten()
            .any(|e| e.file_name().to_string_lossy().starts_with("import-")),
        "no spill folder left"
    );
    s.ok(&["verify"], None);
    // With the way clear, the same import completes, once.
    s.ok(&["import", input.to_str().unwrap()], None);
    let keys = s
        .ok(
            &["list", "--prefix", "bulk:", "--json"],
            Some("2026-02-01T00:00:00Z"),
        )
        .strings("key");
    assert_eq!(keys.len(), 300);
    s.ok(&["verify"], None);
}

#[test]
fn a_spill_folder_left_by_a_killed_import_is_removed_at_the_next_write() {
    let s = Sandbox::new();
    s.ok(&["store", "seed:1", "s"], Some(T1));
    let spill = s.ws.join(".mem7/import-killed123");
    std::fs::create_dir_all(&spill).unwrap();
    std::fs::write(spill.join("memory_2026-02-15.md"), "## half\n").unwrap();
    s.ok(&["store", "seed:2", "t"], Some(T2));
    assert!(!spill.exists());
}

#[test]
fn a_key_in_another_script_or_full_width_names_its_ascii_twin() {
    let s = Sandbox::new();
    s.ok(&["store", "payments:owner", "Ada"], Some(T1));
    for disguised in ["p\u{430}yments:owner", "\u{ff50}ayments:owner"] {
        let r = s.ok(&["store", disguised, "Bo", "--json"], Some(T2));
        let v = r.json();
        let similar = similar_keys(&v);
        assert!(similar.contains(&"payments:owner"), "{disguised}: {v}");
        let human = s.ok(&["store", &format!("{disguised}:x"), "Cy"], Some(T3));
        assert!(
            human.stdout.contains("payments:owner:x") || human.stderr.contains("payments:owner:x"),
            "{}{}",
            human.stdout,
            human.stderr
        );
    }
}

#[test]
fn a_corrupt_index_is_rebuilt_never_an_exit_3_loop() {
    let s = worked_example(&[]);
    let db = std::fs::read_dir(s.ws.join(".mem7"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "db" || x == "sqlite"))
        .expect("an index database");
    std::fs::write(&db, b"this is not a database, not even close; ".repeat(200)).unwrap();
    let r = s.run(&["verify", "--index"], Some(NOW));
    // Rebuilt on opening, the index matches the markdown: nothing fails.
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert_eq!(recall_values(&s, &[]), ["local only"]);
    s.ok(&["verify", "--index"], Some(NOW));
}

#[test]
fn a_retry_of_a_store_or_an_import_changes_nothing() {
    let s = worked_example(&[]);
    let bytes = |s: &Sandbox| s.snapshot();
    // The same explicit period twice: the second is a restatement.
    let args = [
        "store",
        "office:wifi",
        "down for maintenance",
        "--valid-from",
        "2026-05-10T08:00:00Z",
        "--valid-to",
        "2026-05-10T12:00:00Z",
        "--json",
    ];
    let first = s.ok(&args, Some(NOW)).json();
    assert_eq!(first["status"], "stored");
    let before = bytes(&s);
    let again = s.ok(&args, Some("2026-04-12T13:00:00Z")).json();
    assert_eq!(again["status"], "unchanged", "{again}");
    assert_eq!(again["version"]["hash"], first["version"]["hash"]);
    assert_eq!(bytes(&s), before, "no entry written");
    // A late correction repeated (explicit start, open end): unchanged too.
    let late = [
        "store",
        "event7:host",
        "local only",
        "--valid-from",
        "2026-04-05",
        "--json",
    ];
    assert_eq!(
        s.ok(&late, Some("2026-04-12T14:00:00Z")).json()["status"],
        "unchanged"
    );
    assert_eq!(bytes(&s), before);
    // The same value from a new explicit start adds a boundary: applied as stated.
    let moved = [
        "store",
        "event7:host",
        "local only",
        "--valid-from",
        "2026-04-08",
        "--json",
    ];
    assert_eq!(
        s.ok(&moved, Some("2026-04-12T15:00:00Z")).json()["status"],
        "stored"
    );
    // Different tags are a change.
    let tagged = [&args[..7], &["--tag", "ops", "--json"]].concat();
    assert_eq!(
        s.ok(&tagged, Some("2026-04-12T16:00:00Z")).json()["status"],
        "stored"
    );

    // An import run twice: the rerun writes nothing and says how many it skipped.
    let records = "{\"key\":\"plan:a\",\"value\":\"one\",\"valid_from\":\"2026-01-01\"}\n\
                   {\"key\":\"plan:b\",\"value\":\"two\",\"valid_from\":\"2026-01-02\",\"valid_to\":\"2026-02-01\"}\n";
    let r = s.run_stdin(&["import", "-"], Some("2026-04-13T00:00:00Z"), records);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("2 stored"), "{}", r.stdout);
    let before = bytes(&s);
    let r = s.run_stdin(&["import", "-"], Some("2026-04-14T00:00:00Z"), records);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("0 stored, 2 unchanged"), "{}", r.stdout);
    assert_eq!(bytes(&s), before, "no entry written");
}

#[test]
fn a_fact_shown_as_holding_is_never_also_history_in_the_block() {
    let s = Sandbox::new();
    // Stored, forgotten, stored again: the old version was retracted an hour ago, and
    // the same value holds now.
    s.ok(
        &["store", "ci:provider", "Buildkite"],
        Some("2026-04-12T09:00:00Z"),
    );
    s.ok(&["forget", "ci:provider"], Some("2026-04-12T10:00:00Z"));
    s.ok(
        &["store", "ci:provider", "Buildkite"],
        Some("2026-04-12T11:00:00Z"),
    );
    for args in [
        vec!["context"],
        vec!["context", "which CI provider do we use"],
    ] {
        let block = s.ok(&args, Some(NOW)).stdout;
        assert_eq!(block.matches("Buildkite").count(), 1, "{args:?}:\n{block}");
    }
}

/// The values of a JSON array of versions (or hits), in the order given.
fn json_values(r: &world::Run) -> Vec<String> {
    r.strings("value")
}

/// Appends an entry written before tiers existed (no `tier:` line), by hand: it holds
/// from 2026-01-02 and was recorded then.
fn append_untiered(s: &Sandbox, key: &str, value: &str) {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(s.memory_dir().join("2026-01-02.md"))
        .unwrap();
    write!(
        f,
        "## {key}\n\n```mem7\nop: store\nvalid_from: 2026-01-02T00:00:00Z\nrecorded: 2026-01-02T00:00:00Z\nagent: a person\n```\n\n> {value}\n\n---\n"
    )
    .unwrap();
}

/// A read's JSON answer at `now` (exit 0 with values, 4 with none).
fn read_values(s: &Sandbox, args: &[&str], now: &str) -> Vec<String> {
    let mut full = args.to_vec();
    full.push("--json");
    json_values(&s.read(&full, Some(now)))
}

#[test]
fn a_person_asserts_a_model_infers_and_only_a_higher_tier_restates() {
    let s = Sandbox::new();
    // The CLI asserts by default; --tier inferred says a model concluded it.
    let r = s.ok(&["store", "ci:provider", "Buildkite", "--json"], Some(T1));
    assert_eq!(r.json()["version"]["tier"], "asserted");
    let r = s.ok(
        &[
            "store",
            "dev:editor",
            "helix",
            "--tier",
            "inferred",
            "--json",
        ],
        Some(T1),
    );
    assert_eq!(r.json()["version"]["tier"], "inferred");
    let tiered = s.memory_text();
    assert!(
        tiered.contains("agent: tester\ntier: asserted\n")
            && tiered.contains("agent: tester\ntier: inferred\n"),
        "the tier is a line of the envelope after agent:\n{tiered}"
    );

    // The same value at the same or a lower tier restates: nothing written.
    let before = s.snapshot();
    let r = s.ok(
        &[
            "store",
            "dev:editor",
            "helix",
            "--tier",
            "inferred",
            "--json",
        ],
        Some(T2),
    );
    assert_eq!(r.json()["status"], "unchanged", "equal: {}", r.stdout);
    let r = s.ok(
        &[
            "store",
            "ci:provider",
            "Buildkite",
            "--tier",
            "inferred",
            "--json",
        ],
        Some(T2),
    );
    assert_eq!(r.json()["status"], "unchanged", "lower: {}", r.stdout);
    assert_eq!(r.json()["version"]["tier"], "asserted");
    assert_eq!(s.snapshot(), before, "no entry written by a restatement");

    // The same value at a higher tier is news: the person vouches for the guess now.
    let r = s.ok(&["store", "dev:editor", "helix", "--json"], Some(T2));
    assert_eq!(r.json()["status"], "stored", "{}", r.stdout);
    assert_eq!(r.json()["version"]["tier"], "asserted");
    assert_eq!(r.json()["closed"], 1);
    let r = s.ok(&["recall", "dev:editor", "--json"], Some(NOW));
    assert_eq!(r.strings("tier"), ["asserted"]);
    // ...and is itself restated by a later inferred store of that value.
    let r = s.ok(
        &[
            "store",
            "dev:editor",
            "helix",
            "--tier",
            "inferred",
            "--json",
        ],
        Some(T3),
    );
    assert_eq!(r.json()["status"], "unchanged");

    // History shows who vouched for each version, in JSON and for people.
    let r = s.ok(&["history", "dev:editor", "--json"], Some(NOW));
    let tiers = r.strings("tier");
    assert!(
        tiers.contains(&"inferred".to_string()) && tiers.contains(&"asserted".to_string()),
        "{tiers:?}"
    );
    let r = s.ok(&["history", "dev:editor"], Some(NOW));
    assert!(
        r.stdout.contains("· agent tester · inferred\n"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("· agent tester · asserted\n"),
        "{}",
        r.stdout
    );
    let r = s.ok(&["recall", "ci:provider"], Some(NOW));
    assert!(
        r.stdout.contains("· agent tester · asserted\n"),
        "{}",
        r.stdout
    );

    // An entry without a tier (written by hand, as before tiers) is unspecified: null in
    // JSON, nothing on the Source line, and a store that names any tier is not a
    // restatement of it.
    append_untiered(&s, "team:lead", "Ana");
    let r = s.ok(&["recall", "team:lead", "--json"], Some(NOW));
    assert_eq!(r.json()[0]["tier"], Value::Null, "{}", r.stdout);
    let r = s.ok(&["recall", "team:lead"], Some(NOW));
    assert!(r.stdout.contains("· agent a person\n"), "{}", r.stdout);
    let r = s.ok(
        &["store", "team:lead", "Ana", "--tier", "inferred", "--json"],
        Some(NOW),
    );
    assert_eq!(r.json()["status"], "stored", "{}", r.stdout);
    assert_eq!(r.json()["closed"], 1);

    // A bad tier is refused by the flag parser: exit 2, nothing written.
    let before = s.snapshot();
    let r = s.run(&["store", "x:y", "z", "--tier", "certain"], Some(NOW));
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert_eq!(s.snapshot(), before);
}

#[test]
fn tier_filters_every_read_and_unspecified_facts_only_an_unfiltered_one() {
    let s = Sandbox::new();
    s.ok(&["store", "ci:provider", "Buildkite"], Some(T1));
    s.ok(
        &["store", "dev:shell", "fish", "--tier", "inferred"],
        Some(T1),
    );
    append_untiered(&s, "team:lead", "Ana");
    // recall
    assert_eq!(
        read_values(&s, &["recall", "dev:shell", "--tier", "inferred"], NOW),
        ["fish"]
    );
    assert!(read_values(&s, &["recall", "dev:shell", "--tier", "asserted"], NOW).is_empty());
    assert!(read_values(&s, &["recall", "team:lead", "--tier", "asserted"], NOW).is_empty());
    assert!(read_values(&s, &["recall", "team:lead", "--tier", "inferred"], NOW).is_empty());
    assert_eq!(read_values(&s, &["recall", "team:lead"], NOW), ["Ana"]);
    // list
    let list = |tier: &[&str]| {
        let mut args = vec!["list", "--json"];
        args.extend_from_slice(tier);
        let mut v = json_values(&s.ok(&args, Some(NOW)));
        v.sort();
        v
    };
    assert_eq!(list(&[]), ["Ana", "Buildkite", "fish"]);
    assert_eq!(list(&["--tier", "asserted"]), ["Buildkite"]);
    assert_eq!(list(&["--tier", "inferred"]), ["fish"]);
    // search (words: the three values share none, so each search names one)
    let search = |q: &str, tier: &str| {
        let r = s.run(
            &["search", q, "--tier", tier, "--mode", "lexical", "--json"],
            Some(NOW),
        );
        // A search that finds nothing is an answer (exit 0); only a recall miss exits 4.
        assert_eq!(r.code, 0, "{}", r.stderr);
        if r.stdout.trim().is_empty() {
            return Vec::new();
        }
        json_values(&r)
    };
    assert_eq!(search("fish", "inferred"), ["fish"]);
    assert!(search("fish", "asserted").is_empty());
    assert_eq!(search("Buildkite", "asserted"), ["Buildkite"]);
    assert!(search("Ana", "asserted").is_empty());
    // context: only facts of the tier; the block says how to read an inferred one.
    let block = s.ok(&["context", "--tier", "asserted"], Some(NOW)).stdout;
    assert!(block.contains("`ci:provider` = Buildkite"), "{block}");
    assert!(!block.contains("fish") && !block.contains("Ana"), "{block}");
    assert!(!block.contains("`inferred`"), "{block}");
    let block = s.ok(&["context", "--tier", "inferred"], Some(NOW)).stdout;
    assert!(block.contains("`dev:shell` = fish"), "{block}");
    assert!(block.contains(" · inferred\n"), "{block}");
    assert!(!block.contains("Buildkite"), "{block}");
}

const D1: &str = "2026-05-01T10:00:00Z";
const D2: &str = "2026-05-02T10:00:00Z";
const D3: &str = "2026-05-03T10:00:00Z";
const D4: &str = "2026-05-04T10:00:00Z";
const LATER: &str = "2026-05-05T10:00:00Z";

/// Two deploys recorded on two days under one event key.
fn two_deploys() -> (Sandbox, String, String) {
    let s = Sandbox::new();
    let first = s.ok(
        &["store", "event:deploy", "deployed v2.3", "--json"],
        Some(D1),
    );
    assert_eq!(first.json()["status"], "stored");
    assert_eq!(first.json()["closed"], 0);
    let second = s.ok(
        &["store", "event:deploy", "deployed v2.4", "--json"],
        Some(D2),
    );
    assert_eq!(second.json()["status"], "stored");
    assert_eq!(second.json()["closed"], 0, "an event closes no other value");
    let hash = |r: &world::Run| r.json()["version"]["hash"].as_str().unwrap().to_string();
    (s, hash(&first), hash(&second))
}

#[test]
fn a_key_of_many_values_keeps_every_value_through_every_read() {
    let (s, _, _) = two_deploys();
    let text = s.memory_text();
    assert_eq!(text.matches("op: add\n").count(), 2, "{text}");
    assert!(!text.contains("op: store"), "{text}");

    // A retry of either value (no period given) writes nothing.
    let before = s.snapshot();
    for value in ["deployed v2.4", "deployed v2.3"] {
        let r = s.ok(&["store", "event:deploy", value, "--json"], Some(D3));
        assert_eq!(r.json()["status"], "unchanged", "{value}: {}", r.stdout);
        assert_eq!(r.json()["version"]["value"], value);
    }
    let r = s.ok(&["store", "event:deploy", "deployed v2.4"], Some(D3));
    assert!(r.stdout.starts_with("unchanged"), "{}", r.stdout);
    assert_eq!(s.snapshot(), before, "a retry writes nothing");

    // recall and list: every value, newest first.
    let both = ["deployed v2.4", "deployed v2.3"];
    assert_eq!(read_values(&s, &["recall", "event:deploy"], D3), both);
    assert_eq!(
        json_values(&s.ok(&["list", "--prefix", "event:", "--json"], Some(D3))),
        both
    );
    let r = s.ok(&["recall", "event:deploy"], Some(D3));
    let (v24, v23) = (
        r.stdout.find("event:deploy = deployed v2.4").unwrap(),
        r.stdout.find("event:deploy = deployed v2.3").unwrap(),
    );
    assert!(v24 < v23, "newest first for people too:\n{}", r.stdout);
    // search: both values are hits.
    let r = s.ok(
        &["search", "deployed", "--mode", "lexical", "--json"],
        Some(D3),
    );
    let mut hits = json_values(&r);
    hits.sort();
    assert_eq!(hits, ["deployed v2.3", "deployed v2.4"]);
    // history: both, neither closed.
    let r = s.ok(&["history", "event:deploy", "--json"], Some(D3));
    assert_eq!(r.json().as_array().unwrap().len(), 2, "{}", r.stdout);
    assert!(
        r.json()
            .as_array()
            .unwrap()
            .iter()
            .all(|v| v["tx_to"].is_null())
    );
    // The block: both values, with the reading rule that they add up.
    for args in [vec!["context"], vec!["context", "what did we deploy"]] {
        let block = s.ok(&args, Some(D3)).stdout;
        assert!(
            block.contains("`event:deploy` = deployed v2.4")
                && block.contains("`event:deploy` = deployed v2.3"),
            "{args:?}:\n{block}"
        );
        assert!(block.contains("keeps every one"), "{args:?}:\n{block}");
    }

    // The two clocks: before the second was recorded, or before it held, one value.
    let one = ["deployed v2.3"];
    assert_eq!(
        read_values(
            &s,
            &["recall", "event:deploy", "--as-of", "2026-05-01T12:00:00Z"],
            D3
        ),
        one
    );
    assert_eq!(
        read_values(
            &s,
            &[
                "recall",
                "event:deploy",
                "--valid-at",
                "2026-05-01T12:00:00Z"
            ],
            D3
        ),
        one
    );
    assert!(
        read_values(
            &s,
            &["recall", "event:deploy", "--valid-at", "2026-04-30"],
            D3
        )
        .is_empty()
    );
    // A value learnt late (explicit start) is added between them, closing nothing.
    let r = s.ok(
        &[
            "store",
            "event:deploy",
            "hotfix v2.3.1",
            "--valid-from",
            "2026-05-01T15:00:00Z",
            "--json",
        ],
        Some(D3),
    );
    assert_eq!(r.json()["status"], "stored");
    assert_eq!(r.json()["closed"], 0);
    assert_eq!(r.json()["version"]["valid_to"], Value::Null);
    assert_eq!(
        read_values(&s, &["recall", "event:deploy"], LATER),
        ["deployed v2.4", "hotfix v2.3.1", "deployed v2.3"]
    );
    s.ok(&["verify", "--index"], Some(LATER));
}

#[test]
fn forget_entry_forgets_one_value_and_a_bad_hash_writes_nothing() {
    let (s, v23, v24) = two_deploys();
    // A hash that names no believed value of the key: exit 2, nothing written.
    let before = s.snapshot();
    for bad in [
        "0000000000",
        "not-a-hash",
        "",
        &v24[..12].replace(|c: char| c.is_ascii_hexdigit(), "f"),
    ] {
        let r = s.run(&["forget", "event:deploy", "--entry", bad], Some(D3));
        assert_eq!(r.code, 2, "{bad:?}: {}{}", r.stdout, r.stderr);
        assert_eq!(s.snapshot(), before, "{bad:?}");
    }
    let r = s.run(&["forget", "team:other", "--entry", &v23], Some(D3));
    assert_eq!(r.code, 2, "another key's entry: {}", r.stderr);
    assert_eq!(s.snapshot(), before);

    // A unique prefix of the value's entry hash forgets that value only.
    let r = s.ok(&["forget", "event:deploy", "--entry", &v23[..10]], Some(D3));
    assert!(
        r.stdout
            .contains("forgot one value of event:deploy: 1 version"),
        "{}",
        r.stdout
    );
    let text = s.memory_text();
    assert!(
        text.contains(&format!(
            "op: forget\nrecorded: {D3}\nagent: tester\nentry: {v23}\n"
        )),
        "the forget records the full hash:\n{text}"
    );
    assert_eq!(
        read_values(&s, &["recall", "event:deploy"], LATER),
        ["deployed v2.4"]
    );
    // As of before the forget, both; history says when the one stopped being believed.
    assert_eq!(
        read_values(
            &s,
            &["recall", "event:deploy", "--as-of", "2026-05-03T09:00:00Z"],
            LATER
        ),
        ["deployed v2.4", "deployed v2.3"]
    );
    let r = s.ok(&["history", "event:deploy", "--json"], Some(LATER));
    let closed: Vec<_> = r
        .json()
        .as_array()
        .unwrap()
        .iter()
        .filter(|v| v["tx_to"] == D3)
        .map(|v| v["value"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(closed, ["deployed v2.3"]);
    // The forgotten value is not believed now: naming it again is an error.
    let before = s.snapshot();
    let r = s.run(&["forget", "event:deploy", "--entry", &v23], Some(D4));
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert_eq!(s.snapshot(), before);

    // Without --entry, every value goes.
    s.ok(&["store", "event:deploy", "deployed v2.5"], Some(D4));
    let r = s.ok(&["forget", "event:deploy"], Some(LATER));
    assert!(
        r.stdout.contains("2 versions no longer believed"),
        "{}",
        r.stdout
    );
    s.miss(&["recall", "event:deploy", "--json"], Some(LATER));
    s.ok(&["verify", "--index"], Some(LATER));
}

#[test]
fn many_in_mem7_yaml_decides_which_keys_add_and_the_entry_remembers_it() {
    let s = Sandbox::new();
    // A key that matches no pattern still replaces its value.
    s.ok(&["store", "deploy:last", "v2.3"], Some(D1));
    let r = s.ok(&["store", "deploy:last", "v2.4", "--json"], Some(D2));
    assert_eq!(r.json()["closed"], 1);
    assert_eq!(read_values(&s, &["recall", "deploy:last"], D3), ["v2.4"]);

    // A custom list replaces the default: incidents add up, events replace.
    let yaml = s.ws.join("mem7.yaml");
    let original = std::fs::read_to_string(&yaml).unwrap();
    std::fs::write(&yaml, format!("{original}many:\n  - \"incident:*\"\n")).unwrap();
    // Other keys of many values widen what a store keeps: the file counts once approved.
    s.ok(&["allow"], Some(D1));
    s.ok(&["store", "incident:db", "disk full"], Some(D1));
    s.ok(&["store", "incident:db", "replica lag"], Some(D2));
    assert_eq!(
        read_values(&s, &["recall", "incident:db"], D3),
        ["replica lag", "disk full"]
    );
    s.ok(&["store", "event:deploy", "deployed v2.3"], Some(D1));
    let r = s.ok(
        &["store", "event:deploy", "deployed v2.4", "--json"],
        Some(D2),
    );
    assert_eq!(r.json()["closed"], 1, "event:* is not listed here");
    assert_eq!(
        read_values(&s, &["recall", "event:deploy"], D3),
        ["deployed v2.4"]
    );

    // Back to the default list: what was written folds as it was written (the entries
    // say store or add), so old answers stay; new event stores add.
    std::fs::write(&yaml, &original).unwrap();
    s.ok(&["reindex"], Some(D3));
    assert_eq!(
        read_values(&s, &["recall", "event:deploy"], D3),
        ["deployed v2.4"]
    );
    assert_eq!(
        read_values(&s, &["recall", "incident:db"], D3),
        ["replica lag", "disk full"]
    );
    s.ok(&["store", "event:deploy", "deployed v2.5"], Some(D3));
    assert_eq!(
        read_values(&s, &["recall", "event:deploy"], D4),
        ["deployed v2.5", "deployed v2.4"]
    );
    // incident:db is no longer of many values: a store replaces both.
    let r = s.ok(&["store", "incident:db", "resolved", "--json"], Some(D4));
    assert_eq!(r.json()["closed"], 2, "{}", r.stdout);
    assert_eq!(
        read_values(&s, &["recall", "incident:db"], LATER),
        ["resolved"]
    );
    s.ok(&["verify", "--index"], Some(LATER));
}

#[test]
fn the_block_opens_with_the_rules_you_set_whatever_the_query_and_marks_guesses() {
    let s = Sandbox::new();
    s.ok(&["store", "ci:provider", "Buildkite"], Some(D1));
    let plain = s.ok(&["context"], Some(D2)).stdout;
    for extra in [
        "Rules you set",
        "Follow the rules",
        "`inferred`",
        "keeps every one",
    ] {
        assert!(
            !plain.contains(extra),
            "a plain block says no {extra:?}:\n{plain}"
        );
    }

    s.ok(
        &[
            "store",
            "rule:commits",
            "Start every commit message with the ticket key",
        ],
        Some(D1),
    );
    s.ok(
        &[
            "store",
            "style:answers",
            "Answers of five lines at most",
            "--tag",
            "rule",
        ],
        Some(D2),
    );
    s.ok(
        &["store", "dev:editor", "helix", "--tier", "inferred"],
        Some(D2),
    );
    // A query about something else: the rules still open the block, oldest first, in
    // the person's words, and are not repeated as facts.
    let block = s
        .ok(&["context", "which CI provider do we use"], Some(D3))
        .stdout;
    let rules = "### Rules you set (2)\n- Start every commit message with the ticket key\n- Answers of five lines at most\n";
    let at = block.find(rules).unwrap_or_else(|| panic!("{block}"));
    let facts = block.find("### Facts").unwrap_or_else(|| panic!("{block}"));
    assert!(at < facts, "{block}");
    assert!(block.contains("`ci:provider` = Buildkite"), "{block}");
    assert_eq!(block.matches("ticket key").count(), 1, "{block}");
    assert_eq!(block.matches("five lines").count(), 1, "{block}");
    assert!(
        block.contains("- Follow the rules under \"Rules you set\" in every answer"),
        "{block}"
    );
    // The whole block: the inferred fact is marked, and a reading rule says what the
    // mark means; the rules come first even so.
    let block = s.ok(&["context"], Some(D3)).stdout;
    assert!(
        block.contains("- `dev:editor` = helix · valid 2026-05-02T10:00:00Z → ∞ · inferred\n"),
        "{block}"
    );
    assert!(
        block.contains("- Facts marked `inferred` were concluded by a model"),
        "{block}"
    );
    assert!(!block.contains("`ci:provider` = Buildkite · valid 2026-05-01T10:00:00Z → ∞ · "));
    assert!(block.find(rules) < block.find("### Facts"), "{block}");
    // A small budget keeps the rules before any fact.
    let small = s.ok(&["context", "--max-chars", "900"], Some(D3)).stdout;
    assert!(small.contains(rules), "{small}");
    assert!(small.chars().count() <= 900, "{small}");
    // Filtered to asserted facts, the rules stay and the guess goes.
    let asserted = s.ok(&["context", "--tier", "asserted"], Some(D3)).stdout;
    assert!(
        asserted.contains(rules) && !asserted.contains("helix"),
        "{asserted}"
    );
}

// ---------------------------------------------------------------------------------------
// Scopes (issue 23): a project workspace and the user's answering together, found the
// way a person's shell finds them (no MEM7_WORKSPACE: the nearest mem7.yaml above the
// working directory, and ~/.mem7/workspace).

const SCOPE_NOW: &str = "2026-04-12T09:00:00Z";

/// A scratch home with a project (`proj`, run from its subfolder `proj/src`) and,
/// unless `bare_user`, the user's workspace at its default place (`~/.mem7/workspace`).
struct Scopes {
    dir: tempfile::TempDir,
}

impl Scopes {
    fn new() -> Scopes {
        let s = Scopes::without_user();
        s.outside_ok(&["init"]);
        assert!(s.user_ws().join("mem7.yaml").is_file());
        s
    }

    /// A project, and no user workspace yet.
    fn without_user() -> Scopes {
        let s = Scopes {
            dir: tempfile::tempdir().unwrap(),
        };
        std::fs::create_dir_all(s.dir.path().join("home")).unwrap();
        s.outside_ok(&["init", "proj"]);
        std::fs::create_dir_all(s.project().join("src")).unwrap();
        s
    }

    fn project(&self) -> std::path::PathBuf {
        self.dir.path().join("proj")
    }

    fn user_ws(&self) -> std::path::PathBuf {
        self.dir.path().join("home/.mem7/workspace")
    }

    fn local_ws(&self) -> std::path::PathBuf {
        self.project().join(".mem7/local")
    }

    /// `mem7 ARGS` run from `cwd`, with a pinned clock and no MEM7_WORKSPACE.
    fn run_at(&self, cwd: &std::path::Path, args: &[&str]) -> world::Run {
        self.run_when(cwd, SCOPE_NOW, args)
    }

    /// [`Scopes::run_at`] with the clock reading `now`.
    fn run_when(&self, cwd: &std::path::Path, now: &str, args: &[&str]) -> world::Run {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_mem7"))
            .args(args)
            .current_dir(cwd)
            .env_clear()
            .env("HOME", self.dir.path().join("home"))
            .env("MEM7_AGENT", "tester")
            .env("MEM7_NOW", now)
            .env("MEM7_EMBED_PROVIDER", "none")
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .output()
            .unwrap();
        world::finish(out)
    }

    /// From inside the project (its subfolder `src`).
    fn inside(&self, args: &[&str]) -> world::Run {
        self.run_at(&self.project().join("src"), args)
    }

    fn inside_ok(&self, args: &[&str]) -> world::Run {
        let r = self.inside(args);
        assert_eq!(r.code, 0, "mem7 {args:?}: {}{}", r.stdout, r.stderr);
        r
    }

    /// From the scratch directory, outside any project.
    fn outside(&self, args: &[&str]) -> world::Run {
        self.run_at(self.dir.path(), args)
    }

    fn outside_ok(&self, args: &[&str]) -> world::Run {
        let r = self.outside(args);
        assert_eq!(r.code, 0, "mem7 {args:?}: {}{}", r.stdout, r.stderr);
        r
    }

    /// The memory files' text of a workspace.
    fn memory(&self, ws: &std::path::Path) -> String {
        let Ok(read) = std::fs::read_dir(ws.join("memory")) else {
            return String::new();
        };
        read.flatten()
            .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
            .collect()
    }

    /// The usual stack: a user fact, a project fact, and one key in both.
    fn stocked() -> Scopes {
        let s = Scopes::new();
        // user:* goes to the user scope from inside the project; the rest to the project.
        let r = s.inside_ok(&["store", "user:editor", "helix"]);
        assert!(r.stdout.contains("  Scope: user\n"), "{}", r.stdout);
        let r = s.inside_ok(&["store", "deploy:target", "Render", "--json"]);
        assert_eq!(r.json()["scope"], "project", "{}", r.stdout);
        let r = s.inside_ok(&["store", "user:editor", "vim", "--scope", "project"]);
        assert!(r.stdout.contains("  Scope: project\n"), "{}", r.stdout);
        s
    }
}

/// `(value, scope, shadowed)` of each object of a JSON array of versions.
fn scoped(r: &world::Run) -> Vec<(String, String, bool)> {
    r.json()
        .as_array()
        .unwrap_or_else(|| panic!("not an array: {}", r.stdout))
        .iter()
        .map(|v| {
            assert_ne!(v["shadowed"], false, "shadowed is absent or true: {v}");
            (
                v["value"].as_str().unwrap().to_string(),
                v["scope"].as_str().unwrap().to_string(),
                v["shadowed"] == true,
            )
        })
        .collect()
}

fn sv(value: &str, scope: &str, shadowed: bool) -> (String, String, bool) {
    (value.to_string(), scope.to_string(), shadowed)
}

#[test]
fn scopes_a_user_and_a_project_workspace_answer_together_and_the_narrowest_wins() {
    let s = Scopes::stocked();
    let (user, project) = (s.memory(&s.user_ws()), s.memory(&s.project()));
    assert!(
        user.contains("> helix") && !user.contains("> vim"),
        "{user}"
    );
    assert!(!user.contains("deploy:target"), "{user}");
    assert!(project.contains("> vim") && project.contains("> Render"));
    assert!(!project.contains("> helix"), "{project}");

    // recall: the project answers, the user's value is shown as shadowed, never lost.
    let r = s.inside_ok(&["recall", "user:editor", "--json"]);
    assert_eq!(
        scoped(&r),
        [sv("vim", "project", false), sv("helix", "user", true)]
    );
    let r = s.inside_ok(&["recall", "user:editor"]);
    let (vim, helix) = (
        r.stdout.find("user:editor = vim").unwrap(),
        r.stdout.find("user:editor = helix").unwrap(),
    );
    assert!(vim < helix, "{}", r.stdout);
    assert!(r.stdout[vim..helix].contains("  Scope: project\n"));
    assert!(
        r.stdout[helix..].contains("  Scope: user (shadowed: a narrower scope answers)\n"),
        "{}",
        r.stdout
    );
    // A key only one scope holds answers from there.
    let r = s.inside_ok(&["recall", "deploy:target", "--json"]);
    assert_eq!(scoped(&r), [sv("Render", "project", false)]);

    // list: every key once answered, the shadowed value after its answer.
    let r = s.inside_ok(&["list", "--json"]);
    assert_eq!(
        scoped(&r),
        [
            sv("Render", "project", false),
            sv("vim", "project", false),
            sv("helix", "user", true),
        ]
    );
    let r = s.inside_ok(&["list"]);
    assert_eq!(
        r.stdout.matches("  Scope: project\n").count(),
        2,
        "{}",
        r.stdout
    );
    assert_eq!(
        r.stdout
            .matches("  Scope: user (shadowed: a narrower scope answers)\n")
            .count(),
        1,
        "{}",
        r.stdout
    );

    // history: every version of the key, the narrowest scope's first, each with its scope.
    let r = s.inside_ok(&["history", "user:editor", "--json"]);
    let got: Vec<(String, String)> = scoped(&r).into_iter().map(|(v, l, _)| (v, l)).collect();
    assert_eq!(
        got,
        [
            ("vim".to_string(), "project".to_string()),
            ("helix".to_string(), "user".to_string())
        ]
    );
    let r = s.inside_ok(&["history", "user:editor"]);
    assert!(r.stdout.contains("  Scope: project\n"), "{}", r.stdout);
    assert!(r.stdout.contains("  Scope: user"), "{}", r.stdout);

    // search: one list across scopes, the shadowed hit last and marked.
    let r = s.inside_ok(&["search", "editor", "--mode", "lexical", "--json"]);
    assert_eq!(
        scoped(&r),
        [sv("vim", "project", false), sv("helix", "user", true)]
    );
    let r = s.inside_ok(&["search", "editor", "--mode", "lexical"]);
    let first: Vec<&str> = r
        .stdout
        .lines()
        .filter(|l| l.starts_with("user:editor"))
        .collect();
    assert_eq!(first.len(), 2, "{}", r.stdout);
    assert!(first[0].ends_with("  [project]"), "{}", r.stdout);
    assert!(first[1].ends_with("  [user, shadowed]"), "{}", r.stdout);

    // The context block: each line says its scope; the shadowed value is left out.
    let block = s.inside_ok(&["context"]).stdout;
    assert!(
        block.contains("- `user:editor` = vim · valid 2026-04-12T09:00:00Z → ∞ · project\n"),
        "{block}"
    );
    assert!(
        block.contains("- `deploy:target` = Render · valid 2026-04-12T09:00:00Z → ∞ · project\n"),
        "{block}"
    );
    assert!(!block.contains("helix"), "{block}");
    assert!(block.contains("### Facts (2)\n"), "{block}");

    // --scope user: the user's workspace alone, its value not shadowed by anything.
    let r = s.inside_ok(&["recall", "user:editor", "--scope", "user", "--json"]);
    assert_eq!(scoped(&r), [sv("helix", "user", false)]);
    let r = s.inside_ok(&["recall", "user:editor", "--scope", "user"]);
    assert!(r.stdout.contains("user:editor = helix"), "{}", r.stdout);
    assert!(!r.stdout.contains("vim") && !r.stdout.contains("Scope:"));
    let r = s.inside_ok(&["list", "--scope", "user", "--json"]);
    assert_eq!(scoped(&r), [sv("helix", "user", false)]);
    let r = s.inside(&["recall", "deploy:target", "--scope", "user"]);
    assert_eq!(r.code, 4, "{}{}", r.stdout, r.stderr);
    let r = s.inside_ok(&["list", "--scope", "project", "--json"]);
    assert_eq!(
        scoped(&r),
        [sv("Render", "project", false), sv("vim", "project", false)]
    );
    let block = s.inside_ok(&["context", "--scope", "user"]).stdout;
    assert!(block.contains("- `user:editor` = helix"), "{block}");
    assert!(
        !block.contains("vim") && !block.contains(" · user\n"),
        "{block}"
    );

    // Everything still verifies, each workspace on its own chain.
    s.inside_ok(&["verify"]);
    s.outside_ok(&["verify"]);
}

#[test]
fn scopes_forget_and_the_scopes_setting_choose_the_workspace_a_write_goes_to() {
    let s = Scopes::stocked();
    // forget goes where a store of the key would (user:* to the user's), or to --scope.
    s.inside_ok(&["forget", "user:editor", "--scope", "project"]);
    let r = s.inside_ok(&["recall", "user:editor", "--json"]);
    assert_eq!(scoped(&r), [sv("helix", "user", false)]);
    s.inside_ok(&["forget", "user:editor"]);
    let r = s.inside(&["recall", "user:editor", "--json"]);
    assert_eq!((r.code, r.stdout.trim()), (4, "[]"), "{}", r.stderr);
    // The past is kept in both: history still has every version with its scope.
    let r = s.inside_ok(&["history", "user:editor", "--json"]);
    let scopes: Vec<String> = scoped(&r).into_iter().map(|(_, l, _)| l).collect();
    assert_eq!(scopes, ["project", "user"]);

    // `scopes:` in the user's own mem7.yaml names the classes that go to the user scope
    // (a project's never routes into the user's workspace).
    let yaml = s.user_ws().join("mem7.yaml");
    let mut text = std::fs::read_to_string(&yaml).unwrap();
    text.push_str("\nscopes:\n  user: [\"me:*\"]\n");
    std::fs::write(&yaml, text).unwrap();
    let r = s.inside_ok(&["store", "me:ticket", "PAY-1432", "--json"]);
    assert_eq!(r.json()["scope"], "user", "{}", r.stdout);
    let r = s.inside_ok(&["store", "pref:shell", "fish", "--json"]);
    assert_eq!(r.json()["scope"], "project", "{}", r.stdout);
    assert!(s.memory(&s.user_ws()).contains("> PAY-1432"));
    assert!(s.memory(&s.project()).contains("> fish"));
}

#[test]
fn scopes_a_write_to_a_scope_without_a_workspace_is_refused_and_writes_nothing() {
    let s = Scopes::without_user();
    let before = world::snapshot(s.dir.path());
    // Named outright: an error that says how to make it, and nothing anywhere.
    let r = s.inside(&["store", "user:editor", "helix", "--scope", "user"]);
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.is_empty(), "{}", r.stdout);
    assert!(
        r.stderr.contains("user scope has no workspace"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("mem7 init "), "{}", r.stderr);
    assert_eq!(
        world::snapshot(s.dir.path()),
        before,
        "something was written"
    );
    assert!(!s.user_ws().exists());
    // A read of that scope alone says the same.
    let r = s.inside(&["recall", "user:editor", "--scope", "user"]);
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("mem7 init "), "{}", r.stderr);
    // Outside a project there is no project scope to name.
    let r = s.outside(&["store", "deploy:target", "Render", "--scope", "project"]);
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("no project scope here"), "{}", r.stderr);
    assert_eq!(
        world::snapshot(s.dir.path()),
        before,
        "something was written"
    );

    // By class alone, a user:* key without a user workspace stays in the project,
    // as it did before scopes, and one workspace says no scope.
    let r = s.inside_ok(&["store", "user:editor", "helix"]);
    assert!(!r.stdout.contains("Scope:"), "{}", r.stdout);
    assert!(s.memory(&s.project()).contains("> helix"));
    assert!(!s.user_ws().exists());
}

#[test]
fn scopes_local_keys_stay_in_this_checkout() {
    let s = Scopes::stocked();
    assert!(!s.local_ws().exists(), "made on its first write");
    let r = s.inside_ok(&["store", "local:branch", "add-nvmrc is half done"]);
    assert!(r.stdout.contains("  Scope: local\n"), "{}", r.stdout);
    assert!(s.memory(&s.local_ws()).contains("> add-nvmrc is half done"));
    assert!(!s.memory(&s.project()).contains("add-nvmrc"));
    assert!(!s.memory(&s.user_ws()).contains("add-nvmrc"));
    // Inside the project's index folder, which the project's .gitignore keeps out of git.
    let ignore = std::fs::read_to_string(s.project().join(".gitignore")).unwrap();
    assert!(ignore.lines().any(|l| l.trim() == ".mem7/"), "{ignore}");

    // The narrowest scope: it answers over the project's and the user's.
    s.inside_ok(&["store", "user:editor", "nano", "--scope", "local"]);
    let r = s.inside_ok(&["recall", "user:editor", "--json"]);
    assert_eq!(
        scoped(&r),
        [
            sv("nano", "local", false),
            sv("vim", "project", true),
            sv("helix", "user", true),
        ]
    );
    let r = s.inside_ok(&["recall", "local:branch", "--scope", "local", "--json"]);
    assert_eq!(scoped(&r), [sv("add-nvmrc is half done", "local", false)]);
    let block = s.inside_ok(&["context"]).stdout;
    assert!(block.contains("= nano · valid"), "{block}");
    assert!(block.contains(" → ∞ · local\n"), "{block}");
    assert!(
        !block.contains("vim") && !block.contains("helix"),
        "{block}"
    );

    // Outside the project, neither the project's nor its checkout's facts exist; the
    // local scope there is this machine's, inside the user's workspace (never synced).
    let r = s.outside(&["recall", "local:branch"]);
    assert_eq!(r.code, 4, "{}{}", r.stdout, r.stderr);
    let r = s.outside(&["store", "local:x", "y", "--scope", "local", "--json"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert_eq!(r.json()["scope"], "local", "{}", r.stdout);
    assert!(s.memory(&s.user_ws().join(".mem7/local")).contains("> y"));
    assert!(!s.memory(&s.user_ws()).contains("> y"));
}

#[test]
fn scopes_outside_a_project_only_the_user_scope_answers() {
    let s = Scopes::stocked();
    let r = s.outside_ok(&["list", "--json"]);
    assert_eq!(scoped(&r), [sv("helix", "user", false)]);
    // One scope open: the text says none.
    let r = s.outside_ok(&["recall", "user:editor"]);
    assert!(r.stdout.contains("user:editor = helix"), "{}", r.stdout);
    assert!(!r.stdout.contains("Scope:"), "{}", r.stdout);
    let r = s.outside(&["recall", "deploy:target"]);
    assert_eq!(r.code, 4, "{}{}", r.stdout, r.stderr);
    // Any key written out here goes to the user's workspace.
    let r = s.outside_ok(&["store", "deploy:target", "Fly", "--json"]);
    assert_eq!(r.json()["scope"], "user", "{}", r.stdout);
    assert!(s.memory(&s.user_ws()).contains("> Fly"));
    // Inside, the project's value answers and the user's is shadowed.
    let r = s.inside_ok(&["recall", "deploy:target", "--json"]);
    assert_eq!(
        scoped(&r),
        [sv("Render", "project", false), sv("Fly", "user", true)]
    );
    let block = s.outside_ok(&["context"]).stdout;
    assert!(!block.contains(" · user\n"), "{block}");
    assert!(block.contains("= Fly · valid"), "{block}");
}

#[test]
fn scopes_export_holds_every_scope_or_the_one_named() {
    let s = Scopes::stocked();
    let r = s.inside_ok(&["export"]);
    let lines: Vec<(String, String, bool)> = r
        .stdout
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            (
                v["value"].as_str().unwrap().to_string(),
                v["scope"].as_str().unwrap().to_string(),
                v["shadowed"] == true,
            )
        })
        .collect();
    assert_eq!(
        lines,
        [
            sv("Render", "project", false),
            sv("vim", "project", false),
            sv("helix", "user", true),
        ]
    );
    let r = s.inside_ok(&["export", "--scope", "user"]);
    assert_eq!(r.stdout.lines().count(), 1, "{}", r.stdout);
    assert!(r.stdout.contains("\"helix\"") && r.stdout.contains("\"scope\":\"user\""));
    // --history is one workspace's entries: the project's, unless --scope names another.
    let r = s.inside_ok(&["export", "--history"]);
    assert!(
        r.stdout.contains("Render") && !r.stdout.contains("helix"),
        "{}",
        r.stdout
    );
    let r = s.inside_ok(&["export", "--history", "--scope", "user"]);
    assert!(
        r.stdout.contains("helix") && !r.stdout.contains("Render"),
        "{}",
        r.stdout
    );
}

#[test]
fn scopes_one_workspace_says_no_scope_in_its_text() {
    let s = Sandbox::new();
    let r = s.ok(&["store", "user:editor", "helix"], Some(NOW));
    assert!(!r.stdout.contains("Scope:"), "{}", r.stdout);
    for args in [
        &["recall", "user:editor"][..],
        &["list"],
        &["history", "user:editor"],
        &["search", "helix", "--mode", "lexical"],
        &["context"],
    ] {
        let mut cmd = s.command(args, Some(NOW));
        cmd.env("MEM7_EMBED_PROVIDER", "none");
        let r = world::finish(cmd.output().unwrap());
        assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
        assert!(r.stdout.contains("helix"), "{args:?}: {}", r.stdout);
        for mark in ["Scope:", "[project]", "[user]", " · project", " · user"] {
            assert!(!r.stdout.contains(mark), "{args:?}: {}", r.stdout);
        }
    }
}

#[test]
fn scopes_each_scope_reads_at_what_it_believes_now_even_ahead_of_this_clock() {
    // The user's workspace holds a fact recorded by a machine whose clock ran ahead;
    // the project's last entry is older. A read without --as-of means "what mem7
    // believes now" in each scope, so the user's fact answers in every stacked read, as
    // it does in the user scope alone.
    let s = Scopes::new();
    s.inside_ok(&["store", "deploy:target", "Render"]);
    let fast = "2026-05-01T13:00:00Z";
    let r = s.run_when(
        &s.project().join("src"),
        fast,
        &[
            "store",
            "user:shell",
            "fish shell",
            "--valid-from",
            "2026-01-01",
        ],
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(
        SCOPE_NOW < fast,
        "the test needs the fast clock ahead of {SCOPE_NOW}"
    );

    let r = s.inside_ok(&["recall", "user:shell", "--json"]);
    assert_eq!(scoped(&r), [sv("fish shell", "user", false)]);
    let r = s.inside_ok(&["search", "fish", "--json"]);
    let hits = r.json();
    let found: Vec<&str> = hits
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["value"].as_str().unwrap())
        .collect();
    assert_eq!(found, ["fish shell"], "{}", r.stdout);
    let r = s.inside_ok(&["context", "which shell"]);
    assert!(r.stdout.contains("fish shell"), "{}", r.stdout);
}
