//! The one door for reads across scopes: the workspaces of the stack (local, project,
//! user; see [`crate::core::level`]) that are open, each with its own engine, answered
//! narrowest first. Every front end (the CLI, the MCP tools, the page, the context block
//! and the hooks) reads through [`Scopes`], with one workspace as with three, so a rule
//! of what a request means is written here once.
//!
//! Every temporal rule stays inside one workspace; the scopes only say which workspace
//! answers for a key: the narrowest that holds a matching version. The wider ones'
//! versions of that key are *shadowed*: shown as such, never lost.
//!
//! Opening the workspaces is the front end's part (it knows the environment and whose
//! settings count); a long-running server lends its own engine ([`Held::Lent`]) and the
//! others are opened for the call.

use std::collections::HashSet;
use std::ops::{Deref, DerefMut};

use super::{Clocks, Engine, Narrow, SearchHit, SearchMode, SearchRequest, Window};
use crate::core::Version;
use crate::core::level::Level;
use crate::core::tier::{self, Tier};
use crate::core::time::{TxTime, ValidTime};
use crate::error::{Error, Result};
use crate::text::names::NearKey;

/// The most hits one search returns.
pub const MAX_HITS: usize = 10_000;

/// An engine a [`Layer`] owns, or one lent by a long-running server for one call.
pub enum Held<'a> {
    /// Boxed: an engine is large, and a lent one is a pointer.
    Own(Box<Engine>),
    Lent(&'a mut Engine),
}

impl Deref for Held<'_> {
    type Target = Engine;
    fn deref(&self) -> &Engine {
        match self {
            Held::Own(e) => e,
            Held::Lent(e) => e,
        }
    }
}

impl DerefMut for Held<'_> {
    fn deref_mut(&mut self) -> &mut Engine {
        match self {
            Held::Own(e) => e,
            Held::Lent(e) => e,
        }
    }
}

/// One open scope.
pub struct Layer<'a> {
    pub level: Level,
    pub engine: Held<'a>,
}

/// The open scopes, narrowest first (at least one).
pub struct Scopes<'a> {
    pub layers: Vec<Layer<'a>>,
}

/// A version and the scope it comes from; `shadowed` when a narrower scope answers for
/// its key.
#[derive(Clone, Debug)]
pub struct Scoped {
    pub level: Level,
    pub version: Version,
    pub shadowed: bool,
}

/// A search hit and the scope it comes from; `shadowed` as for [`Scoped`].
#[derive(Clone, Debug)]
pub struct ScopedHit {
    pub level: Level,
    pub hit: SearchHit,
    pub shadowed: bool,
}

/// The clocks a read asks for, before any scope resolves them: each scope resolves
/// them once, as it reads, and the answer states the narrowest scope's
/// ([`Answered::at`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadAt {
    /// The valid time asked about.
    pub valid_at: ValidTime,
    /// The `as_of` asked; `None`: what each scope believes now.
    pub as_of: Option<TxTime>,
    /// This machine's clock, read once for the request.
    pub now: TxTime,
}

/// A read's rows across the scopes, and the clocks its answer states: the narrowest
/// scope's, as resolved for the read itself.
#[derive(Clone, Debug)]
pub struct Answered<T> {
    pub at: Clocks,
    pub rows: Vec<T>,
}

/// Each scope's versions, narrowest first.
type PerScope = Vec<(Level, Vec<Version>)>;

/// What a read of one key or of tags asks, as every front end gives it.
#[derive(Clone, Copy, Debug)]
pub struct Ask<'q> {
    /// The key to recall; `None` reads every key carrying `tags`.
    pub key: Option<&'q str>,
    pub tags: &'q [String],
    pub at: ReadAt,
    pub tier: Option<Tier>,
}

/// What a search asks, as every front end gives it; [`Scopes::search`] adds each
/// scope's clocks.
#[derive(Clone, Debug, Default)]
pub struct Find {
    /// The words (or, with `raw`, tantivy query syntax) to look for.
    pub text: String,
    pub raw: bool,
    /// Only versions carrying every one of these tags.
    pub tags: Vec<String>,
    pub key_prefix: Option<String>,
    /// How many hits, 1 to [`MAX_HITS`].
    pub limit: usize,
    pub mode: SearchMode,
}

