//! `import` against successive stores, bad lines and torn envelopes, and rebuilds of
//! hand-written markdown.

use super::*;

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
