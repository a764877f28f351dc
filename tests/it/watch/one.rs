//! One watcher per process: a long-running `mem7 mcp` or `mem7 watch` keeps one inotify
//! queue with one watch on the memory folder, which both wakes its loop and answers
//! other processes; the process's own calls ask it in memory, never through its socket.
//! Observed through `/proc` (the queues a process holds and what they watch), the
//! servers' `MEM7_TRACE=requests` lines, and the index's SQLite file.

use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::Receiver;

use serde_json::{Value, json};

use super::*;

/// `mem7 mcp` over raw JSON-RPC lines on its standard input and output, its standard
/// error read on (traces).
struct Server {
    child: Child,
    stdin: ChildStdin,
    out: Receiver<String>,
    err: Receiver<String>,
    id: u64,
}

impl Server {
    /// Starts it (tracing `trace`) and waits for its answer to `initialize`: by then its
    /// watcher runs.
    fn start(s: &Sandbox, trace: &str) -> Server {
        let mut child = s
            .command(&["mcp"], None)
            .env("MEM7_TRACE", trace)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut server = Server {
            stdin: child.stdin.take().unwrap(),
            out: world::lines_of(child.stdout.take().unwrap()),
            err: world::lines_of(child.stderr.take().unwrap()),
            child,
            id: 0,
        };
        server.ask(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "t", "version": "1"}}),
        );
        server.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        server
    }

    fn send(&mut self, message: Value) {
        self.stdin
            .write_all(format!("{message}\n").as_bytes())
            .unwrap();
    }

    /// Sends a request and waits for its answer's `result`.
    fn ask(&mut self, method: &str, params: Value) -> Value {
        self.id += 1;
        let id = self.id;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let mut answer = None;
        let out = &self.out;
        wait_for("the server's answer", || {
            answer = out
                .try_iter()
                .filter_map(|l| serde_json::from_str::<Value>(&l).ok())
                .find(|v| v["id"] == id);
            answer.is_some()
        });
        let answer = answer.unwrap();
        assert!(answer["error"].is_null(), "{answer}");
        answer["result"].clone()
    }

    /// Calls a tool; returns its text and the trace line of how the call knew the index
    /// was current.
    fn call(&mut self, tool: &str, args: Value) -> (String, String) {
        let result = self.ask("tools/call", json!({"name": tool, "arguments": args}));
        let text = result["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let mut log = Vec::new();
        world::wait_for_line(&self.err, &mut log, |l| l.contains("trace: request in"));
        let line = log
            .into_iter()
            .rfind(|l| l.contains("trace: request in"))
            .unwrap();
        (text, line)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The inotify queues process `pid` holds, and how many watches they hold on the folder
/// `dir` (`/proc/PID/fdinfo` names each watch's inode in hex).
fn inotify_of(pid: u32, dir: &std::path::Path) -> (usize, usize) {
    let ino = format!("ino:{:x} ", std::fs::metadata(dir).unwrap().ino());
    let mut queues = 0;
    let mut watches = 0;
    for fd in std::fs::read_dir(format!("/proc/{pid}/fd")).unwrap() {
        let fd = fd.unwrap();
        let Ok(target) = std::fs::read_link(fd.path()) else {
            continue;
        };
        if target.to_string_lossy() != "anon_inode:inotify" {
            continue;
        }
        queues += 1;
        let info = std::fs::read_to_string(format!(
            "/proc/{pid}/fdinfo/{}",
            fd.file_name().to_string_lossy()
        ))
        .unwrap_or_default();
        watches += info
            .lines()
            .filter(|l| l.starts_with("inotify wd:") && l.contains(&ino))
            .count();
    }
    (queues, watches)
}

#[test]
fn a_server_and_a_watch_each_hold_one_inotify_watch_on_the_memory_folder() {
    let s = three_days();
    let memory = s.memory_dir();
    let server = Server::start(&s, "");
    assert_eq!(
        inotify_of(server.child.id(), &memory),
        (1, 1),
        "one inotify queue, one watch on memory/"
    );
    // A second long-running process on the workspace: it does not answer for it (the
    // server does), but watches for its own wake-ups, with one queue too.
    let watch = Watching::start(&s);
    assert_eq!(inotify_of(watch.child.id(), &memory), (1, 1));
    watch.kill();
    drop(server);
}

#[test]
fn the_servers_own_calls_are_vouched_in_memory_and_others_on_the_socket() {
    let s = three_days();
    let mut server = Server::start(&s, "requests");
    let socket = s.ws.join(".mem7/vouch.sock");
    // Another process asks on the socket.
    wait_until_vouched(&s, "a start-up the server vouched for");
    let (_, line) = traced(&s, &["list"]);
    assert!(line.contains("a watcher vouched for the files"), "{line}");
    // The server asks itself in memory.
    let (text, line) = server.call("memory_recall", json!({"key": "a"}));
    assert!(text.contains("first"), "{text}");
    assert!(
        line.contains("this process's own watcher (asked in memory) vouched for the files"),
        "{line}"
    );

    // Its socket made unusable: other processes scan, the server's calls still take its
    // word, and still see an edit in place at once.
    std::fs::remove_file(&socket).unwrap();
    std::fs::write(&socket, "not a socket").unwrap();
    let (_, line) = traced(&s, &["list"]);
    assert!(line.contains("no watcher"), "{line}");
    append_in_place(
        &s.memory_dir().join("2026-11-01.md"),
        "by:hand",
        "written in place",
        "2026-11-30T00:00:00Z",
    );
    let (text, line) = server.call("memory_recall", json!({"key": "by:hand"}));
    assert!(text.contains("written in place"), "{text}");
    assert!(
        line.contains("own watcher (asked in memory) vouched for the files, 1 of them changed"),
        "{line}"
    );
}

/// The loop wakes on the watcher alone (no reconcile within the test: an hour's
/// interval): after an edit by hand, and after the memory folder was replaced.
#[test]
fn the_loop_catches_up_after_a_hand_edit_and_a_replaced_folder() {
    let s = three_days();
    let watch = Watching::start(&s);
    append_in_place(
        &s.memory_dir().join("2026-11-02.md"),
        "by:hand",
        "written in place",
        "2026-11-30T00:00:00Z",
    );
    wait_for("the watch to apply the hand edit", || {
        index_state(&s.ws, "by:hand").is_some_and(|(n, ft)| n == 1 && ft)
    });

    let memory = s.memory_dir();
    let old = s.ws.join("memory-old");
    std::fs::rename(&memory, &old).unwrap();
    world::copy_dir(&old, &memory);
    append_in_place(
        &memory.join("2026-11-03.md"),
        "in:copy",
        "in the new folder",
        "2026-11-30T00:00:01Z",
    );
    wait_for("the watch to apply the entry in the new folder", || {
        index_state(&s.ws, "in:copy").is_some_and(|(n, ft)| n == 1 && ft)
    });
    // And the new folder is watched: an edit in place there wakes it too.
    append_in_place(
        &memory.join("2026-11-01.md"),
        "later",
        "after the copy",
        "2026-11-30T00:00:02Z",
    );
    wait_for("the watch to apply an edit in the new folder", || {
        index_state(&s.ws, "later").is_some_and(|(n, ft)| n == 1 && ft)
    });
    watch.kill();
}
