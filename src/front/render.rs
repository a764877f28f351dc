//! Rendering versions for people (text) and programs (JSON), for both front ends: the
//! CLI prints it, the MCP server wraps it (`mcp::output`), `export` streams it. The JSON
//! objects are wire types, converted by hand from the domain types.

use serde::Serialize;
use serde_json::Value;

use crate::core::Version;
use crate::core::level::Level;
use crate::core::time::{TxTime, ValidTime};
use crate::engine::StoreOutcome;
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

/// Versions with their scopes as text blocks; the scope is said only when more than one
/// is open (`stacked`), so one workspace reads as it always did.
pub fn scoped_human(versions: &[Scoped], stacked: bool) -> String {
    versions
        .iter()
        .map(|s| {
            let mut text = version_human(&s.version);
            if stacked {
                text.push_str(&match s.shadowed {
                    false => format!("  Scope: {}\n", s.level),
                    true => format!(
                        "  Scope: {} (shadowed: a narrower scope answers)\n",
                        s.level
                    ),
                });
            }
            text
        })
        .collect::<Vec<_>>()
        .join("\n")
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
    if let Some(tier) = v.tier {
        source.push_str(&format!(" · {tier}"));
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

/// Who reads a store's advice: a person at the command line, or a model over MCP (which
/// acts through tools, not commands).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reader {
    Person,
    Model,
}

/// The advice for a new key beside look-alike slots: which key to use, and how to move
/// what was just stored there (`rekey`).
pub fn look_alike_hint(
    key: &str,
    similar: &[crate::engine::LookAlike],
    reader: Reader,
) -> Option<String> {
    let first = similar.first()?;
    let list = similar
        .iter()
        .map(|l| format!("`{}` ({})", l.key, l.why))
        .collect::<Vec<_>>()
        .join(", ");
    let to = &first.key;
    let how = match reader {
        Reader::Person => format!("`mem7 rekey {key} {to}`"),
        Reader::Model => format!("call `memory_rekey` with from `{key}` and to `{to}`"),
    };
    Some(format!(
        "`{key}` is a new key, and {list} look{} like the same slot. \
         If this is the same fact as `{to}`, use `{to}` from now on: {how} moves what \
         was just stored there and forgets `{key}`.",
        if similar.len() == 1 { "s" } else { "" },
    ))
}

/// The line a read that found nothing adds when keys near the one asked for exist.
pub fn near_keys_hint(near: &[crate::core::names::NearKey]) -> Option<String> {
    if near.is_empty() {
        return None;
    }
    let list = near
        .iter()
        .map(|n| format!("{} ({})", n.key, n.nearness.describe()))
        .collect::<Vec<_>>()
        .join(", ");
    Some(format!("near keys: {list}"))
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

/// The outcome of `store` for people.
pub fn store_human(outcome: &StoreOutcome, similar: &[crate::engine::LookAlike]) -> String {
    let text = match outcome {
        StoreOutcome::Stored { version: v, .. } => format!(
            "stored {} ({}:{})\n  Valid: {} → {}\n",
            v.key, v.source.file, v.source.line, v.valid_from, v.valid_to
        ),
        StoreOutcome::Unchanged { version: v } => format!(
            "unchanged: {} holds since {} (nothing written)\n  Valid: {} → {}\n",
            v.key, v.valid_from, v.valid_from, v.valid_to
        ),
    };
    let key = match outcome {
        StoreOutcome::Stored { version, .. } | StoreOutcome::Unchanged { version } => &version.key,
    };
    match look_alike_hint(key, similar, Reader::Person) {
        Some(hint) => format!("{text}  note: {hint}\n"),
        None => text,
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

/// A snippet with its matches marked: bold on a terminal, `**…**` elsewhere.
fn highlight(snippet: &str, ranges: &[std::ops::Range<usize>], terminal: bool) -> String {
    let (open, close) = if terminal {
        ("\x1b[1m", "\x1b[0m")
    } else {
        ("**", "**")
    };
    let mut out = String::with_capacity(snippet.len() + ranges.len() * 8);
    let mut at = 0;
    for r in ranges {
        if r.start < at
            || r.end > snippet.len()
            || !snippet.is_char_boundary(r.start)
            || !snippet.is_char_boundary(r.end)
        {
            continue;
        }
        out.push_str(&snippet[at..r.start]);
        out.push_str(open);
        out.push_str(&snippet[r.clone()]);
        out.push_str(close);
        at = r.end;
    }
    out.push_str(&snippet[at..]);
    out.replace('\n', " ")
}

/// `search` for people: key and score, the snippet, the validity.
pub fn hits_human(hits: &[crate::engine::SearchHit], terminal: bool) -> String {
    let plain: Vec<_> = hits.iter().map(|h| (None, h, false)).collect();
    scoped_hits_human(&plain, terminal)
}

/// [`hits_human`] with each hit's scope (`[user]`, `[user, shadowed]`) ending its first
/// line, for the hits that have one.
pub fn scoped_hits_human(
    hits: &[(Option<Level>, &crate::engine::SearchHit, bool)],
    terminal: bool,
) -> String {
    let mut s = String::new();
    for (i, &(level, h, shadowed)) in hits.iter().enumerate() {
        if i > 0 {
            s.push('\n');
        }
        let v = &h.version;
        let mut why = Vec::new();
        if let Some(r) = h.lexical_rank {
            why.push(format!("words #{r}"));
        }
        if let Some(r) = h.semantic_rank {
            why.push(format!("meaning #{r}"));
        }
        let score = if why.is_empty() {
            format!("score {:.2}", h.score)
        } else {
            format!("score {:.3}: {}", h.score, why.join(", "))
        };
        let scope = match level {
            Some(l) if shadowed => format!("  [{l}, shadowed]"),
            Some(l) => format!("  [{l}]"),
            None => String::new(),
        };
        s.push_str(&format!("{}  ({score}){scope}\n", v.key));
        let snippet = if h.snippet.is_empty() {
            v.value.lines().next().unwrap_or("").to_string()
        } else {
            highlight(&h.snippet, &h.highlights, terminal)
        };
        s.push_str(&format!("  {snippet}\n"));
        s.push_str(&format!("  Valid: {} → {}\n", v.valid_from, v.valid_to));
    }
    s
}

/// `timeline` for people: one line per version, on the chosen clock.
pub fn timeline_human(versions: &[Version], by_tx: bool) -> String {
    let mut s = String::new();
    for v in versions {
        let when = if by_tx {
            v.tx_from.to_rfc3339()
        } else {
            v.valid_from.to_rfc3339()
        };
        let first = v.value.lines().next().unwrap_or("");
        let more = if v.value.contains('\n') { " …" } else { "" };
        s.push_str(&format!("{when}  {} = {first}{more}\n", v.key));
        s.push_str(&format!("  Valid: {} → {}", v.valid_from, v.valid_to));
        if by_tx && !v.tx_to.is_infinite() {
            s.push_str(&format!("  (believed until {})", v.tx_to));
        }
        s.push('\n');
    }
    s
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

/// `rekey` for people: one line per moved and superseded version.
pub fn rekey_human(from: &str, to: &str, plan: &crate::engine::RekeyPlan, written: bool) -> String {
    let mut s = format!(
        "{} {} version{} of {from} to {to}{}\n",
        if written { "moved" } else { "would move" },
        plan.moved.len(),
        if plan.moved.len() == 1 { "" } else { "s" },
        if written {
            ", then forgot "
        } else {
            ", then forget "
        }
        .to_string()
            + from
    );
    for v in &plan.moved {
        s.push_str(&format!(
            "  {} = {}  valid {} → {}\n",
            to,
            one_line(&v.value),
            v.valid_from,
            v.valid_to
        ));
    }
    if plan.displaced.is_empty() {
        s.push_str(&format!("{to} held nothing over those periods\n"));
    } else {
        s.push_str(&format!(
            "{to} held, and {} over those periods:\n",
            if written {
                "no longer holds"
            } else {
                "would no longer hold"
            }
        ));
        for v in &plan.displaced {
            s.push_str(&format!(
                "  {} = {}  valid {} → {}\n",
                to,
                one_line(&v.value),
                v.valid_from,
                v.valid_to
            ));
        }
    }
    if !written {
        s.push_str("nothing written (--dry-run)\n");
    }
    s
}

fn one_line(value: &str) -> String {
    shorten(value, 80)
}

/// The value on one line, cut to `max` characters with an ellipsis.
pub fn shorten(value: &str, max: usize) -> String {
    let one_line: String = value
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let one_line = one_line.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() <= max {
        return one_line;
    }
    let mut cut: String = one_line.chars().take(max.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use super::shorten;

    #[test]
    fn shorten_cuts_on_characters() {
        assert_eq!(shorten("héllo wörld", 5), "héll…");
        assert_eq!(shorten("a\nb", 5), "a b");
    }
}
