//! Reading a file of the workspace for a client (`memory_get`): the path checks that keep
//! a request inside the workspace and away from what is not memory.

use std::path::{Component, Path, PathBuf};

use super::Workspace;
use crate::error::{Error, Result};

impl Workspace {
    /// The text of the file at `path`, relative to the workspace root. Refused: an empty
    /// path, one that leaves the workspace (absolute, `..`, or a symlink leading out),
    /// hidden paths (`.git/`, `.mem7/`, dotfiles: git's config can hold credentials),
    /// directories and files that are not UTF-8 text.
    pub fn read_visible(&self, path: &str) -> Result<String> {
        let refuse = |why: &str| {
            Error::input(
                format!("path {path:?} is refused: {why}"),
                "give a path relative to the workspace, like memory/2026-04-05.md (a version's `file`)",
            )
        };
        let rel = Path::new(path);
        if path.is_empty() {
            return Err(refuse("it is empty"));
        }
        if rel.is_absolute()
            || rel
                .components()
                .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir))
        {
            return Err(refuse("it leaves the workspace"));
        }
        if rel.components().any(|c| match c {
            Component::Normal(name) => name.to_string_lossy().starts_with('.'),
            _ => false,
        }) {
            return Err(refuse(
                "hidden files (.git, .mem7, dotfiles) are not memory",
            ));
        }
        let root = self.root();
        let root = root.canonicalize().map_err(|e| Error::io(root, e))?;
        let full: PathBuf = root.join(rel);
        let real = full.canonicalize().map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => Error::input(
                format!("no file {path} in the workspace"),
                "memory files are memory/YYYY-MM-DD.md; memory_history gives each version's file",
            ),
            _ => Error::io(&full, e),
        })?;
        // A symlink inside the workspace must not lead out of it either.
        if !real.starts_with(&root) {
            return Err(refuse("it leads outside the workspace"));
        }
        if real.is_dir() {
            return Err(refuse("it is a directory"));
        }
        let bytes = std::fs::read(&real).map_err(|e| Error::io(&real, e))?;
        String::from_utf8(bytes).map_err(|_| refuse("it is not a text file"))
    }
}
