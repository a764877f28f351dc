//! What sync refuses, changing nothing: no git, no remote or branch, conflicts it cannot
//! merge, tampered entries, credentials written by hand; and entries recorded ahead.

use super::*;

#[test]
fn outside_git_it_exits_2_and_names_the_fix() {
    let w = World::new();
    let ws = w.dir.path().join("plain");
    let c = w.clone_at("plain", ws.clone(), "");
    c.ok(&["init", ws.to_str().unwrap()], None);
    c.store("k", "v", "2026-03-14T08:00:00Z");
    let before = work_tree(&ws);
    let r = c.run(&["sync"], None);
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("not inside a git repository"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("git init"), "{}", r.stderr);
    assert_same_files(&before, &work_tree(&ws));
    assert!(!ws.join(".git").exists());
}

#[test]
fn without_a_remote_or_a_branch_it_exits_2_and_changes_nothing() {
    let w = World::new();
    let repo = w.dir.path().join("solo");
    std::fs::create_dir_all(&repo).unwrap();
    w.git(&repo, &["init", "-q", "-b", "main"]);
    w.identity(&repo, "solo");
    let c = w.clone_at("solo", repo.clone(), "");
    c.ok(&["init", repo.to_str().unwrap()], None);
    c.git(&["add", "-A"]);
    c.git(&["commit", "-q", "-m", "workspace"]);
    c.store("k", "v", "2026-03-14T08:00:00Z");
    let (head, status) = (c.head(), c.status());
    let r = c.run(&["sync"], None);
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("no git remote"), "{}", r.stderr);
    assert!(r.stderr.contains("git remote add origin"), "{}", r.stderr);
    assert_eq!((c.head(), c.status()), (head.clone(), status.clone()));

    // A named remote that does not exist.
    let (a, _b) = w.pair("");
    a.store("k", "v", "2026-03-14T09:00:00Z");
    let (head, status, remote) = (a.head(), a.status(), w.remote_head());
    let r = a.run(&["sync", "--remote", "upstream"], None);
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("no git remote named `upstream`"),
        "{}",
        r.stderr
    );
    assert_eq!(
        (a.head(), a.status(), w.remote_head()),
        (head, status, remote)
    );

    // A detached HEAD.
    a.git(&["checkout", "-q", "--detach"]);
    let (head, status, remote) = (a.head(), a.status(), w.remote_head());
    let r = a.run(&["sync"], None);
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("detached"), "{}", r.stderr);
    assert!(r.stderr.contains("git switch"), "{}", r.stderr);
    assert_eq!(
        (a.head(), a.status(), w.remote_head()),
        (head, status, remote)
    );
}

