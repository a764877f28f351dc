//! Memory in and out through the real binary: `export --history` round-trips through
//! `import` (a property over random histories), the snapshot equals `list --json`, CSV
//! quoting, and `import-notes` on Claude Code's memory layout and a notes folder.

use crate::world::{Sandbox, copy_dir, fixture, worked_example};
use proptest::prelude::*;
use serde_json::{Value, json};

const DAY: i64 = 86_400;

/// `2026-01-01` plus `d` days (may be negative), RFC 3339.
fn day(d: i64) -> String {
    let base = 1_767_225_600; // 2026-01-01T00:00:00Z
    let t = base + d * DAY;
    let (days, secs) = (t.div_euclid(DAY), t.rem_euclid(DAY));
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let dd = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if m <= 2 { y + 1 } else { y };
    format!(
        "{y:04}-{m:02}-{dd:02}T{:02}:{:02}:{:02}Z",
        secs / 3600,
        secs % 3600 / 60,
        secs % 60
    )
}

/// Versions without where they came from (the new workspace's files, lines and hashes
/// differ by construction: other `prev` links).
fn answers(v: Value) -> Vec<Value> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|o| {
            let mut o = o.clone();
            let m = o.as_object_mut().unwrap();
            m.remove("file");
            m.remove("line");
            m.remove("hash");
            o
        })
        .collect()
}

#[derive(Clone, Debug)]
enum Rec {
    Store {
        key: usize,
        value: &'static str,
        /// Offset of valid_from from `recorded` in days (negative: a late arrival).
        from: Option<i64>,
        /// `None`: open-ended; `Some(None)`: infinity; `Some(Some(n))`: n days after from.
        end: Option<Option<i64>>,
        tagged: bool,
    },
    Forget {
        key: usize,
    },
    /// `forget_entity` of `ent` (the key `ent:k3`).
    ForgetEntity,
    /// `forget_tagged` of `t1`.
    ForgetTagged,
}

const KEYS: [&str; 3] = ["k1", "k2", "ent:k3"];

fn rec() -> impl Strategy<Value = (Rec, i64)> {
    let store = (
        0..KEYS.len(),
        prop::sample::select(vec!["a", "b", "c, \"d\"\ne"]),
        prop::option::of(-20i64..5),
        prop::option::weighted(0.5, prop::option::of(1i64..15)),
        any::<bool>(),
    )
        .prop_map(|(key, value, from, end, tagged)| Rec::Store {
            key,
            value,
            from,
            end,
            tagged,
        });
    (
        prop_oneof![
            12 => store,
            2 => (0..KEYS.len()).prop_map(|key| Rec::Forget { key }),
            1 => Just(Rec::ForgetEntity),
            1 => Just(Rec::ForgetTagged),
        ],
        // Days after the previous record; 0 records at the same instant.
        prop_oneof![1 => Just(0i64), 4 => 1i64..4],
    )
}

/// The records as JSON Lines: stores as plain `import` records (the rules of `store`),
/// forgets as `op` records; `recorded` grows, sometimes not at all (same instant).
fn jsonl(recs: &[(Rec, i64)]) -> String {
    let mut t = 0;
    let mut out = String::new();
    // Keys written at the current instant: a forget of one of them at that instant could
    // not keep its order on import (see docs/cli.md), so it moves to the next day.
    let mut touched: Vec<usize> = Vec::new();
    for (r, step) in recs {
        // (A forget of an entity or of tags commutes with nothing.)
        let mut step = *step;
        let conflicts = match r {
            Rec::Store { .. } => false,
            Rec::Forget { key } => touched.contains(key) || touched.contains(&usize::MAX),
            Rec::ForgetEntity | Rec::ForgetTagged => !touched.is_empty(),
        };
        if step == 0 && conflicts {
            step = 1;
        }
        if step > 0 {
            touched.clear();
        }
        touched.push(match r {
            Rec::Store { key, .. } | Rec::Forget { key } => *key,
            Rec::ForgetEntity | Rec::ForgetTagged => usize::MAX,
        });
        t += step;
        let line = match r {
            Rec::Store {
                key,
                value,
                from,
                end,
                tagged,
            } => {
                let mut o = json!({"key": KEYS[*key], "value": value, "recorded": day(t)});
                let start = t + from.unwrap_or(0);
                if let Some(f) = from {
                    o["valid_from"] = json!(day(t + f));
                }
                match end {
                    None => {}
                    Some(None) => o["valid_to"] = json!("infinity"),
                    Some(Some(n)) => o["valid_to"] = json!(day(start + n)),
                }
                if *tagged {
                    o["tags"] = json!(["t1", "t2"]);
                    o["agent"] = json!("someone else");
                }
                o
            }
            Rec::Forget { key } => json!({"op": "forget", "key": KEYS[*key], "recorded": day(t)}),
            Rec::ForgetEntity => {
                json!({"op": "forget_entity", "entity": "ent", "recorded": day(t)})
            }
            Rec::ForgetTagged => json!({"op": "forget_tagged", "tags": ["t1"], "recorded": day(t)}),
        };
        out.push_str(&line.to_string());
        out.push('\n');
    }
    out
}

