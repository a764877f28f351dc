//! Turn facts (issue 35's optional part; docs/capture.md "Turn facts with a model"): a
//! turn's text read from the client's transcript, the rule that leaves out a turn that
//! only asked memory, the bounded text that may be queued, the request a chat model is
//! sent, and its answer read defensively into at most five facts of at most ten words.
//!
//! Pure: the transcript's text, the model's reply and the clock come in as values; the
//! queue, the file reads and HTTP are `front/capture/turns.rs`'s.

use serde_json::{Value, json};

use super::facts::{Rule, Write};
use super::{Kind, TAG, redact};

/// The most characters of a turn that are queued (prompt and answer together).
pub const MAX_TURN_CHARS: usize = 4000;
/// The most of those the prompt may take (the answer says what was done).
const MAX_PROMPT_CHARS: usize = 1500;
/// The most facts kept from one turn.
pub const MAX_FACTS: usize = 5;
/// The most words a kept fact may have (a longer one is dropped, not cut).
pub const MAX_WORDS: usize = 10;

/// mem7's own MCP tools (a client names them `mcp__mem7__memory_search` and so on).
const MEMORY_TOOLS: [&str; 10] = [
    "memory_search",
    "memory_recall",
    "memory_context",
    "memory_history",
    "memory_list",
    "memory_get",
    "memory_store",
    "memory_forget",
    "memory_rekey",
    "memory_dir",
];

/// One turn as the transcript tells it: the last prompt a person typed, the tools the
/// agent called after it, and its last text.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Turn {
    pub prompt: Option<String>,
    pub answer: Option<String>,
    pub tools: Vec<String>,
}

/// The last turn of a transcript (JSON lines: Claude Code's `{"type": "user"|"assistant",
/// "message": {"content": …}}`, or Codex's `{"type": "response_item", "payload": …}`).
/// Lines that do not read are skipped; a tool result is not a prompt.
pub fn from_transcript(text: &str) -> Turn {
    let mut turn = Turn::default();
    for line in text.lines() {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        if v.get("isMeta").and_then(Value::as_bool) == Some(true)
            || v.get("isSidechain").and_then(Value::as_bool) == Some(true)
        {
            continue;
        }
        // Codex wraps each item; Claude Code nests the message.
        let item = match v.get("type").and_then(Value::as_str) {
            Some("response_item") => v.get("payload").unwrap_or(&Value::Null),
            _ => &v,
        };
        let message = item.get("message").unwrap_or(item);
        let role = message
            .get("role")
            .or_else(|| item.get("type"))
            .and_then(Value::as_str)
            .unwrap_or("");
        if matches!(
            item.get("type").and_then(Value::as_str),
            Some("function_call" | "custom_tool_call" | "local_shell_call")
        ) {
            let name = item.get("name").and_then(Value::as_str).unwrap_or("shell");
            turn.tools.push(name.to_string());
            continue;
        }
        let content = message.get("content").unwrap_or(&Value::Null);
        let (texts, tools) = blocks(content);
        match role {
            "user" if !texts.is_empty() => {
                turn = Turn {
                    prompt: Some(texts.join("\n")),
                    ..Turn::default()
                };
            }
            "assistant" => {
                turn.tools.extend(tools);
                if !texts.is_empty() {
                    turn.answer = Some(texts.join("\n"));
                }
            }
            _ => {}
        }
    }
    turn
}

/// The texts and tool names of a message's content (a string, or blocks).
fn blocks(content: &Value) -> (Vec<String>, Vec<String>) {
    let mut texts = Vec::new();
    let mut tools = Vec::new();
    match content {
        Value::String(s) if !s.trim().is_empty() => texts.push(s.clone()),
        Value::Array(items) => {
            for b in items {
                match b.get("type").and_then(Value::as_str) {
                    Some("text" | "input_text" | "output_text") => {
                        if let Some(t) = b.get("text").and_then(Value::as_str)
                            && !t.trim().is_empty()
                        {
                            texts.push(t.to_string());
                        }
                    }
                    Some("tool_use") => tools.push(
                        b.get("name")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_string(),
                    ),
                    _ => {}
                }
            }
        }
        _ => {}
    }
    (texts, tools)
}

/// Whether a turn only asked a question of memory, and so is not queued: every tool
/// it called is one of mem7's own (`memory_search`, `memory_recall`, …), or it called
/// none and its prompt ends with a question mark. What memory answered is memory
/// already; a turn that edited, ran or fetched anything is not a question.
pub fn only_asked_memory(turn: &Turn) -> bool {
    if turn.tools.is_empty() {
        return turn
            .prompt
            .as_deref()
            .is_some_and(|p| redact::strip_private(p).trim_end().ends_with('?'));
    }
    turn.tools.iter().all(|t| {
        let base = t.rsplit("__").next().unwrap_or(t);
        MEMORY_TOOLS.contains(&base)
    })
}

/// The text of a turn that may be queued and sent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Text {
    pub prompt: Option<String>,
    pub answer: Option<String>,
}

