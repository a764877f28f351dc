//! `mem7 watch` keeps the index current while other processes and people change files.
//! Observed through the index's SQLite file directly (running mem7 would catch up by
//! itself and prove nothing), polling with a bounded wait.

use std::process::Stdio;

use crate::world::{self, Sandbox, wait_for};

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
