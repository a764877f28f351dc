//! The MCP server, driven by rmcp's real client: over stdio (a spawned `mem7 mcp`) and
//! over streamable HTTP (a spawned `mem7 serve` on a loopback port).

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::Duration;

use crate::world::{self, Sandbox};
use rmcp::model::{CallToolRequestParams, ClientConfig};
use rmcp::service::RunningService;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};

pub(crate) type Client = RunningService<RoleClient, ClientConfig>;

pub(crate) async fn connect(sb: &Sandbox) -> Client {
    let cmd = tokio::process::Command::from(sb.command(&["mcp"], None));
    let transport = TokioChildProcess::new(cmd).expect("spawn mem7 mcp");
    ClientConfig::default()
        .serve(transport)
        .await
        .expect("initialize")
}

/// Calls a tool; returns whether it was an error and its text.
pub(crate) async fn call(client: &Client, tool: &str, args: Value) -> (bool, String) {
    let args = args.as_object().cloned().unwrap_or_default();
    let result = client
        .call_tool(CallToolRequestParams::new(tool.to_string()).with_arguments(args))
        .await
        .unwrap_or_else(|e| panic!("{tool}: protocol error {e}"));
    let text = result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("");
    (result.is_error == Some(true), text)
}

/// Calls a tool that must succeed; returns its structured content (checked against the
/// tool's declared output schema) and its text.
async fn call_full(client: &Client, tool: &str, args: Value) -> (Value, String) {
    let args_map = args.as_object().cloned().unwrap_or_default();
    let result = client
        .call_tool(CallToolRequestParams::new(tool.to_string()).with_arguments(args_map))
        .await
        .unwrap_or_else(|e| panic!("{tool}: protocol error {e}"));
    let text: String = result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect();
    assert!(
        result.is_error != Some(true),
        "{tool} {args} failed: {text}"
    );
    let structured = result
        .structured_content
        .unwrap_or_else(|| panic!("{tool}: no structuredContent: {text}"));
    let schema = client
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .find(|t| t.name == tool)
        .and_then(|t| t.output_schema)
        .unwrap_or_else(|| panic!("{tool} declares no outputSchema"));
    let problems = schema_problems(&Value::Object((*schema).clone()), &structured, "$");
    assert!(
        problems.is_empty(),
        "{tool}: structured content does not fit its schema: {problems:?}\n{structured:#}"
    );
    (structured, text)
}

/// Calls a tool that must succeed; returns its structured content.
pub(crate) async fn call_json(client: &Client, tool: &str, args: Value) -> Value {
    call_full(client, tool, args).await.0
}

/// Where `value` breaks `schema` (the JSON Schema subset mem7's output schemas use: type,
/// required, properties, items, enum).
fn schema_problems(schema: &Value, value: &Value, at: &str) -> Vec<String> {
    let mut out = Vec::new();
    let type_ok = |t: &str| match t {
        "object" => value.is_object(),
        "array" => value.is_array(),
        "string" => value.is_string(),
        "integer" => value.is_i64() || value.is_u64(),
        "number" => value.is_number(),
        "boolean" => value.is_boolean(),
        "null" => value.is_null(),
        _ => false,
    };
    match &schema["type"] {
        Value::String(t) if !type_ok(t) => out.push(format!("{at}: not {t}")),
        Value::Array(ts) if !ts.iter().any(|t| t.as_str().is_some_and(type_ok)) => {
            out.push(format!("{at}: none of {ts:?}"))
        }
        _ => {}
    }
    if let Some(allowed) = schema["enum"].as_array()
        && !allowed.contains(value)
    {
        out.push(format!("{at}: {value} not in {allowed:?}"));
    }
    if let Some(required) = schema["required"].as_array() {
        for r in required.iter().filter_map(Value::as_str) {
            if value.get(r).is_none() {
                out.push(format!("{at}: missing {r}"));
            }
        }
    }
    if let (Some(props), Some(obj)) = (schema["properties"].as_object(), value.as_object()) {
        for (k, v) in obj {
            match props.get(k) {
                Some(s) => out.extend(schema_problems(s, v, &format!("{at}.{k}"))),
                None => out.push(format!("{at}: {k} is not declared")),
            }
        }
    }
    if let (Some(items), Some(arr)) = (schema.get("items"), value.as_array()) {
        for (i, v) in arr.iter().enumerate() {
            out.extend(schema_problems(items, v, &format!("{at}[{i}]")));
        }
    }
    out
}

