//! Names that don't drift: near keys, look-alike slots, `rekey`.

use super::*;

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
