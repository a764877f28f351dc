//! The markdown is the memory: an index deleted or corrupt, entries appended by hand or by
//! git, files that are not memory, conflicts, torn tails, internal failures (exit 3), and
//! concurrent writers.

use super::*;

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
