//! The full-text side of the index: a tantivy index of every version (key, value, tags)
//! with the four clocks as fast fields, so time filters run inside the search.
//!
//! Documents are keyed by the SQLite version id of the same generation. SQLite is the
//! record; tantivy follows it, catching up from a change log on the next search.

mod meaning;
pub mod nosync;
mod tail;
mod words;

pub use tail::Tail;

use crate::core::read_rule::Column;
use std::ops::Bound;
use std::path::Path;

use tantivy::collector::TopDocs;
use tantivy::query::{
    AllQuery, BooleanQuery, BoostQuery, Occur, Query, QueryParser, RangeQuery, TermQuery,
};
use tantivy::schema::{
    FAST, Field, INDEXED, IndexRecordOption, STRING, Schema, TextFieldIndexing, TextOptions,
};
use tantivy::snippet::SnippetGenerator;
use tantivy::tokenizer::{
    Language, LowerCaser, RemoveLongFilter, SimpleTokenizer, StopWordFilter, TextAnalyzer,
};
use tantivy::{DocAddress, Index, IndexWriter, TantivyDocument, Term, doc};

pub use super::query::WordWeights;
use crate::core::Version;
use crate::core::time::{TxTime, ValidTime};
use crate::error::{Error, Result};

/// How much of a value full-text search reads: a fact is short (a value of 64 KiB is
/// already a document); the rest of a longer value is kept in the files and shown by
/// recall, but not searched.
pub const INDEXED_VALUE_BYTES: usize = 64 * 1024;

/// English text: split on non-alphanumerics, lower-case, drop stop words, stem.
const TEXT_ANALYZER: &str = "mem7_en";
/// Rows the meaning side shortlists by agreeing signs per hit it is asked for (at least
/// 1,024): 1,200 for hybrid search's pool of 150 (see [`FullText::nearest`]).
const SHORTLIST_PER_HIT: usize = 8;
/// Tags by their parts (`team-a` → `team`, `a`), no stemming.
const PARTS_ANALYZER: &str = "mem7_parts";
/// Keys by their words and compounds, stemmed like values (`index::keyparts`).
const KEY_ANALYZER: &str = "mem7_key";
/// Memory budget of the incremental writer: tantivy's minimum (15 MB) and a little. The
/// writer sizes its term table by its budget and zeroes it before the first document:
/// at 64 MB that was a quarter of the first search after a burst of writes (issue 36),
/// for the few hundred documents such a search adds. A large catch-up only writes more
/// segments.
const WRITER_MEMORY: usize = 16 * 1024 * 1024;
/// Memory budget per indexing thread of a rebuild's writer: a rebuild's peak memory must
/// not grow with the workspace, and tantivy fills its budget before it writes a segment.
const BULK_MEMORY_PER_THREAD: usize = 24 * 1024 * 1024;
/// The largest segment (in documents) an incremental writer merges: merging 8 segments
/// of this size takes a fraction of a second; larger ones (a rebuild's) stay as they are.
const MERGE_MAX_DOCS: usize = 50_000;
/// Segments a server lets its commits leave before a quiet moment merges them
/// ([`FullText::merge_small`]): a search reads each segment, so they must not grow
/// without end.
const QUIET_MERGE_SEGMENTS: usize = 8;

/// Whether a writer merges segments when it commits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Merges {
    /// In the commit (the command line: a process of its own, nobody waits for it).
    Now,
    /// Never in a commit: a server's commits run under its engine and a request may be
    /// waiting; it merges on a quiet moment instead ([`FullText::merge_small`]).
    Later,
}

/// The schema's fields.
#[derive(Clone, Copy)]
struct Fields {
    id: Field,
    key_parts: Field,
    key_exact: Field,
    value: Field,
    tags: Field,
    tags_text: Field,
    valid_from: Field,
    valid_to: Field,
    tx_from: Field,
    tx_to: Field,
}

