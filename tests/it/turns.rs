//! Turn facts with a model (issue 35's optional part): a Stop hook queues the turn, and
//! `mem7 capture drain` asks a real loopback HTTP server speaking the OpenAI chat API
//! for its facts. A server that hangs, one that answers nonsense, no model configured,
//! a project's file naming a model, a turn that only asked memory, a credential.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::world::{Run, Sandbox, finish};

/// What the fake chat server does with a request.
#[derive(Clone, Copy)]
enum Answer {
    /// Seven facts, one too long and one holding a credential.
    Facts,
    /// Reads the request, then says nothing for a minute.
    Hang,
    /// A 200 reply whose content is prose, not JSON.
    Nonsense,
}

/// A token shaped like a GitHub personal access token (the credential check refuses it).
fn token() -> String {
    format!("ghp_{}", "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8")
}

/// A loopback server speaking enough HTTP/1.1 and of `/v1/chat/completions`.
struct Chat {
    addr: SocketAddr,
    bodies: Arc<Mutex<Vec<String>>>,
}

impl Chat {
    fn start(answer: Answer) -> Chat {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let bodies = Arc::new(Mutex::new(Vec::new()));
        let log = bodies.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let log = log.clone();
                std::thread::spawn(move || serve(stream, answer, &log));
            }
        });
        Chat { addr, bodies }
    }

    fn url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    fn bodies(&self) -> Vec<String> {
        self.bodies.lock().unwrap().clone()
    }
}

fn serve(stream: TcpStream, answer: Answer, log: &Mutex<Vec<String>>) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
        return;
    }
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().unwrap();
        }
    }
    let mut body = vec![0u8; length];
    reader.read_exact(&mut body).unwrap();
    let body = String::from_utf8(body).unwrap();
    log.lock().unwrap().push(body.clone());
    let req: Value = serde_json::from_str(&body).unwrap();
    assert!(
        request_line.contains("/v1/chat/completions"),
        "{request_line}"
    );
    assert_eq!(req["model"], "llama3.2");
    let content = match answer {
        Answer::Hang => {
            std::thread::sleep(Duration::from_secs(60));
            return;
        }
        Answer::Nonsense => "Sure! Here is what I think about your code: it is nice.".into(),
        Answer::Facts => json!({ "facts": [
            "The CSV parser now keeps CRLF inside quoted fields",
            "Regression tests for CRLF live in tests/crlf.rs",
            "one two three four five six seven eight nine ten eleven twelve",
            format!("Deploys authenticate with {}", token()),
            "Release 0.4 waits on the CRLF fix",
            "The reader module was left unchanged",
            "Benchmarks still need a CRLF case",
            "A seventh fact that should never be stored",
        ]})
        .to_string(),
    };
    let reply = json!({
        "id": "chatcmpl-1", "object": "chat.completion", "model": "llama3.2",
        "choices": [{ "index": 0, "finish_reason": "stop",
                      "message": { "role": "assistant", "content": content } }],
    })
    .to_string();
    let mut stream = stream;
    let _ = write!(
        stream,
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{reply}",
        reply.len()
    );
}

/// A sandbox whose workspace is the user's own (so its mem7.yaml is the user's word),
/// with `capture.model` pointing at `url` when given.
struct Turns {
    s: Sandbox,
    /// Transcripts live outside the sandbox, as the client's own files do.
    transcripts: tempfile::TempDir,
}

impl Turns {
    fn new(url: Option<&str>) -> Turns {
        let s = Sandbox::new();
        if let Some(url) = url {
            add_model(&s.ws, url);
        }
        Turns {
            s,
            transcripts: tempfile::tempdir().unwrap(),
        }
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = self.s.command(args, None);
        cmd.env("MEM7_USER_WORKSPACE", &self.s.ws);
        cmd
    }

    fn run(&self, args: &[&str]) -> Run {
        finish(self.command(args).output().unwrap())
    }

