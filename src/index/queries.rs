//! The read side of an index generation: recall, history, list, timeline, the
//! full-text and meaning searches (hits read back from SQLite by id), and the texts the
//! vector side needs.

use crate::core::read_rule::OPEN;
use std::path::Path;

use rusqlite::params;

use super::{Index, SearchHit, fulltext, row_version, vectors};
use crate::core::Version;
use crate::core::time::{TxTime, ValidTime};
use crate::error::{Error, Result};

impl Index {
    /// Runs a full-text search: the full-text index must be current but for `tail`, the
    /// versions past its last, searched beside it (`fulltext/tail.rs`).
    pub fn search(
        &self,
        req: &fulltext::SearchRequest,
        weights: &fulltext::WordWeights,
        tail: fulltext::Tail,
    ) -> Result<Vec<SearchHit>> {
        let (hits, snippets) = self.fulltext()?.search(req, weights, tail)?;
        let mut out = Vec::with_capacity(hits.len());
        for hit in hits {
            let Some(version) = self.version(hit.id)? else {
                continue;
            };
            let snippet = snippets.snippet(&version.value);
            out.push(SearchHit {
                id: hit.id,
                score: hit.score,
                snippet: snippet.fragment().to_string(),
                highlights: snippet.highlighted().to_vec(),
                lexical_rank: None,
                semantic_rank: None,
                similarity: None,
                version,
            });
        }
        Ok(out)
    }

    /// Meaning search: the versions passing `req`'s filters nearest `query`, best first,
    /// scored by cosine similarity. The snippet is the value's beginning.
    pub fn nearest(
        &self,
        req: &fulltext::SearchRequest,
        vectors: std::sync::Arc<vectors::Vectors>,
        query: std::sync::Arc<vectors::Query>,
        tail: fulltext::Tail,
    ) -> Result<Vec<SearchHit>> {
        let hits = self.fulltext()?.nearest(req, vectors, query, tail)?;
        let mut out = Vec::with_capacity(hits.len());
        for hit in hits {
            let Some(version) = self.version(hit.id)? else {
                continue;
            };
            let mut end = version.value.len().min(160);
            while !version.value.is_char_boundary(end) {
                end -= 1;
            }
            out.push(SearchHit {
                id: hit.id,
                score: hit.score,
                snippet: version.value[..end].to_string(),
                highlights: Vec::new(),
                lexical_rank: None,
                semantic_rank: None,
                similarity: Some(hit.score),
                version,
            });
        }
        Ok(out)
    }

    /// The versions recorded just before and just after `hit` (by transaction time,
    /// within a day of it) that `req`'s clocks and filters let through: the facts written
    /// together with it, which a search lends a little of its score (`index::fusion`).
    pub fn written_beside(
        &self,
        hit: &SearchHit,
        req: &fulltext::SearchRequest,
    ) -> Result<Vec<SearchHit>> {
        let mut out = Vec::new();
        out.extend(self.written_next(hit, req, true, None)?);
        out.extend(self.written_next(hit, req, false, None)?);
        Ok(out)
    }

    /// The version of `hit`'s entity (a key starting with the entity and `:`) recorded
    /// next after it, within a day, that `req`'s clocks and filters let through: what the
    /// same person or thing said or had written next (`index::fusion::lend_entity_next`).
    pub fn entity_next(
        &self,
        hit: &SearchHit,
        req: &fulltext::SearchRequest,
    ) -> Result<Option<SearchHit>> {
        match super::fusion::entity(&hit.version.key) {
            Some(e) => self.written_next(hit, req, false, Some(&format!("{e}:"))),
            None => Ok(None),
        }
    }

