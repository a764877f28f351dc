//! The library's error type and the one funnel from a failure to what a front end says:
//! every failure names the problem and, where there is one, the fix, and is of one of two
//! kinds — the request or the user's setup is wrong ([`Kind::Input`]: exit 2, a tool
//! error the model can act on, HTTP 400) or mem7's own machinery failed
//! ([`Kind::Internal`]: exit 3, a tool error that says so, HTTP 500). An internal failure
//! is never reported as bad input.
//!
//! The modules' own error types ([`crate::core::validate::Invalid`],
//! [`crate::core::time::TimeError`], rusqlite's and tantivy's) convert into [`Error`] by
//! kind; code that meets a failure picks the variant that says whose it is.

use std::io;
use std::path::PathBuf;

/// Whose failure it is: it decides the exit code, the tool error's wording and the HTTP
/// status.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// The request, a flag, a setting, a file the user named or a service the user set up
    /// (the embedding model or provider) is wrong or missing; the user can fix it.
    Input,
    /// mem7's own machinery failed (the index database, the full-text index, reading or
    /// writing the workspace's files, a thread, git doing what it cannot fail to do) — not
    /// the request.
    Internal,
}

/// Exit code of a command whose request was wrong ([`Kind::Input`]).
pub const EXIT_INPUT: u8 = 2;
/// Exit code of a command that failed for a reason inside mem7 ([`Kind::Internal`]).
pub const EXIT_INTERNAL: u8 = 3;

/// A failure of a mem7 operation.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The request itself is wrong (bad time, bad key, value too large, …).
    #[error("{problem}")]
    Input {
        problem: String,
        hint: Option<String>,
    },

    /// A field bound for a memory file looks like a credential (refused before anything
    /// is written). Its fix depends on the front end: the CLI can allow it explicitly, an
    /// MCP client cannot; see [`Error::hint`].
    #[error(
        "the {what} looks like a credential ({kind}); mem7 refuses to write secrets into files that may be pushed to git"
    )]
    Credential { what: String, kind: &'static str },

    /// There is no workspace where one was expected.
    #[error("no mem7 workspace at {}", path.display())]
    NoWorkspace { path: PathBuf },

    /// A memory file holds an unresolved git merge conflict.
    #[error(
        "{file}:{line}: unresolved git merge conflict; mem7 does not read conflicted files as memory"
    )]
    Conflict { file: String, line: u32 },

    /// Reading or writing a file of the workspace (or the process's own streams) failed.
    /// A file the user named is [`Error::named_file`], an input error.
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },

    /// The index database failed in a way a rebuild did not cure.
    #[error("index database: {0}")]
    Index(#[from] rusqlite::Error),

    /// The full-text index (tantivy) failed.
    #[error("full-text index at {}: {message}", dir.display())]
    FullText { dir: PathBuf, message: String },

    /// The embedding model or provider failed (not loadable, not reachable, a bad answer):
    /// the user's setup to fix, so an input error (exit 2), with what to check.
    #[error("{problem}")]
    Embedding { problem: String, hint: String },

    /// Something mem7 relies on (git, a thread, the runtime) failed, or mem7 broke one of
    /// its own rules: a bug to report.
    #[error("{problem}")]
    Internal { problem: String, hint: String },
}

impl Error {
    /// An input error with a remedy.
    pub fn input(problem: impl Into<String>, hint: impl Into<String>) -> Self {
        Error::Input {
            problem: problem.into(),
            hint: Some(hint.into()),
        }
    }

    /// An I/O error on `path`, a file of the workspace or a stream of the process.
    pub fn io(path: impl Into<PathBuf>, source: io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }

    /// An I/O error on a file or folder the user named (an argument, `-o FILE`): their
    /// input, so exit 2.
    pub fn named_file(path: impl Into<PathBuf>, source: io::Error) -> Self {
        let path = path.into();
        let hint = match source.kind() {
            io::ErrorKind::NotFound => "check the path: it does not exist",
            io::ErrorKind::PermissionDenied => "check the path's permissions",
            io::ErrorKind::IsADirectory => "name a file, not a folder",
            _ => "check the path",
        };
        Error::input(format!("{}: {source}", path.display()), hint)
    }

    /// What a scoped thread returned, or, when it panicked, an internal error naming it
    /// (`what`: "a verify thread"): the one way mem7's worker threads are joined.
    pub fn joined<T>(
        handle: std::thread::ScopedJoinHandle<'_, Result<T>>,
        what: &str,
    ) -> Result<T> {
        handle.join().unwrap_or_else(|_| {
            Err(Error::internal(
                format!("{what} panicked"),
                "report this as a bug",
            ))
        })
    }

