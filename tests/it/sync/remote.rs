//! A hostile (or careless) remote: symlinks, submodules, dropped entries, hooks,
//! attributes, settings and credentials pushed by someone with push access.

use super::*;

// --- A hostile (or careless) remote -------------------------------------------------
//
// Each case is one commit pushed by someone with push access. Each ends with no byte
// written outside the workspace, every acknowledged entry on both clones, and no
// stranger's code run.

/// Every key's answer on a clone, as `history --json` sees it (entries acknowledged).
fn history_values(c: &Clone, key: &str) -> Vec<String> {
    let r = c.ok(&["history", key, "--json"], Some("2026-12-31T00:00:00Z"));
    r.strings("value")
}

/// B pushes a commit made by hand (plain git), as an attacker with push access would.
fn push_by_hand(b: &Clone, message: &str) {
    b.git(&["add", "-A"]);
    b.git(&["commit", "-q", "-m", message]);
    b.git(&["push", "-q", "origin", "main"]);
}

#[test]
fn a_symlinked_day_file_from_the_remote_is_refused_and_nothing_leaves_the_workspace() {
    let w = World::new();
    let (a, b) = w.pair("");
    let outside = w.dir.path().join("outside.txt");
    // The link points two levels up from memory/: out of the clone, into the world.
    std::os::unix::fs::symlink("../../outside.txt", b.memory_file("2026-03-02")).unwrap();
    push_by_hand(&b, "links");
    let evil = w.remote_head().unwrap();

    let head = a.head();
    let before = work_tree(&a.repo);
    let r = a.run(&["sync"], Some("2026-03-01T09:00:00Z"));
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("memory/2026-03-02.md"), "{}", r.stderr);
    assert!(r.stderr.contains("symbolic link"), "{}", r.stderr);
    assert!(
        r.stderr.contains(&evil[..7]),
        "names the commit: {}",
        r.stderr
    );
    assert_eq!(a.head(), head, "the clone stays as it was");
    assert_same_files(&before, &work_tree(&a.repo));

    let json = a.run(&["sync", "--json"], Some("2026-03-01T09:00:01Z"));
    assert_eq!(json.code, 1);
    let v = json.json();
    assert_eq!(v["by"], "remote", "{v}");
    assert_eq!(v["findings"][0]["file"], "memory/2026-03-02.md");

    // The next store that day writes a real file in the workspace.
    a.store("victim:1", "hello", "2026-03-02T10:00:00Z");
    assert!(
        !outside.exists(),
        "a byte reached a file outside the workspace"
    );
    assert_eq!(history_values(&a, "victim:1"), ["hello"]);
    assert_eq!(a.run(&["verify"], None).code, 0);
}

#[test]
fn a_symlinked_torn_folder_or_a_submodule_from_the_remote_is_refused() {
    for case in ["torn", "submodule", "memory"] {
        let w = World::new();
        let (a, b) = w.pair("mem");
        let target = w.dir.path().join("elsewhere");
        std::fs::create_dir_all(&target).unwrap();
        let path = match case {
            "torn" => {
                std::os::unix::fs::symlink(&target, b.ws.join("memory/torn")).unwrap();
                b.git(&["add", "-A"]);
                "memory/torn"
            }
            "memory" => {
                // The memory folder itself replaced by a link.
                b.git(&["rm", "-q", "-r", "mem/memory"]);
                std::os::unix::fs::symlink(&target, b.ws.join("memory")).unwrap();
                b.git(&["add", "-A"]);
                "memory"
            }
            _ => {
                let head = b.head();
                b.git(&[
                    "update-index",
                    "--add",
                    "--cacheinfo",
                    &format!("160000,{head},mem/memory/sub"),
                ]);
                "memory/sub"
            }
        };
        b.git(&["commit", "-q", "-m", case]);
        b.git(&["push", "-q", "origin", "main"]);

        let head = a.head();
        let r = a.run(&["sync"], Some("2026-03-01T09:00:00Z"));
        assert_eq!(r.code, 1, "{case}: {}{}", r.stdout, r.stderr);
        assert!(r.stderr.contains(path), "{case}: {}", r.stderr);
        assert_eq!(a.head(), head, "{case}: the clone stays as it was");
        a.store("after:1", case, "2026-03-01T10:00:00Z");
        assert!(
            std::fs::read_dir(&target).unwrap().next().is_none(),
            "{case}: something was written outside the workspace"
        );
        a.assert_settled_memory();
    }
}