/// The values of a list of versions, or of the versions (or hits) a tool answered.
fn values(v: &Value) -> Vec<&str> {
    let list = v.get("versions").or_else(|| v.get("hits")).unwrap_or(v);
    list.as_array()
        .unwrap_or_else(|| panic!("not an array: {v}"))
        .iter()
        .map(|x| x["value"].as_str().unwrap_or_default())
        .collect()
}

/// The tool list as the snapshot holds it.
fn tools_snapshot(tools: &[rmcp::model::Tool]) -> String {
    let mut items: Vec<Value> = tools
        .iter()
        .map(|t| {
            json!({
                "name": t.name,
                "description": t.description,
                "inputSchema": t.input_schema.as_ref(),
                "annotations": t.annotations,
                "outputSchema": t.output_schema.as_ref(),
            })
        })
        .collect();
    items.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
    let mut s = serde_json::to_string_pretty(&items).unwrap();
    s.push('\n');
    s
}

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

/// A store through the server leaves the full-text commit to the next search (what made
/// a store cost a dozen `fdatasync`s), and nothing reads around it: a search and the
/// context block in the same server, and a CLI search in another process while the
/// server runs, all see the fact just stored.
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
    assert!(!full_text_lags(&sb), "the search left the full text behind");

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

/// A `mem7 mcp` whose standard error goes to `log`.
async fn connect_logged(sb: &Sandbox, log: &std::path::Path) -> Client {
    let cmd = tokio::process::Command::from(sb.command(&["mcp"], None));
    let (transport, _) = TokioChildProcess::builder(cmd)
        .stderr(std::fs::File::create(log).unwrap())
        .spawn()
        .expect("spawn mem7 mcp");
    ClientConfig::default()
        .serve(transport)
        .await
        .expect("initialize")
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

/// A `mem7 serve` child on a free loopback port; killed when dropped.
struct Served {
    child: std::process::Child,
    base: String,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve(sb: &Sandbox, token: &str) -> Served {
    let mut child = sb
        .command(&["serve", "--listen", "127.0.0.1:0"], None)
        .env("MEM7_TOKEN", token)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let line = lines.next().expect("serve printed nothing").unwrap();
    let addr = line
        .split("http://")
        .nth(1)
        .and_then(|rest| rest.split("/mcp").next())
        .unwrap_or_else(|| panic!("no address in {line:?}"))
        .to_string();
    // Keep draining standard error so the server never blocks on it.
    std::thread::spawn(move || for _ in lines {});
    Served {
        child,
        base: format!("http://{addr}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_mode_requires_the_bearer_token() {
    let sb = Sandbox::new();
    let token = "test-token-0123456789abcdef";
    let server = serve(&sb, token);
    let http = reqwest::Client::new();

    let health = http
        .get(format!("{}/healthz", server.base))
        .send()
        .await
        .unwrap();
    assert_eq!(health.status(), 200);
    assert_eq!(health.text().await.unwrap().trim(), "ok");

    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "curl", "version": "1"}}});
    for auth in [
        None,
        Some("Bearer wrong-token-0123456789abcdef"),
        Some(token),
    ] {
        let mut req = http
            .post(format!("{}/mcp", server.base))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(init.to_string());
        if let Some(a) = auth {
            req = req.header("authorization", a);
        }
        let resp = req.send().await.unwrap();
        assert_eq!(resp.status(), 401, "auth {auth:?}");
        assert!(resp.headers().contains_key("www-authenticate"));
    }

    // A real client with the token gets the same tools.
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(format!("{}/mcp", server.base))
            .auth_header(token),
    );
    let client = ClientConfig::default().serve(transport).await.unwrap();
    let tools = client.list_all_tools().await.unwrap();
    assert_eq!(tools.len(), 9);
    let stored = call_json(
        &client,
        "memory_store",
        json!({"key": "shared:fact", "value": "over http"}),
    )
    .await;
    assert_eq!(stored["status"], "stored");
    let recalled = call_json(&client, "memory_recall", json!({"key": "shared:fact"})).await;
    assert_eq!(values(&recalled), ["over http"]);
    client.cancel().await.unwrap();
    // The write is in the workspace, for the CLI too.
    let cli = sb.ok(&["recall", "shared:fact", "--json"], None);
    assert_eq!(cli.strings("value"), ["over http"]);
}

