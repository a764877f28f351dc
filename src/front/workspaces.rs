//! The scopes a front end reads and writes: the workspaces of the stack (local, project,
//! user; see [`crate::core::level`]) that exist, each with its own engine, searched
//! narrowest first. Every temporal rule stays inside one workspace; the stack only says
//! which workspace answers for a key: the narrowest that holds a matching version. The
//! wider ones' versions of that key are *shadowed*: shown as such, never lost.

use std::collections::HashSet;
use std::path::Path;

use super::env::Env;
use super::session;
use crate::core::Version;
use crate::core::level::Level;
use crate::core::tier::{self, Tier};
use crate::core::time::{TxTime, ValidTime};
use crate::engine::{Clocks, Engine, Narrow, SearchHit, SearchRequest};
use crate::error::{Error, Result};

/// One open scope.
pub struct Layer {
    pub level: Level,
    pub engine: Engine,
}

/// The open scopes, narrowest first (at least one).
pub struct Stack {
    pub layers: Vec<Layer>,
}

/// A version and the scope it comes from; `shadowed` when a narrower scope answers for
/// its key.
#[derive(Clone, Debug)]
pub struct Scoped {
    pub level: Level,
    pub version: Version,
    pub shadowed: bool,
}

impl Stack {
    /// Opens the scopes whose workspaces exist (only `only`, when given). With none, the
    /// error opening the default workspace gives (`mem7 init` …); `only` naming a scope
    /// without a workspace is an error that says where it would be.
    pub fn open(env: &Env, flag: Option<&Path>, only: Option<Level>) -> Result<Stack> {
        let roots = env.scope_roots(flag);
        if let Some(level) = only {
            let Some((_, root)) = roots.iter().find(|(l, _)| *l == level) else {
                return Err(no_scope_here(level));
            };
            if !crate::store::is_workspace(root) {
                return Err(missing(level, root));
            }
            let engine = session::open_root(env, root)?;
            return Ok(Stack {
                layers: vec![Layer { level, engine }],
            });
        }
        let mut layers = Vec::new();
        for (level, root) in &roots {
            if crate::store::is_workspace(root) {
                layers.push(Layer {
                    level: *level,
                    engine: session::open_root(env, root)?,
                });
            }
        }
        if layers.is_empty() {
            // What a command said before scopes: the default workspace is missing.
            let engine = session::open(env, flag)?;
            let level = roots
                .iter()
                .find(|(_, r)| *r == env.workspace(flag))
                .map_or(Level::User, |(l, _)| *l);
            layers.push(Layer { level, engine });
        }
        Ok(Stack { layers })
    }

    /// The scopes a long-running front end (the MCP tools, the page) reads beside its own
    /// workspace at `root`: `None` when only that workspace exists and no scope was
    /// named (the one-workspace path, exactly as before scopes); else the stack, or the
    /// one scope named.
    pub fn beside(root: &Path, env: &Env, scope: Option<Level>) -> Result<Option<Stack>> {
        let open = env
            .scope_roots(Some(root))
            .iter()
            .filter(|(_, r)| crate::store::is_workspace(r))
            .count();
        if scope.is_none() && open <= 1 {
            return Ok(None);
        }
        Stack::open(env, Some(root), scope).map(Some)
    }

    /// Turns meaning search on in every open scope as the environment and each scope's
    /// settings say (a bad setting: `voice` says so, and that scope searches by words).
    pub fn enable_embeddings(&mut self, env: &Env, voice: super::session::Voice) {
        for layer in &mut self.layers {
            session::try_enable_embeddings(&mut layer.engine, env, voice);
        }
    }

    /// Whether more than one scope is open (answers then say their scope).
    pub fn stacked(&self) -> bool {
        self.layers.len() > 1
    }

    /// The engine of `level`, if that scope is open.
    pub fn engine(&mut self, level: Level) -> Option<&mut Engine> {
        self.layers
            .iter_mut()
            .find(|l| l.level == level)
            .map(|l| &mut l.engine)
    }

    /// Each open scope's answer to a read, narrowest first.
    pub fn each<T>(
        &mut self,
        mut read: impl FnMut(&mut Engine) -> Result<Vec<T>>,
    ) -> Result<Vec<(Level, Vec<T>)>> {
        self.layers
            .iter_mut()
            .map(|l| Ok((l.level, read(&mut l.engine)?)))
            .collect()
    }

    /// Each open scope's versions from `read` at its own clocks (`as_of` resolved per
    /// scope), of `tier` only. Filtered before shadowing: a scope whose versions the
    /// filter drops does not answer for the key.
    fn each_at(
        &mut self,
        (valid_at, as_of): (ValidTime, Option<TxTime>),
        now: TxTime,
        tier: Option<Tier>,
        mut read: impl FnMut(&mut Engine, Clocks) -> Result<Vec<Version>>,
    ) -> Result<Vec<(Level, Vec<Version>)>> {
        self.each(|e| {
            let at = e.clocks(valid_at, as_of, now)?;
            let mut found = read(e, at)?;
            found.retain(|v| tier::keeps(tier, v.tier));
            Ok(found)
        })
    }

    /// The versions of `key` matching (`valid_at`, `as_of`) in every scope: the
    /// narrowest scope's first, then the shadowed ones of wider scopes.
    pub fn recall(
        &mut self,
        key: &str,
        clocks: (ValidTime, Option<TxTime>),
        tier: Option<Tier>,
        now: TxTime,
    ) -> Result<Vec<Scoped>> {
        let per = self.each_at(clocks, now, tier, |e, at| e.recall(key, &[], at))?;
        Ok(shadow(per))
    }

