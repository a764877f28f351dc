//! The tools across scopes, results that say their scope, and a search by words only
//! that says why.

use super::*;

/// A sandbox with a user workspace (`home/.mem7/workspace`) and a project (`proj`).
fn user_and_project() -> (Sandbox, std::path::PathBuf, std::path::PathBuf) {
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
    (sb, user, project)
}

/// Scopes through the tools: a server started inside a project (no MEM7_WORKSPACE) with
/// a user workspace writes each key where its class or `scope` says, and every read
/// merges the scopes: the narrowest answers, wider values come back `shadowed`, and
/// every result says its scope.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tools_write_and_read_every_scope_and_say_which() {
    let (sb, user, project) = user_and_project();
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

/// A read across scopes states the narrowest scope's clocks, resolved with the read, in
/// every front end alike: with a local scope whose last entry was recorded a month ahead
/// of the server's clock, a miss says "as of" that scope's belief, as the CLI's does (the
/// server used to state its own workspace's, resolved a second time).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_across_scopes_states_the_narrowest_scopes_clocks_as_the_cli_does() {
    let (sb, _user, project) = user_and_project();
    let in_project = |args: &[&str], now: &str| {
        let mut cmd = sb.command(args, Some(now));
        cmd.env_remove("MEM7_WORKSPACE")
            .env("MEM7_EMBED_PROVIDER", "none")
            .current_dir(&project);
        world::finish(cmd.output().unwrap())
    };
    let ahead = "2026-06-01T00:00:00Z";
    let now = "2026-05-01T10:00:00Z";
    let r = in_project(
        &["store", "local:branch", "half done", "--scope", "local"],
        ahead,
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    // What the CLI states for a miss, at the server's clock.
    let stated = |stderr: &str| -> String {
        let at = stderr.find(" as of ").expect(stderr) + " as of ".len();
        stderr[at..].split_whitespace().next().unwrap().to_string()
    };
    let cli_recall = in_project(&["recall", "nope:x"], now);
    assert_eq!(cli_recall.code, 4, "not found: {}", cli_recall.stderr);
    let cli_list = in_project(&["list", "--prefix", "nope:"], now);
    let (recall_as_of, list_as_of) = (stated(&cli_recall.stderr), stated(&cli_list.stderr));
    assert!(
        recall_as_of.starts_with("2026-06-01"),
        "the local scope believes what it recorded ahead: {}",
        cli_recall.stderr
    );
    assert_eq!(recall_as_of, list_as_of);

    let mut cmd = sb.command(&["mcp"], Some(now));
    cmd.env_remove("MEM7_WORKSPACE")
        .env("MEM7_EMBED_PROVIDER", "none")
        .current_dir(&project);
    let transport = TokioChildProcess::new(tokio::process::Command::from(cmd)).unwrap();
    let client = ClientConfig::default().serve(transport).await.unwrap();
    let (_, text) = call_full(&client, "memory_recall", json!({"key": "nope:x"})).await;
    assert_eq!(stated(&text), recall_as_of, "{text}");
    let (_, text) = call_full(&client, "memory_list", json!({"prefix": "nope:"})).await;
    assert_eq!(stated(&text), recall_as_of, "{text}");
    client.cancel().await.unwrap();
}
