//! The workspace on disk: finding it, creating it, listing memory files, the writers'
//! lock, crash-safe appends, and (`visible.rs`) which of its files a client may read.
//! Knows nothing about the index.

mod guard;
mod lock;
mod scan;
mod settings;
mod visible;
pub mod vouch;

use guard::irregular_under;
pub use guard::{Irregular, open_regular, repair_utf8};
pub use lock::{WorkspaceLock, busy, is_busy};
use scan::stat_all;
pub use scan::{ScanStamp, file_mark};
pub use settings::{Owner, settings_hash};

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::config::Config;
use crate::error::{Error, Result};

/// The name of the settings file that marks a workspace.
pub const CONFIG_FILE: &str = "mem7.yaml";
/// Where entries live, relative to the workspace.
pub const MEMORY_DIR: &str = "memory";
/// The derived index directory.
pub const INDEX_DIR: &str = ".mem7";

/// The files `mem7 init` writes, from the repository's `workspace-template/`.
const TEMPLATE: &[(&str, &str)] = &[
    (
        CONFIG_FILE,
        include_str!("../../workspace-template/mem7.yaml"),
    ),
    (
        "README.md",
        include_str!("../../workspace-template/README.md"),
    ),
    (
        ".gitattributes",
        include_str!("../../workspace-template/.gitattributes"),
    ),
    (
        ".gitignore",
        include_str!("../../workspace-template/.gitignore"),
    ),
    ("memory/.gitkeep", ""),
];

/// The files `mem7 init` writes: workspace-relative name and content.
pub fn scaffold() -> impl Iterator<Item = (&'static str, &'static str)> {
    TEMPLATE.iter().copied()
}

/// An opened workspace.
#[derive(Clone, Debug)]
pub struct Workspace {
    root: PathBuf,
    /// The settings in effect: the file's, as far as its owner lets them count.
    config: Config,
    /// The blake3 hash of `mem7.yaml`'s bytes as read (empty when there is none), which
    /// an approval names.
    settings_hash: String,
    standing: crate::config::Standing,
    /// What the file widens that took no effect (unapproved).
    ignored: Vec<crate::config::Ignored>,
    /// Whether a write waits for the writers' lock (and a stale index is rebuilt); a
    /// hook's workspace does not wait ([`Workspace::without_waiting`]).
    pub(super) waits: bool,
}

/// Size and modification time of a memory file: the cheap fingerprint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileStat {
    /// Relative, `/`-separated: `memory/2026-02-15.md`.
    pub name: String,
    pub size: u64,
    pub mtime_ns: i64,
}

/// The result of an append.
#[derive(Clone, Debug)]
pub struct Appended {
    /// The file's fingerprint after the append.
    pub stat: FileStat,
    /// Line feeds written before the entry to start it after a blank line.
    pub separator_newlines: usize,
    /// The file's length before the append.
    pub offset: u64,
}

/// Whether `dir` is a workspace: it has `mem7.yaml`, or (Go mem7 layout) a `memory/` dir.
pub fn is_workspace(dir: &Path) -> bool {
    dir.join(CONFIG_FILE).is_file() || dir.join(MEMORY_DIR).is_dir()
}

/// What `init` did.
#[derive(Debug, PartialEq, Eq)]
pub enum InitOutcome {
    /// The workspace was created; these template files already existed and were kept.
    Created {
        kept: Vec<String>,
    },
    AlreadyWorkspace,
}

/// Creates a workspace in `dir` from the template. Never overwrites a file: existing
/// ones (a project's README or .gitignore, a Go mem7 `memory/`) are kept and reported.
pub fn init(dir: &Path) -> Result<InitOutcome> {
    if dir.join(CONFIG_FILE).is_file() {
        return Ok(InitOutcome::AlreadyWorkspace);
    }
    if dir.exists() && !dir.is_dir() {
        return Err(Error::input(
            format!("{} exists and is not a directory", dir.display()),
            "choose a directory for the workspace",
        ));
    }
    fs::create_dir_all(dir.join(MEMORY_DIR)).map_err(|e| Error::io(dir, e))?;
    let mut kept = Vec::new();
    for (name, content) in TEMPLATE {
        let path = dir.join(name);
        if path.exists() {
            kept.push(name.to_string());
            continue;
        }
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
        }
        fs::write(&path, content).map_err(|e| Error::io(&path, e))?;
    }
    Ok(InitOutcome::Created { kept })
}