#[test]
fn serve_refuses_a_short_token_and_a_busy_port() {
    let sb = Sandbox::new();
    let r = sb
        .command(&["serve", "--token", "short"], None)
        .output()
        .unwrap();
    let r = world::finish(r);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("at least 16 characters"), "{}", r.stderr);

    let busy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = busy.local_addr().unwrap().port();
    let r = sb
        .command(&["serve", "--listen", &format!("127.0.0.1:{port}")], None)
        .env("MEM7_TOKEN", "test-token-0123456789abcdef")
        .output()
        .unwrap();
    let r = world::finish(r);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("cannot listen"), "{}", r.stderr);
}

#[test]
fn context_block_lists_facts_history_and_rules() {
    let sb = Sandbox::new();
    let empty = sb.ok(&["context"], Some("2026-04-12T09:00:00Z"));
    assert!(empty.stdout.contains("No memories"), "{}", empty.stdout);
    assert!(empty.stdout.contains("overrides"), "{}", empty.stdout);

    sb.ok(
        &[
            "store",
            "event7:host",
            "Railway",
            "--valid-from",
            "2026-04-01",
        ],
        Some("2026-04-01T10:00:00Z"),
    );
    sb.ok(&["store", "team:lead", "Ada"], Some("2026-04-01T10:00:00Z"));
    sb.ok(
        &[
            "store",
            "event7:host",
            "Cloudflare Workers",
            "--valid-from",
            "2026-04-05",
        ],
        Some("2026-04-11T18:00:00Z"),
    );
    let block = sb.ok(&["context"], Some("2026-04-12T09:00:00Z")).stdout;
    assert!(
        block.contains("- `event7:host` = Cloudflare Workers · valid 2026-04-05 → ∞"),
        "{block}"
    );
    assert!(block.contains("- `team:lead` = Ada"), "{block}");
    assert!(
        block.contains("- [history] `event7:host` was Railway · held 2026-04-01 → 2026-04-05 · changed 2026-04-11T18:00:00Z"),
        "{block}"
    );
    assert_eq!(
        block.matches("[history]").count() - 1,
        1,
        "one history line (and the rule): {block}"
    );
    // Older than 48 hours: no longer listed as a change.
    let later = sb.ok(&["context"], Some("2026-04-20T09:00:00Z")).stdout;
    assert!(!later.contains("- [history]"), "{later}");

    // With a query, only what matches.
    let query = sb
        .ok(&["context", "cloudflare"], Some("2026-04-12T09:00:00Z"))
        .stdout;
    assert!(query.contains("event7:host"), "{query}");
    assert!(!query.contains("team:lead"), "{query}");
    let none = sb
        .ok(&["context", "kubernetes"], Some("2026-04-12T09:00:00Z"))
        .stdout;
    assert!(
        none.contains("No memories match") && none.contains("no record"),
        "{none}"
    );

    // Claude Code's SessionStart hook shape.
    let hook = sb
        .ok(
            &["context", "--hook", "claude-code"],
            Some("2026-04-12T09:00:00Z"),
        )
        .json();
    assert_eq!(hook["hookSpecificOutput"]["hookEventName"], "SessionStart");
    let text = hook["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(text.contains("Cloudflare Workers"), "{text}");

    let r = sb.run(
        &["context", "--max-chars", "10", "--valid-at", "tomorrow"],
        None,
    );
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("--valid-at"), "{}", r.stderr);
}

