//! Tiers: a person asserts, a model infers; tier filters on every read.

use super::*;

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