fn histories(s: &Sandbox, now: &str) -> Vec<Vec<Value>> {
    KEYS.iter()
        .map(|k| answers(s.ok(&["history", k, "--json"], Some(now)).json()))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    /// Export every entry, import into an empty workspace: the same history for every
    /// key (all four clocks, tags, agent), the same list at a grid of clocks, and the new
    /// workspace verifies.
    #[test]
    fn export_history_round_trips_through_import(
        recs in prop::collection::vec(rec(), 1..14),
        probes in prop::collection::vec((-25i64..50, -1i64..50), 4),
    ) {
        let now = "2027-01-01T00:00:00Z";
        let a = Sandbox::new();
        let r = a.run_stdin(&["import", "-"], Some(now), &jsonl(&recs));
        prop_assert_eq!(r.code, 0, "source import: {}", r.stderr);
        let exported = a.ok(&["export", "--history"], Some(now)).stdout;
        let b = Sandbox::new();
        let r = b.run_stdin(&["import", "-"], Some(now), &exported);
        prop_assert_eq!(r.code, 0, "import of the export: {}\n{}", r.stderr, exported);
        prop_assert_eq!(histories(&a, now), histories(&b, now), "exported:\n{}", exported);
        for (v, t) in &probes {
            let (valid_at, as_of) = (day(*v), day(*t));
            let args = ["list", "--json", "--valid-at", &valid_at, "--as-of", &as_of];
            prop_assert_eq!(
                answers(a.ok(&args, Some(now)).json()),
                answers(b.ok(&args, Some(now)).json())
            );
        }
        // Default clocks too.
        prop_assert_eq!(
            answers(a.ok(&["list", "--json"], Some(now)).json()),
            answers(b.ok(&["list", "--json"], Some(now)).json())
        );
        let v = b.run(&["verify"], Some(now));
        prop_assert_eq!(v.code, 0, "verify: {}{}", v.stdout, v.stderr);
        // Exporting the copy gives the same entries again (entries of one instant that
        // commute may come in another order: the fold orders them by their new hashes;
        // a store's `hash` is its entry's name in its own chain, so it is left out).
        let sorted = |text: &str| {
            let mut lines: Vec<String> = text
                .lines()
                .map(|l| {
                    let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
                    if let Some(map) = v.as_object_mut() {
                        map.remove("hash");
                    }
                    v.to_string()
                })
                .collect();
            lines.sort();
            lines
        };
        prop_assert_eq!(
            sorted(&b.ok(&["export", "--history"], Some(now)).stdout),
            sorted(&exported)
        );
        // Read back into its own workspace, the export changes no byte and says so.
        let before = a.snapshot();
        let r = a.run_stdin(&["import", "-"], Some(now), &exported);
        prop_assert_eq!(r.code, 0, "import into its own workspace: {}", r.stderr);
        let n = exported.lines().count();
        prop_assert!(
            r.stdout.contains(&format!("; skipped {n} record")),
            "{}", r.stdout
        );
        prop_assert!(a.snapshot() == before, "the memory files changed");
    }
}

/// The worked example, then a note with a comma, quotes and a line break, and a key
/// stored and forgotten.
fn worked_example_and_more() -> Sandbox {
    let s = worked_example(&["infra"]);
    s.ok(
        &["store", "note:q", "a, \"quoted\"\nsecond line"],
        Some("2026-04-13T00:00:00Z"),
    );
    s.ok(&["store", "gone", "soon"], Some("2026-04-13T01:00:00Z"));
    s.ok(&["forget", "gone"], Some("2026-04-14T00:00:00Z"));
    s
}

#[test]
fn the_snapshot_equals_list_json_at_the_same_clocks() {
    let s = worked_example_and_more();
    let now = Some("2026-04-20T00:00:00Z");
    for clocks in [
        vec![],
        vec!["--valid-at", "2026-04-10", "--as-of", "2026-04-11"],
        vec!["--valid-at", "2026-03-01"],
        vec!["--as-of", "2026-04-13T12:00:00Z"],
        vec!["--valid-at", "2026-02-01"],
    ] {
        let mut list = vec!["list", "--json"];
        list.extend(&clocks);
        let mut export = vec!["export"];
        export.extend(&clocks);
        let listed = s.ok(&list, now).json();
        let lines: Vec<Value> = s
            .ok(&export, now)
            .stdout
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(Value::Array(lines), listed, "clocks {clocks:?}");
    }
}

#[test]
fn export_to_a_file_is_what_stdout_gets() {
    let s = worked_example_and_more();
    let now = Some("2026-04-20T00:00:00Z");
    let file = s.dir.path().join("out.jsonl");
    for args in [vec!["export"], vec!["export", "--history"]] {
        let stdout = s.ok(&args, now).stdout;
        let mut to_file = args.clone();
        to_file.extend(["-o", file.to_str().unwrap()]);
        let r = s.ok(&to_file, now);
        assert_eq!(r.stdout, "");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), stdout);
    }
    // Only the output file was added next to it (the temporary file was renamed).
    let names: Vec<String> = std::fs::read_dir(s.dir.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("out") || n.starts_with(".tmp"))
        .collect();
    assert_eq!(names, ["out.jsonl"]);
}

/// A small RFC 4180 reader: rows of fields.
fn read_csv(text: &str) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    let mut row = Vec::new();
    let mut field = String::new();
    let mut chars = text.chars().peekable();
    let mut quoted = false;
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            (true, '"') => quoted = false,
            (true, c) => field.push(c),
            (false, '"') if field.is_empty() => quoted = true,
            (false, ',') => row.push(std::mem::take(&mut field)),
            (false, '\r') if chars.peek() == Some(&'\n') => {
                chars.next();
                row.push(std::mem::take(&mut field));
                rows.push(std::mem::take(&mut row));
            }
            (false, c) => field.push(c),
        }
    }
    assert!(field.is_empty() && row.is_empty(), "the CSV ends with CRLF");
    rows
}

