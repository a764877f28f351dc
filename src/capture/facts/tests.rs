//! The capture rules as data tables: events to writes, and each write folded into what
//! its key holds.

use super::*;
use crate::core::Source;
use crate::core::time::{TxTime, ValidTime};

const T0: i64 = 1_796_115_600_000_000; // 2026-12-01T09:00:00Z

fn origin() -> Origin {
    Origin {
        client: Client::ClaudeCode,
        session: Some("5f3a9c1e-0000-4000-8000-000000000001".into()),
        checkout: Checkout::new("/work/app"),
        branch: Some("main".into()),
        now: T0,
    }
}

fn version(value: &str, from: i64) -> Version {
    Version {
        key: "k".into(),
        value: value.into(),
        tags: vec![],
        agent: "t".into(),
        valid_from: ValidTime::from_micros(from),
        valid_to: ValidTime::INFINITY,
        tx_from: TxTime::from_micros(from),
        tx_to: TxTime::INFINITY,
        tier: None,
        source: Source::default(),
    }
}

#[test]
fn events_become_keys_tags_and_rules() {
    let o = origin();
    let cid = o.checkout.id.clone();
    let sid = o.session.clone().unwrap();
    let events = [
        Event::SessionStart {
            source: Some("startup".into()),
        },
        Event::Touched {
            path: "/work/app/src/a.rs".into(),
        },
        Event::Shell(shell::Did::Check {
            command: "cargo test".into(),
            outcome: shell::Outcome {
                failed: true,
                summary: Some("test result: FAILED. 1 failed".into()),
                failing: vec!["t::x".into()],
            },
        }),
        Event::Commit(Commit {
            hash: "1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b".into(),
            time: T0 - 5,
            subject: Some("Fix CRLF".into()),
            branch: Some("main".into()),
            files: vec!["src/a.rs".into()],
            file_count: 1,
            parents: 1,
            rewrote: None,
        }),
        Event::Shell(shell::Did::Push {
            remote: "origin".into(),
            refs: vec![shell::Pushed {
                branch: "main".into(),
                rev: Some("1a2b3c4d5e6f7a8b".into()),
                rejected: false,
            }],
        }),
        Event::Shell(shell::Did::PullRequest {
            url: "https://github.com/acme/app/pull/42".into(),
            title: Some("Keep CRLF".into()),
        }),
        Event::SessionEnd {
            reason: Some("prompt_input_exit".into()),
        },
    ];
    let got = writes(&events, &o, &Settings::default());
    let keys: Vec<(&str, Kind)> = got.iter().map(|w| (w.key.as_str(), w.kind)).collect();
    let session_key = format!("local:session:{sid}");
    let files_key = format!("local:session:{sid}:files");
    let branch_key = format!("local:checkout:{cid}:branch");
    let check_key = format!("local:checkout:{cid}:check:{}", command_slug("cargo test"));
    assert_eq!(
        keys,
        [
            (session_key.as_str(), Kind::Sessions),
            (branch_key.as_str(), Kind::Branches),
            (files_key.as_str(), Kind::Files),
            (check_key.as_str(), Kind::Commands),
            ("git:commit:1a2b3c4d5e6f", Kind::Commits),
            ("git:push:origin/main", Kind::Pushes),
            ("git:pr:github.com/acme/app/pull/42", Kind::Prs),
            (session_key.as_str(), Kind::Sessions),
        ]
    );
    assert!(check_key.starts_with(&format!("local:checkout:{cid}:check:cargo-test-")));
    for w in &got {
        assert!(
            w.tags.contains(&TAG.to_string()) && w.tags.contains(&o.checkout.tag()),
            "{w:?}"
        );
        assert!(crate::core::validate::key(&w.key).is_ok(), "{}", w.key);
        for t in &w.tags {
            assert!(crate::core::validate::tag(t).is_ok(), "{t}");
        }
    }
    assert_eq!(
        got[0].rule,
        Rule::Once("claude-code session 5f3a9c1e in /work/app on branch main, started 2026-12-01T09:00:00Z".into())
    );
    assert_eq!(
        got[2].rule,
        Rule::Grow {
            title: "files edited or written in claude-code session 5f3a9c1e".into(),
            items: vec!["src/a.rs".into()]
        }
    );
    assert_eq!(
        got[3].rule,
        Rule::State {
            value: "failing: `cargo test` — test result: FAILED. 1 failed; failing: t::x".into(),
            after: None
        }
    );
    assert_eq!(
        got[4].rule,
        Rule::Once("1a2b3c4d5e6f on main: Fix CRLF — 1 file: src/a.rs".into())
    );
    assert_eq!(got[4].at, T0 - 5, "a commit holds from its own time");
    assert_eq!(
        got[5].rule,
        Rule::State {
            value: "origin/main at 1a2b3c4d5e6f".into(),
            after: None
        }
    );
    assert_eq!(
        got[6].rule,
        Rule::Once(
            "opened pull request https://github.com/acme/app/pull/42: Keep CRLF (from main)".into()
        )
    );

    // Kinds turned off write nothing; unshared project facts stay local.
    let settings = Settings {
        off: vec![Kind::Files, Kind::Sessions],
        share: false,
    };
    let got = writes(&events, &o, &settings);
    let keys: Vec<&str> = got.iter().map(|w| w.key.as_str()).collect();
    assert_eq!(
        keys,
        [
            branch_key.as_str(),
            check_key.as_str(),
            "local:git:commit:1a2b3c4d5e6f",
            "local:git:push:origin/main",
            "local:git:pr:github.com/acme/app/pull/42"
        ]
    );
    // Without a session, the session trail has nowhere to go; git facts still do.
    let o = Origin {
        session: None,
        ..origin()
    };
    let got = writes(&events, &o, &Settings::default());
    assert!(
        got.iter().all(|w| !w.key.starts_with("local:session:")),
        "{got:?}"
    );
    assert_eq!(got.len(), 4);
}

