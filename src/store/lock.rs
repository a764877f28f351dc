//! The writers' lock: an advisory exclusive lock on `.mem7/lock`, held around
//! append + index update so local writers never interleave. Correctness does not rest on
//! it alone: entries carry their own transaction times and the fold orders them. A
//! workspace opened for a writer that must never wait (a hook) takes it without waiting.

use std::fs::{File, OpenOptions};
use std::path::Path;

use super::{INDEX_DIR, Workspace};
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

impl Workspace {
    /// The same workspace for a writer that must never wait (a hook, docs/capture.md): its
    /// [`Workspace::lock`] fails at once with [`busy`]'s error when another writer holds
    /// the lock, and the engine refuses to rebuild its index (seconds at a million
    /// versions) rather than do it here.
    pub fn without_waiting(mut self) -> Workspace {
        self.waits = false;
        self
    }

    /// Whether writes wait (see [`Workspace::without_waiting`]).
    pub fn waits(&self) -> bool {
        self.waits
    }

    /// Takes the writers' lock (blocking until other writers finish, unless the
    /// workspace was opened [`Workspace::without_waiting`]). With it held, no
    /// import is under way, so the spill folders of imports that were killed are
    /// removed here: none survives a crash past the next write.
    pub fn lock(&self) -> Result<WorkspaceLock> {
        let dir = self.index_dir()?;
        let lock = if self.waits {
            WorkspaceLock::acquire(&dir.join("lock"))?
        } else {
            WorkspaceLock::try_acquire(&dir.join("lock"))?
        };
        super::remove_stale_spills(&dir);
        Ok(lock)
    }

    /// Keeps writers out while reading (shared with other readers); `None` when no mem7
    /// writer ever ran here. Nothing is created.
    pub fn lock_shared(&self) -> Result<Option<WorkspaceLock>> {
        WorkspaceLock::acquire_shared(&self.root.join(INDEX_DIR).join("lock"))
    }
}