#[test]
fn csv_has_a_header_and_quotes_commas_quotes_and_newlines() {
    let s = worked_example_and_more();
    let now = Some("2026-04-20T00:00:00Z");
    let text = s.ok(&["export", "--format", "csv"], now).stdout;
    assert!(
        text.starts_with(
            "key,value,valid_from,valid_to,tx_from,tx_to,tags,agent,file,line,hash\r\n"
        )
    );
    assert!(
        text.contains(",\"a, \"\"quoted\"\"\nsecond line\","),
        "quoted: {text}"
    );
    let rows = read_csv(&text);
    let listed = s.ok(&["list", "--json"], now).json();
    let listed = listed.as_array().unwrap();
    assert_eq!(rows.len(), listed.len() + 1);
    for (row, v) in rows[1..].iter().zip(listed) {
        for (i, name) in rows[0].iter().enumerate() {
            let want = match &v[name.as_str()] {
                Value::Null => String::new(),
                Value::String(s) => s.clone(),
                Value::Number(n) => n.to_string(),
                Value::Array(tags) => tags
                    .iter()
                    .map(|t| t.as_str().unwrap())
                    .collect::<Vec<_>>()
                    .join(";"),
                other => panic!("unexpected {other}"),
            };
            assert_eq!(row[i], want, "{name}");
        }
    }
    // The history as CSV: a header and one row per entry (a forget has no value).
    let text = s
        .ok(&["export", "--history", "--format", "csv"], now)
        .stdout;
    let rows = read_csv(&text);
    assert_eq!(
        rows[0],
        [
            "op",
            "key",
            "entity",
            "value",
            "valid_from",
            "valid_to",
            "tags",
            "agent",
            "recorded"
        ]
    );
    assert_eq!(rows.len(), 1 + 6);
    assert_eq!(rows[6][..4], ["forget", "gone", "", ""]);
    assert_eq!(rows[4][3], "a, \"quoted\"\nsecond line");
}

#[test]
fn exported_ops_are_checked_like_any_import_line() {
    let s = Sandbox::new();
    let before = s.snapshot();
    for (line, problem) in [
        (r#"{"op": "forget"}"#, "line 1: op `forget` needs `key`"),
        (
            r#"{"op": "forget", "key": "k", "value": "v"}"#,
            "line 1: `value` has no meaning for op `forget`",
        ),
        (
            r#"{"op": "rename", "key": "k"}"#,
            "line 1: unknown op `rename`",
        ),
        (
            r#"{"op": "forget_tagged", "tags": ["a b"]}"#,
            "line 1: the tag",
        ),
    ] {
        let r = s.run_stdin(&["import", "-"], None, line);
        assert_eq!(r.code, 2, "{line}: {}", r.stderr);
        assert!(r.stderr.contains(problem), "{line}: {}", r.stderr);
    }
    assert_eq!(s.snapshot(), before);
}

// ---------------------------------------------------------------------------------------
// import-notes

const NOW: Option<&str> = Some("2026-05-01T00:00:00Z");

#[test]
fn claude_code_memory_dry_run_then_write_then_nothing() {
    let s = Sandbox::new();
    let dir = fixture("claude-memory/-home-me-src-shop/memory");
    let dir = dir.to_str().unwrap();
    let before = s.snapshot();
    let dry = s.ok(&["import-notes", dir], NOW);
    assert_eq!(s.snapshot(), before, "a dry run writes nothing");
    assert!(
        dry.stdout.contains(
            "would store claude:home-me-src-shop:index:user_role = [User role](user_role.md) — senior Rust engineer, prefers s… (valid from now; "
        ),
        "{}",
        dry.stdout
    );
    assert!(
        dry.stdout.contains("/memory/MEMORY.md:3)\n"),
        "{}",
        dry.stdout
    );
    assert!(
        dry.stdout.contains("/memory/user_role.md:7)\n"),
        "{}",
        dry.stdout
    );
    assert!(
        dry.stdout
            .contains("dry run: 5 to store, 0 unchanged, 0 bad"),
        "{}",
        dry.stdout
    );

    let w = s.ok(&["import-notes", dir, "--write"], NOW);
    assert!(
        w.stdout.contains("imported notes: 5 stored, 0 unchanged"),
        "{}",
        w.stdout
    );
    let topic = s
        .ok(
            &["recall", "claude:home-me-src-shop:user_role", "--json"],
            NOW,
        )
        .json();
    assert_eq!(
        topic[0]["value"],
        "The user is a senior Rust engineer.\n\nPrefers small, reviewable PRs."
    );
    assert_eq!(topic[0]["tags"], json!(["claude-memory", "user"]));
    assert_eq!(topic[0]["agent"], "import-notes/user_role.md");
    let index = s.ok(
        &[
            "list",
            "--prefix",
            "claude:home-me-src-shop:index:",
            "--json",
        ],
        NOW,
    );
    assert_eq!(index.strings("key").len(), 3);

    let after = s.snapshot();
    let again = s.ok(
        &["import-notes", dir, "--write"],
        Some("2026-05-02T00:00:00Z"),
    );
    assert!(
        again
            .stdout
            .contains("imported notes: 0 stored, 5 unchanged"),
        "{}",
        again.stdout
    );
    assert_eq!(s.snapshot(), after, "a second import writes nothing");
}

#[test]
fn frontmatter_notes_become_facts_with_their_dates_and_tags() {
    let s = Sandbox::new();
    let dir = fixture("notes");
    let dir = dir.to_str().unwrap();
    let before = s.snapshot();
    let dry = s.ok(&["import-notes", dir], NOW);
    assert_eq!(s.snapshot(), before);
    assert!(dry.stdout.contains("dry run: 4 to store"), "{}", dry.stdout);
    s.ok(&["import-notes", dir, "--write"], NOW);
    let deploy = s
        .ok(
            &[
                "recall",
                "notes:deploy-runbook:where-it-runs",
                "--valid-at",
                "2026-03-02",
                "--json",
            ],
            NOW,
        )
        .json();
    assert_eq!(deploy[0]["value"], "fly.io, region ams.");
    assert_eq!(deploy[0]["valid_from"], "2026-03-01T00:00:00Z");
    assert_eq!(deploy[0]["tags"], json!(["infra", "deploy"]));
    assert_eq!(deploy[0]["agent"], "import-notes/deploy.md");
    let keys = s
        .ok(&["list", "--prefix", "notes:", "--json"], NOW)
        .strings("key");
    assert_eq!(
        keys,
        [
            "notes:deploy-runbook",
            "notes:deploy-runbook:rollback",
            "notes:deploy-runbook:where-it-runs",
            "notes:plain"
        ]
    );
    // Explicit valid_from defeats mem7's own confirmation; import-notes skips what holds.
    let after = s.snapshot();
    let again = s.ok(
        &["import-notes", dir, "--write"],
        Some("2026-05-03T00:00:00Z"),
    );
    assert!(
        again.stdout.contains("0 stored, 4 unchanged"),
        "{}",
        again.stdout
    );
    assert_eq!(s.snapshot(), after);
}

#[test]
fn bad_notes_are_named_and_stop_the_batch_unless_skipped() {
    let s = Sandbox::new();
    let dir = s.copy_fixture("notes");
    std::fs::write(dir.join("latin1.md"), b"---\ntitle: x\n---\n\ncaf\xe9\n").unwrap();
    std::fs::write(
        dir.join("broken.md"),
        "---\ntitle: [unclosed\ntags: a\n---\n\nbody\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("token.md"),
        "---\ntitle: ci\n---\n\nintro\n\n## Token\n\nghp_abcdefghijklmnopqrstuvwxyz0123456789\n",
    )
    .unwrap();
    let d = dir.to_str().unwrap();
    let before = s.snapshot();
    for args in [vec!["import-notes", d], vec!["import-notes", d, "--write"]] {
        let r = s.run(&args, NOW);
        assert_eq!(r.code, 2, "{}", r.stderr);
        assert!(
            r.stderr.contains("latin1.md:5: the note is not UTF-8 text"),
            "{}",
            r.stderr
        );
        assert!(
            r.stderr
                .contains("broken.md:3: the frontmatter is not valid YAML"),
            "{}",
            r.stderr
        );
        assert!(
            r.stderr.contains("token.md:9: looks like a credential"),
            "{}",
            r.stderr
        );
        assert!(
            r.stderr.contains("3 bad notes; nothing was written"),
            "{}",
            r.stderr
        );
        assert_eq!(s.snapshot(), before);
    }
    let r = s.run(&["import-notes", d, "--write", "--skip-bad"], NOW);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("mem7: skipped "), "{}", r.stderr);
    assert!(r.stderr.contains("token.md:9"), "{}", r.stderr);
    assert!(
        r.stdout.contains("5 stored, 0 unchanged, 3 bad skipped"),
        "{}",
        r.stdout
    );
    // The token's note keeps its harmless intro; the token itself went nowhere.
    s.ok(&["recall", "notes:ci"], NOW);
    let text: String = s
        .snapshot()
        .iter()
        .map(|(_, b)| String::from_utf8_lossy(b).into_owned())
        .collect();
    assert!(!text.contains("ghp_"));
}