fn schema() -> (Schema, Fields) {
    let mut b = Schema::builder();
    let text = |analyzer: &str| {
        TextOptions::default().set_indexing_options(
            TextFieldIndexing::default()
                .set_tokenizer(analyzer)
                .set_index_option(IndexRecordOption::WithFreqsAndPositions),
        )
    };
    let fields = Fields {
        id: b.add_u64_field("id", INDEXED | FAST),
        key_parts: b.add_text_field("key", text(KEY_ANALYZER)),
        key_exact: b.add_text_field("key_exact", STRING),
        value: b.add_text_field("value", text(TEXT_ANALYZER)),
        tags: b.add_text_field("tags", STRING),
        tags_text: b.add_text_field("tags_text", text(PARTS_ANALYZER)),
        valid_from: b.add_i64_field(Column::ValidFrom.name(), FAST),
        valid_to: b.add_i64_field(Column::ValidTo.name(), FAST),
        tx_from: b.add_i64_field(Column::TxFrom.name(), FAST),
        tx_to: b.add_i64_field(Column::TxTo.name(), FAST),
    };
    (b.build(), fields)
}

fn register_analyzers(index: &Index) {
    let english = TextAnalyzer::builder(SimpleTokenizer::default())
        .filter(RemoveLongFilter::limit(40))
        .filter(LowerCaser)
        .filter(
            StopWordFilter::new(Language::English)
                .unwrap_or_else(|| StopWordFilter::remove(Vec::<String>::new())),
        )
        .filter(super::stem::MemoStemmer)
        .build();
    let parts = TextAnalyzer::builder(SimpleTokenizer::default())
        .filter(RemoveLongFilter::limit(60))
        .filter(LowerCaser)
        .build();
    let key = TextAnalyzer::builder(super::keyparts::KeyPartsTokenizer::default())
        .filter(RemoveLongFilter::limit(60))
        .filter(super::stem::MemoStemmer)
        .build();
    index.tokenizers().register(TEXT_ANALYZER, english);
    index.tokenizers().register(PARTS_ANALYZER, parts);
    index.tokenizers().register(KEY_ANALYZER, key);
}

fn ft_err(dir: &Path, e: impl std::fmt::Display) -> Error {
    Error::full_text(dir, e)
}

/// What to search for.
#[derive(Clone, Debug)]
pub struct SearchRequest {
    /// The user's text (treated as words, never as query syntax unless `raw`).
    pub text: String,
    /// Interpret `text` as tantivy query syntax.
    pub raw: bool,
    pub valid_at: ValidTime,
    pub as_of: TxTime,
    pub tags: Vec<String>,
    pub key_prefix: Option<String>,
    pub limit: usize,
    /// Words, meaning, or both.
    pub mode: SearchMode,
}

/// How a search ranks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SearchMode {
    /// Hybrid when the workspace has vectors of the configured model, else lexical.
    #[default]
    Auto,
    /// BM25 over the words only.
    Lexical,
    /// Cosine similarity of embeddings only.
    Semantic,
    /// Both, fused by score (`index::fusion`).
    Hybrid,
}

impl SearchMode {
    /// The modes a request may name (auto is naming none).
    pub const NAMED: [SearchMode; 3] = [
        SearchMode::Lexical,
        SearchMode::Semantic,
        SearchMode::Hybrid,
    ];

    /// The word a request names it by (`--mode`, MCP's and the page's `mode`).
    pub fn name(self) -> &'static str {
        match self {
            SearchMode::Auto => "auto",
            SearchMode::Lexical => "lexical",
            SearchMode::Semantic => "semantic",
            SearchMode::Hybrid => "hybrid",
        }
    }

    /// The mode a request names, by [`SearchMode::name`] (not `auto`: naming none is auto).
    pub fn named(word: &str) -> Option<SearchMode> {
        Self::NAMED.into_iter().find(|m| m.name() == word)
    }
}

/// A search hit: the version id and its BM25 score.
#[derive(Clone, Copy, Debug)]
pub struct Hit {
    pub id: u64,
    pub score: f32,
}

/// An open tantivy index.
pub struct FullText {
    index: Index,
    fields: Fields,
    dir: std::path::PathBuf,
    /// Opened on the first search and kept: a long-running process (watch, the MCP
    /// server) then pays for opening the segments once, reloading after commits.
    reader: std::sync::OnceLock<tantivy::IndexReader>,
}