#[test]
fn setup_merges_into_existing_client_files_and_the_hook_runs() {
    let sb = Sandbox::new();
    let project = sb.dir.path();
    std::fs::write(
        project.join(".mcp.json"),
        r#"{"mcpServers": {"other": {"command": "other-server"}}}"#,
    )
    .unwrap();
    let printed = sb.ok(&["setup", "claude-code"], None).stdout;
    assert!(printed.contains(".mcp.json"), "{printed}");
    assert!(printed.contains("--write"), "{printed}");
    // Printing writes nothing.
    let before = std::fs::read_to_string(project.join(".mcp.json")).unwrap();
    assert!(!before.contains("mem7"));

    sb.ok(&["setup", "claude-code", "--write"], None);
    sb.ok(&["setup", "claude-code", "--write"], None);
    let mcp: Value =
        serde_json::from_str(&std::fs::read_to_string(project.join(".mcp.json")).unwrap()).unwrap();
    assert_eq!(mcp["mcpServers"]["other"]["command"], "other-server");
    assert_eq!(
        mcp["mcpServers"]["mem7"]["command"],
        env!("CARGO_BIN_EXE_mem7")
    );
    let args: Vec<&str> = mcp["mcpServers"]["mem7"]["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert_eq!(args, ["--workspace", sb.ws.to_str().unwrap(), "mcp"]);
    let settings: Value = serde_json::from_str(
        &std::fs::read_to_string(project.join(".claude/settings.json")).unwrap(),
    )
    .unwrap();
    let groups = settings["hooks"]["SessionStart"].as_array().unwrap();
    assert_eq!(
        groups.len(),
        1,
        "running setup twice must not add a second hook"
    );
    let command = groups[0]["hooks"][0]["command"].as_str().unwrap();

    // The hook as Claude Code would run it, from anywhere.
    sb.ok(&["store", "project:lang", "Rust"], None);
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(command)
        .current_dir("/")
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let hook: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        hook["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .unwrap()
            .contains("`project:lang` = Rust")
    );

    // Codex, for the user: TOML table appended, the rest of the file kept.
    let codex = sb.dir.path().join("home/.codex");
    std::fs::create_dir_all(&codex).unwrap();
    std::fs::write(codex.join("config.toml"), "model = \"o3\"\n").unwrap();
    sb.ok(&["setup", "codex", "--scope", "user", "--write"], None);
    let toml = std::fs::read_to_string(codex.join("config.toml")).unwrap();
    assert!(
        toml.starts_with("model = \"o3\"\n\n[mcp_servers.mem7]\ncommand = "),
        "{toml}"
    );
    let hooks: Value =
        serde_json::from_str(&std::fs::read_to_string(codex.join("hooks.json")).unwrap()).unwrap();
    assert!(
        hooks["hooks"]["SessionStart"][0]["hooks"][0]["command"]
            .as_str()
            .unwrap()
            .ends_with("context --hook codex")
    );

    // A file that is not JSON is named, and nothing is written.
    std::fs::write(project.join(".mcp.json"), "{ not json").unwrap();
    let settings_before = std::fs::read(project.join(".claude/settings.json")).unwrap();
    let r = sb.run(&["setup", "claude-code", "--write"], None);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains(".mcp.json") && r.stderr.contains("not valid JSON"),
        "{}",
        r.stderr
    );
    assert_eq!(
        std::fs::read_to_string(project.join(".mcp.json")).unwrap(),
        "{ not json"
    );
    assert_eq!(
        std::fs::read(project.join(".claude/settings.json")).unwrap(),
        settings_before
    );
}

