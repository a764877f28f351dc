//! The context block's words: a compact markdown summary of memory for an agent's first
//! turn (`mem7 context`, the `memory_context` tool). What it holds is read by
//! [`crate::engine::Scopes::context`]: the facts that match the read (all of them, or
//! those relevant to a query), the changes of the last 48 hours, and the standing rules a
//! person set (keys under `rule:`, or tagged `rule`), which open every block whatever the
//! query. This module fits them in a character budget, with the rules for reading it.

use crate::core::time::TxTime;
use crate::core::{Tier, Version};
use crate::engine::{Context, ContextRequest};

/// The default character budget of a block.
pub const DEFAULT_MAX_CHARS: usize = 6000;

/// Values longer than this are cut in the block (the full value is a `recall` away).
const MAX_VALUE_CHARS: usize = 400;

/// An instant for people: the date alone at midnight UTC, else to the second.
pub(crate) fn when(micros: i64) -> String {
    if micros == i64::MAX {
        return "∞".to_string();
    }
    match chrono::DateTime::from_timestamp_micros(micros) {
        Some(t) if t.timestamp() % 86_400 == 0 && t.timestamp_subsec_micros() == 0 => {
            t.format("%Y-%m-%d").to_string()
        }
        Some(t) => t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        None => micros.to_string(),
    }
}

/// A value on one line of the block: later lines indented, long values cut.
fn value_text(value: &str) -> String {
    let mut text: String = value.chars().take(MAX_VALUE_CHARS).collect();
    if text.len() < value.len() {
        text.push_str(" … (cut; recall the key for the whole value)");
    }
    text.replace('\n', "\n  ")
}

/// One fact on one line, as the block and the MCP tools' compact text show it.
pub(crate) fn fact_line(v: &Version) -> String {
    let mut line = format!(
        "- `{}` = {} · valid {} → {}",
        v.key,
        value_text(&v.value),
        when(v.valid_from.micros()),
        when(v.valid_to.micros())
    );
    if !v.tags.is_empty() {
        line.push_str(&format!(" · tags {}", v.tags.join(", ")));
    }
    if v.tier == Some(Tier::Inferred) {
        line.push_str(" · inferred");
    }
    line.push('\n');
    line
}

/// A standing rule on one line, in the person's own words.
fn rule_line(v: &Version) -> String {
    format!("- {}\n", value_text(&v.value))
}

fn history_line(v: &Version, as_of: TxTime) -> String {
    let why = if v.tx_to <= as_of {
        format!("no longer believed since {}", when(v.tx_to.micros()))
    } else {
        format!("changed {}", when(v.tx_from.micros()))
    };
    format!(
        "- [history] `{}` was {} · held {} → {} · {why}\n",
        v.key,
        value_text(&v.value),
        when(v.valid_from.micros()),
        when(v.valid_to.micros())
    )
}

const RULES: &str = "Rules for reading this block:\n\
- The user's current message overrides anything here.\n\
- When facts conflict, the one with the newest `valid` start wins.\n\
- Lines marked [history] are no longer true; they show what changed recently.\n\
- This block is the whole result of this memory read; do not assume facts that are not in it.\n";

/// The title of the section that leads a block with captured sessions.
const LEFT_OFF_TITLE: &str = "### Where this checkout left off (captured by hooks)\n";

/// Said when the block shows a fact a model inferred.
const INFERRED_RULE: &str = "- Facts marked `inferred` were concluded by a model, not stated by the user: treat them as guesses and confirm them before relying on them.\n";

/// Said when the block shows a key with several values.
const MANY_RULE: &str = "- A key listed with several values (events, decisions) keeps every one: they add up, and none replaces another.\n";

/// Said when the block opens with the person's standing rules.
const STANDING_RULE: &str = "- Follow the rules under \"Rules you set\" in every answer: the user wrote them for every session.\n";

