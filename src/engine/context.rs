//! What a context block is made of, read across the open scopes: the standing rules a
//! person set, the facts that match the read (all of them, or those relevant to a
//! question, its answer first), and the changes of the last 48 hours that no longer
//! match. The words of the block are the front end's (`front::block`); what it holds is
//! read here, through the same door as every other read ([`Scopes`]).

use std::collections::HashSet;

use super::scopes::ReadAt;
use super::{Clocks, Engine, Narrow, Scopes, SearchRequest};
use crate::core::level::Level;
use crate::core::time::TxTime;
use crate::core::{Tier, Version};
use crate::error::Result;

/// How far back changes are shown as history.
const RECENT_MICROS: i64 = 48 * 3600 * 1_000_000;

/// At most this many facts are considered for a question (best matches first).
const QUERY_CANDIDATES: usize = 100;

/// What a context read asks for.
#[derive(Clone, Debug)]
pub struct ContextRequest {
    /// Only facts relevant to this text (full-text search); all facts when `None`.
    pub query: Option<String>,
    /// The clocks asked, resolved by each scope as it reads.
    pub at: ReadAt,
    /// The block's length budget in characters (at least the rules and a summary).
    pub max_chars: usize,
    /// Only facts of this tier (the standing rules are always shown).
    pub tier: Option<Tier>,
}

impl ContextRequest {
    /// The question, when the read has one (blank text is none).
    pub fn question(&self) -> Option<&str> {
        self.query
            .as_deref()
            .map(str::trim)
            .filter(|q| !q.is_empty())
    }
}

/// The facts and recent changes a block is made of.
#[derive(Clone, Debug)]
pub struct Context {
    /// The clocks the block states: the narrowest scope's, resolved with the read.
    pub at: Clocks,
    /// The standing rules a person set (`rule:` keys, facts tagged `rule`), oldest
    /// first: they open the block whatever the query.
    pub rules: Vec<Version>,
    /// Matching facts, most relevant (query) or most recently recorded (no query) first.
    pub facts: Vec<Version>,
    /// Versions recorded or retracted in the last 48 hours that no longer match the read:
    /// what changed.
    pub history: Vec<Version>,
    /// With several scopes open: each shown version's scope, by its entry's hash (a
    /// line then says its scope). Empty for one workspace.
    pub scopes: Vec<(String, Level)>,
    /// Where this checkout left off (captured sessions, docs/capture.md), as list
    /// lines: they lead the block. Filled by the front end, which knows the checkout.
    pub left_off: Vec<String>,
}

impl Context {
    /// A block of nothing, stating `at`.
    pub fn empty(at: Clocks) -> Context {
        Context {
            at,
            rules: Vec::new(),
            facts: Vec::new(),
            history: Vec::new(),
            scopes: Vec::new(),
            left_off: Vec::new(),
        }
    }
}

/// Whether a version is a standing rule a person set: its key is under `rule:`, or it
/// is tagged `rule`, and no model inferred it (an inferred rule is a fact to confirm,
/// shown with the facts and marked).
fn is_rule(v: &Version) -> bool {
    crate::core::tier::persons_rule(&v.key, &v.tags, v.tier)
}

impl Scopes<'_> {
    /// The facts and recent changes for `req` over every open scope: for each key the
    /// narrowest scope that holds it answers (its rules, facts and history); the wider
    /// scopes' versions of that key are left out, as shadowed. Facts keep each scope's
    /// order, interleaved by rank. Each scope reads at its own `as_of` (the one asked,
    /// else what that scope believes now); the block states the narrowest scope's.
    pub fn context(&mut self, req: &ContextRequest) -> Result<Context> {
        let clocks = self.clocks(req.at)?;
        if !self.stacked() {
            return gather_one(&mut self.layers[0].engine, req, clocks[0]);
        }
        let mut merged = Context::empty(clocks[0]);
        let mut answered: HashSet<String> = HashSet::new();
        let mut ranked: Vec<(usize, Level, Version)> = Vec::new();
        for (layer, &at) in self.layers.iter_mut().zip(&clocks) {
            let ctx = gather_one(&mut layer.engine, req, at)?;
            let level = layer.level;
            let fresh = |v: &Version| !answered.contains(&v.key);
            for v in ctx.rules.iter().filter(|v| fresh(v)) {
                merged.scopes.push((v.source.hash.clone(), level));
                merged.rules.push(v.clone());
            }
            for (rank, v) in ctx.facts.iter().filter(|v| fresh(v)).enumerate() {
                merged.scopes.push((v.source.hash.clone(), level));
                ranked.push((rank, level, v.clone()));
            }
            for v in ctx.history.iter().filter(|v| fresh(v)) {
                merged.scopes.push((v.source.hash.clone(), level));
                merged.history.push(v.clone());
            }
            answered.extend(ctx.facts.iter().chain(&ctx.rules).map(|v| v.key.clone()));
        }
        ranked.sort_by_key(|(rank, level, _)| (*rank, *level));
        merged.facts = ranked.into_iter().map(|(_, _, v)| v).collect();
        Ok(merged)
    }
}

