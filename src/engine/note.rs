//! What the engine noticed while answering that is not the answer: meaning search off or
//! failing, versions without a vector yet. Notes are data; each front end words them for
//! its audience (`front::notes`): a person at the command line can run `mem7 embed`, a
//! model talking to the server cannot, and need not.

/// One thing worth saying about an answer, said once per process (or per call, in a
/// server).
#[derive(Clone, Debug, PartialEq)]
pub enum Note {
    /// Meaning search is off in this workspace for the reason given (no model, say), so
    /// a search answered by words only. Said once per workspace.
    MeaningOff { why: String },
    /// Meaning search failed (`error`), so a search answered by words only.
    MeaningFailed { error: String },
    /// Keys near an unknown key were looked for by name only: the meaning side failed.
    NoNearByMeaning { error: String },
    /// Look-alikes of a new key were judged by name only: the meaning side failed.
    NoLookAlikesByMeaning { error: String },
    /// `missing` versions have no vector of `model` yet, so meaning search does not see
    /// them (too many to fill in while answering).
    VectorsMissing { missing: usize, model: String },
    /// Filling in the few versions without a vector failed (`error`): meaning search does
    /// not see them.
    VectorsNotFilled { missing: usize, error: String },
    /// A server's store of the new key `key` answered with the look-alikes that names and
    /// cached vectors show; `keys` existing keys sharing its words are still being
    /// compared by meaning, after the answer (their vectors were not computed yet).
    LookAlikesLater { key: String, keys: usize },
    /// A server's store of the new key `key` was compared by name with the `keys` keys
    /// sharing most of its words; the other keys sharing its words are compared after
    /// the answer.
    NamesLater { key: String, keys: usize },
    /// A comparison finished after its store answered: the new key `key` looks like the
    /// existing `similar` (`why`).
    LateLookAlike {
        key: String,
        similar: String,
        why: super::Alike,
    },
}