    /// The version recorded next before (`before`) or after `hit` within a day, through
    /// `req`'s clocks and filters, its key starting with `within` when given.
    fn written_next(
        &self,
        hit: &SearchHit,
        req: &fulltext::SearchRequest,
        before: bool,
        within: Option<&str>,
    ) -> Result<Option<SearchHit>> {
        const DAY: i64 = 86_400_000_000;
        let tx = hit.version.tx_from.micros();
        let (side, order, lo, hi) = if before {
            ("<", "DESC", tx.saturating_sub(DAY), tx)
        } else {
            (">", "ASC", tx, tx.saturating_add(DAY))
        };
        let mut sql = format!(
            "SELECT * FROM versions WHERE tx_from {side} ?1 AND tx_from >= ?2 AND tx_from <= ?3
               AND {}",
            match_sql(Some("?5"), "?4")
        );
        let mut args: Vec<rusqlite::types::Value> = vec![
            tx.into(),
            lo.into(),
            hi.into(),
            req.as_of.micros().into(),
            req.valid_at.micros().into(),
        ];
        push_key_filters(&mut sql, &mut args, req.key_prefix.as_deref(), &req.tags);
        push_key_filters(&mut sql, &mut args, within, &[]);
        sql.push_str(&format!(" ORDER BY tx_from {order}, id {order} LIMIT 1"));
        let mut stmt = self.conn.prepare_cached(&sql)?;
        let mut rows = stmt.query(rusqlite::params_from_iter(args))?;
        let Some(row) = rows.next()? else {
            return Ok(None);
        };
        let id: i64 = row.get("id")?;
        let version = row_version(row)?;
        let mut end = version.value.len().min(160);
        while !version.value.is_char_boundary(end) {
            end -= 1;
        }
        Ok(Some(SearchHit {
            id: id as u64,
            score: 0.0,
            snippet: version.value[..end].to_string(),
            highlights: Vec::new(),
            lexical_rank: None,
            semantic_rank: None,
            similarity: None,
            version,
        }))
    }

