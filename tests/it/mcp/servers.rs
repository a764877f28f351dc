//! Several servers and the command line on one workspace: each sees the others' writes,
//! the deferred full-text commit, writers at once.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_servers_and_the_cli_see_each_others_writes() {
    // On the real clock: a server reads its clock once, so on a pinned one its "now"
    // would stay before the CLI's later store, which it must see as what holds now.
    let sb = Sandbox::new().on_the_real_clock();
    let a = connect(&sb).await;
    let b = connect(&sb).await;
    let stored = call_json(
        &a,
        "memory_store",
        json!({"key": "team:lead", "value": "Ada"}),
    )
    .await;
    assert_eq!(stored["status"], "stored");
    let seen = call_json(&b, "memory_recall", json!({"key": "team:lead"})).await;
    assert_eq!(values(&seen), ["Ada"]);
    let found = call_json(&b, "memory_search", json!({"query": "ada"})).await;
    assert_eq!(values(&found), ["Ada"]);

    sb.ok(&["store", "team:lead", "Grace"], None);
    let seen = call_json(&a, "memory_recall", json!({"key": "team:lead"})).await;
    assert_eq!(values(&seen), ["Grace"]);
    let stored = call_json(
        &b,
        "memory_store",
        json!({"key": "team:size", "value": "4"}),
    )
    .await;
    assert_eq!(stored["status"], "stored");
    let listed = call_json(&a, "memory_list", json!({"prefix": "team:"})).await;
    assert_eq!(values(&listed), ["Grace", "4"]);
    let (is_error, block) = call(&b, "memory_context", json!({"query": "grace"})).await;
    assert!(!is_error, "{block}");
    assert!(block.contains("- `team:lead` = Grace"), "{block}");
    assert!(block.contains("- [history] `team:lead` was Ada"), "{block}");
    assert!(!block.contains("team:size"), "{block}");
    a.cancel().await.unwrap();
    b.cancel().await.unwrap();
    sb.ok(&["verify"], None);
}

