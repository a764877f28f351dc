//! The clients' hook JSON, read into [`Event`]s: Claude Code's hooks (SessionStart,
//! UserPromptSubmit, PostToolUse, PostToolUseFailure, SubagentStop, Stop, PreCompact,
//! SessionEnd) and Codex's, which follow the same shape (`session_id`, `cwd`,
//! `hook_event_name`, `tool_name`, `tool_input`, `tool_response`). This is the only
//! module that knows those shapes; it is tolerant: a field it does not find is an
//! event it does not record, never an error.

use serde_json::Value;

use super::{Client, Event, Task, TaskState, redact, shell};

/// What one hook call said.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Hook {
    /// `hook_event_name` (`SessionStart`, `PostToolUse`, …).
    pub name: String,
    pub session: Option<String>,
    /// The working directory the client reported.
    pub cwd: Option<String>,
    pub events: Vec<Event>,
}

impl Hook {
    /// Whether the client waits for the context block on standard output.
    pub fn is_session_start(&self) -> bool {
        self.name == "SessionStart"
    }
}

/// Reads one hook call of `client`. Reads, searches, prompts, stops and tools it does
/// not know give no events.
pub fn read(client: Client, v: &Value) -> Hook {
    let text = |field: &str| v.get(field).and_then(Value::as_str).map(str::to_string);
    let name = text("hook_event_name").unwrap_or_default();
    let mut events = Vec::new();
    match name.as_str() {
        "SessionStart" => events.push(Event::SessionStart {
            source: text("source").and_then(|s| redact::field(&s)),
        }),
        "SessionEnd" => events.push(Event::SessionEnd {
            reason: text("reason").and_then(|s| redact::field(&s)),
        }),
        "PostToolUse" => tool_events(client, v, false, &mut events),
        "PostToolUseFailure" => tool_events(client, v, true, &mut events),
        "SubagentStop" => {
            if let Some(id) = text("agent_id").or_else(|| text("subagent_id")) {
                events.push(Event::Task(Task {
                    id,
                    agent: text("agent_type").and_then(|s| redact::field(&s)),
                    description: None,
                    state: TaskState::Done,
                    summary: text("last_assistant_message").and_then(|m| first_line(&m)),
                }));
            }
        }
        _ => {}
    }
    Hook {
        name,
        session: text("session_id").and_then(|s| id_word(&s)),
        cwd: text("cwd"),
        events,
    }
}

/// The events of one tool call (`failed`: the client reported it as failed).
fn tool_events(client: Client, v: &Value, failed: bool, events: &mut Vec<Event>) {
    let tool = v.get("tool_name").and_then(Value::as_str).unwrap_or("");
    let input = v.get("tool_input").unwrap_or(&Value::Null);
    let response = v.get("tool_response").unwrap_or(&Value::Null);
    let str_of = |v: &Value, field: &str| v.get(field).and_then(Value::as_str).map(str::to_string);
    match tool {
        "Edit" | "MultiEdit" | "Write" | "NotebookEdit" | "write_file" | "edit_file" => {
            if failed {
                return;
            }
            if let Some(path) = str_of(input, "file_path")
                .or_else(|| str_of(input, "notebook_path"))
                .or_else(|| str_of(input, "path"))
            {
                events.push(Event::Touched { path });
            }
        }
        "apply_patch" | "ApplyPatch" => {
            if failed {
                return;
            }
            let patch = str_of(input, "command")
                .or_else(|| str_of(input, "patch"))
                .or_else(|| str_of(input, "input"))
                .or_else(|| input.as_str().map(str::to_string))
                .unwrap_or_default();
            for path in patch_paths(&patch) {
                events.push(Event::Touched { path });
            }
        }
        "Bash" | "shell" | "Shell" | "exec_command" | "local_shell" | "container.exec" => {
            if response.get("interrupted").and_then(Value::as_bool) == Some(true)
                || v.get("is_interrupt").and_then(Value::as_bool) == Some(true)
            {
                return;
            }
            let Some(command) = command_of(input) else {
                return;
            };
            let (output, exit) = output_of(client, v, response, failed);
            let mut did = shell::read(&command, &output, exit);
            git_operation(response, &mut did);
            events.extend(did.into_iter().map(Event::Shell));
        }
        "Task" | "Agent" => {
            let id = str_of(response, "agentId")
                .or_else(|| str_of(response, "agent_id"))
                .or_else(|| str_of(v, "tool_use_id"));
            let Some(id) = id.and_then(|i| id_word(&i)) else {
                return;
            };
            let status = str_of(response, "status").unwrap_or_default();
            let state = if failed {
                TaskState::Failed
            } else if status.contains("async") || status.contains("launched") || status == "running"
            {
                TaskState::Running
            } else {
                TaskState::Done
            };
            let summary = if failed {
                str_of(v, "error").and_then(|e| first_line(&e))
            } else if state == TaskState::Done {
                answer_text(response).and_then(|t| first_line(&t))
            } else {
                None
            };
            events.push(Event::Task(Task {
                id,
                agent: str_of(input, "subagent_type")
                    .or_else(|| str_of(response, "agentType"))
                    .and_then(|s| redact::field(&s)),
                description: str_of(input, "description").and_then(|s| redact::field(&s)),
                state,
                summary,
            }));
        }
        _ => {}
    }
}

