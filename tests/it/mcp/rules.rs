//! What a model may write: credentials refused, retries, tiers within what agents may
//! record, many-valued keys, `forget` of one entry, standing rules.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_store_refuses_the_credential_catalogue_in_words_a_client_can_act_on() {
    let sb = Sandbox::new();
    std::fs::write(sb.ws.join("mem7.yaml"), "max_value_bytes: 200000\n").unwrap();
    let client = connect(&sb).await;
    let credentials = world::samples("credentials.txt");
    let mut refused: usize = 0;
    for (i, c) in credentials.iter().enumerate() {
        let (is_error, text) = call(
            &client,
            "memory_store",
            json!({"key": format!("mcp:{i}"), "value": c}),
        )
        .await;
        if is_error {
            assert!(text.contains("credential"), "{text}");
            assert!(
                !text.contains("--allow-secret"),
                "a flag the client cannot pass: {text}"
            );
            refused += 1;
        }
    }
    // Gated at what is measured (docs/integrity.md): every credential refused.
    eprintln!(
        "credentials refused over MCP: {refused} of {}",
        credentials.len()
    );
    assert_eq!(
        refused,
        credentials.len(),
        "{refused} of {} refused over MCP",
        credentials.len()
    );
    // Tags are checked too.
    let (is_error, text) = call(
        &client,
        "memory_store",
        json!({"key": "mcp:tagged", "value": "v", "tags": ["npm_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"]}),
    )
    .await;
    assert!(is_error, "{text}");
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retried_memory_store_changes_nothing_and_the_block_shows_the_fact_once() {
    let sb = Sandbox::new();
    let client = connect(&sb).await;
    let args = json!({"key": "ci:provider", "value": "Buildkite", "valid_from": "2026-03-01"});
    let first = call_json(&client, "memory_store", args.clone()).await;
    assert_eq!(first["status"], "stored");
    let before = sb.snapshot();
    let retry = call_json(&client, "memory_store", args).await;
    assert_eq!(retry["status"], "unchanged", "{retry}");
    assert_eq!(sb.snapshot(), before, "a retry writes nothing");
    let (block, _) = call_full(&client, "memory_context", json!({})).await;
    let text = block.to_string();
    assert_eq!(text.matches("Buildkite").count(), 1, "{text}");
    assert!(!text.contains("no longer believed"), "{text}");
    client.cancel().await.unwrap();
}

