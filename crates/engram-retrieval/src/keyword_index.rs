//! Keyword postings kept in memory for the keyword path.
//!
//! FTS5 ranks every row a query matches before it can return the best few: for each one it
//! runs `bm25()`, which looks up the row's length with a nested statement. At 10,000
//! memories that is over half the time of a keyword search. A long-lived host can instead
//! keep the postings in memory and pass the best ids into the candidate statement, which
//! then only fetches and filters them (the resident vectors do the same for the dense path).
//!
//! The index holds exactly what `memories_fts` holds, so its scores are FTS5's: the terms come
//! from [`engram_core::fts_terms`] (FTS5's `porter unicode61` tokenizer, checked against the
//! engine), and [`KeywordIndex::best`] computes FTS5's BM25 with the keyword path's column
//! weights, in FTS5's order of operations. Keeping it in step with the table (a change log
//! read in the same statement) is the engine's job.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap};

use engram_core::fts_terms::for_each_term;

/// BM25's term-frequency saturation, as FTS5 has it.
pub const K1: f64 = 1.2;
/// BM25's length normalization, as FTS5 has it.
pub const B: f64 = 0.75;
/// The weights of the indexed columns (content, tags, related files) in the keyword path's
/// BM25: tags count three times, file paths twice.
pub const COLUMN_WEIGHTS: [u32; 3] = [1, 3, 2];
/// The lowest inverse document frequency FTS5 gives a term (one in at least half the rows
/// would otherwise score zero or less).
pub const MIN_IDF: f64 = 1e-6;

/// The indexed text of one memory: its content, its tags and its related files, each as
/// the keyword table stores it (tags and paths joined by spaces), and its project.
#[derive(Debug, Clone, Copy)]
pub struct KeywordColumns<'a> {
    /// The memory's content.
    pub content: &'a str,
    /// Its tags, space-separated.
    pub tags: &'a str,
    /// Its related files, space-separated.
    pub files: &'a str,
    /// Its project's id: a search may rank one project's memories alone.
    pub project: &'a str,
}

/// Term postings of every memory in the keyword table, with the change-log position they
/// reflect.
#[derive(Debug, Clone, Default)]
pub struct KeywordIndex {
    terms: HashMap<Box<str>, u32>,
    postings: Vec<Vec<Posting>>,
    docs: Vec<Option<Document>>,
    slots: HashMap<Box<str>, u32>,
    projects: HashMap<Box<str>, u32>,
    free: Vec<u32>,
    total_terms: u64,
    live: usize,
    seq: i64,
}

/// One document's weighted frequency of one term.
#[derive(Debug, Clone, Copy)]
struct Posting {
    slot: u32,
    frequency: u32,
}

#[derive(Debug, Clone)]
struct Document {
    id: Box<str>,
    /// Its project, interned.
    project: u32,
    /// Terms in all columns: the length FTS5 records.
    length: u32,
    /// The terms it has postings under.
    terms: Box<[u32]>,
}

impl KeywordIndex {
    /// An empty index at change-log position 0.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many memories the index holds.
    pub fn len(&self) -> usize {
        self.live
    }

    /// Whether the index holds no memory.
    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// The change-log position the index reflects: every change up to it is applied.
    pub fn seq(&self) -> i64 {
        self.seq
    }

    /// Records that every change up to `seq` is applied (positions never go back).
    pub fn advance_to(&mut self, seq: i64) {
        self.seq = self.seq.max(seq);
    }

    /// Whether the index holds `id`.
    pub fn contains(&self, id: &str) -> bool {
        self.slots.contains_key(id)
    }

    /// How many memories hold `term` (a stemmed term, as FTS5 indexes it).
    pub fn document_frequency(&self, term: &str) -> usize {
        self.terms
            .get(term)
            .map_or(0, |&t| self.postings[t as usize].len())
    }

    /// Adds or replaces the memory `id`.
    pub fn upsert(&mut self, id: &str, columns: KeywordColumns<'_>) {
        self.remove(id);
        let mut frequencies: HashMap<u32, u32> = HashMap::new();
        let mut length = 0u32;
        let texts = [columns.content, columns.tags, columns.files];
        for (text, weight) in texts.into_iter().zip(COLUMN_WEIGHTS) {
            for_each_term(text, |term| {
                length = length.saturating_add(1);
                let t = self.intern(term);
                *frequencies.entry(t).or_default() += weight;
            });
        }
        let slot = match self.free.pop() {
            Some(slot) => slot,
            None => {
                self.docs.push(None);
                (self.docs.len() - 1) as u32
            }
        };
        let mut terms: Vec<u32> = frequencies.keys().copied().collect();
        terms.sort_unstable();
        for (&t, &frequency) in &frequencies {
            self.postings[t as usize].push(Posting { slot, frequency });
        }
        let next_project = self.projects.len() as u32;
        let project = *self
            .projects
            .entry(columns.project.into())
            .or_insert(next_project);
        self.docs[slot as usize] = Some(Document {
            id: id.into(),
            project,
            length,
            terms: terms.into(),
        });
        self.slots.insert(id.into(), slot);
        self.total_terms += u64::from(length);
        self.live += 1;
    }

