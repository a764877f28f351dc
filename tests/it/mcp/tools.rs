//! The tool list against its snapshot, and the tools storing, recalling, searching,
//! listing history, forgetting and getting.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_list_matches_the_snapshot() {
    let sb = Sandbox::new();
    let client = connect(&sb).await;
    let info = client.peer_info().expect("server info");
    assert_eq!(info.server_info.as_ref().unwrap().name, "mem7");
    let tools = client.list_all_tools().await.unwrap();
    let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    names.sort();
    assert_eq!(
        names,
        [
            "memory_context",
            "memory_forget",
            "memory_get",
            "memory_history",
            "memory_list",
            "memory_recall",
            "memory_rekey",
            "memory_search",
            "memory_store"
        ]
    );
    let actual = tools_snapshot(&tools);
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots/mcp_tools.json");
    if std::env::var_os("MEM7_UPDATE_SNAPSHOTS").is_some() {
        std::fs::write(&path, &actual).unwrap();
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        expected == actual,
        "the tool list changed; if that is deliberate, run `MEM7_UPDATE_SNAPSHOTS=1 cargo test --test it mcp::` and commit tests/snapshots/mcp_tools.json\n{actual}"
    );
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_store_recall_search_history_forget_and_get() {
    let sb = Sandbox::new();
    let client = connect(&sb).await;
    let key = "project:deploy_target";

    let first = call_json(
        &client,
        "memory_store",
        json!({"key": key, "value": "Railway", "valid_from": "2026-04-01", "tags": ["infra"]}),
    )
    .await;
    assert_eq!(first["status"], "stored");
    assert_eq!(first["version"]["valid_from"], "2026-04-01T00:00:00Z");
    assert_eq!(first["version"]["valid_to"], Value::Null);
    assert_eq!(first["version"]["agent"], "tester");
    let believed_railway = first["version"]["tx_from"].as_str().unwrap().to_string();
    let second = call_json(
        &client,
        "memory_store",
        json!({"key": key, "value": "Cloudflare Workers", "valid_from": "2026-04-05"}),
    )
    .await;
    assert_eq!(second["status"], "stored");
    assert_eq!(second["closed"], 1);

    // valid_at: what held in the world then, as known now.
    let then = call_json(
        &client,
        "memory_recall",
        json!({"key": key, "valid_at": "2026-04-03"}),
    )
    .await;
    assert_eq!(values(&then), ["Railway"]);
    assert_eq!(then["versions"][0]["valid_to"], "2026-04-05T00:00:00Z");
    let now = call_json(&client, "memory_recall", json!({"key": key})).await;
    assert_eq!(values(&now), ["Cloudflare Workers"]);
    // as_of: what mem7 believed before the second store.
    let before = call_json(
        &client,
        "memory_recall",
        json!({"key": key, "valid_at": "2026-04-10", "as_of": believed_railway}),
    )
    .await;
    assert_eq!(values(&before), ["Railway"]);
    let tagged = call_json(
        &client,
        "memory_recall",
        json!({"tags": ["infra"], "valid_at": "2026-04-02"}),
    )
    .await;
    assert_eq!(values(&tagged), ["Railway"]);

    // Search honours the time filters.
    let hits = call_json(&client, "memory_search", json!({"query": "cloudflare"})).await;
    assert_eq!(values(&hits), ["Cloudflare Workers"]);
    assert!(hits["hits"][0]["score"].as_f64().unwrap() > 0.0);
    let early = call_json(
        &client,
        "memory_search",
        json!({"query": "cloudflare", "valid_at": "2026-04-02"}),
    )
    .await;
    assert_eq!(values(&early), Vec::<&str>::new());
    let punctuation = call_json(
        &client,
        "memory_search",
        json!({"query": "\"deploy_target\" -:*"}),
    )
    .await;
    assert!(!values(&punctuation).is_empty());

    let list = call_json(&client, "memory_list", json!({"prefix": "project:"})).await;
    assert_eq!(values(&list), ["Cloudflare Workers"]);

    // History: every version with its four clocks and source.
    let history = call_json(&client, "memory_history", json!({"key": key})).await;
    let history = history["versions"].as_array().unwrap();
    assert_eq!(history.len(), 3, "{history:?}");
    assert!(
        history
            .iter()
            .any(|v| v["value"] == "Railway" && v["tx_to"].is_string())
    );
    let file = history[0]["file"].as_str().unwrap().to_string();
    let line = history[0]["line"].as_u64().unwrap();

    // memory_get reads the entry behind a version; paths outside are refused.
    let (is_error, text) = call(
        &client,
        "memory_get",
        json!({"path": file, "from_line": line, "to_line": line}),
    )
    .await;
    assert!(!is_error, "{text}");
    assert!(text.ends_with(&format!("## {key}\n")), "{text}");
    for bad in ["../outside.md", "/etc/passwd", "memory/../../x", ""] {
        let (is_error, text) = call(&client, "memory_get", json!({ "path": bad })).await;
        assert!(is_error, "{bad}: {text}");
        assert!(text.contains("refused"), "{bad}: {text}");
    }
    std::os::unix::fs::symlink("/etc", sb.ws.join("escape")).unwrap();
    let (is_error, text) = call(&client, "memory_get", json!({"path": "escape/hostname"})).await;
    assert!(is_error && text.contains("outside"), "{text}");
    std::fs::remove_file(sb.ws.join("escape")).unwrap();
    for hidden in [".git/config", "memory/.hidden", ".mem7/CURRENT"] {
        let (is_error, text) = call(&client, "memory_get", json!({ "path": hidden })).await;
        assert!(is_error && text.contains("hidden"), "{hidden}: {text}");
    }

    // Bad arguments are tool errors naming the field, and change nothing.
    let files = sb.snapshot();
    for (args, needle) in [
        (
            json!({"key": key, "value": "x", "valid_from": "yesterday"}),
            "valid_from",
        ),
        (json!({"key": "two words", "value": "x"}), "whitespace"),
        (
            json!({"key": key, "value": "x", "valid_from": "2026-05-01", "valid_to": "2026-04-01"}),
            "valid_to",
        ),
        (
            json!({"key": "api", "value": "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"}),
            "credential",
        ),
        (json!({"key": key}), "value"),
    ] {
        let (is_error, text) = call(&client, "memory_store", args.clone()).await;
        assert!(is_error, "{args}: {text}");
        assert!(text.contains(needle), "{args}: {text}");
    }
    let (is_error, text) = call(
        &client,
        "memory_recall",
        json!({"key": key, "as_of": "soon"}),
    )
    .await;
    assert!(is_error && text.contains("as_of"), "{text}");
    // A search mode by the CLI's words only (`SearchMode::name`).
    let (is_error, text) = call(
        &client,
        "memory_search",
        json!({"query": "x", "mode": "fuzzy"}),
    )
    .await;
    assert!(is_error && text.contains("not a search mode"), "{text}");
    assert!(text.contains("lexical, semantic or hybrid"), "{text}");
    assert_eq!(sb.snapshot(), files, "a refused call changed files");
    // Bad input is the model's to fix, and says nothing of mem7 failing.
    assert!(!text.contains("inside mem7"), "{text}");

    // Forget: gone now, still there as of before.
    let forgot = call_json(&client, "memory_forget", json!({"key": key})).await;
    assert_eq!(forgot["status"], "forgotten");
    let after = call_json(&client, "memory_recall", json!({"key": key})).await;
    assert_eq!(values(&after), Vec::<&str>::new());
    let as_before = call_json(
        &client,
        "memory_recall",
        json!({"key": key, "valid_at": "2026-04-10", "as_of": second["version"]["tx_from"]}),
    )
    .await;
    assert_eq!(values(&as_before), ["Cloudflare Workers"]);

    // The server's writes are ordinary entries: the CLI and verify agree.
    sb.ok(&["verify"], None);
    let cli = sb.ok(&["history", key, "--json"], None);
    assert_eq!(cli.strings("value").len(), 3);
    client.cancel().await.unwrap();
}
