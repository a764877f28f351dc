//! `watch` and the MCP server sync on a timer and pick up what others pushed.

use super::*;

#[test]
fn watch_syncs_on_a_timer_and_picks_up_what_others_pushed() {
    let w = World::new();
    let (a, b) = w.pair("");
    let mut watch = a
        .command(&["watch", "--interval", "1", "--sync-every", "1s"], None)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = world::lines_of(watch.stdout.take().unwrap());
    let err = world::lines_of(watch.stderr.take().unwrap());
    let mut log = Vec::new();
    world::wait_for_line(&out, &mut log, |l| {
        l.contains("syncing through git every 1s")
    });

    b.store("b:pushed", "seen by a's watch", "2026-03-19T08:00:00Z");
    b.sync("2026-03-19T08:00:01Z");
    world::wait_for_line(&out, &mut log, |l| {
        l.contains("sync: received 1 entry") && l.contains("`b:pushed`")
    });
    let recall = a.ok(&["recall", "b:pushed"], Some("2026-12-31T00:00:00Z"));
    assert!(
        recall.stdout.contains("seen by a's watch"),
        "{}",
        recall.stdout
    );

    // What A writes while watching is sent on the next tick.
    a.store("a:watched", "sent by the timer", "2026-03-19T09:00:00Z");
    world::wait_for_line(&out, &mut log, |l| {
        l.contains("sync: sent 1 entry") && l.contains("`a:watched`")
    });
    b.sync("2026-03-19T09:00:01Z");
    let got = b.ok(&["recall", "a:watched"], Some("2026-12-31T00:00:00Z"));
    assert!(got.stdout.contains("sent by the timer"), "{}", got.stdout);

    // A failing sync is logged, and watching goes on.
    a.git(&["remote", "set-url", "origin", "/nonexistent/memory.git"]);
    let mut errors = Vec::new();
    world::wait_for_line(&err, &mut errors, |l| l.contains("mem7 watch: sync failed"));
    assert!(
        watch.try_wait().unwrap().is_none(),
        "watch stopped: {errors:#?}"
    );
    a.append_entry_by_hand("by:hand", "still watched");
    world::wait_for_line(&out, &mut log, |l| l.contains("applied 1 new entry"));
    let _ = watch.kill();
    let _ = watch.wait();
}

impl Clone {
    /// Appends an unsealed entry by hand, recorded far ahead so that it sorts last.
    fn append_entry_by_hand(&self, key: &str, value: &str) {
        // Appended in one write, as an editor's save or git would leave it: rewriting
        // the whole file lets a watcher see it cut short in between (and rebuild).
        use std::io::Write;
        let file = self.memory_file("2026-03-01");
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&file)
            .unwrap();
        f.write_all(format!(
            "\n## {key}\n\n```mem7\nop: store\nrecorded: 2099-01-01T00:00:00Z\nagent: a person\n```\n\n> {value}\n\n---\n"
        ).as_bytes())
        .unwrap();
    }
}

#[test]
fn watch_takes_the_period_from_mem7_yaml_and_refuses_nonsense() {
    let w = World::new();
    let (a, _b) = w.pair("");
    for bad in ["5x", "0s", "5", "soon"] {
        let r = a.run(&["watch", "--sync-every", bad], None);
        assert_eq!(r.code, 2, "{bad}: {}{}", r.stdout, r.stderr);
        assert!(r.stderr.contains("--sync-every"), "{}", r.stderr);
    }
    let config = a.ws.join("mem7.yaml");
    std::fs::write(&config, "sync:\n  every: whenever\n").unwrap();
    let r = a.run(&["watch"], None);
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("mem7.yaml: sync.every"), "{}", r.stderr);

    std::fs::write(&config, "sync:\n  every: 2s\n").unwrap();
    let mut watch = a
        .command(&["watch", "--interval", "1"], None)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let out = world::lines_of(watch.stdout.take().unwrap());
    let mut log = Vec::new();
    world::wait_for_line(&out, &mut log, |l| {
        l.contains("syncing through git every 2s")
    });
    // It syncs at once without being told to (nothing to do here).
    world::wait_for_line(&out, &mut log, |l| l.contains(" sync: "));
    let _ = watch.kill();
    let _ = watch.wait();
}

mod mcp {
    use super::*;
    use rmcp::ServiceExt;
    use rmcp::model::{CallToolRequestParams, ClientConfig};
    use serde_json::json;

    async fn call(
        client: &rmcp::service::RunningService<rmcp::RoleClient, ClientConfig>,
        tool: &str,
        args: serde_json::Value,
    ) -> String {
        let result = client
            .call_tool(
                CallToolRequestParams::new(tool.to_string())
                    .with_arguments(args.as_object().cloned().unwrap_or_default()),
            )
            .await
            .unwrap_or_else(|e| panic!("{tool}: {e}"));
        result
            .content
            .iter()
            .filter_map(|c| c.as_text().map(|t| t.text.clone()))
            .collect()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_mcp_server_sees_what_a_sync_brought_in() {
        let w = World::new();
        let (a, b) = w.pair("");
        let cmd = tokio::process::Command::from(a.command(&["mcp"], None));
        let transport = rmcp::transport::TokioChildProcess::new(cmd).unwrap();
        let client = ClientConfig::default().serve(transport).await.unwrap();
        let before = call(&client, "memory_recall", json!({"key": "b:remote"})).await;
        assert!(!before.contains("over the wire"), "{before}");

        b.store("b:remote", "over the wire", "2026-03-20T08:00:00Z");
        b.sync("2026-03-20T08:00:01Z");
        a.sync("2026-03-20T08:00:02Z");
        let deadline = Instant::now() + world::PATIENCE;
        loop {
            let got = call(&client, "memory_recall", json!({"key": "b:remote"})).await;
            if got.contains("over the wire") {
                break;
            }
            assert!(Instant::now() < deadline, "the server never saw it: {got}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let hits = call(&client, "memory_search", json!({"query": "wire"})).await;
        assert!(hits.contains("b:remote"), "{hits}");
        client.cancel().await.unwrap();
    }
}
