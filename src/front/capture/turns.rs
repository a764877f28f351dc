//! Turn facts' shell (docs/capture.md, "Turn facts with a model"): the Stop hook queues
//! a turn's bounded text in `.mem7/turns/queue.jsonl` (append-only JSON lines, never
//! the network), and a drain (`mem7 capture drain`) sends each queued turn to the
//! chat model of the user's own `capture.model`, reads at most five facts from the
//! answer and records them as captured writes (`inferred`, by a model, never a rule).
//!
//! A model that does not answer in time leaves the turn queued for a later drain (up to
//! [`MAX_TRIES`] drains); an answer that is not facts drops the turn with a log line.
//! Without `capture.model` in the user's own mem7.yaml nothing is queued or sent: a
//! project's file cannot turn this on.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};

use super::super::env::Env;
use crate::capture::turn::{self, Text, Turn};
use crate::capture::{Client, Kind};
use crate::core::time::TxTime;

/// The most of a transcript's end that is read (the last turn is near its end).
const MAX_TRANSCRIPT_TAIL: u64 = 4 << 20;
/// The queue stops growing at this size (no drain for a long time).
const MAX_QUEUE_BYTES: u64 = 4 << 20;
/// A turn the model did not answer in this many drains is dropped.
pub const MAX_TRIES: u64 = 5;
/// The default time one request may take.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
/// A claimed file older than this belongs to a drainer that died.
const ABANDONED: Duration = Duration::from_secs(600);
/// The largest reply read.
const MAX_REPLY: u64 = 1 << 20;

/// The chat model of the user's own settings.
#[derive(Clone, Debug)]
pub struct Model {
    /// `URL/chat/completions`.
    pub endpoint: String,
    pub model: String,
    pub key: Option<String>,
    pub timeout: Duration,
}

/// The model the user's own mem7.yaml names (`capture.model` with `url` and `model`);
/// `None` without one. A project's mem7.yaml is never read for this.
pub fn model(env: &Env) -> Option<Model> {
    let c = super::super::owners::user_config(env).capture;
    if c.enabled == Some(false) {
        return None;
    }
    let m = c.model?;
    let url = m.url.filter(|u| !u.trim().is_empty())?;
    let name = m.model.filter(|u| !u.trim().is_empty())?;
    let key = m
        .api_key_env
        .as_deref()
        .and_then(|n| env.embed.lookup.and_then(|look| look(n)));
    Some(Model {
        endpoint: format!("{}/chat/completions", url.trim().trim_end_matches('/')),
        model: name,
        key,
        timeout: m
            .timeout_secs
            .filter(|s| s.is_finite() && *s > 0.0)
            .map_or(DEFAULT_TIMEOUT, Duration::from_secs_f64),
    })
}

/// The queue's folder in a workspace.
pub fn dir(workspace: &Path) -> PathBuf {
    workspace.join(crate::store::INDEX_DIR).join("turns")
}

fn live(workspace: &Path) -> PathBuf {
    dir(workspace).join("queue.jsonl")
}

/// One queued turn.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Queued {
    client: Client,
    session: Option<String>,
    at: i64,
    text: Text,
    tries: u64,
}

fn to_line(q: &Queued) -> String {
    json!({
        "client": q.client.as_str(),
        "session": q.session,
        "at": q.at,
        "prompt": q.text.prompt,
        "answer": q.text.answer,
        "tries": q.tries,
    })
    .to_string()
}

fn from_line(line: &str) -> Option<Queued> {
    let v: Value = serde_json::from_str(line).ok()?;
    let s = |f: &str| v.get(f).and_then(Value::as_str).map(str::to_string);
    let client = match v.get("client")?.as_str()? {
        "claude-code" => Client::ClaudeCode,
        "codex" => Client::Codex,
        _ => return None,
    };
    Some(Queued {
        client,
        session: s("session"),
        at: v.get("at")?.as_i64()?,
        // Checked again: a queue is a file anyone on the machine could have edited.
        text: turn::bounded(&Turn {
            prompt: s("prompt"),
            answer: s("answer"),
            tools: Vec::new(),
        })?,
        tries: v.get("tries").and_then(Value::as_u64).unwrap_or(0),
    })
}

