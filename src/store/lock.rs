//! The writers' lock: an advisory exclusive lock on `.mem7/lock`, held around
//! append + index update so local writers never interleave. Correctness does not rest on
//! it alone: entries carry their own transaction times and the fold orders them.

use std::fs::{File, OpenOptions};
use std::path::Path;

use crate::error::{Error, Result};

/// The error of a write that would have had to wait (`why`): the lock held, or an
/// index that needs a rebuild, for a workspace opened with
/// [`super::Workspace::without_waiting`].
pub fn busy(path: &Path, why: &str) -> Error {
    Error::io(
        path,
        std::io::Error::new(std::io::ErrorKind::WouldBlock, why),
    )
}

/// Whether `e` is [`busy`]'s error: the write was not made because it would have waited.
pub fn is_busy(e: &Error) -> bool {
    matches!(e, Error::Io { source, .. } if source.kind() == std::io::ErrorKind::WouldBlock)
}

/// Held while writing; released on drop (and by the OS if the process dies).
#[derive(Debug)]
pub struct WorkspaceLock {
    _file: File,
}

impl WorkspaceLock {
    /// Blocks until the lock is ours.
    pub fn acquire(path: &Path) -> Result<WorkspaceLock> {
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)
            .map_err(|e| Error::io(path, e))?;
        file.lock().map_err(|e| Error::io(path, e))?;
        Ok(WorkspaceLock { _file: file })
    }

    /// Takes the lock if no one holds it; never waits. A held lock is the error
    /// [`busy`] makes (`WouldBlock`), which [`is_busy`] recognises: a hook that must not
    /// wait behind a long import spools its write instead.
    pub fn try_acquire(path: &Path) -> Result<WorkspaceLock> {
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)
            .map_err(|e| Error::io(path, e))?;
        match file.try_lock() {
            Ok(()) => Ok(WorkspaceLock { _file: file }),
            Err(std::fs::TryLockError::WouldBlock) => Err(busy(
                path,
                "the writers' lock is held (an import or another write)",
            )),
            Err(std::fs::TryLockError::Error(e)) => Err(Error::io(path, e)),
        }
    }

    /// Blocks until no writer holds the lock, then keeps writers out (readers may share
    /// it). `None` when there is no lock file: no mem7 writer has run here.
    pub fn acquire_shared(path: &Path) -> Result<Option<WorkspaceLock>> {
        let file = match OpenOptions::new().read(true).open(path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::io(path, e)),
        };
        file.lock_shared().map_err(|e| Error::io(path, e))?;
        Ok(Some(WorkspaceLock { _file: file }))
    }
}
