//! What a verify finding is about, as one word per kind: the names `verify --json`,
//! the page and `sync`'s refusals print, and whether each kind breaks verification or
//! only warns.

use crate::core::integrity;

/// The kind of a [`super::Finding`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FindingKind {
    /// An entry of the chain: changed, removed, reordered, unsealed, legacy or merged.
    Chain(integrity::Kind),
    /// A sealed entry hashed without the workspace's chain key.
    NotKeyed,
    /// An entry cut off before its end (a torn write).
    Truncated,
    /// An entry whose envelope cannot be read.
    Unreadable,
    /// An unresolved git merge conflict.
    Conflict,
    /// Text between entries that belongs to no entry.
    ForeignText,
    /// The newest entry is not the head `--expect-head` names.
    HeadMismatch,
    /// An entry recorded ahead of this machine's clock (a warning).
    Ahead,
    /// A symbolic link under `memory/`.
    Link,
    /// A FIFO, socket or device under `memory/`.
    SpecialFile,
    /// A git submodule under the workspace (met by `sync`).
    Submodule,
    /// A committed memory file deleted (met by `sync`).
    FileDeleted,
    /// The index and the files disagree (`verify --index`).
    IndexMismatch,
    /// A remote's `.gitattributes` that would change the bytes of memory files in a
    /// checkout (an encoding, a filter, `ident`), or a remote tree holding the index
    /// folder `.mem7/` (met by `sync`).
    Untrusted,
}

impl FindingKind {
    /// The stable name: `changed`, `removed`, `file-removed`, `reordered`, `unsealed`,
    /// `legacy`, `merge`, `not-keyed`, `truncated`, `unreadable`, `conflict`,
    /// `foreign text`, `head-mismatch`, `ahead`, `link`, `special-file`, `submodule`,
    /// `index-mismatch` (a deleted file is `removed`, like a removed entry).
    pub fn name(self) -> &'static str {
        match self {
            FindingKind::Chain(k) => k.name(),
            FindingKind::NotKeyed => "not-keyed",
            FindingKind::Truncated => "truncated",
            FindingKind::Unreadable => "unreadable",
            FindingKind::Conflict => "conflict",
            FindingKind::ForeignText => "foreign text",
            FindingKind::HeadMismatch => "head-mismatch",
            FindingKind::Ahead => "ahead",
            FindingKind::Link => "link",
            FindingKind::SpecialFile => "special-file",
            FindingKind::Submodule => "submodule",
            FindingKind::FileDeleted => "removed",
            FindingKind::IndexMismatch => "index-mismatch",
            FindingKind::Untrusted => "untrusted",
        }
    }

    /// Whether a finding of this kind breaks verification (else it is a warning).
    pub fn is_break(self) -> bool {
        match self {
            FindingKind::Chain(k) => k.is_break(),
            FindingKind::Ahead => false,
            _ => true,
        }
    }

    /// Whether `seal` cannot accept it: it cannot accept what it cannot read.
    pub fn unreadable(self) -> bool {
        matches!(
            self,
            FindingKind::Conflict | FindingKind::Unreadable | FindingKind::Truncated
        )
    }
}

impl From<integrity::Kind> for FindingKind {
    fn from(k: integrity::Kind) -> Self {
        FindingKind::Chain(k)
    }
}

impl std::fmt::Display for FindingKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use integrity::Kind;

    #[test]
    fn names_are_stable_and_only_legacy_merge_and_ahead_warn() {
        let all = [
            FindingKind::Chain(Kind::Changed),
            FindingKind::Chain(Kind::Removed),
            FindingKind::Chain(Kind::FileRemoved),
            FindingKind::Chain(Kind::Reordered),
            FindingKind::Chain(Kind::Unsealed),
            FindingKind::Chain(Kind::Legacy),
            FindingKind::Chain(Kind::Merge),
            FindingKind::NotKeyed,
            FindingKind::Truncated,
            FindingKind::Unreadable,
            FindingKind::Conflict,
            FindingKind::ForeignText,
            FindingKind::HeadMismatch,
            FindingKind::Ahead,
            FindingKind::Link,
            FindingKind::SpecialFile,
            FindingKind::Submodule,
            FindingKind::FileDeleted,
            FindingKind::IndexMismatch,
            FindingKind::Untrusted,
        ];
        let names: Vec<&str> = all.iter().map(|k| k.name()).collect();
        assert_eq!(
            names,
            [
                "changed",
                "removed",
                "file-removed",
                "reordered",
                "unsealed",
                "legacy",
                "merge",
                "not-keyed",
                "truncated",
                "unreadable",
                "conflict",
                "foreign text",
                "head-mismatch",
                "ahead",
                "link",
                "special-file",
                "submodule",
                "removed",
                "index-mismatch",
                "untrusted"
            ]
        );
        let warnings: Vec<&str> = all
            .iter()
            .filter(|k| !k.is_break())
            .map(|k| k.name())
            .collect();
        assert_eq!(warnings, ["legacy", "merge", "ahead"]);
    }
}
