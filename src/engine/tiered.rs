//! Reads narrowed by who vouches for a fact (`--tier`, a tool's `tier`): the filters the
//! index has no column for yet are applied here, once, for every front end.

use super::*;
use crate::core::tier;
use crate::index::SearchHit;
use crate::index::fulltext::SearchRequest;

/// A filtered search asks for this many times more hits each round, up to this many.
const WIDEN: usize = 4;
const MAX_ASKED: usize = 10_000;

impl Engine {
    /// [`Engine::search`] keeping only hits of `tier` (all when `None`): the search is
    /// asked for more until `req.limit` hits of that tier are found or none are left. A
    /// key's values come newest first in the places they rank.
    pub fn search_tier(
        &mut self,
        req: &SearchRequest,
        wanted: Option<Tier>,
    ) -> Result<Vec<SearchHit>> {
        if wanted.is_none() {
            let mut hits = self.search(req)?;
            crate::core::many::newest_first_within_keys(&mut hits, |h| &h.version);
            return Ok(hits);
        }
        let mut asked = req.limit.max(1);
        loop {
            let hits = self.search(&SearchRequest {
                limit: asked,
                ..req.clone()
            })?;
            let exhausted = hits.len() < asked || asked >= MAX_ASKED;
            let mut kept: Vec<SearchHit> = hits
                .into_iter()
                .filter(|h| tier::keeps(wanted, h.version.tier))
                .collect();
            if kept.len() >= req.limit || exhausted {
                kept.truncate(req.limit);
                crate::core::many::newest_first_within_keys(&mut kept, |h| &h.version);
                return Ok(kept);
            }
            asked = (asked * WIDEN).min(MAX_ASKED);
        }
    }
}
