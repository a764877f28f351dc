//! The worked example, the read commands' answers, and what a store, a late write, a window
//! and a forget keep.

use super::*;

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