/// What Claude Code's own reading of a git or gh command says (`gitOperation`, in
/// recent versions): a commit or a pull request the output did not show in the usual
/// shape is added.
fn git_operation(response: &Value, did: &mut Vec<shell::Did>) {
    let Some(op) = response.get("gitOperation") else {
        return;
    };
    if let Some(sha) = op.pointer("/commit/sha").and_then(Value::as_str)
        && sha.len() >= 7
        && sha.chars().all(|c| c.is_ascii_hexdigit())
        && !did.iter().any(|d| matches!(d, shell::Did::Commit { .. }))
    {
        did.push(shell::Did::Commit {
            rev: sha.to_string(),
            branch: op
                .pointer("/commit/branch")
                .and_then(Value::as_str)
                .and_then(redact::field),
            subject: None,
        });
    }
    if op.pointer("/pr/action").and_then(Value::as_str) == Some("created")
        && let Some(url) = op
            .pointer("/pr/url")
            .and_then(Value::as_str)
            .and_then(redact::field)
        && !did
            .iter()
            .any(|d| matches!(d, shell::Did::PullRequest { .. }))
    {
        did.push(shell::Did::PullRequest { url, title: None });
    }
}

/// A shell tool's command: a string, or a list of words (`["bash", "-lc", "cargo
/// test"]` is the script).
fn command_of(input: &Value) -> Option<String> {
    match input.get("command").or_else(|| input.get("cmd"))? {
        Value::String(s) => Some(s.clone()),
        Value::Array(words) => {
            let words: Vec<&str> = words.iter().filter_map(Value::as_str).collect();
            match words.as_slice() {
                [shell, flag, script]
                    if shell.ends_with("sh") && matches!(*flag, "-c" | "-lc" | "-ic") =>
                {
                    Some(script.to_string())
                }
                _ => Some(words.join(" ")),
            }
        }
        _ => None,
    }
}

/// A shell tool's output and exit code. Claude Code's PostToolUse fires for a command
/// that succeeded (its failures come as PostToolUseFailure, whose `error` starts with
/// `Exit code N`); Codex's response names its exit code, when it does at all.
fn output_of(client: Client, v: &Value, response: &Value, failed: bool) -> (String, Option<i32>) {
    let mut output = String::new();
    match response {
        Value::String(s) => output.push_str(s),
        Value::Object(_) => {
            for field in [
                "stdout",
                "stderr",
                "output",
                "aggregated_output",
                "formatted_output",
            ] {
                if let Some(s) = response.get(field).and_then(Value::as_str) {
                    output.push_str(s);
                    output.push('\n');
                }
            }
        }
        _ => {}
    }
    let error = v.get("error").and_then(Value::as_str).unwrap_or("");
    output.push_str(error);
    let named = ["exit_code", "exitCode", "returncode", "exit_status"]
        .iter()
        .find_map(|f| response.get(*f).and_then(Value::as_i64))
        .and_then(|c| i32::try_from(c).ok());
    let from_error = error
        .strip_prefix("Exit code ")
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok());
    let exit = named.or(from_error).or(if failed {
        Some(1)
    } else if client == Client::ClaudeCode {
        Some(0)
    } else {
        None
    });
    (output, exit)
}