// ---------------------------------------------------------------------------------------
// Histories mem7 did not write itself

/// The same versions on both clocks. Tiers aside: a Go mem7 entry names none, and an
/// import records a record without one as `inferred` (an import is not the person's
/// word; docs/integrity.md, "Who may make a rule").
fn same_answers(a: &Sandbox, b: &Sandbox, keys: &[String], now: Option<&str>) {
    let untiered = |v: Value| -> Vec<Value> {
        answers(v)
            .into_iter()
            .map(|mut o| {
                o.as_object_mut().unwrap().remove("tier");
                o
            })
            .collect()
    };
    for k in keys {
        assert_eq!(
            untiered(a.ok(&["history", k, "--json"], now).json()),
            untiered(b.ok(&["history", k, "--json"], now).json()),
            "history of {k}"
        );
    }
    for (valid_at, as_of) in [
        ("2025-01-10T09:30:00Z", "2025-01-10T09:30:00Z"),
        ("2025-01-10T12:00:00Z", "2025-01-11T00:00:00Z"),
        ("2025-01-11T12:00:00Z", "2025-01-12T00:00:00Z"),
        ("2025-01-10T12:00:00Z", "2026-01-01T00:00:00Z"),
    ] {
        let args = ["list", "--json", "--valid-at", valid_at, "--as-of", as_of];
        assert_eq!(
            untiered(a.ok(&args, now).json()),
            untiered(b.ok(&args, now).json()),
            "list at {valid_at} as of {as_of}"
        );
    }
}

