//! Rendering answers as text for people, for every front end: the CLI prints it, the
//! MCP server wraps it (`mcp::output`). The JSON for programs is `front::wire`.

use crate::core::Version;
use crate::core::level::Level;
use crate::engine::Scoped;
use crate::engine::StoreOutcome;

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
        .map(|l| format!("`{}` ({})", l.key, super::said::alike(&l.why)))
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
pub fn near_keys_hint(near: &[crate::text::names::NearKey]) -> Option<String> {
    if near.is_empty() {
        return None;
    }
    let list = near
        .iter()
        .map(|n| format!("{} ({})", n.key, super::said::nearness(n.nearness)))
        .collect::<Vec<_>>()
        .join(", ");
    Some(format!("near keys: {list}"))
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

/// `verify` for people: one line per finding, then a summary and the head.
pub fn verify_human(report: &crate::verify::Report) -> String {
    let mut s = String::new();
    for f in &report.findings {
        let key = if f.key.is_empty() {
            String::new()
        } else {
            format!(" `{}`", f.key)
        };
        let level = if f.is_break() { "" } else { "warning: " };
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
    let breaks = report.findings.iter().filter(|f| f.is_break()).count();
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
    let line = |v: &Version| {
        format!(
            "  {to} = {}  valid {} → {}\n",
            one_line(&v.value),
            v.valid_from,
            v.valid_to
        )
    };
    for v in &plan.moved {
        s.push_str(&line(v));
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
            s.push_str(&line(v));
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