    /// A Stop hook for a turn whose transcript holds `prompt`, the `tools` called and
    /// `answer`: exit 0, nothing on standard error.
    fn stop(&self, prompt: &str, tools: &[&str], answer: &str) -> Run {
        let path = self.transcript(prompt, tools, answer);
        let payload = json!({
            "session_id": "6f1c2a8e-1111", "hook_event_name": "Stop",
            "transcript_path": path, "cwd": self.s.ws, "stop_hook_active": false,
        });
        let mut child = self
            .command(&["hook", "claude-code"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(payload.to_string().as_bytes())
            .unwrap();
        let r = finish(child.wait_with_output().unwrap());
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert_eq!((r.stdout.as_str(), r.stderr.as_str()), ("", ""));
        r
    }

    fn transcript(&self, prompt: &str, tools: &[&str], answer: &str) -> PathBuf {
        let mut lines = vec![
            json!({"type": "user", "message": {"role": "user", "content": "an earlier prompt"}}),
            json!({"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": "an earlier answer"}]}}),
            json!({"type": "user", "message": {"role": "user", "content": prompt}}),
        ];
        for (n, tool) in tools.iter().enumerate() {
            lines.push(
                json!({"type": "assistant", "message": {"role": "assistant", "content": [
                {"type": "tool_use", "id": format!("t{n}"), "name": tool, "input": {}}]}}),
            );
            lines.push(
                json!({"type": "user", "message": {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": format!("t{n}"), "content": "ok"}]}}),
            );
        }
        lines.push(json!({"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": answer}]}}));
        let text: String = lines.iter().map(|l| l.to_string() + "\n").collect();
        let path = self.transcripts.path().join("transcript.jsonl");
        std::fs::write(&path, text).unwrap();
        path
    }

    fn queued(&self) -> usize {
        queued(&self.s.ws)
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.s.ws.join(".mem7/capture.log")).unwrap_or_default()
    }
}

fn add_model(ws: &Path, url: &str) {
    let yaml = ws.join("mem7.yaml");
    let mut text = std::fs::read_to_string(&yaml).unwrap_or_default();
    text.push_str(&format!(
        "\ncapture:\n  model:\n    url: {url}\n    model: llama3.2\n    timeout_secs: 1\n"
    ));
    std::fs::write(yaml, text).unwrap();
}

/// Queued turns (lines of the queue's files).
fn queued(ws: &Path) -> usize {
    let Ok(dir) = std::fs::read_dir(ws.join(".mem7/turns")) else {
        return 0;
    };
    dir.flatten()
        .filter_map(|e| std::fs::read_to_string(e.path()).ok())
        .map(|t| t.lines().filter(|l| !l.trim().is_empty()).count())
        .sum()
}

const PROMPT: &str = "Make the parser keep CRLF inside quoted fields";
const ANSWER: &str = "Done: the parser keeps CRLF in quoted fields; tests/crlf.rs covers it.";

#[test]
fn a_stopped_turn_becomes_at_most_five_inferred_facts() {
    let chat = Chat::start(Answer::Facts);
    let t = Turns::new(Some(&chat.url()));
    t.stop(PROMPT, &["Edit", "Bash"], ANSWER);
    assert_eq!(t.queued(), 1);
    assert!(chat.bodies().is_empty(), "the hook sent nothing");

    let r = t.run(&["capture", "drain"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains("1 turns answered, 5 facts written"),
        "{}",
        r.stdout
    );
    assert_eq!(t.queued(), 0);
    let sent: Value = serde_json::from_str(&chat.bodies()[0]).unwrap();
    let user = sent["messages"][1]["content"].as_str().unwrap();
    assert!(user.contains(PROMPT) && user.contains(ANSWER), "{user}");
    assert!(!user.contains("an earlier"), "only the last turn: {user}");

    let listed = t.run(&["list", "--tag", "turns", "--json"]);
    assert_eq!(listed.code, 0, "{}", listed.stderr);
    let facts = listed.json();
    let facts = facts.as_array().unwrap();
    assert_eq!(facts.len(), 5, "{facts:?}");
    for f in facts {
        let value = f["value"].as_str().unwrap();
        assert!(value.split_whitespace().count() <= 10, "{value}");
        assert!(
            !value.contains("ghp_") && !value.contains("seventh"),
            "{value}"
        );
        assert!(f["key"].as_str().unwrap().starts_with("local:turn:"), "{f}");
        assert_eq!(f["tier"], "inferred", "{f}");
    }
    let found = t.run(&["search", "CRLF quoted fields", "--json"]).json();
    assert!(
        found.as_array().unwrap().iter().any(|h| h["value"]
            .as_str()
            .is_some_and(|v| v.contains("keeps CRLF inside quoted"))),
        "{found}"
    );

    // The same turn again (a retried hook) writes nothing more.
    t.stop(PROMPT, &["Edit", "Bash"], ANSWER);
    let again = t.run(&["capture", "drain"]);
    assert!(again.stdout.contains("0 facts written"), "{}", again.stdout);
}

#[test]
fn a_model_that_hangs_keeps_the_turn_for_a_later_drain() {
    let chat = Chat::start(Answer::Hang);
    let t = Turns::new(Some(&chat.url()));
    t.stop(PROMPT, &["Edit"], ANSWER);
    let started = Instant::now();
    let r = t.run(&["capture", "drain"]);
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "drain took {:?}",
        started.elapsed()
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("1 still queued"), "{}", r.stdout);
    assert!(
        r.stdout.contains("stay queued for a later drain"),
        "{}",
        r.stdout
    );
    assert_eq!(t.queued(), 1);
    assert_eq!(chat.bodies().len(), 1);
    let status = t.run(&["capture", "status"]);
    assert!(
        status.stdout.contains("1 turns queued"),
        "{}",
        status.stdout
    );
}

