//! Agent-loop integration (SPEC §7) as pure functions.
//!
//! An agent runtime meets engram at four points: the session start (standing knowledge and
//! the task's recipes), each tool result (what is known about the file just read or
//! edited), each step (three triggers that may add one short system message), and the
//! tools the agent itself calls (`search_memory`, `record_memory`, `analyze_impact`). This
//! crate decides what each point looks up and how the answer reads; `engram` runs the
//! lookups against the database.
//!
//! Nothing here does I/O or reads a clock: the caller passes the current time and the
//! memories it fetched.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod inject;
pub mod step;
pub mod tools;

pub use inject::{Injection, InjectionKind};
pub use step::{RecordedEntry, StepPlan, StepRequest};
pub use tools::{ToolCall, ToolDefinition, ToolFormat};

#[cfg(test)]
pub(crate) mod test_support {
    use engram_core::{Memory, MemoryScope, MemorySource, MemoryType, TrustFlags, Visibility};

    /// A fake stored memory for the unit tests of this crate: a confident gotcha.
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
        }
    }
}
