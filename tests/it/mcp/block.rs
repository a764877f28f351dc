//! The context block, `setup` of the clients' files and hooks, and a server catching up
//! in the background.

use super::*;

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