fn append(workspace: &Path, items: &[Queued]) -> std::io::Result<()> {
    if items.is_empty() {
        return Ok(());
    }
    let text: String = items.iter().map(|q| to_line(q) + "\n").collect();
    super::spool::append_bounded(&live(workspace), &text, MAX_QUEUE_BYTES, "the turn queue")
}

/// How many turns wait in the queue of `workspace`.
pub fn waiting(workspace: &Path) -> usize {
    files(workspace)
        .iter()
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .map(|t| t.lines().filter(|l| !l.trim().is_empty()).count())
        .sum()
}

fn files(workspace: &Path) -> Vec<PathBuf> {
    super::spool::jsonl_in(&dir(workspace))
}

/// The Stop hook: queues the turn `payload` ends, when a model is configured and the
/// turn did more than ask memory. Returns the log line, if any. Never the network.
pub fn queue_stop(
    env: &Env,
    flag: Option<&Path>,
    client: Client,
    payload: &Value,
    session: Option<String>,
    now: TxTime,
) -> Option<String> {
    model(env)?;
    let home = env.workspace(flag);
    if !crate::store::is_workspace(&home) {
        return None;
    }
    if super::settings(env, flag).is_ok_and(|s| !s.captures(Kind::Turns)) {
        return None;
    }
    let mut t = payload
        .get("transcript_path")
        .and_then(Value::as_str)
        .map(Path::new)
        .filter(|p| p.is_absolute())
        .and_then(read_tail)
        .map(|text| turn::from_transcript(&text))
        .unwrap_or_default();
    // The client's own word for the last answer, when it sends one (the transcript
    // may not hold it yet).
    if let Some(last) = payload
        .get("last_assistant_message")
        .and_then(Value::as_str)
        .filter(|s| !s.trim().is_empty())
    {
        t.answer = Some(last.to_string());
    }
    if turn::only_asked_memory(&t) {
        return None;
    }
    let text = turn::bounded(&t)?;
    let q = Queued {
        client,
        session,
        at: now.micros(),
        text,
        tries: 0,
    };
    match append(&home, &[q]) {
        Ok(()) => None,
        Err(e) => Some(format!("the turn was dropped: {e}")),
    }
}

/// The last [`MAX_TRANSCRIPT_TAIL`] bytes of a transcript, from its first whole line.
fn read_tail(path: &Path) -> Option<String> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = std::fs::File::open(path).ok()?;
    let len = f.metadata().ok()?.len();
    let from = len.saturating_sub(MAX_TRANSCRIPT_TAIL);
    f.seek(SeekFrom::Start(from)).ok()?;
    let mut bytes = Vec::new();
    f.take(MAX_TRANSCRIPT_TAIL).read_to_end(&mut bytes).ok()?;
    let text = String::from_utf8_lossy(&bytes).into_owned();
    Some(if from > 0 {
        text.split_once('\n')
            .map_or(String::new(), |(_, rest)| rest.to_string())
    } else {
        text
    })
}

/// What a drain of the turn queue did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// Turns the model answered with facts (or with none).
    pub answered: usize,
    /// Facts written.
    pub facts: usize,
    /// Turns left queued (the model did not answer in time, or is not configured).
    pub kept: usize,
    /// Turns dropped (an answer that is not facts, too many tries).
    pub dropped: usize,
    pub why: Vec<String>,
}