#[test]
fn each_rule_folds_into_what_the_key_holds() {
    let once = Rule::Once("c1".into());
    let fail = Rule::State {
        value: "failing: `cargo test`".into(),
        after: None,
    };
    let pass = Rule::State {
        value: "passing again: `cargo test`".into(),
        after: Some("failing:".into()),
    };
    let grow = |items: &[&str]| Rule::Grow {
        title: "files".into(),
        items: items.iter().map(|s| s.to_string()).collect(),
    };
    let end = Rule::End {
        base: "session s".into(),
        end: "; ended E".into(),
    };
    let t = T0;
    let (grow_a, grow_b) = (grow(&["a.rs"]), grow(&["b.rs"]));
    type Case<'a> = (&'a str, &'a Rule, i64, Vec<Version>, Option<(&'a str, i64)>);
    let cases: Vec<Case> = vec![
        ("a new event", &once, t, vec![], Some(("c1", t))),
        (
            "an event seen again",
            &once,
            t + 9,
            vec![version("c1", t)],
            None,
        ),
        (
            "a first failure",
            &fail,
            t,
            vec![],
            Some(("failing: `cargo test`", t)),
        ),
        (
            "the same failure again",
            &fail,
            t + 1,
            vec![version("failing: `cargo test`", t)],
            None,
        ),
        (
            "a pass after a failure",
            &pass,
            t + 2,
            vec![version("failing: `cargo test`", t)],
            Some(("passing again: `cargo test`", t + 2)),
        ),
        ("a pass never failed", &pass, t + 2, vec![], None),
        (
            "a pass again",
            &pass,
            t + 3,
            vec![version("passing again: `cargo test`", t + 2)],
            None,
        ),
        (
            "a late failure under a later pass",
            &fail,
            t + 1,
            vec![version("passing again: `cargo test`", t + 2)],
            None,
        ),
        (
            "a first file",
            &grow_a,
            t,
            vec![],
            Some(("files (1):\n- a.rs", t)),
        ),
        (
            "a second file keeps the start",
            &grow_b,
            t + 5,
            vec![version("files (1):\n- a.rs", t)],
            Some(("files (2):\n- a.rs\n- b.rs", t)),
        ),
        (
            "a file already listed",
            &grow_a,
            t + 5,
            vec![version("files (2):\n- a.rs\n- b.rs", t)],
            None,
        ),
        (
            "an end",
            &end,
            t + 9,
            vec![version("session s, started S", t)],
            Some(("session s, started S; ended E", t)),
        ),
        (
            "an end again",
            &end,
            t + 10,
            vec![version("session s, started S; ended E", t)],
            None,
        ),
        (
            "an end without a start",
            &end,
            t + 9,
            vec![],
            Some(("session s; ended E", t + 9)),
        ),
    ];
    for (what, rule, at, believed, want) in cases {
        let got = decide(rule, at, &believed);
        assert_eq!(got.as_ref().map(|(v, f)| (v.as_str(), *f)), want, "{what}");
    }
}