/// An agent's store is a guess unless it says otherwise and the workspace lets it: the
/// default is `inferred`; `asserted` is lowered to the ceiling with a note, and kept
/// where `trust.agents: asserted`; a tier that is not one is a tool error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_store_records_a_tier_within_what_agents_may_record() {
    let sb = Sandbox::new();
    let client = connect_at(&sb, "2026-05-01T10:00:00Z").await;
    let stored = call_json(
        &client,
        "memory_store",
        json!({"key": "dev:editor", "value": "helix"}),
    )
    .await;
    assert_eq!(stored["status"], "stored");
    assert_eq!(stored["version"]["tier"], "inferred");
    assert!(stored.get("tier_note").is_none(), "{stored}");

    // Asking for asserted where agents may not: recorded inferred, and said so in the
    // structured result and the text. (Checked without the output schema: see
    // `tier_note` in memory_store's outputSchema.)
    let args = json!({"key": "dev:shell", "value": "fish", "tier": "asserted"});
    let result = client
        .call_tool(
            CallToolRequestParams::new("memory_store")
                .with_arguments(args.as_object().cloned().unwrap()),
        )
        .await
        .unwrap();
    assert_ne!(result.is_error, Some(true));
    let structured = result.structured_content.unwrap();
    let text: String = result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect();
    assert_eq!(structured["version"]["tier"], "inferred", "{structured}");
    let note = structured["tier_note"].as_str().unwrap_or_default();
    assert!(
        note.contains("recorded as `inferred`") && note.contains("trust.agents"),
        "{structured}"
    );
    assert!(text.contains(note), "the note is in the text too: {text}");
    let file = sb.memory_text();
    assert!(!file.contains("tier: asserted"), "{file}");

    // A tier that is not one: a tool error naming the field, nothing written.
    let before = sb.snapshot();
    for bad in ["certain", "Asserted", ""] {
        let (is_error, text) = call(
            &client,
            "memory_store",
            json!({"key": "dev:os", "value": "linux", "tier": bad}),
        )
        .await;
        assert!(is_error, "{bad:?}: {text}");
        assert!(text.contains("tier"), "{bad:?}: {text}");
    }
    let (is_error, text) = call(
        &client,
        "memory_recall",
        json!({"key": "dev:shell", "tier": "sure"}),
    )
    .await;
    assert!(is_error && text.contains("tier"), "{text}");
    assert_eq!(sb.snapshot(), before);

    // The tier filter on the reads.
    sb.ok(
        &[
            "store",
            "ci:provider",
            "Buildkite",
            "--valid-from",
            "2026-04-01",
        ],
        Some("2026-05-01T11:00:00Z"),
    );
    let got = call_json(&client, "memory_list", json!({"tier": "asserted"})).await;
    assert_eq!(values(&got), ["Buildkite"], "{got}");
    let got = call_json(&client, "memory_list", json!({"tier": "inferred"})).await;
    assert_eq!(values(&got), ["helix", "fish"], "{got}");
    let got = call_json(
        &client,
        "memory_recall",
        json!({"key": "dev:shell", "tier": "asserted"}),
    )
    .await;
    assert!(values(&got).is_empty(), "{got}");
    let got = call_json(
        &client,
        "memory_recall",
        json!({"key": "dev:shell", "tier": "inferred"}),
    )
    .await;
    assert_eq!(values(&got), ["fish"], "{got}");
    let got = call_json(
        &client,
        "memory_search",
        json!({"query": "fish", "tier": "inferred"}),
    )
    .await;
    assert_eq!(values(&got), ["fish"]);
    let got = call_json(
        &client,
        "memory_search",
        json!({"query": "fish", "tier": "asserted"}),
    )
    .await;
    assert!(values(&got).is_empty(), "{got}");
    let (_, block) = call_full(&client, "memory_context", json!({"tier": "inferred"})).await;
    assert!(
        block.contains("`dev:shell` = fish") && !block.contains("Buildkite"),
        "{block}"
    );
    client.cancel().await.unwrap();

    // Where the workspace lets agents assert, asserted is kept, with no note; a later
    // inferred store of the same value restates it.
    let yaml = sb.ws.join("mem7.yaml");
    let mut text = std::fs::read_to_string(&yaml).unwrap();
    text.push_str("trust:\n  agents: asserted\n");
    std::fs::write(&yaml, text).unwrap();
    sb.ok(&["allow"], None);
    let client = connect_at(&sb, "2026-05-02T10:00:00Z").await;
    let kept = call_json(
        &client,
        "memory_store",
        json!({"key": "dev:shell", "value": "fish", "tier": "asserted"}),
    )
    .await;
    assert_eq!(kept["status"], "stored", "a higher tier is news: {kept}");
    assert_eq!(kept["version"]["tier"], "asserted");
    assert!(kept.get("tier_note").is_none(), "{kept}");
    let again = call_json(
        &client,
        "memory_store",
        json!({"key": "dev:shell", "value": "fish"}),
    )
    .await;
    assert_eq!(again["status"], "unchanged", "{again}");
    assert_eq!(again["version"]["tier"], "asserted");
    client.cancel().await.unwrap();
}