impl Workspace {
    /// The workspace directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Settings from `mem7.yaml`.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The derived index directory (created on demand).
    pub fn index_dir(&self) -> Result<PathBuf> {
        let dir = self.root.join(INDEX_DIR);
        fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
        Ok(dir)
    }

    /// Absolute path of a workspace-relative name.
    pub fn path(&self, name: &str) -> PathBuf {
        self.root.join(name)
    }

    /// Every `memory/*.md` file, sorted by name, with its fingerprint. Links and other
    /// files that are not regular are left out (see [`Workspace::irregular`]).
    pub fn scan(&self) -> Result<Vec<FileStat>> {
        Ok(self.scan_all(false)?.0)
    }

    /// One day file's fingerprint as [`Workspace::scan`] would list it (`name` is
    /// `memory/…`): `None` when it is absent or not a regular file.
    pub fn stat_day(&self, name: &str) -> Result<Option<FileStat>> {
        let path = self.root.join(name);
        match fs::symlink_metadata(&path) {
            Ok(meta) if meta.is_file() => Ok(Some(FileStat {
                name: name.to_string(),
                size: meta.len(),
                mtime_ns: mtime_ns(&meta),
            })),
            Ok(_) => Ok(None),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(Error::io(path, e)),
        }
    }

    /// Every entry under `memory/` (the folder itself included) that is not a regular
    /// file or a real directory: a symbolic link, a FIFO, a socket, a device. mem7 never
    /// follows or writes through one; `verify` names each.
    pub fn irregular(&self) -> Result<Vec<Irregular>> {
        Ok(self.scan_all(true)?.1)
    }

