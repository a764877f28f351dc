//! Capture (issue 35): recorded hook sessions replayed through the real binary in a real
//! git repository whose own hooks (`mem7 setup-git --capture`) run too, then the next
//! session's block; the same replay twice; a hook while the writers' lock is held, with
//! no workspace, with a broken mem7.yaml; credentials and `<private>` text; setup.

use std::process::Command;
use std::time::{Duration, Instant};

use super::world::{self, Run, Sandbox, fixture};

/// When the recorded session starts; each line of a replay comes 10 seconds after the
/// one before.
const START: &str = "2026-12-01T09:00:00Z";

/// `START` plus `seconds`, as MEM7_NOW and git's dates take it.
fn at(seconds: i64) -> String {
    let start = chrono::DateTime::parse_from_rfc3339(START).unwrap();
    (start + chrono::Duration::seconds(seconds))
        .format("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

/// A sandbox whose workspace is also a git repository with one commit on `main`, and
/// mem7's capture hooks installed in it.
fn repo() -> Sandbox {
    let s = Sandbox::new();
    git_at(&s, &["init", "-q", "-b", "main"], &at(-100));
    for (path, text) in [
        ("Cargo.toml", "[package]\nname = \"csvkit\"\n"),
        ("src/parser.rs", "pub fn parse() {}\n"),
        ("src/reader.rs", "pub fn read() {}\n"),
    ] {
        let p = s.ws.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    git_at(&s, &["add", "Cargo.toml", "src"], &at(-90));
    git_at(&s, &["commit", "-q", "-m", "Start csvkit"], &at(-90));
    let r = in_repo(&s, &["setup-git", "--capture"], &at(-80));
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("post-commit"), "{}", r.stdout);
    s
}

/// git in the repository with the sandbox's environment, the clock at `now` for git's
/// dates and for the mem7 its hooks run; must succeed.
fn git_at(s: &Sandbox, args: &[&str], now: &str) -> String {
    let mut cmd = Command::new("git");
    cmd.args(args).current_dir(&s.ws);
    world::isolated(&mut cmd, &s.home())
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
        .env("GIT_AUTHOR_DATE", now)
        .env("GIT_COMMITTER_DATE", now)
        .env("MEM7_NOW", now);
    let r = world::finish(cmd.output().unwrap());
    assert_eq!(r.code, 0, "git {args:?}: {}{}", r.stdout, r.stderr);
    r.stdout
}

/// `mem7 ARGS` run in the repository (not the sandbox's folder).
fn in_repo(s: &Sandbox, args: &[&str], now: &str) -> Run {
    let mut cmd = s.command(args, Some(now));
    cmd.current_dir(&s.ws);
    world::finish(cmd.output().unwrap())
}

/// One hook call: exit 0, nothing on standard error, whatever happens.
fn hook(s: &Sandbox, client: &str, payload: &str, now: &str) -> Run {
    let r = s.run_stdin(&["hook", client], Some(now), payload);
    assert_eq!(r.code, 0, "hook {client} exited {}: {}", r.code, r.stderr);
    assert_eq!(r.stderr, "", "hook {client} wrote to standard error");
    r
}

/// The lines of a recorded session in `tests/fixtures/capture/`.
fn recorded(name: &str) -> Vec<String> {
    std::fs::read_to_string(fixture("capture").join(name))
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

/// Replays `lines` in the repository (the payloads' `@CWD@` is it): payload `i` at
/// `offset + 10 i` seconds. The `replay` lines are done in the repository when `world`
/// (a switch, a commit through git, whose hooks then run); otherwise skipped. Returns
/// each SessionStart's standard output.
fn replay(s: &Sandbox, client: &str, lines: &[String], offset: i64, world: bool) -> Vec<String> {
    let cwd = s.ws.display().to_string();
    let mut starts = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let now = at(offset + 10 * i as i64);
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        if let Some(what) = v.get("replay").and_then(|w| w.as_str()) {
            if !world {
                continue;
            }
            match what {
                "switch" => {
                    git_at(
                        s,
                        &["checkout", "-q", "-b", v["branch"].as_str().unwrap()],
                        &now,
                    );
                }
                "commit" => {
                    let files = v["files"].as_object().unwrap();
                    for (path, text) in files {
                        let p = s.ws.join(path);
                        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
                        std::fs::write(p, text.as_str().unwrap()).unwrap();
                    }
                    let mut add = vec!["add"];
                    add.extend(files.keys().map(String::as_str));
                    git_at(s, &add, &now);
                    git_at(
                        s,
                        &["commit", "-q", "-m", v["message"].as_str().unwrap()],
                        &now,
                    );
                }
                other => panic!("unknown replay step {other}"),
            }
            continue;
        }
        let head = git_at(s, &["rev-parse", "--short=7", "HEAD"], &now);
        let payload = line.replace("@CWD@", &cwd).replace("@HEAD7@", head.trim());
        let r = hook(s, client, &payload, &now);
        if v["hook_event_name"] == "SessionStart" {
            starts.push(r.stdout);
        } else {
            assert_eq!(
                r.stdout,
                "",
                "line {}: only a session's start prints",
                i + 1
            );
        }
    }
    starts
}

/// Every memory file of the workspace and of its local scope.
fn memory(s: &Sandbox) -> Vec<(String, Vec<u8>)> {
    let mut all = world::snapshot(&s.ws);
    for (name, bytes) in world::snapshot(&s.ws.join(".mem7/local")) {
        all.push((format!("local/{name}"), bytes));
    }
    all.retain(|(name, _)| name.contains("memory/"));
    all
}

/// How many entries the workspace and its local scope hold.
fn entries(s: &Sandbox) -> usize {
    memory(s)
        .iter()
        .map(|(_, b)| String::from_utf8_lossy(b).matches("\n```mem7\n").count())
        .sum()
}

fn all_text(s: &Sandbox) -> String {
    memory(s)
        .iter()
        .map(|(_, b)| String::from_utf8_lossy(b).into_owned())
        .collect()
}

/// The versions `list --json` shows under `prefix` at `now`.
fn listed(s: &Sandbox, prefix: &str, now: &str) -> Vec<serde_json::Value> {
    let r = s.run(&["list", "--prefix", prefix, "--json"], Some(now));
    // A list that finds nothing is an answer (exit 0); only a recall miss exits 4.
    assert_eq!(r.code, 0, "{}", r.stderr);
    if r.stdout.trim().is_empty() {
        return Vec::new();
    }
    r.json().as_array().unwrap().clone()
}

fn value_of(s: &Sandbox, key: &str, now: &str) -> String {
    let r = s.ok(&["recall", key, "--json"], Some(now));
    r.json()[0]["value"].as_str().unwrap().to_string()
}

/// The session's id in the recorded Claude Code session.
const SID: &str = "6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b";

/// The SessionStart payload of a new Claude Code session in the repository.
fn start_payload(s: &Sandbox, sid: &str) -> String {
    serde_json::json!({"session_id": sid, "cwd": s.ws, "hook_event_name": "SessionStart", "source": "startup"})
        .to_string()
}

fn edit_payload(s: &Sandbox, sid: &str, file: &str) -> String {
    serde_json::json!({"session_id": sid, "cwd": s.ws, "hook_event_name": "PostToolUse",
        "tool_name": "Edit", "tool_input": {"file_path": s.ws.join(file), "old_string": "a", "new_string": "b"},
        "tool_response": {"filePath": s.ws.join(file)}})
    .to_string()
}

fn block_of(stdout: &str) -> String {
    let v: serde_json::Value =
        serde_json::from_str(stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    assert_eq!(v["hookSpecificOutput"]["hookEventName"], "SessionStart");
    v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn a_recorded_session_leaves_a_few_dozen_facts_and_the_next_session_starts_where_it_left_off() {
    let s = repo();
    let lines = recorded("claude-session.jsonl");
    assert!(lines.len() > 300, "{} lines", lines.len());
    let starts = replay(&s, "claude-code", &lines, 0, true);
    assert_eq!(starts.len(), 1);
    let end = at(10 * lines.len() as i64 + 60);

    // Several hundred events, a few dozen entries: reads, greps, prompts and stops are
    // not facts, and the files touched are one fact.
    let n = entries(&s);
    assert!((10..=40).contains(&n), "{n} entries:\n{}", all_text(&s));

    // The commit, seen by the agent's shell and by git's own post-commit hook: one.
    let head = git_at(&s, &["rev-parse", "HEAD"], &end);
    let key = format!("git:commit:{}", &head.trim()[..12]);
    let commit = value_of(&s, &key, &end);
    assert!(
        commit.contains("on feat/crlf: Keep CRLF out of the last field"),
        "{commit}"
    );
    assert!(
        commit.contains("3 files: CHANGELOG.md, src/parser.rs, tests/crlf.rs"),
        "{commit}"
    );
    let history = s.ok(&["history", &key, "--json"], Some(&end)).json();
    assert_eq!(history.as_array().unwrap().len(), 1, "{history}");
    assert_eq!(history[0]["tier"], "inferred");
    // The project's fact in the project's workspace; the session trail in the local one.
    assert!(
        std::fs::read_to_string(s.ws.join("memory/2026-12-01.md"))
            .unwrap()
            .contains(&key)
    );
    let local = world::snapshot(&s.ws.join(".mem7/local"))
        .into_iter()
        .map(|(_, b)| String::from_utf8_lossy(&b).into_owned())
        .collect::<String>();
    assert!(
        local.contains(&format!("## local:session:{SID}\n")),
        "{local}"
    );
    assert!(!local.contains(&key));

    // The push and the pull request.
    let pushed = value_of(&s, "git:push:origin/feat-crlf", &end);
    assert_eq!(
        pushed,
        format!("origin/feat/crlf at {}", &head.trim()[..12])
    );
    let pr = value_of(&s, "git:pr:github.com/acme/csvkit/pull/17", &end);
    assert_eq!(
        pr,
        "opened pull request https://github.com/acme/csvkit/pull/17: Keep CRLF out of the last field (from feat/crlf)"
    );

    // The failing test, failing again (the same failure: nothing new), then passing.
    let checks = listed(&s, "local:checkout:", &end);
    let check = checks
        .iter()
        .find(|v| v["key"].as_str().unwrap().contains(":check:cargo-test-"))
        .unwrap_or_else(|| panic!("{checks:?}"));
    assert_eq!(
        check["value"],
        "passing again: `cargo test` — test result: ok. 21 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out"
    );
    let history = s
        .ok(
            &["history", check["key"].as_str().unwrap(), "--json"],
            Some(&end),
        )
        .json();
    let values: Vec<&str> = history
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["value"].as_str().unwrap())
        .collect();
    // Failing from the first run until the pass (the open-ended failing version was
    // closed at the pass: history shows both), then passing: one failure, not two.
    let mut values = values;
    values.dedup();
    assert_eq!(values.len(), 2, "{values:?}");
    assert!(
        values[0].starts_with("failing: `cargo test` — test result: FAILED. 17 passed; 1 failed"),
        "{values:?}"
    );
    assert!(
        values[0].ends_with("; failing: parser::tests::crlf_line_endings"),
        "{values:?}"
    );
    // `cargo build` and `cargo clippy` passed without failing first: not facts.
    assert!(
        !checks
            .iter()
            .any(|v| v["key"].as_str().unwrap().contains("clippy")),
        "{checks:?}"
    );

    // The files one fact, the branch switch, the subagents.
    let files = value_of(&s, &format!("local:session:{SID}:files"), &end);
    assert!(
        files.starts_with("files edited or written in claude-code session 6f1c2a8e ("),
        "{files}"
    );
    for f in [
        "src/parser.rs",
        "src/reader.rs",
        "tests/crlf.rs",
        "CHANGELOG.md",
    ] {
        assert!(files.contains(&format!("\n- {f}")), "{files}");
    }
    let branch = checks
        .iter()
        .find(|v| v["key"].as_str().unwrap().ends_with(":branch"))
        .unwrap();
    assert_eq!(branch["value"], "on branch feat/crlf");
    let tasks = listed(&s, &format!("local:session:{SID}:task:"), &end);
    let task_values: Vec<&str> = tasks.iter().map(|v| v["value"].as_str().unwrap()).collect();
    assert!(task_values.contains(&"done: Explore subagent — Map line-ending handling → Lines are split in src/parser.rs:88 (split_terminator('\\n')) and src/reader.rs:41; neither strips a trailing \\r."), "{task_values:?}");
    assert!(
        task_values.contains(&"running: general-purpose subagent — Audit quote handling"),
        "{task_values:?}"
    );
    let session = value_of(&s, &format!("local:session:{SID}"), &end);
    assert!(
        session.starts_with(&format!(
            "claude-code session 6f1c2a8e in {} on branch main, started {START}; ended ",
            s.ws.display()
        )),
        "{session}"
    );
    assert!(session.ends_with(" (prompt_input_exit)"), "{session}");

    // Captured events are ordinary facts: search finds them by their words.
    let found = s
        .ok(&["search", "CRLF last field", "--json"], Some(&end))
        .json();
    assert!(
        found
            .as_array()
            .unwrap()
            .iter()
            .any(|h| h["key"] == key.as_str()),
        "{found}"
    );

    // `mem7 context --hook claude-code`, run in the checkout just before the next
    // session starts, prints what that session's start prints.
    let mut cmd = s.command(&["context", "--hook", "claude-code"], Some(&end));
    cmd.current_dir(&s.ws);
    let context = world::finish(cmd.output().unwrap());
    assert_eq!(context.code, 0, "{}", context.stderr);

    // The next session's block leads with where this checkout left off.
    let next = hook(&s, "claude-code", &start_payload(&s, "next-session"), &end);
    assert_eq!(next.stdout, context.stdout);
    let block = block_of(&next.stdout);
    let section = block
        .split("### Where this checkout left off (captured by hooks)\n")
        .nth(1)
        .unwrap_or_else(|| panic!("{block}"));
    let section: Vec<&str> = section.split("\n\n").next().unwrap().lines().collect();
    assert_eq!(section[0], format!("- Last session: {session}"));
    assert!(
        section.contains(
            &format!(
                "- Committed since (1): {} on feat/crlf: Keep CRLF out of the last field",
                &head.trim()[..12]
            )
            .as_str()
        ),
        "{section:#?}"
    );
    assert!(
        section.contains(&format!("- Pushed: origin/feat/crlf at {}", &head.trim()[..12]).as_str()),
        "{section:#?}"
    );
    assert!(
        section
            .iter()
            .any(|l| l.starts_with("- Pull requests: https://github.com/acme/csvkit/pull/17")),
        "{section:#?}"
    );
    assert!(
        section
            .iter()
            .any(|l| l.starts_with("- Files touched (5): ")),
        "{section:#?}"
    );
    assert!(
        section.contains(
            &"- Subagent tasks still running (1): general-purpose subagent — Audit quote handling"
        ),
        "{section:#?}"
    );
    assert!(!block.contains("Still failing"), "{block}");
    assert!(section.len() <= 12);
    // Captured events stay out of the stored facts' sections.
    assert!(!block.contains("`git:commit:"), "{block}");
}

#[test]
fn the_same_replay_twice_changes_nothing() {
    let s = repo();
    let lines = recorded("claude-session.jsonl");
    replay(&s, "claude-code", &lines, 0, true);
    let before = memory(&s);
    replay(&s, "claude-code", &lines, 0, false);
    assert_eq!(memory(&s), before, "a second replay wrote entries");
    // And git's hook run again for the same commit (a retried hook) writes nothing.
    let r = in_repo(&s, &["hook", "git", "post-commit"], &at(9000));
    assert_eq!((r.code, r.stdout.as_str(), r.stderr.as_str()), (0, "", ""));
    assert_eq!(memory(&s), before);
}

#[test]
fn git_and_the_agents_shell_seeing_one_commit_record_it_once() {
    let s = repo();
    std::fs::write(s.ws.join("src/parser.rs"), "pub fn parse() { /* v2 */ }\n").unwrap();
    git_at(&s, &["commit", "-q", "-am", "Parse faster"], &at(10));
    let head = git_at(&s, &["rev-parse", "HEAD"], &at(11));
    let key = format!("git:commit:{}", &head.trim()[..12]);
    let payload = serde_json::json!({"session_id": "s1", "cwd": s.ws, "hook_event_name": "PostToolUse",
        "tool_name": "Bash", "tool_input": {"command": "git commit -am 'Parse faster'"},
        "tool_response": {"stdout": format!("[main {}] Parse faster\n 1 file changed\n", &head.trim()[..7]), "stderr": ""}});
    hook(&s, "claude-code", &payload.to_string(), &at(12));
    hook(&s, "claude-code", &payload.to_string(), &at(13));
    let history = s.ok(&["history", &key, "--json"], Some(&at(20))).json();
    assert_eq!(history.as_array().unwrap().len(), 1, "{history}");
    assert_eq!(
        history[0]["value"],
        format!(
            "{} on main: Parse faster — 1 file: src/parser.rs",
            &head.trim()[..12]
        )
    );
    // Its valid time is the commit's own.
    assert_eq!(history[0]["valid_from"], at(10));
}

#[test]
fn a_hook_never_waits_for_the_writers_lock_and_its_event_is_spooled_then_applied() {
    let s = repo();
    hook(&s, "claude-code", &start_payload(&s, "s1"), &at(0));
    hook(
        &s,
        "claude-code",
        &edit_payload(&s, "s1", "src/parser.rs"),
        &at(10),
    );
    let before = memory(&s);
    // Another writer (a long import) holds the lock of the scope the trail goes to.
    let lock = std::fs::OpenOptions::new()
        .write(true)
        .open(s.ws.join(".mem7/local/.mem7/lock"))
        .unwrap();
    lock.lock().unwrap();
    let started = Instant::now();
    let r = hook(
        &s,
        "claude-code",
        &edit_payload(&s, "s1", "src/reader.rs"),
        &at(20),
    );
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "the hook took {:?}",
        started.elapsed()
    );
    assert_eq!(r.stdout, "");
    assert_eq!(memory(&s), before, "nothing written while the lock is held");
    let spool = std::fs::read_to_string(s.ws.join(".mem7/spool/capture.jsonl")).unwrap();
    assert_eq!(spool.lines().count(), 1, "{spool}");
    assert!(
        !spool.contains("old_string"),
        "the spool holds the write, not the payload: {spool}"
    );
    let log = std::fs::read_to_string(s.ws.join(".mem7/capture.log")).unwrap();
    assert!(
        log.contains("spooled 1 writes") && log.contains("the writers' lock is held"),
        "{log}"
    );
    // A session's start still gets its block (the index is current: no lock needed).
    let start = hook(&s, "claude-code", &start_payload(&s, "s2"), &at(25));
    assert!(
        block_of(&start.stdout).contains("- Files touched (1): src/parser.rs"),
        "{}",
        start.stdout
    );
    let status = in_repo(&s, &["capture", "status"], &at(26));
    assert!(
        status.stdout.contains("spool: 3 writes waiting"),
        "{}",
        status.stdout
    );
    drop(lock);

    // The next hook applies the spool, then its own event.
    hook(
        &s,
        "claude-code",
        &edit_payload(&s, "s1", "tests/crlf.rs"),
        &at(30),
    );
    let files = value_of(&s, "local:session:s1:files", &at(40));
    assert_eq!(
        files,
        "files edited or written in claude-code session s1 (3):\n- src/parser.rs\n- src/reader.rs\n- tests/crlf.rs"
    );
    assert_eq!(
        value_of(&s, "local:session:s2", &at(40))
            .split(',')
            .next()
            .unwrap(),
        format!(
            "claude-code session s2 in {} on branch main",
            s.ws.display()
        )
    );
    assert!(!s.ws.join(".mem7/spool/capture.jsonl").exists());

    // `mem7 capture drain` applies what waits, waiting for the lock itself.
    let lock = std::fs::OpenOptions::new()
        .write(true)
        .open(s.ws.join(".mem7/local/.mem7/lock"))
        .unwrap();
    lock.lock().unwrap();
    hook(
        &s,
        "claude-code",
        &edit_payload(&s, "s1", "README.md"),
        &at(50),
    );
    drop(lock);
    let drained = in_repo(&s, &["capture", "drain"], &at(60));
    assert_eq!(drained.code, 0, "{}", drained.stderr);
    assert!(
        drained.stdout.starts_with(
            "drained the spool: 1 written, 0 already held, 0 still waiting, 0 dropped"
        ),
        "{}",
        drained.stdout
    );
    assert!(value_of(&s, "local:session:s1:files", &at(70)).ends_with("\n- README.md"));

    // And so does the next ordinary write.
    let lock = std::fs::OpenOptions::new()
        .write(true)
        .open(s.ws.join(".mem7/local/.mem7/lock"))
        .unwrap();
    lock.lock().unwrap();
    hook(
        &s,
        "claude-code",
        &edit_payload(&s, "s1", "docs/a.md"),
        &at(80),
    );
    drop(lock);
    let stored = s.ok(&["store", "team:lead", "Ana"], Some(&at(90)));
    assert!(
        stored
            .stderr
            .contains("applied 1 captured writes the hooks had spooled"),
        "{}",
        stored.stderr
    );
    assert!(value_of(&s, "local:session:s1:files", &at(95)).ends_with("\n- docs/a.md"));
}

#[test]
fn without_a_workspace_a_hook_says_nothing_and_logs_the_drop() {
    let s = Sandbox::bare();
    let dir = s.dir.path().join("checkout");
    std::fs::create_dir_all(&dir).unwrap();
    let start = serde_json::json!({"session_id": "s1", "cwd": dir, "hook_event_name": "SessionStart", "source": "startup"});
    let r = hook(&s, "claude-code", &start.to_string(), &at(0));
    assert_eq!(r.stdout, "", "no block without a workspace");
    let edit = serde_json::json!({"session_id": "s1", "cwd": dir, "hook_event_name": "PostToolUse",
        "tool_name": "Write", "tool_input": {"file_path": dir.join("a.rs"), "content": "x"}, "tool_response": {}});
    let r = hook(&s, "claude-code", &edit.to_string(), &at(10));
    assert_eq!(r.stdout, "");
    for nonsense in ["", "not json", "{\"hook_event_name\": 7}"] {
        assert_eq!(hook(&s, "claude-code", nonsense, &at(20)).stdout, "");
        assert_eq!(hook(&s, "codex", nonsense, &at(20)).stdout, "");
    }
    let r = s.run(&["hook", "git", "post-commit"], Some(&at(30)));
    assert_eq!((r.code, r.stdout.as_str(), r.stderr.as_str()), (0, "", ""));
    assert!(!s.ws.exists(), "a hook never makes a workspace");
    let log = std::fs::read_to_string(s.home().join(".local/state/mem7/capture.log")).unwrap();
    assert!(
        log.contains("hook claude-code PostToolUse: dropped 1 writes: no workspace at"),
        "{log}"
    );
}

#[test]
fn a_broken_mem7_yaml_spools_until_it_is_fixed() {
    let s = repo();
    let yaml = s.ws.join("mem7.yaml");
    let good = std::fs::read_to_string(&yaml).unwrap();
    std::fs::write(&yaml, "capture: [this is not\n").unwrap();
    let r = hook(
        &s,
        "claude-code",
        &edit_payload(&s, "s1", "src/parser.rs"),
        &at(10),
    );
    assert_eq!(r.stdout, "");
    let log = std::fs::read_to_string(s.ws.join(".mem7/capture.log")).unwrap();
    assert!(
        log.contains("spooled 1 writes") && log.contains("mem7.yaml does not read"),
        "{log}"
    );
    std::fs::write(&yaml, format!("{good}\ncapture:\n  off: [sessions]\n")).unwrap();
    hook(&s, "claude-code", &start_payload(&s, "s1"), &at(20));
    assert_eq!(
        value_of(&s, "local:session:s1:files", &at(30)),
        "files edited or written in claude-code session s1 (1):\n- src/parser.rs"
    );
    // Sessions are turned off: the start was not recorded.
    s.miss(&["recall", "local:session:s1"], Some(&at(30)));
    let status = in_repo(&s, &["capture", "status"], &at(31));
    assert!(
        status.stdout.contains("turned off: sessions"),
        "{}",
        status.stdout
    );
}

#[test]
fn a_credential_in_a_commit_message_or_in_failing_output_drops_that_field_only() {
    let s = repo();
    let token = format!("ghp_{}", "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8");
    std::fs::write(s.ws.join("src/parser.rs"), "pub fn parse() { /* v2 */ }\n").unwrap();
    git_at(
        &s,
        &[
            "commit",
            "-q",
            "-am",
            &format!("Use {token} for the registry"),
        ],
        &at(10),
    );
    let head = git_at(&s, &["rev-parse", "HEAD"], &at(11));
    let commit = value_of(&s, &format!("git:commit:{}", &head.trim()[..12]), &at(20));
    assert_eq!(
        commit,
        format!(
            "{} on main: (subject not kept) — 1 file: src/parser.rs",
            &head.trim()[..12]
        )
    );
    let output = format!(
        "running 1 test\ntest auth::login ... FAILED\n\nfailures:\n\n---- auth::login stdout ----\ntoken was {token}\n\nfailures:\n    auth::login\n\ntest result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.01s\n"
    );
    let failure = serde_json::json!({"session_id": "s1", "cwd": s.ws, "hook_event_name": "PostToolUseFailure",
        "tool_name": "Bash", "tool_input": {"command": "cargo test auth"}, "error": format!("Exit code 101\n{output}")});
    hook(&s, "claude-code", &failure.to_string(), &at(30));
    // A command line holding the token is not recorded at all.
    let secret_command = serde_json::json!({"session_id": "s1", "cwd": s.ws, "hook_event_name": "PostToolUseFailure",
        "tool_name": "Bash", "tool_input": {"command": format!("cargo test --features {token}")}, "error": format!("Exit code 101\n{output}")});
    hook(&s, "claude-code", &secret_command.to_string(), &at(31));
    let checks = listed(&s, "local:checkout:", &at(40));
    let values: Vec<&str> = checks
        .iter()
        .map(|v| v["value"].as_str().unwrap())
        .filter(|v| v.starts_with("failing"))
        .collect();
    assert_eq!(
        values,
        [
            "failing: `cargo test auth` — test result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; failing: auth::login"
        ]
    );
    assert!(!all_text(&s).contains("ghp_"), "{}", all_text(&s));
    assert!(
        !std::fs::read_to_string(s.ws.join(".mem7/capture.log"))
            .unwrap_or_default()
            .contains("ghp_")
    );
}

#[test]
fn private_text_is_never_captured() {
    let s = repo();
    std::fs::write(s.ws.join("src/parser.rs"), "pub fn parse() { /* v3 */ }\n").unwrap();
    git_at(
        &s,
        &[
            "commit",
            "-q",
            "-am",
            "Fix the <private>ACME Corp</private> export",
        ],
        &at(10),
    );
    let head = git_at(&s, &["rev-parse", "HEAD"], &at(11));
    let commit = value_of(&s, &format!("git:commit:{}", &head.trim()[..12]), &at(20));
    assert!(commit.contains(": Fix the export — 1 file"), "{commit}");
    let events = [
        serde_json::json!({"session_id": "s1", "cwd": s.ws, "hook_event_name": "UserPromptSubmit", "prompt": "the <private>ACME Corp</private> deal"}),
        serde_json::json!({"session_id": "s1", "cwd": s.ws, "hook_event_name": "PostToolUseFailure", "tool_name": "Bash",
            "tool_input": {"command": "cargo test <private>acme_corp_case</private>"},
            "error": "Exit code 101\n<private>ACME Corp</private>\ntest result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out\n"}),
        serde_json::json!({"session_id": "s1", "cwd": s.ws, "hook_event_name": "PostToolUse", "tool_name": "Agent",
            "tool_input": {"description": "Audit <private>ACME Corp</private> data", "subagent_type": "Explore"},
            "tool_response": {"status": "completed", "agentId": "a1", "content": [{"type": "text", "text": "<private>ACME Corp</private> is fine."}]}}),
    ];
    for e in events {
        hook(&s, "claude-code", &e.to_string(), &at(30));
    }
    let text = all_text(&s);
    assert!(text.contains("failing: `cargo test`"), "{text}");
    assert!(
        text.contains("done: Explore subagent — Audit data → is fine."),
        "{text}"
    );
    assert!(!text.contains("ACME") && !text.contains("acme"), "{text}");
}

#[test]
fn a_codex_session_is_captured_and_its_start_gets_plain_text() {
    let s = repo();
    let lines = recorded("codex-session.jsonl");
    let starts = replay(&s, "codex", &lines, 0, true);
    // Codex takes plain text (JSON that is not its schema would be an error there).
    assert!(starts[0].starts_with("## mem7 memory"), "{}", starts[0]);
    let end = at(1000);
    let checks = listed(&s, "local:checkout:", &end);
    assert!(checks.iter().any(|v| v["value"] == "passing again: `cargo test` — test result: ok. 4 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out"), "{checks:?}");
    let files = value_of(
        &s,
        "local:session:019a7c3e-5b2d-7f10-8e4a-2c6d9b1f0a3e:files",
        &end,
    );
    assert!(files.ends_with("(1):\n- src/parser.rs"), "{files}");
    // Codex sends no SessionEnd: the session is shown as started.
    let mut cmd = s.command(&["context", "--hook", "codex"], Some(&end));
    cmd.current_dir(&s.ws);
    let block = world::finish(cmd.output().unwrap()).stdout;
    assert!(
        block.contains("- Last session: codex session 019a7c3e in "),
        "{block}"
    );
}

#[test]
fn setup_installs_capture_hooks_idempotently_and_keeps_other_hooks() {
    let s = Sandbox::new();
    let project = s.dir.path().join("project");
    std::fs::create_dir_all(project.join(".claude")).unwrap();
    let theirs = serde_json::json!({"hooks": {"PostToolUse": [{"matcher": "Edit", "hooks": [{"type": "command", "command": "prettier --write"}]}]}});
    std::fs::write(project.join(".claude/settings.json"), theirs.to_string()).unwrap();
    let setup = |args: &[&str]| {
        let mut cmd = s.command(args, None);
        cmd.current_dir(&project);
        let r = world::finish(cmd.output().unwrap());
        assert_eq!(r.code, 0, "{}", r.stderr);
        std::fs::read_to_string(project.join(".claude/settings.json")).unwrap()
    };
    let first = setup(&["setup", "claude-code", "--capture", "--write"]);
    assert_eq!(
        setup(&["setup", "claude-code", "--capture", "--write"]),
        first,
        "idempotent"
    );
    let v: serde_json::Value = serde_json::from_str(&first).unwrap();
    let hooks = &v["hooks"];
    for event in [
        "SessionStart",
        "PostToolUse",
        "PostToolUseFailure",
        "SubagentStop",
        "SessionEnd",
    ] {
        let mine: Vec<&serde_json::Value> = hooks[event]
            .as_array()
            .unwrap()
            .iter()
            .filter(|g| {
                g["hooks"][0]["command"]
                    .as_str()
                    .unwrap()
                    .ends_with(" hook claude-code")
            })
            .collect();
        assert_eq!(mine.len(), 1, "{event}: {first}");
    }
    assert_eq!(
        hooks["PostToolUse"][0]["hooks"][0]["command"], "prettier --write",
        "theirs kept first"
    );
    assert_eq!(hooks["PostToolUse"][1]["hooks"][0]["async"], true);
    // Without --capture: the context hook only, theirs still kept.
    let plain: serde_json::Value =
        serde_json::from_str(&setup(&["setup", "claude-code", "--write"])).unwrap();
    assert!(
        plain["hooks"]["SessionStart"][0]["hooks"][0]["command"]
            .as_str()
            .unwrap()
            .ends_with(" context --hook claude-code")
    );
    assert_eq!(plain["hooks"]["PostToolUse"].as_array().unwrap().len(), 1);
    assert!(plain["hooks"].get("SessionEnd").is_none(), "{plain}");
    // Codex: SessionStart prints the block through `mem7 hook codex`.
    setup(&["setup", "codex", "--capture", "--write"]);
    let codex: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(project.join(".codex/hooks.json")).unwrap())
            .unwrap();
    assert!(
        codex["hooks"]["PostToolUse"][0]["hooks"][0]["command"]
            .as_str()
            .unwrap()
            .ends_with(" hook codex")
    );

    // setup-git --capture keeps a hook that is not mem7's.
    let repo = s.dir.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    world::git_ok(&repo, &s.home(), &["init", "-q"]);
    std::fs::write(
        repo.join(".git/hooks/post-merge"),
        "#!/bin/sh\necho theirs\n",
    )
    .unwrap();
    let mut cmd = s.command(&["setup-git", "--capture"], None);
    cmd.current_dir(&repo);
    let r = world::finish(cmd.output().unwrap());
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("kept the hook already at") && r.stdout.contains("hook git post-merge"),
        "{}",
        r.stdout
    );
    assert_eq!(
        std::fs::read_to_string(repo.join(".git/hooks/post-merge")).unwrap(),
        "#!/bin/sh\necho theirs\n"
    );
    let commit_hook = std::fs::read_to_string(repo.join(".git/hooks/post-commit")).unwrap();
    assert!(
        commit_hook.contains("hook git post-commit \"$@\" || true"),
        "{commit_hook}"
    );
}
