//! What the process's one watcher knows, shared between its thread, the loop it wakes
//! and this process's own questions: the inotify queue, each day file's last event, the
//! tokens it can still answer for, and the change not yet handed to the loop.
//!
//! Whoever reads the queue (the thread when it becomes readable, a question before it is
//! answered) records what it read here, under one mutex, and stirs the loop: an event
//! read by a question still wakes the loop.

use std::collections::HashMap;
use std::fs;
use std::mem::MaybeUninit;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};

use rustix::fs::inotify::{self, ReadFlags, WatchFlags};
use rustix::io::Errno;

use super::{Answer, Folder, Token, Wake};
use crate::store::is_day_file_name;

/// How long the folder must be quiet after an event before the loop wakes: an editor's
/// save or a `git pull` is one wake, not one per write.
const DEBOUNCE: Duration = Duration::from_millis(200);
/// The longest a change waits for quiet: under writes that never pause the loop still
/// wakes this often.
const DEBOUNCE_CAP: Duration = Duration::from_secs(1);

/// What changes a day file's size, mtime or presence: a write (`MODIFY`, truncation
/// included), `touch` or a change of mode (`ATTRIB`), a file made, removed or renamed
/// in or out; and the folder itself removed or renamed. Opening or reading a file is
/// not watched: a reader wakes nobody.
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

