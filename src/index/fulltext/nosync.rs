//! A server's full-text commits without `fsync` (issue 36: a commit's dozen `fdatasync`s
//! were most of the first search after a burst of stores, 40–150 ms on a busy disk).
//!
//! The full-text index is rebuilt from SQLite whenever it is missing, so what a crash
//! of the machine may leave half-written must only be noticed: before its first commit
//! without `fsync`, a process writes (durably) a marker beside the index naming the
//! machine's boot; it removes the marker once it has synced every file of the index
//! ([`sync_all`], on a quiet moment). Opening an index whose marker names another boot
//! (the machine stopped with unsynced files) deletes it, to be rebuilt by the next
//! search ([`discard_if_unsafe`]). A process that merely dies leaves its writes in the
//! page cache, as good as synced, and its marker (a later boot discards the index once,
//! needlessly, unless another process synced it and cleared the marker first). Without
//! a boot id (not Linux), commits sync as tantivy does.

use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tantivy::directory::error::{DeleteError, LockError, OpenReadError, OpenWriteError};
use tantivy::directory::{
    AntiCallToken, Directory, DirectoryLock, FileHandle, Lock, MmapDirectory, TerminatingWrite,
    WatchCallback, WatchHandle, WritePtr,
};

/// The machine's boot, when the system says (Linux): read once per process (every search
/// asks, and a process lives within one boot).
pub fn boot_id() -> Option<String> {
    static BOOT: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    BOOT.get_or_init(|| {
        std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
            .ok()
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
    })
    .clone()
}

/// This process's marker beside the index in `dir`.
fn marker(dir: &Path) -> PathBuf {
    let mut name = dir.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".unsynced-{}", std::process::id()));
    dir.with_file_name(name)
}

/// Writes this process's marker durably (once per unsynced stretch).
pub fn mark(dir: &Path, boot: &str) -> io::Result<()> {
    let path = marker(dir);
    if path.exists() {
        return Ok(());
    }
    let mut f = File::create(&path)?;
    f.write_all(boot.as_bytes())?;
    f.sync_all()?;
    if let Some(parent) = path.parent() {
        File::open(parent)?.sync_all()?;
    }
    Ok(())
}

/// Syncs every file of the index in `dir` and the folder, then removes this process's
/// marker. Files deleted meanwhile (a merge's) are skipped.
pub fn sync_all(dir: &Path) -> io::Result<()> {
    let path = marker(dir);
    if !path.exists() {
        return Ok(());
    }
    for entry in std::fs::read_dir(dir)? {
        let p = entry?.path();
        match File::open(&p) {
            Ok(f) => f.sync_all()?,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
    }
    File::open(dir)?.sync_all()?;
    std::fs::remove_file(&path)
}

/// The markers beside the index in `dir` that name another boot than this one: its
/// unsynced files may be torn.
pub fn stale_markers(dir: &Path) -> Vec<PathBuf> {
    let (Some(parent), Some(name)) = (dir.parent(), dir.file_name()) else {
        return Vec::new();
    };
    let mut prefix = name.to_os_string();
    prefix.push(".unsynced-");
    let prefix = prefix.to_string_lossy().into_owned();
    let Ok(entries) = std::fs::read_dir(parent) else {
        return Vec::new();
    };
    let now = boot_id();
    entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(&prefix))
        })
        .filter(|p| {
            std::fs::read_to_string(p)
                .ok()
                .map(|s| s.trim().to_string())
                != now
        })
        .collect()
}

/// Deletes the index in `dir` when [`stale_markers`] finds any, with them (callers hold
/// the workspace lock); whether it did.
pub fn discard_if_unsafe(dir: &Path) -> io::Result<bool> {
    let stale = stale_markers(dir);
    if stale.is_empty() {
        return Ok(false);
    }
    match std::fs::remove_dir_all(dir) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    for p in stale {
        match std::fs::remove_file(&p) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
    }
    Ok(true)
}

