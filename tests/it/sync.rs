//! `mem7 sync` through the real binary, with real git: a bare repository on local disk
//! and clones of it, each a mem7 workspace. Git runs with a scratch HOME and without the
//! system config, so the developer's settings do not leak in.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::world::{self, Run, finish};

/// A bare repository and the clones around it, in one scratch directory.
struct World {
    dir: tempfile::TempDir,
    bare: PathBuf,
}

/// One clone: its repository and the workspace inside it (the top or a subfolder).
struct Clone {
    /// What its commands read when they name no time.
    clock: world::Clock,
    world_home: PathBuf,
    name: String,
    repo: PathBuf,
    ws: PathBuf,
}

impl World {
    fn new() -> World {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("home")).unwrap();
        let bare = dir.path().join("memory.git");
        let w = World { dir, bare };
        w.git(
            w.dir.path(),
            &["init", "-q", "--bare", "-b", "main", "memory.git"],
        );
        w
    }

    fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    fn git(&self, dir: &Path, args: &[&str]) -> String {
        let r = world::git(dir, &self.home(), args);
        assert_eq!(r.code, 0, "git {args:?} failed: {}{}", r.stdout, r.stderr);
        r.stdout
    }

    fn identity(&self, repo: &Path, name: &str) {
        self.git(repo, &["config", "user.name", name]);
        self.git(
            repo,
            &["config", "user.email", &format!("{name}@example.com")],
        );
    }

    /// A new repository (not yet pushed) whose remote is the bare one, with a workspace
    /// at `sub` inside it (`""`: at the top).
    fn first(&self, name: &str, sub: &str) -> Clone {
        let repo = self.dir.path().join(name);
        std::fs::create_dir_all(&repo).unwrap();
        self.git(&repo, &["init", "-q", "-b", "main"]);
        self.identity(&repo, name);
        self.git(
            &repo,
            &["remote", "add", "origin", self.bare.to_str().unwrap()],
        );
        let c = self.clone_at(name, repo, sub);
        c.ok(&["init", c.ws.to_str().unwrap()], None);
        c
    }

    /// `git clone` of the bare repository.
    fn clone(&self, name: &str, sub: &str) -> Clone {
        self.git(
            self.dir.path(),
            &["clone", "-q", self.bare.to_str().unwrap(), name],
        );
        let repo = self.dir.path().join(name);
        self.identity(&repo, name);
        self.clone_at(name, repo, sub)
    }

    fn clone_at(&self, name: &str, repo: PathBuf, sub: &str) -> Clone {
        let ws = if sub.is_empty() {
            repo.clone()
        } else {
            repo.join(sub)
        };
        std::fs::create_dir_all(&ws).unwrap();
        Clone {
            clock: world::Clock::pinned(),
            world_home: self.home(),
            name: name.to_string(),
            repo,
            ws,
        }
    }

    /// The commit the bare repository's `main` is at (`None` before the first push).
    fn remote_head(&self) -> Option<String> {
        let r = world::git(
            &self.bare,
            &self.home(),
            &["rev-parse", "-q", "--verify", "refs/heads/main"],
        );
        (r.code == 0).then(|| r.stdout.trim().to_string())
    }

    /// Two clones sharing a history: `a` made the workspace and pushed it, `b` cloned.
    fn pair(&self, sub: &str) -> (Clone, Clone) {
        let a = self.first("a", sub);
        a.store("seed", "the first fact", "2026-03-01T08:00:00Z");
        a.sync("2026-03-01T08:00:01Z");
        let b = self.clone("b", sub);
        (a, b)
    }
}

