//! The watcher that answers [`super::ask`]: inotify on the memory folder and a Unix
//! socket in `.mem7/`, served by one thread that waits on both.
//!
//! Every question is answered after reading inotify's queue to its end (the queue is
//! non-blocking), so an event queued before the question arrived is counted in it: a
//! write queues its event before the `write` call returns, and the asker only asks once
//! the writes it must see have returned.

use std::collections::HashMap;
use std::fs::{self, File};
use std::io::{BufRead, BufReader, Read, Write};
use std::mem::MaybeUninit;
use std::os::fd::OwnedFd;
use std::os::unix::fs::FileTypeExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use rustix::event::{PollFd, PollFlags, poll};
use rustix::fs::inotify::{self, CreateFlags, ReadFlags, WatchFlags};
use rustix::io::Errno;

use super::{Answer, Folder, LOCK, SOCKET, Token};
use crate::error::{Error, Result};
use crate::store::{MEMORY_DIR, Workspace, is_day_file_name};

/// What changes a day file's size, mtime or presence: a write (`MODIFY`, truncation
/// included), `touch` or a change of mode (`ATTRIB`), a file made, removed or renamed
/// in or out; and the folder itself removed or renamed.
fn watched() -> WatchFlags {
    WatchFlags::MODIFY
        | WatchFlags::ATTRIB
        | WatchFlags::CLOSE_WRITE
        | WatchFlags::CREATE
        | WatchFlags::DELETE
        | WatchFlags::MOVED_FROM
        | WatchFlags::MOVED_TO
        | WatchFlags::DELETE_SELF
        | WatchFlags::MOVE_SELF
        | WatchFlags::ONLYDIR
        | WatchFlags::DONT_FOLLOW
}

/// Answers for one workspace's memory folder while it lives; dropping it stops the
/// thread and removes the socket.
pub struct Voucher {
    socket: PathBuf,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    _lock: File,
}

impl Voucher {
    /// Starts answering for `ws`, unless another process already does (`Ok(None)`).
    /// An error (no inotify left, a socket path too long for the system) leaves start-ups
    /// scanning, as without a watcher; the caller says so and carries on.
    pub fn start(ws: &Workspace) -> Result<Option<Voucher>> {
        let dir = ws.index_dir()?;
        let lock_path = dir.join(LOCK);
        let lock = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|e| Error::io(&lock_path, e))?;
        match lock.try_lock() {
            Ok(()) => {}
            Err(fs::TryLockError::WouldBlock) => return Ok(None),
            Err(fs::TryLockError::Error(e)) => return Err(Error::io(&lock_path, e)),
        }
        let socket = dir.join(SOCKET);
        // With the lock held, a socket here is a stale one from a watcher that died.
        match fs::symlink_metadata(&socket) {
            Ok(meta) if meta.file_type().is_socket() => {
                fs::remove_file(&socket).map_err(|e| Error::io(&socket, e))?;
            }
            Ok(_) => {
                return Err(Error::input(
                    format!("{} is not a socket", socket.display()),
                    "remove it: mem7 makes it when a watcher starts",
                ));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io(&socket, e)),
        }
        let memory = ws.root().join(MEMORY_DIR);
        let fail = |e: std::io::Error| Error::io(&memory, e);
        if let Some(kind) = unwatchable(&memory).map_err(fail)? {
            return Err(Error::input(
                format!(
                    "{} is on a file system ({kind}) whose changes inotify may not see (another machine's writes, a FUSE or network mount)",
                    memory.display()
                ),
                "nothing to do: start-ups check every day file, as without a watcher",
            ));
        }
        let queue = inotify::init(CreateFlags::NONBLOCK | CreateFlags::CLOEXEC)
            .map_err(|e| fail(e.into()))?;
        let (wd, folder) = add_watch(&queue, &memory).map_err(fail)?;
        let listener = UnixListener::bind(&socket).map_err(|e| Error::io(&socket, e))?;
        listener
            .set_nonblocking(true)
            .map_err(|e| Error::io(&socket, e))?;
        let state = State {
            instance: instance(),
            seq: 1,
            epoch: 1,
            changed: HashMap::new(),
            wd: Some(wd),
            folder,
            memory,
            queue,
        };
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let stop = Arc::clone(&stop);
            let path = socket.clone();
            std::thread::Builder::new()
                .name("mem7-vouch".into())
                .spawn(move || serve(state, &listener, &stop, &path))
                .map_err(|e| Error::io(&socket, e))?
        };
        Ok(Some(Voucher {
            socket,
            stop,
            thread: Some(thread),
            _lock: lock,
        }))
    }
}

