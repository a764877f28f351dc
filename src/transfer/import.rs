//! The input of `mem7 import`: JSON Lines read one line at a time, never held whole.
//!
//! Standard input is copied to an anonymous temporary file first, so the input can be
//! read twice: once to check every record before anything (even the index) is opened,
//! once to apply them (`Engine::import_each`).

use std::fs::File;
use std::io::{BufRead, BufReader, Seek, SeekFrom};
use std::path::Path;

use super::record_tier;
use crate::core::time::TxTime;
use crate::engine::{ImportOp, ImportRecord, StoreRequest};
use crate::error::{Error, Result};

/// One JSON Lines record of `mem7 import` without an `op` (the wire type).
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ImportLine {
    key: String,
    value: String,
    valid_from: Option<String>,
    valid_to: Option<String>,
    tags: Option<Vec<String>>,
    agent: Option<String>,
    recorded: Option<String>,
    /// `asserted` or `inferred`, kept within `trust.agents`.
    tier: Option<String>,
}

/// An import's input, readable from the start as many times as needed.
pub struct Input {
    file: File,
    /// How errors name the input (`<stdin>` or the path).
    name: String,
    stdin: bool,
}

impl Input {
    /// Opens `path`, or, for `-`, copies standard input to a temporary file.
    pub fn open(path: &Path) -> Result<Input> {
        if path.as_os_str() == "-" {
            let mut file = tempfile::tempfile().map_err(|e| Error::io("<temporary file>", e))?;
            std::io::copy(&mut std::io::stdin().lock(), &mut file)
                .map_err(|e| Error::io("<stdin>", e))?;
            return Ok(Input {
                file,
                name: "<stdin>".into(),
                stdin: true,
            });
        }
        let file = File::open(path).map_err(|e| Error::named_file(path, e))?;
        Ok(Input {
            file,
            name: path.display().to_string(),
            stdin: false,
        })
    }

    /// The records, from the first line, each parsed as it is read. `agent` gives the
    /// default agent name.
    pub fn records<'a>(
        &'a self,
        agent: &'a dyn Fn(Option<&str>) -> String,
        allow_secret: bool,
    ) -> Result<impl Iterator<Item = Result<ImportRecord>> + 'a> {
        let mut file = &self.file;
        file.seek(SeekFrom::Start(0))
            .map_err(|e| Error::io(&self.name, e))?;
        let lines = BufReader::with_capacity(1 << 16, file).lines();
        Ok(lines.enumerate().filter_map(move |(i, line)| {
            let line = match line {
                Ok(l) => l,
                Err(e) if e.kind() == std::io::ErrorKind::InvalidData && self.stdin => {
                    return Some(Err(Error::input(
                        "standard input is not valid UTF-8 text",
                        "import reads JSON Lines",
                    )));
                }
                Err(e) => return Some(Err(Error::io(&self.name, e))),
            };
            record(&line, i + 1, agent, allow_secret).transpose()
        }))
    }
}

/// Parses line `n` of an import (`None` for a blank line); the error names the line.
pub fn record(
    line: &str,
    n: usize,
    agent: &dyn Fn(Option<&str>) -> String,
    allow_secret: bool,
) -> Result<Option<ImportRecord>> {
    if line.trim().is_empty() {
        return Ok(None);
    }
    // Records that name an `op` (what `mem7 export --history` writes).
    if super::has_op(line) {
        return super::op_record(line, n, agent, allow_secret).map(Some);
    }
    const HINT: &str = "each line is one JSON object: {\"key\": …, \"value\": …, \"valid_from\"?, \"valid_to\"?, \"tags\"?, \"agent\"?, \"recorded\"?, \"tier\"?}";
    let bad = |problem: String| Error::input(format!("line {n}: {problem}"), HINT);
    let rec: ImportLine = crate::front::request::json_line(line, n, HINT)?;
    let (valid_from, valid_to) =
        super::record_period(rec.valid_from.as_deref(), rec.valid_to.as_deref(), &bad)?;
    let recorded = rec
        .recorded
        .as_deref()
        .map(TxTime::parse)
        .transpose()
        .map_err(|e| bad(format!("recorded: {e}")))?;
    Ok(Some(ImportRecord {
        op: ImportOp::Store,
        req: StoreRequest {
            key: rec.key,
            value: rec.value,
            valid_from,
            valid_to,
            tags: rec.tags.unwrap_or_default(),
            agent: agent(rec.agent.as_deref()),
            allow_secret,
            tier: record_tier(rec.tier.as_deref(), &bad)?,
            by: crate::core::Writer::Model,
        },
        recorded,
        line: n,
        keep_ties: false,
        entry: None,
        origin: None,
    }))
}

/// Reads and checks every record (`Engine`'s rules for each op, against the workspace's
/// settings) without keeping any; returns how many there are.
pub fn check(
    input: &Input,
    agent: &dyn Fn(Option<&str>) -> String,
    allow_secret: bool,
    config: &crate::config::Config,
) -> Result<usize> {
    let mut n = 0;
    for r in input.records(agent, allow_secret)? {
        crate::engine::validate_record(&r?, config)?;
        n += 1;
    }
    Ok(n)
}
