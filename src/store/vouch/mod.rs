//! A resident watcher's word that nothing changed: how a start-up with nothing changed
//! costs the same at 13,334 day files as at one; and the one watcher a long-running
//! process keeps on its memory folder, which both wakes its loop and gives that word.
//!
//! A start-up otherwise `stat`s every day file, since a file written in place changes no
//! folder's mtime. A process that stays up (`mem7 watch`, `mem7 mcp`, `mem7 serve`)
//! watches the memory folder with one inotify queue and one thread ([`Watcher`], Linux).
//! The thread wakes the process's loop when files change (debounced: once the folder is
//! quiet for 200 ms, at least once a second under writes that never pause; also when the
//! queue overflowed, or the folder was removed or replaced, which it then watches anew).
//! And the first such process on a workspace takes `vouch.lock` and answers, on a Unix
//! socket in `.mem7/`, one question: *which day files had an event since this token?*
//! The index keeps the token at which its `files` rows were last seen to match every
//! file; so a command reads the token, asks, and `stat`s only the files named (usually
//! none, or today's). The others keep watching for their own wake-ups and try for the
//! lock again at each wake, so one takes over when the first ends. A process that holds
//! the lock asks itself in memory, under the same mutex the thread answers under, never
//! through its socket ([`ask`]), with the same rules: the queue is read to its end
//! first, and the folder watched must be the one the asker reads. Whoever reads the
//! queue, the thread or a question, records what it read for the loop's wake-up.
//!
//! This is git's fsmonitor, without a cookie file: inotify queues a write's event before
//! the write returns, and the watcher reads its queue to the end before it answers, so
//! every change made before the question is in the answer. A token names the watcher
//! (random per process) and how many times it had read its queue; tokens of another
//! watcher, or from before the watcher's epoch (its queue overflowed, its folder was
//! watched anew), are answered `unknown`.
//!
//! When the watcher cannot say (another watcher since the token, a queue that
//! overflowed, a memory folder replaced or moved, a folder that is not the one the
//! asker sees), the command scans as before; so it does when no watcher runs, or its
//! socket is not what it should be (not a socket, or not made by the index folder's
//! owner; links are not followed). A watcher vouches only on local file systems whose
//! changes inotify sees (ext4, xfs, btrfs, tmpfs, …). On NFS, SMB or FUSE, where another
//! machine writes unseen, it does not take the part, but still watches: the writes made
//! on this machine wake its loop at once, and the others are caught by the loop's
//! periodic reconcile, which scans. What inotify misses even on a local file system (a
//! write through a hard link outside `memory/`, or through a shared memory map) is
//! caught the same way. `docs/internals/index.md` has the design and its measurements.

#[cfg(target_os = "linux")]
mod state;
#[cfg(target_os = "linux")]
mod watcher;

#[cfg(target_os = "linux")]
pub use watcher::Watcher;

use std::path::Path;

/// The socket a watcher answers on, in the index folder.
pub const SOCKET: &str = "vouch.sock";
/// The lock that makes one process per workspace the watcher that answers.
pub const LOCK: &str = "vouch.lock";

/// Why a long-running loop woke.
#[derive(Debug, PartialEq, Eq)]
pub enum Wake {
    /// Files changed (once the folder was quiet for a moment).
    Changed,
    /// Nothing happened for the whole interval: time to reconcile anyway, since
    /// watchers miss events (editors that rename, network file systems, sleep).
    Tick,
    /// The watcher stopped.
    Closed,
}

/// Who answered [`ask`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Asked {
    /// This process's own watcher, in memory.
    Here,
    /// Another process's, on the socket.
    Socket,
}

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
/// `memory` since `since`: this process's own, in memory, when it is the one that
/// answers for the workspace; else the one on the socket. `None` when no watcher answers
/// (none runs, its socket is not a socket made by the index folder's owner, it is
/// stopped or too slow, it watches another folder than `memory`): the caller scans.
#[cfg(target_os = "linux")]
pub fn ask(index_dir: &Path, memory: &Path, since: Option<Token>) -> Option<(Answer, Asked)> {
    if let Some(here) = state::ask_here(index_dir, memory, since) {
        return here.map(|answer| (answer, Asked::Here));
    }
    ask_socket(index_dir, memory, since).map(|answer| (answer, Asked::Socket))
}

/// [`ask`] on the socket, as another process asks.
#[cfg(target_os = "linux")]
fn ask_socket(index_dir: &Path, memory: &Path, since: Option<Token>) -> Option<Answer> {
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
pub fn ask(_index_dir: &Path, _memory: &Path, _since: Option<Token>) -> Option<(Answer, Asked)> {
    None
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
