//! What the tools answer (MCP 2025-06-18): `structuredContent`, an object holding what
//! the CLI's `--json` prints (versions, hits, near keys on a miss), declared by each
//! tool's `outputSchema`; and a compact text block for the model, one line per version
//! in the context block's style, without hashes or paths.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::core::Version;
use crate::core::level::Level;
use crate::core::names::NearKey;
use crate::engine::SearchHit;
use crate::front::stack::Scoped;

/// A tool's answer: the structured object and the text for the model.
pub struct Out {
    pub structured: Value,
    pub text: String,
}

fn near_json(near: &[NearKey]) -> Value {
    Value::Array(
        near.iter()
            .map(|n| json!({"key": n.key, "why": n.nearness.describe()}))
            .collect(),
    )
}

fn near_text(near: &[NearKey]) -> String {
    match crate::front::render::near_keys_hint(near) {
        Some(hint) => format!("{hint}; if one is the fact you mean, ask for it by that key\n"),
        None => String::new(),
    }
}

/// recall, list, history: `{versions, near_keys}`. `miss` is what to say when there is
/// no version (and the keys near the one asked for).
pub fn versions(versions: &[Version], miss: impl FnOnce() -> (String, Vec<NearKey>)) -> Out {
    let mut structured = json!({
        "versions": crate::front::wire::versions_value(versions),
        "near_keys": [],
    });
    if versions.is_empty() {
        let (said, near) = miss();
        structured["near_keys"] = near_json(&near);
        return Out {
            structured,
            text: format!("no record: {said}\n{}", near_text(&near)),
        };
    }
    Out {
        structured,
        text: versions.iter().map(version_line).collect(),
    }
}

/// Gives every version of a result (`versions`, `hits`, `moved`, `superseded`, a
/// store's `version`) and a store's result a `scope`, `level` where none says one yet
/// (the versions of the server's own workspace).
pub fn tag_scope(structured: &mut Value, level: Level) {
    let tag = |v: &mut Value| {
        if let Value::Object(map) = v {
            map.entry("scope")
                .or_insert_with(|| Value::String(level.as_str().into()));
        }
    };
    for list in ["versions", "hits", "moved", "superseded"] {
        if let Some(Value::Array(items)) = structured.get_mut(list) {
            items.iter_mut().for_each(tag);
        }
    }
    if let Some(version) = structured.get_mut("version") {
        tag(version);
        tag(structured);
    }
}

/// recall, list, history over several scopes: `{versions, near_keys}`, each version with
/// its `scope` (and `shadowed`); each line ends with its scope.
pub fn scoped(versions: &[Scoped], miss: impl FnOnce() -> (String, Vec<NearKey>)) -> Out {
    let plain: Vec<Version> = versions.iter().map(|s| s.version.clone()).collect();
    let mut out = self::versions(&plain, miss);
    if !versions.is_empty() {
        out.structured["versions"] = crate::front::wire::scoped_value(versions);
        out.text = versions
            .iter()
            .map(|s| {
                let line = version_line(&s.version);
                let shadowed = if s.shadowed {
                    " (shadowed: a narrower scope answers)"
                } else {
                    ""
                };
                format!("{} · {}{shadowed}\n", line.trim_end(), s.level)
            })
            .collect();
    }
    out
}

/// search over several scopes: `{hits}`, each with its `scope` (and `shadowed`).
pub fn scoped_hits(hits: &[(Level, SearchHit, bool)], query: &str) -> Out {
    let listed: Vec<(Option<Level>, &SearchHit, bool)> =
        hits.iter().map(|(l, h, s)| (Some(*l), h, *s)).collect();
    let structured = json!({ "hits": crate::front::wire::scoped_hits_value(&listed) });
    let text = if hits.is_empty() {
        format!("no record: nothing in memory matches {query:?} by words or by meaning\n")
    } else {
        hits.iter()
            .map(|(level, h, shadowed)| {
                format!(
                    "{} · {level}{}\n",
                    version_line(&h.version).trim_end(),
                    if *shadowed { " (shadowed)" } else { "" }
                )
            })
            .collect()
    };
    Out { structured, text }
}

/// history's lines carry the transaction clock too.
pub fn history(versions: &[Version], miss: impl FnOnce() -> (String, Vec<NearKey>)) -> Out {
    let mut out = self::versions(versions, miss);
    if !versions.is_empty() {
        out.text = versions
            .iter()
            .map(|v| {
                let line = version_line(v);
                let believed = if v.tx_to.is_infinite() {
                    format!(
                        "believed since {}",
                        crate::front::block::when(v.tx_from.micros())
                    )
                } else {
                    format!(
                        "believed {} → {}",
                        crate::front::block::when(v.tx_from.micros()),
                        crate::front::block::when(v.tx_to.micros())
                    )
                };
                format!("{} · {believed}\n", line.trim_end())
            })
            .collect();
    }
    out
}

fn version_line(v: &Version) -> String {
    crate::front::block::fact_line(v)
}

/// search: `{hits}`; the text says "no record" when nothing matched.
pub fn hits(hits: &[SearchHit], query: &str) -> Out {
    let structured = json!({ "hits": crate::front::wire::hits_value(hits) });
    let text = if hits.is_empty() {
        format!("no record: nothing in memory matches {query:?} by words or by meaning\n")
    } else {
        hits.iter().map(|h| version_line(&h.version)).collect()
    };
    Out { structured, text }
}

