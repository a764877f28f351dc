//! The shell rules as data tables: command lines and outputs as agents' tools report
//! them, and what each did.

use super::*;

fn s(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| w.to_string()).collect()
}

#[test]
fn command_lines_split_into_simple_commands() {
    let cases: &[(&str, &[&[&str]])] = &[
        ("cargo test", &[&["cargo", "test"]]),
        (
            "cd /work/app && RUST_BACKTRACE=1 cargo test --test it 2>&1 | tail -n 40",
            &[
                &["cd", "/work/app"],
                &["cargo", "test", "--test", "it"],
                &["tail", "-n", "40"],
            ],
        ),
        (
            "git commit -m \"Fix the parser; keep CRLF\" && git push",
            &[
                &["git", "commit", "-m", "Fix the parser; keep CRLF"],
                &["git", "push"],
            ],
        ),
        ("timeout 60 npm test > out.txt", &[&["npm", "test"]]),
        ("time env CI=1 go test ./...", &[&["go", "test", "./..."]]),
        ("echo 'a | b'; ls", &[&["echo", "a | b"], &["ls"]]),
    ];
    for (line, want) in cases {
        let want: Vec<Vec<String>> = want.iter().map(|w| s(w)).collect();
        assert_eq!(segments(line), want, "{line}");
    }
}

#[test]
fn checks_are_tests_builds_and_linters_only() {
    let yes = [
        "cargo test",
        "cargo clippy --all-targets -- -D warnings",
        "cargo fmt --all --check",
        "pytest -q tests/",
        "python -m pytest",
        "uv run pytest",
        "npm test",
        "npm run test:unit",
        "yarn build",
        "npx jest src",
        "go test ./...",
        "make check",
        "just check",
    ];
    let no = [
        "cargo run",
        "cargo fmt --all",
        "grep -rn foo src",
        "ls missing",
        "npm install",
        "git status",
        "python script.py",
        "go run .",
    ];
    for c in yes {
        assert!(is_check(&segments(c)[0]), "{c} is a check");
    }
    for c in no {
        assert!(!is_check(&segments(c)[0]), "{c} is not a check");
    }
}

const CARGO_FAILED: &str = "running 3 tests
test parse::crlf ... FAILED
test parse::plain ... ok
test parse::empty ... ok

failures:

---- parse::crlf stdout ----
thread 'parse::crlf' panicked at src/parse.rs:10:5:
assertion failed

failures:
    parse::crlf

test result: FAILED. 2 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.01s

error: test failed, to rerun pass `--lib`
";

const CARGO_OK: &str = "running 3 tests
...
test result: ok. 3 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.01s

running 0 tests

test result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s
";

#[test]
fn runners_summaries_say_pass_or_fail_and_name_failing_tests() {
    type Want<'a> = Option<(bool, Option<&'a str>, &'a [&'a str])>;
    let cases: &[(&str, Want)] = &[
        (
            CARGO_FAILED,
            Some((
                true,
                Some(
                    "test result: FAILED. 2 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out",
                ),
                &["parse::crlf"],
            )),
        ),
        (
            CARGO_OK,
            Some((
                false,
                Some("test result: ok. 3 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out"),
                &[],
            )),
        ),
        (
            "   Compiling app v0.1.0\nerror[E0425]: cannot find value `x` in this scope\n --> src/main.rs:2:5\n",
            Some((
                true,
                Some("error[E0425]: cannot find value `x` in this scope"),
                &[],
            )),
        ),
        (
            "FAILED tests/test_api.py::test_login - AssertionError\n========= 1 failed, 12 passed in 0.52s =========\n",
            Some((
                true,
                Some("1 failed, 12 passed"),
                &["tests/test_api.py::test_login"],
            )),
        ),
        (
            "============ 13 passed in 0.40s ============\n",
            Some((false, Some("13 passed"), &[])),
        ),
        (
            "Test Suites: 1 failed, 3 passed, 4 total\nTests:       2 failed, 30 passed, 32 total\n",
            Some((true, Some("Tests: 2 failed, 30 passed, 32 total"), &[])),
        ),
        (
            "--- FAIL: TestParse (0.00s)\n    parse_test.go:12: bad\nFAIL\nFAIL\texample.com/app/parse\t0.003s\n",
            Some((true, Some("FAIL example.com/app/parse"), &["TestParse"])),
        ),
        (
            "ok  \texample.com/app/parse\t0.003s\n",
            Some((false, Some("ok example.com/app/parse"), &[])),
        ),
        (
            "npm error Missing script: \"test\"\n",
            Some((true, Some("npm error Missing script: \"test\""), &[])),
        ),
        (
            "1 failed, 3 passed in 0.12s\n",
            Some((true, Some("1 failed, 3 passed"), &[])),
        ),
        (
            " \x1b[32m Test Files \x1b[39m 1 failed | 2 passed (3)\n      Tests  1 failed | 5 passed (6)\n",
            Some((true, Some("Tests: 1 failed | 5 passed (6)"), &[])),
        ),
        (
            "     Summary [   0.01s] 4 tests run: 4 passed, 0 skipped\n",
            Some((false, Some("4 tests run: 4 passed, 0 skipped"), &[])),
        ),
        (
            "     Summary [   0.01s] 4 tests run: 3 passed, 1 failed, 0 skipped\n",
            Some((
                true,
                Some("4 tests run: 3 passed, 1 failed, 0 skipped"),
                &[],
            )),
        ),
        ("nothing a runner would say\n", None),
    ];
    for (output, want) in cases {
        let got = summarise(output);
        let want = want.map(|(failed, line, failing)| Summary {
            failed,
            line: line.map(str::to_string),
            failing: failing.iter().map(|n| n.to_string()).collect(),
        });
        assert_eq!(got, want, "{output}");
    }
}