    /// Removes the memory `id`; returns whether it was there.
    pub fn remove(&mut self, id: &str) -> bool {
        let Some(slot) = self.slots.remove(id) else {
            return false;
        };
        if let Some(doc) = self.docs[slot as usize].take() {
            for &t in doc.terms.iter() {
                let postings = &mut self.postings[t as usize];
                if let Some(i) = postings.iter().position(|p| p.slot == slot) {
                    postings.swap_remove(i);
                }
            }
            self.total_terms -= u64::from(doc.length);
        }
        self.free.push(slot);
        self.live -= 1;
        true
    }

    /// The terms of `query` (stemmed, in the order of its phrases) that FTS5's BM25 can rank
    /// by: those in fewer than half the memories. Every term when none is (the keyword path
    /// then searches with all of them).
    pub fn informative<'a>(&self, query: &[&'a str]) -> Vec<&'a str> {
        let kept: Vec<&str> = query
            .iter()
            .copied()
            .filter(|term| 2 * self.document_frequency(term) < self.live)
            .collect();
        if kept.is_empty() {
            query.to_vec()
        } else {
            kept
        }
    }

    /// The `k` memories that rank best for a query of one phrase per term in `query`
    /// (stemmed terms, OR-ed), best first, ties by id, each with its score: the negated
    /// `bm25(memories_fts, 0, 1, 3, 2)` FTS5 computes for it. A repeated term counts once
    /// per occurrence, as a repeated phrase does in FTS5.
    pub fn best(&self, query: &[&str], k: usize) -> Vec<(&str, f64)> {
        self.best_with(query, k, None, &mut ScoreScratch::default())
    }

    /// [`KeywordIndex::best`] among the memories of `project` (every project's with
    /// `None`; the statistics are the whole index's either way, as FTS5's are the
    /// table's), with the score accumulators in `scratch`, which a caller keeps between
    /// searches: a search then touches only the memories its terms match, where a fresh
    /// array is a zeroed allocation of 8 bytes per memory (800 KB at 100K).
    pub fn best_with(
        &self,
        query: &[&str],
        k: usize,
        project: Option<&str>,
        scratch: &mut ScoreScratch,
    ) -> Vec<(&str, f64)> {
        if self.live == 0 || k == 0 {
            return Vec::new();
        }
        let project = match project.map(|p| self.projects.get(p)) {
            None => None,
            Some(Some(&p)) => Some(p),
            Some(None) => return Vec::new(),
        };
        let rows = self.live as f64;
        let average_length = self.total_terms as f64 / rows;
        let scores = &mut scratch.scores;
        scores.resize(self.docs.len(), 0.0);
        let mut matched: Vec<u32> = Vec::new();
        for term in query {
            let Some(&t) = self.terms.get(*term) else {
                continue;
            };
            let postings = &self.postings[t as usize];
            let hits = postings.len() as f64;
            let mut idf = ((rows - hits + 0.5) / (hits + 0.5)).ln();
            if idf <= 0.0 {
                idf = MIN_IDF;
            }
            for posting in postings {
                let Some(doc) = &self.docs[posting.slot as usize] else {
                    continue;
                };
                if project.is_some_and(|p| p != doc.project) {
                    continue;
                }
                let frequency = f64::from(posting.frequency);
                let length = f64::from(doc.length);
                // FTS5's expression, operation for operation, so scores agree to the bit.
                let score = idf
                    * ((frequency * (K1 + 1.0))
                        / (frequency + K1 * (1.0 - B + B * length / average_length)));
                let slot = posting.slot as usize;
                if scores[slot] == 0.0 {
                    matched.push(posting.slot);
                }
                scores[slot] += score;
            }
        }
        let id = |slot: u32| -> &str {
            self.docs[slot as usize]
                .as_ref()
                .map_or("", |doc| doc.id.as_ref())
        };
        // The best `k` so far with the worst on top: most matches lose to it on the score
        // alone, one comparison each.
        let mut kept: BinaryHeap<Ranked<'_>> = BinaryHeap::with_capacity(k.min(matched.len()));
        for &slot in &matched {
            let candidate = Ranked {
                score: scores[slot as usize],
                id: id(slot),
            };
            if kept.len() < k {
                kept.push(candidate);
            } else if let Some(mut worst) = kept.peek_mut() {
                if candidate < *worst {
                    *worst = candidate;
                }
            }
        }
        for &slot in &matched {
            scores[slot as usize] = 0.0;
        }
        kept.into_sorted_vec()
            .into_iter()
            .map(|ranked| (ranked.id, ranked.score))
            .collect()
    }

    fn intern(&mut self, term: &str) -> u32 {
        if let Some(&t) = self.terms.get(term) {
            return t;
        }
        let t = self.postings.len() as u32;
        self.postings.push(Vec::new());
        self.terms.insert(term.into(), t);
        t
    }
}

