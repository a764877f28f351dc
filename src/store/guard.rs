//! What mem7 opens under `memory/`, and how: never through a link (`O_NOFOLLOW`), never a
//! FIFO, socket or device ([`Irregular`], named by `verify` and refused by every write),
//! and text whose bytes are not all UTF-8 read with each bad byte as `?`
//! ([`repair_utf8`]), so one damaged file does not make the workspace unusable.

use std::fs::{self, File, OpenOptions};
use std::path::Path;

use crate::error::{Error, Result};

/// Something under `memory/` that is neither a regular file nor a real directory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Irregular {
    /// Workspace-relative, `/`-separated.
    pub name: String,
    /// What it is: `symbolic link`, `FIFO`, `socket`, `device`.
    pub what: &'static str,
    /// Where a link points (as written in the link), else `None`.
    pub target: Option<String>,
}

impl Irregular {
    pub(super) fn of(path: &Path, name: String, meta: &fs::Metadata) -> Irregular {
        use std::os::unix::fs::FileTypeExt;
        let t = meta.file_type();
        let what = if t.is_symlink() {
            "symbolic link"
        } else if t.is_fifo() {
            "FIFO"
        } else if t.is_socket() {
            "socket"
        } else if t.is_block_device() || t.is_char_device() {
            "device"
        } else if t.is_file() {
            "file"
        } else {
            "special file"
        };
        let target = t
            .is_symlink()
            .then(|| fs::read_link(path).ok())
            .flatten()
            .map(|p| p.to_string_lossy().into_owned());
        Irregular { name, what, target }
    }

    /// How it is described: `memory/x.md is a symbolic link (to ../../outside.txt)`.
    pub fn describe(&self) -> String {
        match &self.target {
            Some(t) => format!("{} is a {} (to {t})", self.name, self.what),
            None => format!("{} is a {}, not a regular file", self.name, self.what),
        }
    }

    /// The error of a write that would go through it.
    pub fn refusal(&self) -> Error {
        Error::input(
            format!(
                "{}; mem7 never reads or writes memory through links or special files",
                self.describe()
            ),
            format!(
                "remove it (`git rm {n}` or `rm {n}`) and restore the real file from git history if it had entries; nothing was written",
                n = self.name
            ),
        )
    }
}

/// The irregular entries under the directory `dir` (workspace name `name`), at any depth.
pub(super) fn irregular_under(dir: &Path, name: &str) -> Vec<Irregular> {
    let mut odd = Vec::new();
    let Ok(read) = fs::read_dir(dir) else {
        return odd;
    };
    for item in read.flatten() {
        let child = format!("{name}/{}", item.file_name().to_string_lossy());
        let Ok(meta) = fs::symlink_metadata(item.path()) else {
            continue;
        };
        if meta.is_dir() {
            odd.extend(irregular_under(&item.path(), &child));
        } else if !meta.is_file() {
            odd.push(Irregular::of(&item.path(), child, &meta));
        }
    }
    odd
}

/// Opens a workspace file without following a link (`O_NOFOLLOW`) and without
/// blocking on a FIFO; anything but a regular file is refused with an error that names
/// it and says what to do.
pub fn open_regular(path: &Path, options: &mut OpenOptions) -> Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let refuse = |path: &Path| -> Error {
        match fs::symlink_metadata(path) {
            Ok(meta) => {
                let name = path.to_string_lossy().into_owned();
                Irregular::of(path, name, &meta).refusal()
            }
            Err(e) => Error::io(path, e),
        }
    };
    let file = match options
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
    {
        Ok(f) => f,
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => return Err(refuse(path)),
        Err(e) => return Err(Error::io(path, e)),
    };
    let meta = file.metadata().map_err(|e| Error::io(path, e))?;
    if !meta.is_file() {
        return Err(refuse(path));
    }
    Ok(file)
}

/// The error for bytes that [`repair_utf8`] left invalid (a bug: it never should).
pub fn still_not_utf8(path: &Path, e: std::str::Utf8Error) -> Error {
    Error::internal(
        format!(
            "{}: still not UTF-8 at byte {}",
            path.display(),
            e.valid_up_to()
        ),
        "this is a bug in mem7: please report it",
    )
}

/// Replaces every byte that is not part of valid UTF-8 with `?`, in place (so every
/// offset stays where it was); returns their offsets. An entry holding one no longer
/// matches its hash, so `verify` reports it as changed, and names the byte itself.
pub fn repair_utf8(bytes: &mut [u8]) -> Vec<usize> {
    let mut bad = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        match std::str::from_utf8(&bytes[at..]) {
            Ok(_) => break,
            Err(e) => {
                let start = at + e.valid_up_to();
                let len = e.error_len().unwrap_or(bytes.len() - start);
                for b in &mut bytes[start..start + len] {
                    *b = b'?';
                    bad.push(start);
                }
                at = start + len;
            }
        }
    }
    bad
}

impl super::Workspace {
    /// Reads a memory file into `buf` (reusing its memory, so a thread reading many
    /// files allocates once): its text, bytes that are not UTF-8 read as `?`, and the
    /// 1-based line of each such byte. `verify` reads this way. Memory files are never
    /// mapped: people and git cut them short without the lock, and a mapped file cut
    /// short faults the process.
    pub fn read_text_into<'b>(
        &self,
        name: &str,
        buf: &'b mut Vec<u8>,
    ) -> Result<(&'b str, Vec<u32>)> {
        use std::io::Read as _;
        let path = self.path(name);
        buf.clear();
        open_regular(&path, OpenOptions::new().read(true))
            .and_then(|mut f| f.read_to_end(buf).map_err(|e| Error::io(&path, e)))?;
        if std::str::from_utf8(buf).is_ok() {
            // SAFETY: the bytes were found to be UTF-8 just above, and `buf` is borrowed
            // exclusively by this function, so nothing changed them since. (Checking
            // again would read every byte of every file a second time.)
            return Ok((unsafe { std::str::from_utf8_unchecked(buf) }, Vec::new()));
        }
        let bad = repair_utf8(buf);
        let lines = bad
            .iter()
            .map(|&at| memchr::memchr_iter(b'\n', &buf[..at]).count() as u32 + 1)
            .collect();
        let text = std::str::from_utf8(buf).map_err(|e| still_not_utf8(&path, e))?;
        Ok((text, lines))
    }
}
