//! Who vouches for a fact: a person who stated it (`asserted`) or a model that inferred
//! it (`inferred`). Entries written before tiers existed carry none ("unspecified").
//!
//! Tiers are ordered `inferred < asserted`, and "unspecified" sits below both: a store
//! that names a tier says more than an entry that names none, so it is never a
//! restatement of one (docs/temporal.md "Restatements").

use std::fmt;

/// A fact's trust tier (`tier:` in its entry).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Tier {
    /// Written by a model on its own reading: a guess to verify.
    Inferred,
    /// Stated by a person (at the CLI, or an agent the workspace lets assert).
    Asserted,
}

impl Tier {
    /// Every tier, lowest first.
    pub const ALL: [Tier; 2] = [Tier::Inferred, Tier::Asserted];

    /// The word in an entry, a flag and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Inferred => "inferred",
            Tier::Asserted => "asserted",
        }
    }

    /// Reads the word (exactly as written); `None` for anything else.
    pub fn parse(text: &str) -> Option<Tier> {
        Tier::ALL.into_iter().find(|t| t.as_str() == text)
    }

    /// The tier a writer may record: what it asks for, lowered to `ceiling`.
    pub fn within(self, ceiling: Tier) -> Tier {
        self.min(ceiling)
    }
}

impl fmt::Display for Tier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Who writes a fact. The tier a write records is decided from this alone, here
/// ([`recorded`]), for every door: the CLI, the MCP tools, hooks and imports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Writer {
    /// A person at the command line: the tier asked for is recorded as asked.
    Person,
    /// A model, or what a model may have written (an MCP client, a hook, an import of
    /// records or of an agent's notes). The default, so a request that forgets to say
    /// who writes is treated as the least trusted writer.
    #[default]
    Model,
}

/// Whether a fact has the shape of a standing rule: its key is under `rule:`, or it is
/// tagged `rule`.
pub fn rule_shaped(key: &str, tags: &[String]) -> bool {
    key.starts_with("rule:") || tags.iter().any(|t| t == "rule")
}

/// Whether a version is a standing rule a person set: rule-shaped, and not inferred (an
/// entry written before tiers existed counts as the person's).
pub fn persons_rule(key: &str, tags: &[String], tier: Option<Tier>) -> bool {
    rule_shaped(key, tags) && tier != Some(Tier::Inferred)
}

/// The tier a write records: a person's as asked; a model's what it asks (`inferred`
/// when it asks nothing) lowered to `ceiling`, the ceiling of the workspace written
/// to, and never above `inferred` for a rule-shaped fact: a standing rule is only what
/// a person asserted.
pub fn recorded(by: Writer, asked: Option<Tier>, rule_shaped: bool, ceiling: Tier) -> Option<Tier> {
    match by {
        Writer::Person => asked,
        Writer::Model if rule_shaped => Some(Tier::Inferred),
        Writer::Model => Some(asked.unwrap_or(Tier::Inferred).within(ceiling)),
    }
}

/// Whether a store with tier `new` says no more than a version with tier `old`: equal,
/// or lower. Unspecified (`None`) is below every tier.
pub fn no_higher(new: Option<Tier>, old: Option<Tier>) -> bool {
    new <= old
}

/// Whether a read filtered to `wanted` (all tiers when `None`) keeps a fact of `tier`.
/// A fact without a tier is kept only by an unfiltered read.
pub fn keeps(wanted: Option<Tier>, tier: Option<Tier>) -> bool {
    wanted.is_none() || wanted == tier
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_and_words() {
        assert!(Tier::Inferred < Tier::Asserted);
        assert!(None < Some(Tier::Inferred));
        for t in Tier::ALL {
            assert_eq!(Tier::parse(t.as_str()), Some(t));
        }
        assert_eq!(Tier::parse("Asserted"), None);
        assert_eq!(Tier::Asserted.within(Tier::Inferred), Tier::Inferred);
        assert_eq!(Tier::Inferred.within(Tier::Asserted), Tier::Inferred);
        assert!(no_higher(Some(Tier::Inferred), Some(Tier::Asserted)));
        assert!(!no_higher(Some(Tier::Asserted), None));
        assert!(no_higher(None, None));
        assert!(keeps(None, None));
        assert!(keeps(Some(Tier::Inferred), Some(Tier::Inferred)));
        assert!(!keeps(Some(Tier::Asserted), None));
    }

    #[test]
    fn a_models_write_is_never_above_its_ceiling_nor_a_rule() {
        use Tier::*;
        let cases = [
            // (writer, asked, rule-shaped, ceiling) → recorded
            (
                Writer::Person,
                Some(Asserted),
                true,
                Inferred,
                Some(Asserted),
            ),
            (Writer::Person, None, false, Inferred, None),
            (Writer::Model, None, false, Asserted, Some(Inferred)),
            (
                Writer::Model,
                Some(Asserted),
                false,
                Inferred,
                Some(Inferred),
            ),
            (
                Writer::Model,
                Some(Asserted),
                false,
                Asserted,
                Some(Asserted),
            ),
            (
                Writer::Model,
                Some(Asserted),
                true,
                Asserted,
                Some(Inferred),
            ),
            (Writer::Model, None, true, Asserted, Some(Inferred)),
        ];
        for (by, asked, rule, ceiling, want) in cases {
            assert_eq!(
                recorded(by, asked, rule, ceiling),
                want,
                "{by:?} {asked:?} {rule} {ceiling:?}"
            );
        }
        assert_eq!(Writer::default(), Writer::Model);
        let tags = ["rule".to_string()];
        assert!(rule_shaped("rule:style", &[]) && rule_shaped("note:x", &tags));
        assert!(!rule_shaped("rules:count", &[]));
        assert!(persons_rule("rule:x", &[], None) && persons_rule("rule:x", &[], Some(Asserted)));
        assert!(!persons_rule("rule:x", &[], Some(Inferred)));
    }
}