#[test]
fn the_server_catches_up_in_the_background() {
    // A hand-written change lands in the index without any tool call: the watcher
    // thread applies it (observed by a reader that does not catch up itself).
    let sb = Sandbox::new();
    sb.ok(&["store", "k:one", "1"], None);
    let mut child = sb
        .command(&["mcp"], None)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // A person (or git pull) appends an entry by hand while the server runs; no mem7
    // process but the server's watcher is there to index it.
    std::thread::sleep(Duration::from_millis(300));
    sb.append_by_hand("k:two", "2");
    let current = sb.ws.join(".mem7/CURRENT");
    let seen = world::poll(|| {
        let Ok(name) = std::fs::read_to_string(&current) else {
            return false;
        };
        let conn = rusqlite::Connection::open_with_flags(
            sb.ws.join(".mem7").join(name.trim()),
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
        )
        .unwrap();
        conn.query_row(
            "SELECT count(*) FROM versions WHERE key = 'k:two'",
            [],
            |r| r.get::<_, i64>(0),
        )
        .unwrap()
            == 1
    });
    let _ = child.kill();
    let _ = child.wait();
    assert!(seen);
}

async fn connect_at(sb: &Sandbox, now: &str) -> Client {
    let cmd = tokio::process::Command::from(sb.command(&["mcp"], Some(now)));
    let transport = TokioChildProcess::new(cmd).expect("spawn mem7 mcp");
    ClientConfig::default()
        .serve(transport)
        .await
        .expect("initialize")
}