impl Clone {
    fn command(&self, args: &[&str], now: Option<&str>) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_mem7"));
        cmd.args(args).current_dir(&self.ws);
        world::isolated(&mut cmd, &self.world_home);
        cmd.env("MEM7_WORKSPACE", &self.ws)
            .env("MEM7_AGENT", &self.name)
            .env(
                "MEM7_NOW",
                now.map_or_else(|| self.clock.next(), str::to_string),
            );
        cmd
    }

    fn run(&self, args: &[&str], now: Option<&str>) -> Run {
        finish(self.command(args, now).output().unwrap())
    }

    fn ok(&self, args: &[&str], now: Option<&str>) -> Run {
        let r = self.run(args, now);
        assert_eq!(
            r.code, 0,
            "{}: mem7 {args:?} failed: {}{}",
            self.name, r.stdout, r.stderr
        );
        r
    }

    fn store(&self, key: &str, value: &str, now: &str) {
        self.ok(&["store", key, value], Some(now));
    }

    /// `mem7 sync --json`, which must succeed; returns the report.
    fn sync(&self, now: &str) -> serde_json::Value {
        self.ok(&["sync", "--json"], Some(now)).json()
    }

    fn git(&self, args: &[&str]) -> String {
        let r = self.git_run(args);
        assert_eq!(r.code, 0, "git {args:?} failed: {}{}", r.stdout, r.stderr);
        r.stdout
    }

    fn git_run(&self, args: &[&str]) -> Run {
        world::git(&self.repo, &self.world_home, args)
    }

    fn head(&self) -> String {
        self.git(&["rev-parse", "HEAD"]).trim().to_string()
    }

    fn status(&self) -> String {
        self.git(&["status", "--porcelain", "--untracked-files=all"])
    }

    /// Answers that must agree across clones (read at one fixed instant).
    fn answers(&self, keys: &[&str]) -> Vec<String> {
        let at = Some("2026-12-31T00:00:00Z");
        let mut out = vec![self.ok(&["list", "--json"], at).stdout];
        for k in keys {
            out.push(self.ok(&["history", k, "--json"], at).stdout);
            out.push(self.ok(&["recall", k], at).stdout);
        }
        out
    }

    /// Whether the clone is settled: verify passes and git lists no memory file.
    fn assert_settled(&self) {
        let v = self.run(&["verify"], None);
        assert_eq!(v.code, 0, "{}: verify: {}{}", self.name, v.stdout, v.stderr);
        let status = self.status();
        assert!(
            !status.lines().any(|l| l.contains("memory/")),
            "{}: memory files not committed:\n{status}",
            self.name
        );
    }

    /// Whether the workspace's memory verifies (whatever git says of other files).
    fn assert_settled_memory(&self) {
        let v = self.run(&["verify"], None);
        assert_eq!(v.code, 0, "{}: verify: {}{}", self.name, v.stdout, v.stderr);
    }

    fn memory_file(&self, day: &str) -> PathBuf {
        self.ws.join("memory").join(format!("{day}.md"))
    }
}

/// The work tree's files (without `.git` and the index), for "nothing changed" checks.
fn work_tree(dir: &Path) -> Vec<(String, Vec<u8>)> {
    world::snapshot(dir)
        .into_iter()
        .filter(|(name, _)| !name.starts_with(".git/"))
        .collect()
}

fn assert_same_files(before: &[(String, Vec<u8>)], after: &[(String, Vec<u8>)]) {
    let names = |v: &[(String, Vec<u8>)]| v.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
    assert_eq!(names(before), names(after), "files added or removed");
    for ((name, a), (_, b)) in before.iter().zip(after) {
        assert!(a == b, "{name} changed");
    }
}

fn which(program: &str) -> PathBuf {
    let out = Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .output()
        .unwrap();
    PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
}

fn make_executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn keys(v: &serde_json::Value) -> Vec<String> {
    v["keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k.as_str().unwrap().to_string())
        .collect()
}

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

#[test]
fn watch_syncs_on_a_timer_and_picks_up_what_others_pushed() {
    let w = World::new();
    let (a, b) = w.pair("");
    let mut watch = a
        .command(&["watch", "--interval", "1", "--sync-every", "1s"], None)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = world::lines_of(watch.stdout.take().unwrap());
    let err = world::lines_of(watch.stderr.take().unwrap());
    let mut log = Vec::new();
    world::wait_for_line(&out, &mut log, |l| {
        l.contains("syncing through git every 1s")
    });

    b.store("b:pushed", "seen by a's watch", "2026-03-19T08:00:00Z");
    b.sync("2026-03-19T08:00:01Z");
    world::wait_for_line(&out, &mut log, |l| {
        l.contains("sync: received 1 entry") && l.contains("`b:pushed`")
    });
    let recall = a.ok(&["recall", "b:pushed"], Some("2026-12-31T00:00:00Z"));
    assert!(
        recall.stdout.contains("seen by a's watch"),
        "{}",
        recall.stdout
    );

    // What A writes while watching is sent on the next tick.
    a.store("a:watched", "sent by the timer", "2026-03-19T09:00:00Z");
    world::wait_for_line(&out, &mut log, |l| {
        l.contains("sync: sent 1 entry") && l.contains("`a:watched`")
    });
    b.sync("2026-03-19T09:00:01Z");
    let got = b.ok(&["recall", "a:watched"], Some("2026-12-31T00:00:00Z"));
    assert!(got.stdout.contains("sent by the timer"), "{}", got.stdout);

    // A failing sync is logged, and watching goes on.
    a.git(&["remote", "set-url", "origin", "/nonexistent/memory.git"]);
    let mut errors = Vec::new();
    world::wait_for_line(&err, &mut errors, |l| l.contains("mem7 watch: sync failed"));
    assert!(
        watch.try_wait().unwrap().is_none(),
        "watch stopped: {errors:#?}"
    );
    a.append_entry_by_hand("by:hand", "still watched");
    world::wait_for_line(&out, &mut log, |l| l.contains("applied 1 new entry"));
    let _ = watch.kill();
    let _ = watch.wait();
}

impl Clone {
    /// Appends an unsealed entry by hand, recorded far ahead so that it sorts last.
    fn append_entry_by_hand(&self, key: &str, value: &str) {
        // Appended in one write, as an editor's save or git would leave it: rewriting
        // the whole file lets a watcher see it cut short in between (and rebuild).
        use std::io::Write;
        let file = self.memory_file("2026-03-01");
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&file)
            .unwrap();
        f.write_all(format!(
            "\n## {key}\n\n```mem7\nop: store\nrecorded: 2099-01-01T00:00:00Z\nagent: a person\n```\n\n> {value}\n\n---\n"
        ).as_bytes())
        .unwrap();
    }
}