impl Drop for Voucher {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wakes the thread from its wait (it sees `stop` and leaves, removing the
        // socket); if the connection fails, the thread has already gone.
        if UnixStream::connect(&self.socket).is_ok()
            && let Some(thread) = self.thread.take()
        {
            let _joined = thread.join();
        }
    }
}

/// The file systems whose every change to a file goes through this kernel, so that
/// inotify sees it (`statfs` magic numbers): ext2/3/4, xfs, btrfs, tmpfs, f2fs, zfs,
/// bcachefs, and overlayfs (writes through the overlay; its lower layer must not change
/// underneath, as the kernel requires anyway).
const LOCAL: &[(u64, &str)] = &[
    (0xEF53, "ext4"),
    (0x5846_5342, "xfs"),
    (0x9123_683E, "btrfs"),
    (0x0102_1994, "tmpfs"),
    (0xF2F5_2010, "f2fs"),
    (0x2FC1_2FC1, "zfs"),
    (0xCA45_1A4E, "bcachefs"),
    (0x794C_7630, "overlayfs"),
];

/// `None` when `memory` is on a file system in [`LOCAL`]; else its magic number, as a
/// name for the message.
fn unwatchable(memory: &Path) -> std::io::Result<Option<String>> {
    let kind = rustix::fs::statfs(memory)?.f_type as u64 & 0xFFFF_FFFF;
    Ok((!LOCAL.iter().any(|(magic, _)| *magic == kind)).then(|| format!("type {kind:#x}")))
}

/// A random instance number: tokens of an earlier watcher are never taken for this one's.
fn instance() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u32(std::process::id());
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    h.finish()
}

/// Watches `memory` and says which folder was watched: the folder found before and
/// after the watch was added must be the same one, or nothing is vouched for.
fn add_watch(queue: &OwnedFd, memory: &Path) -> std::io::Result<(i32, Folder)> {
    let before = Folder::of(&fs::symlink_metadata(memory)?);
    let wd = inotify::add_watch(queue, memory, watched())?;
    let after = Folder::of(&fs::symlink_metadata(memory)?);
    if before != after {
        // The watch's removal is reported as an event, which `drain` ignores (its
        // descriptor is no longer ours); a failure leaves nothing to undo.
        let _gone = inotify::remove_watch(queue, wd);
        return Err(std::io::Error::other(
            "the memory folder was replaced while watched",
        ));
    }
    Ok((wd, after))
}

/// What the thread knows.
struct State {
    instance: u64,
    /// How many times events were read (a token's `seq` is this when it was handed out).
    seq: u64,
    /// Tokens older than this cannot be answered (the queue overflowed, the folder was
    /// watched anew).
    epoch: u64,
    /// Each day file's name with the `seq` at which it last had an event.
    changed: HashMap<String, u64>,
    /// The watch, while the folder it watches is still `memory`.
    wd: Option<i32>,
    folder: Folder,
    memory: PathBuf,
    queue: OwnedFd,
}

impl State {
    /// Reads every queued event.
    fn drain(&mut self) {
        let mut buf = [MaybeUninit::<u8>::uninit(); 8192];
        let mut reader = inotify::Reader::new(&self.queue, &mut buf);
        let mut events: Vec<(i32, ReadFlags, Option<String>)> = Vec::new();
        let mut broken = false;
        loop {
            match reader.next() {
                Ok(e) => events.push((
                    e.wd(),
                    e.events(),
                    e.file_name().map(|n| n.to_string_lossy().into_owned()),
                )),
                Err(Errno::AGAIN) => break,
                Err(Errno::INTR) => continue,
                // A queue that cannot be read vouches for nothing from here on.
                Err(_) => {
                    broken = true;
                    break;
                }
            }
        }
        if events.is_empty() && !broken {
            return;
        }
        self.seq += 1;
        for (wd, flags, name) in events {
            if flags.contains(ReadFlags::QUEUE_OVERFLOW) {
                self.epoch = self.seq;
                continue;
            }
            if Some(wd) != self.wd {
                continue;
            }
            let gone = ReadFlags::DELETE_SELF
                | ReadFlags::MOVE_SELF
                | ReadFlags::IGNORED
                | ReadFlags::UNMOUNT;
            if flags.intersects(gone) {
                self.lose();
                continue;
            }
            if let Some(name) = name
                && is_day_file_name(&name)
            {
                self.changed.insert(name, self.seq);
            }
        }
        if broken {
            self.lose();
        }
    }