impl FullText {
    /// Creates an empty index in `dir` (which must not hold one).
    pub fn create(dir: &Path) -> Result<FullText> {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        let (schema, fields) = schema();
        let index = Index::create_in_dir(dir, schema).map_err(|e| ft_err(dir, e))?;
        register_analyzers(&index);
        Ok(FullText {
            index,
            fields,
            dir: dir.to_path_buf(),
            reader: std::sync::OnceLock::new(),
        })
    }

    /// Opens the index in `dir`; `None` when there is none (or it is unreadable).
    pub fn open(dir: &Path) -> Option<FullText> {
        if !dir.join("meta.json").is_file() {
            return None;
        }
        Self::opened(dir, Index::open_in_dir(dir).ok()?)
    }

    /// Opens the index in `dir` for a writer that merges as `merges` says: one that merges
    /// later (a server's) commits without `fsync` where a torn index can be told after a
    /// crash of the machine, so it marks the index unsynced first (see [`nosync`]). An
    /// index such a crash may have torn is discarded first: `None` then, as when there is
    /// none (or it is unreadable).
    pub fn open_to_write(dir: &Path, merges: Merges) -> Result<Option<FullText>> {
        nosync::discard_if_unsafe(dir).map_err(|e| Error::io(dir, e))?;
        if !dir.join("meta.json").is_file() {
            return Ok(None);
        }
        let Some(boot) = nosync::boot_id().filter(|_| merges == Merges::Later) else {
            return Ok(Self::open(dir));
        };
        nosync::mark(dir, &boot).map_err(|e| Error::io(dir, e))?;
        Ok(nosync::NoSync::open(dir)
            .ok()
            .and_then(|d| Index::open(d).ok())
            .and_then(|index| Self::opened(dir, index)))
    }

    fn opened(dir: &Path, index: Index) -> Option<FullText> {
        let (_, fields) = schema();
        register_analyzers(&index);
        Some(FullText {
            index,
            fields,
            dir: dir.to_path_buf(),
            reader: std::sync::OnceLock::new(),
        })
    }

    /// A writer (one at a time: callers hold the workspace lock). With [`Merges::Now`] it
    /// merges only small segments (`MERGE_MAX_DOCS`): its merges run inside the commit
    /// that starts them (see [`FullText::commit`]), so one search must never pay for
    /// rewriting the segments of a large rebuild. With [`Merges::Later`] it merges none.
    pub fn writer(&self, merges: Merges) -> Result<IndexWriter> {
        let w: IndexWriter = self
            .index
            .writer_with_num_threads(1, WRITER_MEMORY)
            .map_err(|e| ft_err(&self.dir, e))?;
        if merges == Merges::Now {
            let mut policy = tantivy::indexer::LogMergePolicy::default();
            policy.set_max_docs_before_merge(MERGE_MAX_DOCS);
            w.set_merge_policy(Box::new(policy));
        } else {
            w.set_merge_policy(Box::new(tantivy::indexer::NoMergePolicy));
        }
        Ok(w)
    }

    /// Merges the small segments a server's commits left ([`Merges::Later`]), when there
    /// are more than `QUIET_MERGE_SEGMENTS`, 8 (callers hold the workspace lock). Returns
    /// whether it merged. A commit without documents: tantivy considers merges after
    /// every commit, and [`FullText::commit`] waits for them.
    pub fn merge_small(&self) -> Result<bool> {
        let segments = self
            .index
            .searchable_segment_metas()
            .map_err(|e| ft_err(&self.dir, e))?;
        if segments.len() <= QUIET_MERGE_SEGMENTS {
            return Ok(false);
        }
        self.commit(self.writer(Merges::Now)?)?;
        Ok(true)
    }

    /// Adds the document of version `id`. Only the start of a long value is indexed
    /// ([`INDEXED_VALUE_BYTES`]), so the work per version is bounded whatever its size.
    pub fn add(&self, w: &IndexWriter, id: u64, v: &Version) -> Result<()> {
        let f = self.fields;
        let value = crate::core::validate::head_of(&v.value, INDEXED_VALUE_BYTES);
        let mut d: TantivyDocument = doc!(
            f.id => id,
            f.key_parts => v.key.as_str(),
            f.key_exact => v.key.as_str(),
            f.value => value,
            f.valid_from => v.valid_from.micros(),
            f.valid_to => v.valid_to.micros(),
            f.tx_from => v.tx_from.micros(),
            f.tx_to => v.tx_to.micros(),
        );
        for t in &v.tags {
            d.add_text(f.tags, t);
            d.add_text(f.tags_text, t);
        }
        w.add_document(d).map_err(|e| ft_err(&self.dir, e))?;
        Ok(())
    }

