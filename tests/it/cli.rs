//! End-to-end tests of the `mem7` binary: real files, real SQLite, real processes.

use crate::world::{self, Sandbox, worked_example};
use serde_json::Value;

mod clocks;
mod edges;
mod files;
mod go_mem7;
mod import;
mod input;
mod many;
mod names;
mod picture;
mod reads;
mod scopes;
mod setup;
mod tiers;

const T1: &str = "2026-02-15T00:00:00Z";
const T2: &str = "2026-03-20T00:00:00Z";
const T3: &str = "2026-04-12T00:00:00Z";
const NOW: &str = "2026-04-12T12:00:00Z";

/// The keys a `store --json` answer names as look-alike slots.
fn similar_keys(answer: &Value) -> Vec<&str> {
    answer["similar"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["key"].as_str().unwrap())
        .collect()
}

fn recall_values(s: &Sandbox, args: &[&str]) -> Vec<String> {
    let mut full = vec!["recall", "event7:host", "--json"];
    full.extend_from_slice(args);
    let r = s.read(&full, Some(NOW));
    r.json()
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["value"].as_str().unwrap().to_string())
        .collect()
}

/// The values of a JSON array of versions (or hits), in the order given.
fn json_values(r: &world::Run) -> Vec<String> {
    r.strings("value")
}

/// Appends an entry written before tiers existed (no `tier:` line), by hand: it holds
/// from 2026-01-02 and was recorded then.
fn append_untiered(s: &Sandbox, key: &str, value: &str) {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(s.memory_dir().join("2026-01-02.md"))
        .unwrap();
    write!(
        f,
        "## {key}\n\n```mem7\nop: store\nvalid_from: 2026-01-02T00:00:00Z\nrecorded: 2026-01-02T00:00:00Z\nagent: a person\n```\n\n> {value}\n\n---\n"
    )
    .unwrap();
}

/// A read's JSON answer at `now` (exit 0 with values, 4 with none).
fn read_values(s: &Sandbox, args: &[&str], now: &str) -> Vec<String> {
    let mut full = args.to_vec();
    full.push("--json");
    json_values(&s.read(&full, Some(now)))
}