#[test]
fn conflicts_it_cannot_merge_leave_the_clone_as_it_was() {
    let w = World::new();
    let (a, b) = w.pair("");
    // A file outside memory changed on both sides.
    std::fs::write(b.repo.join("notes.txt"), "from b\n").unwrap();
    b.git(&["add", "notes.txt"]);
    b.git(&["commit", "-q", "-m", "b's notes"]);
    b.git(&["push", "-q"]);
    std::fs::write(a.repo.join("notes.txt"), "from a\n").unwrap();
    a.git(&["add", "notes.txt"]);
    a.git(&["commit", "-q", "-m", "a's notes"]);
    a.store("a:new", "an entry to commit", "2026-03-15T08:00:00Z");
    let (head, status, remote) = (a.head(), a.status(), w.remote_head());
    let r = a.run(&["sync"], Some("2026-03-15T08:00:01Z"));
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("cannot merge origin/main"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("notes.txt"), "{}", r.stderr);
    assert!(r.stderr.contains("git merge origin/main"), "{}", r.stderr);
    assert_eq!(
        (a.head(), a.status(), w.remote_head()),
        (head, status, remote)
    );
    assert!(!a.repo.join(".git/MERGE_HEAD").exists());

    // The remote changes a file this clone has uncommitted edits to: refused before
    // anything is pushed.
    let w = World::new();
    let (a, b) = w.pair("");
    std::fs::write(a.repo.join("notes.txt"), "v1\n").unwrap();
    a.git(&["add", "notes.txt"]);
    a.git(&["commit", "-q", "-m", "notes"]);
    a.sync("2026-03-15T09:00:00Z");
    b.sync("2026-03-15T09:00:01Z");
    std::fs::write(b.repo.join("notes.txt"), "v2 from b\n").unwrap();
    b.git(&["commit", "-q", "-am", "b's notes"]);
    b.git(&["push", "-q"]);
    std::fs::write(a.repo.join("notes.txt"), "work in progress\n").unwrap();
    a.store("a:new", "to send", "2026-03-15T10:00:00Z");
    let (head, status, remote) = (a.head(), a.status(), w.remote_head());
    let r = a.run(&["sync"], Some("2026-03-15T10:00:01Z"));
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("notes.txt"), "{}", r.stderr);
    assert!(r.stderr.contains("git stash"), "{}", r.stderr);
    assert_eq!(
        (a.head(), a.status(), w.remote_head()),
        (head, status, remote)
    );

    // Both sides edited the same old entry (committed with plain git): mem7's driver
    // cannot choose.
    let w = World::new();
    let (a, b) = w.pair("");
    let file = a.memory_file("2026-03-01");
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(
        b.memory_file("2026-03-01"),
        text.replace("> the first fact", "> b's fix"),
    )
    .unwrap();
    b.git(&["commit", "-q", "-am", "b edits"]);
    b.git(&["push", "-q"]);
    std::fs::write(&file, text.replace("> the first fact", "> a's fix")).unwrap();
    a.git(&["commit", "-q", "-am", "a edits"]);
    let (head, status, remote) = (a.head(), a.status(), w.remote_head());
    let r = a.run(&["sync"], None);
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("both sides edited the same old entry"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("memory/2026-03-01.md"), "{}", r.stderr);
    assert_eq!(
        (a.head(), a.status(), w.remote_head()),
        (head, status, remote)
    );
}

#[test]
fn a_tampered_entry_is_never_pushed() {
    let w = World::new();
    let (a, b) = w.pair("");
    // A hand edit of a committed entry, not yet committed.
    let file = a.memory_file("2026-03-01");
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, text.replace("> the first fact", "> a forged fact")).unwrap();
    a.store("a:new", "honest", "2026-03-16T08:00:00Z");
    let (head, status, remote) = (a.head(), a.status(), w.remote_head());
    let r = a.run(&["sync"], Some("2026-03-16T08:00:01Z"));
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("memory/2026-03-01.md:1: `seed` changed"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("mem7 seal"), "{}", r.stderr);
    assert_eq!(
        (a.head(), a.status(), w.remote_head()),
        (head, status, remote)
    );
    let json = a.run(&["sync", "--json"], Some("2026-03-16T08:00:02Z"));
    assert_eq!(json.code, 1);
    let v = json.json();
    assert_eq!(v["refused"], true);
    assert_eq!(v["by"], "local");
    assert_eq!(v["findings"][0]["kind"], "changed");
    assert_eq!(v["findings"][0]["line"], 1);

    // An entry removed from the end of a file leaves a valid, shorter chain: sync
    // still refuses to commit the removal.
    std::fs::write(&file, &text).unwrap();
    let day = a.memory_file("2026-03-16");
    std::fs::remove_file(&day).unwrap();
    b.store("b:new", "x", "2026-03-16T09:00:00Z");
    let r = b.sync("2026-03-16T09:00:01Z");
    assert_eq!(r["pushed"], true);
    let b_text = std::fs::read_to_string(b.memory_file("2026-03-16")).unwrap();
    let cut = b_text.trim_end().rfind("\n## ").map_or(0, |i| i + 1);
    std::fs::write(b.memory_file("2026-03-16"), &b_text[..cut]).unwrap();
    let (head, remote) = (b.head(), w.remote_head());
    let r = b.run(&["sync"], Some("2026-03-16T09:00:02Z"));
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("removed"), "{}", r.stderr);
    assert_eq!((b.head(), w.remote_head()), (head, remote.clone()));
    std::fs::write(b.memory_file("2026-03-16"), &b_text).unwrap();

    // Tampering that arrives from the remote (pushed with plain git) is not merged,
    // and not pushed on.
    let b_file = b.memory_file("2026-03-01");
    let b_text = std::fs::read_to_string(&b_file).unwrap();
    std::fs::write(&b_file, b_text.replace("> the first fact", "> rewritten")).unwrap();
    b.git(&["commit", "-q", "-am", "rewrite history"]);
    b.git(&["push", "-q"]);
    let remote = w.remote_head();
    let (head, status) = (a.head(), a.status());
    let before = work_tree(&a.ws);
    let r = a.run(&["sync"], Some("2026-03-16T10:00:00Z"));
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("merged with origin/main"), "{}", r.stderr);
    assert!(r.stderr.contains("`seed` changed"), "{}", r.stderr);
    assert_eq!(
        (a.head(), a.status(), w.remote_head()),
        (head, status, remote)
    );
    assert_same_files(&before, &work_tree(&a.ws));
}