/// Whether the full-text index of the current generation lags behind its versions (a
/// write whose full-text commit was left to the next search), read from the index as
/// another process would.
fn full_text_lags(sb: &Sandbox) -> bool {
    let name = std::fs::read_to_string(sb.ws.join(".mem7/CURRENT")).unwrap();
    let conn = rusqlite::Connection::open_with_flags(
        sb.ws.join(".mem7").join(name.trim()),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .unwrap();
    conn.query_row(
        "SELECT (SELECT max(id) FROM versions)
                > coalesce((SELECT CAST(v AS INTEGER) FROM meta WHERE k = 'fulltext_max_id'), 0)
             OR EXISTS (SELECT 1 FROM fulltext_dirty)",
        [],
        |r| r.get(0),
    )
    .unwrap()
}

/// Waits until the server's quiet moment has committed the full text (a bounded wait,
/// not a measure of speed).
async fn committed_when_quiet(sb: &Sandbox) {
    let start = std::time::Instant::now();
    while full_text_lags(sb) {
        assert!(
            start.elapsed() < std::time::Duration::from_secs(20),
            "the server left the full text behind"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

/// A store through the server leaves the full-text commit to a quiet moment (what made
/// a store cost a dozen `fdatasync`s; a search meanwhile scores the new versions beside
/// the index), and nothing reads around it: a search and the context block in the same
/// server, and a CLI search in another process while the server runs, all see the fact
/// just stored.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_defers_the_full_text_commit_and_every_reader_still_sees_it() {
    let sb = Sandbox::new();
    let client = connect(&sb).await;
    let stored = call_json(
        &client,
        "memory_store",
        json!({"key": "deploy:target", "value": "Railway in the Frankfurt region"}),
    )
    .await;
    assert_eq!(stored["status"], "stored");
    assert!(full_text_lags(&sb), "the store committed the full text");
    let found = call_json(
        &client,
        "memory_search",
        json!({"query": "frankfurt", "mode": "lexical"}),
    )
    .await;
    assert_eq!(values(&found), ["Railway in the Frankfurt region"]);
    committed_when_quiet(&sb).await;

    // Again, read by the context block first, and by another process.
    let stored = call_json(
        &client,
        "memory_store",
        json!({"key": "deploy:window", "value": "Tuesdays after the standup"}),
    )
    .await;
    assert_eq!(stored["status"], "stored");
    assert!(full_text_lags(&sb));
    let (is_error, block) = call(&client, "memory_context", json!({"query": "standup"})).await;
    assert!(!is_error, "{block}");
    assert!(
        block.contains("`deploy:window` = Tuesdays after the standup"),
        "{block}"
    );
    let stored = call_json(
        &client,
        "memory_store",
        json!({"key": "deploy:owner", "value": "Grace on the platform team"}),
    )
    .await;
    assert_eq!(stored["status"], "stored");
    let cli = sb.ok(&["search", "platform", "--mode", "lexical", "--json"], None);
    assert!(cli.stdout.contains("deploy:owner"), "{}", cli.stdout);
    // And the server, after the CLI committed the full text itself.
    let found = call_json(
        &client,
        "memory_search",
        json!({"query": "grace", "mode": "lexical"}),
    )
    .await;
    assert_eq!(values(&found), ["Grace on the platform team"]);
    client.cancel().await.unwrap();
}

/// Stores `n` facts under `name:`, searching for every second one right after storing it.
async fn store_and_search(client: &Client, name: &str, n: usize) {
    for i in 0..n {
        let key = format!("{name}:fact{i}");
        let value = format!("{name} wrote fact number w{name}{i}x");
        let (is_error, text) =
            call(client, "memory_store", json!({"key": key, "value": value})).await;
        assert!(!is_error, "{key}: {text}");
        if i % 2 == 1 {
            let query = format!("w{name}{i}x");
            let (is_error, text) = call(
                client,
                "memory_search",
                json!({"query": query, "mode": "lexical"}),
            )
            .await;
            assert!(!is_error, "search after {key}: {text}");
            assert!(text.contains(&key), "search after {key}: {text}");
        }
    }
}

/// Two servers on one workspace, each storing and searching at once (every search
/// commits the full-text index, the other server's writes included, and merges
/// segments): every entry is kept, every search finds the fact its server just
/// stored, and neither server reports an error (a merge once deleted index files under
/// the other server's writer).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_servers_writing_at_once_keep_every_entry_and_trip_on_nothing() {
    const EACH: usize = 60;
    let sb = Sandbox::new();
    let logs = [sb.dir.path().join("a.log"), sb.dir.path().join("b.log")];
    let a = connect_logged(&sb, &logs[0]).await;
    let b = connect_logged(&sb, &logs[1]).await;
    tokio::join!(
        store_and_search(&a, "left", EACH),
        store_and_search(&b, "right", EACH)
    );
    a.cancel().await.unwrap();
    b.cancel().await.unwrap();
    for log in &logs {
        let text = std::fs::read_to_string(log).unwrap();
        assert!(
            !text.contains("error") && !text.contains("failed"),
            "{}: {text}",
            log.display()
        );
    }
    for name in ["left", "right"] {
        let listed = sb.ok(&["list", "--prefix", &format!("{name}:"), "--json"], None);
        assert_eq!(listed.strings("key").len(), EACH, "{name}");
        let found = sb.ok(
            &["search", &format!("w{name}0x"), "--mode", "lexical"],
            None,
        );
        assert!(
            found.stdout.contains(&format!("{name}:fact0")),
            "{}",
            found.stdout
        );
    }
    sb.ok(&["verify"], None);
}

/// A server's search right after stores finds what they wrote, new keys by their words
/// (scored beside the full-text index, which a server commits on a quiet moment rather
/// than before the search) and a changed key by its new value only; and the server does
/// commit once it is quiet, so the index does not stay behind.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_servers_search_right_after_stores_finds_them_and_the_commit_follows_when_quiet() {
    let s = Sandbox::new();
    let facts = "{\"key\":\"home:internet_provider\",\"value\":\"Fibrelink, 500 Mbit\"}\n";
    let r = s.run_stdin(&["import", "-"], Some("2026-01-01T00:00:00Z"), facts);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let client = connect(&s).await;
    let (error, _) = call(&client, "memory_search", json!({"query": "doctor"})).await;
    assert!(!error);
    for (key, value) in [
        (
            "garden:tool_shed",
            "the green shed behind the greenhouse keeps the lawnmower",
        ),
        ("garden:hose", "coiled on the wall of the garage"),
    ] {
        let args = json!({"key": key, "value": value, "tags": ["garden"]});
        let (error, answer) = call(&client, "memory_store", args).await;
        assert!(!error, "{answer}");
    }
    let (error, found) = call(
        &client,
        "memory_search",
        json!({"query": "where is the lawnmower kept"}),
    )
    .await;
    assert!(!error, "{found}");
    assert!(found.contains("garden:tool_shed"), "{found}");
    assert!(!found.contains("garden:hose"), "{found}");
    // Tags filter the new versions as they filter the index's.
    for (tag, kept) in [("garden", true), ("home", false)] {
        let args = json!({"query": "lawnmower", "tags": [tag]});
        let (_, found) = call(&client, "memory_search", args).await;
        assert_eq!(found.contains("garden:tool_shed"), kept, "{tag}: {found}");
    }
    let (error, answer) = call(
        &client,
        "memory_store",
        json!({"key": "home:internet_provider", "value": "Skylink, 1 Gbit"}),
    )
    .await;
    assert!(!error, "{answer}");
    let (_, provider) = call(
        &client,
        "memory_search",
        json!({"query": "internet provider"}),
    )
    .await;
    assert!(provider.contains("Skylink"), "{provider}");
    assert!(
        !provider.contains("Fibrelink"),
        "the old value is no longer believed: {provider}"
    );
    let (error, _) = call(
        &client,
        "memory_store",
        json!({"key": "garden:bulbs", "value": "tulip bulbs in the cellar"}),
    )
    .await;
    assert!(!error);
    // The search right after the last store leaves the server no quiet moment at that
    // store's wake; the server wakes again for its commit.
    let (_, bulbs) = call(&client, "memory_search", json!({"query": "tulip"})).await;
    assert!(bulbs.contains("garden:bulbs"), "{bulbs}");
    committed_when_quiet(&s).await;
    client.cancel().await.unwrap();
}
