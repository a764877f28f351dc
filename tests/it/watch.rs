//! `mem7 watch` keeps the index current while other processes and people change files.
//! Observed through the index's SQLite file directly (running mem7 would catch up by
//! itself and prove nothing), polling with a bounded wait.

use std::process::Stdio;

use crate::world::{self, Sandbox, wait_for};

mod one;

/// Counts the versions of `key` in the current index generation, and whether the full
/// text index holds every version.
fn index_state(ws: &std::path::Path, key: &str) -> Option<(i64, bool)> {
    let dir = ws.join(".mem7");
    let current = std::fs::read_to_string(dir.join("CURRENT")).ok()?;
    let conn = rusqlite::Connection::open_with_flags(
        dir.join(current.trim()),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .ok()?;
    let count: i64 = conn
        .query_row("SELECT count(*) FROM versions WHERE key = ?1", [key], |r| {
            r.get(0)
        })
        .ok()?;
    let max_id: i64 = conn
        .query_row("SELECT coalesce(max(id), 0) FROM versions", [], |r| {
            r.get(0)
        })
        .ok()?;
    let indexed: i64 = conn
        .query_row("SELECT v FROM meta WHERE k = 'fulltext_max_id'", [], |r| {
            r.get::<_, String>(0)
        })
        .ok()?
        .parse()
        .ok()?;
    let dirty: i64 = conn
        .query_row("SELECT count(*) FROM fulltext_dirty", [], |r| r.get(0))
        .ok()?;
    Some((count, indexed >= max_id && dirty == 0))
}

#[test]
fn watch_follows_other_writers_and_hand_edits() {
    let s = Sandbox::new();
    s.ok(&["store", "seed", "first"], None);
    let mut watch = s
        .command(&["watch", "--interval", "1"], None)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let lines = world::lines_of(watch.stdout.take().unwrap());
    let started = lines.recv_timeout(world::PATIENCE).expect("watch started");
    let mut log = vec![started.clone()];
    let banner = if started.contains("keeping the index") {
        started
    } else {
        lines.recv_timeout(world::PATIENCE).unwrap()
    };
    assert!(banner.contains("keeping the index"), "{banner}");

    // Another process stores: watch brings the full-text index along.
    s.ok(&["store", "other:process", "hello from elsewhere"], None);
    wait_for(
        "the full-text index to follow another process's store",
        || index_state(&s.ws, "other:process").is_some_and(|(n, ft)| n == 1 && ft),
    );

    // A person (or git pull) appends an entry by hand: watch applies it.
    s.append_by_hand("by:hand", "written in an editor");
    wait_for("the hand-written entry to be indexed", || {
        index_state(&s.ws, "by:hand").is_some_and(|(n, ft)| n == 1 && ft)
    });

    // What it applied is logged (a bounded wait; generous, as on a loaded machine the
    // log line can trail the index by seconds).
    world::poll(|| {
        log.extend(lines.try_iter());
        log.iter().any(|l| l.contains("applied"))
    });
    let _ = watch.kill();
    let _ = watch.wait();
    assert!(
        log.iter().any(|l| l.contains("applied 1 new entry")),
        "{log:#?}"
    );
}

/// A command run with `MEM7_TRACE=startup`, and the line in which it says how its
/// start-up knew the index was current. Fails rather than waits when the command has not
/// ended within the tests' patience (one waiting on a stopped watcher would never end).
fn traced(s: &Sandbox, args: &[&str]) -> (world::Run, String) {
    let mut child = s
        .command(args, None)
        .env("MEM7_TRACE", "startup")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    if !world::poll(|| child.try_wait().unwrap().is_some()) {
        let _ = child.kill();
        panic!(
            "`mem7 {}` still running after {:?}",
            args.join(" "),
            world::PATIENCE
        );
    }
    let run = world::finish(child.wait_with_output().unwrap());
    let line = run
        .stderr
        .lines()
        .find(|l| l.contains("trace: start-up"))
        .unwrap_or_default()
        .to_string();
    (run, line)
}

/// Appends an entry to `file` in place (`O_APPEND`: the folder does not change), valid
/// since January and recorded at `recorded`.
fn append_in_place(file: &std::path::Path, key: &str, value: &str, recorded: &str) {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new().append(true).open(file).unwrap();
    f.write_all(
        format!(
            "\n## {key}\n\n```mem7\nop: store\nvalid_from: 2026-01-01T00:00:00Z\nrecorded: {recorded}\nagent: a person\n```\n\n> {value}\n\n---\n"
        )
        .as_bytes(),
    )
    .unwrap();
}

/// Waits until a start-up takes a watcher's word (the first after a watcher begins
/// checks every file once and records its token).
fn wait_until_vouched(s: &Sandbox, what: &str) {
    wait_for(what, || {
        traced(s, &["list"]).1.contains("a watcher vouched")
    });
}

/// Appends `key` to `file` in place, then checks that the next command sees it and
/// that its start-up was told of exactly that one file.
fn seen_as_one_change(s: &Sandbox, file: &std::path::Path, key: &str, value: &str, recorded: &str) {
    seen_after_append(s, file, (key, value, recorded), "1 of them changed");
}

/// Appends `key` to `file` in place, then checks that the next command sees it and that
/// its start-up trace says `how`.
fn seen_after_append(s: &Sandbox, file: &std::path::Path, entry: (&str, &str, &str), how: &str) {
    let (key, value, recorded) = entry;
    append_in_place(file, key, value, recorded);
    let (run, line) = traced(s, &["recall", key]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains(value), "{}", run.stdout);
    assert!(line.contains(how), "{line}");
}

/// `mem7 watch` (reconciling only on events), with its output read on (and kept) so
/// that it never writes into a closed pipe.
struct Watching {
    child: std::process::Child,
    _out: std::sync::mpsc::Receiver<String>,
}

impl Watching {
    /// Starts it and waits for its banner.
    fn start(s: &Sandbox) -> Watching {
        Watching::every(s, "3600")
    }

    /// Starts it with a reconcile every `seconds`.
    fn every(s: &Sandbox, seconds: &str) -> Watching {
        let mut child = s
            .command(&["watch", "--interval", seconds], None)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let lines = world::lines_of(child.stdout.take().unwrap());
        let mut log = Vec::new();
        world::wait_for_line(&lines, &mut log, |l| l.contains("keeping the index"));
        Watching { child, _out: lines }
    }

    /// Kills it without a chance to clean up.
    fn kill(self) {
        drop(self);
    }
}

impl Drop for Watching {
    /// Also when a test fails midway: no watcher (nor a stopped one) outlives its test.
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Three day files, each with one fact.
fn three_days() -> Sandbox {
    let s = Sandbox::new();
    for (day, key) in [
        ("2026-11-01", "a"),
        ("2026-11-02", "b"),
        ("2026-11-03", "c"),
    ] {
        s.ok(&["store", key, "first"], Some(&format!("{day}T10:00:00Z")));
    }
    s
}

#[test]
fn a_running_watcher_vouches_for_the_files_and_a_change_in_place_still_counts() {
    let s = three_days();
    let (_, line) = traced(&s, &["list"]);
    assert!(
        line.contains("3 day files checked one by one") && line.contains("no watcher"),
        "{line}"
    );

    let watch = Watching::start(&s);
    // The first start-up after the watcher began checks every file once and records the
    // watcher's token; from then on the watcher's word is taken.
    wait_for("a start-up the watcher vouched for", || {
        traced(&s, &["list"])
            .1
            .contains("a watcher vouched for the files, 0 of them changed")
    });

    // A person appends to the oldest day file in place: its folder does not change.
    append_in_place(
        &s.memory_dir().join("2026-11-01.md"),
        "by:hand",
        "written in place",
        "2026-11-30T00:00:00Z",
    );
    let (run, line) = traced(&s, &["recall", "by:hand"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("written in place"), "{}", run.stdout);
    assert!(
        line.contains("a watcher vouched for the files, 1 of them changed"),
        "{line}"
    );

    // A store through mem7 names today's file, and only it.
    s.ok(&["store", "d", "second"], None);
    let (run, line) = traced(&s, &["recall", "d"]);
    assert!(run.stdout.contains("second"), "{}", run.stdout);
    assert!(line.contains("2 of them changed"), "{line}");

    // Killed without a chance to clean up: its socket is left, and nobody answers on it.
    watch.kill();
    assert!(s.ws.join(".mem7/vouch.sock").exists());
    seen_after_append(
        &s,
        &s.memory_dir().join("2026-11-02.md"),
        ("after:watch", "seen by a scan", "2026-12-01T09:01:00Z"),
        "no watcher",
    );
}

#[test]
fn a_memory_folder_replaced_under_a_watcher_is_scanned_then_watched_anew() {
    let s = three_days();
    let watch = Watching::start(&s);
    wait_until_vouched(&s, "a start-up the watcher vouched for");
    // Replaced by a copy (a checkout that recreates the folder, a restore from backup):
    // the watch on the old folder no longer says anything about this one.
    let memory = s.memory_dir();
    let old = s.ws.join("memory-old");
    std::fs::rename(&memory, &old).unwrap();
    world::copy_dir(&old, &memory);
    append_in_place(
        &memory.join("2026-11-03.md"),
        "in:copy",
        "in the new folder",
        "2026-11-30T00:00:00Z",
    );
    let (run, line) = traced(&s, &["recall", "in:copy"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("in the new folder"), "{}", run.stdout);
    assert!(line.contains("checked one by one"), "{line}");
    // The watcher watches the new folder; once a start-up has checked it, its word is
    // taken again, and a change in place is still seen.
    wait_until_vouched(&s, "the watcher to vouch for the new folder");
    seen_as_one_change(
        &s,
        &memory.join("2026-11-01.md"),
        "later",
        "after the copy",
        "2026-11-30T00:00:01Z",
    );
    watch.kill();
}

#[test]
fn a_socket_that_is_not_this_workspaces_watcher_is_never_believed() {
    // Another workspace's watcher, its socket linked into this one's index folder.
    let other = three_days();
    let watch = Watching::start(&other);
    wait_for("the other watcher's socket", || {
        other.ws.join(".mem7/vouch.sock").exists()
    });
    let s = three_days();
    let socket = s.ws.join(".mem7/vouch.sock");
    std::fs::hard_link(other.ws.join(".mem7/vouch.sock"), &socket).unwrap();
    seen_after_append(
        &s,
        &s.memory_dir().join("2026-11-01.md"),
        ("here", "this workspace", "2026-11-30T00:00:00Z"),
        "checked one by one",
    );

    // A link to it is not followed either.
    std::fs::remove_file(&socket).unwrap();
    std::os::unix::fs::symlink(other.ws.join(".mem7/vouch.sock"), &socket).unwrap();
    seen_after_append(
        &s,
        &s.memory_dir().join("2026-11-02.md"),
        ("there", "still here", "2026-11-30T00:00:01Z"),
        "no watcher",
    );
    watch.kill();

    // A file where the socket goes: the watcher says it cannot vouch, and carries on.
    std::fs::remove_file(&socket).unwrap();
    std::fs::write(&socket, "not a socket").unwrap();
    let mut watch = s
        .command(&["watch", "--interval", "3600"], None)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let errors = world::lines_of(watch.stderr.take().unwrap());
    let mut log = Vec::new();
    world::wait_for_line(&errors, &mut log, |l| {
        l.contains("will check every day file") && l.contains("is not a socket")
    });
    let lines = world::lines_of(watch.stdout.take().unwrap());
    world::wait_for_line(&lines, &mut log, |l| l.contains("keeping the index"));
    let (_, line) = traced(&s, &["list"]);
    assert!(line.contains("no watcher"), "{line}");
    let _ = watch.kill();
    let _ = watch.wait();
}

#[test]
fn when_the_vouching_watcher_ends_another_running_one_takes_over() {
    let s = three_days();
    let first = Watching::start(&s);
    wait_until_vouched(&s, "the first watcher to vouch");
    // A second server on the same workspace leaves the part to the first.
    let second = Watching::start(&s);
    first.kill();
    let (_, line) = traced(&s, &["list"]);
    assert!(line.contains("no watcher"), "{line}");
    // The second takes it at its next wake (any change in memory/), and from then on
    // start-ups take its word; a change in place is still seen.
    s.ok(&["store", "wake", "up"], None);
    wait_until_vouched(&s, "the second watcher to vouch");
    seen_as_one_change(
        &s,
        &s.memory_dir().join("2026-11-02.md"),
        "taken:over",
        "seen",
        "2026-12-01T09:01:00Z",
    );
    second.kill();
}

#[test]
fn a_write_inotify_cannot_see_is_caught_by_the_reconcile() {
    let s = three_days();
    let watch = Watching::every(&s, "1");
    wait_until_vouched(&s, "the watcher to vouch");
    // A write through a hard link outside memory/: inotify reports the path written,
    // so the watcher hears nothing; its reconcile (every second here) checks every file.
    let elsewhere = s.dir.path().join("elsewhere.md");
    std::fs::hard_link(s.memory_dir().join("2026-11-01.md"), &elsewhere).unwrap();
    append_in_place(
        &elsewhere,
        "via:link",
        "through another name",
        "2026-11-30T00:00:00Z",
    );
    wait_for("the reconcile to bring the linked write in", || {
        s.run(&["recall", "via:link"], None)
            .stdout
            .contains("through another name")
    });
    watch.kill();
}

/// A watcher stopped in its tracks (Ctrl-Z, a debugger) holds its socket and lock but
/// answers nobody: each command waits for it a moment at most, then checks every day
/// file itself, so nothing hangs and a change made meanwhile is seen. Once the watcher
/// runs again, its word is taken again.
#[test]
fn a_stopped_watcher_holds_no_command_up() {
    let s = three_days();
    let watch = Watching::start(&s);
    wait_until_vouched(&s, "a start-up the watcher vouched for");
    let pid = watch.child.id().to_string();
    let signal = |name: &str| {
        let status = std::process::Command::new("kill")
            .args([name, pid.as_str()])
            .status()
            .unwrap();
        assert!(status.success(), "kill {name} {pid}");
    };
    signal("-STOP");
    // `kill` returns before every thread has stopped: a thread woken meanwhile could
    // still answer. Stopped means every thread says so (`T` in /proc).
    wait_for("every thread of the watcher to stop", || {
        std::fs::read_dir(format!("/proc/{pid}/task"))
            .unwrap()
            .all(|task| {
                let stat =
                    std::fs::read_to_string(task.unwrap().path().join("stat")).unwrap_or_default();
                stat.rsplit_once(") ")
                    .is_some_and(|(_, rest)| rest.starts_with('T'))
            })
    });
    append_in_place(
        &s.memory_dir().join("2026-11-03.md"),
        "while:stopped",
        "seen by a scan",
        "2026-12-01T09:02:00Z",
    );
    // Several commands in a row: their unanswered connections wait in the stopped
    // watcher's queue, and none may hold up the next.
    for _ in 0..4 {
        let (run, line) = traced(&s, &["recall", "while:stopped"]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert!(run.stdout.contains("seen by a scan"), "{}", run.stdout);
        assert!(
            line.contains("day files checked one by one") && line.contains("no watcher"),
            "{line}"
        );
    }
    signal("-CONT");
    wait_until_vouched(&s, "the watcher's word again once it runs");
    // Its answer still names the file changed while it was stopped (its event was
    // queued), beside the one changed now: both are checked.
    seen_after_append(
        &s,
        &s.memory_dir().join("2026-11-01.md"),
        ("after:resume", "seen from its word", "2026-12-01T09:03:00Z"),
        "a watcher vouched for the files, 2 of them changed",
    );
    watch.kill();
}
