//! Clones that sync converge: the first push, the JSON report, two and three clones,
//! a push race, and the rest of the repository left as it was.

use super::*;

#[test]
fn first_sync_pushes_to_an_empty_remote_and_sets_the_upstream() {
    let w = World::new();
    let a = w.first("a", "");
    a.store("project:db", "postgres 16", "2026-03-01T08:00:00Z");
    assert_eq!(w.remote_head(), None);

    let r = a.sync("2026-03-01T08:00:01Z");
    assert_eq!(r["pushed"], true);
    assert_eq!(r["set_upstream"], true);
    assert_eq!(r["registered_driver"], true);
    assert_eq!(r["committed"]["entries"], 1);
    assert_eq!(r["sent"]["entries"], 1);
    assert_eq!(keys(&r["sent"]), ["project:db"]);
    assert_eq!(r["received"]["entries"], 0);
    assert_eq!(w.remote_head().as_deref(), Some(a.head().as_str()));
    assert_eq!(a.git(&["config", "branch.main.remote"]).trim(), "origin");
    assert_eq!(
        a.git(&["config", "branch.main.merge"]).trim(),
        "refs/heads/main"
    );
    assert!(
        a.git(&["config", "merge.union.driver"])
            .contains("merge-file")
    );
    // The workspace's own files went with the entries; the index did not.
    let files = a.git(&["ls-files"]);
    for f in [
        "mem7.yaml",
        ".gitattributes",
        ".gitignore",
        "memory/2026-03-01.md",
    ] {
        assert!(files.lines().any(|l| l == f), "{f} not committed:\n{files}");
    }
    assert!(!files.contains(".mem7/"), "{files}");
    assert_eq!(a.status(), "");
    a.assert_settled();

    // Nothing new: nothing sent, nothing received, no commit.
    let head = a.head();
    let again = a.ok(&["sync"], Some("2026-03-01T08:00:02Z"));
    assert!(
        again.stdout.contains("up to date with origin/main"),
        "{}",
        again.stdout
    );
    assert_eq!(a.head(), head);

    // A fresh clone answers alike.
    let fresh = w.clone("fresh", "");
    assert_eq!(fresh.answers(&["project:db"]), a.answers(&["project:db"]));
}

#[test]
fn the_json_report_has_its_documented_shape() {
    let w = World::new();
    let (a, b) = w.pair("");
    b.store("b:note", "from b", "2026-03-02T09:00:00Z");
    b.sync("2026-03-02T09:00:01Z");
    a.store("a:note", "from a", "2026-03-02T10:00:00Z");
    let r = a.sync("2026-03-02T10:00:01Z");
    let obj = r.as_object().unwrap();
    let mut fields: Vec<&str> = obj.keys().map(String::as_str).collect();
    fields.sort();
    assert_eq!(
        fields,
        [
            "ahead",
            "attempts",
            "branch",
            "committed",
            "head",
            "outside_memory",
            "pushed",
            "received",
            "registered_driver",
            "remote",
            "remote_branch",
            "restored",
            "sent",
            "set_upstream",
            "verify_warnings"
        ]
    );
    assert_eq!(r["restored"], serde_json::json!([]));
    assert_eq!(r["outside_memory"], serde_json::json!([]));
    assert_eq!(r["remote"], "origin");
    assert_eq!(r["branch"], "main");
    assert_eq!(r["remote_branch"], "main");
    assert_eq!(r["head"], a.head());
    assert_eq!(r["attempts"], 1);
    assert_eq!(r["pushed"], true);
    for side in ["committed", "sent", "received"] {
        let s = r[side].as_object().unwrap();
        assert!(s["commits"].is_u64() && s["entries"].is_u64() && s["keys"].is_array());
    }
    assert_eq!(keys(&r["committed"]), ["a:note"]);
    assert_eq!(keys(&r["received"]), ["b:note"]);
    assert_eq!(r["received"]["commits"], 1);
    assert_eq!(keys(&r["sent"]), ["a:note"]);
    // A's commit and the merge commit.
    assert_eq!(r["sent"]["commits"], 2);
    assert_eq!(r["ahead"], serde_json::json!([]));
    // The parallel appends are a `merge` warning, which does not stop a sync.
    assert_eq!(r["verify_warnings"], 1);
}