/// A store through the tools after an entry recorded ahead of the server's clock (a pull
/// from a machine whose clock runs fast) is what the next default read answers; two
/// stores at one clock answer the second; instants outside years 1 to 9999 are tool
/// errors and write nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_see_their_own_writes_whatever_the_clocks_say() {
    let sb = Sandbox::new();
    sb.ok(&["store", "k", "future"], Some("2026-12-05T00:00:00Z"));
    let client = connect_at(&sb, "2026-12-01T09:00:00Z").await;
    call_json(
        &client,
        "memory_store",
        json!({"key": "k", "value": "now-value"}),
    )
    .await;
    let got = call_json(&client, "memory_recall", json!({"key": "k"})).await;
    assert_eq!(values(&got), ["now-value"]);
    assert_eq!(got["versions"][0]["valid_from"], "2026-12-01T09:00:00Z");
    assert_eq!(got["versions"][0]["valid_to"], "2026-12-05T00:00:00Z");
    let listed = call_json(&client, "memory_list", json!({})).await;
    assert_eq!(values(&listed), ["now-value"]);
    call_json(
        &client,
        "memory_store",
        json!({"key": "j", "value": "first"}),
    )
    .await;
    call_json(
        &client,
        "memory_store",
        json!({"key": "j", "value": "second"}),
    )
    .await;
    let got = call_json(&client, "memory_recall", json!({"key": "j"})).await;
    assert_eq!(values(&got), ["second"]);

    let before = sb.snapshot();
    for (tool, args) in [
        (
            "memory_store",
            json!({"key": "k", "value": "x", "valid_from": "0000-06-01T00:00:00Z"}),
        ),
        (
            "memory_store",
            json!({"key": "k", "value": "x", "valid_to": "10000-01-01T00:00:00Z"}),
        ),
        ("memory_recall", json!({"key": "k", "as_of": "0000-01-01"})),
    ] {
        let (is_error, text) = call(&client, tool, args.clone()).await;
        assert!(is_error, "{tool} {args}: {text}");
        assert!(
            text.contains("outside the times mem7 keeps") || text.contains("cannot read"),
            "{tool} {args}: {text}"
        );
    }
    assert_eq!(sb.snapshot(), before);
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_store_names_a_look_alike_slot_in_words_a_model_acts_on() {
    let sb = Sandbox::new();
    sb.ok(
        &["store", "team:CDN", "Fastly"],
        Some("2026-02-01T00:00:00Z"),
    );
    let client = connect(&sb).await;
    let r = call_json(
        &client,
        "memory_store",
        json!({"key": "team:cdn", "value": "Cloudflare"}),
    )
    .await;
    assert_eq!(r["status"], "stored");
    assert_eq!(r["similar"][0]["key"], "team:CDN");
    assert!(
        r["hint"].as_str().unwrap().contains(
            "use `team:CDN` from now on: call `memory_rekey` with from `team:cdn` and to `team:CDN`"
        ),
        "{r}"
    );
    assert!(
        !r["hint"].as_str().unwrap().contains("mem7 "),
        "no command for a model: {r}"
    );
    let r = call_json(
        &client,
        "memory_store",
        json!({"key": "office:wifi", "value": "guest"}),
    )
    .await;
    assert_eq!(r["similar"], json!([]));
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_rekey_moves_a_drifted_fact_and_keeps_both_histories() {
    let sb = Sandbox::new();
    sb.ok(
        &["store", "team:CDN", "Fastly", "--valid-from", "2026-01-01"],
        Some("2026-01-01T00:00:00Z"),
    );
    sb.ok(
        &[
            "store",
            "team:cdn",
            "Cloudflare",
            "--valid-from",
            "2026-03-01",
        ],
        Some("2026-03-01T00:00:00Z"),
    );
    let client = connect_at(&sb, "2026-04-01T00:00:00Z").await;
    let plan = call_json(
        &client,
        "memory_rekey",
        json!({"from": "team:cdn", "to": "team:CDN", "dry_run": true}),
    )
    .await;
    assert_eq!(plan["written"], false);
    assert_eq!(values(&plan["moved"]), ["Cloudflare"]);
    assert_eq!(values(&plan["superseded"]), ["Fastly"]);
    let done = call_json(
        &client,
        "memory_rekey",
        json!({"from": "team:cdn", "to": "team:CDN"}),
    )
    .await;
    assert_eq!(done["written"], true);
    let now = call_json(&client, "memory_recall", json!({"key": "team:CDN"})).await;
    assert_eq!(values(&now), ["Cloudflare"]);
    let before = call_json(
        &client,
        "memory_recall",
        json!({"key": "team:CDN", "valid_at": "2026-02-01"}),
    )
    .await;
    assert_eq!(values(&before), ["Fastly"]);
    let gone = call_json(&client, "memory_recall", json!({"key": "team:cdn"})).await;
    assert!(values(&gone).is_empty());
    let (is_error, text) = call(
        &client,
        "memory_rekey",
        json!({"from": "team:cdn", "to": "team:CDN"}),
    )
    .await;
    assert!(
        is_error && text.contains("nothing is believed about `team:cdn`"),
        "{text}"
    );
    client.cancel().await.unwrap();
}

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_refuses_a_foreign_origin_whatever_the_token() {
    let sb = Sandbox::new();
    let token = "test-token-0123456789abcdef";
    let server = serve(&sb, token);
    let http = reqwest::Client::new();
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "page", "version": "1"}}});
    let post = |origin: Option<&str>| {
        let mut req = http
            .post(format!("{}/mcp", server.base))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("authorization", format!("Bearer {token}"))
            .body(init.to_string());
        if let Some(o) = origin {
            req = req.header("origin", o);
        }
        req.send()
    };
    for foreign in [
        "https://evil.example",
        "http://evil.example:80",
        "null",
        "http://localhost:1",
    ] {
        let resp = post(Some(foreign)).await.unwrap();
        assert_eq!(resp.status(), 403, "origin {foreign}");
    }
    // The server's own origin, and a client that sends none, pass.
    let own = server.base.clone();
    assert_eq!(post(Some(&own)).await.unwrap().status(), 200);
    assert_eq!(post(None).await.unwrap().status(), 200);
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