    /// A failure inside mem7 or a tool it runs.
    pub fn internal(problem: impl Into<String>, hint: impl Into<String>) -> Self {
        Error::Internal {
            problem: problem.into(),
            hint: hint.into(),
        }
    }

    /// A failure of the embedding model or provider.
    pub fn embedding(problem: impl Into<String>, hint: impl Into<String>) -> Self {
        Error::Embedding {
            problem: problem.into(),
            hint: hint.into(),
        }
    }

    /// A failure of the full-text index in `dir`.
    pub fn full_text(dir: impl Into<PathBuf>, message: impl std::fmt::Display) -> Self {
        Error::FullText {
            dir: dir.into(),
            message: message.to_string(),
        }
    }

    /// Whose failure it is.
    pub fn kind(&self) -> Kind {
        match self {
            Error::Input { .. }
            | Error::Credential { .. }
            | Error::NoWorkspace { .. }
            | Error::Conflict { .. }
            | Error::Embedding { .. } => Kind::Input,
            Error::Io { .. }
            | Error::Index(_)
            | Error::FullText { .. }
            | Error::Internal { .. } => Kind::Internal,
        }
    }

    /// The CLI's exit code for this failure.
    pub fn exit_code(&self) -> u8 {
        match self.kind() {
            Kind::Input => EXIT_INPUT,
            Kind::Internal => EXIT_INTERNAL,
        }
    }

    /// What the user can do about it.
    pub fn hint(&self) -> Option<String> {
        match self {
            Error::Input { hint, .. } => hint.clone(),
            Error::Credential { .. } => Some(
                "keep the secret in a secret manager and store where to find it instead (\"the deploy token is in 1Password under 'deploy'\")".into(),
            ),
            Error::NoWorkspace { .. } => Some(
                "`mem7 init` creates it (without a folder, init creates the workspace commands look for), or point to another with --workspace DIR or MEM7_WORKSPACE".into(),
            ),
            Error::Conflict { .. } => Some(
                "resolve the conflict in git: memory files are append-only, so keep the entries of both sides \
                 and delete the <<<<<<<, ======= and >>>>>>> lines (the workspace's .gitattributes sets \
                 merge=union, which avoids such conflicts)"
                    .into(),
            ),
            Error::Io { .. } => None,
            Error::Index(_) | Error::FullText { .. } => {
                Some("the index is disposable: `mem7 reindex` rebuilds it from the markdown".into())
            }
            Error::Embedding { hint, .. } | Error::Internal { hint, .. } => Some(hint.clone()),
        }
    }
}

impl From<crate::core::validate::Invalid> for Error {
    fn from(e: crate::core::validate::Invalid) -> Self {
        Error::Input {
            problem: e.problem,
            hint: Some(e.fix),
        }
    }
}

impl From<rusqlite::types::FromSqlError> for Error {
    fn from(e: rusqlite::types::FromSqlError) -> Self {
        Error::Index(rusqlite::Error::FromSqlConversionFailure(
            0,
            rusqlite::types::Type::Blob,
            Box::new(e),
        ))
    }
}

impl From<crate::core::time::TimeError> for Error {
    fn from(e: crate::core::time::TimeError) -> Self {
        Error::Input {
            problem: e.to_string(),
            hint: None,
        }
    }
}

/// Result with mem7's error.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn internal_failures_are_never_input() {
        let sqlite = Error::from(rusqlite::Error::InvalidQuery);
        assert_eq!(sqlite.kind(), Kind::Internal);
        assert_eq!(sqlite.exit_code(), EXIT_INTERNAL);
        let disk = Error::io("/ws/memory/x.md", io::Error::other("disk full"));
        assert_eq!(disk.exit_code(), EXIT_INTERNAL);
        assert_eq!(
            Error::full_text("/ws/.mem7/t", "corrupt").kind(),
            Kind::Internal
        );
        assert_eq!(Error::internal("bug", "report").kind(), Kind::Internal);
    }

    #[test]
    fn what_the_user_gave_is_input() {
        assert_eq!(Error::input("bad key", "fix it").exit_code(), EXIT_INPUT);
        let named = Error::named_file("in.jsonl", io::Error::from(io::ErrorKind::NotFound));
        assert_eq!(named.exit_code(), EXIT_INPUT);
        assert!(named.to_string().starts_with("in.jsonl: "));
        assert_eq!(
            named.hint().as_deref(),
            Some("check the path: it does not exist")
        );
        let conflict = Error::Conflict {
            file: "memory/a.md".into(),
            line: 3,
        };
        assert_eq!(conflict.exit_code(), EXIT_INPUT);
        let provider = Error::embedding("embedding provider ollama: refused", "start it");
        assert_eq!(
            provider.exit_code(),
            EXIT_INPUT,
            "the user's setup, documented as exit 2"
        );
    }
}
