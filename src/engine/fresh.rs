//! Whether the index reflects the memory files: a resident watcher's word where one
//! answers (`store::vouch`: this process's own in memory, else another's on its socket),
//! checked against the rows of the files it names; else one `stat` per day file against
//! the index's stamp.

use crate::error::Result;
use crate::index::Index;
use crate::store::vouch::{self, Answer, Asked};
use crate::store::{MEMORY_DIR, Workspace};

/// How a check that the index is current went (`MEM7_TRACE=startup` prints it, in the
/// words of `front::said::fresh_check`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FreshCheck {
    /// A watcher named the files with events since the index's token; only those
    /// (`checked`) were compared with their rows. `here`: this process's own watcher,
    /// asked in memory (else another process's, on its socket).
    Vouched {
        checked: usize,
        fresh: bool,
        here: bool,
    },
    /// Every day file was `stat`ed: no watcher answered (`watcher` false), or it could
    /// not say what changed since the token (`watcher` true; its new token is recorded
    /// when the files match).
    Scanned {
        files: usize,
        watcher: bool,
        fresh: bool,
    },
}

impl FreshCheck {
    /// Whether the index reflects the files.
    pub fn fresh(self) -> bool {
        match self {
            FreshCheck::Vouched { fresh, .. } | FreshCheck::Scanned { fresh, .. } => fresh,
        }
    }
}

/// Named files past this many are `stat`ed, then the watcher's new token is recorded,
/// so that the next start-up is asked about fewer.
const RECORD_AFTER: usize = 64;

/// Checks that `index` reflects `ws`'s memory files; by a watcher's word when
/// `trust_watcher` and one answers, else one `stat` per day file.
pub(super) fn check(ws: &Workspace, index: &Index, trust_watcher: bool) -> Result<FreshCheck> {
    let dir = ws.index_dir()?;
    let asked = if trust_watcher {
        vouch::ask(&dir, &ws.root().join(MEMORY_DIR), index.vouch_token()?)
    } else {
        None
    };
    let by = asked.as_ref().map(|(_, by)| *by);
    let asked = asked.map(|(answer, _)| answer);
    if let Some(Answer::Changed { names, now }) = &asked {
        let mut fresh = true;
        for name in names {
            let name = format!("{MEMORY_DIR}/{name}");
            let on_disk = ws.stat_day(&name)?.map(|s| (s.size, s.mtime_ns));
            if on_disk != index.file_fingerprint(&name)? {
                fresh = false;
                break;
            }
        }
        if fresh && names.len() > RECORD_AFTER {
            index.record_vouch(*now);
        }
        return Ok(FreshCheck::Vouched {
            checked: names.len(),
            fresh,
            here: by == Some(Asked::Here),
        });
    }
    let scan = ws.scan()?;
    let fresh = index.is_fresh(&scan)?;
    if let Some(Answer::Unknown { now }) = asked
        && fresh
    {
        // The token was handed out before the scan began, and every file matched its
        // row after: any change since is in the watcher's next answer.
        index.record_vouch(now);
    }
    Ok(FreshCheck::Scanned {
        files: scan.len(),
        watcher: asked.is_some(),
        fresh,
    })
}