/// Sends each queued turn to the model and records its facts. A model that fails (no
/// answer in time, refused, an HTTP error) keeps that turn and every later one for the
/// next drain; an answer that is not facts drops the turn.
pub fn drain(env: &Env, flag: Option<&Path>) -> Report {
    let mut report = Report::default();
    let home = env.workspace(flag);
    let now = match env.now() {
        Ok(n) => n,
        Err(e) => {
            report.why.push(format!("turns not drained: {e}"));
            return report;
        }
    };
    let claimed = claim(&home);
    if claimed.is_empty() {
        return report;
    }
    let mut queue = Vec::new();
    for path in &claimed {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            match from_line(line) {
                Some(q) => queue.push(q),
                None => {
                    report.dropped += 1;
                    report
                        .why
                        .push("dropped a queued turn that does not read".into());
                }
            }
        }
    }
    let model = model(env);
    let agent = model.as_ref().map(|m| {
        ureq::Agent::config_builder()
            .timeout_global(Some(m.timeout))
            .http_status_as_error(false)
            .user_agent(concat!("mem7/", env!("CARGO_PKG_VERSION")))
            .build()
            .into()
    });
    let mut keep: Vec<Queued> = Vec::new();
    let mut down: Option<String> = match &model {
        None => Some("no `capture.model` in your own mem7.yaml".into()),
        Some(_) => None,
    };
    let mut writes: Vec<(Client, Vec<crate::capture::facts::Write>)> = Vec::new();
    for mut q in queue {
        let (Some(m), Some(agent), None) = (&model, &agent, &down) else {
            keep.push(q);
            continue;
        };
        match ask(agent, m, &turn::request(&m.model, &q.text)) {
            Ok(reply) => match turn::facts_of(&reply) {
                Ok(facts) => {
                    report.answered += 1;
                    let hash = q.text.hash();
                    let w = turn::writes(&facts, &hash, q.session.as_deref(), q.at);
                    writes.push((q.client, w));
                }
                Err(why) => {
                    report.dropped += 1;
                    report.why.push(format!(
                        "dropped a turn: the model's answer is not facts ({why})"
                    ));
                }
            },
            Err(why) => {
                q.tries += 1;
                if q.tries >= MAX_TRIES {
                    report.dropped += 1;
                    report.why.push(format!(
                        "dropped a turn after {} drains without an answer: {why}",
                        q.tries
                    ));
                } else {
                    keep.push(q);
                }
                down = Some(why);
            }
        }
    }
    if !keep.is_empty() {
        let why = down.unwrap_or_default();
        match append(&home, &keep) {
            Ok(()) => {
                report.kept += keep.len();
                report.why.push(format!(
                    "{} turns stay queued for a later drain: {why}",
                    keep.len()
                ));
            }
            Err(e) => {
                report.dropped += keep.len();
                report
                    .why
                    .push(format!("dropped {} turns ({why}): {e}", keep.len()));
            }
        }
    }
    for (client, w) in writes {
        let r = super::record(env, flag, (client, w), Some(0), true);
        report.facts += r.written;
        report.why.extend(r.why);
    }
    for path in claimed {
        let _ = std::fs::remove_file(path);
    }
    for why in &report.why {
        super::log(env, flag, now, &format!("capture drain (turns): {why}"));
    }
    report
}

/// The queue files this process now owns (renamed, so one drainer has each).
fn claim(workspace: &Path) -> Vec<PathBuf> {
    super::spool::claim_in(&dir(workspace), "queue.jsonl", ABANDONED)
}

/// One request to the model: the reply's text, or why there is none.
fn ask(agent: &ureq::Agent, m: &Model, body: &Value) -> Result<String, String> {
    let mut req = agent.post(&m.endpoint).content_type("application/json");
    if let Some(key) = &m.key {
        req = req.header("Authorization", format!("Bearer {key}"));
    }
    let mut resp = req
        .send(body.to_string())
        .map_err(|e| format!("POST {}: {e}", m.endpoint))?;
    let status = resp.status();
    let text = resp
        .body_mut()
        .with_config()
        .limit(MAX_REPLY)
        .read_to_string()
        .map_err(|e| format!("reading the reply of {}: {e}", m.endpoint))?;
    if !status.is_success() {
        return Err(format!("POST {} answered {status}", m.endpoint));
    }
    Ok(text)
}
