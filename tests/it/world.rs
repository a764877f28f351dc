//! The one test environment every module of this binary shares: a sandbox that runs the
//! real `mem7` binary with a pinned environment and, unless a test opts out, a pinned
//! clock; with the one git runner (`git.rs`), the worked example and the fixtures
//! (`fixtures.rs`), and bounded waits (`wait.rs`).

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicI64, Ordering};

mod fixtures;
mod git;
mod wait;

pub use fixtures::{copy_dir, fixture, worked_example};
pub use git::{git, git_ok, isolated};
pub use wait::{PATIENCE, lines_of, poll, wait_for, wait_for_line};

/// Where the pinned clock starts. A command run without a time of its own reads the next
/// second from here, so commands follow each other as on a real clock, and a test answers
/// the same whatever day it runs. Tests that name their own times mostly name earlier
/// ones, so "now" comes after them, as the real clock did when they were written.
pub const PINNED_START: &str = "2026-12-01T09:00:00Z";

/// A scratch home with a workspace path; every command runs with a pinned environment.
pub struct Sandbox {
    pub dir: tempfile::TempDir,
    pub ws: PathBuf,
    /// What a command reads when it names no time; `None`: the real clock.
    clock: Option<Clock>,
}

/// A pinned clock: each reading is the next second after [`PINNED_START`].
pub struct Clock(AtomicI64);

impl Clock {
    pub fn pinned() -> Clock {
        Clock(AtomicI64::new(0))
    }

    /// The next reading, as `MEM7_NOW` takes it.
    pub fn next(&self) -> String {
        let seconds = self.0.fetch_add(1, Ordering::Relaxed);
        let start = chrono::DateTime::parse_from_rfc3339(PINNED_START).unwrap();
        let now = start + chrono::Duration::seconds(seconds);
        now.format("%Y-%m-%dT%H:%M:%SZ").to_string()
    }
}

/// The outcome of one run.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// One string field of every object in a JSON array on stdout.
    pub fn strings(&self, field: &str) -> Vec<String> {
        self.json()
            .as_array()
            .unwrap_or_else(|| panic!("stdout is not a JSON array: {}", self.stdout))
            .iter()
            .map(|v| v[field].as_str().unwrap_or_default().to_string())
            .collect()
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {}", self.stdout))
    }
}

impl Sandbox {
    /// A sandbox with an initialised workspace.
    pub fn new() -> Sandbox {
        let s = Sandbox::bare();
        let r = s.run(&["init"], None);
        assert_eq!(r.code, 0, "init failed: {}", r.stderr);
        s
    }

    /// A sandbox without a workspace.
    pub fn bare() -> Sandbox {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        Sandbox {
            dir,
            ws,
            clock: Some(Clock::pinned()),
        }
    }

    /// The same sandbox with its commands on the machine's clock (no `MEM7_NOW` unless a
    /// command names a time): for the few tests about the clock itself.
    pub fn on_the_real_clock(mut self) -> Sandbox {
        self.clock = None;
        self
    }

    /// The time the next command reads when it names none: the pinned clock's next
    /// second, or `None` on the real clock.
    pub fn tick(&self) -> Option<String> {
        self.clock.as_ref().map(Clock::next)
    }

