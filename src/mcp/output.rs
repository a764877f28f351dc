//! What the tools answer (MCP 2025-06-18): `structuredContent`, an object holding what
//! the CLI's `--json` prints (versions, hits, near keys on a miss), declared by each
//! tool's `outputSchema`; and a compact text block for the model, one line per version
//! in the context block's style, without hashes or paths.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use crate::core::Version;
use crate::core::level::Level;
use crate::engine::{Scoped, ScopedHit, SearchHit};
use crate::front::wire;
use crate::text::names::NearKey;

/// A tool's answer: the structured object and the text for the model.
pub struct Out {
    pub structured: Value,
    pub text: String,
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
    let versions_value = wire::versions_value(versions);
    if versions.is_empty() {
        let (said, near) = miss();
        let whys: Vec<String> = near
            .iter()
            .map(|n| crate::front::said::nearness(n.nearness))
            .collect();
        let structured = wire::to_value(&VersionsOut {
            versions: versions_value,
            near_keys: near
                .iter()
                .zip(&whys)
                .map(|(n, why)| wire::SimilarJson::new(&n.key, why))
                .collect(),
        });
        return Out {
            structured,
            text: format!("no record: {said}\n{}", near_text(&near)),
        };
    }
    Out {
        structured: wire::to_value(&VersionsOut {
            versions: versions_value,
            near_keys: Vec::new(),
        }),
        text: versions.iter().map(version_line).collect(),
    }
}

/// recall, list: `{versions, near_keys}`, each version with its `scope` (and
/// `shadowed`); with more than one scope open (`stacked`), each line ends with its scope.
pub fn scoped(
    versions: &[Scoped],
    stacked: bool,
    miss: impl FnOnce() -> (String, Vec<NearKey>),
) -> Out {
    scoped_lines(versions, stacked, miss, version_line)
}