#[test]
fn watch_takes_the_period_from_mem7_yaml_and_refuses_nonsense() {
    let w = World::new();
    let (a, _b) = w.pair("");
    for bad in ["5x", "0s", "5", "soon"] {
        let r = a.run(&["watch", "--sync-every", bad], None);
        assert_eq!(r.code, 2, "{bad}: {}{}", r.stdout, r.stderr);
        assert!(r.stderr.contains("--sync-every"), "{}", r.stderr);
    }
    let config = a.ws.join("mem7.yaml");
    std::fs::write(&config, "sync:\n  every: whenever\n").unwrap();
    let r = a.run(&["watch"], None);
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("mem7.yaml: sync.every"), "{}", r.stderr);

    std::fs::write(&config, "sync:\n  every: 2s\n").unwrap();
    let mut watch = a
        .command(&["watch", "--interval", "1"], None)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let out = world::lines_of(watch.stdout.take().unwrap());
    let mut log = Vec::new();
    world::wait_for_line(&out, &mut log, |l| {
        l.contains("syncing through git every 2s")
    });
    // It syncs at once without being told to (nothing to do here).
    world::wait_for_line(&out, &mut log, |l| l.contains(" sync: "));
    let _ = watch.kill();
    let _ = watch.wait();
}

mod mcp {
    use super::*;
    use rmcp::ServiceExt;
    use rmcp::model::{CallToolRequestParams, ClientConfig};
    use serde_json::json;

