//! Merges either way answer alike: equal instants, entries recorded ahead, notes written
//! by hand, keys of many values.

use super::*;

/// Two clones store the same key at the same instant; clone A merges B and clone B
/// merges A with plain git (the files come out in opposite orders), and then, through
/// sync, they converge: every one of those answers is the same, decided by the entries'
/// content and not by their place in the files.
#[test]
fn equal_instants_merged_either_way_answer_alike() {
    let w = World::new();
    let (a, b) = w.pair("");
    // On the day of the seed entry, so both sides change one existing file.
    let t = "2026-03-01T09:00:00Z";
    a.store("k", "from-a", t);
    b.store("k", "from-b", t);
    for c in [&a, &b] {
        c.ok(&["setup-git"], None);
        c.git(&["add", "-A", "."]);
        c.git(&["commit", "-q", "-m", "a write"]);
    }
    let branch = a
        .git(&["rev-parse", "--abbrev-ref", "HEAD"])
        .trim()
        .to_string();
    let a_repo = a.repo.display().to_string();
    let b_repo = b.repo.display().to_string();
    // Each fetches the other's write before either merges: two independent merges.
    a.git(&["fetch", "-q", &b_repo, &branch]);
    b.git(&["fetch", "-q", &a_repo, &branch]);
    a.git(&["merge", "-q", "--no-edit", "FETCH_HEAD"]);
    b.git(&["merge", "-q", "--no-edit", "FETCH_HEAD"]);
    let file_a = std::fs::read_to_string(a.memory_file("2026-03-01")).unwrap();
    let file_b = std::fs::read_to_string(b.memory_file("2026-03-01")).unwrap();
    assert_ne!(
        file_a, file_b,
        "the merges put the entries in opposite orders"
    );
    let at = Some("2026-03-01T09:00:00Z");
    let value = |c: &Clone| c.ok(&["recall", "k", "--json"], at).strings("value");
    assert_eq!(value(&a), value(&b));
    let semantic = |c: &Clone| -> Vec<String> {
        c.ok(&["history", "k", "--json"], at)
            .json()
            .as_array()
            .unwrap()
            .iter()
            .map(|v| {
                format!(
                    "{} {} {} {} {} {}",
                    v["value"], v["valid_from"], v["valid_to"], v["tx_from"], v["tx_to"], v["hash"]
                )
            })
            .collect()
    };
    assert_eq!(semantic(&a), semantic(&b));
    // Sync settles the two merges into one history, with the same answer.
    for round in 0..2 {
        let now = format!("2026-03-07T0{round}:00:00Z");
        a.sync(&now);
        b.sync(&now);
    }
    assert_eq!(value(&a), value(&b));
    assert_eq!(a.answers(&["k"]), b.answers(&["k"]));
    a.assert_settled();
    b.assert_settled();
}

/// A clone whose clock runs ahead pushes an entry; the other pulls it and writes on its
/// own clock: the write is what its next default read answers, on both clones, and the
/// pulled entry keeps its period.
#[test]
fn a_write_after_a_pulled_entry_recorded_ahead_is_seen_everywhere() {
    let w = World::new();
    let (a, b) = w.pair("");
    a.store("k", "future", "2026-12-05T00:00:00Z");
    a.sync("2026-12-05T00:00:01Z");
    b.sync("2026-12-01T09:00:00Z");
    b.store("k", "now-value", "2026-12-01T09:00:00Z");
    let now = Some("2026-12-01T09:00:00Z");
    assert_eq!(
        b.ok(&["recall", "k", "--json"], now).strings("value"),
        ["now-value"]
    );
    b.sync("2026-12-01T09:00:01Z");
    a.sync("2026-12-05T00:00:02Z");
    assert_eq!(
        a.ok(&["recall", "k", "--json"], now).strings("value"),
        ["now-value"]
    );
    let later = Some("2026-12-06T00:00:00Z");
    assert_eq!(
        a.ok(&["recall", "k", "--json"], later).strings("value"),
        ["future"]
    );
    assert_eq!(
        b.ok(&["recall", "k", "--json"], later).strings("value"),
        ["future"]
    );
}