/// Reads the facts and the recent changes for `req` from one scope's index, at `at`.
fn gather_one(engine: &mut Engine, req: &ContextRequest, at: Clocks) -> Result<Context> {
    let mut facts = match req.question() {
        Some(q) => answers_first(engine, q, at)?,
        None => {
            let mut all = engine.list(Narrow::default(), at, None)?;
            // Captured events have their own section ("where this checkout left
            // off"); a query still finds them among the facts.
            all.retain(|v| !crate::capture::is_captured(v));
            all.sort_by(|a, b| b.tx_from.cmp(&a.tx_from).then_with(|| a.key.cmp(&b.key)));
            all
        }
    };
    facts.dedup_by(|a, b| a.source.hash == b.source.hash && a.valid_from == b.valid_from);
    crate::core::many::newest_first_within_keys(&mut facts, |v| v);
    let mut rules: Vec<Version> = engine
        .list(Narrow::default(), at, None)?
        .into_iter()
        .filter(is_rule)
        .collect();
    rules.sort_by(|a, b| a.tx_from.cmp(&b.tx_from).then_with(|| a.key.cmp(&b.key)));
    facts.retain(|v| !is_rule(v) && crate::core::tier::keeps(req.tier, v.tier));
    let since = TxTime::from_micros(at.as_of.micros().saturating_sub(RECENT_MICROS));
    let changed = engine.changed_between(since, at.as_of)?;
    // With a query, only the history of keys the query found.
    let with_query = req.question().is_some();
    let history =
        crate::core::read_rule::history(&changed, &facts, (at.valid_at, at.as_of), with_query)
            .filter(|v| !is_rule(v) && crate::core::tier::keeps(req.tier, v.tier))
            .filter(|v| !crate::capture::is_captured(v))
            .cloned()
            .collect();
    Ok(Context {
        rules,
        facts,
        history,
        ..Context::empty(at)
    })
}

/// The facts for a question, the answer first: the best match of the whole question,
/// then (for a question about several things) the best match of each part in the order
/// asked, then the rest of the whole question's matches. A part's answer is never left
/// to rank below facts that match the question's other words better.
fn answers_first(engine: &mut Engine, q: &str, at: Clocks) -> Result<Vec<Version>> {
    let mut search = |text: &str, limit: usize| -> Result<Vec<Version>> {
        Ok(engine
            .search(&SearchRequest {
                text: text.to_string(),
                raw: false,
                valid_at: at.valid_at,
                as_of: at.as_of,
                tags: Vec::new(),
                key_prefix: None,
                limit,
                mode: Default::default(),
            })?
            .into_iter()
            .map(|h| h.version)
            .collect())
    };
    let whole = search(q, QUERY_CANDIDATES)?;
    let parts = super::question_parts(q);
    if parts.is_empty() {
        return Ok(whole);
    }
    let mut first: Vec<Version> = whole.first().cloned().into_iter().collect();
    for part in &parts {
        if let Some(best) = search(part, 1)?.into_iter().next()
            && !first.iter().any(|v| v.source.hash == best.source.hash)
        {
            first.push(best);
        }
    }
    let rest: Vec<Version> = whole
        .into_iter()
        .filter(|v| !first.iter().any(|f| f.source.hash == v.source.hash))
        .collect();
    first.extend(rest);
    Ok(first)
}