    async fn call(
        client: &rmcp::service::RunningService<rmcp::RoleClient, ClientConfig>,
        tool: &str,
        args: serde_json::Value,
    ) -> String {
        let result = client
            .call_tool(
                CallToolRequestParams::new(tool.to_string())
                    .with_arguments(args.as_object().cloned().unwrap_or_default()),
            )
            .await
            .unwrap_or_else(|e| panic!("{tool}: {e}"));
        result
            .content
            .iter()
            .filter_map(|c| c.as_text().map(|t| t.text.clone()))
            .collect()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_mcp_server_sees_what_a_sync_brought_in() {
        let w = World::new();
        let (a, b) = w.pair("");
        let cmd = tokio::process::Command::from(a.command(&["mcp"], None));
        let transport = rmcp::transport::TokioChildProcess::new(cmd).unwrap();
        let client = ClientConfig::default().serve(transport).await.unwrap();
        let before = call(&client, "memory_recall", json!({"key": "b:remote"})).await;
        assert!(!before.contains("over the wire"), "{before}");

        b.store("b:remote", "over the wire", "2026-03-20T08:00:00Z");
        b.sync("2026-03-20T08:00:01Z");
        a.sync("2026-03-20T08:00:02Z");
        let deadline = Instant::now() + world::PATIENCE;
        loop {
            let got = call(&client, "memory_recall", json!({"key": "b:remote"})).await;
            if got.contains("over the wire") {
                break;
            }
            assert!(Instant::now() < deadline, "the server never saw it: {got}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let hits = call(&client, "memory_search", json!({"query": "wire"})).await;
        assert!(hits.contains("b:remote"), "{hits}");
        client.cancel().await.unwrap();
    }
}

/// Two clones store the same key at the same instant; clone A merges B and clone B
/// merges A with plain git (the files come out in opposite orders), and then, through
/// sync, they converge: every one of those answers is the same, decided by the entries'
/// content and not by their place in the files.
#[test]
fn equal_instants_merged_either_way_answer_alike() {
    let w = World::new();
    let (a, b) = w.pair("");
    // On the day of the seed entry, so both sides change one existing file.
    let t = "2026-03-01T09:00:00Z";
    a.store("k", "from-a", t);
    b.store("k", "from-b", t);
    for c in [&a, &b] {
        c.ok(&["setup-git"], None);
        c.git(&["add", "-A", "."]);
        c.git(&["commit", "-q", "-m", "a write"]);
    }
    let branch = a
        .git(&["rev-parse", "--abbrev-ref", "HEAD"])
        .trim()
        .to_string();
    let a_repo = a.repo.display().to_string();
    let b_repo = b.repo.display().to_string();
    // Each fetches the other's write before either merges: two independent merges.
    a.git(&["fetch", "-q", &b_repo, &branch]);
    b.git(&["fetch", "-q", &a_repo, &branch]);
    a.git(&["merge", "-q", "--no-edit", "FETCH_HEAD"]);
    b.git(&["merge", "-q", "--no-edit", "FETCH_HEAD"]);
    let file_a = std::fs::read_to_string(a.memory_file("2026-03-01")).unwrap();
    let file_b = std::fs::read_to_string(b.memory_file("2026-03-01")).unwrap();
    assert_ne!(
        file_a, file_b,
        "the merges put the entries in opposite orders"
    );
    let at = Some("2026-03-01T09:00:00Z");
    let value = |c: &Clone| c.ok(&["recall", "k", "--json"], at).strings("value");
    assert_eq!(value(&a), value(&b));
    let semantic = |c: &Clone| -> Vec<String> {
        c.ok(&["history", "k", "--json"], at)
            .json()
            .as_array()
            .unwrap()
            .iter()
            .map(|v| {
                format!(
                    "{} {} {} {} {} {}",
                    v["value"], v["valid_from"], v["valid_to"], v["tx_from"], v["tx_to"], v["hash"]
                )
            })
            .collect()
    };
    assert_eq!(semantic(&a), semantic(&b));
    // Sync settles the two merges into one history, with the same answer.
    for round in 0..2 {
        let now = format!("2026-03-07T0{round}:00:00Z");
        a.sync(&now);
        b.sync(&now);
    }
    assert_eq!(value(&a), value(&b));
    assert_eq!(a.answers(&["k"]), b.answers(&["k"]));
    a.assert_settled();
    b.assert_settled();
}

/// A clone whose clock runs ahead pushes an entry; the other pulls it and writes on its
/// own clock: the write is what its next default read answers, on both clones, and the
/// pulled entry keeps its period.
#[test]
fn a_write_after_a_pulled_entry_recorded_ahead_is_seen_everywhere() {
    let w = World::new();
    let (a, b) = w.pair("");
    a.store("k", "future", "2026-12-05T00:00:00Z");
    a.sync("2026-12-05T00:00:01Z");
    b.sync("2026-12-01T09:00:00Z");
    b.store("k", "now-value", "2026-12-01T09:00:00Z");
    let now = Some("2026-12-01T09:00:00Z");
    assert_eq!(
        b.ok(&["recall", "k", "--json"], now).strings("value"),
        ["now-value"]
    );
    b.sync("2026-12-01T09:00:01Z");
    a.sync("2026-12-05T00:00:02Z");
    assert_eq!(
        a.ok(&["recall", "k", "--json"], now).strings("value"),
        ["now-value"]
    );
    let later = Some("2026-12-06T00:00:00Z");
    assert_eq!(
        a.ok(&["recall", "k", "--json"], later).strings("value"),
        ["future"]
    );
    assert_eq!(
        b.ok(&["recall", "k", "--json"], later).strings("value"),
        ["future"]
    );
}

#[test]
fn a_note_written_by_hand_on_one_clone_survives_the_merge_on_both() {
    for a_first in [true, false] {
        let w = World::new();
        let (a, b) = w.pair("");
        a.store("a:fact", "written on a", "2026-03-05T09:00:00Z");
        b.store("b:fact", "written on b", "2026-03-05T10:00:00Z");
        // A person adds a note between a's entries and seals it on purpose.
        let day = a.memory_file("2026-03-05");
        let note = "Note by hand: the deploy target moves in April; ask Ada first.\n";
        let mut text = std::fs::read_to_string(&day).unwrap();
        text.push_str(note);
        text.push('\n');
        std::fs::write(&day, &text).unwrap();
        a.ok(&["seal", "--agent", "alice"], Some("2026-03-05T09:30:00Z"));
        a.store("a:later", "after the note", "2026-03-05T11:00:00Z");
        let (x, y) = if a_first { (&a, &b) } else { (&b, &a) };
        for round in 0..2 {
            let now = format!("2026-03-07T0{round}:00:00Z");
            x.sync(&now);
            y.sync(&now);
        }
        for c in [&a, &b] {
            let merged = std::fs::read_to_string(c.memory_file("2026-03-05")).unwrap();
            assert_eq!(
                merged.matches(note).count(),
                1,
                "{} (a first: {a_first}):\n{merged}",
                c.name
            );
            c.assert_settled();
        }
        let keys = ["a:fact", "b:fact", "a:later"];
        assert_eq!(a.answers(&keys), b.answers(&keys));
    }
}

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

// ---------------------------------------------------------------------------------------
// Scopes (issue 23): one `mem7 sync` syncs the project's workspace and the user's, each
// with its own repository and remote; the local scope is never synced.

/// One machine of the scopes world: a home, a project repository (whose workspace is at
/// its top) and a user workspace that is a repository of its own.
struct Machine {
    home: PathBuf,
    project: PathBuf,
    user: PathBuf,
}

/// Two bare remotes, `project.git` and `user.git`, in one scratch directory.
struct Remotes {
    dir: tempfile::TempDir,
}

impl Remotes {
    fn new() -> Remotes {
        let r = Remotes {
            dir: tempfile::tempdir().unwrap(),
        };
        for bare in ["project.git", "user.git"] {
            r.git(r.dir.path(), &["init", "-q", "--bare", "-b", "main", bare]);
        }
        r
    }

    fn bare(&self, name: &str) -> PathBuf {
        self.dir.path().join(format!("{name}.git"))
    }

    fn git(&self, dir: &Path, args: &[&str]) -> String {
        let r = world::git(dir, &self.dir.path().join("nohome"), args);
        assert_eq!(r.code, 0, "git {args:?} failed: {}{}", r.stdout, r.stderr);
        r.stdout
    }

    /// Every change the bare repository `name` holds, as `git log -p` shows it.
    fn log(&self, name: &str) -> String {
        let bare = self.bare(name);
        let r = world::git(
            self.dir.path(),
            &self.dir.path().join("nohome"),
            &["--git-dir", bare.to_str().unwrap(), "log", "-p", "main"],
        );
        assert_eq!(r.code, 0, "git log of {name}: {}", r.stderr);
        r.stdout
    }

    fn head(&self, name: &str) -> Option<String> {
        let bare = self.bare(name);
        let r = world::git(
            self.dir.path(),
            &self.dir.path().join("nohome"),
            &[
                "--git-dir",
                bare.to_str().unwrap(),
                "rev-parse",
                "-q",
                "--verify",
                "refs/heads/main",
            ],
        );
        (r.code == 0).then(|| r.stdout.trim().to_string())
    }

    /// The first machine: new repositories for both workspaces, remotes set, not pushed.
    fn first(&self, name: &str) -> Machine {
        let m = self.machine(name);
        for (dir, bare) in [(&m.project, "project"), (&m.user, "user")] {
            std::fs::create_dir_all(dir).unwrap();
            m.git(dir, &["init", "-q", "-b", "main"]);
            m.identity(dir, name);
            m.git(
                dir,
                &["remote", "add", "origin", self.bare(bare).to_str().unwrap()],
            );
        }
        // A bare `mem7 init` from outside the project makes the user's workspace.
        m.ok(&m.home.clone(), &["init"]);
        m.ok(&m.home.clone(), &["init", m.project.to_str().unwrap()]);
        std::fs::create_dir_all(m.project.join("src")).unwrap();
        m
    }

    /// Another machine: clones of both remotes.
    fn clone(&self, name: &str) -> Machine {
        let m = self.machine(name);
        for (dir, bare) in [(&m.project, "project"), (&m.user, "user")] {
            m.git(
                &m.home,
                &[
                    "clone",
                    "-q",
                    self.bare(bare).to_str().unwrap(),
                    dir.to_str().unwrap(),
                ],
            );
            m.identity(dir, name);
        }
        std::fs::create_dir_all(m.project.join("src")).unwrap();
        m
    }

    fn machine(&self, name: &str) -> Machine {
        let root = self.dir.path().join(name);
        let home = root.join("home");
        std::fs::create_dir_all(&home).unwrap();
        Machine {
            project: root.join("proj"),
            user: root.join("me"),
            home,
        }
    }
}

impl Machine {
    fn git(&self, dir: &Path, args: &[&str]) -> String {
        let r = world::git(dir, &self.home, args);
        assert_eq!(r.code, 0, "git {args:?} failed: {}{}", r.stdout, r.stderr);
        r.stdout
    }

    fn identity(&self, repo: &Path, name: &str) {
        self.git(repo, &["config", "user.name", name]);
        self.git(
            repo,
            &["config", "user.email", &format!("{name}@example.com")],
        );
    }

    /// `mem7 ARGS` from `cwd`: no MEM7_WORKSPACE (the project is found from the working
    /// directory), the user's workspace named by MEM7_USER_WORKSPACE.
    fn run(&self, cwd: &Path, args: &[&str], now: &str) -> Run {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_mem7"));
        cmd.args(args).current_dir(cwd);
        world::isolated(&mut cmd, &self.home);
        cmd.env("MEM7_USER_WORKSPACE", &self.user)
            .env("MEM7_AGENT", "tester")
            .env("MEM7_EMBED_PROVIDER", "none")
            .env("MEM7_NOW", now);
        finish(cmd.output().unwrap())
    }

    fn ok(&self, cwd: &Path, args: &[&str]) -> Run {
        let r = self.run(cwd, args, "2026-05-01T08:00:00Z");
        assert_eq!(r.code, 0, "mem7 {args:?}: {}{}", r.stdout, r.stderr);
        r
    }

    /// From inside the project (its subfolder `src`), at `now`.
    fn inside(&self, args: &[&str], now: &str) -> Run {
        self.run(&self.project.join("src"), args, now)
    }

    fn inside_ok(&self, args: &[&str], now: &str) -> Run {
        let r = self.inside(args, now);
        assert_eq!(r.code, 0, "mem7 {args:?}: {}{}", r.stdout, r.stderr);
        r
    }
}

#[test]
fn scopes_one_sync_pushes_each_scope_to_its_own_remote_and_never_the_local_one() {
    let world = Remotes::new();
    let a = world.first("a");
    a.inside_ok(&["store", "user:editor", "helix"], "2026-05-01T09:00:00Z");
    a.inside_ok(
        &["store", "deploy:target", "Render"],
        "2026-05-01T09:01:00Z",
    );
    a.inside_ok(
        &["store", "local:branch", "add-nvmrc"],
        "2026-05-01T09:02:00Z",
    );

    // Several scopes: a header before each scope's report, the project's first.
    let r = a.inside_ok(&["sync"], "2026-05-01T09:03:00Z");
    let project = format!("project scope ({}):\n", a.project.display());
    let user = format!("user scope ({}):\n", a.user.display());
    let (p, u) = (
        r.stdout
            .find(&project)
            .unwrap_or_else(|| panic!("{}", r.stdout)),
        r.stdout
            .find(&user)
            .unwrap_or_else(|| panic!("{}", r.stdout)),
    );
    assert!(p < u, "{}", r.stdout);
    assert!(!r.stdout.contains("local scope"), "{}", r.stdout);

    // Each remote got its own scope's entries, and nothing of the others'.
    let (plog, ulog) = (world.log("project"), world.log("user"));
    assert!(plog.contains("deploy:target") && plog.contains("> Render"));
    assert!(
        !plog.contains("user:editor") && !plog.contains("helix"),
        "{plog}"
    );
    assert!(ulog.contains("user:editor") && ulog.contains("> helix"));
    assert!(!ulog.contains("deploy:target"), "{ulog}");
    for log in [&plog, &ulog] {
        assert!(!log.contains("local:branch") && !log.contains("add-nvmrc"));
    }
    let files = a.git(&a.project, &["ls-files"]);
    assert!(!files.contains(".mem7/"), "{files}");

    // A second machine: clones of both, found the same way, answer alike; the local
    // fact stayed on the first machine.
    let b = world.clone("b");
    let r = b.inside_ok(&["list", "--json"], "2026-05-01T10:00:00Z");
    let got: Vec<(String, String)> = r
        .json()
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            (
                v["key"].as_str().unwrap().to_string(),
                v["scope"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let want = |k: &str, s: &str| (k.to_string(), s.to_string());
    assert_eq!(
        got,
        [
            want("deploy:target", "project"),
            want("user:editor", "user")
        ]
    );
    let r = b.inside(&["recall", "local:branch"], "2026-05-01T10:00:00Z");
    assert_eq!(r.code, 4, "{}{}", r.stdout, r.stderr);

    // --scope user syncs the user's workspace alone, with the one-scope report.
    let project_head = world.head("project");
    b.inside_ok(&["store", "pref:shell", "fish"], "2026-05-01T10:01:00Z");
    b.inside_ok(
        &["store", "ci:provider", "Buildkite"],
        "2026-05-01T10:02:00Z",
    );
    let r = b
        .inside_ok(
            &["sync", "--scope", "user", "--json"],
            "2026-05-01T10:03:00Z",
        )
        .json();
    assert!(r.is_object(), "{r}");
    assert_eq!(r["pushed"], true, "{r}");
    assert_eq!(keys(&r["sent"]), ["pref:shell"]);
    assert_eq!(
        world.head("project"),
        project_head,
        "the project was synced"
    );
    assert!(world.log("user").contains("> fish"));
    assert!(!world.log("project").contains("Buildkite"));

    // --json with both: an array of the scopes' reports, each saying its scope.
    let r = b
        .inside_ok(&["sync", "--json"], "2026-05-01T10:04:00Z")
        .json();
    let reports = r.as_array().unwrap_or_else(|| panic!("not an array: {r}"));
    assert_eq!(reports.len(), 2, "{r}");
    assert_eq!(reports[0]["scope"], "project");
    assert_eq!(reports[1]["scope"], "user");
    assert_eq!(keys(&reports[0]["sent"]), ["ci:provider"]);
    assert_eq!(reports[1]["sent"]["entries"], 0, "{r}");
    assert!(world.log("project").contains("> Buildkite"));

    // The first machine receives both scopes' news with one sync.
    let r = a
        .inside_ok(&["sync", "--json"], "2026-05-01T11:00:00Z")
        .json();
    assert_eq!(keys(&r[0]["received"]), ["ci:provider"], "{r}");
    assert_eq!(keys(&r[1]["received"]), ["pref:shell"], "{r}");
    let r = a.inside_ok(&["recall", "pref:shell", "--json"], "2026-05-01T11:00:01Z");
    assert_eq!(r.json()[0]["scope"], "user", "{}", r.stdout);
    a.inside_ok(&["recall", "local:branch"], "2026-05-01T11:00:01Z");

    // The local scope is never synced: naming it is an error, and nothing moves.
    let heads = (world.head("project"), world.head("user"));
    let r = a.inside(&["sync", "--scope", "local"], "2026-05-01T11:01:00Z");
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("never synced"), "{}", r.stderr);
    assert_eq!((world.head("project"), world.head("user")), heads);
}

#[test]
fn scopes_outside_a_project_sync_is_the_user_workspace_exactly_as_before() {
    let world = Remotes::new();
    let a = world.first("a");
    a.inside_ok(&["store", "user:editor", "helix"], "2026-05-01T09:00:00Z");
    // Outside the project only the user's workspace is open: one report, no header.
    let r = a.run(&a.home, &["sync", "--json"], "2026-05-01T09:01:00Z");
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let r = r.json();
    assert!(r.is_object(), "{r}");
    assert_eq!(keys(&r["sent"]), ["user:editor"]);
    assert_eq!(world.head("project"), None, "the project was synced");
    let r = a.run(
        &a.home,
        &["sync", "--scope", "project"],
        "2026-05-01T09:02:00Z",
    );
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("no project scope"), "{}", r.stderr);
}

/// The usual setup: a project in git, the user's workspace in no repository. One sync
/// inside the project syncs the project, says the user scope was left out and why, and
/// succeeds; `--scope user` is still the error it names.
#[test]
fn scopes_a_user_workspace_in_no_repository_is_left_out_of_sync_with_a_note() {
    let world = Remotes::new();
    let a = world.first("a");
    // Take the user workspace out of git: it was made a repository by `first`.
    std::fs::remove_dir_all(a.user.join(".git")).unwrap();
    a.inside_ok(&["store", "user:editor", "helix"], "2026-05-01T09:00:00Z");
    a.inside_ok(
        &["store", "deploy:target", "Render"],
        "2026-05-01T09:01:00Z",
    );
    let r = a.inside_ok(&["sync"], "2026-05-01T09:02:00Z");
    assert!(
        r.stderr.contains("the user scope (")
            && r.stderr
                .contains("is in no git repository, so it was not synced"),
        "{}",
        r.stderr
    );
    // The one scope synced reports as a single sync does: no header.
    assert!(!r.stdout.contains("project scope ("), "{}", r.stdout);
    let plog = world.log("project");
    assert!(
        plog.contains("> Render") && !plog.contains("helix"),
        "{plog}"
    );
    let r = a.inside(&["sync", "--scope", "user"], "2026-05-01T09:03:00Z");
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("git"), "{}", r.stderr);
}

/// Keys of many values across machines: two clones each add an event, one of them with
/// an inferred tier, at the same instant, and merge each other's write independently (so
/// their files hold the entries in opposite orders). Both answer with both values, in the
/// same order, with the same tiers; a retry of one side's add after the sync writes
/// nothing, and a forget of one value on one clone reaches the other.
#[test]
fn added_values_from_two_machines_merged_either_way_answer_alike() {
    let w = World::new();
    let (a, b) = w.pair("");
    let t = "2026-03-01T09:00:00Z";
    a.ok(
        &[
            "store",
            "event:deploy",
            "v2.3 from a",
            "--valid-from",
            "2026-03-01",
        ],
        Some(t),
    );
    b.ok(
        &[
            "store",
            "event:deploy",
            "v2.4 from b",
            "--valid-from",
            "2026-03-01",
            "--tier",
            "inferred",
        ],
        Some(t),
    );
    for c in [&a, &b] {
        c.ok(&["setup-git"], None);
        c.git(&["add", "-A", "."]);
        c.git(&["commit", "-q", "-m", "an event"]);
    }
    let branch = a
        .git(&["rev-parse", "--abbrev-ref", "HEAD"])
        .trim()
        .to_string();
    let (a_repo, b_repo) = (a.repo.display().to_string(), b.repo.display().to_string());
    a.git(&["fetch", "-q", &b_repo, &branch]);
    b.git(&["fetch", "-q", &a_repo, &branch]);
    a.git(&["merge", "-q", "--no-edit", "FETCH_HEAD"]);
    b.git(&["merge", "-q", "--no-edit", "FETCH_HEAD"]);
    let at = Some("2026-03-02T00:00:00Z");
    let values = |c: &Clone| -> Vec<String> {
        c.ok(&["recall", "event:deploy", "--json"], at)
            .json()
            .as_array()
            .unwrap()
            .iter()
            .map(|v| format!("{} {}", v["value"], v["tier"]))
            .collect()
    };
    let got = values(&a);
    assert_eq!(got.len(), 2, "{got:?}");
    assert!(
        got.iter()
            .any(|v| v.contains("v2.4 from b") && v.contains("inferred"))
    );
    assert_eq!(got, values(&b), "merged either way, the same answer");
    for round in 0..2 {
        let now = format!("2026-03-07T0{round}:00:00Z");
        a.sync(&now);
        b.sync(&now);
    }
    assert_eq!(values(&a), values(&b));
    // A retry of a's add, now on both machines, writes nothing.
    let r = a.ok(
        &[
            "store",
            "event:deploy",
            "v2.3 from a",
            "--valid-from",
            "2026-03-01",
            "--json",
        ],
        Some("2026-03-08T00:00:00Z"),
    );
    assert_eq!(r.json()["status"], "unchanged", "{}", r.stdout);
    // Forget b's value on a; b sees one value after the next sync.
    let hash = a
        .ok(&["recall", "event:deploy", "--json"], at)
        .json()
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["value"] == "v2.4 from b")
        .map(|v| v["hash"].as_str().unwrap().to_string())
        .unwrap();
    a.ok(
        &["forget", "event:deploy", "--entry", &hash[..10]],
        Some("2026-03-08T01:00:00Z"),
    );
    for round in 2..4 {
        let now = format!("2026-03-08T0{round}:00:00Z");
        a.sync(&now);
        b.sync(&now);
    }
    let now = Some("2026-03-09T00:00:00Z");
    for c in [&a, &b] {
        let left = c
            .ok(&["recall", "event:deploy", "--json"], now)
            .strings("value");
        assert_eq!(left, ["v2.3 from a"]);
    }
    a.assert_settled();
    b.assert_settled();
}