#[test]
fn a_credential_written_by_hand_is_refused_before_it_is_committed() {
    let w = World::new();
    let (a, _b) = w.pair("");
    let file = a.memory_file("2026-03-01");
    let mut text = std::fs::read_to_string(&file).unwrap();
    let lines = text.lines().count();
    text.push_str(
        "\n## deploy:token\n\n```mem7\nop: store\nrecorded: 2026-03-01T09:00:00Z\nagent: a person\n```\n\n> ghp_abcdefghijklmnopqrstuvwxyz0123456789\n\n---\n",
    );
    std::fs::write(&file, &text).unwrap();
    let (head, status, remote) = (a.head(), a.status(), w.remote_head());
    let r = a.run(&["sync"], Some("2026-03-17T08:00:00Z"));
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    let at = format!("memory/2026-03-01.md:{}:", lines + 2);
    assert!(r.stderr.contains(&at), "{at} in {}", r.stderr);
    assert!(r.stderr.contains("looks like a credential"), "{}", r.stderr);
    assert!(r.stderr.contains("GitHub token"), "{}", r.stderr);
    assert!(
        !r.stderr.contains("abcdefghijklmnop"),
        "the secret itself is never shown"
    );
    assert!(r.stderr.contains("Delete that text"), "{}", r.stderr);
    assert_eq!(
        (a.head(), a.status(), w.remote_head()),
        (head, status, remote)
    );
    let log = a.git(&["log", "--all", "-p"]);
    assert!(!log.contains("ghp_abc"), "the credential reached git");

    // One stored on purpose (`--allow-secret`, recorded in its envelope) goes through.
    let text = text.replace(
        "\n## deploy:token\n\n```mem7\nop: store\nrecorded: 2026-03-01T09:00:00Z\nagent: a person\n```\n\n> ghp_abcdefghijklmnopqrstuvwxyz0123456789\n\n---\n",
        "",
    );
    std::fs::write(&file, text).unwrap();
    a.ok(
        &[
            "store",
            "ci:example_token",
            "ghp_EXAMPLEexampleEXAMPLEexample0123456",
            "--allow-secret",
        ],
        Some("2026-03-17T09:00:00Z"),
    );
    let r = a.sync("2026-03-17T09:00:01Z");
    assert_eq!(keys(&r["sent"]), ["ci:example_token"]);
}

#[test]
fn entries_recorded_ahead_of_the_clock_are_reported() {
    let w = World::new();
    let (a, b) = w.pair("");
    // B's clock runs an hour fast.
    b.store("fast:clock", "from the future", "2026-03-18T10:00:00Z");
    b.sync("2026-03-18T10:00:01Z");
    let r = a.sync("2026-03-18T09:00:00Z");
    let ahead = r["ahead"].as_array().unwrap();
    assert_eq!(ahead.len(), 1, "{r}");
    assert_eq!(ahead[0]["key"], "fast:clock");
    assert_eq!(ahead[0]["file"], "memory/2026-03-18.md");
    assert_eq!(ahead[0]["recorded"], "2026-03-18T10:00:00Z");
    assert_eq!(ahead[0]["ahead_seconds"], 3600);
    let line = ahead[0]["line"].as_u64().unwrap();
    let text = std::fs::read_to_string(a.memory_file("2026-03-18")).unwrap();
    assert_eq!(
        text.lines().nth(line as usize - 1),
        Some("## fast:clock"),
        "line {line}"
    );
    // Less than five minutes ahead is not reported.
    b.sync("2026-03-18T10:00:02Z");
    b.store("near", "close enough", "2026-03-18T10:04:00Z");
    b.sync("2026-03-18T10:04:01Z");
    let r = a.sync("2026-03-18T10:00:00Z");
    assert_eq!(r["ahead"], serde_json::json!([]), "{r}");
}