#[test]
fn a_failing_then_passing_check_and_unknowns() {
    let failed = read("cargo test 2>&1 | tail -30", CARGO_FAILED, Some(0));
    assert_eq!(
        failed,
        [Did::Check {
            command: "cargo test".into(),
            outcome: Outcome {
                failed: true,
                summary: Some("test result: FAILED. 2 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out".into()),
                failing: vec!["parse::crlf".into()],
            },
        }]
    );
    let passed = read("cargo test", CARGO_OK, None);
    assert!(matches!(
        &passed[..],
        [Did::Check {
            outcome: Outcome { failed: false, .. },
            ..
        }]
    ));
    // The exit code alone decides when no runner summarised.
    let built = read("make", "cc -o app main.c\nmain.c:1: oops\n", Some(2));
    assert!(matches!(
        &built[..],
        [Did::Check {
            outcome: Outcome {
                failed: true,
                summary: None,
                ..
            },
            ..
        }]
    ));
    // Neither an exit code nor a summary: not a fact.
    assert_eq!(read("make", "cc -o app main.c\n", None), []);
    // Not a check at all.
    assert_eq!(read("grep -rn nothing src", "", Some(1)), []);
}

#[test]
fn git_and_gh_outputs() {
    assert_eq!(
        read(
            "git add -A && git commit -m 'Fix CRLF'",
            "[main 1a2b3c4] Fix CRLF\n 2 files changed, 10 insertions(+)\n",
            Some(0)
        ),
        [Did::Commit {
            rev: "1a2b3c4".into(),
            branch: Some("main".into()),
            subject: Some("Fix CRLF".into()),
        }]
    );
    assert_eq!(
        read(
            "git commit -m init",
            "[feature/x (root-commit) 0f0e0d0] init\n",
            None
        ),
        [Did::Commit {
            rev: "0f0e0d0".into(),
            branch: Some("feature/x".into()),
            subject: Some("init".into()),
        }]
    );
    // A commit that failed (nothing to commit) says nothing.
    assert_eq!(
        read(
            "git commit -m x",
            "nothing to commit, working tree clean\n",
            Some(1)
        ),
        []
    );
    assert_eq!(
        read(
            "git push -u origin feat",
            "To github.com:acme/app.git\n * [new branch]      feat -> feat\nbranch 'feat' set up to track 'origin/feat'.\n",
            Some(0)
        ),
        [Did::Push {
            remote: "origin".into(),
            refs: vec![Pushed {
                branch: "feat".into(),
                rev: None,
                rejected: false
            }],
        }]
    );
    assert_eq!(
        read(
            "git push",
            "To github.com:acme/app.git\n   1a2b3c4..9f8e7d6  main -> main\n",
            Some(0)
        ),
        [Did::Push {
            remote: "github.com:acme/app.git".into(),
            refs: vec![Pushed {
                branch: "main".into(),
                rev: Some("9f8e7d6".into()),
                rejected: false
            }],
        }]
    );
    assert_eq!(
        read(
            "git push origin main",
            "To github.com:acme/app.git\n ! [rejected]        main -> main (fetch first)\nerror: failed to push some refs\n",
            Some(1)
        ),
        [Did::Push {
            remote: "origin".into(),
            refs: vec![Pushed {
                branch: "main".into(),
                rev: None,
                rejected: true
            }],
        }]
    );
    assert_eq!(read("git push", "Everything up-to-date\n", Some(0)), []);
    assert_eq!(
        read(
            "gh pr create --title \"Keep CRLF\" --body x",
            "Creating pull request for feat into main in acme/app\n\nhttps://github.com/acme/app/pull/42\n",
            Some(0)
        ),
        [Did::PullRequest {
            url: "https://github.com/acme/app/pull/42".into(),
            title: Some("Keep CRLF".into()),
        }]
    );
    assert_eq!(
        read(
            "git checkout -b feat",
            "Switched to a new branch 'feat'\n",
            None
        ),
        [Did::Switch]
    );
    assert_eq!(
        read(
            "git pull --no-rebase",
            "Merge made by the 'ort' strategy.\n",
            None
        ),
        [Did::Merge]
    );
}

#[test]
fn a_credential_or_private_text_in_what_a_command_printed_drops_that_field() {
    let token = format!("ghp_{}", "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8");
    let did = read(
        "git commit -m x",
        &format!("[main 1a2b3c4] use {token} for the API\n"),
        None,
    );
    assert_eq!(
        did,
        [Did::Commit {
            rev: "1a2b3c4".into(),
            branch: Some("main".into()),
            subject: None
        }]
    );
    let did = read(
        "pytest",
        &format!(
            "FAILED tests/t.py::test_x - assert '{token}' == ''\n===== 1 failed in 0.1s =====\n"
        ),
        None,
    );
    let [Did::Check { outcome, .. }] = &did[..] else {
        panic!("{did:?}")
    };
    assert!(outcome.failed);
    assert_eq!(outcome.summary.as_deref(), Some("1 failed"));
    // A command line holding a credential is not recorded at all.
    assert_eq!(
        read(
            &format!("GH_TOKEN={token} cargo test --features {token}"),
            CARGO_OK,
            Some(0)
        ),
        []
    );
    let did = read(
        "cargo test <private>secret_case</private>",
        CARGO_OK,
        Some(0),
    );
    assert!(
        matches!(&did[..], [Did::Check { command, .. }] if command == "cargo test"),
        "{did:?}"
    );
}