/// The text of a subagent's answer: `content` blocks of type text, or a string.
fn answer_text(response: &Value) -> Option<String> {
    match response {
        Value::String(s) => Some(s.clone()),
        Value::Object(_) => match response.get("content") {
            Some(Value::String(s)) => Some(s.clone()),
            Some(Value::Array(blocks)) => blocks
                .iter()
                .find_map(|b| b.get("text").and_then(Value::as_str))
                .map(str::to_string),
            _ => response
                .get("result")
                .and_then(Value::as_str)
                .map(str::to_string),
        },
        _ => None,
    }
}

/// The first line of `text` that says something, made safe and bounded.
fn first_line(text: &str) -> Option<String> {
    let open = redact::strip_private(text);
    open.lines()
        .map(|l| l.trim().trim_start_matches('#').trim())
        .find(|l| !l.is_empty())
        .and_then(redact::field)
}

/// The files an `apply_patch` patch adds, updates, deletes or moves to.
fn patch_paths(patch: &str) -> Vec<String> {
    let mut paths: Vec<String> = Vec::new();
    for line in patch.lines() {
        for head in [
            "*** Add File: ",
            "*** Update File: ",
            "*** Delete File: ",
            "*** Move to: ",
        ] {
            if let Some(p) = line.strip_prefix(head) {
                let p = p.trim().to_string();
                if !p.is_empty() && !paths.contains(&p) {
                    paths.push(p);
                }
            }
        }
    }
    paths
}