/// [`scoped`] with each version's line made by `line`.
fn scoped_lines(
    versions: &[Scoped],
    stacked: bool,
    miss: impl FnOnce() -> (String, Vec<NearKey>),
    line: fn(&Version) -> String,
) -> Out {
    let plain: Vec<Version> = versions.iter().map(|s| s.version.clone()).collect();
    let mut out = self::versions(&plain, miss);
    if !versions.is_empty() {
        out.structured["versions"] = crate::front::wire::scoped_value(versions);
        out.text = versions
            .iter()
            .map(|s| {
                let line = line(&s.version);
                if !stacked {
                    return line;
                }
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

/// search: `{hits}`, each with its `scope` (and `shadowed`); the text says "no record"
/// when nothing matched, and with more than one scope open each line its scope.
pub fn scoped_hits(hits: &[ScopedHit], stacked: bool, query: &str) -> Out {
    let listed: Vec<(Option<Level>, &SearchHit, bool)> = hits
        .iter()
        .map(|h| (Some(h.level), &h.hit, h.shadowed))
        .collect();
    let structured = wire::to_value(&HitsOut {
        hits: wire::scoped_hits_value(&listed),
    });
    let text = if hits.is_empty() {
        format!("no record: nothing in memory matches {query:?} by words or by meaning\n")
    } else if !stacked {
        hits.iter().map(|h| version_line(&h.hit.version)).collect()
    } else {
        hits.iter()
            .map(|h| {
                format!(
                    "{} · {}{}\n",
                    version_line(&h.hit.version).trim_end(),
                    h.level,
                    if h.shadowed { " (shadowed)" } else { "" }
                )
            })
            .collect()
    };
    Out { structured, text }
}

/// history's lines carry the transaction clock too.
pub fn history(
    versions: &[Scoped],
    stacked: bool,
    miss: impl FnOnce() -> (String, Vec<NearKey>),
) -> Out {
    scoped_lines(versions, stacked, miss, |v| {
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
}

fn version_line(v: &Version) -> String {
    crate::front::block::fact_line(v)
}

/// store: the `store --json` object; the text one line, and the look-alike hint, both
/// from the outcome itself.
pub fn store(
    outcome: &crate::engine::StoreOutcome,
    similar: &[crate::engine::LookAlike],
    scope: Level,
) -> Out {
    use crate::engine::StoreOutcome;
    use crate::front::render::{Reader, look_alike_hint, shorten};
    let (status, v) = match outcome {
        StoreOutcome::Stored { version, .. } => ("stored", version),
        StoreOutcome::Unchanged { version } => ("unchanged", version),
    };
    let valid_to = v
        .valid_to
        .finite()
        .map_or_else(|| "∞".to_string(), |t| t.to_rfc3339());
    let mut text = format!(
        "{status} `{}` = {} · valid {} → {valid_to}\n",
        v.key,
        shorten(&v.value, 200),
        v.valid_from.to_rfc3339(),
    );
    if let Some(hint) = look_alike_hint(&v.key, similar, Reader::Model) {
        text.push_str(&hint);
        text.push('\n');
    }
    let structured = wire::store_value(outcome, similar, Reader::Model, Some(scope));
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

/// rekey: an object, and a text made from it.
pub fn object(structured: Value, text: String) -> Out {
    Out { structured, text }
}

/// context and get: `{text}`, and the text itself.
pub fn text(text: String) -> Out {
    Out {
        structured: wire::to_value(&TextOut { text: &text }),
        text,
    }
}

/// forget: what it closed and where its entry went.
pub fn forget(key: &str, outcome: &crate::engine::ForgetOutcome) -> Out {
    use crate::engine::ForgetOutcome;
    let (status, closed, written) = match outcome {
        ForgetOutcome::Forgotten { closed, source } => (
            ForgetStatus::Forgotten,
            *closed,
            Some(Written {
                file: &source.file,
                line: source.line,
                hash: &source.hash,
            }),
        ),
        ForgetOutcome::NothingBelieved => (ForgetStatus::NothingBelieved, 0, None),
    };
    let text = match status {
        ForgetStatus::Forgotten => format!(
            "forgot `{key}`: {closed} version{} no longer believed\n",
            if closed == 1 { "" } else { "s" }
        ),
        ForgetStatus::NothingBelieved => {
            format!("nothing to forget: no version of `{key}` is believed\n")
        }
    };
    let structured = wire::to_value(&ForgetOut {
        status,
        key,
        closed,
        written,
    });
    Out { structured, text }
}

// ---------------------------------------------------------------------------------------
// Output schemas, derived from the types that write the results: a schema cannot promise
// a field the result lacks. (`versions` and `hits` are values the wire module wrote from
// its own types; `schemars(with)` names those types.)

/// recall, list, history.
#[derive(Serialize, JsonSchema)]
struct VersionsOut<'a> {
    /// The versions that answer.
    #[schemars(with = "Vec<wire::VersionJson<'static>>")]
    versions: Value,
    /// On a miss: existing keys near the one asked for.
    near_keys: Vec<wire::SimilarJson<'a>>,
}

/// search.
#[derive(Serialize, JsonSchema)]
struct HitsOut {
    /// Best first.
    #[schemars(with = "Vec<wire::HitJson<'static>>")]
    hits: Value,
}

/// forget.
#[derive(Serialize, JsonSchema)]
struct ForgetOut<'a> {
    status: ForgetStatus,
    key: &'a str,
    /// How many believed versions it closed.
    closed: usize,
    /// Where the forget entry was written (absent when nothing was believed).
    #[serde(flatten)]
    written: Option<Written<'a>>,
}

#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
enum ForgetStatus {
    Forgotten,
    NothingBelieved,
}

#[derive(Serialize, JsonSchema)]
struct Written<'a> {
    file: &'a str,
    line: u32,
    hash: &'a str,
}

/// context and get: the text as the CLI prints it.
#[derive(Serialize, JsonSchema)]
struct TextOut<'a> {
    text: &'a str,
}

/// recall, list, history.
pub fn versions_schema() -> Arc<rmcp::model::JsonObject> {
    wire::schema::<VersionsOut>()
}

/// search.
pub fn hits_schema() -> Arc<rmcp::model::JsonObject> {
    wire::schema::<HitsOut>()
}

/// store.
pub fn store_schema() -> Arc<rmcp::model::JsonObject> {
    wire::schema::<wire::StoreJson>()
}

/// forget.
pub fn forget_schema() -> Arc<rmcp::model::JsonObject> {
    wire::schema::<ForgetOut>()
}

/// rekey.
pub fn rekey_schema() -> Arc<rmcp::model::JsonObject> {
    wire::schema::<wire::RekeyJson>()
}

/// context and get.
pub fn text_schema() -> Arc<rmcp::model::JsonObject> {
    wire::schema::<TextOut>()
}