#[test]
fn a_note_written_by_hand_on_one_clone_survives_the_merge_on_both() {
    for a_first in [true, false] {
        let w = World::new();
        let (a, b) = w.pair("");
        a.store("a:fact", "written on a", "2026-03-05T09:00:00Z");
        b.store("b:fact", "written on b", "2026-03-05T10:00:00Z");
        // A person adds a note between a's entries and seals it on purpose.
        let day = a.memory_file("2026-03-05");
        let note = "Note by hand: the deploy target moves in April; ask Ada first.\n";
        let mut text = std::fs::read_to_string(&day).unwrap();
        text.push_str(note);
        text.push('\n');
        std::fs::write(&day, &text).unwrap();
        a.ok(&["seal", "--agent", "alice"], Some("2026-03-05T09:30:00Z"));
        a.store("a:later", "after the note", "2026-03-05T11:00:00Z");
        let (x, y) = if a_first { (&a, &b) } else { (&b, &a) };
        for round in 0..2 {
            let now = format!("2026-03-07T0{round}:00:00Z");
            x.sync(&now);
            y.sync(&now);
        }
        for c in [&a, &b] {
            let merged = std::fs::read_to_string(c.memory_file("2026-03-05")).unwrap();
            assert_eq!(
                merged.matches(note).count(),
                1,
                "{} (a first: {a_first}):\n{merged}",
                c.name
            );
            c.assert_settled();
        }
        let keys = ["a:fact", "b:fact", "a:later"];
        assert_eq!(a.answers(&keys), b.answers(&keys));
    }
}

/// Keys of many values across machines: two clones each add an event, one of them with
/// an inferred tier, at the same instant, and merge each other's write independently (so
/// their files hold the entries in opposite orders). Both answer with both values, in the
/// same order, with the same tiers; a retry of one side's add after the sync writes
/// nothing, and a forget of one value on one clone reaches the other.
#[test]
fn added_values_from_two_machines_merged_either_way_answer_alike() {
    let w = World::new();
    let (a, b) = w.pair("");
    let t = "2026-03-01T09:00:00Z";
    a.ok(
        &[
            "store",
            "event:deploy",
            "v2.3 from a",
            "--valid-from",
            "2026-03-01",
        ],
        Some(t),
    );
    b.ok(
        &[
            "store",
            "event:deploy",
            "v2.4 from b",
            "--valid-from",
            "2026-03-01",
            "--tier",
            "inferred",
        ],
        Some(t),
    );
    for c in [&a, &b] {
        c.ok(&["setup-git"], None);
        c.git(&["add", "-A", "."]);
        c.git(&["commit", "-q", "-m", "an event"]);
    }
    let branch = a
        .git(&["rev-parse", "--abbrev-ref", "HEAD"])
        .trim()
        .to_string();
    let (a_repo, b_repo) = (a.repo.display().to_string(), b.repo.display().to_string());
    a.git(&["fetch", "-q", &b_repo, &branch]);
    b.git(&["fetch", "-q", &a_repo, &branch]);
    a.git(&["merge", "-q", "--no-edit", "FETCH_HEAD"]);
    b.git(&["merge", "-q", "--no-edit", "FETCH_HEAD"]);
    let at = Some("2026-03-02T00:00:00Z");
    let values = |c: &Clone| -> Vec<String> {
        c.ok(&["recall", "event:deploy", "--json"], at)
            .json()
            .as_array()
            .unwrap()
            .iter()
            .map(|v| format!("{} {}", v["value"], v["tier"]))
            .collect()
    };
    let got = values(&a);
    assert_eq!(got.len(), 2, "{got:?}");
    assert!(
        got.iter()
            .any(|v| v.contains("v2.4 from b") && v.contains("inferred"))
    );
    assert_eq!(got, values(&b), "merged either way, the same answer");
    for round in 0..2 {
        let now = format!("2026-03-07T0{round}:00:00Z");
        a.sync(&now);
        b.sync(&now);
    }
    assert_eq!(values(&a), values(&b));
    // A retry of a's add, now on both machines, writes nothing.
    let r = a.ok(
        &[
            "store",
            "event:deploy",
            "v2.3 from a",
            "--valid-from",
            "2026-03-01",
            "--json",
        ],
        Some("2026-03-08T00:00:00Z"),
    );
    assert_eq!(r.json()["status"], "unchanged", "{}", r.stdout);
    // Forget b's value on a; b sees one value after the next sync.
    let hash = a
        .ok(&["recall", "event:deploy", "--json"], at)
        .json()
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["value"] == "v2.4 from b")
        .map(|v| v["hash"].as_str().unwrap().to_string())
        .unwrap();
    a.ok(
        &["forget", "event:deploy", "--entry", &hash[..10]],
        Some("2026-03-08T01:00:00Z"),
    );
    for round in 2..4 {
        let now = format!("2026-03-08T0{round}:00:00Z");
        a.sync(&now);
        b.sync(&now);
    }
    let now = Some("2026-03-09T00:00:00Z");
    for c in [&a, &b] {
        let left = c
            .ok(&["recall", "event:deploy", "--json"], now)
            .strings("value");
        assert_eq!(left, ["v2.3 from a"]);
    }
    a.assert_settled();
    b.assert_settled();
}