    /// [`Workspace::scan`], and with `deep` the irregular entries too.
    pub fn scan_all(&self, deep: bool) -> Result<(Vec<FileStat>, Vec<Irregular>)> {
        let dir = self.root.join(MEMORY_DIR);
        let mut odd = Vec::new();
        match fs::symlink_metadata(&dir) {
            Ok(meta) if meta.is_dir() => {}
            Ok(meta) => {
                odd.push(Irregular::of(&dir, MEMORY_DIR.to_string(), &meta));
                return Ok((Vec::new(), odd));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((Vec::new(), odd)),
            Err(e) => return Err(Error::io(&dir, e)),
        }
        let read = fs::read_dir(&dir).map_err(|e| Error::io(&dir, e))?;
        let mut days = Vec::new();
        for item in read {
            let item = item.map_err(|e| Error::io(&dir, e))?;
            let file_name = item.file_name();
            let name = file_name.to_string_lossy();
            let kind = item.file_type().map_err(|e| Error::io(item.path(), e))?;
            if kind.is_dir() {
                if deep {
                    odd.extend(irregular_under(
                        &item.path(),
                        &format!("{MEMORY_DIR}/{name}"),
                    ));
                }
                continue;
            }
            if !kind.is_file() {
                if deep {
                    let meta = item.metadata().map_err(|e| Error::io(item.path(), e))?;
                    odd.push(Irregular::of(
                        &item.path(),
                        format!("{MEMORY_DIR}/{name}"),
                        &meta,
                    ));
                }
                continue;
            }
            if !is_day_file_name(&name) {
                continue;
            }
            days.push((format!("{MEMORY_DIR}/{name}"), item));
        }
        days.sort_by(|a, b| a.0.cmp(&b.0));
        odd.sort_by(|a, b| a.name.cmp(&b.name));
        Ok((stat_all(days)?, odd))
    }

    /// Reads a memory file as text.
    pub fn read(&self, name: &str) -> Result<String> {
        let mut buf = Vec::new();
        self.read_into(name, &mut buf)?;
        Ok(String::from_utf8(buf).unwrap_or_default())
    }

    /// Reads a memory file into `buf` (reusing its memory) and returns it as text. A
    /// byte that is not UTF-8 reads as `?` (see [`repair_utf8`]): one bad byte in an old
    /// file must not make the workspace unusable; `verify` names it.
    pub fn read_into<'b>(&self, name: &str, buf: &'b mut Vec<u8>) -> Result<&'b str> {
        use std::io::Read as _;
        let path = self.path(name);
        buf.clear();
        open_regular(&path, OpenOptions::new().read(true))
            .and_then(|mut f| f.read_to_end(buf).map_err(|e| Error::io(&path, e)))?;
        repair_utf8(buf);
        std::str::from_utf8(buf).map_err(|e| guard::still_not_utf8(&path, e))
    }

    /// The memory file for the UTC day `day` (`YYYY-MM-DD`).
    pub fn day_file(day: &str) -> String {
        format!("{MEMORY_DIR}/{day}.md")
    }

    /// Appends `entry` to the file `name` and makes it durable before returning.
    ///
    /// The entry always starts on a fresh line after a blank one, whatever the file ended
    /// with (a torn tail, a hand edit without a final newline).
    pub fn append(&self, name: &str, entry: &str) -> Result<Appended> {
        self.append_from(name, &mut entry.as_bytes())
    }

    /// [`Workspace::append`] of entries read from `entries` (an import's spill file,
    /// copied in fixed-size blocks rather than held in memory), with one `sync_data` at
    /// the end.
    pub fn append_from(&self, name: &str, entries: &mut dyn Read) -> Result<Appended> {
        let path = self.path(name);
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        self.real_dir(MEMORY_DIR)?;
        let created = fs::symlink_metadata(&path).is_err();
        let mut file = open_regular(
            &path,
            OpenOptions::new().read(true).append(true).create(true),
        )?;
        let (offset, sep) = separator(&mut file).map_err(|e| Error::io(&path, e))?;
        // One write for an entry of ordinary size (the separator, the entry and its
        // line feed together), blocks of 1 MiB for a spill file.
        const BLOCK: usize = 1 << 20;
        let mut bytes = Vec::with_capacity(BLOCK);
        bytes.extend_from_slice(sep.as_bytes());
        loop {
            // Read into the spare capacity, up to the block: nothing is zeroed first (a
            // 1 MiB fill per store cost more than the entry's own bytes).
            let room = (BLOCK - bytes.len()) as u64;
            let n = (&mut *entries)
                .take(room)
                .read_to_end(&mut bytes)
                .map_err(|e| Error::io(&path, e))?;
            if n == 0 {
                break;
            }
            if bytes.len() == BLOCK {
                file.write_all(&bytes).map_err(|e| Error::io(&path, e))?;
                bytes.clear();
            }
        }
        bytes.push(b'\n');
        file.write_all(&bytes).map_err(|e| Error::io(&path, e))?;
        file.sync_data().map_err(|e| Error::io(&path, e))?;
        if created {
            // Make the new directory entry durable too.
            if let Ok(d) = File::open(&dir) {
                let _ = d.sync_all();
            }
        }
        let meta = file.metadata().map_err(|e| Error::io(&path, e))?;
        Ok(Appended {
            stat: FileStat {
                name: name.to_string(),
                size: meta.len(),
                mtime_ns: mtime_ns(&meta),
            },
            separator_newlines: sep.len(),
            offset,
        })
    }
}