    /// `mem7 ARGS` in the sandbox, its clock reading `now` (else the pinned clock's next
    /// second), with nothing of the test's environment but `PATH`.
    pub fn command(&self, args: &[&str], now: Option<&str>) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_mem7"));
        cmd.args(args)
            .current_dir(self.dir.path())
            .env_clear()
            .env("HOME", self.home())
            .env("MEM7_WORKSPACE", &self.ws)
            .env("MEM7_AGENT", "tester")
            .env("PATH", std::env::var("PATH").unwrap_or_default());
        if let Some(now) = now.map(str::to_string).or_else(|| self.tick()) {
            cmd.env("MEM7_NOW", now);
        }
        cmd
    }

    /// A `sh -c SCRIPT` with the same pinned environment (every mem7 in it reads one
    /// instant of the pinned clock); `$MEM7` is the binary.
    pub fn shell(&self, script: &str) -> Command {
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg(script)
            .current_dir(self.dir.path())
            .env_clear()
            .env("HOME", self.home())
            .env("MEM7_WORKSPACE", &self.ws)
            .env("MEM7_AGENT", "tester")
            .env("MEM7", env!("CARGO_BIN_EXE_mem7"))
            .env("PATH", std::env::var("PATH").unwrap_or_default());
        if let Some(now) = self.tick() {
            cmd.env("MEM7_NOW", now);
        }
        cmd
    }

    /// The sandbox's HOME (not created until something writes there).
    pub fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    pub fn run(&self, args: &[&str], now: Option<&str>) -> Run {
        finish(self.command(args, now).output().unwrap())
    }

    pub fn run_stdin(&self, args: &[&str], now: Option<&str>, input: &str) -> Run {
        use std::io::Write;
        let mut child = self
            .command(args, now)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        finish(child.wait_with_output().unwrap())
    }

    /// Runs and asserts success.
    pub fn ok(&self, args: &[&str], now: Option<&str>) -> Run {
        let r = self.run(args, now);
        assert_eq!(r.code, 0, "mem7 {args:?} failed: {}{}", r.stdout, r.stderr);
        r
    }

    /// Runs a `recall` that may find nothing: exit 0 with an answer, or 4 with none
    /// (nothing on standard output, or `[]` with `--json`).
    pub fn read(&self, args: &[&str], now: Option<&str>) -> Run {
        let r = self.run(args, now);
        let empty = matches!(r.stdout.trim(), "" | "[]");
        assert_eq!(
            r.code,
            if empty { 4 } else { 0 },
            "mem7 {args:?}: {}{}",
            r.stdout,
            r.stderr
        );
        r
    }

    /// Runs a read that finds nothing (a `recall` miss) and asserts its exit code, 4.
    pub fn miss(&self, args: &[&str], now: Option<&str>) -> Run {
        let r = self.run(args, now);
        assert_eq!(
            r.code, 4,
            "mem7 {args:?} should find nothing: {}{}",
            r.stdout, r.stderr
        );
        r
    }

    /// git in `dir` through [`git`], with this sandbox's HOME; must succeed.
    pub fn git(&self, dir: &Path, args: &[&str]) -> String {
        git_ok(dir, &self.home(), args)
    }

    /// A copy of `tests/fixtures/NAME` in the sandbox (so a test may change it); its path.
    pub fn copy_fixture(&self, name: &str) -> PathBuf {
        let to = self.dir.path().join(name);
        copy_dir(&fixture(name), &to);
        to
    }

    pub fn memory_dir(&self) -> PathBuf {
        self.ws.join("memory")
    }

    /// Appends an entry the way a person (or `git pull`) would: written into a memory
    /// file directly, without a hash, recorded far in the future so it sorts last.
    pub fn append_by_hand(&self, key: &str, value: &str) {
        let file = std::fs::read_dir(self.memory_dir())
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .find(|p| p.extension().is_some_and(|x| x == "md"))
            .expect("a memory file to append to");
        // Appended in one write: rewriting the whole file would let a watcher see it
        // cut short in between (and rebuild instead of catching up).
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&file)
            .unwrap();
        f.write_all(format!(
            "\n## {key}\n\n```mem7\nop: store\nrecorded: 2099-01-01T00:00:00Z\nagent: a person\n```\n\n> {value}\n\n---\n"
        ).as_bytes())
        .unwrap();
    }

    /// The text of every memory file, concatenated (for "did it reach a file" checks).
    pub fn memory_text(&self) -> String {
        let Ok(read) = std::fs::read_dir(self.memory_dir()) else {
            return String::new();
        };
        read.flatten()
            .filter(|e| e.path().is_file())
            .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
            .collect()
    }

    /// Every memory file's name and content, for "nothing changed on disk" checks.
    pub fn snapshot(&self) -> Vec<(String, Vec<u8>)> {
        snapshot(&self.ws)
    }
}

/// The samples of a fixture list in `tests/fixtures/secrets/` (`credentials.txt` or
/// `ordinary.txt`): one per line, `#` lines and blank lines skipped, the two characters
/// `\n` read as a line break.
pub fn samples(name: &str) -> Vec<String> {
    samples_in("secrets", name)
}

/// [`samples`] of a list in another fixture folder (`secrets-heldout`).
pub fn samples_in(folder: &str, name: &str) -> Vec<String> {
    let path = fixture(folder).join(name);
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| l.replace("\\n", "\n"))
        .collect()
}

/// A part of the machine some tests need and `cargo test` cannot build (`chromium`:
/// Debian's browser; `model`: the local embedding model and its wheel) is missing, for
/// `problem`. With the part listed in `MEM7_TEST_ALLOW_MISSING` (comma-separated, or
/// `all`) this says `skipped: …` on standard error (written past the harness's
/// capture, so it shows) and returns: the test then returns and passes. Otherwise the
/// test fails here, naming what to install and how (`remedy`).
pub fn missing(part: &str, problem: &str, remedy: &str) {
    let allowed = std::env::var("MEM7_TEST_ALLOW_MISSING")
        .unwrap_or_default()
        .split(',')
        .any(|p| matches!(p.trim(), "all") || p.trim() == part);
    if !allowed {
        panic!(
            "{problem}: {remedy}. To count the tests that need it as skipped instead, \
             run them with MEM7_TEST_ALLOW_MISSING={part}"
        );
    }
    use std::io::Write;
    let _ = writeln!(
        std::io::stderr().lock(),
        "skipped: {problem} ({remedy}; MEM7_TEST_ALLOW_MISSING lists {part})"
    );
}

pub fn finish(out: Output) -> Run {
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Names and bytes of every file under `root` outside the index directory.
pub fn snapshot(root: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    walk(root, root, &mut out);
    out.sort();
    out
}

fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, Vec<u8>)>) {
    let Ok(read) = std::fs::read_dir(dir) else {
        return;
    };
    for item in read.flatten() {
        let path = item.path();
        let rel = path
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        if rel == ".mem7" {
            continue;
        }
        if path.is_dir() {
            walk(root, &path, out);
        } else {
            out.push((rel, std::fs::read(&path).unwrap()));
        }
    }
}
