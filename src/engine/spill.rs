//! An import's spill: its rendered entries, one file per day file, in a temporary
//! directory under `.mem7/`, and their append to the day files, all or nothing.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::core::Event;
use crate::error::{Error, Result};
use crate::index::ImportCheck;
use crate::store::{FileStat, Workspace};

/// The rendered entries of an import, one file per day file, in a temporary directory
/// under `.mem7/` that is deleted when this is dropped.
pub(super) struct Spill {
    dir: tempfile::TempDir,
    /// Day file → what was planned for it.
    pub(super) files: BTreeMap<String, Planned>,
    /// The spill file being written (records come in time order, so mostly one).
    current: Option<(String, BufWriter<File>)>,
    /// Whether every entry was planned as the catch-up will read it (see `staged_event`).
    pub(super) exact: bool,
}

/// What an import planned for one day file.
pub(super) struct Planned {
    /// The line the next entry's heading will have once the spill is appended.
    next_line: u32,
    /// The entries planned so far.
    pub(super) check: ImportCheck,
}

impl Spill {
    pub(super) fn new(index_dir: &Path) -> Result<Spill> {
        let dir = tempfile::Builder::new()
            .prefix(crate::store::SPILL_PREFIX)
            .tempdir_in(index_dir)
            .map_err(|e| Error::io(index_dir, e))?;
        Ok(Spill {
            dir,
            files: BTreeMap::new(),
            current: None,
            exact: true,
        })
    }

    pub(super) fn path(&self, file: &str) -> PathBuf {
        self.dir.path().join(file.replace('/', "_"))
    }

    /// The line the next entry of `file` will have once appended: after the lines the
    /// day file has now and the blank line `Workspace::append_from` puts first (the same
    /// rule: none after a blank line, one after a line feed, else two), then after the
    /// entries spilled before it, each followed by a blank line.
    pub(super) fn next_line(&mut self, ws: &Workspace, file: &str) -> Result<u32> {
        if let Some(p) = self.files.get(file) {
            return Ok(p.next_line);
        }
        let mut first = 1;
        if ws.length(file)?.is_some() {
            let mut buf = Vec::new();
            match ws.read_into(file, &mut buf) {
                Ok(text) => {
                    let text = text.as_bytes();
                    let lines = text.iter().filter(|b| **b == b'\n').count();
                    let sep = if text.is_empty() || text.ends_with(b"\n\n") || text == b"\n" {
                        0
                    } else if text.ends_with(b"\n") {
                        1
                    } else {
                        2
                    };
                    first = u32::try_from(lines + sep + 1).unwrap_or(u32::MAX);
                }
                // Not readable as a day file (the append will say why, and undo the
                // import): nothing planned here is recorded as planned.
                Err(_) => self.exact = false,
            }
        }
        self.files.insert(
            file.to_string(),
            Planned {
                next_line: first,
                check: ImportCheck::default(),
            },
        );
        Ok(first)
    }

    /// Adds an entry (planned as `ev`, at [`Spill::next_line`]) to `file`'s spill,
    /// entries separated by a blank line as in a memory file.
    pub(super) fn write(&mut self, file: &str, text: &str, ev: &Event) -> Result<()> {
        if self.current.as_ref().is_none_or(|(f, _)| f != file) {
            self.finish()?;
            let path = self.path(file);
            let f = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)
                .map_err(|e| Error::io(&path, e))?;
            self.current = Some((file.to_string(), BufWriter::with_capacity(1 << 16, f)));
        }
        let path = self.dir.path();
        let planned = self.files.get_mut(file).expect("next_line was asked first");
        let (_, w) = self.current.as_mut().expect("opened above");
        if planned.check.entries > 0 {
            w.write_all(b"\n").map_err(|e| Error::io(path, e))?;
        }
        w.write_all(text.as_bytes())
            .map_err(|e| Error::io(path, e))?;
        planned.check.add(ev);
        let lines = text.bytes().filter(|b| *b == b'\n').count() + 1;
        planned.next_line = planned
            .next_line
            .saturating_add(u32::try_from(lines).unwrap_or(u32::MAX));
        Ok(())
    }

    /// Flushes the spill file being written.
    pub(super) fn finish(&mut self) -> Result<()> {
        if let Some((_, mut w)) = self.current.take() {
            w.flush().map_err(|e| Error::io(self.dir.path(), e))?;
        }
        Ok(())
    }
}

/// Appends each spill file to its day file (in name order), all or nothing: when an
/// append fails (a full disk), every file this import appended to goes back to its
/// length before it, so a rerun starts clean. Returns each file's fingerprint after its
/// append, with what was planned for it.
pub(super) fn append_spill(ws: &Workspace, spill: &Spill) -> Result<Vec<(FileStat, ImportCheck)>> {
    let mut appended: Vec<(&String, Option<u64>)> = Vec::new();
    let mut done = Vec::new();
    for (file, planned) in &spill.files {
        let before = ws.length(file)?;
        appended.push((file, before));
        let path = spill.path(file);
        let result = File::open(&path)
            .map_err(|e| Error::io(&path, e))
            .and_then(|mut f| ws.append_from(file, &mut f));
        match result {
            Ok(a) => done.push((a.stat, planned.check)),
            Err(e) => {
                let undone = appended
                    .iter()
                    .try_for_each(|(f, len)| ws.roll_back(f, *len));
                return Err(match undone {
                    Ok(()) => Error::internal(
                        format!("{e}; the import was undone: no record was written"),
                        "make room (a full disk?) and run the same import again",
                    ),
                    Err(undo) => Error::internal(
                        format!("{e}; undoing the import failed too ({undo})"),
                        "the memory files may end with part of the import: `mem7 verify` names it; make room and run the import again (records already written are skipped)",
                    ),
                });
            }
        }
    }
    Ok(done)
}
