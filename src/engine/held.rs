//! The entries a workspace already holds, named the way an import record names them
//! (its transaction time, its op and its agent), so that importing the workspace's own
//! export (`mem7 export --history`), or rerunning an import, skips them instead of
//! refusing records recorded before the workspace's last transaction.

use std::collections::HashSet;

use super::decide::store_op;
use super::{ImportOp, ImportRecord};
use crate::core::time::TxTime;
use crate::core::{Event, Op, ValidEnd};
use crate::error::Result;
use crate::format::ParsedEntry;
use crate::store::Workspace;

/// Every entry of a workspace that changes memory, from a time on, as a digest of what
/// an import record would restate: 32 bytes an entry, not its value.
pub(super) struct Held {
    digests: HashSet<[u8; 32]>,
}

impl Held {
    /// Reads the memory files for the entries recorded at `from` or later (an import's
    /// records come in time order, so none of the later ones can name an earlier entry;
    /// an unreadable entry holds nothing a record could restate).
    pub(super) fn load(ws: &Workspace, from: TxTime) -> Result<Held> {
        let mut digests = HashSet::new();
        for file in ws.scan()? {
            let parsed = crate::index::load_file(ws, &file.name)?;
            for entry in &parsed.entries {
                if let Ok(Some(event)) = entry.to_event(&file.name)
                    && event.tx >= from
                {
                    digests.insert(digest(event.tx, &event.op, &entry_agent(entry, &event)));
                }
            }
        }
        Ok(Held { digests })
    }

    /// Whether the workspace holds the entry `r` would write if recorded at `tx`: the
    /// same op (for a store: key, value, tags, agent and period) by the same agent at
    /// the same instant.
    pub(super) fn holds(&self, r: &ImportRecord, tx: TxTime, many: bool) -> bool {
        self.digests
            .contains(&digest(tx, &record_op(r, tx, many), &r.req.agent))
    }
}

/// blake3 over the entry's parts, each string preceded by its length, so that no two
/// different entries share an encoding. Only compared within one process: nothing keeps
/// it, so it may change freely.
fn digest(tx: TxTime, op: &Op, agent: &str) -> [u8; 32] {
    let mut h = blake3::Hasher::new();
    let mut text = |s: &str| {
        h.update(&(s.len() as u64).to_le_bytes());
        h.update(s.as_bytes());
    };
    text(agent);
    text(op.entry_op().as_str());
    match op {
        Op::Store(s) => {
            text(s.tier.map_or("", |t| t.as_str()));
            text(&s.key);
            text(&s.value);
            for tag in &s.tags {
                text(tag);
            }
            text(&s.valid_from.to_rfc3339());
            text(&match s.valid_to {
                ValidEnd::Open => String::new(),
                ValidEnd::Infinity => "infinity".into(),
                ValidEnd::At(t) => t.to_rfc3339(),
            });
            // The tag count ends the list, so the period cannot pass for a tag.
            h.update(&(s.tags.len() as u64).to_le_bytes());
        }
        Op::Forget { key, entry } => {
            text(key);
            text(entry.as_deref().unwrap_or_default());
        }
        Op::ForgetEntity { entity } => {
            text(entity);
        }
        Op::ForgetTagged { tags } => {
            for tag in tags {
                text(tag);
            }
            h.update(&(tags.len() as u64).to_le_bytes());
        }
        Op::Seal => {}
    }
    h.update(&tx.micros().to_le_bytes());
    *h.finalize().as_bytes()
}

/// The op an import record asks for, recorded at `tx` (a store without `valid_from`
/// holds from its transaction time, as every store does).
fn record_op(r: &ImportRecord, tx: TxTime, many: bool) -> Op {
    let req = &r.req;
    match r.op {
        ImportOp::Store => store_op(
            req,
            req.valid_from.unwrap_or(tx.as_valid()),
            req.valid_to.unwrap_or(ValidEnd::Open),
            many,
        ),
        ImportOp::Forget => Op::Forget {
            key: req.key.clone(),
            entry: r.entry.clone(),
        },
        ImportOp::ForgetEntity => Op::ForgetEntity {
            entity: req.key.clone(),
        },
        ImportOp::ForgetTagged => Op::ForgetTagged {
            tags: req.tags.clone(),
        },
    }
}

/// The agent an entry names: a store's own, else its envelope's (`mem7-go` for a Go
/// mem7 entry without one, `unknown` otherwise). `mem7 export --history` writes this.
pub fn entry_agent(entry: &ParsedEntry, event: &Event) -> String {
    match &event.op {
        Op::Store(s) => s.agent.clone(),
        _ => entry.fields.agent.clone().unwrap_or_else(|| {
            if entry.legacy {
                "mem7-go".into()
            } else {
                "unknown".into()
            }
        }),
    }
}
