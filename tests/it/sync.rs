//! `mem7 sync` through the real binary, with real git: a bare repository on local disk
//! and clones of it, each a mem7 workspace. Git runs with a scratch HOME and without the
//! system config, so the developer's settings do not leak in.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::world::{self, Run, finish};

mod converge;
mod merges;
mod refusals;
mod remote;
mod scopes;
mod watch;

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
