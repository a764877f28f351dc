//! `mem7 serve`: the bearer token, short tokens and busy ports, foreign origins.

use super::*;

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