/// An id the client gave (a session's, a task's) as one word of a key: its letters,
/// digits, `-` and `_`, at most 64 of them.
pub fn id_word(id: &str) -> Option<String> {
    let w: String = id
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
        .take(64)
        .collect();
    (!w.is_empty()).then_some(w)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn events(client: Client, v: Value) -> Vec<Event> {
        read(client, &v).events
    }

    #[test]
    fn claude_code_tools_become_events_and_reads_do_not() {
        let base = |name: &str, tool: &str, input: Value, response: Value| {
            json!({"session_id": "s-1", "cwd": "/w/app", "hook_event_name": name,
                   "tool_name": tool, "tool_input": input, "tool_response": response})
        };
        let cases: Vec<(Value, Vec<Event>)> = vec![
            (
                base(
                    "PostToolUse",
                    "Edit",
                    json!({"file_path": "/w/app/src/a.rs"}),
                    json!({}),
                ),
                vec![Event::Touched {
                    path: "/w/app/src/a.rs".into(),
                }],
            ),
            (
                base(
                    "PostToolUse",
                    "Write",
                    json!({"file_path": "/w/app/b.md", "content": "x"}),
                    json!({"type": "create"}),
                ),
                vec![Event::Touched {
                    path: "/w/app/b.md".into(),
                }],
            ),
            (
                base(
                    "PostToolUse",
                    "Read",
                    json!({"file_path": "/w/app/src/a.rs"}),
                    json!({}),
                ),
                vec![],
            ),
            (
                base("PostToolUse", "Grep", json!({"pattern": "x"}), json!({})),
                vec![],
            ),
            (
                base("PostToolUse", "Glob", json!({"pattern": "*.rs"}), json!({})),
                vec![],
            ),
            (
                base(
                    "PostToolUse",
                    "Bash",
                    json!({"command": "ls"}),
                    json!({"stdout": "a\n", "stderr": ""}),
                ),
                vec![],
            ),
            (
                base(
                    "PostToolUse",
                    "Bash",
                    json!({"command": "make"}),
                    json!({"stdout": "", "stderr": ""}),
                ),
                vec![Event::Shell(shell::Did::Check {
                    command: "make".into(),
                    outcome: shell::Outcome {
                        failed: false,
                        summary: None,
                        failing: vec![],
                    },
                })],
            ),
            (
                json!({"session_id": "s-1", "hook_event_name": "PostToolUseFailure", "tool_name": "Bash",
                       "tool_input": {"command": "make"}, "error": "Exit code 2\nmake: *** [all] Error 2"}),
                vec![Event::Shell(shell::Did::Check {
                    command: "make".into(),
                    outcome: shell::Outcome {
                        failed: true,
                        summary: None,
                        failing: vec![],
                    },
                })],
            ),
            (
                base(
                    "PostToolUse",
                    "Bash",
                    json!({"command": "make"}),
                    json!({"stdout": "", "interrupted": true}),
                ),
                vec![],
            ),
            (
                base(
                    "PostToolUse",
                    "Task",
                    json!({"description": "Map the parser", "prompt": "long", "subagent_type": "Explore"}),
                    json!({"status": "completed", "agentId": "a1", "content": [{"type": "text", "text": "## Findings\nThe parser lives in src/format."}]}),
                ),
                vec![Event::Task(Task {
                    id: "a1".into(),
                    agent: Some("Explore".into()),
                    description: Some("Map the parser".into()),
                    state: TaskState::Done,
                    summary: Some("Findings".into()),
                })],
            ),
            (
                base(
                    "PostToolUse",
                    "Task",
                    json!({"description": "Long audit"}),
                    json!({"status": "async_launched", "agentId": "a2"}),
                ),
                vec![Event::Task(Task {
                    id: "a2".into(),
                    agent: None,
                    description: Some("Long audit".into()),
                    state: TaskState::Running,
                    summary: None,
                })],
            ),
            (
                json!({"session_id": "s-1", "hook_event_name": "SubagentStop", "agent_id": "a2",
                       "agent_type": "general-purpose", "last_assistant_message": "Audit done: 3 issues."}),
                vec![Event::Task(Task {
                    id: "a2".into(),
                    agent: Some("general-purpose".into()),
                    description: None,
                    state: TaskState::Done,
                    summary: Some("Audit done: 3 issues.".into()),
                })],
            ),
            (
                json!({"session_id": "s-1", "hook_event_name": "UserPromptSubmit", "prompt": "fix it"}),
                vec![],
            ),
            (
                json!({"session_id": "s-1", "hook_event_name": "Stop"}),
                vec![],
            ),
            (
                json!({"session_id": "s-1", "hook_event_name": "PreCompact", "trigger": "auto"}),
                vec![],
            ),
            (
                json!({"session_id": "s-1", "hook_event_name": "SessionEnd", "reason": "prompt_input_exit"}),
                vec![Event::SessionEnd {
                    reason: Some("prompt_input_exit".into()),
                }],
            ),
        ];
        for (v, want) in cases {
            assert_eq!(events(Client::ClaudeCode, v.clone()), want, "{v}");
        }
        let hook = read(
            Client::ClaudeCode,
            &json!({"session_id": "abc/../x y", "cwd": "/w", "hook_event_name": "SessionStart", "source": "startup"}),
        );
        assert!(hook.is_session_start());
        assert_eq!(hook.session.as_deref(), Some("abcxy"));
        assert_eq!(
            hook.events,
            [Event::SessionStart {
                source: Some("startup".into())
            }]
        );
    }

    #[test]
    fn codex_shells_and_patches() {
        let v = json!({"session_id": "t1", "hook_event_name": "PostToolUse", "tool_name": "Bash",
                       "tool_input": {"command": ["bash", "-lc", "cargo test"]},
                       "tool_response": {"output": "test result: ok. 3 passed; 0 failed", "exit_code": 0}});
        assert!(
            matches!(&events(Client::Codex, v)[..], [Event::Shell(shell::Did::Check { command, .. })] if command == "cargo test")
        );
        // Without an exit code or a summary, Codex's shell call says nothing.
        let v = json!({"hook_event_name": "PostToolUse", "tool_name": "Bash",
                       "tool_input": {"command": "make"}, "tool_response": "built"});
        assert_eq!(events(Client::Codex, v), []);
        let v = json!({"hook_event_name": "PostToolUse", "tool_name": "apply_patch",
                       "tool_input": {"command": "*** Begin Patch\n*** Update File: src/a.rs\n@@\n-x\n+y\n*** Add File: src/b.rs\n+z\n*** End Patch"}});
        assert_eq!(
            events(Client::Codex, v),
            [
                Event::Touched {
                    path: "src/a.rs".into()
                },
                Event::Touched {
                    path: "src/b.rs".into()
                }
            ]
        );
    }

    #[test]
    fn nonsense_is_no_event() {
        for v in [
            json!(null),
            json!([1, 2]),
            json!({"hook_event_name": 3}),
            json!({"hook_event_name": "PostToolUse", "tool_name": "Bash"}),
        ] {
            assert_eq!(events(Client::ClaudeCode, v), []);
        }
    }
}