/// Watches `memory` and says which folder was watched: the folder found before and
/// after the watch was added must be the same one, or nothing is vouched for.
pub(super) fn add_watch(queue: &OwnedFd, memory: &Path) -> std::io::Result<(i32, Folder)> {
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

/// The state and the bell the loop waits on.
pub(super) struct Shared {
    state: Mutex<State>,
    stirred: Condvar,
}

impl Shared {
    pub(super) fn new(state: State) -> Shared {
        Shared {
            state: Mutex::new(state),
            stirred: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // Nothing here panics with the lock held; if something did, the state is still
        // whole (every change is one assignment), so it is used as it is.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs `f` on the state, then wakes the loop if `f` left it something to do.
    pub(super) fn with<T>(&self, f: impl FnOnce(&mut State) -> T) -> T {
        let mut state = self.lock();
        let before = (state.pending, state.closed);
        let out = f(&mut state);
        if (state.pending, state.closed) != before {
            self.stirred.notify_all();
        }
        out
    }

    /// Waits for a change (debounced), at most `interval` when none comes.
    pub(super) fn next(&self, interval: Duration) -> Wake {
        let deadline = Instant::now() + interval;
        let mut state = self.lock();
        loop {
            let now = Instant::now();
            let until = match state.pending {
                Some((first, last)) => {
                    let due = (last + DEBOUNCE).min(first + DEBOUNCE_CAP);
                    if now >= due {
                        state.pending = None;
                        return Wake::Changed;
                    }
                    due
                }
                None if state.closed => return Wake::Closed,
                None if now >= deadline => return Wake::Tick,
                None => deadline,
            };
            state = self
                .stirred
                .wait_timeout(state, until - now)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }
}

/// What the watcher knows.
pub(super) struct State {
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
    pub(super) folder: Folder,
    memory: PathBuf,
    queue: Arc<OwnedFd>,
    /// Whether this process answers for the workspace (it holds the lock, on a file
    /// system whose every change inotify sees): only then is a question answered, in
    /// memory or on the socket.
    pub(super) vouching: bool,
    /// A change not yet handed to the loop: when its first and its last event were read.
    pending: Option<(Instant, Instant)>,
    /// The thread ended: the loop ends too.
    pub(super) closed: bool,
}

impl State {
    pub(super) fn new(queue: Arc<OwnedFd>, memory: PathBuf, wd: i32, folder: Folder) -> State {
        State {
            instance: instance(),
            seq: 1,
            epoch: 1,
            changed: HashMap::new(),
            wd: Some(wd),
            folder,
            memory,
            queue,
            vouching: false,
            pending: None,
            closed: false,
        }
    }

    /// Whether the folder is watched (else the thread tries again now and then).
    pub(super) fn watching(&self) -> bool {
        self.wd.is_some()
    }

    /// Something changed: the loop wakes once the folder is quiet.
    fn stir(&mut self) {
        let now = Instant::now();
        self.pending = Some(self.pending.map_or((now, now), |(first, _)| (first, now)));
    }

    /// Reads every queued event.
    pub(super) fn drain(&mut self) {
        let mut buf = [MaybeUninit::<u8>::uninit(); 8192];
        let mut reader = inotify::Reader::new(&*self.queue, &mut buf);
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
                // Events were lost: nothing earlier can be answered, and the loop must
                // look at every file.
                self.epoch = self.seq;
                self.stir();
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
            // Any file's event wakes the loop (a file that is not a day file is reported
            // by the catch-up); only day files are named in answers.
            self.stir();
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

    /// The folder watched is no longer `memory` (or its events cannot be read): the
    /// loop wakes to look at what is there now.
    fn lose(&mut self) {
        if let Some(wd) = self.wd.take() {
            // Removing a watch the kernel already dropped fails; either way it is gone.
            let _gone = inotify::remove_watch(&*self.queue, wd);
        }
        self.stir();
    }

    /// Watches the folder now at `memory` again, after it was replaced; every earlier
    /// token becomes unanswerable, and the loop wakes to look at the new folder (what
    /// was written to it before the watch was added has no event).
    pub(super) fn rewatch(&mut self) {
        if let Ok((wd, folder)) = add_watch(&self.queue, &self.memory) {
            self.seq += 1;
            self.epoch = self.seq;
            self.wd = Some(wd);
            self.folder = folder;
            self.stir();
        }
    }

    /// What changed since `since`, after reading the queue to its end.
    pub(super) fn answer(&mut self, since: Option<Token>) -> Answer {
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

    /// The watcher ended: nothing more is answered, and the loop ends.
    pub(super) fn close(&mut self) {
        self.vouching = false;
        self.closed = true;
    }
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

/// This process's watchers, by the index folder (device and inode) of the workspace each
/// watches: a question from this process to a workspace it watches is answered here.
static WATCHERS: Mutex<Vec<(Folder, Weak<Shared>)>> = Mutex::new(Vec::new());

fn watchers() -> MutexGuard<'static, Vec<(Folder, Weak<Shared>)>> {
    WATCHERS.lock().unwrap_or_else(|p| p.into_inner())
}

/// Makes `shared` the watcher this process asks about the workspace whose index folder
/// is `index_dir`.
pub(super) fn register(index_dir: Folder, shared: &Arc<Shared>) {
    let mut all = watchers();
    all.retain(|(_, w)| w.strong_count() > 0);
    all.push((index_dir, Arc::downgrade(shared)));
}

/// This process's watcher for the workspace whose index folder is `index_dir`, if any.
pub(super) fn registered(index_dir: &Path) -> Option<Arc<Shared>> {
    // A command that watches nothing (every short-lived one) pays no `lstat` for it.
    if watchers().is_empty() {
        return None;
    }
    let key = Folder::of(&fs::symlink_metadata(index_dir).ok()?);
    watchers()
        .iter()
        .filter(|(folder, _)| *folder == key)
        .find_map(|(_, w)| w.upgrade())
}

/// Answers from this process's own watcher, without the socket: `None` when it does not
/// answer for this workspace (no watcher here, or another process holds the part), else
/// what the socket would say (`Some(None)`: the folder it watches is not `memory`).
pub(super) fn ask_here(
    index_dir: &Path,
    memory: &Path,
    since: Option<Token>,
) -> Option<Option<Answer>> {
    let shared = registered(index_dir)?;
    let (answer, folder) = shared.with(|s| s.vouching.then(|| (s.answer(since), s.folder)))?;
    // The watcher watches the folder it found; this must be the one the asker reads.
    let here = fs::symlink_metadata(memory).ok().map(|m| Folder::of(&m));
    Some((here == Some(folder)).then_some(answer))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustix::fs::inotify::CreateFlags;

    /// A watcher's state on a fresh folder, without its thread: whoever asks reads the
    /// queue, as this process's own questions do.
    fn watched_folder() -> (tempfile::TempDir, PathBuf, Shared) {
        let dir = tempfile::tempdir().unwrap();
        let memory = dir.path().join("memory");
        fs::create_dir(&memory).unwrap();
        let queue = inotify::init(CreateFlags::NONBLOCK | CreateFlags::CLOEXEC).unwrap();
        let (wd, folder) = add_watch(&queue, &memory).unwrap();
        let shared = Shared::new(State::new(Arc::new(queue), memory.clone(), wd, folder));
        (dir, memory, shared)
    }

    #[test]
    fn a_question_reads_the_queue_first_names_day_files_only_and_wakes_the_loop() {
        let (_dir, memory, shared) = watched_folder();
        let first = shared.with(|s| s.answer(None)).now();
        fs::write(memory.join("2026-12-01.md"), "x").unwrap();
        fs::write(memory.join("notes.txt"), "x").unwrap();
        // Asked at once: the writes have returned, so their events are in the answer.
        let answer = shared.with(|s| s.answer(Some(first)));
        assert_eq!(
            answer,
            Answer::Changed {
                names: vec!["2026-12-01.md".into()],
                now: answer.now()
            }
        );
        // The question read the events; the loop is still woken for them, once.
        assert_eq!(shared.next(Duration::from_secs(600)), Wake::Changed);
        assert_eq!(shared.next(Duration::ZERO), Wake::Tick);
        // Nothing since: nothing named.
        let later = shared.with(|s| s.answer(Some(answer.now())));
        assert!(matches!(later, Answer::Changed { ref names, .. } if names.is_empty()));
    }

    #[test]
    fn a_replaced_folder_wakes_the_loop_and_no_earlier_token_is_answered() {
        let (dir, memory, shared) = watched_folder();
        let before = shared.with(|s| s.answer(None)).now();
        fs::rename(&memory, dir.path().join("old")).unwrap();
        fs::create_dir(&memory).unwrap();
        let answer = shared.with(|s| s.answer(Some(before)));
        assert!(matches!(answer, Answer::Unknown { .. }), "{answer:?}");
        assert_eq!(shared.next(Duration::from_secs(600)), Wake::Changed);
        // The new folder is the one watched: its changes are named from here on.
        assert_eq!(
            shared.with(|s| s.folder),
            Folder::of(&fs::symlink_metadata(&memory).unwrap())
        );
        fs::write(memory.join("2026-12-02.md"), "x").unwrap();
        let after = shared.with(|s| s.answer(Some(answer.now())));
        assert!(
            matches!(after, Answer::Changed { ref names, .. } if names == &["2026-12-02.md"]),
            "{after:?}"
        );
    }

    #[test]
    fn another_watchers_token_is_not_answered() {
        let (_dir, _memory, shared) = watched_folder();
        let now = shared.with(|s| s.answer(None)).now();
        let other = Token {
            instance: now.instance ^ 1,
            seq: now.seq,
        };
        assert!(matches!(
            shared.with(|s| s.answer(Some(other))),
            Answer::Unknown { .. }
        ));
    }
}
