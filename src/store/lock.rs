//! The writers' lock: an advisory exclusive lock on `.mem7/lock`, held around
//! append + index update so local writers never interleave. Correctness does not rest on
//! it alone: entries carry their own transaction times and the fold orders them.

use std::fs::{File, OpenOptions};
use std::path::Path;

use crate::error::{Error, Result};

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
