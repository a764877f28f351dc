//! No stalls (issue 36): what a server's store answers when the meaning side of its
//! look-alike check finishes after the answer, with the local model. (Speed itself is
//! measured by `just bench-mcp --stalls`, never here.)

use std::time::{Duration, Instant};

use rmcp::ServiceExt;
use rmcp::model::ClientConfig;
use rmcp::transport::TokioChildProcess;
use serde_json::json;

use crate::local_model::model;
use crate::mcp::{Client, call, call_json};
use crate::world::Sandbox;

fn with_facts() -> Sandbox {
    let s = Sandbox::new();
    let facts = "{\"key\":\"family:doctor\",\"value\":\"Dr. Okafor at the Elm Street practice\"}\n\
                 {\"key\":\"home:internet_provider\",\"value\":\"Fibrelink, 500 Mbit\"}\n";
    let r = s.run_stdin(&["import", "-"], Some("2026-01-01T00:00:00Z"), facts);
    assert_eq!(r.code, 0, "{}", r.stderr);
    s
}

async fn connect_with_model(s: &Sandbox) -> Client {
    let mut cmd = s.command(&["mcp"], None);
    cmd.env("MEM7_MODEL_DIR", model().expect("checked by the test"));
    let transport =
        TokioChildProcess::new(tokio::process::Command::from(cmd)).expect("spawn mem7 mcp");
    ClientConfig::default()
        .serve(transport)
        .await
        .expect("initialize")
}

/// A store of a new key whose look-alike only the model can see (`family:physician`
/// beside `family:doctor`) answers at once with what names and cached vectors show,
/// saying that the comparison by meaning goes on; a later answer names the look-alike.
/// The command line's store, by contrast, still names it in its own answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_servers_store_names_a_look_alike_by_meaning_in_a_later_answer() {
    if model().is_none() {
        return;
    }
    let s = with_facts();
    let client = connect_with_model(&s).await;
    let (error, first) = call(
        &client,
        "memory_store",
        json!({"key": "family:physician", "value": "Dr. Haddad, since March"}),
    )
    .await;
    assert!(!error, "{first}");
    if !first.contains("family:doctor") {
        assert!(
            first.contains("still being compared by meaning"),
            "the answer says the check goes on: {first}"
        );
        // Any later answer carries what the check found once the server's background
        // work has embedded the words (a bounded wait, not a measure of speed).
        let deadline = Instant::now() + crate::world::PATIENCE;
        let mut later = String::new();
        while Instant::now() < deadline {
            let (_, text) = call(&client, "memory_list", json!({"prefix": "home:"})).await;
            if text.contains("looks like the existing `family:doctor`") {
                later = text;
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert!(
            later.contains("(stored earlier) looks like the existing `family:doctor`")
                && later.contains("memory_rekey"),
            "a later answer names the look-alike: {later:?}"
        );
    }
    // The store itself went through either way.
    let got = call_json(&client, "memory_recall", json!({"key": "family:physician"})).await;
    assert_eq!(got["versions"][0]["value"], "Dr. Haddad, since March");
    client.cancel().await.ok();
    // The command line embeds what it needs before it answers.
    let s = with_facts();
    let mut cmd = s.command(
        &["store", "family:physician", "Dr. Haddad", "--json"],
        Some("2026-01-02T00:00:00Z"),
    );
    cmd.env("MEM7_MODEL_DIR", model().unwrap());
    let r = crate::world::finish(cmd.output().unwrap());
    assert_eq!(r.code, 0, "{}", r.stderr);
    let similar = r.json()["similar"].to_string();
    assert!(similar.contains("family:doctor"), "{}", r.stdout);
}

/// A server's store of a new key compares it by name at once with the 256 keys sharing
/// most of its words, says so, and compares the rest after its answer: a look-alike
/// among them (`payments:maintainer`, a synonym of `owner`, ranked after 300 keys that
/// share as many words) is named by a later answer. The command line names it at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_servers_store_names_a_look_alike_past_the_first_candidates_in_a_later_answer() {
    if model().is_none() {
        return;
    }
    let s = Sandbox::new();
    let mut facts: String = (0..300)
        .map(|i| format!("{{\"key\":\"payments:afact_{i}\",\"value\":\"filler {i}\"}}\n"))
        .collect();
    facts.push_str("{\"key\":\"payments:maintainer\",\"value\":\"Ana\"}\n");
    let r = s.run_stdin(&["import", "-"], Some("2026-01-01T00:00:00Z"), &facts);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let client = connect_with_model(&s).await;
    let (error, first) = call(
        &client,
        "memory_store",
        json!({"key": "payments:owner", "value": "Ben"}),
    )
    .await;
    assert!(!error, "{first}");
    assert!(
        first.contains("was checked by name against the 256 existing keys")
            && !first.contains("looks like the existing `payments:maintainer`"),
        "{first}"
    );
    // A bounded wait for the server's background work, not a measure of speed.
    let deadline = Instant::now() + crate::world::PATIENCE;
    let mut later = String::new();
    while Instant::now() < deadline {
        let (_, text) = call(&client, "memory_list", json!({"prefix": "none:"})).await;
        if text.contains("looks like the existing `payments:maintainer`") {
            later = text;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        later.contains(
            "`payments:owner` (stored earlier) looks like the existing `payments:maintainer`"
        ),
        "a later answer names the look-alike: {later:?}"
    );
    client.cancel().await.ok();
    let mut cmd = s.command(
        &["store", "payments:lead", "Cy", "--json"],
        Some("2026-01-02T00:00:00Z"),
    );
    cmd.env("MEM7_MODEL_DIR", model().unwrap());
    let r = crate::world::finish(cmd.output().unwrap());
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.json()["similar"]
            .to_string()
            .contains("payments:maintainer"),
        "{}",
        r.stdout
    );
}

/// A server commits the full-text index without `fsync`, after writing a marker beside
/// it that names the machine's boot. An index whose marker names another boot (the
/// machine stopped before the server synced it) may be torn: the next search rebuilds
/// it whole, finds what the files hold, and the marker goes.
#[test]
fn a_full_text_index_left_unsynced_by_an_earlier_boot_is_rebuilt() {
    if !std::path::Path::new("/proc/sys/kernel/random/boot_id").exists() {
        return; // Commits sync as tantivy does where there is no boot id.
    }
    let s = with_facts();
    let r = s.read(&["search", "Okafor", "--mode", "lexical"], None);
    assert!(r.stdout.contains("family:doctor"), "{}", r.stdout);
    let index_dir = s.memory_dir().parent().unwrap().join(".mem7");
    let tantivy = std::fs::read_dir(&index_dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "tantivy"))
        .expect("a full-text index");
    let marker = tantivy.with_extension("tantivy.unsynced-1");
    std::fs::write(&marker, "an-earlier-boot").unwrap();
    // Stand-in for a torn segment: the rebuild must not read it.
    std::fs::write(tantivy.join("meta.json"), "{ torn").unwrap();
    let r = s.read(&["search", "Okafor", "--mode", "lexical"], None);
    assert!(r.stdout.contains("family:doctor"), "{}", r.stdout);
    assert!(!marker.exists(), "the marker goes with the index it marked");
    let r = s.read(&["search", "Fibrelink", "--mode", "lexical"], None);
    assert!(r.stdout.contains("home:internet_provider"), "{}", r.stdout);
}
