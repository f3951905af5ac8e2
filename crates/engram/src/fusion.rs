//! Reciprocal rank fusion of candidate paths.

use std::collections::HashMap;

use engram_core::Memory;

use crate::search::SearchHit;

/// The RRF constant (SPEC §6): `score = Σ 1 / (K + rank)`.
pub const RRF_K: f64 = 60.0;

/// A candidate path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Path {
    /// FTS5 BM25; the metric is the bm25() value (lower is better).
    Keyword,
    /// Vectors; the metric is the cosine distance.
    Dense,
}

/// Accumulates ranked candidates from several paths.
#[derive(Default)]
pub struct Fusion {
    hits: Vec<SearchHit>,
    by_id: HashMap<String, usize>,
}

impl Fusion {
    /// Adds `memory` at 1-based `rank` of `path`.
    pub fn add(&mut self, path: Path, rank: u32, metric: f64, memory: Memory) {
        let index = match self.by_id.get(&memory.id) {
            Some(&i) => i,
            None => {
                self.by_id.insert(memory.id.clone(), self.hits.len());
                self.hits.push(SearchHit {
                    memory,
                    score: 0.0,
                    bm25_rank: None,
                    bm25: None,
                    dense_rank: None,
                    distance: None,
                });
                self.hits.len() - 1
            }
        };
        let hit = &mut self.hits[index];
        hit.score += 1.0 / (RRF_K + f64::from(rank));
        match path {
            Path::Keyword => {
                hit.bm25_rank = Some(rank);
                hit.bm25 = Some(-metric);
            }
            Path::Dense => {
                hit.dense_rank = Some(rank);
                hit.distance = Some(metric);
            }
        }
    }

    /// Hits by descending fused score; ties broken by the best single-path rank, then id.
    pub fn into_hits(mut self) -> Vec<SearchHit> {
        let best = |h: &SearchHit| {
            h.bm25_rank
                .unwrap_or(u32::MAX)
                .min(h.dense_rank.unwrap_or(u32::MAX))
        };
        self.hits.sort_by(|a, b| {
            b.score
                .total_cmp(&a.score)
                .then_with(|| best(a).cmp(&best(b)))
                .then_with(|| a.memory.id.cmp(&b.memory.id))
        });
        self.hits
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use engram_core::{MemoryScope, MemorySource, MemoryType, TrustFlags, Visibility};

    fn memory(id: &str) -> Memory {
        Memory {
            id: id.into(),
            project_id: "p".into(),
            memory_type: MemoryType::Gotcha,
            content: id.into(),
            confidence: 0.8,
            tags: vec![],
            related_files: vec![],
            related_modules: vec![],
            created_at: String::new(),
            last_accessed_at: String::new(),
            access_count: 0,
            scope: MemoryScope::Global,
            visibility: Visibility::Project,
            phase: None,
            source: MemorySource::AgentExplicit,
            session_id: None,
            commit_sha: None,
            provenance_session_ids: vec![],
            work_unit_ref: None,
            methodology: None,
            relations: vec![],
            decay_half_life_days: None,
            flags: TrustFlags::default(),
            citation_text: None,
            target_node_id: None,
            chunk: None,
            embedding_model_id: None,
            deprecated: false,
        }
    }

    #[test]
    fn rrf_adds_reciprocal_ranks_across_paths() {
        let mut f = Fusion::default();
        f.add(Path::Keyword, 1, -3.0, memory("a"));
        f.add(Path::Keyword, 2, -2.0, memory("b"));
        f.add(Path::Dense, 1, 0.1, memory("b"));
        f.add(Path::Dense, 2, 0.2, memory("c"));
        let hits = f.into_hits();
        let ids: Vec<&str> = hits.iter().map(|h| h.memory.id.as_str()).collect();
        assert_eq!(ids, ["b", "a", "c"]);
        assert!((hits[0].score - (1.0 / 62.0 + 1.0 / 61.0)).abs() < 1e-12);
        assert!((hits[1].score - 1.0 / 61.0).abs() < 1e-12);
        assert_eq!(hits[0].bm25_rank, Some(2));
        assert_eq!(hits[0].dense_rank, Some(1));
        assert_eq!(hits[0].bm25, Some(2.0));
        assert_eq!(hits[2].distance, Some(0.2));
    }
}
