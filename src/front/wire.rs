//! The JSON front ends hand to programs: the wire objects of `--json`, the MCP tools'
//! structured results and `mem7 export`, converted by hand from the domain types. Values
//! (`*_value`) for a front end to place in its own answer, text (`pretty`, `*_json`) for
//! one that prints it. The wire types also derive their JSON Schema: the MCP tools'
//! output schemas are read off the same types that write the values ([`schema`]).

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use crate::core::Version;
use crate::core::level::Level;
use crate::core::tier::Tier;
use crate::core::time::{TxTime, ValidTime};
use crate::engine::Scoped;
use crate::engine::StoreOutcome;
use crate::front::render::{Reader, look_alike_hint};

/// One version on the wire (`--json`).
#[derive(Serialize, JsonSchema)]
pub struct VersionJson<'a> {
    key: &'a str,
    value: &'a str,
    /// RFC 3339, UTC.
    valid_from: String,
    /// null: holds until further notice.
    valid_to: Option<String>,
    /// When mem7 started believing it.
    tx_from: String,
    /// null: still believed.
    tx_to: Option<String>,
    tags: &'a [String],
    agent: &'a str,
    /// asserted: a person stated it; inferred: a model's guess to verify; null: not
    /// recorded.
    tier: Option<TierName>,
    file: &'a str,
    line: u32,
    /// The entry that wrote this value (memory_forget's `entry` takes it).
    hash: &'a str,
    /// The scope (workspace) this version comes from; present when more than one scope
    /// is open or one was asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    scope: Option<ScopeName>,
    /// true: a narrower scope answers for this key; this value is shown, not used.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    shadowed: bool,
}

/// A tier's word on the wire.
#[derive(Clone, Copy, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TierName {
    Asserted,
    Inferred,
}

impl From<Tier> for TierName {
    fn from(t: Tier) -> Self {
        match t {
            Tier::Asserted => TierName::Asserted,
            Tier::Inferred => TierName::Inferred,
        }
    }
}

/// A scope's word on the wire.
#[derive(Clone, Copy, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ScopeName {
    Local,
    Project,
    User,
}

impl From<Level> for ScopeName {
    fn from(l: Level) -> Self {
        match l {
            Level::Local => ScopeName::Local,
            Level::Project => ScopeName::Project,
            Level::User => ScopeName::User,
        }
    }
}

/// The JSON Schema of what `T` writes (JSON Schema 2020-12, every subschema inline so
/// that a reader needs no `$ref`), without the type's own title and description: an
/// MCP tool's `outputSchema`.
pub fn schema<T: JsonSchema>() -> Arc<serde_json::Map<String, Value>> {
    let mut settings = schemars::generate::SchemaSettings::draft2020_12().for_serialize();
    settings.inline_subschemas = true;
    let root = settings.into_generator().into_root_schema_for::<T>();
    let Value::Object(mut map) = root.to_value() else {
        unreachable!("a struct's schema is an object")
    };
    for noise in ["$schema", "title", "description"] {
        map.remove(noise);
    }
    unwrap_descriptions(&mut map);
    drop_nonstandard_formats(&mut map);
    Arc::new(map)
}

/// The `format` words of JSON Schema's own vocabulary; schemars also writes `uint`,
/// `uint32`, `int64`, `double`… for Rust's numbers, which strict clients (Ajv, in Claude
/// Code) warn about on every connection. The type and `minimum` still say it.
const STANDARD_FORMATS: [&str; 19] = [
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// Removes every `format` outside JSON Schema's vocabulary (`STANDARD_FORMATS`), at any depth.
pub fn drop_nonstandard_formats(map: &mut serde_json::Map<String, Value>) {
    if map
        .get("format")
        .and_then(Value::as_str)
        .is_some_and(|f| !STANDARD_FORMATS.contains(&f))
    {
        map.remove("format");
    }
    for value in map.values_mut() {
        match value {
            Value::Object(inner) => drop_nonstandard_formats(inner),
            Value::Array(items) => items.iter_mut().for_each(|v| {
                if let Value::Object(inner) = v {
                    drop_nonstandard_formats(inner);
                }
            }),
            _ => {}
        }
    }
}

/// [`drop_nonstandard_formats`] as a schemars transform, for the tools' argument types
/// (`#[schemars(transform = …)]`), whose schemas rmcp generates.
pub fn standard_formats(schema: &mut schemars::Schema) {
    if let Some(map) = schema.as_object_mut() {
        drop_nonstandard_formats(map);
    }
}

/// Joins the lines of every description: doc comments wrap at the source's width, a
/// reader of the schema should not see where.
fn unwrap_descriptions(map: &mut serde_json::Map<String, Value>) {
    for (name, value) in map.iter_mut() {
        match value {
            Value::String(text) if name == "description" => *text = text.replace('\n', " "),
            Value::Object(inner) => unwrap_descriptions(inner),
            Value::Array(items) => items.iter_mut().for_each(|v| {
                if let Value::Object(inner) = v {
                    unwrap_descriptions(inner);
                }
            }),
            _ => {}
        }
    }
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
        tier: v.tier.map(TierName::from),
        file: &v.source.file,
        line: v.source.line,
        hash: &v.source.hash,
        scope: None,
        shadowed: false,
    }
}

