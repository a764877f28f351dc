//! The JSON front ends hand to programs: the wire objects of `--json`, the MCP tools'
//! structured results and `mem7 export`, converted by hand from the domain types. Values
//! (`*_value`) for a front end to place in its own answer, text (`pretty`, `*_json`) for
//! one that prints it.

use serde::Serialize;
use serde_json::Value;

use crate::core::Version;
use crate::core::level::Level;
use crate::core::time::{TxTime, ValidTime};
use crate::engine::StoreOutcome;
use crate::front::render::{Reader, look_alike_hint};
use crate::front::stack::Scoped;

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
    /// `asserted`, `inferred`, or null when the entry names no tier.
    tier: Option<&'static str>,
    file: &'a str,
    line: u32,
    hash: &'a str,
    /// The scope that answered (`local`, `project`, `user`); absent where a front end
    /// reads one workspace.
    #[serde(skip_serializing_if = "Option::is_none")]
    scope: Option<&'static str>,
    /// True when a narrower scope answers for this key (absent otherwise).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    shadowed: bool,
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
        tier: v.tier.map(|t| t.as_str()),
        file: &v.source.file,
        line: v.source.line,
        hash: &v.source.hash,
        scope: None,
        shadowed: false,
    }
}

fn scoped_version_json(s: &Scoped) -> VersionJson<'_> {
    VersionJson {
        scope: Some(s.level.as_str()),
        shadowed: s.shadowed,
        ..version_json(&s.version)
    }
}

/// A wire object as a JSON value, for a front end to print ([`pretty`]) or to place in
/// its own answer (the MCP tools' structured results).
fn to_value(wire: &impl Serialize) -> Value {
    // The wire types hold strings, numbers, booleans and lists of them, under string
    // keys: nothing serde_json can refuse.
    serde_json::to_value(wire).expect("wire types always serialise")
}

/// A JSON value as pretty text, newline-terminated (what `--json` prints).
pub fn pretty(value: &Value) -> String {
    let mut s = serde_json::to_string_pretty(value).expect("a JSON value always prints");
    s.push('\n');
    s
}

/// Versions with their scopes as a JSON array.
pub fn scoped_value(versions: &[Scoped]) -> Value {
    to_value(&versions.iter().map(scoped_version_json).collect::<Vec<_>>())
}

/// A JSON array of versions with their scopes, newline-terminated.
pub fn scoped_json(versions: &[Scoped]) -> String {
    pretty(&scoped_value(versions))
}

/// One version with its scope as one line of JSON (what `mem7 export` writes),
/// newline-terminated.
pub fn scoped_json_line(s: &Scoped) -> String {
    let mut line = serde_json::to_string(&scoped_version_json(s)).unwrap_or_else(|_| "{}".into());
    line.push('\n');
    line
}

/// Versions as a JSON array.
pub fn versions_value(versions: &[Version]) -> Value {
    to_value(&versions.iter().map(version_json).collect::<Vec<_>>())
}

/// A JSON array of versions, newline-terminated.
pub fn versions_json(versions: &[Version]) -> String {
    pretty(&versions_value(versions))
}

/// One version as one line of JSON (the objects of `versions_json`), newline-terminated:
/// `mem7 export` writes these.
pub fn version_json_line(v: &Version) -> String {
    let mut s = serde_json::to_string(&version_json(v)).unwrap_or_else(|_| "{}".into());
    s.push('\n');
    s
}

#[derive(Serialize)]
struct StoreJson<'a> {
    status: &'static str,
    closed: usize,
    version: VersionJson<'a>,
    /// Existing keys that look like the same slot as a new key.
    similar: Vec<SimilarJson<'a>>,
    /// What to do about them, in words a model acts on (absent when none).
    #[serde(skip_serializing_if = "Option::is_none")]
    hint: Option<String>,
    /// The scope written to (absent where a front end writes one workspace).
    #[serde(skip_serializing_if = "Option::is_none")]
    scope: Option<&'static str>,
}

#[derive(Serialize)]
struct SimilarJson<'a> {
    key: &'a str,
    why: &'a str,
}

/// The outcome of `store --json` (and of `memory_store`); `similar` are the look-alike
/// slots of a new key.
pub fn store_value(
    outcome: &StoreOutcome,
    similar: &[crate::engine::LookAlike],
    reader: Reader,
    scope: Option<Level>,
) -> Value {
    let (status, closed, v) = match outcome {
        StoreOutcome::Stored { version, closed } => ("stored", *closed, version),
        StoreOutcome::Unchanged { version } => ("unchanged", 0, version),
    };
    to_value(&StoreJson {
        status,
        closed,
        version: version_json(v),
        similar: similar
            .iter()
            .map(|l| SimilarJson {
                key: &l.key,
                why: &l.why,
            })
            .collect(),
        hint: look_alike_hint(&v.key, similar, reader),
        scope: scope.map(Level::as_str),
    })
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
            kind: f.kind.name(),
            severity: if f.is_break() { "error" } else { "warning" },
            message: &f.message,
        })
        .collect();
    let mut s = serde_json::to_string_pretty(&items).unwrap_or_else(|_| "[]".into());
    s.push('\n');
    s
}

#[derive(Serialize)]
struct HitJson<'a> {
    #[serde(flatten)]
    version: VersionJson<'a>,
    score: f32,
    snippet: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    lexical_rank: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    semantic_rank: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    similarity: Option<f32>,
}

/// `search --json`: versions with their score and snippet, best first.
pub fn hits_value(hits: &[crate::engine::SearchHit]) -> Value {
    scoped_hits_value(&hits.iter().map(|h| (None, h, false)).collect::<Vec<_>>())
}

/// [`hits_value`] with each hit's scope (and whether it is shadowed).
pub fn scoped_hits_value(hits: &[(Option<Level>, &crate::engine::SearchHit, bool)]) -> Value {
    let items: Vec<HitJson<'_>> = hits
        .iter()
        .map(|&(level, h, shadowed)| HitJson {
            version: VersionJson {
                scope: level.map(Level::as_str),
                shadowed,
                ..version_json(&h.version)
            },
            score: h.score,
            snippet: &h.snippet,
            lexical_rank: h.lexical_rank,
            semantic_rank: h.semantic_rank,
            similarity: h.similarity,
        })
        .collect();
    to_value(&items)
}

/// `rekey --json` (and `memory_rekey`): what moved (or would), what it superseded.
pub fn rekey_value(plan: &crate::engine::RekeyPlan, written: bool) -> Value {
    let moved: Vec<_> = plan.moved.iter().map(version_json).collect();
    let superseded: Vec<_> = plan.displaced.iter().map(version_json).collect();
    serde_json::json!({
        "written": written,
        "moved": to_value(&moved),
        "superseded": to_value(&superseded),
    })
}