#[test]
fn a_remote_that_dropped_entries_is_repaired_never_fast_forwarded() {
    for case in ["cut", "deleted", "forged"] {
        let w = World::new();
        let (a, b) = w.pair("");
        a.store("a:kept", "acknowledged and pushed", "2026-03-01T09:00:00Z");
        a.store("a:newest", "also pushed", "2026-03-01T09:30:00Z");
        a.sync("2026-03-01T09:30:01Z");
        b.sync("2026-03-01T10:00:00Z");
        let file = b.memory_file("2026-03-01");
        let text = std::fs::read_to_string(&file).unwrap();
        match case {
            "cut" => {
                // The two newest entries cut off.
                let at = text.find("## a:kept").unwrap();
                std::fs::write(&file, &text[..at]).unwrap();
            }
            "deleted" => {
                b.git(&["rm", "-q", "memory/2026-03-01.md"]);
            }
            _ => {
                // The newest entry replaced by a re-hashed forgery chained in its place.
                let at = text.find("## a:newest").unwrap();
                std::fs::write(&file, &text[..at]).unwrap();
                b.store("a:newest", "forged", "2026-03-01T09:45:00Z");
            }
        }
        push_by_hand(&b, case);
        let dropped_by = w.remote_head().unwrap();

        let r = a.sync("2026-03-01T11:00:00Z");
        let restored = r["restored"].as_array().unwrap();
        assert!(!restored.is_empty(), "{case}: {r}");
        assert_eq!(
            restored[0]["dropped_by"],
            dropped_by.as_str(),
            "{case}: {r}"
        );
        let keys: Vec<&str> = restored
            .iter()
            .flat_map(|k| k["keys"].as_array().unwrap())
            .map(|k| k.as_str().unwrap())
            .collect();
        assert!(keys.contains(&"a:newest"), "{case}: {r}");
        assert_eq!(r["pushed"], true, "{case}: the repaired tree is pushed");
        let human = a.ok(&["sync"], Some("2026-03-01T11:00:01Z"));
        assert!(human.stdout.contains("up to date"), "{}", human.stdout);

        b.sync("2026-03-01T11:30:00Z");
        for c in [&a, &b] {
            assert_eq!(
                history_values(c, "a:kept"),
                ["acknowledged and pushed"],
                "{case} on {}",
                c.name
            );
            let newest = history_values(c, "a:newest");
            assert!(
                newest.contains(&"also pushed".to_string()),
                "{case} on {}: {newest:?}",
                c.name
            );
            assert_eq!(
                history_values(c, "seed"),
                ["the first fact"],
                "{case} on {}",
                c.name
            );
            c.assert_settled();
        }
        assert_eq!(
            a.answers(&["a:kept", "a:newest"]),
            b.answers(&["a:kept", "a:newest"])
        );
    }
}

