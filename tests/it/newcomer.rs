//! A newcomer's first hour without a trap (issue 37): a write says which workspace it
//! went to whenever nobody named it, `setup` in a project without a workspace says so
//! and offers `mem7 init .`, and the tools' schemas load in a strict client without
//! warnings (no `format` outside JSON Schema's vocabulary).

use serde_json::Value;

use crate::mcp::connect;
use crate::world::Sandbox;

#[test]
fn a_write_says_which_workspace_it_used_unless_the_flag_named_it() {
    let s = Sandbox::new();
    let r = s.ok(&["store", "note:x", "y"], None);
    assert!(
        r.stderr.contains(&format!(
            "mem7: workspace {} (from MEM7_WORKSPACE)",
            s.ws.display()
        )),
        "{}",
        r.stderr
    );
    for args in [vec!["forget", "note:x"], vec!["rekey", "note:x", "note:z"]] {
        s.ok(&["store", "note:x", "again"], None);
        let r = s.ok(&args, None);
        assert!(
            r.stderr.contains("(from MEM7_WORKSPACE)"),
            "{args:?}: {}",
            r.stderr
        );
    }
    let r = s.run_stdin(&["import", "-"], None, "{\"key\":\"k\",\"value\":\"v\"}\n");
    assert!(r.stderr.contains("(from MEM7_WORKSPACE)"), "{}", r.stderr);
    // Named on the command line just now: nothing to say.
    let ws = s.ws.to_str().unwrap();
    let r = s.ok(&["--workspace", ws, "store", "note:w", "v"], None);
    assert!(!r.stderr.contains("mem7: workspace"), "{}", r.stderr);
    // Reads say nothing.
    let r = s.ok(&["list"], None);
    assert!(!r.stderr.contains("mem7: workspace"), "{}", r.stderr);
}

#[test]
fn setup_in_a_project_without_a_workspace_says_so_and_offers_init() {
    let s = Sandbox::bare();
    let project = s.dir.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    let user = s.home().join(".mem7/workspace");
    s.ok(&["init", user.to_str().unwrap()], None);
    // From inside the project, with no MEM7_WORKSPACE: found as a newcomer finds it.
    let inside = |args: &[&str]| {
        let out = s
            .command(args, None)
            .env_remove("MEM7_WORKSPACE")
            .current_dir(&project)
            .output()
            .unwrap();
        crate::world::finish(out)
    };
    let r = inside(&["setup", "claude-code"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("no mem7 workspace in this project"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("mem7 init ."), "{}", r.stderr);
    // With a workspace of its own, nothing to say.
    assert_eq!(inside(&["init", "."]).code, 0);
    let r = inside(&["setup", "claude-code"]);
    assert!(!r.stderr.contains("no mem7 workspace"), "{}", r.stderr);
    assert!(
        r.stdout
            .contains(&project.canonicalize().unwrap().display().to_string())
            || r.stdout.contains(&project.display().to_string()),
        "{}",
        r.stdout
    );
}

/// Every `format` in every tool's input and output schema, at any depth.
fn formats(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(map) => {
            if let Some(Value::String(f)) = map.get("format") {
                out.push(f.clone());
            }
            map.values().for_each(|v| formats(v, out));
        }
        Value::Array(items) => items.iter().for_each(|v| formats(v, out)),
        _ => {}
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tools_schemas_use_only_json_schemas_formats() {
    const STANDARD: [&str; 4] = ["date-time", "date", "uri", "uuid"];
    let s = Sandbox::new();
    let client = connect(&s).await;
    let tools = client.list_all_tools().await.unwrap();
    assert!(tools.len() >= 9);
    let mut found = Vec::new();
    for t in &tools {
        formats(&Value::Object((*t.input_schema).clone()), &mut found);
        if let Some(o) = &t.output_schema {
            formats(&Value::Object((**o).clone()), &mut found);
        }
    }
    client.cancel().await.unwrap();
    let odd: Vec<&String> = found
        .iter()
        .filter(|f| !STANDARD.contains(&f.as_str()))
        .collect();
    assert!(
        odd.is_empty(),
        "formats a strict client warns about: {odd:?}"
    );
}

/// Outside any project, a session trail (and any `local:` note) stays on this machine:
/// it goes to the local scope inside the user's workspace, which git ignores, never to
/// the user's memory files that `mem7 sync` pushes.
#[test]
fn outside_a_project_the_session_trail_stays_on_this_machine() {
    let s = Sandbox::bare();
    let user = s.home().join(".mem7/workspace");
    s.ok(&["init", user.to_str().unwrap()], None);
    let elsewhere = s.dir.path().join("scratch");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let run = |args: &[&str], input: &str| {
        use std::io::Write;
        let mut child = s
            .command(args, None)
            .env_remove("MEM7_WORKSPACE")
            .current_dir(&elsewhere)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        crate::world::finish(child.wait_with_output().unwrap())
    };
    let cwd = elsewhere.display().to_string();
    for event in [
        format!(
            r#"{{"session_id":"s1","transcript_path":"/dev/null","cwd":"{cwd}","hook_event_name":"SessionStart","source":"startup"}}"#
        ),
        format!(
            r#"{{"session_id":"s1","transcript_path":"/dev/null","cwd":"{cwd}","hook_event_name":"PostToolUse","tool_name":"Write","tool_input":{{"file_path":"{cwd}/notes.txt","content":"x"}},"tool_response":{{"filePath":"{cwd}/notes.txt","success":true}}}}"#
        ),
        format!(
            r#"{{"session_id":"s1","transcript_path":"/dev/null","cwd":"{cwd}","hook_event_name":"SessionEnd","reason":"exit"}}"#
        ),
    ] {
        let r = run(&["hook", "claude-code"], &event);
        assert_eq!(r.code, 0, "{}", r.stderr);
    }
    let r = run(&["store", "local:scratch", "a note for this machine"], "");
    assert_eq!(r.code, 0, "{}", r.stderr);
    let text = |dir: &std::path::Path| -> String {
        std::fs::read_dir(dir.join("memory"))
            .map(|d| {
                d.flatten()
                    .filter_map(|e| std::fs::read_to_string(e.path()).ok())
                    .collect()
            })
            .unwrap_or_default()
    };
    let shared = text(&user);
    assert!(
        !shared.contains("local:"),
        "the trail reached the synced files: {shared}"
    );
    let here = text(&user.join(".mem7/local"));
    assert!(here.contains("local:session"), "{here}");
    assert!(here.contains("a note for this machine"), "{here}");
}
