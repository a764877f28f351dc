//! The envelope: the `name: value` lines inside the ```` ```mem7 ```` block.
//!
//! mem7 writes one plain `name: value` per line, which a fast line parser reads. A
//! person editing by hand may write any YAML mapping instead (quoted strings, block
//! lists); those envelopes go through the YAML fallback in [`super::yaml`].

/// The envelope's fields, as text. Interpretation (times, ops) happens later, so one bad
/// field is reported against its entry rather than failing the file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Fields {
    pub op: Option<String>,
    pub valid_from: Option<String>,
    pub valid_to: Option<String>,
    pub recorded: Option<String>,
    pub agent: Option<String>,
    /// `asserted` or `inferred`; absent in entries written before tiers.
    pub tier: Option<String>,
    pub tags: Vec<String>,
    /// A forget of one value: the hash of the entry whose value it forgets.
    pub entry: Option<String>,
    pub secret: Option<String>,
    pub encoding: Option<String>,
    /// `keyed` when the entry was hashed with the chain key.
    pub chain: Option<String>,
    /// Seal entries: computed hashes of the entries the seal accepted as they are.
    pub accepts: Vec<String>,
    pub prev: Option<String>,
    pub hash: Option<String>,
    // Go mem7 (legacy) fields.
    pub predicate: Option<String>,
    pub ttl: Option<String>,
    pub created: Option<String>,
    pub updated: Option<String>,
    pub deleted: Option<String>,
    /// Names of fields mem7 does not know (kept for diagnostics, otherwise ignored).
    pub unknown: Vec<String>,
}

/// A field value: a scalar or a list (tags).
pub(crate) enum FieldValue {
    Scalar(String),
    List(Vec<String>),
}

impl Fields {
    /// Parses the envelope lines (without the fences).
    pub(crate) fn parse<'a>(
        lines: impl Iterator<Item = &'a str> + Clone,
    ) -> Result<Fields, String> {
        match Self::parse_plain(lines.clone()) {
            Some(fields) => Ok(fields),
            None => {
                let text: String = lines.clone().map(|l| format!("{l}\n")).collect();
                match super::yaml::envelope_pairs(&text) {
                    Ok(pairs) => {
                        let mut fields = Fields::default();
                        for (name, value) in pairs {
                            fields.set(&name, value);
                        }
                        Ok(fields)
                    }
                    // Neither plain nor valid YAML (a damaged or careless edit): read each
                    // `name: value` line as raw text, so the entry keeps its place in the
                    // chain and its hash tells whether it changed.
                    Err(yaml_error) => Self::parse_raw(lines).ok_or(yaml_error),
                }
            }
        }
    }

    /// Every non-blank line `name: anything`, the value taken as it stands.
    fn parse_raw<'a>(lines: impl Iterator<Item = &'a str>) -> Option<Fields> {
        let mut fields = Fields::default();
        for line in lines {
            if line.trim().is_empty() {
                continue;
            }
            let (name, value) = line.split_once(':')?;
            let value = value.trim();
            let value = match value.strip_prefix('[') {
                Some(inner) => {
                    FieldValue::List(split_list(inner.strip_suffix(']').unwrap_or(inner)))
                }
                None => FieldValue::Scalar(value.to_string()),
            };
            fields.set(name.trim(), value);
        }
        Some(fields)
    }

    /// The fast path: `name: plain value` lines only. `None` when a line needs YAML.
    fn parse_plain<'a>(lines: impl Iterator<Item = &'a str>) -> Option<Fields> {
        let mut fields = Fields::default();
        for line in lines {
            if line.trim().is_empty() || line.starts_with('#') {
                continue;
            }
            let (name, value) = line.split_once(':')?;
            if name.is_empty() || !name.bytes().all(|b| b.is_ascii_lowercase() || b == b'_') {
                return None;
            }
            let value = value.trim();
            if value.starts_with(['"', '\'', '{', '|', '>', '&', '*', '!']) {
                return None;
            }
            let value = if let Some(inner) = value.strip_prefix('[') {
                let inner = inner.strip_suffix(']')?;
                FieldValue::List(split_list(inner))
            } else {
                FieldValue::Scalar(value.to_string())
            };
            fields.set(name, value);
        }
        Some(fields)
    }

    pub(crate) fn set(&mut self, name: &str, value: FieldValue) {
        let scalar = |v: FieldValue| match v {
            FieldValue::Scalar(s) => s,
            FieldValue::List(items) => items.join(", "),
        };
        match name {
            "tags" => {
                self.tags = match value {
                    FieldValue::List(items) => items,
                    // Go mem7 wrote `tags: a, b`.
                    FieldValue::Scalar(s) => split_list(&s),
                }
            }
            "op" => self.op = Some(scalar(value)),
            "valid_from" => self.valid_from = Some(scalar(value)),
            "valid_to" => self.valid_to = Some(scalar(value)),
            "recorded" => self.recorded = Some(scalar(value)),
            "agent" => self.agent = Some(scalar(value)),
            "tier" => self.tier = Some(scalar(value)),
            "entry" => self.entry = Some(scalar(value)),
            "secret" => self.secret = Some(scalar(value)),
            "encoding" => self.encoding = Some(scalar(value)),
            "chain" => self.chain = Some(scalar(value)),
            "accepts" => {
                self.accepts = match value {
                    FieldValue::List(items) => items,
                    FieldValue::Scalar(s) => split_list(&s),
                }
            }
            // A hash is never a list: `hash: [<hex>]` (a damaged line read raw) must not
            // read as the hash it brackets, or an edit to the one line the hash cannot
            // cover would go unseen.
            "prev" | "hash" => {
                let text = match value {
                    FieldValue::Scalar(s) => s,
                    FieldValue::List(items) => format!("[{}]", items.join(", ")),
                };
                if name == "prev" {
                    self.prev = Some(text);
                } else {
                    self.hash = Some(text);
                }
            }
            "predicate" => self.predicate = Some(scalar(value)),
            "ttl" => self.ttl = Some(scalar(value)),
            "created" => self.created = Some(scalar(value)),
            "updated" => self.updated = Some(scalar(value)),
            "deleted" => self.deleted = Some(scalar(value)),
            other => self.unknown.push(other.to_string()),
        }
    }

    /// Whether this is a Go mem7 entry: no `recorded`, but Go's timestamps or ops.
    pub fn is_legacy(&self) -> bool {
        self.recorded.is_none()
            && (self.updated.is_some()
                || self.created.is_some()
                || self.deleted.is_some()
                || matches!(self.op.as_deref(), Some("delete" | "delete_tags")))
    }
}

fn split_list(text: &str) -> Vec<String> {
    text.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_and_yaml_envelopes_agree() {
        let plain = [
            "op: store",
            "recorded: 2026-01-01T00:00:00Z",
            "tags: [a, b]",
        ];
        let yaml = [
            "op: \"store\"",
            "recorded: '2026-01-01T00:00:00Z'",
            "tags:",
            "  - a",
            "  - b",
        ];
        let a = Fields::parse(plain.iter().copied()).unwrap();
        let b = Fields::parse(yaml.iter().copied()).unwrap();
        assert_eq!(a, b);
        assert_eq!(a.tags, ["a", "b"]);
    }

    #[test]
    fn legacy_comma_tags() {
        let f =
            Fields::parse(["op: store", "tags: x, y", "updated: 2024-01-01T00:00:00Z"].into_iter())
                .unwrap();
        assert_eq!(f.tags, ["x", "y"]);
        assert!(f.is_legacy());
    }
}