    /// Removes the document of version `id`.
    pub fn delete(&self, w: &IndexWriter, id: u64) {
        w.delete_term(Term::from_field_u64(self.fields.id, id));
    }

    /// A writer for building the whole index at once: both cores, a larger budget, and
    /// no merging while it runs.
    pub fn bulk_writer(&self) -> Result<IndexWriter> {
        let threads = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .clamp(1, 4);
        let w: IndexWriter = self
            .index
            .writer_with_num_threads(threads, BULK_MEMORY_PER_THREAD * threads)
            .map_err(|e| ft_err(&self.dir, e))?;
        w.set_merge_policy(Box::new(tantivy::indexer::NoMergePolicy));
        Ok(w)
    }

    /// Commits a writer's changes durably, then waits for the merges the commit started
    /// and closes the writer.
    ///
    /// Only a writer's own threads remove or replace files of the index: the commit, and
    /// each merge when it ends (it saves `meta.json` and deletes the merged segments).
    /// Callers hold the workspace lock, so that no other process's writer is reading
    /// those files meanwhile; a merge left running after the writer is dropped finishes
    /// outside the lock, and deleted segment files another server's writer had just
    /// listed (its search then failed: `FileDoesNotExist`), or could save `meta.json`
    /// over that writer's commit. Waiting here keeps every change to the files inside
    /// the lock. (Readers in other processes are safe on their own: tantivy opens a
    /// searcher's segments under its meta lock, which its garbage collection takes too.)
    pub fn commit(&self, mut w: IndexWriter) -> Result<()> {
        w.commit().map_err(|e| ft_err(&self.dir, e))?;
        w.wait_merging_threads().map_err(|e| ft_err(&self.dir, e))
    }

    /// Commits as [`FullText::commit`] does, naming `upto` as the last version id the
    /// index now holds ([`FullText::committed_upto`]).
    pub fn commit_upto(&self, mut w: IndexWriter, upto: i64) -> Result<()> {
        let mut prepared = w.prepare_commit().map_err(|e| ft_err(&self.dir, e))?;
        prepared.set_payload(&upto.to_string());
        prepared.commit().map_err(|e| ft_err(&self.dir, e))?;
        w.wait_merging_threads().map_err(|e| ft_err(&self.dir, e))
    }

    /// The last version id the latest commit named ([`FullText::commit_upto`]); `None`
    /// for a commit that named none (a build, a merge).
    pub fn committed_upto(&self) -> Option<i64> {
        self.index.load_metas().ok()?.payload?.parse().ok()
    }

    /// A searcher over the latest commit.
    fn searcher(&self) -> Result<tantivy::Searcher> {
        if let Some(reader) = self.reader.get() {
            reader.reload().map_err(|e| ft_err(&self.dir, e))?;
            return Ok(reader.searcher());
        }
        let reader = self
            .index
            .reader_builder()
            .reload_policy(tantivy::ReloadPolicy::Manual)
            .try_into()
            .map_err(|e| ft_err(&self.dir, e))?;
        Ok(self.reader.get_or_init(|| reader).searcher())
    }

