//! The process's one watcher on a workspace's memory folder: one inotify queue and one
//! thread that wakes the long-running loop when files change and, while this process
//! holds `vouch.lock`, answers other processes on the Unix socket in `.mem7/`. This
//! process's own questions are answered from the same state, in memory
//! ([`super::state::ask_here`]).
//!
//! Every question is answered after reading inotify's queue to its end (the queue is
//! non-blocking), so an event queued before the question arrived is counted in it: a
//! write queues its event before the `write` call returns, and the asker only asks once
//! the writes it must see have returned.

use std::fs::{self, File};
use std::io::{BufRead, BufReader, Read, Write};
use std::os::fd::OwnedFd;
use std::os::unix::fs::FileTypeExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::thread::JoinHandle;
use std::time::Duration;

use rustix::event::{EventfdFlags, PollFd, PollFlags, Timespec, eventfd, poll};
use rustix::fs::inotify::{self, CreateFlags};
use rustix::io::Errno;

use super::state::{Shared, State, add_watch, register};
use super::{Answer, Folder, LOCK, SOCKET, Token, Wake};
use crate::error::{Error, Result};
use crate::store::{MEMORY_DIR, Workspace};

/// How often a memory folder that is gone (removed, or replaced and not yet back) is
/// looked for again.
const REWATCH_EVERY: Timespec = Timespec {
    tv_sec: 0,
    tv_nsec: 500_000_000,
};

/// Watches one workspace's memory folder while it lives; dropping it stops the thread
/// and, if it answered for the workspace, removes the socket and lets go of the lock.
pub struct Watcher {
    shared: Arc<Shared>,
    index_dir: PathBuf,
    /// Why this process may not answer for the workspace (its file system), said once.
    unvouchable: Option<Error>,
    /// The part was taken or could not be: nothing more is tried.
    settled: bool,
    /// Rung to wake the thread: a socket handed over, or time to stop.
    bell: Arc<OwnedFd>,
    handover: Sender<Serving>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

/// The part of the workspace's watcher: its lock and the socket it answers on. Dropping
/// it removes the socket before the lock is let go, so a later watcher's socket is never
/// removed.
struct Serving {
    listener: UnixListener,
    socket: PathBuf,
    _lock: File,
}

impl Drop for Serving {
    fn drop(&mut self) {
        let _removed = fs::remove_file(&self.socket);
    }
}

impl Watcher {
    /// Starts watching `ws`'s memory folder (which must exist). An error (no inotify
    /// left, the folder gone) is the caller's: the loop cannot wake without it. Whether
    /// this process also answers for the workspace is [`Watcher::keep_up`]'s.
    pub fn start(ws: &Workspace) -> Result<Watcher> {
        let index_dir = ws.index_dir()?;
        let memory = ws.root().join(MEMORY_DIR);
        let fail = |e: std::io::Error| {
            Error::internal(
                format!("cannot watch {}: {e}", memory.display()),
                "check that the directory exists and that the system's file-watch limit is not reached",
            )
        };
        let queue = inotify::init(CreateFlags::NONBLOCK | CreateFlags::CLOEXEC)
            .map_err(|e| fail(e.into()))?;
        let (wd, folder) = add_watch(&queue, &memory).map_err(fail)?;
        let queue = Arc::new(queue);
        let bell = Arc::new(
            eventfd(0, EventfdFlags::CLOEXEC | EventfdFlags::NONBLOCK)
                .map_err(|e| fail(e.into()))?,
        );
        let unvouchable = match unwatchable(&memory) {
            Ok(None) => None,
            Ok(Some(kind)) => Some(Error::input(
                format!(
                    "{} is on a file system ({kind}) whose changes inotify may not see (another machine's writes, a FUSE or network mount)",
                    memory.display()
                ),
                "nothing to do: start-ups check every day file, as without a watcher",
            )),
            Err(e) => Some(Error::io(&memory, e)),
        };
        let key = fs::symlink_metadata(&index_dir).map_err(|e| Error::io(&index_dir, e))?;
        let shared = Arc::new(Shared::new(State::new(
            Arc::clone(&queue),
            memory,
            wd,
            folder,
        )));
        let (handover, handed) = channel();
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (shared, bell, stop) = (Arc::clone(&shared), Arc::clone(&bell), Arc::clone(&stop));
            std::thread::Builder::new()
                .name("mem7-watcher".into())
                .spawn(move || run(&shared, &queue, &bell, &handed, &stop))
                .map_err(|e| Error::io("<thread>", e))?
        };
        register(Folder::of(&key), &shared);
        Ok(Watcher {
            shared,
            index_dir,
            unvouchable,
            settled: false,
            bell,
            handover,
            stop,
            thread: Some(thread),
        })
    }