/// `export --history` then `import` into the same workspace is a no-op that says so
/// (stores, forgets, a Go mem7 workspace's entity and tag deletes alike); what the
/// workspace does not hold yet is still imported after the records it holds.
#[test]
fn an_export_read_back_into_its_own_workspace_changes_nothing() {
    let now = Some("2026-05-01T00:00:00Z");
    let legacy = Sandbox::bare();
    copy_dir(&fixture("legacy-go/workspace"), &legacy.ws);
    for s in [worked_example_and_more(), legacy] {
        let file = s.dir.path().join("memory.jsonl");
        s.ok(&["export", "--history", "-o", file.to_str().unwrap()], now);
        let n = std::fs::read_to_string(&file).unwrap().lines().count();
        let before = s.snapshot();
        let r = s.ok(&["import", file.to_str().unwrap()], now);
        assert!(
            r.stdout.starts_with(&format!(
                "imported {n} records: 0 stored, 0 unchanged, into 0 files in "
            )),
            "{}",
            r.stdout
        );
        assert!(
            r.stdout.ends_with(&format!(
                "; skipped {n} records the workspace already holds\n"
            )),
            "{}",
            r.stdout
        );
        assert_eq!(s.snapshot(), before, "the memory files changed");
        let v = s.run(&["verify"], now);
        assert_eq!(v.code, 0, "{}{}", v.stdout, v.stderr);
    }

    // The export plus one record recorded later: the held ones are skipped, the new one
    // stored; a record before the last transaction that the workspace does not hold is
    // still refused.
    let s = worked_example_and_more();
    let mut text = s.ok(&["export", "--history"], now).stdout;
    text.push_str(
        "{\"op\":\"store\",\"key\":\"team:lead\",\"value\":\"Ana\",\"agent\":\"tester\",\"recorded\":\"2026-04-20T00:00:00Z\"}\n",
    );
    let r = s.run_stdin(&["import", "-"], now, &text);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains(": 1 stored,"), "{}", r.stdout);
    assert!(
        r.stdout
            .ends_with("; skipped 6 records the workspace already holds\n"),
        "{}",
        r.stdout
    );
    assert!(
        s.ok(&["recall", "team:lead"], now)
            .stdout
            .starts_with("team:lead = Ana\n")
    );
    let changed = text.replace("\"Railway\"", "\"Heroku\"");
    let before = s.snapshot();
    let r = s.run_stdin(&["import", "-"], now, &changed);
    assert_eq!(r.code, 2, "{}", r.stdout);
    assert!(
        r.stderr.contains(
            "line 1: recorded 2026-02-15T00:00:00Z is before the workspace's last transaction"
        ),
        "{}",
        r.stderr
    );
    assert_eq!(s.snapshot(), before);
}

#[test]
fn a_go_mem7_history_with_entity_and_tag_deletes_round_trips() {
    let now = Some("2026-01-01T00:00:00Z");
    let a = Sandbox::bare();
    copy_dir(&fixture("legacy-go/workspace"), &a.ws);
    let exported = a.ok(&["export", "--history"], now).stdout;
    let ops: Vec<Value> = exported
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    for op in ["store", "forget", "forget_entity", "forget_tagged"] {
        assert!(
            ops.iter().any(|o| o["op"] == op),
            "{op} in the export:\n{exported}"
        );
    }
    let mut keys: Vec<String> = ops
        .iter()
        .filter_map(|o| o["key"].as_str().map(str::to_string))
        .collect();
    keys.sort();
    keys.dedup();
    let b = Sandbox::new();
    let r = b.run_stdin(&["import", "-"], now, &exported);
    assert_eq!(r.code, 0, "{}", r.stderr);
    same_answers(&a, &b, &keys, now);
    let v = b.run(&["verify"], now);
    assert_eq!(v.code, 0, "{}{}", v.stdout, v.stderr);
    assert!(v.stdout.contains("0 warnings"), "{}", v.stdout);
}

#[test]
fn an_entry_in_another_days_file_is_exported_in_the_folds_order() {
    let s = Sandbox::new();
    s.ok(&["store", "a", "1"], Some("2026-01-01T00:00:00Z"));
    s.ok(&["store", "b", "2"], Some("2026-01-02T00:00:00Z"));
    // Recorded before everything else but written into the last day's file by hand.
    let later = s.memory_dir().join("2026-01-02.md");
    let mut text = std::fs::read_to_string(&later).unwrap();
    text.push_str(
        "\n## c\n\n```mem7\nrecorded: 2025-12-31T12:00:00Z\nagent: a person\n```\n\n> 3\n\n---\n",
    );
    std::fs::write(&later, text).unwrap();
    let r = s.ok(&["export", "--history"], Some("2026-01-03T00:00:00Z"));
    let keys: Vec<String> = r
        .stdout
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["key"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(keys, ["c", "a", "b"]);
    assert!(r.stderr.contains("sorted in memory"), "{}", r.stderr);
}

// ---------------------------------------------------------------------------------------
// A streaming import is all or nothing.

/// Whether the index directory holds an import's spill directory.
fn spill_left(s: &Sandbox) -> bool {
    std::fs::read_dir(s.ws.join(".mem7"))
        .unwrap()
        .flatten()
        .any(|e| e.file_name().to_string_lossy().starts_with("import-"))
}

/// A bad record at the very end of a big input (found by the check before anything is
/// opened), or found only while planning (a `recorded` before the previous record's in
/// the middle, a time past the last instant mem7 keeps at the end): exit 2 naming the
/// line, the memory files and the index as they were, no spill files left; then the
/// good records import and verify clean.
#[test]
fn a_bad_record_anywhere_in_a_big_import_writes_nothing() {
    let s = Sandbox::new();
    let now = Some("2026-01-15T00:00:00Z");
    s.ok(&["store", "p0:k0", "before"], now);
    let good: Vec<String> = (0..3000)
        .map(|i| {
            format!(
                r#"{{"key":"p{}:k{}","value":"value {i}","recorded":"2026-02-{:02}T{:02}:{:02}:00Z"}}"#,
                (i % 1200) % 7,
                i % 1200,
                1 + i / 1000,
                (i % 1000) / 60,
                (i % 1000) % 60
            )
        })
        .collect();
    let input = |lines: &[String]| {
        let path = s.dir.path().join("in.jsonl");
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        path
    };
    let mut out_of_order = good.clone();
    out_of_order[1500] = good[1498].replace("value 1498", "late");
    let last_instant = r#"{"key":"z","value":"v","recorded":"9999-12-31T23:59:59.999999Z"}"#;
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            [good.clone(), vec![r#"{"key":"z","value":1}"#.into()]].concat(),
            "line 3001:",
        ),
        (
            [
                good.clone(),
                vec![r#"{"key":"bad key!","value":"v"}"#.into()],
            ]
            .concat(),
            "line 3001:",
        ),
        (out_of_order, "line 1501: recorded"),
        (
            // Recorded at the last instant mem7 keeps: more than a century ahead of the
            // clock, so refused before it could end every later write.
            [good.clone(), vec![last_instant.into(), last_instant.into()]].concat(),
            "line 3001: recorded 9999-12-31T23:59:59.999999Z is more than a century ahead",
        ),
    ];
    let before = s.snapshot();
    let list_before = s.ok(&["list", "--json"], now).stdout;
    for (lines, problem) in cases {
        let path = input(&lines);
        let r = s.run(&["import", path.to_str().unwrap()], now);
        assert_eq!(r.code, 2, "{problem}: {}{}", r.stdout, r.stderr);
        assert!(r.stderr.contains(problem), "{problem}: {}", r.stderr);
        assert_eq!(s.snapshot(), before, "{problem}: the memory files changed");
        assert!(!spill_left(&s), "{problem}: spill files were left behind");
        assert_eq!(s.ok(&["list", "--json"], now).stdout, list_before);
        s.ok(&["verify", "--index"], now);
    }
    let path = input(&good);
    let r = s.ok(&["import", path.to_str().unwrap()], now);
    assert!(
        r.stdout
            .starts_with("imported 3000 records: 3000 stored, 0 unchanged, into 3 files"),
        "{}",
        r.stdout
    );
    assert!(!spill_left(&s));
    s.ok(&["verify", "--index"], now);
    let listed = s
        .ok(&["list", "--json", "--valid-at", "2026-03-01"], now)
        .json();
    assert_eq!(listed.as_array().unwrap().len(), 1200);
}

// ---------------------------------------------------------------------------------------
// Trust tiers and keys of many values (issue 23)

/// Adds `trust:\n  agents: asserted` to a workspace's mem7.yaml.
fn let_agents_assert(s: &Sandbox) {
    let yaml = s.ws.join("mem7.yaml");
    let mut text = std::fs::read_to_string(&yaml).unwrap();
    text.push_str("trust:\n  agents: asserted\n");
    std::fs::write(&yaml, text).unwrap();
    s.ok(&["allow"], None);
}

/// The tier of each value of `key` believed now, as `value=tier` (`-` for none).
fn tiers(s: &Sandbox, key: &str, now: Option<&str>) -> Vec<String> {
    s.ok(&["recall", key, "--json"], now)
        .json()
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            format!(
                "{}={}",
                v["value"].as_str().unwrap(),
                v["tier"].as_str().unwrap_or("-")
            )
        })
        .collect()
}

