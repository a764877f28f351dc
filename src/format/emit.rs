//! Rendering entries. The writer is the reference for the canonical form: fields in a
//! fixed order, one `name: value` per line, the value as a block quote.

use crate::core::chain::{ChainHash, ChainKey};
use crate::core::time::{TxTime, ValidTime};
use crate::core::{EntryOp, Tier, ValidEnd};

/// What goes into one entry.
#[derive(Clone, Debug)]
pub struct EntryDraft<'a> {
    pub key: &'a str,
    pub op: EntryOp,
    pub valid_from: Option<ValidTime>,
    pub valid_to: Option<ValidEnd>,
    pub recorded: TxTime,
    pub agent: &'a str,
    /// Who vouches for the fact (`tier:`); `None` writes no tier.
    pub tier: Option<Tier>,
    pub tags: &'a [String],
    /// A forget of one value: the hash of the entry whose value stops being believed.
    pub entry: Option<&'a str>,
    /// Set when the writer overrode the credential check (`--allow-secret`).
    pub secret_allowed: bool,
    /// Seal entries: the computed hashes of the entries the seal accepts as they are.
    pub accepts: &'a [ChainHash],
    /// `None` for an op without a value (forget).
    pub value: Option<&'a str>,
}

impl EntryDraft<'_> {
    /// Refuses the entry when any field bound for the file (key, value, tags, agent)
    /// looks like a credential, unless the writer allowed it (`secret_allowed`). Every
    /// entry mem7 writes passes here before it is rendered.
    pub fn refuse_credentials(&self) -> crate::error::Result<()> {
        // `secret: allowed` covers the value and the tags only: a key or an agent name
        // is never a credential.
        let (value, tags) = if self.secret_allowed {
            (None, &[][..])
        } else {
            (self.value, self.tags)
        };
        match credential_in(self.key, value, tags, self.agent) {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

/// The error for the first field that looks like a credential: the key, the value, a
/// tag, the agent. `None` when none does.
pub fn credential_in(
    key: &str,
    value: Option<&str>,
    tags: &[String],
    agent: &str,
) -> Option<crate::error::Error> {
    use crate::text::secret;
    let fields = [("key", Some(key)), ("value", value), ("agent", Some(agent))];
    let found = fields
        .into_iter()
        .filter_map(|(what, text)| Some((what.to_string(), secret::find(text?)?)))
        .chain(
            tags.iter()
                .filter_map(|t| secret::find(t).map(|f| (format!("tag {:?}", opening(t)), f))),
        )
        .next()?;
    Some(crate::error::Error::Credential {
        what: found.0,
        kind: found.1.kind,
    })
}

/// The start of a long text, for a message (never the part a secret would be in).
fn opening(text: &str) -> String {
    text.chars().take(4).chain("…".chars()).collect()
}

/// Whether a value must be written as a JSON string rather than block-quoted lines:
/// carriage returns and other control characters would not survive editors and git's
/// line-ending normalisation.
pub fn needs_json(value: &str) -> bool {
    value
        .chars()
        .any(|c| c.is_control() && c != '\n' && c != '\t')
}

/// Renders the entry linked to `prev`; returns its text (ending with `---\n`) and hash.
pub fn render_entry(
    draft: &EntryDraft<'_>,
    prev: ChainHash,
    key: &ChainKey,
) -> (String, ChainHash) {
    let mut head = String::with_capacity(256 + draft.value.map_or(0, str::len));
    head.push_str("## ");
    head.push_str(draft.key);
    head.push_str("\n\n```");
    head.push_str(super::FENCE_INFO);
    head.push('\n');
    field(&mut head, "op", draft.op.as_str());
    if let Some(from) = draft.valid_from {
        field(&mut head, "valid_from", &from.to_rfc3339());
    }
    match draft.valid_to {
        None | Some(ValidEnd::Open) => {}
        Some(ValidEnd::Infinity) => field(&mut head, "valid_to", "infinity"),
        Some(ValidEnd::At(t)) => field(&mut head, "valid_to", &t.to_rfc3339()),
    }
    field(&mut head, "recorded", &draft.recorded.to_rfc3339());
    field(&mut head, "agent", draft.agent);
    if let Some(tier) = draft.tier {
        field(&mut head, "tier", tier.as_str());
    }
    if !draft.tags.is_empty() {
        field(&mut head, "tags", &format!("[{}]", draft.tags.join(", ")));
    }
    if let Some(entry) = draft.entry {
        field(&mut head, "entry", entry);
    }
    if draft.secret_allowed {
        field(&mut head, "secret", "allowed");
    }
    let json = draft.value.is_some_and(needs_json);
    if json {
        field(&mut head, "encoding", "json");
    }
    if matches!(key, ChainKey::Keyed(_)) {
        field(&mut head, "chain", "keyed");
    }
    if !draft.accepts.is_empty() {
        let list: Vec<String> = draft.accepts.iter().map(|h| h.to_hex()).collect();
        field(&mut head, "accepts", &format!("[{}]", list.join(", ")));
    }
    field(&mut head, "prev", &prev.to_hex());

    let mut tail = String::from("```\n\n");
    if let Some(value) = draft.value {
        if json {
            let quoted = serde_json::to_string(value).unwrap_or_else(|_| "\"\"".into());
            tail.push_str("> ");
            tail.push_str(&quoted);
            tail.push('\n');
        } else {
            for line in value.split('\n') {
                if line.is_empty() {
                    tail.push_str(">\n");
                } else {
                    tail.push_str("> ");
                    tail.push_str(line);
                    tail.push('\n');
                }
            }
        }
        tail.push('\n');
    }
    tail.push_str("---\n");

    let mut hasher = key.hasher(prev);
    hasher.update(head.as_bytes());
    hasher.update(tail.as_bytes());
    let hash = ChainHash(*hasher.finalize().as_bytes());

    let mut text = head;
    field(&mut text, "hash", &hash.to_hex());
    text.push_str(&tail);
    (text, hash)
}

fn field(out: &mut String, name: &str, value: &str) {
    out.push_str(name);
    out.push_str(": ");
    out.push_str(value);
    out.push('\n');
}
