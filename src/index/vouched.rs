//! What a start-up reads and records when a resident watcher vouches for the files
//! (`store::vouch`): the token at which the `files` rows were last seen to match every
//! file, and one file's row.

use rusqlite::OptionalExtension;

use super::Index;
use crate::error::Result;
use crate::store::vouch::Token;

/// The meta row holding the token.
const VOUCH: &str = "vouch";

impl Index {
    /// The watcher's token at which every file matched its row, if one was recorded in
    /// this generation (a rebuild starts without one).
    pub fn vouch_token(&self) -> Result<Option<Token>> {
        Ok(self.meta(VOUCH)?.as_deref().and_then(Token::parse))
    }

    /// Records that every file matched its row at `token`. Only the caller's own
    /// check makes that true, so this is called right after one; a rebuild or catch-up
    /// elsewhere keeps it true, since rows only ever take the files' fingerprints.
    ///
    /// A shortcut, never a requirement: it does not wait for a writer, and when the
    /// write fails for any reason (a writer holds the database, a read-only or full
    /// disk) the token is simply not recorded, which costs a later start-up one scan and
    /// nothing else. So no failure here reaches the caller, who only read.
    pub fn record_vouch(&self, token: Token) {
        if self.conn.busy_timeout(std::time::Duration::ZERO).is_ok() {
            let _recorded = self.conn.execute(
                "INSERT OR REPLACE INTO meta (k, v) VALUES (?1, ?2)",
                [VOUCH, &token.to_text()],
            );
        }
        // Setting a timeout only stores a number in the connection.
        let _restored = self.conn.busy_timeout(super::BUSY_TIMEOUT);
    }

    /// One file's fingerprint as the index holds it (`name` is `memory/…`): its size and
    /// mtime, `None` when the index has no row for it.
    pub fn file_fingerprint(&self, name: &str) -> Result<Option<(u64, i64)>> {
        Ok(self
            .conn
            .prepare_cached("SELECT size, mtime_ns FROM files WHERE name = ?1")?
            .query_row([name], |r| Ok((r.get::<_, i64>(0)? as u64, r.get(1)?)))
            .optional()?)
    }
}