/// Two clones write (the same key too, at different times) and sync in one order or
/// the other: after two rounds they, and a fresh clone, answer alike.
fn two_clones_converge(a_first: bool) {
    let w = World::new();
    let (a, b) = w.pair("");
    a.store("shared:host", "railway", "2026-03-05T09:00:00Z");
    b.store("shared:host", "cloudflare", "2026-03-05T10:00:00Z");
    a.store("a:only", "written on a", "2026-03-05T11:00:00Z");
    b.store("b:only", "written on b", "2026-03-05T12:00:00Z");
    b.store("shared:host", "fly.io", "2026-03-06T08:00:00Z");
    let (x, y) = if a_first { (&a, &b) } else { (&b, &a) };
    for round in 0..2 {
        let now = format!("2026-03-07T0{round}:00:00Z");
        x.sync(&now);
        y.sync(&now);
    }
    let keys = ["shared:host", "a:only", "b:only", "seed"];
    assert_eq!(a.answers(&keys), b.answers(&keys));
    let history = a.ok(&["history", "shared:host", "--json"], None).json();
    let values: Vec<&str> = history
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["value"].as_str().unwrap())
        .collect();
    for v in ["railway", "cloudflare", "fly.io"] {
        assert!(values.contains(&v), "{values:?}");
    }
    let now = a.ok(&["recall", "shared:host"], Some("2026-12-31T00:00:00Z"));
    assert!(now.stdout.contains("fly.io"), "{}", now.stdout);
    a.assert_settled();
    b.assert_settled();
    assert_eq!(a.head(), b.head());
    let fresh = w.clone("fresh", "");
    assert_eq!(fresh.answers(&keys), a.answers(&keys));
    fresh.assert_settled();
}

#[test]
fn two_clones_converge_when_a_syncs_first() {
    two_clones_converge(true);
}

#[test]
fn two_clones_converge_when_b_syncs_first() {
    two_clones_converge(false);
}

#[test]
fn three_clones_converge() {
    let w = World::new();
    let (a, b) = w.pair("");
    let c = w.clone("c", "");
    a.store("team:lead", "ana", "2026-03-10T09:00:00Z");
    b.store("team:lead", "bo", "2026-03-10T09:30:00Z");
    c.store("team:lead", "cy", "2026-03-10T10:00:00Z");
    c.store("c:fact", "from c", "2026-03-10T10:05:00Z");
    b.store("b:fact", "from b", "2026-03-10T10:10:00Z");
    a.store("a:fact", "from a", "2026-03-10T10:15:00Z");
    for round in 0..2 {
        for (i, x) in [&c, &a, &b].iter().enumerate() {
            x.sync(&format!("2026-03-11T0{round}:0{i}:00Z"));
        }
    }
    let keys = ["team:lead", "a:fact", "b:fact", "c:fact"];
    let expected = a.answers(&keys);
    assert_eq!(b.answers(&keys), expected);
    assert_eq!(c.answers(&keys), expected);
    let fresh = w.clone("fresh", "");
    assert_eq!(fresh.answers(&keys), expected);
    for x in [&a, &b, &c, &fresh] {
        x.assert_settled();
    }
    let lead = a.ok(&["recall", "team:lead"], Some("2026-12-31T00:00:00Z"));
    assert!(lead.stdout.contains("cy"), "{}", lead.stdout);
}

#[test]
fn a_push_race_is_resolved_by_merging_again() {
    let w = World::new();
    let (a, b) = w.pair("");

    // The simple form: A merges without pushing, B pushes meanwhile, A syncs again.
    a.store("a:first", "one", "2026-03-12T09:00:00Z");
    let held = a.ok(
        &["sync", "--no-push", "--json"],
        Some("2026-03-12T09:00:01Z"),
    );
    let held = held.json();
    assert_eq!(held["pushed"], false);
    assert_eq!(held["sent"]["entries"], 1, "still to send: {held}");
    let remote_before = w.remote_head();
    assert_ne!(remote_before.as_deref(), Some(a.head().as_str()));
    b.store("b:first", "two", "2026-03-12T09:30:00Z");
    b.sync("2026-03-12T09:30:01Z");
    let r = a.sync("2026-03-12T10:00:00Z");
    assert_eq!(r["pushed"], true);
    assert_eq!(keys(&r["received"]), ["b:first"]);
    assert_eq!(w.remote_head().as_deref(), Some(a.head().as_str()));

    // The real race: B pushes after A fetched, while A's push is under way. mem7 runs
    // no hook, so the race comes from a `git` on A's PATH that runs B's sync once
    // before the first push it sees goes through. A's push is refused; A fetches,
    // merges again and pushes.
    b.sync("2026-03-12T10:00:01Z");
    b.store("b:racer", "pushed first", "2026-03-12T11:00:00Z");
    let bin = w.dir.path().join("a-bin");
    std::fs::create_dir_all(&bin).unwrap();
    let marker = w.dir.path().join("raced");
    let real_git = which("git");
    let wrapper = bin.join("git");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\n\
             case \" $* \" in\n\
               *\" push \"*)\n\
                 if [ ! -e '{marker}' ]; then\n\
                   touch '{marker}'\n\
                   (unset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE GIT_PREFIX GIT_CONFIG_PARAMETERS\n\
                    cd '{b}' && MEM7_WORKSPACE='{b}' MEM7_NOW=2026-03-12T11:00:01Z '{mem7}' sync >&2) || exit 1\n\
                 fi;;\n\
             esac\n\
             exec '{git}' \"$@\"\n",
            marker = marker.display(),
            b = b.ws.display(),
            mem7 = env!("CARGO_BIN_EXE_mem7"),
            git = real_git.display(),
        ),
    )
    .unwrap();
    make_executable(&wrapper);
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    a.store("a:racer", "pushed second", "2026-03-12T11:30:00Z");
    let mut cmd = a.command(&["sync", "--json"], Some("2026-03-12T11:30:01Z"));
    cmd.env("PATH", &path);
    let run = world::finish(cmd.output().unwrap());
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let r = run.json();
    assert!(marker.exists(), "the race was not staged");
    assert_eq!(r["attempts"], 2, "{r}");
    assert_eq!(r["pushed"], true);
    assert!(keys(&r["received"]).contains(&"b:racer".to_string()), "{r}");
    assert_eq!(w.remote_head().as_deref(), Some(a.head().as_str()));
    b.sync("2026-03-12T12:00:00Z");
    let keys = ["a:racer", "b:racer", "a:first", "b:first"];
    assert_eq!(a.answers(&keys), b.answers(&keys));
    a.assert_settled();
    b.assert_settled();
}