/// Renders the block within `req.max_chars` (the header and rules always fit).
pub fn render(ctx: &Context, req: &ContextRequest) -> String {
    let mut rules = RULES.to_string();
    if !ctx.rules.is_empty() {
        rules.push_str(STANDING_RULE);
    }
    if ctx
        .facts
        .iter()
        .chain(&ctx.rules)
        .any(|v| v.tier == Some(Tier::Inferred))
    {
        rules.push_str(INFERRED_RULE);
    }
    if ctx
        .facts
        .iter()
        .enumerate()
        .any(|(i, v)| ctx.facts[..i].iter().any(|f| f.key == v.key))
    {
        rules.push_str(MANY_RULE);
    }
    let mut out = format!(
        "## mem7 memory (valid at {}, as known at {})\n\n{rules}\n",
        when(ctx.at.valid_at.micros()),
        when(ctx.at.as_of.micros())
    );
    if !ctx.left_off.is_empty() {
        out.push_str(LEFT_OFF_TITLE);
        for line in &ctx.left_off {
            out.push_str(line);
            out.push('\n');
        }
        out.push('\n');
    }
    if ctx.facts.is_empty() && ctx.history.is_empty() && ctx.rules.is_empty() {
        match req.question() {
            Some(q) => out.push_str(&format!(
                "No memories match \"{q}\" at this time: no record, by words or by meaning.\n"
            )),
            _ if !ctx.left_off.is_empty() => {
                out.push_str("No other memories: mem7 holds no stored facts for this time.\n")
            }
            _ => out.push_str("No memories: mem7 holds no facts for this time (no record).\n"),
        }
        return out;
    }
    let budget = req.max_chars.max(out.chars().count() + 200);
    // Room kept for the line that says what did not fit.
    let reserve = 120;
    let mut used = out.chars().count();
    let mut body = String::new();
    // With several scopes, each line ends with the scope it comes from.
    let scoped = |v: &Version, line: String| match ctx
        .scopes
        .iter()
        .find(|(hash, _)| *hash == v.source.hash)
    {
        Some((_, level)) => format!("{} · {level}\n", line.trim_end_matches('\n')),
        None => line,
    };
    let mut sections: [(String, Vec<String>); 3] = [
        (
            format!("### Rules you set ({})\n", ctx.rules.len()),
            ctx.rules.iter().map(|v| scoped(v, rule_line(v))).collect(),
        ),
        (
            format!("### Facts ({})\n", ctx.facts.len()),
            ctx.facts.iter().map(|v| scoped(v, fact_line(v))).collect(),
        ),
        (
            format!("### Changes in the last 48 hours ({})\n", ctx.history.len()),
            ctx.history
                .iter()
                .map(|v| scoped(v, history_line(v, ctx.at.as_of)))
                .collect(),
        ),
    ];
    if ctx.facts.is_empty() {
        sections[1].1.push("- (no facts match)\n".to_string());
    }
    let mut left_out = 0;
    for (title, lines) in &sections {
        if lines.is_empty() {
            continue;
        }
        let title_len = title.chars().count() + 1;
        if used + title_len + reserve > budget {
            left_out += lines.len();
            continue;
        }
        body.push_str(title);
        used += title_len;
        for line in lines {
            let n = line.chars().count();
            if used + n + reserve > budget {
                left_out += 1;
                continue;
            }
            body.push_str(line);
            used += n;
        }
        body.push('\n');
    }
    out.push_str(&body);
    if left_out > 0 {
        out.push_str(&format!(
            "({left_out} more line{} did not fit in {} characters; search or list memory for them.)\n",
            if left_out == 1 { "" } else { "s" },
            req.max_chars
        ));
    }
    out
}

