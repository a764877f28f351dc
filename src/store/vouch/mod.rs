//! A resident watcher's word that nothing changed: how a start-up with nothing changed
//! costs the same at 13,334 day files as at one.
//!
//! A start-up otherwise `stat`s every day file, since a file written in place changes no
//! folder's mtime. A process that stays up (`mem7 watch`, `mem7 mcp`, `mem7 serve`)
//! watches the memory folder with inotify ([`Voucher`]) and answers, on a Unix socket in
//! `.mem7/`, one question: *which day files had an event since this token?* The index
//! keeps the token at which its `files` rows were last seen to match every file; so a
//! command reads the token, asks, and `stat`s only the files named (usually none, or
//! today's). This is git's fsmonitor, without a cookie file: inotify queues a write's
//! event before the write returns, and the watcher reads its queue to the end before it
//! answers, so every change made before the question is in the answer.
//!
//! When the watcher cannot say (another watcher since the token, a queue that
//! overflowed, a memory folder replaced or moved, a folder that is not the one the
//! asker sees), the command scans as before; so it does when no watcher runs, or its
//! socket is not what it should be (not a socket, or not made by the index folder's
//! owner). A watcher vouches only on local file systems whose changes inotify sees
//! (ext4, xfs, btrfs, tmpfs, …: not NFS, SMB or FUSE, where another machine writes
//! unseen). What inotify misses even there (a write through a hard link outside
//! `memory/`, or through a shared memory map) is caught by the watcher's periodic
//! reconcile, which scans. `docs/internals/index.md` has the design and its measurements.

#[cfg(target_os = "linux")]
mod watcher;

#[cfg(target_os = "linux")]
pub use watcher::Voucher;

use std::path::Path;

use crate::error::Error;
use crate::store::Workspace;

/// The socket a watcher answers on, in the index folder.
pub const SOCKET: &str = "vouch.sock";
/// The lock that makes one process per workspace the watcher that answers.
pub const LOCK: &str = "vouch.lock";

/// A point in one watcher's stream of events.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Token {
    /// Which watcher (random per process).
    pub instance: u64,
    /// How many times it had read events when it handed the token out.
    pub seq: u64,
}

impl Token {
    /// As stored and sent: `instance.seq`, the instance in hex.
    pub fn to_text(self) -> String {
        format!("{:016x}.{}", self.instance, self.seq)
    }

    /// Read back from [`Token::to_text`].
    pub fn parse(text: &str) -> Option<Token> {
        let (instance, seq) = text.trim().split_once('.')?;
        Some(Token {
            instance: u64::from_str_radix(instance, 16).ok()?,
            seq: seq.parse().ok()?,
        })
    }
}

/// A watcher's answer to "what changed since this token?".
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    /// The names in the memory folder (`2026-12-01.md`, not `memory/…`) with an event
    /// since the token, in no order; `now` is the token to ask with next time.
    Changed { names: Vec<String>, now: Token },
    /// The watcher cannot say: scan every file, and record `now` once they match.
    Unknown { now: Token },
}

impl Answer {
    /// The token this answer was given at.
    pub fn now(&self) -> Token {
        match self {
            Answer::Changed { now, .. } | Answer::Unknown { now } => *now,
        }
    }
}

