//! `verify --index`: what the index holds against a fresh fold of the markdown (every
//! version, each file's fingerprint, the chain head), without the lock.

use std::collections::HashMap;

use super::{Index, entry_head, file_digest, file_events, load_file};
use crate::core::chain::ChainHash;
use crate::core::time::{TxTime, ValidTime};
use crate::core::{Source, Version, event_order};
use crate::error::Result;
use crate::store::Workspace;

/// What `verify --index` found.
#[derive(Clone, Debug, Default)]
pub struct IndexCheck {
    /// Versions the markdown implies that the index lacks, and the other way round.
    pub missing: Vec<Version>,
    pub extra: Vec<Version>,
    /// Files whose recorded fingerprint differs from the file (name, what differs).
    pub files: Vec<(String, String)>,
    /// The chain head the index recorded, and the markdown's.
    pub head: Option<(ChainHash, ChainHash)>,
    /// How many versions the markdown implies.
    pub expected_versions: usize,
}

impl IndexCheck {
    /// Whether the index matches the markdown.
    pub fn matches(&self) -> bool {
        self.missing.is_empty()
            && self.extra.is_empty()
            && self.files.is_empty()
            && self.head.is_none()
    }
}

/// A version as a sortable tuple (key and clocks first).
type Row = (
    String,
    TxTime,
    ValidTime,
    ValidTime,
    TxTime,
    Source,
    String,
    Vec<String>,
    String,
    Option<crate::core::Tier>,
);

impl Index {
    /// Compares what the index holds with what a fold of the markdown gives: every
    /// version, each file's fingerprint, and the chain head.
    pub fn check_against(&self, ws: &Workspace) -> Result<IndexCheck> {
        let scan = ws.scan()?;
        let mut events = Vec::new();
        let mut warnings = Vec::new();
        let mut expected_files = HashMap::new();
        let mut head = ChainHash::GENESIS;
        for file in &scan {
            let parsed = load_file(ws, &file.name)?;
            file_events(&file.name, &parsed, 0, &mut events, &mut warnings);
            if let Some(last) = parsed.entries.last() {
                head = entry_head(last);
            }
            expected_files.insert(
                file.name.clone(),
                (
                    file.size,
                    parsed.entries.len(),
                    file_digest(&parsed, parsed.entries.len()),
                ),
            );
        }
        events.sort_by(event_order);
        let (expected, _) = crate::core::fold::fold_all(&events);
        let order = |v: &Version| -> Row {
            (
                v.key.clone(),
                v.tx_from,
                v.valid_from,
                v.valid_to,
                v.tx_to,
                v.source.clone(),
                v.value.clone(),
                v.tags.clone(),
                v.agent.clone(),
                v.tier,
            )
        };
        let mut want: Vec<_> = expected.iter().map(order).collect();
        let mut have: Vec<_> = self.all_versions()?.iter().map(order).collect();
        want.sort();
        have.sort();
        let mut check = IndexCheck {
            expected_versions: want.len(),
            ..IndexCheck::default()
        };
        let (mut i, mut j) = (0, 0);
        let to_version = |t: &Row| Version {
            key: t.0.clone(),
            tx_from: t.1,
            valid_from: t.2,
            valid_to: t.3,
            tx_to: t.4,
            source: t.5.clone(),
            value: t.6.clone(),
            tags: t.7.clone(),
            agent: t.8.clone(),
            tier: t.9,
        };
        while i < want.len() || j < have.len() {
            match (want.get(i), have.get(j)) {
                (Some(a), Some(b)) if a == b => {
                    i += 1;
                    j += 1;
                }
                (Some(a), Some(b)) if a < b => {
                    check.missing.push(to_version(a));
                    i += 1;
                }
                (Some(_), Some(b)) | (None, Some(b)) => {
                    check.extra.push(to_version(b));
                    j += 1;
                }
                (Some(a), None) => {
                    check.missing.push(to_version(a));
                    i += 1;
                }
                (None, None) => break,
            }
        }
        let rows = self.files()?;
        for (name, (size, entries, digest)) in &expected_files {
            match rows.get(name) {
                None => check.files.push((name.clone(), "not in the index".into())),
                Some(r) if r.size != *size => check.files.push((
                    name.clone(),
                    format!("size {} in the index, {size} on disk", r.size),
                )),
                Some(r) if r.entries != *entries || r.digest != *digest => check.files.push((
                    name.clone(),
                    format!(
                        "{} entries in the index, {entries} on disk, or different content",
                        r.entries
                    ),
                )),
                Some(_) => {}
            }
        }
        for name in rows.keys().filter(|n| !expected_files.contains_key(*n)) {
            check
                .files
                .push((name.clone(), "in the index but not on disk".into()));
        }
        check.files.sort();
        let recorded = self.head()?;
        if recorded != head {
            check.head = Some((recorded, head));
        }
        Ok(check)
    }
}