/// Score accumulators for [`KeywordIndex::best_with`], one per memory slot, every one zero
/// between searches.
#[derive(Debug, Clone, Default)]
pub struct ScoreScratch {
    scores: Vec<f64>,
}

/// A match in [`KeywordIndex::best`]'s order: a higher score first, then the smaller id, so
/// that a greater value ranks lower and a [`BinaryHeap`] keeps the worst on top.
struct Ranked<'a> {
    score: f64,
    id: &'a str,
}

impl Ord for Ranked<'_> {
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .score
            .total_cmp(&self.score)
            .then_with(|| self.id.cmp(other.id))
    }
}

impl PartialOrd for Ranked<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Ranked<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other).is_eq()
    }
}

impl Eq for Ranked<'_> {}

#[cfg(test)]
mod tests {
    use super::*;

    fn columns<'a>(content: &'a str, tags: &'a str, files: &'a str) -> KeywordColumns<'a> {
        KeywordColumns {
            content,
            tags,
            files,
            project: "p",
        }
    }

    /// FTS5's BM25 written out from its definition, for one document.
    fn bm25(idfs: &[f64], frequencies: &[f64], length: f64, average: f64) -> f64 {
        idfs.iter()
            .zip(frequencies)
            .map(|(idf, f)| idf * (f * (K1 + 1.0)) / (f + K1 * (1.0 - B + B * length / average)))
            .sum()
    }

    #[test]
    fn scores_follow_fts5s_bm25_with_column_weights() {
        let mut index = KeywordIndex::new();
        index.upsert("a", columns("retry the upload", "upload", "src/upload.rs"));
        index.upsert("b", columns("upload fails on retries", "", ""));
        index.upsert("c", columns("nothing relevant here at all", "misc", ""));
        index.upsert("d", columns("more words about nothing", "", ""));
        // Lengths: a 3 + 1 + 3 = 7, b 4, c 5 + 1 = 6, d 4; 21 terms over 4 rows.
        let average = 21.0 / 4.0;
        let idf = |hits: f64| f64::ln((4.0 - hits + 0.5) / (hits + 0.5)).max(MIN_IDF);
        let best = index.best(&["upload", "retri"], 10);
        assert_eq!(best.iter().map(|h| h.0).collect::<Vec<_>>(), ["a", "b"]);
        // "upload" is in two rows (idf ln(5/5) → the floor), "retri" in two as well.
        let (u, r) = (idf(2.0), idf(2.0));
        // a: upload once in content, once in tags (×3), once in files (×2) = 6; retry once.
        let a = bm25(&[u, r], &[6.0, 1.0], 7.0, average);
        let b = bm25(&[u, r], &[1.0, 1.0], 4.0, average);
        assert!((best[0].1 - a).abs() < 1e-12, "{} {a}", best[0].1);
        assert!((best[1].1 - b).abs() < 1e-12, "{} {b}", best[1].1);
        assert_eq!(index.document_frequency("upload"), 2);
        assert_eq!(index.informative(&["upload", "misc", "retri"]), ["misc"]);
        assert_eq!(index.informative(&["upload"]), ["upload"]);
    }

    #[test]
    fn ties_go_by_id_and_k_bounds_the_result() {
        let mut index = KeywordIndex::new();
        for id in ["c", "a", "b"] {
            index.upsert(id, columns("same words", "", ""));
        }
        index.upsert("z", columns("other", "", ""));
        let best = index.best(&["same"], 2);
        assert_eq!(best.iter().map(|h| h.0).collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(best[0].1, best[1].1);
        assert!(index.best(&["absent"], 5).is_empty());
        assert!(index.best(&["same"], 0).is_empty());
    }

    #[test]
    fn the_best_k_are_the_first_k_of_every_match() {
        let mut index = KeywordIndex::new();
        let words = ["alpha", "beta", "gamma", "delta", "omega"];
        for n in 0..300usize {
            // Documents of two to six words, with repeats: many share a score exactly.
            let text: Vec<&str> = (0..2 + n % 5).map(|i| words[(n * 7 + i * i) % 5]).collect();
            index.upsert(&format!("m{n:03}"), columns(&text.join(" "), "", ""));
        }
        let query = ["alpha", "gamma", "omega"];
        let every = index.best(&query, usize::MAX);
        assert!(every.len() > 200, "{}", every.len());
        for pair in every.windows(2) {
            let ((a, sa), (b, sb)) = (pair[0], pair[1]);
            assert!(sa > sb || (sa == sb && a < b), "{a} {sa} before {b} {sb}");
        }
        for k in [1, 2, 5, 37, 80, every.len(), every.len() + 5] {
            assert_eq!(
                index.best(&query, k),
                every[..k.min(every.len())],
                "k = {k}"
            );
        }
        // Scratch kept across searches, and across a change to the index, leaves no trace.
        let mut scratch = ScoreScratch::default();
        let queries: [&[&str]; 4] = [&query, &["beta"], &["delta", "alpha"], &query];
        for (round, terms) in queries.into_iter().enumerate() {
            if round == 2 {
                index.upsert("m999", columns("alpha delta delta", "", ""));
            }
            assert_eq!(
                index.best_with(terms, 40, None, &mut scratch),
                index.best(terms, 40)
            );
        }
    }

    #[test]
    fn replacing_and_removing_keep_statistics_exact() {
        let mut index = KeywordIndex::new();
        index.upsert("a", columns("alpha beta", "", ""));
        index.upsert("b", columns("beta gamma delta", "", ""));
        let fresh = {
            let mut fresh = KeywordIndex::new();
            fresh.upsert("b", columns("beta gamma delta", "", ""));
            fresh.upsert("c", columns("alpha", "", ""));
            fresh
        };
        index.upsert("a", columns("unrelated", "", ""));
        assert!(index.remove("a"));
        assert!(!index.remove("a"));
        index.upsert("c", columns("alpha", "", ""));
        assert_eq!(index.len(), 2);
        for query in [&["alpha"][..], &["beta", "alpha"], &["gamma", "delta"]] {
            assert_eq!(index.best(query, 5), fresh.best(query, 5), "{query:?}");
        }
        assert_eq!(index.document_frequency("unrel"), 0);
        index.advance_to(4);
        index.advance_to(2);
        assert_eq!(index.seq(), 4);
    }

    #[test]
    fn a_project_keeps_its_own_matches_scored_by_the_whole_index() {
        let mut index = KeywordIndex::new();
        for n in 0..40usize {
            let project = if n % 4 == 0 { "small" } else { "large" };
            let text = ["lock wait", "lock retry lock", "upload wait"][n % 3];
            index.upsert(
                &format!("m{n:02}"),
                KeywordColumns {
                    project,
                    ..columns(text, "", "")
                },
            );
        }
        let mut scratch = ScoreScratch::default();
        let query = ["lock", "wait"];
        let every = index.best(&query, usize::MAX);
        let small = index.best_with(&query, usize::MAX, Some("small"), &mut scratch);
        assert_eq!(small.len(), 10);
        let expected: Vec<_> = every
            .iter()
            .filter(|(id, _)| id[1..].parse::<usize>().is_ok_and(|n| n % 4 == 0))
            .copied()
            .collect();
        assert_eq!(small, expected);
        assert_eq!(
            index.best_with(&query, 3, Some("small"), &mut scratch),
            expected[..3]
        );
        assert!(index
            .best_with(&query, 5, Some("absent"), &mut scratch)
            .is_empty());
        assert_eq!(index.best_with(&query, 5, None, &mut scratch), every[..5]);
    }

    #[test]
    fn an_empty_memory_counts_as_a_row_of_no_terms() {
        let mut index = KeywordIndex::new();
        index.upsert("a", columns("word", "", ""));
        let alone = index.best(&["word"], 1)[0].1;
        index.upsert("e", columns("", "", ""));
        assert_eq!(index.len(), 2);
        // Another row lowers the average length and raises the idf: the score changes.
        assert_ne!(index.best(&["word"], 1)[0].1, alone);
    }
}
