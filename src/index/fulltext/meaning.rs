//! The meaning side's scan over the full-text index: the versions passing a search's
//! filters, read by their clocks (fast fields) and ranked by their vectors' agreement
//! with the query's, then rescored exactly on a shortlist.

use super::*;

impl FullText {
    /// The versions passing `req`'s filters whose vectors are nearest `query` (unit
    /// length), best first, scored by cosine similarity: a brute-force scan of the
    /// filtered documents, and of the `tail` the index does not hold yet. Versions
    /// without a vector, and those at a cosine of 0 or below (nothing in common), are
    /// left out.
    pub fn nearest(
        &self,
        req: &SearchRequest,
        vectors: std::sync::Arc<crate::index::vectors::Vectors>,
        query: std::sync::Arc<crate::index::vectors::Query>,
        tail: Tail,
    ) -> Result<Vec<Hit>> {
        if req.limit == 0 {
            return Ok(Vec::new());
        }
        let searcher = self.searcher()?;
        // Shortlist by agreeing signs, then rank the shortlist exactly. Measured on 3,926
        // sentences embedded by the local model, a shortlist of 1,000 held 99.96% of the
        // exact top 30; on 11,513 (LoCoMo's turns and their sentences), 1,200 held 99.6%
        // of the exact top 100 and 99.1% of the top 150 (docs/internals/retrieval.md).
        // Each shortlisted row read from the vector file costs a page fault and its
        // unmapping at exit, so the shortlist is no deeper than a hybrid pool needs.
        let shortlist = req
            .limit
            .saturating_mul(SHORTLIST_PER_HIT)
            .clamp(1024, 40_000);
        let clocks_only =
            req.tags.is_empty() && req.key_prefix.as_deref().is_none_or(str::is_empty);
        let scanned = if clocks_only {
            self.scan_by_clocks(&searcher, req, &vectors, &query, shortlist)?
        } else {
            None
        };
        let top = match scanned {
            Some(top) => top,
            None => {
                // Tags and key prefixes go through the same clauses as the word side.
                let mut clauses = self.filters(req);
                clauses.push((Occur::Must, Box::new(AllQuery)));
                let filter = BooleanQuery::new(clauses);
                let (v, q) = (vectors.clone(), query.clone());
                let collector = TopDocs::with_limit(shortlist).custom_score(
                    move |segment: &tantivy::SegmentReader| {
                        let ids = segment.fast_fields().u64("id").ok();
                        let (vectors, query) = (v.clone(), q.clone());
                        move |doc: tantivy::DocId| {
                            ids.as_ref()
                                .and_then(|c| c.first(doc))
                                .and_then(|id| vectors.agreeing_signs(id, &query))
                                .map_or(f32::NEG_INFINITY, |n| n as f32)
                        }
                    },
                );
                let top = searcher
                    .search(&filter, &collector)
                    .map_err(|e| ft_err(&self.dir, e))?;
                // Without a vector: never rescored into the results.
                self.hits(&searcher, top.into_iter().filter(|(s, _)| s.is_finite()))?
            }
        };
        let mut hits = top;
        let ids: Vec<u64> = hits.iter().map(|h| h.id).collect();
        for (h, s) in hits.iter_mut().zip(vectors.similarities(&ids, &query)) {
            h.score = s.unwrap_or(f32::NEG_INFINITY);
        }
        // The versions the index does not hold yet: few, each compared exactly.
        for (id, v) in tail {
            if super::tail::passes(req, v)
                && let Some(s) = vectors.similarity(*id as u64, &query)
            {
                hits.push(Hit {
                    id: *id as u64,
                    score: s,
                });
            }
        }
        hits.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.id.cmp(&b.id)));
        // Orthogonal or opposite vectors share no meaning with the query: not a match.
        hits.retain(|h| h.score > 0.0);
        hits.truncate(req.limit);
        Ok(hits)
    }

    /// The shortlist of [`FullText::nearest`] when only the clocks filter: every live
    /// document's four clocks are read in blocks straight from the fast fields, with the
    /// same bounds as `filters` (from <= t < to on both clocks), and the versions held at
    /// that time are scored by agreeing signs. None when a column is not one value per
    /// document (never so in an index mem7 wrote): the caller uses the general path.
    fn scan_by_clocks(
        &self,
        searcher: &tantivy::Searcher,
        req: &SearchRequest,
        vectors: &crate::index::vectors::Vectors,
        query: &crate::index::vectors::Query,
        shortlist: usize,
    ) -> Result<Option<Vec<Hit>>> {
        const BLOCK: usize = 512;
        let (va, ao) = (req.valid_at.micros(), req.as_of.micros());
        // (agreeing signs, version id), cut back to the best `shortlist` as it grows.
        let mut top: Vec<(u32, u64)> = Vec::new();
        let best_first = |a: &(u32, u64), b: &(u32, u64)| b.0.cmp(&a.0).then(a.1.cmp(&b.1));
        let mut clocks = [[0i64; BLOCK]; 4];
        for segment in searcher.segment_readers() {
            let fast = segment.fast_fields();
            let err = |e| ft_err(&self.dir, e);
            let ids = fast.u64("id").map_err(err)?;
            let columns = [
                fast.i64(Column::ValidFrom.name()).map_err(err)?,
                fast.i64(Column::ValidTo.name()).map_err(err)?,
                fast.i64(Column::TxFrom.name()).map_err(err)?,
                fast.i64(Column::TxTo.name()).map_err(err)?,
            ];
            let full = |index: &tantivy::columnar::ColumnIndex| {
                matches!(index, tantivy::columnar::ColumnIndex::Full)
            };
            if !full(&ids.index) || !columns.iter().all(|c| full(&c.index)) {
                return Ok(None);
            }
            let alive = segment.alive_bitset();
            let docs = segment.max_doc();
            for start in (0..docs).step_by(BLOCK) {
                let len = BLOCK.min((docs - start) as usize);
                for (column, values) in columns.iter().zip(clocks.iter_mut()) {
                    column
                        .values
                        .get_range(u64::from(start), &mut values[..len]);
                }
                let [vf, vt, tf, tt] = &clocks;
                for i in 0..len {
                    if !crate::core::read_rule::matches([vf[i], vt[i], tf[i], tt[i]], va, ao) {
                        continue;
                    }
                    let doc = start + i as u32;
                    if alive.is_some_and(|a| !a.is_alive(doc)) {
                        continue;
                    }
                    let id = ids.values.get_val(doc);
                    if let Some(agree) = vectors.agreeing_signs(id, query) {
                        top.push((agree, id));
                    }
                }
                if top.len() >= 2 * shortlist {
                    top.select_nth_unstable_by(shortlist - 1, best_first);
                    top.truncate(shortlist);
                }
            }
        }
        top.sort_unstable_by(best_first);
        top.truncate(shortlist);
        Ok(Some(
            top.into_iter()
                .map(|(agree, id)| Hit {
                    id,
                    score: agree as f32,
                })
                .collect(),
        ))
    }
}
