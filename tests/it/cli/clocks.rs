//! Clocks that disagree (docs/temporal.md "Clocks that disagree").

use super::*;

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
