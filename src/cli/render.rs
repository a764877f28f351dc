//! Rendering versions for people (text) and programs (JSON). The JSON objects are wire
//! types, converted by hand from the domain types.

use serde::Serialize;

use crate::core::Version;
use crate::core::time::{TxTime, ValidTime};
use crate::engine::StoreOutcome;

/// One version on the wire (`--json`).
#[derive(Serialize)]
struct VersionJson<'a> {
    key: &'a str,
    value: &'a str,
    valid_from: String,
    valid_to: Option<String>,
    tx_from: String,
    tx_to: Option<String>,
    tags: &'a [String],
    agent: &'a str,
    file: &'a str,
    line: u32,
    hash: &'a str,
}

fn finite_valid(t: ValidTime) -> Option<String> {
    t.finite().map(|t| t.to_rfc3339())
}

fn finite_tx(t: TxTime) -> Option<String> {
    t.finite().map(|t| t.to_rfc3339())
}

fn version_json(v: &Version) -> VersionJson<'_> {
    VersionJson {
        key: &v.key,
        value: &v.value,
        valid_from: v.valid_from.to_rfc3339(),
        valid_to: finite_valid(v.valid_to),
        tx_from: v.tx_from.to_rfc3339(),
        tx_to: finite_tx(v.tx_to),
        tags: &v.tags,
        agent: &v.agent,
        file: &v.source.file,
        line: v.source.line,
        hash: &v.source.hash,
    }
}

/// A JSON array of versions, newline-terminated.
pub fn versions_json(versions: &[Version]) -> String {
    let items: Vec<VersionJson<'_>> = versions.iter().map(version_json).collect();
    let mut s = serde_json::to_string_pretty(&items).unwrap_or_else(|_| "[]".into());
    s.push('\n');
    s
}

/// One version as a block of text.
pub fn version_human(v: &Version) -> String {
    let mut s = String::new();
    if v.value.contains('\n') || v.value.is_empty() {
        s.push_str(&v.key);
        s.push_str(" =\n");
        for line in v.value.split('\n') {
            s.push_str("  | ");
            s.push_str(line);
            s.push('\n');
        }
    } else {
        s.push_str(&format!("{} = {}\n", v.key, v.value));
    }
    s.push_str(&format!("  Valid: {} → {}\n", v.valid_from, v.valid_to));
    s.push_str(&format!("  Recorded: {} → {}", v.tx_from, v.tx_to));
    if !v.tx_to.is_infinite() {
        s.push_str(" (no longer believed)");
    }
    s.push('\n');
    let mut source = format!(
        "  Source: {}:{} · agent {}",
        v.source.file, v.source.line, v.agent
    );
    if !v.tags.is_empty() {
        source.push_str(&format!(" · tags {}", v.tags.join(", ")));
    }
    s.push_str(&source);
    s.push('\n');
    s
}

/// Versions as text blocks separated by blank lines.
pub fn versions_human(versions: &[Version]) -> String {
    versions
        .iter()
        .map(version_human)
        .collect::<Vec<_>>()
        .join("\n")
}

#[derive(Serialize)]
struct StoreJson<'a> {
    status: &'static str,
    closed: usize,
    version: VersionJson<'a>,
}

/// The outcome of `store --json`.
pub fn store_json(outcome: &StoreOutcome) -> String {
    let (status, closed, v) = match outcome {
        StoreOutcome::Stored { version, closed } => ("stored", *closed, version),
        StoreOutcome::Unchanged { version } => ("unchanged", 0, version),
    };
    let mut s = serde_json::to_string_pretty(&StoreJson {
        status,
        closed,
        version: version_json(v),
    })
    .unwrap_or_default();
    s.push('\n');
    s
}

/// The outcome of `store` for people.
pub fn store_human(outcome: &StoreOutcome) -> String {
    match outcome {
        StoreOutcome::Stored { version: v, .. } => format!(
            "stored {} ({}:{})\n  Valid: {} → {}\n",
            v.key, v.source.file, v.source.line, v.valid_from, v.valid_to
        ),
        StoreOutcome::Unchanged { version: v } => format!(
            "unchanged: {} holds since {} (nothing written)\n  Valid: {} → {}\n",
            v.key, v.valid_from, v.valid_from, v.valid_to
        ),
    }
}

#[derive(Serialize)]
struct FindingJson<'a> {
    file: &'a str,
    line: u32,
    key: &'a str,
    kind: &'a str,
    severity: &'static str,
    message: &'a str,
}

/// `verify --json`: the findings as a JSON array (empty when clean).
pub fn verify_json(report: &crate::verify::Report) -> String {
    let items: Vec<FindingJson<'_>> = report
        .findings
        .iter()
        .map(|f| FindingJson {
            file: &f.file,
            line: f.line,
            key: &f.key,
            kind: f.kind,
            severity: if f.is_break { "error" } else { "warning" },
            message: &f.message,
        })
        .collect();
    let mut s = serde_json::to_string_pretty(&items).unwrap_or_else(|_| "[]".into());
    s.push('\n');
    s
}

/// `verify` for people: one line per finding, then a summary and the head.
pub fn verify_human(report: &crate::verify::Report) -> String {
    let mut s = String::new();
    for f in &report.findings {
        let key = if f.key.is_empty() {
            String::new()
        } else {
            format!(" `{}`", f.key)
        };
        let level = if f.is_break { "" } else { "warning: " };
        s.push_str(&format!(
            "{}:{}:{key} {level}{}: {}\n",
            f.file, f.line, f.kind, f.message
        ));
    }
    s.push_str(&verify_summary(report));
    s
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The summary line and the head.
pub fn verify_summary(report: &crate::verify::Report) -> String {
    let breaks = report.findings.iter().filter(|f| f.is_break).count();
    let warnings = report.findings.len() - breaks;
    let mut s = format!(
        "{}: {} in {}, {}, {}\n",
        if breaks == 0 { "verified" } else { "BROKEN" },
        plural(report.entries, "entry", "entries"),
        plural(report.files, "file", "files"),
        plural(breaks, "problem", "problems"),
        plural(warnings, "warning", "warnings"),
    );
    match report.head {
        Some(h) => s.push_str(&format!("head {h}\n")),
        None => s.push_str("head (empty: no entries)\n"),
    }
    s
}
