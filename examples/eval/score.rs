//! The measures, per question and summed per row: hit@k (a gold fact among the first k
//! results), recall@k (the share of the gold facts among the first k), session recall@10
//! (the share of the gold facts' sessions that some result among the first 10 comes
//! from) and the whole-process latency of the search.

use std::time::Duration;

use crate::set::Fact;

/// Results asked of every search; the deepest cut measured.
pub const DEPTH: usize = 10;

#[derive(Default)]
pub struct Tally {
    questions: usize,
    hit1: usize,
    hit5: usize,
    hit10: usize,
    recall5: f64,
    recall10: f64,
    /// Summed over the questions whose gold facts have sessions; `with_sessions` counts them.
    session_recall: f64,
    with_sessions: usize,
    latencies: Vec<Duration>,
}

impl Tally {
    /// Scores one search: `found` is its results in order, each mapped back to the fact it
    /// stores (`None` for a key no fact of the set is stored under).
    pub fn add(&mut self, gold: &[Fact], found: &[Option<Fact>], took: Duration) {
        let is_gold = |f: &Option<Fact>| f.as_ref().is_some_and(|f| gold.contains(f));
        let hit = |k: usize| found.iter().take(k).any(is_gold) as usize;
        let recall = |k: usize| {
            let top = &found[..k.min(found.len())];
            let got = gold
                .iter()
                .filter(|g| top.iter().any(|f| f.as_ref() == Some(g)))
                .count();
            got as f64 / gold.len() as f64
        };
        self.questions += 1;
        self.hit1 += hit(1);
        self.hit5 += hit(5);
        self.hit10 += hit(10);
        self.recall5 += recall(5);
        self.recall10 += recall(10);
        let mut sessions: Vec<&String> = gold.iter().filter_map(|g| g.session.as_ref()).collect();
        sessions.sort();
        sessions.dedup();
        if !sessions.is_empty() {
            let top: Vec<&String> = found
                .iter()
                .take(DEPTH)
                .filter_map(|f| f.as_ref()?.session.as_ref())
                .collect();
            let got = sessions.iter().filter(|s| top.contains(s)).count();
            self.session_recall += got as f64 / sessions.len() as f64;
            self.with_sessions += 1;
        }
        self.latencies.push(took);
    }

    pub fn questions(&self) -> usize {
        self.questions
    }

    /// The table's cells after the row's names.
    fn cells(&self) -> String {
        let n = self.questions.max(1) as f64;
        let pct = |x: f64| format!("{:.1}", 100.0 * x / n);
        let session = if self.with_sessions == 0 {
            "–".to_string()
        } else {
            format!(
                "{:.1}",
                100.0 * self.session_recall / self.with_sessions as f64
            )
        };
        let mut ms: Vec<f64> = self
            .latencies
            .iter()
            .map(|d| d.as_secs_f64() * 1e3)
            .collect();
        ms.sort_by(f64::total_cmp);
        format!(
            "{} | {} | {} | {} | {} | {} | {session} | {:.0} | {:.0}",
            self.questions,
            pct(self.hit1 as f64),
            pct(self.hit5 as f64),
            pct(self.hit10 as f64),
            pct(self.recall5),
            pct(self.recall10),
            nearest_rank(&ms, 0.5),
            nearest_rank(&ms, 0.9),
        )
    }
}

/// The `p`-quantile by nearest rank (the smallest value with at least `p` of them at or
/// below it); 0 for none.
fn nearest_rank(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = (p * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// One line of the table.
pub struct Row<'a> {
    pub mode: &'a str,
    pub category: &'a str,
    pub tally: &'a Tally,
}

/// A markdown table, one row per mode and category.
pub fn table(rows: &[Row]) -> String {
    let mut out = String::from(
        "| mode | category | questions | hit@1 | hit@5 | hit@10 | recall@5 | recall@10 | session recall@10 | p50 ms | p90 ms |\n\
         |---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n",
    );
    for row in rows {
        out.push_str(&format!(
            "| {} | {} | {} |\n",
            row.mode,
            row.category,
            row.tally.cells()
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fact(id: &str, session: &str) -> Fact {
        Fact {
            id: id.into(),
            session: Some(session.into()),
        }
    }

    #[test]
    fn one_question() {
        let gold = [fact("D1:3", "1"), fact("D2:1", "2")];
        let mut found: Vec<Option<Fact>> = vec![None, Some(fact("D2:5", "2"))];
        found.extend((0..4).map(|i| Some(fact(&format!("D3:{i}"), "3"))));
        found.push(Some(fact("D1:3", "1")));
        let mut t = Tally::default();
        t.add(&gold, &found, Duration::from_millis(20));
        assert_eq!((t.hit1, t.hit5, t.hit10), (0, 0, 1));
        assert_eq!((t.recall5, t.recall10), (0.0, 0.5));
        assert_eq!(t.session_recall, 1.0);
        assert_eq!(nearest_rank(&[1.0, 2.0, 3.0, 4.0], 0.5), 2.0);
        assert_eq!(nearest_rank(&[1.0, 2.0, 3.0, 4.0], 0.9), 4.0);
    }
}