    fn version(&self, id: u64) -> Result<Option<Version>> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT * FROM versions WHERE id = ?1")?;
        let mut rows = stmt.query([id as i64])?;
        Ok(match rows.next()? {
            Some(row) => Some(row_version(row)?),
            None => None,
        })
    }

    /// The generation's identity (its full-text directory, unique per generation).
    pub fn generation(&self) -> &Path {
        &self.fulltext_dir
    }

    /// The id and embedded-text hashes (the whole text's, then at most `sentences` of
    /// its sentences') of every version with an id above `after`.
    pub fn texts_after(&self, after: u64, sentences: usize) -> Result<Vec<vectors::Texts>> {
        self.texts_where("id > ?1 ORDER BY id", after, sentences)
    }

    /// [`Index::texts_after`] for the one version `id`, if there is one.
    pub fn texts_of(&self, id: u64, sentences: usize) -> Result<Option<vectors::Texts>> {
        Ok(self.texts_where("id = ?1", id, sentences)?.pop())
    }

    fn texts_where(&self, cond: &str, id: u64, sentences: usize) -> Result<Vec<vectors::Texts>> {
        let mut stmt = self
            .conn
            .prepare_cached(&format!("SELECT id, key, value FROM versions WHERE {cond}"))?;
        let mut rows = stmt.query([id as i64])?;
        let mut out = Vec::new();
        while let Some(row) = rows.next()? {
            let id: i64 = row.get(0)?;
            let key = row.get_ref(1)?.as_str()?;
            let value = row.get_ref(2)?.as_str()?;
            out.push(vectors::Texts::of(id as u64, key, value, sentences));
        }
        Ok(out)
    }

    /// Calls `f` with the key and value of every version (repeats included: sorting them
    /// out in SQL costs more than hashing them twice).
    pub fn for_each_text(&self, f: &mut dyn FnMut(&str, &str)) -> Result<()> {
        self.each_text("SELECT key, value FROM versions", f)
    }

    /// [`Index::for_each_text`], the versions recorded last first.
    pub fn for_each_text_newest(&self, f: &mut dyn FnMut(&str, &str)) -> Result<()> {
        self.each_text("SELECT key, value FROM versions ORDER BY id DESC", f)
    }

    /// [`Index::for_each_text`] of the versions `ids` (those there are).
    pub fn for_each_text_of(&self, ids: &[u64], f: &mut dyn FnMut(&str, &str)) -> Result<()> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT key, value FROM versions WHERE id = ?1")?;
        for id in ids {
            let mut rows = stmt.query([*id as i64])?;
            if let Some(row) = rows.next()? {
                f(row.get_ref(0)?.as_str()?, row.get_ref(1)?.as_str()?);
            }
        }
        Ok(())
    }

    fn each_text(&self, sql: &str, f: &mut dyn FnMut(&str, &str)) -> Result<()> {
        let mut stmt = self.conn.prepare(sql)?;
        let mut rows = stmt.query([])?;
        while let Some(row) = rows.next()? {
            f(row.get_ref(0)?.as_str()?, row.get_ref(1)?.as_str()?);
        }
        Ok(())
    }

    fn fulltext(&self) -> Result<&fulltext::FullText> {
        if let Some(ft) = self.fulltext.get() {
            return Ok(ft);
        }
        let ft = fulltext::FullText::open(&self.fulltext_dir)
            .ok_or_else(|| Error::full_text(&self.fulltext_dir, "missing"))?;
        Ok(self.fulltext.get_or_init(|| ft))
    }

    /// Versions in the order of one clock: `valid` lists what is believed now by when
    /// it held; `tx` lists every version by when mem7 recorded it.
    pub fn timeline(
        &self,
        by_tx: bool,
        since: Option<i64>,
        until: Option<i64>,
        key_prefix: Option<&str>,
    ) -> Result<Vec<Version>> {
        self.timeline_window(by_tx, since, until, key_prefix, None)
    }

    /// [`Index::timeline`], only the rows in `window` (offset, limit): a page costs its
    /// rows, not the whole timeline.
    pub fn timeline_window(
        &self,
        by_tx: bool,
        since: Option<i64>,
        until: Option<i64>,
        key_prefix: Option<&str>,
        window: Option<(usize, usize)>,
    ) -> Result<Vec<Version>> {
        let col = if by_tx { "tx_from" } else { "valid_from" };
        let mut sql = format!("SELECT * FROM versions WHERE {col} >= ?1 AND {col} < ?2");
        if !by_tx {
            sql.push_str(&format!(" AND tx_to = {}", OPEN));
        }
        let mut args: Vec<rusqlite::types::Value> = vec![
            since.unwrap_or(i64::MIN).into(),
            until.unwrap_or(OPEN).into(),
        ];
        if let Some(p) = key_prefix.filter(|p| !p.is_empty()) {
            args.push(p.to_string().into());
            sql.push_str(" AND key >= ?3 AND key < ?3 || char(1114111)");
        }
        sql.push_str(&format!(" ORDER BY {col}, key, id"));
        push_window(&mut sql, window);
        self.query(&sql, rusqlite::params_from_iter(args))
    }

    /// The existing keys in `key`'s slot (the same ignoring case and `_ - . :`, see
    /// [`crate::text::names::same_slot`]), `key` itself left out. An ASCII key is one
    /// lookup in `key_slots`; another key compares with every key, as the rule in
    /// `text::names` says.
    pub fn same_slot_keys(&self, key: &str) -> Result<Vec<String>> {
        if !key.is_ascii() {
            let keys = self.all_keys()?;
            return Ok(crate::text::names::same_slot(
                key,
                keys.iter().map(String::as_str),
            ));
        }
        let mut stmt = self
            .conn
            .prepare_cached("SELECT key FROM key_slots WHERE slot = ?1 ORDER BY key")?;
        let rows = stmt.query_map([crate::text::names::normalize(key)], |r| r.get(0))?;
        let found: Vec<String> = rows.collect::<rusqlite::Result<_>>()?;
        Ok(crate::text::names::same_slot(
            key,
            found.iter().map(String::as_str),
        ))
    }

    /// Every key that has a version, believed or not (sorted).
    pub fn all_keys(&self) -> Result<Vec<String>> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT DISTINCT key FROM versions ORDER BY key")?;
        let rows = stmt.query_map([], |r| r.get(0))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Versions of `key` believed now (transaction time still open).
    pub fn believed(&self, key: &str) -> Result<Vec<Version>> {
        self.query(
            "SELECT * FROM versions WHERE key = ?1 AND tx_to = ?2 ORDER BY valid_from",
            params![key, OPEN],
        )
    }

    /// Every version believed now, of every key (sorted by key, then valid_from).
    pub fn all_believed(&self) -> Result<Vec<Version>> {
        self.query(
            "SELECT * FROM versions WHERE tx_to = ?1 ORDER BY key, valid_from, id",
            params![OPEN],
        )
    }

    /// The version(s) of `key` matching (`valid_at`, `as_of`): one for a key of one
    /// value, every value for a key of many, newest first.
    pub fn recall(&self, key: &str, valid_at: ValidTime, as_of: TxTime) -> Result<Vec<Version>> {
        self.query(
            &format!(
                "SELECT * FROM versions WHERE key = ?1 AND {}
                   ORDER BY valid_from DESC, tx_from DESC, id DESC",
                match_sql(Some("?2"), "?3")
            ),
            params![key, valid_at.micros(), as_of.micros()],
        )
    }

    /// Every version of `key` ever recorded (or believed at `as_of`), in transaction order.
    pub fn history(&self, key: &str, as_of: Option<TxTime>) -> Result<Vec<Version>> {
        match as_of {
            None => self.query(
                "SELECT * FROM versions WHERE key = ?1 ORDER BY tx_from, valid_from, id",
                params![key],
            ),
            Some(t) => self.query(
                &format!(
                    "SELECT * FROM versions WHERE key = ?1 AND {} ORDER BY tx_from, valid_from, id",
                    match_sql(None, "?2")
                ),
                params![key, t.micros()],
            ),
        }
    }

    /// Matching versions of every key, optionally under a prefix and carrying all `tags`.
    pub fn list(
        &self,
        prefix: Option<&str>,
        tags: &[String],
        valid_at: ValidTime,
        as_of: TxTime,
    ) -> Result<Vec<Version>> {
        self.list_window(prefix, tags, valid_at, as_of, None)
    }

    /// [`Index::list`], only the rows in `window` (offset, limit).
    pub fn list_window(
        &self,
        prefix: Option<&str>,
        tags: &[String],
        valid_at: ValidTime,
        as_of: TxTime,
        window: Option<(usize, usize)>,
    ) -> Result<Vec<Version>> {
        // A page walks the key index in order and stops after its rows; without the
        // hint SQLite filters by valid_from and sorts every match first (88 ms for a
        // first page at 100k versions, against under 1 ms).
        let hint = if window.is_some() {
            " INDEXED BY versions_by_key"
        } else {
            ""
        };
        let mut sql = format!(
            "SELECT * FROM versions{hint} WHERE {}",
            match_sql(Some("?2"), "?1")
        );
        let mut args: Vec<rusqlite::types::Value> =
            vec![as_of.micros().into(), valid_at.micros().into()];
        push_key_filters(&mut sql, &mut args, prefix, tags);
        // A key of many values lists them newest first.
        sql.push_str(" ORDER BY key, valid_from DESC, tx_from DESC, id DESC");
        push_window(&mut sql, window);
        self.query(&sql, rusqlite::params_from_iter(args))
    }

    /// [`Index::list`] without a filter, one version at a time (sorted by key, then
    /// valid_from), so that an export never holds the whole answer in memory.
    pub fn list_each(
        &self,
        valid_at: ValidTime,
        as_of: TxTime,
        f: &mut dyn FnMut(Version) -> Result<()>,
    ) -> Result<()> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT * FROM versions WHERE {} ORDER BY key, valid_from DESC, tx_from DESC, id DESC",
            match_sql(Some("?2"), "?1")
        ))?;
        let rows = stmt.query_map(params![as_of.micros(), valid_at.micros()], row_version)?;
        for row in rows {
            f(row?)?;
        }
        Ok(())
    }

    /// Versions recorded or retracted in (`since`, `until`]: what changed in that
    /// stretch of transaction time, in the order it was recorded.
    pub fn changed_between(&self, since: TxTime, until: TxTime) -> Result<Vec<Version>> {
        self.query(
            "SELECT * FROM versions
              WHERE (tx_from > ?1 AND tx_from <= ?2) OR (tx_to > ?1 AND tx_to <= ?2)
              ORDER BY tx_from, key, id",
            params![since.micros(), until.micros()],
        )
    }

    /// Every version in the index (for consistency checks).
    pub fn all_versions(&self) -> Result<Vec<Version>> {
        self.query(
            "SELECT * FROM versions ORDER BY key, tx_from, valid_from, id",
            [],
        )
    }

    fn query(&self, sql: &str, args: impl rusqlite::Params) -> Result<Vec<Version>> {
        let mut stmt = self.conn.prepare_cached(sql)?;
        let rows = stmt.query_map(args, row_version)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}