impl Workspace {
    /// The length of memory file `name`, `None` when it does not exist.
    pub fn length(&self, name: &str) -> Result<Option<u64>> {
        let path = self.path(name);
        match fs::symlink_metadata(&path) {
            Ok(meta) => Ok(Some(meta.len())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(Error::io(&path, e)),
        }
    }

    /// Undoes appends this process made under the writers' lock (an import that could
    /// not finish): `name` goes back to `length` bytes, or away when it did not exist.
    /// Only bytes that were never acknowledged are removed.
    pub fn roll_back(&self, name: &str, length: Option<u64>) -> Result<()> {
        let path = self.path(name);
        match fs::symlink_metadata(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(Error::io(&path, e)),
            // Not a file mem7 could have appended to: left alone.
            Ok(meta) if !meta.is_file() => return Ok(()),
            Ok(_) => {}
        }
        match length {
            None => fs::remove_file(&path).map_err(|e| Error::io(&path, e)),
            Some(len) => {
                let file = open_regular(&path, OpenOptions::new().write(true))?;
                file.set_len(len)
                    .and_then(|_| file.sync_all())
                    .map_err(|e| Error::io(&path, e))
            }
        }
    }

    /// Moves the incomplete entry at the end of `name` (from byte `offset`) into
    /// `memory/torn/`, so the chain can continue after the last complete entry. The torn
    /// bytes are kept, never destroyed: they are written and synced before the memory
    /// file is shortened. This is the only time mem7 shortens a memory file.
    pub fn set_aside(&self, name: &str, offset: u64) -> Result<String> {
        let path = self.path(name);
        let mut bytes = Vec::new();
        open_regular(&path, OpenOptions::new().read(true))?
            .read_to_end(&mut bytes)
            .map_err(|e| Error::io(&path, e))?;
        let Some(torn) = bytes.get(offset as usize..).filter(|t| !t.is_empty()) else {
            return Ok(String::new());
        };
        let stem = Path::new(name)
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("memory");
        let dir = self.real_dir(&format!("{MEMORY_DIR}/torn"))?;
        // Never overwrite an earlier set-aside tail (two crashes can tear at one offset).
        let (aside_name, mut f) = (0..)
            .map(|n| {
                let suffix = if n == 0 {
                    String::new()
                } else {
                    format!(".{n}")
                };
                format!("{MEMORY_DIR}/torn/{stem}.at-{offset}{suffix}.torn")
            })
            .find_map(|name| {
                match OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .open(self.path(&name))
                {
                    Ok(f) => Some(Ok((name, f))),
                    Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => None,
                    Err(e) => Some(Err(Error::io(self.path(&name), e))),
                }
            })
            .unwrap_or_else(|| {
                Err(Error::internal(
                    "no free name in memory/torn/",
                    "clean up memory/torn/",
                ))
            })?;
        let aside = self.path(&aside_name);
        {
            f.write_all(torn)
                .and_then(|_| f.sync_all())
                .map_err(|e| Error::io(&aside, e))?;
        }
        if let Ok(d) = File::open(&dir) {
            let _ = d.sync_all();
        }
        let file = open_regular(&path, OpenOptions::new().write(true))?;
        file.set_len(offset)
            .and_then(|_| file.sync_all())
            .map_err(|e| Error::io(&path, e))?;
        Ok(aside_name)
    }
}

impl Workspace {
    /// The workspace directory `name` (`memory`, `memory/torn`), created when missing;
    /// an error when it, or the memory folder above it, is a link or not a directory:
    /// mem7 never writes through a link.
    fn real_dir(&self, name: &str) -> Result<PathBuf> {
        let mut at = self.root.clone();
        for part in name.split('/') {
            at.push(part);
            match fs::symlink_metadata(&at) {
                Ok(meta) if meta.is_dir() => {}
                Ok(meta) => {
                    let odd = Irregular::of(&at, self.relative(&at), &meta);
                    return Err(odd.refusal());
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    fs::create_dir(&at).map_err(|e| Error::io(&at, e))?;
                }
                Err(e) => return Err(Error::io(&at, e)),
            }
        }
        Ok(at)
    }

