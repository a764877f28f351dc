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
}
