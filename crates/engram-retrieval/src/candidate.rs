//! A candidate memory moving through the pipeline, and the record of how it was scored.

use std::cell::OnceCell;

use engram_core::Memory;
use serde::Serialize;

use crate::terms::TermSet;

/// A candidate path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PathKind {
    /// FTS5 BM25 over content, tags and files.
    Keyword,
    /// Cosine similarity of embeddings.
    Dense,
    /// Code-graph proximity: symbols the query names, neighbours of recent files.
    Graph,
}

/// Where one path ranked a candidate.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PathHit {
    /// 1-based rank in the path. Hits with equal metrics share the best rank of their tie
    /// (competition ranking: 1, 2, 2, 4), so equal evidence contributes equally to the
    /// fusion rather than in the order of memory ids. The graph path's coarse scores tie
    /// often (every memory on one file scores the same).
    pub rank: u32,
    /// The path's own metric: BM25 (higher is better), cosine similarity, or graph score.
    pub metric: f64,
}

/// One path's part in a fused score.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PathScore {
    /// 1-based rank in the path (see [`PathHit::rank`]).
    pub rank: u32,
    /// The path's own metric (see [`PathHit::metric`]).
    pub metric: f64,
    /// The path's weight for this query type.
    pub weight: f64,
    /// For the dense path, how the hit's cosine compares with the best of this query:
    /// `(cosine / best)²`; 1 for the keyword and graph paths.
    pub scale: f64,
    /// `weight / (k + rank) × scale`.
    pub contribution: f64,
}

/// How a result's score came to be.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Breakdown {
    /// The keyword path's part, if it found the memory.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub keyword: Option<PathScore>,
    /// The dense path's part, if it found the memory.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dense: Option<PathScore>,
    /// The graph path's part, if it found the memory.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub graph: Option<PathScore>,
    /// Sum of the path contributions (weighted RRF).
    pub fused: f64,
    /// Added by the graph neighbourhood boost.
    pub graph_boost: f64,
    /// Top-10 results whose files neighbour this one's (why it was boosted).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub boosted_by: Vec<String>,
    /// Phase weight for the memory's type (1 without a phase).
    pub phase_weight: f64,
    /// Source trust multiplier.
    pub trust_weight: f64,
    /// The memory's confidence.
    pub confidence: f64,
    /// Decay factor from the half-life and the time since last access (1 = none).
    pub decay: f64,
    /// Multiplier for the memory's role: [`crate::scoring::code_role::TEST_CODE_WEIGHT`] for a test
    /// file's code outside the validate phase, [`crate::scoring::code_role::EXAMPLE_CODE_WEIGHT`] for an
    /// example file's code, 1 otherwise.
    pub role_weight: f64,
    /// The share of the query's keyword terms the memory contains, in `[0, 1]` (see
    /// [`crate::scoring::term_coverage`]). Set with [`Breakdown::relevance`].
    pub coverage: f64,
    /// Calibrated relevance in `[0, 1]`: how likely a memory with this dense similarity
    /// and [`Breakdown::coverage`] is to be relevant to the query, the same scale for every
    /// query (see [`crate::scoring::relevance`]). Rank fusion has no absolute scale;
    /// thresholds use this. Set by [`crate::select::select`] on the candidates it looks at
    /// (every one it keeps); 0 on the others.
    pub relevance: f64,
    /// The host reranker's score, when one reordered this result (see
    /// [`crate::rerank::fuse_reranked`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rerank: Option<f64>,
    /// The reranker's own rank for this result among those it scored; the final order
    /// fuses it with the pipeline's rank.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rerank_rank: Option<u32>,
    /// Final score: `(fused + graph_boost) × phase × trust × role × confidence × decay`.
    pub score: f64,
}

/// A memory with the hits that found it and its score so far.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    /// The memory.
    pub memory: Memory,
    /// Keyword hit, if any.
    pub keyword: Option<PathHit>,
    /// Dense hit, if any.
    pub dense: Option<PathHit>,
    /// Graph hit, if any.
    pub graph: Option<PathHit>,
    /// The score record; [`Breakdown::score`] orders candidates.
    pub breakdown: Breakdown,
    /// The words of the memory's content, computed once when first asked for.
    content_terms: TermCache,
}

/// A lazily computed [`TermSet`]. It is derived data, so it never makes two candidates
/// unequal.
#[derive(Debug, Clone, Default)]
struct TermCache(OnceCell<TermSet>);

impl PartialEq for TermCache {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Candidate {
    /// A candidate not yet found by any path.
    pub fn new(memory: Memory) -> Self {
        Candidate {
            memory,
            keyword: None,
            dense: None,
            graph: None,
            breakdown: Breakdown::default(),
            content_terms: TermCache::default(),
        }
    }

    /// The words of the memory's content (computed on first use, then kept).
    pub fn content_terms(&self) -> &TermSet {
        self.content_terms
            .0
            .get_or_init(|| TermSet::of(&self.memory.content))
    }

    /// The candidate's hit in `path`.
    pub fn hit(&self, path: PathKind) -> Option<PathHit> {
        match path {
            PathKind::Keyword => self.keyword,
            PathKind::Dense => self.dense,
            PathKind::Graph => self.graph,
        }
    }

    /// Records a hit in `path`, keeping the better (lower) rank if found twice.
    pub fn set_hit(&mut self, path: PathKind, hit: PathHit) {
        let slot = match path {
            PathKind::Keyword => &mut self.keyword,
            PathKind::Dense => &mut self.dense,
            PathKind::Graph => &mut self.graph,
        };
        if slot.is_none_or(|old| hit.rank < old.rank) {
            *slot = Some(hit);
        }
    }

    /// The best rank over all paths (for tie-breaking).
    pub fn best_rank(&self) -> u32 {
        [self.keyword, self.dense, self.graph]
            .iter()
            .flatten()
            .map(|h| h.rank)
            .min()
            .unwrap_or(u32::MAX)
    }
}

/// Orders candidates by score, then best rank, then id (so equal inputs give equal output
/// in every host).
pub(crate) fn sort_by_score(candidates: &mut [Candidate]) {
    candidates.sort_by(|a, b| {
        b.breakdown
            .score
            .total_cmp(&a.breakdown.score)
            .then_with(|| a.best_rank().cmp(&b.best_rank()))
            .then_with(|| a.memory.id.cmp(&b.memory.id))
    });
}

/// Fakes for unit tests of one stage, here and in crates built on this one (the
/// `test-support` feature, for their dev-dependencies only).
#[cfg(any(test, feature = "test-support"))]
pub mod test_support {
    use engram_core::{Memory, MemoryScope, MemorySource, MemoryType, TrustFlags, Visibility};

    /// A fake stored memory for unit tests of one stage.
    pub fn fake_memory(id: &str, content: &str) -> Memory {
        Memory {
            id: id.into(),
            project_id: "p".into(),
            memory_type: MemoryType::Gotcha,
            content: content.into(),
            confidence: 1.0,
            tags: vec![],
            related_files: vec![],
            related_modules: vec![],
            created_at: "2026-01-01T00:00:00.000Z".into(),
            last_accessed_at: "2026-01-01T00:00:00.000Z".into(),
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
            occurrences: 1,
            superseded_by: None,
            stale_reason: None,
        }
    }
}
