//! Tools see their own writes whatever the clocks say; look-alike slots and `memory_rekey`.

use super::*;

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