    /// Waits for the next change in the memory folder (debounced), at most `interval`.
    pub fn next(&self, interval: Duration) -> Wake {
        self.shared.next(interval)
    }

    /// Takes the part of the workspace's watcher if no process has it (tried again at
    /// each call, so that one takes over once the process that had it is gone). The
    /// first failure is returned, to be said once; after it, nothing is tried again.
    pub fn keep_up(&mut self) -> Option<Error> {
        if self.settled {
            return None;
        }
        if let Some(e) = self.unvouchable.take() {
            self.settled = true;
            return Some(e);
        }
        match take_part(&self.index_dir) {
            Ok(None) => None,
            Ok(Some(serving)) => {
                self.settled = true;
                let sent = self.handover.send(serving);
                // A thread that has ended drops the part with the message.
                if sent.is_ok() {
                    self.shared.with(|s| s.vouching = !s.closed);
                    ring(&self.bell);
                }
                None
            }
            Err(e) => {
                self.settled = true;
                Some(e)
            }
        }
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        ring(&self.bell);
        if let Some(thread) = self.thread.take() {
            let _joined = thread.join();
        }
    }
}

/// Wakes the thread from its wait.
fn ring(bell: &OwnedFd) {
    // The counter cannot overflow from these few rings; a failure leaves the thread to
    // its next event.
    let _rung = rustix::io::write(bell, &1u64.to_ne_bytes());
}

/// Takes `vouch.lock` and makes the socket, unless another process has the lock
/// (`Ok(None)`). An error (a socket path too long for the system, something else where
/// the socket goes) leaves start-ups scanning, as without a watcher.
fn take_part(dir: &Path) -> Result<Option<Serving>> {
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
    let listener = UnixListener::bind(&socket).map_err(|e| Error::io(&socket, e))?;
    let serving = Serving {
        listener,
        socket,
        _lock: lock,
    };
    serving
        .listener
        .set_nonblocking(true)
        .map_err(|e| Error::io(&serving.socket, e))?;
    Ok(Some(serving))
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

/// The thread: waits for events, questions or its bell until told to stop (a failure
/// to wait, which should not happen, stops it the same way: the loop ends, askers
/// scan). A folder that is gone is looked for every [`REWATCH_EVERY`].
fn run(
    shared: &Shared,
    queue: &OwnedFd,
    bell: &OwnedFd,
    handed: &Receiver<Serving>,
    stop: &AtomicBool,
) {
    let mut serving: Option<Serving> = None;
    loop {
        let watching = shared.with(|s| s.watching());
        let (events, rung, asked) = {
            let mut fds = vec![
                PollFd::new(queue, PollFlags::IN),
                PollFd::new(bell, PollFlags::IN),
            ];
            if let Some(part) = &serving {
                fds.push(PollFd::new(&part.listener, PollFlags::IN));
            }
            match poll(&mut fds, (!watching).then_some(&REWATCH_EVERY)) {
                Ok(_) => {}
                Err(Errno::INTR) => continue,
                Err(_) => break,
            }
            let ready = |i: usize| fds.get(i).is_some_and(|f| !f.revents().is_empty());
            (ready(0), ready(1), ready(2))
        };
        if stop.load(Ordering::SeqCst) {
            break;
        }
        if rung {
            let _read = rustix::io::read(bell, &mut [0u8; 8]);
            while let Ok(part) = handed.try_recv() {
                serving = Some(part);
            }
        }
        if events || !watching {
            shared.with(|s| {
                s.drain();
                if !s.watching() {
                    s.rewatch();
                }
            });
        }
        if asked && let Some(part) = &serving {
            loop {
                match part.listener.accept() {
                    // A question that cannot be read or answered is the asker's loss: it
                    // scans instead.
                    Ok((stream, _)) => {
                        let _answered = reply(shared, stream);
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                    // No descriptor left (or worse): stop answering rather than wake
                    // for the same question forever; askers scan, the loop still wakes.
                    Err(_) => {
                        shared.with(|s| s.vouching = false);
                        serving = None;
                        break;
                    }
                }
            }
        }
    }
    shared.with(State::close);
    // Only this watcher's own socket is removed (a later one's lock makes its own).
    drop(serving);
}

/// Reads one question (`since TOKEN` or `since -`) and writes the answer.
fn reply(shared: &Shared, stream: UnixStream) -> std::io::Result<()> {
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
    let (answer, folder) = shared.with(|s| (s.answer(Token::parse(since)), s.folder));
    let mut out = format!(
        "folder {}\nnow {}\n",
        folder.to_text(),
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
