//! Which workspaces a command opens, and where a write goes: the scopes of the stack
//! (local, project, user; see [`crate::core::level`]) found from the environment, each
//! opened with the settings whose owner counts ([`super::owners`]). What a read means
//! across them is the engine's ([`crate::engine::Scopes`]).

use std::path::Path;

use super::env::Env;
use super::session;
use crate::core::level::Level;
use crate::engine::{Engine, Held, Layer, Scopes};
use crate::error::{Error, Result};

/// Opens the scopes whose workspaces exist (only `only`, when given). With none, the
/// error opening the default workspace gives (`mem7 init` …); `only` naming a scope
/// without a workspace is an error that says where it would be.
pub fn open(env: &Env, flag: Option<&Path>, only: Option<Level>) -> Result<Scopes<'static>> {
    let roots = env.scope_roots(flag);
    if let Some(level) = only {
        let Some((_, root)) = roots.iter().find(|(l, _)| *l == level) else {
            return Err(no_scope_here(level));
        };
        if !crate::store::is_workspace(root) {
            return Err(missing(level, root));
        }
        let engine = session::open_root(env, root)?;
        return Scopes::new(vec![Layer {
            level,
            engine: Held::Own(Box::new(engine)),
        }]);
    }
    let mut layers = Vec::new();
    for (level, root) in &roots {
        if crate::store::is_workspace(root) {
            layers.push(Layer {
                level: *level,
                engine: Held::Own(Box::new(session::open_root(env, root)?)),
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
        layers.push(Layer {
            level,
            engine: Held::Own(Box::new(engine)),
        });
    }
    Scopes::new(layers)
}

/// The scope of the workspace at `root`: the one whose root it is, else the user's.
pub fn level_of(env: &Env, root: &Path) -> Level {
    env.scope_roots(Some(root))
        .into_iter()
        .find(|(_, r)| r == root)
        .map_or(Level::User, |(level, _)| level)
}

/// The scopes a long-running front end (the MCP tools, the page) reads around its own
/// workspace's `engine`, which it lends: every scope whose workspace exists, or only the
/// one `scope` names.
pub fn around<'a>(engine: &'a mut Engine, env: &Env, scope: Option<Level>) -> Result<Scopes<'a>> {
    let root = engine.workspace().root().to_path_buf();
    let own = level_of(env, &root);
    if scope.is_some_and(|s| s != own) {
        return open(env, Some(&root), scope);
    }
    let mut layers = vec![Layer {
        level: own,
        engine: Held::Lent(engine),
    }];
    if scope.is_none() {
        for (level, other) in env.scope_roots(Some(&root)) {
            if level != own && other != root && crate::store::is_workspace(&other) {
                layers.push(Layer {
                    level,
                    engine: Held::Own(Box::new(session::open_root(env, &other)?)),
                });
            }
        }
    }
    Scopes::new(layers)
}

/// Turns meaning search on in every open scope as the environment and each scope's
/// settings say (a bad setting: `voice` says so, and that scope searches by words).
pub fn enable_embeddings(scopes: &mut Scopes<'_>, env: &Env, voice: session::Voice) {
    for layer in &mut scopes.layers {
        session::try_enable_embeddings(&mut layer.engine, env, voice);
    }
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

/// Where a write goes: found before the request is checked, made (a local scope's first
/// write creates its workspace) only after it passed ([`Target::ready`]).
#[derive(Clone, Debug)]
pub struct Target {
    pub level: Level,
    pub root: std::path::PathBuf,
    /// More than one scope is open (an answer then says its scope).
    pub stacked: bool,
    /// The workspace does not exist yet: the local scope's, made on its first write.
    pub unmade: bool,
}

impl Target {
    /// Makes the workspace if it is the local scope's first write, after every check
    /// passed: a refused request leaves no `.mem7/local/` behind.
    pub fn ready(&self) -> Result<()> {
        if self.unmade && !crate::store::is_workspace(&self.root) {
            crate::store::init(&self.root)?;
        }
        Ok(())
    }

    /// The settings a write to this target is checked against: its workspace's, whose
    /// owner counts; a local scope not made yet has the defaults it will be made with.
    pub fn config(&self, env: &Env) -> Result<crate::config::Config> {
        if self.unmade {
            return Ok(crate::config::Config::default());
        }
        Ok(super::owners::open(env, &self.root)?.config().clone())
    }
}

/// Where a write of `key` goes: the scope named (`explicit`), else the one the key's
/// class says (`scopes:` in the project's mem7.yaml, else the user's) when that scope
/// has a workspace, else the project's (the user's outside a project). The local
/// scope's workspace is made on its first write ([`Target::ready`]); a named scope's
/// must exist.
pub fn write_target(
    env: &Env,
    flag: Option<&Path>,
    key: &str,
    explicit: Option<Level>,
) -> Result<Target> {
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
    let made = crate::store::is_workspace(root);
    if !made {
        match level {
            Level::Local => {}
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
    Ok(Target {
        level,
        root: root.clone(),
        // The local scope's first write opens one more.
        stacked: open + usize::from(!made) > 1,
        unmade: !made,
    })
}
