//! The memory lifecycle as pure rules, with no I/O and no clock: the engine reads what
//! they need, calls them, and writes what they decide in one transaction.
//!
//! - [`judge`]: whether a new memory says the same thing as a live one (merge), says
//!   something that replaces it (supersede), or is different (keep both).
//! - [`confidence`]: the one current-confidence rule (decay by half-life), the confidence
//!   of a merge, and reinforcement by uncorrected use.
//! - [`prune`]: which memories a pruning run retires, deletes or evicts, and why.
//! - [`history`]: the entry every change appends.

pub mod confidence;
pub mod health;
pub mod history;
pub mod judge;
pub mod prune;
pub mod stale;
pub mod text;

pub use confidence::{current_confidence, merged_confidence, Reinforcement};
pub use history::{HistoryAction, HistoryEntry};
pub use judge::{judge, Judgement, Stated};
pub use prune::{plan_prune, PruneCandidate, PruneDecision, PrunePlan, PrunePolicy};

#[cfg(test)]
pub(crate) mod test_support {
    use engram_core::{Memory, MemoryScope, MemorySource, MemoryType, TrustFlags, Visibility};

    /// A fake stored memory for the rules' unit tests.
    pub fn fake_memory(id: &str, memory_type: MemoryType, content: &str) -> Memory {
        Memory {
            id: id.into(),
            project_id: "p".into(),
            memory_type,
            content: content.into(),
            confidence: 0.8,
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