#[test]
fn other_files_of_the_repository_are_left_as_they_were() {
    let w = World::new();
    // The workspace is a subfolder of a project repository.
    let a = w.first("a", "mem");
    std::fs::write(a.repo.join("README.md"), "# project\n").unwrap();
    std::fs::write(a.repo.join("tracked.txt"), "v1\n").unwrap();
    a.git(&["add", "README.md", "tracked.txt"]);
    a.git(&["commit", "-q", "-m", "project"]);
    a.store("seed", "first", "2026-03-13T08:00:00Z");
    a.sync("2026-03-13T08:00:01Z");
    let b = w.clone("b", "mem");
    b.store("b:note", "from b", "2026-03-13T09:00:00Z");
    b.sync("2026-03-13T09:00:01Z");

    // A person's work in progress in A: a staged new file, a staged change, an
    // unstaged change, an untracked file, and a note in memory/ that is not mem7's.
    std::fs::write(a.repo.join("staged.txt"), "staged\n").unwrap();
    a.git(&["add", "staged.txt"]);
    std::fs::write(a.repo.join("README.md"), "# project\n\nstaged edit\n").unwrap();
    a.git(&["add", "README.md"]);
    std::fs::write(a.repo.join("tracked.txt"), "v2, not staged\n").unwrap();
    std::fs::write(a.repo.join("scratch.txt"), "untracked\n").unwrap();
    std::fs::write(a.ws.join("memory/notes.md"), "my notes\n").unwrap();
    a.store("a:note", "from a", "2026-03-13T10:00:00Z");
    let start = a.head();
    let staged = a.git(&["diff", "--cached"]);
    let unstaged_other = a.git(&["diff", "--", "tracked.txt"]);
    let status_other: Vec<String> = a
        .status()
        .lines()
        .filter(|l| !l.contains("mem/memory/2026"))
        .map(str::to_string)
        .collect();

    let r = a.sync("2026-03-13T10:00:01Z");
    assert_eq!(keys(&r["received"]), ["b:note"]);
    assert_eq!(keys(&r["committed"]), ["a:note"]);
    assert_eq!(a.git(&["diff", "--cached"]), staged);
    assert_eq!(a.git(&["diff", "--", "tracked.txt"]), unstaged_other);
    let status_after: Vec<String> = a.status().lines().map(str::to_string).collect();
    assert_eq!(status_after, status_other);
    assert_eq!(
        std::fs::read_to_string(a.repo.join("scratch.txt")).unwrap(),
        "untracked\n"
    );
    // What sync committed is memory, and only memory.
    let changed = a.git(&["diff", "--name-only", &start, "HEAD"]);
    assert_eq!(changed.trim(), "mem/memory/2026-03-13.md", "{changed}");
    // B got A's entry and none of A's other files.
    b.sync("2026-03-13T10:30:00Z");
    assert!(!b.repo.join("staged.txt").exists());
    assert_eq!(
        std::fs::read_to_string(b.repo.join("README.md")).unwrap(),
        "# project\n"
    );
    let keys = ["a:note", "b:note", "seed"];
    assert_eq!(a.answers(&keys), b.answers(&keys));
}
