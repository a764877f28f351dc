//! Bounded waits: polling until something holds, and reading a child's output lines.

use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How long a wait lasts before it fails: a hang's bound, generous for a loaded machine,
/// never a measure of speed.
pub const PATIENCE: Duration = Duration::from_secs(60);

/// Asks `ok` every 50 ms until it holds (true) or [`PATIENCE`] runs out (false).
pub fn poll(mut ok: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + PATIENCE;
    loop {
        if ok() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Waits until `ok` holds; fails naming `what` when it never does.
pub fn wait_for(what: &str, ok: impl FnMut() -> bool) {
    assert!(poll(ok), "timed out waiting for: {what}");
}

/// The lines of a child's output, read on a thread.
pub fn lines_of(stream: impl std::io::Read + Send + 'static) -> mpsc::Receiver<String> {
    use std::io::BufRead;
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stream)
            .lines()
            .map_while(Result::ok)
        {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// Collects `lines` into `log` until one there matches `what`; fails showing the log
/// when none does.
pub fn wait_for_line(
    lines: &mpsc::Receiver<String>,
    log: &mut Vec<String>,
    what: impl Fn(&str) -> bool,
) {
    let seen = poll(|| {
        log.extend(lines.try_iter());
        log.iter().any(|l| what(l))
    });
    assert!(seen, "no such line in: {log:#?}");
}