impl<'a> Scopes<'a> {
    /// The scopes `layers`, narrowest first; an empty list is a bug of the caller's.
    pub fn new(mut layers: Vec<Layer<'a>>) -> Result<Scopes<'a>> {
        if layers.is_empty() {
            return Err(Error::internal(
                "a read across scopes was asked with no scope open",
                "this is a bug in mem7: please report it",
            ));
        }
        layers.sort_by_key(|l| l.level);
        Ok(Scopes { layers })
    }

    /// One workspace lent by its owner (a server's own, when it is the only scope).
    pub fn lent(level: Level, engine: &'a mut Engine) -> Scopes<'a> {
        Scopes {
            layers: vec![Layer {
                level,
                engine: Held::Lent(engine),
            }],
        }
    }

    /// Whether more than one scope is open (answers then say their scope).
    pub fn stacked(&self) -> bool {
        self.layers.len() > 1
    }

    /// The narrowest open scope's engine: near keys and clocks are told from it.
    pub fn narrowest(&mut self) -> &mut Engine {
        &mut self.layers[0].engine
    }

    /// The engine of `level`, if that scope is open.
    pub fn engine(&mut self, level: Level) -> Option<&mut Engine> {
        self.layers
            .iter_mut()
            .find(|l| l.level == level)
            .map(|l| &mut *l.engine)
    }

    /// The engines, narrowest first.
    pub fn engines(&self) -> impl Iterator<Item = &Engine> {
        self.layers.iter().map(|l| &*l.engine)
    }

    /// Each open scope's answer to a read, narrowest first.
    fn each<T>(
        &mut self,
        mut read: impl FnMut(&mut Engine) -> Result<Vec<T>>,
    ) -> Result<Vec<(Level, Vec<T>)>> {
        self.layers
            .iter_mut()
            .map(|l| Ok((l.level, read(&mut l.engine)?)))
            .collect()
    }

    /// Each open scope's clocks for a read at `at`, narrowest first: each resolved once.
    pub fn clocks(&self, at: ReadAt) -> Result<Vec<Clocks>> {
        self.layers
            .iter()
            .map(|l| l.engine.clocks(at.valid_at, at.as_of, at.now))
            .collect()
    }

    /// Each open scope's versions from `read` at its own clocks (`as_of` resolved once
    /// per scope), of `tier` only, and the narrowest scope's clocks. Filtered before
    /// shadowing: a scope whose versions the filter drops does not answer for the key.
    fn each_at(
        &mut self,
        at: ReadAt,
        tier: Option<Tier>,
        mut read: impl FnMut(&mut Engine, Clocks) -> Result<Vec<Version>>,
    ) -> Result<(Clocks, PerScope)> {
        let clocks = self.clocks(at)?;
        let mut per = Vec::with_capacity(clocks.len());
        for (layer, &at) in self.layers.iter_mut().zip(&clocks) {
            let mut found = read(&mut layer.engine, at)?;
            found.retain(|v| tier::keeps(tier, v.tier));
            per.push((layer.level, found));
        }
        Ok((clocks[0], per))
    }

    /// The versions of `key` matching `at` in every scope: the narrowest scope's first,
    /// then the shadowed ones of wider scopes.
    pub fn recall(
        &mut self,
        key: &str,
        at: ReadAt,
        tier: Option<Tier>,
    ) -> Result<Answered<Scoped>> {
        self.ask(Ask {
            key: Some(key),
            tags: &[],
            at,
            tier,
        })
    }

    /// A read of one key, or of every key carrying the tags: what `recall` asks from
    /// any front end.
    pub fn ask(&mut self, ask: Ask<'_>) -> Result<Answered<Scoped>> {
        match ask.key {
            Some(key) => {
                crate::core::validate::lookup_key(key)?;
                let (at, per) =
                    self.each_at(ask.at, ask.tier, |e, at| e.recall(key, ask.tags, at))?;
                Ok(Answered {
                    at,
                    rows: shadow(per),
                })
            }
            None if ask.tags.is_empty() => Err(Error::input(
                "a recall needs a key or tags",
                "give a key (e.g. project:deploy_target) or tags; a list shows every key",
            )),
            None => self.list((None, ask.tags), ask.at, ask.tier),
        }
    }

    /// The existing keys near `key`, for a read that missed it (the narrowest scope's).
    pub fn near_keys(&mut self, key: &str, now: TxTime) -> Result<Vec<NearKey>> {
        self.narrowest().near_keys(key, now)
    }

    /// Every key's matching versions in every scope, by key; under each key the
    /// answering scope's versions first, then the shadowed ones.
    pub fn list(
        &mut self,
        (prefix, tags): (Option<&str>, &[String]),
        at: ReadAt,
        tier: Option<Tier>,
    ) -> Result<Answered<Scoped>> {
        let (at, per) =
            self.each_at(at, tier, |e, at| e.list(Narrow { prefix, tags }, at, None))?;
        let mut rows = shadow(per);
        // Stable: within a key, the answer (narrowest scope) before the shadowed.
        rows.sort_by(|a, b| a.version.key.cmp(&b.version.key));
        Ok(Answered { at, rows })
    }

    /// [`Scopes::list`]'s rows in `window` only: with one scope open the index reads just
    /// those rows (a page of a large workspace); with several, the window is cut from
    /// the merge.
    pub fn list_window(
        &mut self,
        (prefix, tags): (Option<&str>, &[String]),
        at: ReadAt,
        tier: Option<Tier>,
        window: Window,
    ) -> Result<Answered<Scoped>> {
        if self.stacked() {
            let all = self.list((prefix, tags), at, tier)?;
            return Ok(Answered {
                at: all.at,
                rows: all
                    .rows
                    .into_iter()
                    .skip(window.offset)
                    .take(window.limit)
                    .collect(),
            });
        }
        let (at, per) = self.each_at(at, tier, |e, at| {
            e.list(Narrow { prefix, tags }, at, Some(window))
        })?;
        Ok(Answered {
            at,
            rows: shadow(per),
        })
    }

    /// Every version of `key` in every scope (`as_of`: only those believed then),
    /// narrowest scope first.
    pub fn history(&mut self, key: &str, as_of: Option<TxTime>) -> Result<Vec<Scoped>> {
        crate::core::validate::lookup_key(key)?;
        let per = self.each(|e| e.history(key, as_of))?;
        Ok(per
            .into_iter()
            .flat_map(|(level, versions)| {
                versions.into_iter().map(move |version| Scoped {
                    level,
                    version,
                    shadowed: false,
                })
            })
            .collect())
    }

    /// What a picture of `key` draws: every version of the key in one workspace, the
    /// narrowest scope's that has any (the narrowest scope's, empty, when none has), and
    /// that scope's engine (whose clocks the picture draws).
    pub fn drawn(&mut self, key: &str) -> Result<(&mut Engine, Vec<Version>)> {
        crate::core::validate::lookup_key(key)?;
        let mut at = 0;
        for (i, layer) in self.layers.iter().enumerate() {
            if !layer.engine.history(key, None)?.is_empty() {
                at = i;
                break;
            }
        }
        let engine = &mut *self.layers[at].engine;
        let versions = engine.history(key, None)?;
        Ok((engine, versions))
    }

    /// A search over every open scope (meaning search as each engine has it set): each
    /// scope's hits, one list best first; a hit whose key a narrower scope answers at
    /// the read is shadowed and goes last. Each scope reads at its own clocks, resolved
    /// once for its search and its shadow checks. The request's rules hold for every
    /// front end: some words to look for, and between 1 and [`MAX_HITS`] hits.
    pub fn search(
        &mut self,
        find: &Find,
        at: ReadAt,
        tier: Option<Tier>,
    ) -> Result<Answered<ScopedHit>> {
        if find.text.trim().is_empty() {
            return Err(Error::input(
                "the query is empty",
                "give some words to look for; a list shows every key",
            ));
        }
        let limit = find.limit.clamp(1, MAX_HITS);
        let clocks = self.clocks(at)?;
        let mut found: Vec<ScopedHit> = Vec::new();
        for (layer, &at) in self.layers.iter_mut().zip(&clocks) {
            let req = SearchRequest {
                text: find.text.clone(),
                raw: find.raw,
                valid_at: at.valid_at,
                as_of: at.as_of,
                tags: find.tags.clone(),
                key_prefix: find.key_prefix.clone(),
                limit,
                mode: find.mode,
            };
            for hit in layer.engine.search_tier(&req, tier)? {
                found.push(ScopedHit {
                    level: layer.level,
                    hit,
                    shadowed: false,
                });
            }
        }
        if self.stacked() {
            for found in &mut found {
                let narrower = self.layers.iter().zip(&clocks);
                for (layer, &at) in narrower.take_while(|(l, _)| l.level < found.level) {
                    if !layer
                        .engine
                        .recall(&found.hit.version.key, &[], at)?
                        .is_empty()
                    {
                        found.shadowed = true;
                        break;
                    }
                }
            }
            found.sort_by(|a, b| {
                a.shadowed
                    .cmp(&b.shadowed)
                    .then(b.hit.score.total_cmp(&a.hit.score))
            });
            found.truncate(limit);
        }
        Ok(Answered {
            at: clocks[0],
            rows: found,
        })
    }
}

/// Marks the versions of keys a narrower scope already answered as shadowed; keeps the
/// scopes' order (narrowest first).
pub fn shadow(per_scope: PerScope) -> Vec<Scoped> {
    let mut answered: HashSet<String> = HashSet::new();
    let mut out = Vec::new();
    for (level, versions) in per_scope {
        let here: HashSet<String> = versions.iter().map(|v| v.key.clone()).collect();
        for version in versions {
            let shadowed = answered.contains(&version.key);
            out.push(Scoped {
                level,
                version,
                shadowed,
            });
        }
        answered.extend(here);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::Source;

    fn v(key: &str, value: &str) -> Version {
        Version {
            key: key.into(),
            value: value.into(),
            tags: vec![],
            agent: "t".into(),
            valid_from: ValidTime::from_micros(0),
            valid_to: ValidTime::INFINITY,
            tx_from: TxTime::from_micros(0),
            tx_to: TxTime::INFINITY,
            tier: None,
            source: Source::default(),
        }
    }

    #[test]
    fn the_narrowest_scope_answers_and_wider_ones_are_shadowed() {
        let merged = shadow(vec![
            (Level::Local, vec![]),
            (
                Level::Project,
                vec![v("editor", "vim"), v("ci", "Buildkite")],
            ),
            (Level::User, vec![v("editor", "helix"), v("shell", "fish")]),
        ]);
        let shown: Vec<(&str, Level, bool)> = merged
            .iter()
            .map(|s| (s.version.value.as_str(), s.level, s.shadowed))
            .collect();
        assert_eq!(
            shown,
            [
                ("vim", Level::Project, false),
                ("Buildkite", Level::Project, false),
                ("helix", Level::User, true),
                ("fish", Level::User, false),
            ]
        );
    }
}