    /// The folder watched is no longer `memory` (or its events cannot be read).
    fn lose(&mut self) {
        if let Some(wd) = self.wd.take() {
            // Removing a watch the kernel already dropped fails; either way it is gone.
            let _gone = inotify::remove_watch(&self.queue, wd);
        }
    }

    /// Watches the folder now at `memory` again, after it was replaced; every earlier
    /// token becomes unanswerable.
    fn rewatch(&mut self) {
        if let Ok((wd, folder)) = add_watch(&self.queue, &self.memory) {
            self.seq += 1;
            self.epoch = self.seq;
            self.wd = Some(wd);
            self.folder = folder;
        }
    }

    fn answer(&mut self, since: Option<Token>) -> Answer {
        self.drain();
        if self.wd.is_none() {
            self.rewatch();
        }
        let now = Token {
            instance: self.instance,
            seq: self.seq,
        };
        match since {
            Some(t)
                if self.wd.is_some()
                    && t.instance == self.instance
                    && (self.epoch..=self.seq).contains(&t.seq) =>
            {
                Answer::Changed {
                    names: self
                        .changed
                        .iter()
                        .filter(|(_, seq)| **seq > t.seq)
                        .map(|(name, _)| name.clone())
                        .collect(),
                    now,
                }
            }
            _ => Answer::Unknown { now },
        }
    }
}

/// The thread: waits for events or questions until told to stop, then removes the
/// socket (a failure to wait, which should not happen, stops it the same way: askers
/// then scan).
fn serve(mut state: State, listener: &UnixListener, stop: &AtomicBool, socket: &Path) {
    loop {
        let (events, asked) = {
            let mut fds = [
                PollFd::new(&state.queue, PollFlags::IN),
                PollFd::new(listener, PollFlags::IN),
            ];
            match poll(&mut fds, None) {
                Ok(_) => {}
                Err(Errno::INTR) => continue,
                Err(_) => break,
            }
            (!fds[0].revents().is_empty(), !fds[1].revents().is_empty())
        };
        if stop.load(Ordering::SeqCst) {
            break;
        }
        if events {
            state.drain();
        }
        if asked {
            loop {
                match listener.accept() {
                    // A question that cannot be read or answered is the asker's loss: it
                    // scans instead.
                    Ok((stream, _)) => {
                        let _answered = reply(&mut state, stream);
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                    // No descriptor left (or worse): stop answering rather than wake
                    // for the same question forever; askers scan.
                    Err(_) => {
                        let _removed = fs::remove_file(socket);
                        return;
                    }
                }
            }
        }
    }
    // Only this watcher's own socket: a later one's lock makes its own.
    let _removed = fs::remove_file(socket);
}

/// Reads one question (`since TOKEN` or `since -`) and writes the answer.
fn reply(state: &mut State, stream: UnixStream) -> std::io::Result<()> {
    stream.set_nonblocking(false)?;
    stream.set_read_timeout(Some(Duration::from_millis(250)))?;
    stream.set_write_timeout(Some(Duration::from_millis(250)))?;
    // A question is one short line.
    let mut line = String::new();
    BufReader::new((&stream).take(512)).read_line(&mut line)?;
    let since = line
        .trim_end()
        .strip_prefix("since ")
        .ok_or_else(|| std::io::Error::other("not a question"))?;
    let answer = state.answer(Token::parse(since));
    let mut out = format!(
        "folder {}\nnow {}\n",
        state.folder.to_text(),
        answer.now().to_text()
    );
    match &answer {
        Answer::Unknown { .. } => out.push_str("unknown\n"),
        Answer::Changed { names, .. } => {
            out.push_str(&format!("changed {}\n", names.len()));
            for name in names {
                out.push_str(name);
                out.push('\n');
            }
            out.push_str("end\n");
        }
    }
    (&stream).write_all(out.as_bytes())
}