    /// Which of mem7's own folders `path` (a file to write, given by a user) would land
    /// in: `Some("memory folder")` or `Some("index")`, after resolving links and `..` in
    /// the folders above it; `None` when it is elsewhere.
    pub fn owned_folder(&self, path: &Path) -> Option<&'static str> {
        let joined = if path.is_absolute() {
            path.to_path_buf()
        } else {
            std::env::current_dir().ok()?.join(path)
        };
        // `..` taken lexically first, so a folder that does not exist cannot hide where
        // the path lands (`sub/../mem7.yaml`).
        let mut absolute = PathBuf::new();
        for part in joined.components() {
            match part {
                std::path::Component::ParentDir => {
                    absolute.pop();
                }
                std::path::Component::CurDir => {}
                other => absolute.push(other),
            }
        }
        // The deepest folder above it that exists, resolved; the rest appended.
        let mut existing = absolute.clone();
        let mut rest = Vec::new();
        let resolved = loop {
            if let Ok(r) = fs::canonicalize(&existing) {
                break r;
            }
            rest.push(existing.file_name()?.to_os_string());
            existing = existing.parent()?.to_path_buf();
        };
        let mut target = resolved;
        for part in rest.iter().rev() {
            target.push(part);
        }
        let root = fs::canonicalize(&self.root).ok()?;
        if target == root.join(CONFIG_FILE) {
            return Some("settings file (mem7.yaml)");
        }
        [(MEMORY_DIR, "memory folder"), (INDEX_DIR, "index")]
            .into_iter()
            .find(|(dir, _)| target.starts_with(root.join(dir)))
            .map(|(_, what)| what)
    }

    /// `path` relative to the workspace, `/`-separated, for messages.
    fn relative(&self, path: &Path) -> String {
        path.strip_prefix(&self.root)
            .unwrap_or(path)
            .to_string_lossy()
            .replace('\\', "/")
    }
}

/// Removes `import-*` folders left in the index directory by imports that did not finish
/// (an import writes its entries there first; see `engine/import.rs`). Best effort: a
/// folder that cannot be removed now is tried again at the next write.
pub(super) fn remove_stale_spills(index_dir: &Path) {
    let Ok(read) = fs::read_dir(index_dir) else {
        return;
    };
    for item in read.flatten() {
        let name = item.file_name();
        if name.to_string_lossy().starts_with(SPILL_PREFIX)
            && item.file_type().is_ok_and(|t| t.is_dir())
        {
            let _ = fs::remove_dir_all(item.path());
        }
    }
}

/// The name an import's spill folder starts with, in the index directory.
pub const SPILL_PREFIX: &str = "import-";

/// The file's length, and what must precede a new entry so that it starts after a
/// blank line.
fn separator(file: &mut File) -> std::io::Result<(u64, &'static str)> {
    let len = file.seek(SeekFrom::End(0))?;
    if len == 0 {
        return Ok((0, ""));
    }
    let take = len.min(2);
    file.seek(SeekFrom::Start(len - take))?;
    let mut tail = [0u8; 2];
    file.read_exact(&mut tail[..take as usize])?;
    let tail = &tail[..take as usize];
    let sep = if tail.ends_with(b"\n\n") || (take == 1 && tail == b"\n") {
        ""
    } else if tail.ends_with(b"\n") {
        "\n"
    } else {
        "\n\n"
    };
    Ok((len, sep))
}

/// Whether `name` is a memory file name: `YYYY-MM-DD.md`. Other files in `memory/`
/// (notes, a README) are not memory and are left alone.
pub fn is_day_file_name(name: &str) -> bool {
    let b = name.as_bytes();
    b.len() == 13
        && name.ends_with(".md")
        && b[..10].iter().enumerate().all(|(i, c)| {
            if i == 4 || i == 7 {
                *c == b'-'
            } else {
                c.is_ascii_digit()
            }
        })
}

/// Modification time in nanoseconds since the epoch (0 when unknown).
pub fn mtime_ns(meta: &fs::Metadata) -> i64 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}