    /// The time, tag and key filters of `req` as query clauses, shared by the word and the
    /// meaning side of a search so that both see the same versions.
    fn filters(&self, req: &SearchRequest) -> Vec<(Occur, Box<dyn Query>)> {
        let f = self.fields;
        let i64_range = |field: Field, lo: Bound<i64>, hi: Bound<i64>| -> Box<dyn Query> {
            let term = |v: i64| Term::from_field_i64(field, v);
            Box::new(RangeQuery::new(lo.map(term), hi.map(term)))
        };
        // The read match rule, generated from its one definition.
        use crate::core::read_rule::{Clock, MATCH, Side};
        let mut clauses: Vec<(Occur, Box<dyn Query>)> = MATCH
            .iter()
            .map(|&(column, side, clock)| {
                let field = match column {
                    Column::ValidFrom => f.valid_from,
                    Column::ValidTo => f.valid_to,
                    Column::TxFrom => f.tx_from,
                    Column::TxTo => f.tx_to,
                };
                let t = match clock {
                    Clock::ValidAt => req.valid_at.micros(),
                    Clock::AsOf => req.as_of.micros(),
                };
                let range = match side {
                    Side::Start => i64_range(field, Bound::Unbounded, Bound::Included(t)),
                    Side::End => i64_range(field, Bound::Excluded(t), Bound::Unbounded),
                };
                (Occur::Must, range)
            })
            .collect();
        // Tag containment (`core::read_rule::carries`): each tag a whole term of the untokenised
        // tags field, so `t1` never matches `t10`.
        for t in &req.tags {
            clauses.push((
                Occur::Must,
                Box::new(TermQuery::new(
                    Term::from_field_text(f.tags, t),
                    IndexRecordOption::Basic,
                )),
            ));
        }
        if let Some(p) = req.key_prefix.as_deref().filter(|p| !p.is_empty()) {
            let lower = p.to_string();
            let upper = format!("{lower}\u{10FFFF}");
            clauses.push((
                Occur::Must,
                Box::new(RangeQuery::new(
                    Bound::Included(Term::from_field_text(f.key_exact, &lower)),
                    Bound::Excluded(Term::from_field_text(f.key_exact, &upper)),
                )),
            ));
        }
        clauses
    }

    /// Turns tantivy's addresses into version ids.
    fn hits(
        &self,
        searcher: &tantivy::Searcher,
        top: impl Iterator<Item = (f32, DocAddress)>,
    ) -> Result<Vec<Hit>> {
        let mut hits = Vec::new();
        // One id column per segment, opened on first use (a shortlist has a thousand hits).
        let mut columns: Vec<Option<tantivy::columnar::Column<u64>>> =
            vec![None; searcher.segment_readers().len()];
        for (score, addr) in top {
            let slot = &mut columns[addr.segment_ord as usize];
            if slot.is_none() {
                *slot = Some(
                    searcher
                        .segment_reader(addr.segment_ord)
                        .fast_fields()
                        .u64("id")
                        .map_err(|e| ft_err(&self.dir, e))?,
                );
            }
            let column = slot.as_ref().expect("opened above");
            if let Some(id) = column.first(addr.doc_id) {
                hits.push(Hit { id, score });
            }
        }
        Ok(hits)
    }

    /// Searches, with every filter evaluated inside tantivy, and the `tail` the index
    /// does not hold yet beside it (`tail.rs`; a `--raw` query gets none). Returns hits
    /// best first and a snippet generator for the matched words.
    pub fn search(
        &self,
        req: &SearchRequest,
        weights: &WordWeights,
        tail: Tail,
    ) -> Result<(Vec<Hit>, SnippetGenerator)> {
        let f = self.fields;
        let limit = req.limit;
        let searcher = self.searcher()?;
        let tokens = self.tokens(tail)?;
        let stats = tail::Stats {
            searcher: &searcher,
            tail: &tokens,
        };
        let words = self.text_query(req, &stats, weights)?;
        let mut clauses = self.filters(req);
        clauses.insert(0, (Occur::Must, words.query.box_clone()));
        let query = BooleanQuery::new(clauses);
        let collector = TopDocs::with_limit(limit);
        let top: Vec<(f32, DocAddress)> = match (limit, tail.is_empty()) {
            (0, _) => Ok(Vec::new()),
            (_, true) => searcher.search(&query, &collector),
            (_, false) => searcher.search_with_statistics_provider(&query, &collector, &stats),
        }
        .map_err(|e| ft_err(&self.dir, e))?;
        let mut hits = self.hits(&searcher, top.into_iter())?;
        if let Some(clauses) = words
            .clauses
            .as_deref()
            .filter(|_| limit > 0 && !tail.is_empty())
        {
            hits.extend(self.tail_hits(req, clauses, &stats)?);
            // Stable: on a tie the index's document comes first.
            hits.sort_by(|a, b| b.score.total_cmp(&a.score));
            hits.truncate(limit);
        }
        let mut snippets = SnippetGenerator::create(&searcher, &*words.query, f.value)
            .map_err(|e| ft_err(&self.dir, e))?;
        snippets.set_max_num_chars(160);
        Ok((hits, snippets))
    }
}