/// Whether no marker of another boot lies beside the index in `dir` ([`stale_markers`]).
/// `known` keeps a yes, after which the folder is not listed again: only a process of an
/// earlier boot writes such a marker, so none can appear later (every search asks).
pub fn unmarked(dir: &Path, known: &AtomicBool) -> bool {
    if known.load(Ordering::Relaxed) {
        return true;
    }
    let unmarked = stale_markers(dir).is_empty();
    known.store(unmarked, Ordering::Relaxed);
    unmarked
}

/// tantivy's directory on disk, writing without `fsync`.
#[derive(Clone, Debug)]
pub struct NoSync {
    inner: MmapDirectory,
    root: PathBuf,
}

impl NoSync {
    pub fn open(dir: &Path) -> tantivy::Result<NoSync> {
        Ok(NoSync {
            inner: MmapDirectory::open(dir)?,
            root: dir.to_path_buf(),
        })
    }
}

/// A file written without `fsync` when it ends.
struct Unsynced(File);

impl Write for Unsynced {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

impl TerminatingWrite for Unsynced {
    fn terminate_ref(&mut self, _: AntiCallToken) -> io::Result<()> {
        self.0.flush()
    }
}

impl Directory for NoSync {
    fn get_file_handle(&self, path: &Path) -> Result<Arc<dyn FileHandle>, OpenReadError> {
        self.inner.get_file_handle(path)
    }

    fn delete(&self, path: &Path) -> Result<(), DeleteError> {
        self.inner.delete(path)
    }

    fn exists(&self, path: &Path) -> Result<bool, OpenReadError> {
        self.inner.exists(path)
    }

    fn open_write(&self, path: &Path) -> Result<WritePtr, OpenWriteError> {
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(self.root.join(path))
            .map_err(|e| {
                if e.kind() == io::ErrorKind::AlreadyExists {
                    OpenWriteError::FileAlreadyExists(path.to_path_buf())
                } else {
                    OpenWriteError::wrap_io_error(e, path.to_path_buf())
                }
            })?;
        Ok(BufWriter::new(Box::new(Unsynced(file))))
    }

    fn atomic_read(&self, path: &Path) -> Result<Vec<u8>, OpenReadError> {
        self.inner.atomic_read(path)
    }

    /// A temporary file renamed over the target: readers see the old or the new whole.
    fn atomic_write(&self, path: &Path, data: &[u8]) -> io::Result<()> {
        let target = self.root.join(path);
        let mut tmp = tempfile::Builder::new().tempfile_in(&self.root)?;
        tmp.write_all(data)?;
        tmp.flush()?;
        tmp.into_temp_path().persist(&target).map_err(|e| e.error)
    }

    fn sync_directory(&self) -> io::Result<()> {
        Ok(())
    }

    fn acquire_lock(&self, lock: &Lock) -> Result<DirectoryLock, LockError> {
        self.inner.acquire_lock(lock)
    }

    fn watch(&self, callback: WatchCallback) -> tantivy::Result<WatchHandle> {
        self.inner.watch(callback)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_index_marked_unsynced_in_another_boot_is_discarded_and_one_of_this_boot_kept() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("index-1.tantivy");
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("meta.json"), "{}").unwrap();
        let Some(boot) = boot_id() else {
            return; // Not Linux: commits sync as tantivy does, nothing is marked.
        };
        mark(&dir, &boot).unwrap();
        assert!(marker(&dir).exists());
        assert!(stale_markers(&dir).is_empty());
        assert!(!discard_if_unsafe(&dir).unwrap());
        assert!(dir.join("meta.json").exists());
        // Synced: the marker goes.
        sync_all(&dir).unwrap();
        assert!(!marker(&dir).exists());
        // A marker left by a process of an earlier boot.
        let other = tmp.path().join("index-1.tantivy.unsynced-1");
        std::fs::write(&other, "an-earlier-boot").unwrap();
        // Another generation's marker is not this index's.
        std::fs::write(tmp.path().join("index-2.tantivy.unsynced-1"), "x").unwrap();
        assert_eq!(stale_markers(&dir), vec![other.clone()]);
        assert!(discard_if_unsafe(&dir).unwrap());
        assert!(!dir.exists() && !other.exists());
        assert!(tmp.path().join("index-2.tantivy.unsynced-1").exists());
    }
}