fn scoped_version_json(s: &Scoped) -> VersionJson<'_> {
    VersionJson {
        scope: Some(s.level.into()),
        shadowed: s.shadowed,
        ..version_json(&s.version)
    }
}

/// A wire object as a JSON value, for a front end to print ([`pretty`]) or to place in
/// its own answer (the MCP tools' structured results).
pub fn to_value(wire: &impl Serialize) -> Value {
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

/// What a store did (`store --json`, `memory_store`).
#[derive(Serialize, JsonSchema)]
pub struct StoreJson<'a> {
    status: StoreStatus,
    /// How many believed versions the store closed.
    closed: usize,
    version: VersionJson<'a>,
    /// Existing keys that look like the same slot as a new key.
    similar: Vec<SimilarJson<'a>>,
    /// What to do about them, in words a model acts on (absent when none).
    #[serde(skip_serializing_if = "Option::is_none")]
    hint: Option<String>,
    /// The scope (workspace) the fact was written to (absent where a front end writes
    /// one workspace).
    #[serde(skip_serializing_if = "Option::is_none")]
    scope: Option<ScopeName>,
    /// Present when the tier asked for was above what this workspace lets agents record
    /// (set by the MCP server).
    #[serde(skip_serializing_if = "Option::is_none")]
    tier_note: Option<String>,
}

/// Whether a store wrote an entry.
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum StoreStatus {
    Stored,
    Unchanged,
}

/// An existing key and why it looks like the same slot (or, on a miss, why it is near
/// the key asked for).
#[derive(Serialize, JsonSchema)]
pub struct SimilarJson<'a> {
    key: &'a str,
    why: &'a str,
}

impl<'a> SimilarJson<'a> {
    pub fn new(key: &'a str, why: &'a str) -> Self {
        SimilarJson { key, why }
    }
}

/// The outcome of `store --json` (and of `memory_store`); `similar` are the look-alike
/// slots of a new key.
pub fn store_value(
    outcome: &StoreOutcome,
    similar: &[crate::engine::LookAlike],
    reader: Reader,
    scope: Option<Level>,
) -> Value {
    let whys: Vec<String> = similar.iter().map(|l| super::said::alike(&l.why)).collect();
    let (status, closed, v) = match outcome {
        StoreOutcome::Stored { version, closed } => (StoreStatus::Stored, *closed, version),
        StoreOutcome::Unchanged { version } => (StoreStatus::Unchanged, 0, version),
    };
    to_value(&StoreJson {
        status,
        closed,
        version: VersionJson {
            scope: scope.map(ScopeName::from),
            ..version_json(v)
        },
        similar: similar
            .iter()
            .zip(&whys)
            .map(|(l, why)| SimilarJson { key: &l.key, why })
            .collect(),
        hint: look_alike_hint(&v.key, similar, reader),
        scope: scope.map(ScopeName::from),
        tier_note: None,
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

/// One search hit: a version with how it matched.
#[derive(Serialize, JsonSchema)]
pub struct HitJson<'a> {
    #[serde(flatten)]
    version: VersionJson<'a>,
    /// The fused score (higher is better).
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
                scope: level.map(ScopeName::from),
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

/// What a rekey moved (or would), and what it superseded at the new key.
#[derive(Serialize, JsonSchema)]
pub struct RekeyJson<'a> {
    /// false: a dry run, nothing written.
    written: bool,
    moved: Vec<VersionJson<'a>>,
    superseded: Vec<VersionJson<'a>>,
}

/// `rekey --json` (and `memory_rekey`): what moved (or would), what it superseded; each
/// version with its `scope` when one is given.
pub fn rekey_value(plan: &crate::engine::RekeyPlan, written: bool, scope: Option<Level>) -> Value {
    fn json(v: &crate::core::Version, scope: Option<Level>) -> VersionJson<'_> {
        VersionJson {
            scope: scope.map(ScopeName::from),
            ..version_json(v)
        }
    }
    to_value(&RekeyJson {
        written,
        moved: plan.moved.iter().map(|v| json(v, scope)).collect(),
        superseded: plan.displaced.iter().map(|v| json(v, scope)).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The wire's scope and tier words are the core's (`Level::as_str`, `Tier::as_str`):
    /// the core keeps no serde, so the wire names them again, and this holds the two
    /// together, in the values and in the schemas.
    #[test]
    fn the_wires_scope_and_tier_words_are_the_cores() {
        for level in Level::ALL {
            assert_eq!(to_value(&ScopeName::from(level)), level.as_str());
        }
        for tier in [Tier::Asserted, Tier::Inferred] {
            assert_eq!(to_value(&TierName::from(tier)), tier.as_str());
        }
        let words = |schema: &serde_json::Map<String, Value>| -> Vec<String> {
            let mut w: Vec<String> = schema["enum"]
                .as_array()
                .expect("an enum")
                .iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect();
            w.sort();
            w
        };
        let mut levels: Vec<String> = Level::ALL.iter().map(|l| l.as_str().into()).collect();
        levels.sort();
        assert_eq!(words(&schema::<ScopeName>()), levels);
        assert_eq!(words(&schema::<TierName>()), ["asserted", "inferred"]);
    }
}
