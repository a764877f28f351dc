//! Reading one memory file for the index: parsed with the plain key, a git conflict
//! refused, its entries turned into fold events, its running digest and head.

use super::*;

/// Reads and parses a memory file; a git conflict stops everything.
///
/// The index always hashes with the plain key: its per-file digests only detect edits,
/// and must not depend on whether a process has `MEM7_CHAIN_KEY` (only `verify` does).
pub fn load_file(ws: &Workspace, name: &str) -> Result<ParsedFile> {
    let text = ws.read(name)?;
    let parsed = format::parse_file(&text, &ChainKey::Plain);
    if let Some(p) = parsed
        .problems
        .iter()
        .find(|p| p.kind == ProblemKind::Conflict)
    {
        return Err(Error::Conflict {
            file: name.to_string(),
            line: p.line,
        });
    }
    Ok(parsed)
}

/// Turns a parsed file into events and warnings.
pub(super) fn file_events(
    name: &str,
    parsed: &ParsedFile,
    skip: usize,
    events: &mut Vec<Event>,
    warnings: &mut Vec<Warning>,
) {
    for p in &parsed.problems {
        // Foreign text changes no memory; `verify` reports it, and only verify knows
        // which runs a seal accepted, so the index does not warn about them for ever.
        if matches!(p.kind, ProblemKind::Foreign(_)) {
            continue;
        }
        warnings.push(Warning {
            file: name.to_string(),
            line: p.line,
            message: p.message.clone(),
        });
    }
    for entry in parsed.entries.iter().skip(skip) {
        match entry.to_event(name) {
            Ok(Some(ev)) => events.push(ev),
            Ok(None) => {}
            Err(message) => warnings.push(Warning {
                file: name.to_string(),
                line: entry.line,
                message: format!("entry `{}` skipped: {message}", entry.key),
            }),
        }
    }
}

pub(super) fn file_digest(parsed: &ParsedFile, upto: usize) -> [u8; 32] {
    parsed.entries[..upto]
        .iter()
        .fold([0u8; 32], |d, e| digest_step(d, e.computed, e.start as u64))
}

/// The hash a new entry links to after this file's last entry.
pub(super) fn entry_head(entry: &format::ParsedEntry) -> ChainHash {
    entry
        .fields
        .hash
        .as_deref()
        .and_then(|h| ChainHash::from_hex(h.trim()))
        .unwrap_or(entry.computed)
}