/// `LIMIT … OFFSET …` for a window of rows (numbers, never text from a request).
/// Adds a read's key prefix and tag filters to `sql` (its arguments to `args`): the
/// prefix as a range on the key index, every key with it sorting in [p, p || U+10FFFF);
/// each tag as containment ([`push_carries`]).
fn push_key_filters(
    sql: &mut String,
    args: &mut Vec<rusqlite::types::Value>,
    prefix: Option<&str>,
    tags: &[String],
) {
    if let Some(p) = prefix.filter(|p| !p.is_empty()) {
        args.push(p.to_string().into());
        sql.push_str(&format!(
            " AND key >= ?{n} AND key < ?{n} || char(1114111)",
            n = args.len()
        ));
    }
    push_carries(sql, args, tags, 0);
}

/// Tag containment ([`crate::core::read_rule::carries`]) as SQL on the stored tag text
/// ([`crate::core::read_rule::stored_tags`]): ` AND instr(tags, ?n) > 0` with each tag's
/// needle as an argument, numbered after `before` parameters the query binds itself.
pub(super) fn push_carries(
    sql: &mut String,
    args: &mut Vec<rusqlite::types::Value>,
    tags: &[String],
    before: usize,
) {
    for t in tags {
        args.push(crate::core::read_rule::tag_needle(t).into());
        sql.push_str(&format!(" AND instr(tags, ?{}) > 0", before + args.len()));
    }
}