impl Text {
    /// A short hash of the text: the turn's facts' keys, so a turn queued or drained
    /// twice writes its facts once.
    pub fn hash(&self) -> String {
        let mut h = blake3::Hasher::new();
        for part in [&self.prompt, &self.answer] {
            h.update(part.as_deref().unwrap_or("").as_bytes());
            h.update(&[0]);
        }
        h.finalize().to_hex()[..12].to_string()
    }
}

/// The turn as it may leave the tool call: private text removed, a part holding a
/// credential dropped whole, at most [`MAX_TURN_CHARS`] in all; `None` when nothing is
/// left.
pub fn bounded(turn: &Turn) -> Option<Text> {
    let part = |text: &Option<String>, max: usize| -> Option<String> {
        let open = redact::strip_private(text.as_deref()?);
        let open = open.trim();
        if open.is_empty() || crate::text::secret::find(open).is_some() {
            return None;
        }
        let cut = redact::cut(open, max);
        crate::text::secret::find(&cut).is_none().then_some(cut)
    };
    let prompt = part(&turn.prompt, MAX_PROMPT_CHARS);
    let used = prompt.as_deref().map_or(0, |p| p.chars().count());
    let answer = part(&turn.answer, MAX_TURN_CHARS - used);
    (prompt.is_some() || answer.is_some()).then_some(Text { prompt, answer })
}

/// The `/chat/completions` request for `text`.
pub fn request(model: &str, text: &Text) -> Value {
    let system = format!(
        "You keep a coding project's memory. From one turn of a session between a person \
         and a coding agent, write the facts worth knowing in a later session: what was \
         decided, changed, found or left to do. At most {MAX_FACTS} facts, each at most \
         {MAX_WORDS} words, each a plain statement. No instructions, no rules, no secrets. \
         Answer with JSON only: {{\"facts\": [\"...\"]}}; {{\"facts\": []}} when nothing \
         is worth keeping."
    );
    let mut turn = String::new();
    if let Some(p) = &text.prompt {
        turn.push_str(&format!("The person asked:\n{p}\n\n"));
    }
    if let Some(a) = &text.answer {
        turn.push_str(&format!("The agent answered:\n{a}\n"));
    }
    json!({
        "model": model,
        "messages": [
            { "role": "system", "content": system },
            { "role": "user", "content": turn },
        ],
        "temperature": 0,
        "stream": false,
        "response_format": { "type": "json_object" },
    })
}

/// The facts of a `/chat/completions` reply: at most [`MAX_FACTS`], each one line of at
/// most [`MAX_WORDS`] words that passes the credential check (others are left out). An
/// error when the reply is not the API's shape or its content is not JSON facts.
pub fn facts_of(reply: &str) -> Result<Vec<String>, String> {
    let v: Value =
        serde_json::from_str(reply).map_err(|_| format!("not JSON: {}", preview(reply)))?;
    let content = v
        .pointer("/choices/0/message/content")
        .and_then(Value::as_str)
        .ok_or_else(|| format!("no choices[0].message.content: {}", preview(reply)))?;
    let body = content.trim();
    // A model may fence its JSON, or say a word before it.
    let start = body.find(['{', '[']);
    let end = body.rfind(['}', ']']);
    let json_text = match (start, end) {
        (Some(s), Some(e)) if s < e => &body[s..=e],
        _ => return Err(format!("the answer holds no JSON: {}", preview(content))),
    };
    let parsed: Value = serde_json::from_str(json_text)
        .map_err(|_| format!("the answer is not JSON: {}", preview(content)))?;
    let items = match &parsed {
        Value::Array(a) => a,
        Value::Object(o) => match o.get("facts") {
            Some(Value::Array(a)) => a,
            _ => return Err(format!("no `facts` list: {}", preview(content))),
        },
        _ => return Err(format!("not a list of facts: {}", preview(content))),
    };
    let mut facts: Vec<String> = Vec::new();
    for item in items {
        let Some(s) = item.as_str() else { continue };
        let Some(fact) = redact::field(s) else {
            continue;
        };
        let fact = fact.trim_start_matches(['-', '*', ' ']).to_string();
        let words = fact.split_whitespace().count();
        if words == 0 || words > MAX_WORDS || facts.contains(&fact) {
            continue;
        }
        facts.push(fact);
        if facts.len() == MAX_FACTS {
            break;
        }
    }
    Ok(facts)
}

fn preview(text: &str) -> String {
    // A reply echoed into the log passes the same check as any captured string.
    redact::clean(text, 80).unwrap_or_else(|| "(not shown)".into())
}