/// A record keeps the tier it names within `trust.agents` (default inferred): plain
/// records and `op` records alike, a note counting the lowered ones; no tier stays
/// unspecified; a bad tier, or a tier on a forget, stops the import.
#[test]
fn an_import_keeps_each_records_tier_within_the_ceiling() {
    let now = Some("2026-05-01T00:00:00Z");
    let records = [
        r#"{"key": "dev:editor", "value": "helix", "tier": "inferred"}"#,
        r#"{"key": "dev:shell", "value": "fish", "tier": "asserted"}"#,
        r#"{"op": "store", "key": "dev:os", "value": "linux", "tier": "asserted"}"#,
        r#"{"key": "team:lead", "value": "Ana"}"#,
    ]
    .join("\n");
    let s = Sandbox::new();
    let r = s.run_stdin(&["import", "-"], now, &records);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("4 stored"), "{}", r.stdout);
    assert!(
        r.stderr.contains(
            "2 records named a tier above what imports may record here: written as `inferred`"
        ),
        "{}",
        r.stderr
    );
    assert_eq!(tiers(&s, "dev:editor", now), ["helix=inferred"]);
    assert_eq!(tiers(&s, "dev:shell", now), ["fish=inferred"]);
    assert_eq!(tiers(&s, "dev:os", now), ["linux=inferred"]);
    // A record that names no tier is not the person's word either.
    assert_eq!(tiers(&s, "team:lead", now), ["Ana=inferred"]);
    assert!(!s.memory_text().contains("tier: asserted"));

    // Where agents may assert, the records' tiers are kept and nothing is said.
    let s = Sandbox::new();
    let_agents_assert(&s);
    let r = s.run_stdin(&["import", "-"], now, &records);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!r.stderr.contains("named a tier"), "{}", r.stderr);
    assert_eq!(tiers(&s, "dev:editor", now), ["helix=inferred"]);
    assert_eq!(tiers(&s, "dev:shell", now), ["fish=asserted"]);
    assert_eq!(tiers(&s, "dev:os", now), ["linux=asserted"]);
    assert_eq!(tiers(&s, "team:lead", now), ["Ana=inferred"]);

    // A higher tier for a value already held is news; the same tier is a rerun.
    let r = s.run_stdin(
        &["import", "-"],
        now,
        r#"{"key": "dev:editor", "value": "helix", "tier": "asserted"}
{"key": "dev:shell", "value": "fish", "tier": "asserted"}"#,
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("1 stored, 1 unchanged"), "{}", r.stdout);
    assert_eq!(tiers(&s, "dev:editor", now), ["helix=asserted"]);

    // Bad tiers stop everything, naming the line.
    let before = s.snapshot();
    for (lines, problem) in [
        (
            "{\"key\": \"a:b\", \"value\": \"c\"}\n{\"key\": \"a:b\", \"value\": \"d\", \"tier\": \"certain\"}",
            "line 2: tier `certain` is not `asserted` or `inferred`",
        ),
        (
            r#"{"op": "store", "key": "a:b", "value": "c", "tier": "Asserted"}"#,
            "line 1: tier `Asserted` is not",
        ),
        (
            r#"{"op": "forget", "key": "dev:os", "tier": "asserted"}"#,
            "line 1: `tier` has no meaning for op `forget`",
        ),
        (
            r#"{"op": "store", "key": "a:b", "value": "c", "entry": "abcd"}"#,
            "line 1: `entry` has no meaning for op `store`",
        ),
    ] {
        let r = s.run_stdin(&["import", "-"], now, lines);
        assert_eq!(r.code, 2, "{lines}: {}", r.stderr);
        assert!(r.stderr.contains(problem), "{lines}: {}", r.stderr);
    }
    assert_eq!(s.snapshot(), before);
}

