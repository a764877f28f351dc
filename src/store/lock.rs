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
}