/// Asks the watcher of the workspace whose index folder is `index_dir` what changed in
/// `memory` since `since`. `None` when no watcher answers (none runs, its socket is not a
/// socket made by the index folder's owner, it is stopped or too slow): the caller scans.
#[cfg(target_os = "linux")]
pub fn ask(index_dir: &Path, memory: &Path, since: Option<Token>) -> Option<Answer> {
    use rustix::net::{AddressFamily, SocketAddrUnix, SocketFlags, SocketType};
    use std::io::{BufRead, BufReader, Write};
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    use std::os::unix::net::UnixStream;
    use std::time::Duration;

    let socket = index_dir.join(SOCKET);
    // A socket made by the index folder's owner (only that user, or root, can make one
    // owned by them): a link, a file or someone else's socket is not asked.
    let meta = std::fs::symlink_metadata(&socket).ok()?;
    let owner = std::fs::symlink_metadata(index_dir).ok()?.uid();
    if !meta.file_type().is_socket() || meta.uid() != owner {
        return None;
    }
    // Connected without waiting: a watcher that is stopped (Ctrl-Z) leaves questions in
    // its queue, and once the queue is full a blocking connect would wait for it.
    let fd = rustix::net::socket_with(
        AddressFamily::UNIX,
        SocketType::STREAM,
        SocketFlags::CLOEXEC | SocketFlags::NONBLOCK,
        None,
    )
    .ok()?;
    rustix::net::connect(&fd, &SocketAddrUnix::new(&socket).ok()?).ok()?;
    let mut stream = UnixStream::from(fd);
    stream.set_nonblocking(false).ok()?;
    // A watcher that does not answer at once is stopped or stuck: scanning is faster.
    let patience = Some(Duration::from_millis(250));
    stream.set_read_timeout(patience).ok()?;
    stream.set_write_timeout(patience).ok()?;
    let since = since.map_or_else(|| "-".to_string(), Token::to_text);
    stream
        .write_all(format!("since {since}\n").as_bytes())
        .ok()?;
    let mut lines = BufReader::new(stream).lines();
    let mut next = || lines.next()?.ok();
    let folder = Folder::parse(next()?.strip_prefix("folder ")?)?;
    // The watcher watches the folder it found at start; this must be the one we read.
    if Folder::of(&std::fs::symlink_metadata(memory).ok()?) != folder {
        return None;
    }
    let now = Token::parse(next()?.strip_prefix("now ")?)?;
    let head = next()?;
    if head == "unknown" {
        return Some(Answer::Unknown { now });
    }
    let count: usize = head.strip_prefix("changed ")?.parse().ok()?;
    let mut names = Vec::with_capacity(count.min(1 << 16));
    for _ in 0..count {
        names.push(next()?);
    }
    (next()? == "end").then_some(Answer::Changed { names, now })
}

/// No watcher answers where there is no inotify.
#[cfg(not(target_os = "linux"))]
pub fn ask(_index_dir: &Path, _memory: &Path, _since: Option<Token>) -> Option<Answer> {
    None
}

/// Keeps this process the workspace's watcher when it can: it takes the part at start,
/// and again once the process that had it is gone (start-ups scan meanwhile).
#[derive(Default)]
pub struct Vouching {
    #[cfg(target_os = "linux")]
    voucher: Option<Voucher>,
    /// A failure was returned once: not tried again.
    failed: bool,
}

impl Vouching {
    /// Takes the part if no process has it. The first failure is returned, to be said
    /// once; after it, nothing is tried again.
    #[cfg_attr(not(target_os = "linux"), allow(unused_variables))]
    pub fn keep_up(&mut self, ws: &Workspace) -> Option<Error> {
        #[cfg(target_os = "linux")]
        if self.voucher.is_none() && !self.failed {
            match Voucher::start(ws) {
                Ok(voucher) => self.voucher = voucher,
                Err(e) => {
                    self.failed = true;
                    return Some(e);
                }
            }
        }
        None
    }
}

/// Which folder: its device and inode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Folder {
    dev: u64,
    ino: u64,
}

#[cfg(target_os = "linux")]
impl Folder {
    fn of(meta: &std::fs::Metadata) -> Folder {
        use std::os::unix::fs::MetadataExt;
        Folder {
            dev: meta.dev(),
            ino: meta.ino(),
        }
    }

    fn to_text(self) -> String {
        format!("{}:{}", self.dev, self.ino)
    }

    fn parse(text: &str) -> Option<Folder> {
        let (dev, ino) = text.split_once(':')?;
        Some(Folder {
            dev: dev.parse().ok()?,
            ino: ino.parse().ok()?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_reads_back_as_written_and_nothing_else_reads_as_one() {
        let t = Token {
            instance: 0xdead_beef_0123_4567,
            seq: 42,
        };
        assert_eq!(t.to_text(), "deadbeef01234567.42");
        assert_eq!(Token::parse(&t.to_text()), Some(t));
        for bad in ["", "-", "deadbeef", "x.1", "1.x", "1.-1"] {
            assert_eq!(Token::parse(bad), None, "{bad:?}");
        }
    }
}