/// A workspace with two events (`add` entries), one of them forgotten by its entry, and
/// a person's asserted fact.
fn events_workspace() -> Sandbox {
    let s = Sandbox::new();
    s.ok(
        &["store", "event:deploy", "deployed v2.3"],
        Some("2026-05-01T10:00:00Z"),
    );
    s.ok(
        &["store", "event:deploy", "deployed v2.4"],
        Some("2026-05-02T10:00:00Z"),
    );
    s.ok(
        &["store", "event:deploy", "deployed v2.5"],
        Some("2026-05-03T10:00:00Z"),
    );
    let hashes = s
        .ok(
            &["recall", "event:deploy", "--json"],
            Some("2026-05-03T11:00:00Z"),
        )
        .strings("hash");
    // Newest first: [v2.5, v2.4, v2.3]; forget v2.4 alone.
    s.ok(
        &["forget", "event:deploy", "--entry", &hashes[1]],
        Some("2026-05-04T10:00:00Z"),
    );
    s.ok(
        &["store", "ci:provider", "Buildkite"],
        Some("2026-05-04T11:00:00Z"),
    );
    s
}

/// What `export --history` writes for keys of many values: each `add` as an `op: store`
/// record (the importing workspace's `many:` decides again) and the forget of one value
/// with the `entry` hash it named. Read back into the workspace itself, all of it is
/// held and skipped, tiers included (nothing lowered, nothing said).
#[test]
fn export_history_writes_adds_as_stores_and_one_values_forget_with_its_entry() {
    let now = Some("2026-05-05T00:00:00Z");
    let s = events_workspace();
    let text = s.ok(&["export", "--history"], now).stdout;
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let ops: Vec<&str> = lines.iter().map(|l| l["op"].as_str().unwrap()).collect();
    assert_eq!(
        ops,
        ["store", "store", "store", "forget", "store"],
        "{text}"
    );
    assert!(lines[..3].iter().all(|l| l["tier"] == "asserted"), "{text}");
    let forgotten = s.ok(&["history", "event:deploy", "--json"], now).json()[1]["hash"].clone();
    assert_eq!(lines[3]["entry"], forgotten, "{text}");
    assert_eq!(lines[3]["key"], "event:deploy");

    let before = s.snapshot();
    let r = s.run_stdin(&["import", "-"], now, &text);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout
            .ends_with("; skipped 5 records the workspace already holds\n"),
        "{}",
        r.stdout
    );
    assert!(!r.stderr.contains("named a tier"), "{}", r.stderr);
    assert_eq!(s.snapshot(), before);
}

/// `export --history` into a fresh workspace that may record what the export says (its
/// own `many:` keeps event:*, trust.agents: asserted): the same entries, byte for byte,
/// so the same hashes, and the forget of one value finds its value.
#[test]
fn export_history_round_trips_adds_and_a_forget_of_one_value_into_a_fresh_workspace() {
    let now = Some("2026-05-05T00:00:00Z");
    let a = events_workspace();
    let text = a.ok(&["export", "--history"], now).stdout;
    let b = Sandbox::new();
    let_agents_assert(&b);
    let r = b.run_stdin(&["import", "-"], now, &text);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("4 stored, 1 forgotten"), "{}", r.stdout);
    let memory = b.memory_text();
    assert_eq!(memory.matches("op: add\n").count(), 3, "{memory}");
    assert!(memory.contains("\nentry: "), "{memory}");
    assert_eq!(
        tiers(&b, "event:deploy", now),
        ["deployed v2.5=asserted", "deployed v2.3=asserted"]
    );
    for key in ["event:deploy", "ci:provider"] {
        assert_eq!(
            answers(a.ok(&["history", key, "--json"], now).json()),
            answers(b.ok(&["history", key, "--json"], now).json()),
            "history of {key}"
        );
    }
    let v = b.run(&["verify"], now);
    assert_eq!(v.code, 0, "{}{}", v.stdout, v.stderr);
}

/// The importing workspace's `many:` decides what the exported `store` records of a
/// key become: where event:* is not listed, each value replaces the one before.
#[test]
fn the_importing_workspaces_many_decides_whether_exported_values_add_up() {
    let now = Some("2026-05-05T00:00:00Z");
    let a = Sandbox::new();
    for (day, v) in [("01", "deployed v2.3"), ("02", "deployed v2.4")] {
        a.ok(
            &["store", "event:deploy", v],
            Some(&format!("2026-05-{day}T10:00:00Z")),
        );
    }
    let text = a.ok(&["export", "--history"], now).stdout;
    let b = Sandbox::new();
    let yaml = b.ws.join("mem7.yaml");
    let mut settings = std::fs::read_to_string(&yaml).unwrap();
    settings.push_str("many: []\n");
    std::fs::write(&yaml, settings).unwrap();
    let r = b.run_stdin(&["import", "-"], now, &text);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!b.memory_text().contains("op: add"));
    let values = b
        .ok(&["recall", "event:deploy", "--json"], now)
        .strings("value");
    assert_eq!(values, ["deployed v2.4"]);
    let values = a
        .ok(&["recall", "event:deploy", "--json"], now)
        .strings("value");
    assert_eq!(values, ["deployed v2.4", "deployed v2.3"]);
}

