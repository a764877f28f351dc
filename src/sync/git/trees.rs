//! Reading trees and files of commits: several files at once, what changed between two
//! trees, `git status` of some paths, the modes of a tree's entries, the newest commit
//! that touched a path. Nothing here writes.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::process::Stdio;

use super::{BUG, Git, LITERAL, Oid};
use crate::error::{Error, Result};

impl Git {
    /// Reads several files of commits at once (`git cat-file --batch`): the text of
    /// `commit:path` for each request, `None` where the file does not exist.
    pub fn read_files(&self, requests: &[(Oid, String)]) -> Result<Vec<Option<String>>> {
        if requests.is_empty() {
            return Ok(Vec::new());
        }
        let mut input = String::new();
        for (commit, path) in requests {
            input.push_str(&format!("{commit}:{path}\n"));
        }
        let mut child = self
            .command(&["cat-file", "--batch"])
            .stdin(Stdio::piped())
            .spawn()
            .map_err(|e| Error::io("git cat-file", e))?;
        let mut stdin = child.stdin.take();
        let feeder = std::thread::spawn(move || {
            if let Some(s) = stdin.as_mut() {
                let _ = s.write_all(input.as_bytes());
            }
        });
        let mut bytes = Vec::new();
        if let Some(mut stdout) = child.stdout.take() {
            stdout
                .read_to_end(&mut bytes)
                .map_err(|e| Error::io("git cat-file", e))?;
        }
        let _ = feeder.join();
        let status = child.wait().map_err(|e| Error::io("git cat-file", e))?;
        if !status.success() {
            return Err(Error::internal("`git cat-file --batch` failed", BUG));
        }
        let mut out = Vec::with_capacity(requests.len());
        let mut at = 0;
        for _ in requests {
            let Some(nl) = bytes[at..].iter().position(|&b| b == b'\n') else {
                return Err(Error::internal("`git cat-file --batch` stopped early", BUG));
            };
            let header = String::from_utf8_lossy(&bytes[at..at + nl]).into_owned();
            at += nl + 1;
            let parts: Vec<&str> = header.split(' ').collect();
            match parts.as_slice() {
                [_, kind, size] => {
                    let size: usize = size.parse().unwrap_or(0);
                    let end = (at + size).min(bytes.len());
                    let text = String::from_utf8_lossy(&bytes[at..end]).into_owned();
                    at = end + 1; // the line feed after the content
                    out.push((*kind == "blob").then_some(text));
                }
                _ => out.push(None), // `<request> missing`
            }
        }
        Ok(out)
    }

    /// Files that differ between two trees (or commits), under `pathspec` (or anywhere).
    pub fn changed_files(
        &self,
        from: &Oid,
        to: &Oid,
        pathspec: Option<&str>,
    ) -> Result<Vec<String>> {
        let mut args = vec![
            LITERAL,
            "diff-tree",
            "-r",
            "--name-only",
            "-z",
            "--no-renames",
            from.as_str(),
            to.as_str(),
        ];
        if let Some(p) = pathspec {
            args.extend(["--", p]);
        }
        let out = self.run(&args, BUG)?;
        Ok(out
            .split('\0')
            .filter(|p| !p.is_empty())
            .map(str::to_string)
            .collect())
    }

    /// `git status` of the given paths: each path with its two-letter status (`??` when
    /// untracked). Writes nothing, not even the index's cached file times.
    pub fn status(&self, paths: &[&str]) -> Result<Vec<(String, String)>> {
        let mut args = vec![
            LITERAL,
            "--no-optional-locks",
            "status",
            "--porcelain=v1",
            "-z",
            "--untracked-files=all",
            "--no-renames",
            "--ignored=no",
            "--",
        ];
        args.extend_from_slice(paths);
        let out = self.run(&args, BUG)?;
        Ok(out
            .split('\0')
            .filter(|e| e.len() > 3)
            .map(|e| (e[..2].to_string(), e[3..].to_string()))
            .collect())
    }

    /// The modes and blob ids of `paths` in `tree` (absent paths are left out).
    pub fn ls_tree(&self, tree: &Oid, paths: &[&str]) -> Result<HashMap<String, (String, Oid)>> {
        let mut args = vec![LITERAL, "ls-tree", "-z", "--full-tree", tree.as_str(), "--"];
        args.extend_from_slice(paths);
        let out = self.run(&args, BUG)?;
        let mut map = HashMap::new();
        for item in out.split('\0').filter(|e| !e.is_empty()) {
            // `<mode> SP <type> SP <object> TAB <file>`
            if let Some((meta, path)) = item.split_once('\t') {
                let parts: Vec<&str> = meta.split(' ').collect();
                if let [mode, _, oid] = parts.as_slice() {
                    map.insert(path.to_string(), (mode.to_string(), Oid(oid.to_string())));
                }
            }
        }
        Ok(map)
    }

    /// Every file under `prefix` (`""`: the whole tree) in `commit`, at any depth, with
    /// its mode: `(mode, path)`.
    pub fn ls_tree_all(&self, commit: &Oid, prefix: &str) -> Result<Vec<(String, String)>> {
        let mut args = vec![
            LITERAL,
            "ls-tree",
            "-r",
            "-z",
            "--full-tree",
            commit.as_str(),
        ];
        let spec = prefix.trim_end_matches('/');
        if !spec.is_empty() {
            args.extend(["--", spec]);
        }
        let out = self.run(&args, BUG)?;
        Ok(out
            .split('\0')
            .filter_map(|item| {
                let (meta, path) = item.split_once('\t')?;
                let mode = meta.split(' ').next()?;
                Some((mode.to_string(), path.to_string()))
            })
            .collect())
    }

    /// The newest commit reachable from `from` that changed `path`.
    pub fn last_commit_touching(&self, from: &Oid, path: &str) -> Result<Option<Oid>> {
        let out = self.run(&[LITERAL, "rev-list", "-1", from.as_str(), "--", path], BUG)?;
        Ok(Some(out.trim())
            .filter(|o| !o.is_empty())
            .map(|o| Oid(o.to_string())))
    }

    /// The newest commit reachable from `from` but not from `not` that changed `path`.
    pub fn last_commit_between(&self, from: &Oid, not: &Oid, path: &str) -> Result<Option<Oid>> {
        let not = format!("^{not}");
        let out = self.run(
            &[LITERAL, "rev-list", "-1", from.as_str(), &not, "--", path],
            BUG,
        )?;
        Ok(Some(out.trim())
            .filter(|o| !o.is_empty())
            .map(|o| Oid(o.to_string())))
    }
}