    /// Every key's matching versions in every scope, by key; under each key the
    /// answering scope's versions first, then the shadowed ones.
    pub fn list(
        &mut self,
        (prefix, tags): (Option<&str>, &[String]),
        clocks: (ValidTime, Option<TxTime>),
        tier: Option<Tier>,
        now: TxTime,
    ) -> Result<Vec<Scoped>> {
        let per = self.each_at(clocks, now, tier, |e, at| {
            e.list(Narrow { prefix, tags }, at, None)
        })?;
        let mut all = shadow(per);
        // Stable: within a key, the answer (narrowest scope) before the shadowed.
        all.sort_by(|a, b| a.version.key.cmp(&b.version.key));
        Ok(all)
    }

    /// Every version of `key` in every scope (`as_of`: only those believed then),
    /// narrowest scope first.
    pub fn history(&mut self, key: &str, as_of: Option<TxTime>) -> Result<Vec<Scoped>> {
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
}

impl Stack {
    /// A search over every open scope (meaning search as each engine has it set): each
    /// scope's hits, one list best first; a hit whose key a narrower scope answers at
    /// the read is shadowed and goes last. Each scope reads at its own `as_of`: `asked`,
    /// else what that scope believes now (`req.as_of` is not used).
    pub fn search(
        &mut self,
        (req, asked): (&SearchRequest, Option<TxTime>),
        tier: Option<Tier>,
        now: TxTime,
    ) -> Result<Vec<(Level, SearchHit, bool)>> {
        // Each scope's clocks, resolved once for its search and its shadow checks.
        let clocks: Vec<Clocks> = self
            .layers
            .iter()
            .map(|l| l.engine.clocks(req.valid_at, asked, now))
            .collect::<Result<_>>()?;
        let mut found: Vec<(Level, SearchHit, bool)> = Vec::new();
        for (layer, &at) in self.layers.iter_mut().zip(&clocks) {
            let req = SearchRequest {
                as_of: at.as_of,
                ..req.clone()
            };
            for hit in layer.engine.search_tier(&req, tier)? {
                found.push((layer.level, hit, false));
            }
        }
        if self.stacked() {
            for (level, hit, shadowed) in &mut found {
                let narrower = self.layers.iter().zip(&clocks);
                for (layer, &at) in narrower.take_while(|(l, _)| l.level < *level) {
                    if !layer.engine.recall(&hit.version.key, &[], at)?.is_empty() {
                        *shadowed = true;
                        break;
                    }
                }
            }
            found.sort_by(|a, b| a.2.cmp(&b.2).then(b.1.score.total_cmp(&a.1.score)));
            found.truncate(req.limit);
        }
        Ok(found)
    }
}

/// Marks the versions of keys a narrower scope already answered as shadowed; keeps the
/// scopes' order (narrowest first).
pub fn shadow(per_scope: Vec<(Level, Vec<Version>)>) -> Vec<Scoped> {
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

/// The error for a scope the working directory has none of (local and project outside
/// a project).
pub fn no_scope_here(level: Level) -> Error {
    Error::input(
        format!("there is no {level} scope here: the working directory is in no project workspace"),
        "run mem7 inside a project's workspace (one with a mem7.yaml above the working directory), or name it with --workspace",
    )
}

/// The error for a scope whose workspace does not exist yet.
pub fn missing(level: Level, root: &Path) -> Error {
    Error::input(
        format!(
            "the {level} scope has no workspace yet ({})",
            root.display()
        ),
        format!(
            "create it with `mem7 init {}`, or write to another scope with --scope",
            root.display()
        ),
    )
}

/// Where a write of `key` goes: the scope named (`explicit`), else the one the key's
/// class says (`scopes:` in the project's mem7.yaml, else the user's) when that scope
/// has a workspace, else the project's (the user's outside a project). The local
/// scope's workspace is made on its first write; a named scope's must exist. Returns the scope, its workspace, and whether
/// more than one scope is open (an answer then says its scope).
pub fn write_target(
    env: &Env,
    flag: Option<&Path>,
    key: &str,
    explicit: Option<Level>,
) -> Result<(Level, std::path::PathBuf, bool)> {
    let roots = env.scope_roots(flag);
    let exists = |level: Level| {
        roots
            .iter()
            .any(|(l, r)| *l == level && crate::store::is_workspace(r))
    };
    let level = match explicit {
        Some(level) => level,
        None => {
            let home = env.workspace(flag);
            let config = match super::owners::open(env, &home) {
                Ok(ws) => ws.config().clone(),
                Err(_) => crate::config::Config::default(),
            };
            match config.write_level(key) {
                // The local scope is made on its first write, inside a project.
                Level::Local if roots.iter().any(|(l, _)| *l == Level::Local) => Level::Local,
                // A class's scope without a workspace leaves the write where a write
                // without scopes would go: the project's, else the user's. So one
                // workspace works exactly as before scopes.
                wanted if exists(wanted) => wanted,
                _ if roots.iter().any(|(l, _)| *l == Level::Project) => Level::Project,
                _ => Level::User,
            }
        }
    };
    let Some((_, root)) = roots.iter().find(|(l, _)| *l == level) else {
        return Err(no_scope_here(level));
    };
    if !crate::store::is_workspace(root) {
        match level {
            Level::Local => {
                crate::store::init(root)?;
            }
            // Without any workspace, the error every command gives (`mem7 init` …).
            _ if explicit.is_none()
                && !roots.iter().any(|(_, r)| crate::store::is_workspace(r)) =>
            {
                return Err(Error::NoWorkspace { path: root.clone() });
            }
            _ => return Err(missing(level, root)),
        }
    }
    let open = roots
        .iter()
        .filter(|(_, r)| crate::store::is_workspace(r))
        .count();
    Ok((level, root.clone(), open > 1))
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
