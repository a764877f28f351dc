//! Opening a workspace with its settings: the file read, hashed (what an approval
//! names), and counted as far as its owner lets it ([`Config::owned`]).

use std::fs;
use std::path::Path;

use super::{CONFIG_FILE, Workspace, is_workspace};
use crate::config::Config;
use crate::error::{Error, Result};

/// Whose word a workspace's `mem7.yaml` is, for [`Workspace::open_as`].
pub enum Owner<'a> {
    /// The user's own workspace: the file is the user's own settings.
    Own,
    /// Any other (a project's, a checkout's): the file counts as far as
    /// [`Config::owned`] lets it against the user's own settings `user`, and widens only
    /// when `approved` says the user approved that content (its hash) on this machine.
    Project {
        user: &'a Config,
        approved: &'a dyn Fn(&str) -> bool,
    },
}

/// The hash an approval of a `mem7.yaml` names: blake3 of its bytes, in hex.
pub fn settings_hash(bytes: &[u8]) -> String {
    blake3::hash(bytes).to_hex().to_string()
}

impl Workspace {
    /// Opens the workspace at `root`, its settings taken as an unapproved project's
    /// against the default settings: what does not know whose workspace it opens trusts
    /// it least. Front ends open with [`Workspace::open_as`].
    pub fn open(root: &Path) -> Result<Workspace> {
        let user = Config::default();
        Workspace::open_as(
            root,
            &Owner::Project {
                user: &user,
                approved: &|_| false,
            },
        )
    }

    /// Opens the workspace at `root`, its `mem7.yaml` counting as `owner` says.
    pub fn open_as(root: &Path, owner: &Owner<'_>) -> Result<Workspace> {
        if !is_workspace(root) {
            return Err(Error::NoWorkspace {
                path: root.to_path_buf(),
            });
        }
        let config_path = root.join(CONFIG_FILE);
        let (file, settings_hash) = match fs::read(&config_path) {
            Ok(bytes) => {
                let text = String::from_utf8_lossy(&bytes);
                let config = Config::parse(&text).map_err(|e| {
                    Error::input(
                        format!("{}: {e}", config_path.display()),
                        "fix the YAML in mem7.yaml (every setting is optional; an empty file is fine)",
                    )
                })?;
                (config, settings_hash(&bytes))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                (Config::default(), String::new())
            }
            Err(e) => return Err(Error::io(config_path, e)),
        };
        let (mut config, standing, ignored) = match owner {
            Owner::Own => (file, crate::config::Standing::Own, Vec::new()),
            Owner::Project { user, approved } => {
                let approved = !settings_hash.is_empty() && approved(&settings_hash);
                let (config, ignored) = Config::owned(&file, user, approved);
                let standing = if approved {
                    crate::config::Standing::Approved
                } else {
                    crate::config::Standing::Unapproved
                };
                (config, standing, ignored)
            }
        };
        // A relative `model_dir` is the workspace's word about a place near it: relative
        // to the workspace, never to wherever a command happens to run.
        if let Some(dir) = &config.embeddings.model_dir
            && dir.is_relative()
        {
            config.embeddings.model_dir = Some(root.join(dir));
        }
        Ok(Workspace {
            root: root.to_path_buf(),
            config,
            settings_hash,
            standing,
            ignored,
            waits: true,
        })
    }

    /// The hash of `mem7.yaml` as read (what an approval names); empty without one.
    pub fn settings_hash(&self) -> &str {
        &self.settings_hash
    }

    /// Whose word the settings are.
    pub fn standing(&self) -> &crate::config::Standing {
        &self.standing
    }

    /// What `mem7.yaml` widens that took no effect, because it is unapproved.
    pub fn ignored_settings(&self) -> &[crate::config::Ignored] {
        &self.ignored
    }
}