#[test]
fn a_long_list_names_the_first_items_and_counts_the_rest() {
    let items: Vec<String> = (0..MAX_ITEMS + 3).map(|i| format!("f{i}.rs")).collect();
    let (value, _) = decide(
        &Rule::Grow {
            title: "files".into(),
            items: items.clone(),
        },
        T0,
        &[],
    )
    .unwrap();
    assert!(
        value.starts_with(&format!("files ({}):", MAX_ITEMS + 3)),
        "{value}"
    );
    assert!(value.ends_with("\n- … and 3 more"), "{value}");
    let (total, listed) = parse_list(&value);
    assert_eq!((total, listed.len()), (MAX_ITEMS + 3, MAX_ITEMS));
    // A listed item again changes nothing.
    assert_eq!(
        decide(
            &Rule::Grow {
                title: "files".into(),
                items: vec!["f0.rs".into()]
            },
            T0,
            &[version(&value, T0)]
        ),
        None
    );
}

#[test]
fn subagent_tasks_run_and_end() {
    let running = Rule::Task {
        state: TaskState::Running,
        agent: Some("Explore".into()),
        description: Some("Map the parser".into()),
        summary: None,
    };
    let stopped = Rule::Task {
        state: TaskState::Done,
        agent: Some("Explore".into()),
        description: None,
        summary: Some("it is in src/format".into()),
    };
    let (v, _) = decide(&running, T0, &[]).unwrap();
    assert_eq!(v, "running: Explore subagent — Map the parser");
    let (v2, _) = decide(&stopped, T0 + 1, &[version(&v, T0)]).unwrap();
    assert_eq!(
        v2,
        "done: Explore subagent — Map the parser → it is in src/format"
    );
    assert_eq!(decide(&stopped, T0 + 2, &[version(&v2, T0 + 1)]), None);
    assert_eq!(
        decide(&running, T0 + 3, &[version(&v2, T0 + 1)]),
        None,
        "a late start never reopens"
    );
}

#[test]
fn commit_values() {
    let c = Commit {
        hash: "abcdef0123456789".into(),
        time: T0,
        subject: None,
        branch: None,
        files: vec!["a".into(), "b".into()],
        file_count: 5,
        parents: 2,
        rewrote: Some("0011223344556677".into()),
    };
    assert_eq!(
        commit_value(&c),
        "merge abcdef012345: (subject not kept) (rewrites 001122334455) — 5 files: a, b and 3 more"
    );
    let o = origin();
    assert_eq!(o.checkout.relative("/work/app/src/x.rs"), "src/x.rs");
    assert_eq!(o.checkout.relative("/work/apple/x.rs"), "/work/apple/x.rs");
    assert_eq!(o.checkout.relative("src/y.rs"), "src/y.rs");
}
