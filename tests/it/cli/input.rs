//! Bad input refused with exit 2 and nothing written; credentials, the value limit, a
//! missing workspace.

use super::*;

#[test]
fn bad_input_is_refused_with_exit_2_and_nothing_written() {
    let s = Sandbox::new();
    s.ok(&["store", "k", "v"], Some(T1));
    let before = s.snapshot();
    let long_key = "k".repeat(201);
    let big = "x".repeat(64 * 1024 + 1);
    let cases: Vec<(Vec<&str>, Option<&str>, &str)> = vec![
        (
            vec!["store", "k", "v", "--valid-from", "yesterday"],
            Some(NOW),
            "valid-from",
        ),
        (
            vec!["store", "k", "v", "--valid-to", "2026-13-01"],
            Some(NOW),
            "valid-to",
        ),
        (
            vec![
                "store",
                "k",
                "v",
                "--valid-from",
                "2026-03-01",
                "--valid-to",
                "2026-03-01",
            ],
            Some(NOW),
            "after",
        ),
        (
            vec![
                "store",
                "k",
                "v",
                "--valid-from",
                "2026-03-01",
                "--valid-to",
                "2026-02-01",
            ],
            Some(NOW),
            "after",
        ),
        (
            vec!["store", "k", "v", "--valid-to", "2026-01-01"],
            Some(NOW),
            "after",
        ),
        (vec!["store", "", "v"], Some(NOW), "empty"),
        (vec!["store", "a b", "v"], Some(NOW), "whitespace"),
        (vec!["store", "a\nb", "v"], Some(NOW), "whitespace"),
        (vec!["store", &long_key, "v"], Some(NOW), "200"),
        (vec!["store", "k", &big], Some(NOW), "limit"),
        (vec!["store", "k", "v"], Some("2026-04-12"), "MEM7_NOW"),
        (vec!["store", "k", "v"], Some("tomorrow"), "MEM7_NOW"),
        (
            vec![
                "store",
                "k",
                "my key is sk-proj-abcdefghijklmnopqrstuvwxyz123",
            ],
            Some(NOW),
            "credential",
        ),
        (
            vec!["store", "k", "ghp_abcdefghijklmnopqrstuvwxyz0123456789"],
            Some(NOW),
            "credential",
        ),
        (
            vec!["store", "k", "-----BEGIN RSA PRIVATE KEY-----\nMIIE"],
            Some(NOW),
            "credential",
        ),
        (
            vec!["store", "k", "password=hunter2hunter2"],
            Some(NOW),
            "credential",
        ),
        (
            vec!["store", "AKIAIOSFODNN7EXAMPLE", "v"],
            Some(NOW),
            "credential",
        ),
        (
            vec!["store", "k", "v", "--tag", "two words"],
            Some(NOW),
            "tag",
        ),
        (
            vec!["recall", "k", "--valid-at", "soon"],
            Some(NOW),
            "valid-at",
        ),
        (
            vec!["recall", "k", "--as-of", "2026-02-30"],
            Some(NOW),
            "as-of",
        ),
        (vec!["store"], Some(NOW), "Usage"),
        (vec!["frobnicate"], Some(NOW), "unrecognized"),
    ];
    for (args, now, needle) in cases {
        let r = s.run(&args, now);
        assert_eq!(r.code, 2, "{args:?} should fail with 2: {}", r.stderr);
        assert!(
            r.stderr.contains(needle),
            "{args:?}: stderr should mention {needle:?}: {}",
            r.stderr
        );
        assert_eq!(s.snapshot(), before, "{args:?} changed the workspace");
    }
}

#[test]
fn allow_secret_overrides_and_says_so_in_the_entry() {
    let s = Sandbox::new();
    let r = s.run(
        &[
            "store",
            "k",
            "sk-test-abcdefghijklmnopqrstuvwxyz",
            "--allow-secret",
        ],
        Some(T1),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let text = std::fs::read_to_string(s.memory_dir().join("2026-02-15.md")).unwrap();
    assert!(text.contains("secret: allowed"), "{text}");
}

#[test]
fn value_limit_is_configurable() {
    let s = Sandbox::new();
    std::fs::write(s.ws.join("mem7.yaml"), "max_value_bytes: 10\n").unwrap();
    let r = s.run(&["store", "k", "01234567890"], Some(T1));
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("max_value_bytes"), "{}", r.stderr);
    s.ok(&["store", "k", "0123456789"], Some(T1));
}

#[test]
fn no_workspace_suggests_init_and_creates_nothing() {
    let s = Sandbox::bare();
    let r = s.run(&["recall", "k"], Some(NOW));
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("mem7 init"), "{}", r.stderr);
    let r = s.run(&["store", "k", "v"], Some(NOW));
    assert_eq!(r.code, 2);
    assert!(
        !s.ws.exists(),
        "a failed store must not create the workspace"
    );
}
