//! Every tool's structured content and compact text, tool errors that say whose failure
//! it is, and a stdio server fed garbage.

use super::*;

/// Every tool answers structured content that fits its declared schema (checked in
/// `call_full`) and a compact text: one line per version, no hashes or paths. The
/// sizes below are the table in docs/agents.md.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_tool_answers_structured_content_and_compact_text() {
    let sb = Sandbox::new();
    for i in 0..10 {
        sb.ok(
            &[
                "store",
                &format!("deploy:step{i}"),
                &format!("deploy step {i} runs the release checklist"),
                "--tag",
                "deploy",
            ],
            Some(&format!("2026-01-{:02}T00:00:00Z", i + 1)),
        );
    }
    for (i, v) in ["Railway", "Fly.io", "Render", "Cloudflare", "Hetzner boxes"]
        .iter()
        .enumerate()
    {
        sb.ok(
            &["store", "deploy:target", v],
            Some(&format!("2026-02-{:02}T00:00:00Z", i + 1)),
        );
    }
    let client = connect_at(&sb, "2026-03-01T00:00:00Z").await;
    let mut sizes = Vec::new();
    for (what, tool, args) in [
        (
            "recall of one version",
            "memory_recall",
            json!({"key": "deploy:target"}),
        ),
        (
            "search of 10",
            "memory_search",
            json!({"query": "release checklist", "limit": 10}),
        ),
        (
            "history of 5",
            "memory_history",
            json!({"key": "deploy:target"}),
        ),
    ] {
        let (structured, text) = call_full(&client, tool, args).await;
        let list = structured
            .get("versions")
            .or_else(|| structured.get("hits"))
            .unwrap();
        let before = serde_json::to_string_pretty(list).unwrap().len() + 1;
        assert!(
            !text.contains("memory/") && !text.contains("hash"),
            "{tool}: {text}"
        );
        // (A search also notes, once, that it matched by words only: no model here.)
        assert_eq!(
            text.lines().filter(|l| !l.starts_with("note: ")).count(),
            list.as_array().unwrap().len(),
            "{tool}: one line per version: {text}"
        );
        sizes.push(format!("{what}: {before} -> {} characters", text.len()));
        assert!(
            text.len() * 3 < before,
            "{what}: {} vs {before}",
            text.len()
        );
    }
    eprintln!("{}", sizes.join("\n"));
    // A miss: no record, in so many words, with the near keys in both forms.
    let (structured, text) =
        call_full(&client, "memory_recall", json!({"key": "deploy:Target"})).await;
    assert!(text.starts_with("no record: "), "{text}");
    assert!(text.contains("deploy:target"), "{text}");
    assert_eq!(structured["near_keys"][0]["key"], "deploy:target");
    let (structured, text) = call_full(&client, "memory_search", json!({"query": "zebra"})).await;
    assert!(
        text.starts_with("no record: nothing in memory matches"),
        "{text}"
    );
    assert_eq!(structured["hits"], json!([]));
    // The other tools fit their schemas too.
    call_full(&client, "memory_list", json!({"prefix": "deploy:"})).await;
    call_full(&client, "memory_context", json!({})).await;
    call_full(
        &client,
        "memory_store",
        json!({"key": "deploy:owner", "value": "Ada"}),
    )
    .await;
    call_full(
        &client,
        "memory_rekey",
        json!({"from": "deploy:owner", "to": "team:owner", "dry_run": true}),
    )
    .await;
    call_full(&client, "memory_forget", json!({"key": "deploy:owner"})).await;
    call_full(
        &client,
        "memory_get",
        json!({"path": "memory/2026-01-01.md"}),
    )
    .await;
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failure_inside_mem7_is_a_tool_error_that_says_it_is_not_the_request() {
    let sb = Sandbox::new();
    sb.ok(&["store", "k", "hello world"], None);
    sb.ok(&["search", "hello", "--mode", "lexical"], None);
    for e in std::fs::read_dir(sb.ws.join(".mem7")).unwrap() {
        let dir = e.unwrap().path();
        if dir.extension().is_some_and(|x| x == "tantivy") {
            std::fs::write(dir.join("meta.json"), "not json").unwrap();
        }
    }
    let client = connect(&sb).await;
    let (is_error, text) = call(
        &client,
        "memory_search",
        json!({"query": "hello", "mode": "lexical"}),
    )
    .await;
    assert!(is_error, "{text}");
    assert!(text.contains("full-text index"), "{text}");
    assert!(
        text.contains("a failure inside mem7, not a problem with the request"),
        "{text}"
    );
    // The server goes on: a recall does not need the full-text index.
    let (is_error, text) = call(&client, "memory_recall", json!({"key": "k"})).await;
    assert!(!is_error, "{text}");
    assert!(text.contains("hello world"), "{text}");
    client.cancel().await.unwrap();
}

#[test]
fn the_stdio_server_answers_garbage_and_oversized_lines() {
    let sb = Sandbox::new();
    let mut child = sb
        .command(&["mcp"], None)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let huge = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{{\"name\":\"memory_store\",\"arguments\":{{\"key\":\"k\",\"value\":\"{}\"}}}}}}\n",
        "x".repeat(30 * 1024 * 1024)
    );
    let writer = std::thread::spawn(move || {
        use std::io::Write;
        stdin.write_all(b"this is not json\n").unwrap();
        stdin.write_all(huge.as_bytes()).unwrap();
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}});
        stdin.write_all(format!("{init}\n").as_bytes()).unwrap();
        // Closing standard input ends the server.
    });
    let out = BufReader::new(child.stdout.take().unwrap());
    let answers: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(&l.unwrap()).unwrap())
        .collect();
    writer.join().unwrap();
    let _ = child.wait();
    assert_eq!(answers.len(), 3, "{answers:?}");
    assert_eq!(answers[0]["error"]["code"], -32700, "{answers:?}");
    assert_eq!(answers[0]["id"], Value::Null);
    assert_eq!(answers[1]["error"]["code"], -32600, "{answers:?}");
    assert!(
        answers[1]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("limit"),
        "{answers:?}"
    );
    assert_eq!(answers[2]["id"], 1, "the server still answers: {answers:?}");
    assert!(
        answers[2]["result"]["serverInfo"].is_object(),
        "{answers:?}"
    );
}