/// Scopes through the tools: a server started inside a project (no MEM7_WORKSPACE) with
/// a user workspace writes each key where its class or `scope` says, and every read
/// merges the scopes: the narrowest answers, wider values come back `shadowed`, and
/// every result says its scope.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tools_write_and_read_every_scope_and_say_which() {
    let sb = Sandbox::bare();
    let user = sb.dir.path().join("home/.mem7/workspace");
    let project = sb.dir.path().join("proj");
    for dir in [&user, &project] {
        let r = world::finish(
            sb.command(&["init", dir.to_str().unwrap()], None)
                .output()
                .unwrap(),
        );
        assert_eq!(r.code, 0, "{}", r.stderr);
    }
    let mut cmd = sb.command(&["mcp"], Some("2026-05-01T10:00:00Z"));
    cmd.env_remove("MEM7_WORKSPACE")
        .env("MEM7_EMBED_PROVIDER", "none")
        .current_dir(&project);
    let transport = TokioChildProcess::new(tokio::process::Command::from(cmd)).unwrap();
    let client = ClientConfig::default().serve(transport).await.unwrap();

    let stored = call_json(
        &client,
        "memory_store",
        json!({"key": "pref:editor", "value": "helix"}),
    )
    .await;
    assert_eq!(stored["scope"], "user", "{stored}");
    let stored = call_json(
        &client,
        "memory_store",
        json!({"key": "pref:editor", "value": "vim", "scope": "project"}),
    )
    .await;
    assert_eq!(stored["scope"], "project", "{stored}");
    let stored = call_json(
        &client,
        "memory_store",
        json!({"key": "deploy:target", "value": "Render"}),
    )
    .await;
    assert_eq!(stored["scope"], "project", "{stored}");
    // Each write went to its own workspace's files.
    let text_of = |root: &std::path::Path| {
        std::fs::read_dir(root.join("memory"))
            .unwrap()
            .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
            .collect::<String>()
    };
    assert!(text_of(&user).contains("> helix") && !text_of(&user).contains("> vim"));
    assert!(text_of(&project).contains("> vim") && text_of(&project).contains("> Render"));

    let (recalled, text) = call_full(&client, "memory_recall", json!({"key": "pref:editor"})).await;
    let versions = recalled["versions"].as_array().unwrap();
    assert_eq!(versions.len(), 2, "{recalled}");
    assert_eq!(
        (versions[0]["value"].as_str(), versions[0]["scope"].as_str()),
        (Some("vim"), Some("project"))
    );
    assert_eq!(versions[0].get("shadowed"), None);
    assert_eq!(
        (versions[1]["value"].as_str(), versions[1]["scope"].as_str()),
        (Some("helix"), Some("user"))
    );
    assert_eq!(versions[1]["shadowed"], true);
    assert!(
        text.contains("· project") && text.contains("(shadowed"),
        "{text}"
    );

    let only_user = call_json(
        &client,
        "memory_recall",
        json!({"key": "pref:editor", "scope": "user"}),
    )
    .await;
    assert_eq!(values(&only_user["versions"]), ["helix"]);

    let listed = call_json(&client, "memory_list", json!({})).await;
    let scopes: Vec<(&str, &str, bool)> = listed["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            (
                v["value"].as_str().unwrap(),
                v["scope"].as_str().unwrap(),
                v["shadowed"].as_bool().unwrap_or(false),
            )
        })
        .collect();
    assert_eq!(
        scopes,
        [
            ("Render", "project", false),
            ("vim", "project", false),
            ("helix", "user", true)
        ]
    );

    let found = call_json(&client, "memory_search", json!({"query": "editor"})).await;
    let hits = found["hits"].as_array().unwrap();
    assert_eq!(hits[0]["value"], "vim", "{found}");
    assert_eq!(hits[0]["scope"], "project");
    assert!(
        hits.iter()
            .any(|h| h["value"] == "helix" && h["shadowed"] == true),
        "{found}"
    );

    let block = call_json(&client, "memory_context", json!({})).await;
    let block = block["text"].as_str().unwrap();
    assert!(
        block.contains("`pref:editor` = vim") && block.contains(" · project\n"),
        "{block}"
    );
    assert!(
        !block.contains("helix"),
        "a shadowed value is not in the block: {block}"
    );

    let (bad, text) = call(
        &client,
        "memory_store",
        json!({"key": "k", "value": "v", "scope": "team"}),
    )
    .await;
    assert!(bad && text.contains("is not a scope"), "{text}");
    client.cancel().await.unwrap();
}