/// The block in the shape of Claude Code's SessionStart hook output.
pub fn claude_code_hook(block: &str) -> String {
    let mut s = serde_json::json!({
        "hookSpecificOutput": {
            "hookEventName": "SessionStart",
            "additionalContext": block,
        }
    })
    .to_string();
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::Source;
    use crate::core::time::ValidTime;
    use crate::engine::{Clocks, ReadAt};

    fn version(key: &str, value: &str, from: &str, to: i64) -> Version {
        Version {
            key: key.into(),
            value: value.into(),
            tags: vec![],
            agent: "t".into(),
            valid_from: ValidTime::parse(from).unwrap(),
            valid_to: ValidTime::from_micros(to),
            tx_from: TxTime::parse(from).unwrap(),
            tx_to: TxTime::INFINITY,
            tier: None,
            source: Source {
                file: "memory/2026-01-01.md".into(),
                line: 1,
                hash: key.into(),
            },
        }
    }

    fn req(max_chars: usize) -> ContextRequest {
        let as_of = TxTime::parse("2026-05-01").unwrap();
        ContextRequest {
            query: None,
            at: ReadAt {
                valid_at: ValidTime::parse("2026-05-01").unwrap(),
                as_of: Some(as_of),
                now: as_of,
            },
            max_chars,
            tier: None,
        }
    }

    /// A block of nothing at 2026-05-01.
    fn blank() -> Context {
        Context::empty(Clocks {
            valid_at: ValidTime::parse("2026-05-01").unwrap(),
            as_of: TxTime::parse("2026-05-01").unwrap(),
        })
    }

    #[test]
    fn empty_block_says_no_memories() {
        let block = render(&blank(), &req(DEFAULT_MAX_CHARS));
        assert!(block.contains("No memories"), "{block}");
        assert!(block.contains("overrides"), "{block}");
    }

    #[test]
    fn budget_cuts_facts_and_says_how_many() {
        let facts: Vec<Version> = (0..100)
            .map(|i| version(&format!("k{i}"), "some value here", "2026-04-01", i64::MAX))
            .collect();
        let ctx = Context { facts, ..blank() };
        let block = render(&ctx, &req(1500));
        assert!(block.chars().count() <= 1500, "{}", block.chars().count());
        assert!(block.contains("`k0` = some value here · valid 2026-04-01 → ∞"));
        let shown = block.matches("\n- `k").count();
        assert!(shown > 0 && shown < 100);
        assert!(
            block.contains(&format!("({} more lines did not fit", 100 - shown)),
            "{block}"
        );
    }

    #[test]
    fn standing_rules_open_the_block_and_inferred_facts_are_marked() {
        let mut guess = version("user:editor", "helix", "2026-04-01", i64::MAX);
        guess.tier = Some(Tier::Inferred);
        let ctx = Context {
            rules: vec![version(
                "rule:commits",
                "start commits with the ticket key",
                "2026-04-01",
                i64::MAX,
            )],
            facts: vec![
                guess,
                version("ci:provider", "Buildkite", "2026-04-01", i64::MAX),
            ],
            ..blank()
        };
        let block = render(&ctx, &req(DEFAULT_MAX_CHARS));
        let rules_at = block.find("### Rules you set (1)\n- start commits with the ticket key\n");
        let facts_at = block.find("### Facts (2)");
        assert!(rules_at.is_some() && rules_at < facts_at, "{block}");
        assert!(
            block.contains("`user:editor` = helix · valid 2026-04-01 → ∞ · inferred\n"),
            "{block}"
        );
        assert!(
            block.contains("`ci:provider` = Buildkite · valid 2026-04-01 → ∞\n"),
            "{block}"
        );
        assert!(
            block.contains(INFERRED_RULE) && block.contains(STANDING_RULE),
            "{block}"
        );
        assert!(!block.contains(MANY_RULE), "{block}");
        // Without inferred facts or rules, the reading rules are as they always were.
        let plain = render(
            &Context {
                facts: vec![version("ci:provider", "Buildkite", "2026-04-01", i64::MAX)],
                ..blank()
            },
            &req(DEFAULT_MAX_CHARS),
        );
        assert!(plain.contains(&format!("{RULES}\n### Facts")), "{plain}");
    }

    #[test]
    fn the_rules_fit_before_the_facts_in_a_small_budget() {
        let facts: Vec<Version> = (0..100)
            .map(|i| version(&format!("k{i}"), "some value here", "2026-04-01", i64::MAX))
            .collect();
        let ctx = Context {
            rules: vec![version(
                "rule:short",
                "answers of five lines at most",
                "2026-04-01",
                i64::MAX,
            )],
            facts,
            ..blank()
        };
        let block = render(&ctx, &req(900));
        assert!(
            block.contains("- answers of five lines at most\n"),
            "{block}"
        );
        assert!(block.chars().count() <= 900, "{}", block.chars().count());
    }
}