/// store: the `store --json` object; the text one line, and the look-alike hint.
pub fn store(structured: Value) -> Out {
    let v = &structured["version"];
    let mut text = format!(
        "{} `{}` = {} · valid {} → {}\n",
        structured["status"].as_str().unwrap_or_default(),
        v["key"].as_str().unwrap_or_default(),
        crate::front::render::shorten(v["value"].as_str().unwrap_or_default(), 200),
        v["valid_from"].as_str().unwrap_or_default(),
        v["valid_to"].as_str().unwrap_or("∞"),
    );
    if let Some(hint) = structured["hint"].as_str() {
        text.push_str(hint);
        text.push('\n');
    }
    Out { structured, text }
}

impl Out {
    /// Adds `field` to the structured result and its text as a line of its own.
    pub fn note(&mut self, field: &str, text: String) {
        self.text.push_str(&text);
        self.text.push('\n');
        if let Value::Object(map) = &mut self.structured {
            map.insert(field.to_string(), Value::String(text));
        }
    }
}

/// forget, rekey and the context block: an object, and a text made from it.
pub fn object(structured: Value, text: String) -> Out {
    Out { structured, text }
}

// ---------------------------------------------------------------------------------------
// Output schemas.

fn version_schema() -> Value {
    json!({
        "type": "object",
        "required": ["key", "value", "valid_from", "valid_to", "tx_from", "tx_to", "tags", "agent", "tier", "file", "line", "hash"],
        "properties": {
            "key": {"type": "string"},
            "value": {"type": "string"},
            "valid_from": {"type": "string", "description": "RFC 3339, UTC"},
            "valid_to": {"type": ["string", "null"], "description": "null: holds until further notice"},
            "tx_from": {"type": "string", "description": "when mem7 started believing it"},
            "tx_to": {"type": ["string", "null"], "description": "null: still believed"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "agent": {"type": "string"},
            "tier": {"type": ["string", "null"], "enum": ["asserted", "inferred", null], "description": "asserted: a person stated it; inferred: a model's guess to verify; null: not recorded"},
            "file": {"type": "string"},
            "line": {"type": "integer"},
            "hash": {"type": "string", "description": "the entry that wrote this value (memory_forget's `entry` takes it)"},
            "scope": {"type": "string", "enum": ["local", "project", "user"], "description": "the scope (workspace) this version comes from; present when more than one scope is open or one was asked for"},
            "shadowed": {"type": "boolean", "description": "true: a narrower scope answers for this key; this value is shown, not used"}
        }
    })
}

fn near_schema() -> Value {
    json!({
        "type": "array",
        "description": "on a miss: existing keys near the one asked for",
        "items": {
            "type": "object",
            "required": ["key", "why"],
            "properties": {"key": {"type": "string"}, "why": {"type": "string"}}
        }
    })
}

fn object_schema(schema: Value) -> Arc<rmcp::model::JsonObject> {
    match schema {
        Value::Object(map) => Arc::new(map),
        _ => Arc::new(Default::default()),
    }
}

/// recall, list, history.
pub fn versions_schema() -> Arc<rmcp::model::JsonObject> {
    object_schema(json!({
        "type": "object",
        "required": ["versions", "near_keys"],
        "properties": {
            "versions": {"type": "array", "items": version_schema()},
            "near_keys": near_schema()
        }
    }))
}

/// search.
pub fn hits_schema() -> Arc<rmcp::model::JsonObject> {
    let mut hit = version_schema();
    hit["properties"]["score"] = json!({"type": "number"});
    hit["properties"]["snippet"] = json!({"type": "string"});
    hit["properties"]["lexical_rank"] = json!({"type": "integer"});
    hit["properties"]["semantic_rank"] = json!({"type": "integer"});
    hit["properties"]["similarity"] = json!({"type": "number"});
    object_schema(json!({
        "type": "object",
        "required": ["hits"],
        "properties": {"hits": {"type": "array", "items": hit}}
    }))
}

/// store.
pub fn store_schema() -> Arc<rmcp::model::JsonObject> {
    object_schema(json!({
        "type": "object",
        "required": ["status", "closed", "version", "similar"],
        "properties": {
            "status": {"type": "string", "enum": ["stored", "unchanged"]},
            "closed": {"type": "integer"},
            "version": version_schema(),
            "similar": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["key", "why"],
                    "properties": {"key": {"type": "string"}, "why": {"type": "string"}}
                }
            },
            "hint": {"type": "string"},
            "scope": {"type": "string", "enum": ["local", "project", "user"], "description": "the scope (workspace) the fact was written to"},
            "tier_note": {"type": "string", "description": "present when the tier asked for was above what this workspace lets agents record"}
        }
    }))
}

/// forget.
pub fn forget_schema() -> Arc<rmcp::model::JsonObject> {
    object_schema(json!({
        "type": "object",
        "required": ["status", "key", "closed"],
        "properties": {
            "status": {"type": "string", "enum": ["forgotten", "nothing-believed"]},
            "key": {"type": "string"},
            "closed": {"type": "integer"},
            "file": {"type": "string"},
            "line": {"type": "integer"},
            "hash": {"type": "string"}
        }
    }))
}

/// rekey.
pub fn rekey_schema() -> Arc<rmcp::model::JsonObject> {
    object_schema(json!({
        "type": "object",
        "required": ["written", "moved", "superseded"],
        "properties": {
            "written": {"type": "boolean"},
            "moved": {"type": "array", "items": version_schema()},
            "superseded": {"type": "array", "items": version_schema()}
        }
    }))
}

/// context and get: the text as the CLI prints it.
pub fn text_schema() -> Arc<rmcp::model::JsonObject> {
    object_schema(json!({
        "type": "object",
        "required": ["text"],
        "properties": {"text": {"type": "string"}}
    }))
}
