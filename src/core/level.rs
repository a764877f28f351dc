//! Scopes: where a fact applies, as a stack of workspaces searched narrowest first, the
//! way git reads its config levels (worktree, local, global). `local` is this checkout
//! or machine (never synced), `project` the project's workspace (shared through its
//! repository), `user` the person's own (everywhere they work).
//!
//! Which scope a write goes to when none is named is decided here, from the key alone
//! and the patterns of `mem7.yaml`'s `scopes:` (see [`write_level`]).

use std::fmt;

/// One scope of the stack.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    /// This checkout or machine: `.mem7/local` inside the project workspace, never synced.
    Local,
    /// The project's workspace, shared through the project's git.
    Project,
    /// The person's workspace, everywhere they work.
    User,
}

impl Level {
    /// Every scope, narrowest first: the order reads search them in.
    pub const ALL: [Level; 3] = [Level::Local, Level::Project, Level::User];

    /// The word in flags, tool arguments, JSON and `mem7.yaml`.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Local => "local",
            Level::Project => "project",
            Level::User => "user",
        }
    }

    /// Reads the word; `None` for anything else.
    pub fn parse(text: &str) -> Option<Level> {
        Level::ALL.into_iter().find(|l| l.as_str() == text)
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Keys written to the user scope when `scopes.user` names none.
pub const DEFAULT_USER_KEYS: [&str; 2] = ["user:*", "pref:*"];

/// Keys written to the local scope when `scopes.local` names none.
pub const DEFAULT_LOCAL_KEYS: [&str; 1] = ["local:*"];

/// The scope a write of `key` goes to when the writer names none: `local` for keys
/// matching `local` patterns, `user` for `user` patterns, else `project`.
pub fn write_level(key: &str, user: &[String], local: &[String]) -> Level {
    if super::pattern::any(local, key) {
        Level::Local
    } else if super::pattern::any(user, key) {
        Level::User
    } else {
        Level::Project
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_go_to_their_class_scope() {
        let user: Vec<String> = DEFAULT_USER_KEYS.iter().map(|s| s.to_string()).collect();
        let local: Vec<String> = DEFAULT_LOCAL_KEYS.iter().map(|s| s.to_string()).collect();
        assert_eq!(write_level("user:editor", &user, &local), Level::User);
        assert_eq!(write_level("pref:shell", &user, &local), Level::User);
        assert_eq!(write_level("local:branch", &user, &local), Level::Local);
        assert_eq!(write_level("deploy:target", &user, &local), Level::Project);
        assert_eq!(write_level("users:count", &user, &local), Level::Project);
        for l in Level::ALL {
            assert_eq!(Level::parse(l.as_str()), Some(l));
        }
        assert!(Level::Local < Level::Project && Level::Project < Level::User);
    }
}
