//! The library's error type: every failure names the problem and, where there is one,
//! the fix. The CLI turns it into a message and an exit code, the MCP server into a
//! tool error.

use std::io;
use std::path::PathBuf;

/// A failure of a mem7 operation.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The request itself is wrong (bad time, bad key, value too large, …).
    #[error("{problem}")]
    Input {
        problem: String,
        hint: Option<String>,
    },

    /// There is no workspace where one was expected.
    #[error("no mem7 workspace at {}", path.display())]
    NoWorkspace { path: PathBuf },

    /// A memory file holds an unresolved git merge conflict.
    #[error(
        "{file}:{line}: unresolved git merge conflict; mem7 does not read conflicted files as memory"
    )]
    Conflict { file: String, line: u32 },

    /// Reading or writing a file failed.
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },

    /// The index database failed in a way a rebuild did not cure.
    #[error("index database: {0}")]
    Index(#[from] rusqlite::Error),
}

impl Error {
    /// An input error with a remedy.
    pub fn input(problem: impl Into<String>, hint: impl Into<String>) -> Self {
        Error::Input {
            problem: problem.into(),
            hint: Some(hint.into()),
        }
    }

    /// An I/O error on `path`.
    pub fn io(path: impl Into<PathBuf>, source: io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }

    /// What the user can do about it.
    pub fn hint(&self) -> Option<String> {
        match self {
            Error::Input { hint, .. } => hint.clone(),
            Error::NoWorkspace { .. } => Some(
                "create one with `mem7 init [DIR]`, or point to one with --workspace DIR or MEM7_WORKSPACE".into(),
            ),
            Error::Conflict { .. } => Some(
                "resolve the conflict in git: memory files are append-only, so keep the entries of both sides \
                 and delete the <<<<<<<, ======= and >>>>>>> lines (the workspace's .gitattributes sets \
                 merge=union, which avoids such conflicts)"
                    .into(),
            ),
            Error::Io { .. } => None,
            Error::Index(_) => Some("the index is disposable: `mem7 reindex` rebuilds it from the markdown".into()),
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