/// Events add up through the tools: recall returns every value, newest first; forget
/// with `entry` forgets one; the block opens with the rules the person set.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_valued_keys_forget_entry_and_standing_rules_through_the_tools() {
    let sb = Sandbox::new();
    sb.ok(
        &[
            "store",
            "rule:commits",
            "Start every commit message with the ticket key",
        ],
        Some("2026-05-01T09:00:00Z"),
    );
    sb.ok(
        &["store", "ci:provider", "Buildkite"],
        Some("2026-05-01T09:30:00Z"),
    );
    let client = connect_at(&sb, "2026-05-01T10:00:00Z").await;
    let first = call_json(
        &client,
        "memory_store",
        json!({"key": "decision:cache", "value": "use a Map over lru-cache", "valid_from": "2026-04-20"}),
    )
    .await;
    let second = call_json(
        &client,
        "memory_store",
        json!({"key": "decision:cache", "value": "evict after 10 minutes", "valid_from": "2026-04-28"}),
    )
    .await;
    assert_eq!(second["status"], "stored");
    assert_eq!(second["closed"], 0, "{second}");
    let retry = call_json(
        &client,
        "memory_store",
        json!({"key": "decision:cache", "value": "evict after 10 minutes", "valid_from": "2026-04-28"}),
    )
    .await;
    assert_eq!(retry["status"], "unchanged", "{retry}");

    let recall = call_json(&client, "memory_recall", json!({"key": "decision:cache"})).await;
    assert_eq!(
        values(&recall),
        ["evict after 10 minutes", "use a Map over lru-cache"]
    );
    let list = call_json(&client, "memory_list", json!({"prefix": "decision:"})).await;
    assert_eq!(
        values(&list),
        ["evict after 10 minutes", "use a Map over lru-cache"]
    );
    let early = call_json(
        &client,
        "memory_recall",
        json!({"key": "decision:cache", "valid_at": "2026-04-25"}),
    )
    .await;
    assert_eq!(values(&early), ["use a Map over lru-cache"]);

    // The block: the rule first, whatever the query; both decisions.
    let (_, block) = call_full(
        &client,
        "memory_context",
        json!({"query": "which CI provider do we use"}),
    )
    .await;
    let rule = block
        .find("### Rules you set (1)\n- Start every commit message with the ticket key\n")
        .unwrap_or_else(|| panic!("{block}"));
    assert!(rule < block.find("### Facts").unwrap(), "{block}");
    let (_, block) = call_full(&client, "memory_context", json!({})).await;
    assert!(
        block.contains("use a Map over lru-cache") && block.contains("evict after 10 minutes"),
        "{block}"
    );
    assert!(
        block.contains(" · inferred\n"),
        "the agent's decisions are guesses: {block}"
    );

    // memory_forget with an entry: one value goes, the other stays.
    let before = sb.snapshot();
    let (is_error, text) = call(
        &client,
        "memory_forget",
        json!({"key": "decision:cache", "entry": "0123456789abcdef"}),
    )
    .await;
    assert!(is_error && text.contains("hash"), "{text}");
    assert_eq!(sb.snapshot(), before, "a bad entry writes nothing");
    let hash = first["version"]["hash"].as_str().unwrap();
    let forgot = call_json(
        &client,
        "memory_forget",
        json!({"key": "decision:cache", "entry": &hash[..12]}),
    )
    .await;
    assert_eq!(forgot["status"], "forgotten", "{forgot}");
    assert_eq!(forgot["closed"], 1);
    assert!(
        sb.memory_text().contains(&format!("entry: {hash}\n")),
        "the forget names the whole hash"
    );
    let recall = call_json(&client, "memory_recall", json!({"key": "decision:cache"})).await;
    assert_eq!(values(&recall), ["evict after 10 minutes"]);
    // Without an entry, every value goes.
    let forgot = call_json(&client, "memory_forget", json!({"key": "decision:cache"})).await;
    assert_eq!(forgot["closed"], 1);
    let recall = call_json(&client, "memory_recall", json!({"key": "decision:cache"})).await;
    assert!(values(&recall).is_empty(), "{recall}");
    client.cancel().await.unwrap();
}