/// With one workspace the tools say its scope too (the project's, named by
/// MEM7_WORKSPACE), in every version of every result, and nothing else changes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_workspace_results_say_their_scope() {
    let sb = Sandbox::new();
    let client = connect_at(&sb, "2026-05-01T10:00:00Z").await;
    let stored = call_json(
        &client,
        "memory_store",
        json!({"key": "ci:provider", "value": "Buildkite"}),
    )
    .await;
    assert_eq!(
        (
            stored["scope"].as_str(),
            stored["version"]["scope"].as_str()
        ),
        (Some("project"), Some("project"))
    );
    let (recalled, text) = call_full(&client, "memory_recall", json!({"key": "ci:provider"})).await;
    assert_eq!(recalled["versions"][0]["scope"], "project", "{recalled}");
    assert!(
        !text.contains("· project"),
        "one workspace: the text is as before: {text}"
    );
    let found = call_json(
        &client,
        "memory_search",
        json!({"query": "provider", "mode": "lexical"}),
    )
    .await;
    assert_eq!(found["hits"][0]["scope"], "project", "{found}");
    let listed = call_json(&client, "memory_list", json!({})).await;
    assert_eq!(listed["versions"][0]["scope"], "project", "{listed}");
    let history = call_json(&client, "memory_history", json!({"key": "ci:provider"})).await;
    assert_eq!(history["versions"][0]["scope"], "project", "{history}");
    client.cancel().await.unwrap();
}

/// The engine's notes reach the model in its own words: a search that fell back to words
/// because this memory has no embedding model says so in the tool's text, once, without
/// telling the model to run a command it cannot run; the person's wording (with the
/// command) goes to the server's log.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_search_by_words_only_tells_the_model_why_in_its_own_words() {
    let sb = Sandbox::new();
    let log = sb.dir.path().join("server.log");
    let client = connect_logged(&sb, &log).await;
    call_json(
        &client,
        "memory_store",
        json!({"key": "deploy:target", "value": "Cloudflare Pages"}),
    )
    .await;
    let (structured, text) =
        call_full(&client, "memory_search", json!({"query": "cloudflare"})).await;
    assert_eq!(values(&structured), ["Cloudflare Pages"]);
    let notes: Vec<&str> = text.lines().filter(|l| l.starts_with("note: ")).collect();
    assert_eq!(notes.len(), 1, "{text}");
    assert!(notes[0].contains("matched by words only"), "{text}");
    assert!(
        !notes[0].contains("`mem7"),
        "a model cannot run commands: {text}"
    );
    // Said once per workspace, like the CLI's note.
    let (_, again) = call_full(&client, "memory_search", json!({"query": "pages"})).await;
    assert!(!again.contains("note: "), "said twice: {again}");
    client.cancel().await.expect("close the session");
    let logged = std::fs::read_to_string(&log).expect("the server's log");
    assert!(
        logged.contains("searching by words only") && logged.contains("`mem7 model fetch`"),
        "{logged}"
    );
}