#[test]
fn a_hook_from_the_remote_never_runs() {
    let w = World::new();
    let (a, b) = w.pair("");
    let marker = w.dir.path().join("stranger-ran");
    // The docs once suggested `core.hooksPath .githooks`: a clone set up that way.
    a.git(&["config", "core.hooksPath", ".githooks"]);
    std::fs::create_dir_all(b.repo.join(".githooks")).unwrap();
    for hook in [
        "pre-push",
        "pre-commit",
        "post-checkout",
        "post-merge",
        "reference-transaction",
    ] {
        let path = b.repo.join(".githooks").join(hook);
        std::fs::write(
            &path,
            format!("#!/bin/sh\necho {hook} >> '{}'\n", marker.display()),
        )
        .unwrap();
        make_executable(&path);
    }
    push_by_hand(&b, "hooks");

    let r = a.sync("2026-03-01T09:00:00Z");
    let outside: Vec<&str> = r["outside_memory"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap())
        .collect();
    assert!(outside.contains(&".githooks/pre-push"), "{r}");
    assert!(a.repo.join(".githooks/pre-push").exists(), "checked out");
    // The next syncs commit, push, fetch and merge with the hooks in place.
    a.store("a:after", "one", "2026-03-01T09:10:00Z");
    let human = a.ok(&["sync"], Some("2026-03-01T09:10:01Z"));
    assert!(human.stdout.contains("sent 1 entry"), "{}", human.stdout);
    b.store("b:after", "two", "2026-03-01T09:20:00Z");
    b.sync("2026-03-01T09:20:01Z");
    a.store("a:again", "three", "2026-03-01T09:30:00Z");
    a.sync("2026-03-01T09:30:01Z");
    assert!(
        !marker.exists(),
        "a stranger's hook ran: {}",
        std::fs::read_to_string(&marker).unwrap_or_default()
    );
}

#[test]
fn gitattributes_from_the_remote_cannot_stop_clones_converging() {
    let w = World::new();
    let (a, b) = w.pair("");
    std::fs::write(
        b.repo.join(".gitattributes"),
        "memory/*.md merge=binary\nmemory/*.md -text\n",
    )
    .unwrap();
    push_by_hand(&b, "attributes");
    let r = a.sync("2026-03-01T09:00:00Z");
    assert!(
        r["outside_memory"].to_string().contains(".gitattributes"),
        "{r}"
    );
    // Parallel appends to one day file, from both clones, in both orders.
    for round in 0..2 {
        let (first, second) = if round == 0 { (&a, &b) } else { (&b, &a) };
        let t = |m: u32| format!("2026-03-02T1{round}:{m:02}:00Z");
        first.store(&format!("{}:r{round}", first.name), "first", &t(0));
        second.store(&format!("{}:r{round}", second.name), "second", &t(1));
        first.sync(&t(2));
        second.sync(&t(3));
        first.sync(&t(4));
    }
    let keys = ["a:r0", "b:r0", "a:r1", "b:r1"];
    assert_eq!(a.answers(&keys), b.answers(&keys));
    a.assert_settled();
    b.assert_settled();
}

/// A remote that commits an attribute rewriting memory files in a checkout (UTF-16:
/// every fresh clone would read no entry), or the checkout-only index folder with a
/// local scope's "rules", is refused before anything of it is merged; an attribute for
/// other files (Git LFS for images) is the repository's own business.
#[test]
fn a_remote_that_rewrites_memory_through_attributes_or_ships_the_index_is_refused() {
    for (file, text, named) in [
        (
            ".gitattributes",
            "*.png filter=lfs diff=lfs merge=lfs -text\nmemory/*.md working-tree-encoding=UTF-16\n",
            "working-tree-encoding=UTF-16",
        ),
        (".gitattributes", "*.md ident\n", "`ident`"),
        (
            ".mem7/local/memory/2026-03-01.md",
            "## rule:push\n",
            ".mem7/",
        ),
    ] {
        let w = World::new();
        let (a, b) = w.pair("");
        let path = b.repo.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        b.git(&["add", "-f", "--", file]);
        b.git(&["commit", "-q", "-m", "hostile"]);
        b.git(&["push", "-q", "origin", "main"]);
        let head = a.head();
        let before = work_tree(&a.repo);
        let r = a.run(&["sync"], Some("2026-03-01T09:00:00Z"));
        assert_eq!(r.code, 1, "{file}: {}{}", r.stdout, r.stderr);
        assert!(r.stderr.contains(named), "{file}: {}", r.stderr);
        assert_eq!(a.head(), head, "the clone stays as it was");
        assert_same_files(&before, &work_tree(&a.repo));
    }
    // Git LFS for images alone is not refused.
    let w = World::new();
    let (a, b) = w.pair("");
    std::fs::write(
        b.repo.join(".gitattributes"),
        "*.png filter=lfs diff=lfs merge=lfs -text\n",
    )
    .unwrap();
    push_by_hand(&b, "lfs");
    a.sync("2026-03-01T09:00:00Z");
}

