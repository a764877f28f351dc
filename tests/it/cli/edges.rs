//! Odd bytes and sizes, refused exports, imports that cannot finish, retries.

use super::*;

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