/// The forget of one value, exported and imported into a workspace whose chain differs
/// (it already holds an entry, or it lowers the tiers, so every imported entry has
/// another hash) still forgets that value: the store records carry their entry's
/// `hash` where they came from, and the import renames the forget's `entry` to the
/// entry it wrote here.
#[test]
fn export_history_round_trips_a_forget_of_one_value_into_a_workspace_with_another_chain() {
    let now = Some("2026-05-05T00:00:00Z");
    let a = events_workspace();
    let text = a.ok(&["export", "--history"], now).stdout;
    // Default ceiling: the asserted records are lowered, so the entries differ.
    let b = Sandbox::new();
    let r = b.run_stdin(&["import", "-"], now, &text);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        b.ok(&["recall", "event:deploy", "--json"], now)
            .strings("value"),
        ["deployed v2.5", "deployed v2.3"]
    );
}

/// An imported forget of one value that names an entry neither this workspace nor the
/// import's own store records wrote is refused, naming the line, and nothing is
/// written: otherwise it would count as forgotten and forget nothing.
#[test]
fn an_imported_forget_of_an_unknown_entry_is_refused_and_writes_nothing() {
    let s = events_workspace();
    let before = s.snapshot();
    let unknown = "0".repeat(64);
    let line = format!(
        r#"{{"op":"forget","key":"event:deploy","entry":"{unknown}","agent":"tester","recorded":"2026-06-01T00:00:00Z"}}"#
    );
    let r = s.run_stdin(&["import", "-"], Some("2026-06-02T00:00:00Z"), &line);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("line 1") && r.stderr.contains("wrote no value of `event:deploy`"),
        "{}",
        r.stderr
    );
    assert_eq!(s.snapshot(), before, "nothing written");
}

/// An import's records for `keys` keys, each stored twice, on two days, a second apart.
fn two_day_import(keys: usize) -> String {
    let mut text = String::new();
    for round in 0..2 {
        for k in 0..keys {
            let i = round * keys + k;
            let at = format!("2026-03-0{}T00:00:{:02}Z", 1 + round, 1 + k % 59);
            text.push_str(&format!(
                "{{\"key\":\"bulk:k{k}\",\"value\":\"value {i}\",\"agent\":\"tester\",\"recorded\":\"{at}\"}}\n"
            ));
        }
    }
    text
}

/// An import records in the index what it planned (the lines its entries land on
/// included) without planning again: the index equals a fold of the files, also when
/// the import appends to a day file that already holds entries (after a line feed, or
/// after a hand edit that left no line feed at the end), and after `reindex`.
#[test]
fn an_import_records_its_plans_as_a_fold_of_the_files_would() {
    let now = Some("2026-04-01T00:00:00Z");
    for ending in ["", "\n", "<!-- a note -->"] {
        let s = Sandbox::new();
        s.ok(
            &["store", "bulk:k0", "before", "--agent", "tester"],
            Some("2026-03-01T00:00:00Z"),
        );
        if !ending.is_empty() {
            let file = s.memory_dir().join("2026-03-01.md");
            let mut text = std::fs::read_to_string(&file).unwrap();
            text.push_str(ending);
            std::fs::write(&file, text).unwrap();
        }
        let r = s.run_stdin(&["import", "-"], now, &two_day_import(5));
        assert_eq!(r.code, 0, "{}", r.stderr);
        // (The note is foreign text, which `verify` names; the index must match still.)
        let v = s.run(&["verify", "--index"], now);
        let said = format!("{}{}", v.stdout, v.stderr);
        assert!(said.contains("the index matches the markdown"), "{said}");
        let before = s.ok(&["history", "bulk:k3", "--json"], now).json();
        let list = s.ok(&["list", "--json"], now).json();
        s.ok(&["reindex"], now);
        assert_eq!(s.ok(&["history", "bulk:k3", "--json"], now).json(), before);
        assert_eq!(s.ok(&["list", "--json"], now).json(), list);
    }
}

/// An import killed after its entries were appended but before the index recorded them
/// leaves the files ahead of the index: the next command catches up to the same index
/// as the import that finished (the state is made exactly: the finished import's files
/// copied over a copy of the workspace taken before it).
#[test]
fn an_import_killed_between_the_append_and_the_index_write_is_recovered() {
    let now = Some("2026-04-01T00:00:00Z");
    let done = Sandbox::new();
    done.ok(
        &["store", "bulk:k0", "before", "--agent", "tester"],
        Some("2026-03-01T00:00:00Z"),
    );
    let killed = Sandbox::bare();
    copy_dir(&done.ws, &killed.ws);
    let r = done.run_stdin(&["import", "-"], now, &two_day_import(5));
    assert_eq!(r.code, 0, "{}", r.stderr);
    // The files as the finished import left them, the index as it was before.
    for e in std::fs::read_dir(done.memory_dir()).unwrap().flatten() {
        std::fs::copy(e.path(), killed.memory_dir().join(e.file_name())).unwrap();
    }
    for k in 0..5 {
        let key = format!("bulk:k{k}");
        assert_eq!(
            killed.ok(&["history", &key, "--json"], now).json(),
            done.ok(&["history", &key, "--json"], now).json(),
            "history of {key}"
        );
    }
    assert_eq!(
        killed.ok(&["list", "--json"], now).json(),
        done.ok(&["list", "--json"], now).json()
    );
    let v = killed.run(&["verify", "--index"], now);
    assert_eq!(v.code, 0, "{}{}", v.stdout, v.stderr);
    assert!(format!("{}{}", v.stdout, v.stderr).contains("index matches"));
}