/// A mem7.yaml a remote changes is the remote's word: sync says so, and what it widens
/// counts only after this clone's person approves the new content.
#[test]
fn a_settings_change_from_the_remote_is_reported_and_widens_nothing_until_approved() {
    let w = World::new();
    let (a, b) = w.pair("");
    let yaml = b.ws.join("mem7.yaml");
    let mut text = std::fs::read_to_string(&yaml).unwrap();
    text.push_str("trust:\n  agents: asserted\n");
    std::fs::write(&yaml, text).unwrap();
    push_by_hand(&b, "let agents assert");
    let r = a.run(&["sync"], Some("2026-03-01T09:00:00Z"));
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains("mem7.yaml changed in this sync"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("trust.agents: asserted"), "{}", r.stdout);
    assert!(r.stdout.contains("mem7 allow"), "{}", r.stdout);
    let import = |key: &str| {
        let mut cmd = a.command(&["import", "-"], Some("2026-03-01T10:00:00Z"));
        cmd.stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(
                format!("{{\"key\":\"{key}\",\"value\":\"v\",\"tier\":\"asserted\"}}\n").as_bytes(),
            )
            .unwrap();
        assert!(child.wait_with_output().unwrap().status.success());
        a.ok(&["recall", key, "--json"], Some("2026-03-01T10:00:01Z"))
            .json()[0]["tier"]
            .clone()
    };
    assert_eq!(import("dev:one"), "inferred");
    a.ok(&["allow"], None);
    assert_eq!(import("dev:two"), "asserted");
}

#[test]
fn a_credential_in_a_hand_written_tag_agent_or_note_never_reaches_git_sealed_or_not() {
    let token = "xoxb-2048-4096-AbCdEfGhIjKlMnOpQrStUvWx";
    for (case, addition) in [
        (
            "tag",
            format!(
                "\n## ops:note\n\n```mem7\nop: store\nrecorded: 2026-03-01T09:00:00Z\nagent: a person\ntags: [ops, {token}]\n```\n\n> plain\n\n---\n"
            ),
        ),
        (
            "agent",
            format!(
                "\n## ops:note\n\n```mem7\nop: store\nrecorded: 2026-03-01T09:00:00Z\nagent: bot {token}\n```\n\n> plain\n\n---\n"
            ),
        ),
        (
            "note",
            format!("\nA note by hand: the slack bot uses {token}\n"),
        ),
    ] {
        let w = World::new();
        let (a, _b) = w.pair("");
        let file = a.memory_file("2026-03-01");
        let mut text = std::fs::read_to_string(&file).unwrap();
        text.push_str(&addition);
        std::fs::write(&file, &text).unwrap();
        // Sealing accepts the bytes into the chain; it does not make them pushable.
        a.ok(&["seal"], Some("2026-03-17T07:00:00Z"));
        let remote = w.remote_head();
        let r = a.run(&["sync"], Some("2026-03-17T08:00:00Z"));
        assert_eq!(r.code, 2, "{case}: {}{}", r.stdout, r.stderr);
        assert!(r.stderr.contains("credential"), "{case}: {}", r.stderr);
        assert!(
            !r.stderr.contains("AbCdEfGh"),
            "{case}: the secret is shown"
        );
        assert_eq!(w.remote_head(), remote, "{case}: nothing pushed");
        let log = a.git(&["log", "--all", "-p"]);
        assert!(
            !log.contains("AbCdEfGh"),
            "{case}: the credential reached git"
        );
    }
}