#[test]
fn a_model_that_answers_nonsense_drops_the_turn_with_a_log_line() {
    let chat = Chat::start(Answer::Nonsense);
    let t = Turns::new(Some(&chat.url()));
    t.stop(PROMPT, &["Edit"], ANSWER);
    let r = t.run(&["capture", "drain"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("1 dropped"), "{}", r.stdout);
    assert_eq!(t.queued(), 0, "not retried forever");
    assert!(
        t.log().contains("the model's answer is not facts"),
        "{}",
        t.log()
    );
    // A later drain asks nothing more.
    t.run(&["capture", "drain"]);
    assert_eq!(chat.bodies().len(), 1);
}

#[test]
fn without_a_model_of_the_users_own_nothing_is_queued() {
    let chat = Chat::start(Answer::Facts);
    // No model anywhere.
    let t = Turns::new(None);
    t.stop(PROMPT, &["Edit"], ANSWER);
    assert_eq!(t.queued(), 0);
    let status = t.run(&["capture", "status"]);
    assert!(
        status.stdout.contains("turn facts: off"),
        "{}",
        status.stdout
    );

    // A project's mem7.yaml naming a model is not the user's word.
    let project = Sandbox::new();
    add_model(&project.ws, &chat.url());
    let transcript = t.transcript(PROMPT, &["Edit"], ANSWER);
    let payload =
        json!({"session_id": "s", "hook_event_name": "Stop", "transcript_path": transcript});
    let r = project.run_stdin(&["hook", "claude-code"], None, &payload.to_string());
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
    assert_eq!(queued(&project.ws), 0);
    project.ok(&["capture", "drain"], None);
    assert!(chat.bodies().is_empty());
}

#[test]
fn a_turn_that_only_asked_memory_is_not_queued() {
    let chat = Chat::start(Answer::Facts);
    let t = Turns::new(Some(&chat.url()));
    t.stop(
        "What did we decide about CRLF?",
        &["mcp__mem7__memory_search", "mcp__mem7__memory_recall"],
        "We decided to keep CRLF in quoted fields.",
    );
    t.stop("What did we decide about CRLF?", &[], "To keep it.");
    assert_eq!(t.queued(), 0);
    // A question that led to work is queued.
    t.stop("Why does the CRLF test fail?", &["Bash"], ANSWER);
    assert_eq!(t.queued(), 1);
}

#[test]
fn a_credential_in_the_turn_never_reaches_a_file_or_the_model() {
    let chat = Chat::start(Answer::Facts);
    let t = Turns::new(Some(&chat.url()));
    let secret = token();
    t.stop(
        &format!("Deploy with {secret} <private>the ACME deal</private>"),
        &["Bash"],
        "Deployed the CRLF fix <private>for ACME</private>.",
    );
    assert_eq!(t.queued(), 1);
    let no_secret_in_files = || {
        for (path, bytes) in crate::world::snapshot(t.s.dir.path()) {
            let text = String::from_utf8_lossy(&bytes);
            assert!(!text.contains(&secret), "{path} holds the credential");
            assert!(!text.contains("ACME"), "{path} holds private text");
        }
    };
    no_secret_in_files();
    let r = t.run(&["capture", "drain"]);
    assert!(r.stdout.contains("facts written"), "{}", r.stdout);
    for body in chat.bodies() {
        assert!(!body.contains(&secret) && !body.contains("ACME"), "{body}");
        assert!(body.contains("Deployed the CRLF fix"), "{body}");
    }
    no_secret_in_files();
}

#[test]
fn a_running_watch_drains_queued_turns() {
    let chat = Chat::start(Answer::Facts);
    let t = Turns::new(Some(&chat.url()));
    let mut watch = t
        .command(&["watch", "--interval", "1"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let lines = crate::world::lines_of(watch.stdout.take().unwrap());
    let mut log = Vec::new();
    t.stop(PROMPT, &["Edit"], ANSWER);
    crate::world::wait_for_line(&lines, &mut log, |l| {
        l.contains("turn facts: 1 turns answered, 5 facts written")
    });
    let _ = watch.kill();
    let _ = watch.wait();
    assert_eq!(t.queued(), 0);
    assert_eq!(chat.bodies().len(), 1);
}
