//! Keys of many values, `forget --entry`, and the rules that open the context block.

use super::*;

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