/// The writes of a turn's facts: `local:turn:HASH:N` (the turn stays on this machine,
/// like the session trail), tagged `captured` and `turns`, each written once.
pub fn writes(facts: &[String], hash: &str, session: Option<&str>, at: i64) -> Vec<Write> {
    facts
        .iter()
        .enumerate()
        .map(|(n, fact)| {
            let mut tags = vec![TAG.to_string(), Kind::Turns.as_str().to_string()];
            if let Some(s) = session {
                tags.push(format!("session:{s}"));
            }
            Write {
                kind: Kind::Turns,
                key: format!("local:turn:{hash}:{}", n + 1),
                tags,
                at,
                rule: Rule::Once(fact.clone()),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(v: Value) -> String {
        v.to_string() + "\n"
    }

    #[test]
    fn the_last_turn_of_a_claude_code_transcript() {
        let t = [
            line(json!({"type": "user", "message": {"role": "user", "content": "old prompt"}})),
            line(json!({"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": "old answer"}]}})),
            line(json!({"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": "Keep CRLF in quoted fields"}]}})),
            line(json!({"type": "assistant", "message": {"role": "assistant", "content": [{"type": "tool_use", "name": "Edit", "input": {}}]}})),
            line(json!({"type": "user", "message": {"role": "user", "content": [{"type": "tool_result", "content": "ok"}]}})),
            "not json\n".to_string(),
            line(json!({"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": "Done: the parser keeps CRLF."}]}})),
        ]
        .concat();
        let turn = from_transcript(&t);
        assert_eq!(turn.prompt.as_deref(), Some("Keep CRLF in quoted fields"));
        assert_eq!(turn.answer.as_deref(), Some("Done: the parser keeps CRLF."));
        assert_eq!(turn.tools, ["Edit"]);
        assert!(!only_asked_memory(&turn));
    }

    #[test]
    fn a_turn_that_only_asked_memory() {
        let asked = |prompt: &str, tools: &[&str]| {
            only_asked_memory(&Turn {
                prompt: Some(prompt.into()),
                answer: Some("a".into()),
                tools: tools.iter().map(|t| t.to_string()).collect(),
            })
        };
        assert!(asked("what did we decide?", &[]));
        assert!(asked("look it up", &["mcp__mem7__memory_search"]));
        assert!(asked("x", &["mcp__mem7__memory_recall", "memory_context"]));
        assert!(!asked(
            "what failed?",
            &["mcp__mem7__memory_search", "Bash"]
        ));
        assert!(!asked("we use postgres 16 from now on", &[]));
        assert!(!asked("fix it", &["Edit"]));
    }

    #[test]
    fn the_text_is_bounded_private_and_credential_free() {
        let token = format!("ghp_{}", "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8");
        let t = bounded(&Turn {
            prompt: Some(format!("deploy with {token}")),
            answer: Some(format!(
                "{} <private>the ACME deal</private>",
                "y".repeat(9000)
            )),
            tools: vec![],
        })
        .unwrap();
        assert_eq!(t.prompt, None);
        let a = t.answer.unwrap();
        assert_eq!(a.chars().count(), MAX_TURN_CHARS);
        assert!(!a.contains("ACME"));
        let both = bounded(&Turn {
            prompt: Some("p".repeat(3000)),
            answer: Some("a".repeat(3000)),
            tools: vec![],
        })
        .unwrap();
        let total = both.prompt.unwrap().chars().count() + both.answer.unwrap().chars().count();
        assert_eq!(total, MAX_TURN_CHARS);
        assert_eq!(
            bounded(&Turn {
                prompt: Some("<private>all</private>".into()),
                ..Turn::default()
            }),
            None
        );
    }

    #[test]
    fn answers_are_read_defensively() {
        let reply = |content: &str| {
            json!({"choices": [{"message": {"role": "assistant", "content": content}}]}).to_string()
        };
        let token = format!("ghp_{}", "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8");
        let many = json!({"facts": [
            "The parser keeps CRLF in quoted fields",
            "one two three four five six seven eight nine ten eleven",
            format!("the token is {token}"),
            "Tests for CRLF live in tests/crlf.rs",
            "The parser keeps CRLF in quoted fields",
            "a", "b", "c", "d", "e"
        ]})
        .to_string();
        let facts = facts_of(&reply(&format!("```json\n{many}\n```"))).unwrap();
        assert_eq!(
            facts,
            [
                "The parser keeps CRLF in quoted fields",
                "Tests for CRLF live in tests/crlf.rs",
                "a",
                "b",
                "c"
            ]
        );
        assert_eq!(facts_of(&reply(r#"["x is y"]"#)).unwrap(), ["x is y"]);
        assert_eq!(facts_of(&reply(r#"{"facts": []}"#)).unwrap().len(), 0);
        for bad in [
            reply("I would rather not."),
            reply(r#"{"summary": "x"}"#),
            reply("{ not json }"),
            "<html>".to_string(),
            json!({"choices": []}).to_string(),
        ] {
            assert!(facts_of(&bad).is_err(), "{bad}");
        }
        let w = writes(&facts[..2], "abc", Some("s1"), 7);
        assert_eq!(w[1].key, "local:turn:abc:2");
        assert_eq!(w[0].tags, ["captured", "turns", "session:s1"]);
    }
}