pub(super) fn push_window(sql: &mut String, window: Option<(usize, usize)>) {
    if let Some((offset, limit)) = window {
        sql.push_str(&format!(" LIMIT {limit} OFFSET {offset}"));
    }
}

/// The read match rule ([`crate::core::read_rule::MATCH`]) as an SQL condition on the versions
/// table: `valid` and `as_of` name the SQL parameters holding the read's clocks. Without
/// `valid`, only the transaction-time bounds: "believed at `as_of`".
pub(super) fn match_sql(valid: Option<&str>, as_of: &str) -> String {
    use crate::core::read_rule::{Clock, MATCH, Side};
    MATCH
        .iter()
        .filter_map(|&(column, side, clock)| {
            let t = match clock {
                Clock::ValidAt => valid?,
                Clock::AsOf => as_of,
            };
            let op = match side {
                Side::Start => "<=",
                Side::End => ">",
            };
            Some(format!("{} {op} {t}", column.name()))
        })
        .collect::<Vec<_>>()
        .join(" AND ")
}

#[cfg(test)]
mod tests {
    use super::match_sql;

    #[test]
    fn the_sql_match_rule_is_generated_from_the_core_one() {
        assert_eq!(
            match_sql(Some("?2"), "?1"),
            "valid_from <= ?2 AND valid_to > ?2 AND tx_from <= ?1 AND tx_to > ?1"
        );
        assert_eq!(match_sql(None, "?3"), "tx_from <= ?3 AND tx_to > ?3");
    }
}
