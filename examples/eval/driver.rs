//! Drives the real `mem7` binary, one process per command, as an agent would: a
//! workspace per sample, filled by `mem7 import` and `mem7 embed`, asked with
//! `mem7 search --json`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use crate::score::DEPTH;
use crate::set::Record;

/// The search modes, in the order they run and are shown.
pub const MODES: &[&str] = &["lexical", "semantic", "hybrid"];

pub struct Mem7 {
    bin: PathBuf,
    /// A `mem7.yaml` to put in every workspace instead of `mem7 init`'s.
    config: Option<String>,
}

impl Mem7 {
    /// The binary built next to this example (`target/<profile>/mem7`) unless `bin` names
    /// another.
    pub fn new(bin: Option<PathBuf>, config: Option<&Path>) -> Result<Self, String> {
        let bin = match bin {
            Some(bin) => bin,
            None => std::env::current_exe()
                .map_err(|e| format!("cannot find this example's own path: {e}"))?
                .parent()
                .and_then(Path::parent)
                .ok_or("this example is not in a cargo target directory: name mem7 with --mem7")?
                .join("mem7"),
        };
        if !bin.is_file() {
            return Err(format!(
                "no mem7 binary at {}: build it (`cargo build`, or `cargo build --release` \
                 for a release run), or name one with --mem7 PATH",
                bin.display()
            ));
        }
        let config = config
            .map(|p| {
                std::fs::read_to_string(p)
                    .map_err(|e| format!("cannot read the config {}: {e}", p.display()))
            })
            .transpose()?;
        Ok(Mem7 { bin, config })
    }

    pub fn bin(&self) -> &Path {
        &self.bin
    }

    /// A new workspace in `dir` (which must not exist yet), whose commands all run at `now`.
    pub fn init(&self, dir: &Path, now: &str) -> Result<Workspace<'_>, String> {
        let ws = Workspace {
            mem7: self,
            dir: dir.to_path_buf(),
            now: now.to_string(),
        };
        let mut init = Command::new(&self.bin);
        init.arg("init").arg(dir).env("MEM7_NOW", now);
        finish(&mut init, "init")?;
        if let Some(config) = &self.config {
            std::fs::write(dir.join("mem7.yaml"), config)
                .map_err(|e| format!("cannot write {}/mem7.yaml: {e}", dir.display()))?;
        }
        Ok(ws)
    }
}

pub struct Workspace<'a> {
    mem7: &'a Mem7,
    dir: PathBuf,
    now: String,
}

impl Workspace<'_> {
    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(&self.mem7.bin);
        cmd.args(args)
            .env("MEM7_WORKSPACE", &self.dir)
            .env("MEM7_NOW", &self.now);
        cmd
    }

    fn run(&self, args: &[&str]) -> Result<Output, String> {
        finish(&mut self.command(args), &args.join(" "))
    }

    /// Writes the records as JSON Lines beside the workspace and imports them.
    pub fn import(&self, records: &[Record]) -> Result<(), String> {
        let file = self.dir.with_extension("jsonl");
        let mut out = std::io::BufWriter::new(
            std::fs::File::create(&file)
                .map_err(|e| format!("cannot write {}: {e}", file.display()))?,
        );
        for r in records {
            let line = serde_json::to_string(r).map_err(|e| format!("a record: {e}"))?;
            writeln!(out, "{line}").map_err(|e| format!("cannot write {}: {e}", file.display()))?;
        }
        out.flush()
            .map_err(|e| format!("cannot write {}: {e}", file.display()))?;
        let file = file.to_string_lossy();
        self.run(&["import", &file])?;
        Ok(())
    }

    /// Computes every version's vector; returns the model they are computed with.
    pub fn embed(&self) -> Result<String, String> {
        let out = self.run(&["embed", "--json"]).map_err(|e| {
            format!("{e}\n(semantic and hybrid need the local model: `just model`; or pass --modes lexical)")
        })?;
        let counts: serde_json::Value = serde_json::from_slice(&out.stdout)
            .map_err(|e| format!("`mem7 embed --json` printed no JSON: {e}"))?;
        Ok(counts["model"].as_str().unwrap_or("?").to_string())
    }

    /// Drops the cached query vectors (`embed --prune` keeps only the versions'), so that
    /// every question of the next pass is a new one: its search embeds the question.
    pub fn forget_queries(&self) -> Result<(), String> {
        self.run(&["embed", "--prune", "--json"]).map(drop)
    }

    /// One whole `mem7 search` process: the keys it returns, best first, and how long the
    /// process took from spawn to exit.
    pub fn search(&self, query: &str, mode: &str) -> Result<(Vec<String>, Duration), String> {
        let depth = DEPTH.to_string();
        let args = [
            "search", "--json", "--limit", &depth, "--mode", mode, "--", query,
        ];
        let mut cmd = self.command(&args);
        let started = Instant::now();
        let out = cmd
            .output()
            .map_err(|e| format!("cannot run {}: {e}", self.mem7.bin.display()))?;
        let took = started.elapsed();
        if !out.status.success() {
            return Err(failure(&format!("search --mode {mode} {query:?}"), &out));
        }
        let hits: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout)
            .map_err(|e| format!("`mem7 search --json` printed no JSON array: {e}"))?;
        let keys = hits
            .iter()
            .map(|h| {
                h["key"]
                    .as_str()
                    .map(str::to_string)
                    .ok_or_else(|| format!("a search hit without a key: {h}"))
            })
            .collect::<Result<_, _>>()?;
        Ok((keys, took))
    }
}

fn finish(cmd: &mut Command, what: &str) -> Result<Output, String> {
    let out = cmd
        .output()
        .map_err(|e| format!("cannot run mem7 {what}: {e}"))?;
    if out.status.success() {
        Ok(out)
    } else {
        Err(failure(what, &out))
    }
}

fn failure(what: &str, out: &Output) -> String {
    format!(
        "`mem7 {what}` failed ({}):\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr).trim_end()
    )
}
