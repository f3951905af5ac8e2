//! The memory model: types, sources, scopes, visibility, phases, relations, trust
//! flags, provenance and chunk metadata.

use serde::{Deserialize, Serialize};

/// Declares a closed set of snake_case names with conversions to and from their stored text.
macro_rules! named_enum {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident => $text:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        #[serde(rename_all = "snake_case")]
        pub enum $name {
            $($(#[$vmeta])* $variant),+
        }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The stored and serialized name.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text),+
                }
            }

            /// Parses a stored name; `None` for anything not in [`Self::ALL`].
            pub fn parse(text: &str) -> Option<Self> {
                match text {
                    $($text => Some($name::$variant),)+
                    _ => None,
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

named_enum! {
    /// What kind of knowledge a memory holds.
    MemoryType {
        /// A trap or non-obvious constraint.
        Gotcha => "gotcha",
        /// An architectural decision with its rationale.
        Decision => "decision",
        /// A user or project coding preference.
        Preference => "preference",
        /// A reusable implementation pattern.
        Pattern => "pattern",
        /// A functional or non-functional requirement.
        Requirement => "requirement",
        /// A recurring error and its fix.
        ErrorPattern => "error_pattern",
        /// Understanding of a module's purpose.
        ModuleInsight => "module_insight",
        /// Files always or frequently read together.
        PrefetchPattern => "prefetch_pattern",
        /// A snapshot of partial work for continuity across sessions.
        WorkState => "work_state",
        /// File A must be touched when file B changes.
        CausalDependency => "causal_dependency",
        /// Actual versus planned steps for a module.
        TaskCalibration => "task_calibration",
        /// A behavioural fact observed through end-to-end tooling.
        E2eObservation => "e2e_observation",
        /// An approach that was tried and abandoned.
        DeadEnd => "dead_end",
        /// The result of one unit of work.
        WorkUnitOutcome => "work_unit_outcome",
        /// A step-by-step procedural map.
        WorkflowRecipe => "workflow_recipe",
        /// The token cost profile of a module.
        ContextCost => "context_cost",
    }
}

impl MemoryType {
    /// The default decay half-life in days; `None` means it never decays.
    pub fn default_half_life_days(self) -> Option<f64> {
        match self {
            MemoryType::WorkState => Some(7.0),
            MemoryType::E2eObservation => Some(30.0),
            MemoryType::ErrorPattern | MemoryType::Gotcha => Some(60.0),
            MemoryType::ModuleInsight | MemoryType::DeadEnd => Some(90.0),
            MemoryType::CausalDependency | MemoryType::WorkflowRecipe => Some(120.0),
            MemoryType::TaskCalibration => Some(180.0),
            _ => None,
        }
    }
}

named_enum! {
    /// Where a memory came from; trust multipliers at retrieval depend on it.
    MemorySource {
        /// The agent called `record_memory`.
        AgentExplicit => "agent_explicit",
        /// The observer inferred it from behaviour.
        ObserverInferred => "observer_inferred",
        /// Extracted from QA report failures.
        QaAuto => "qa_auto",
        /// Extracted from MCP tool results.
        McpAuto => "mcp_auto",
        /// Tagged at commit time.
        CommitAuto => "commit_auto",
        /// The user taught it (`/remember`, teach panel).
        UserTaught => "user_taught",
    }
}

named_enum! {
    /// How widely a memory applies.
    MemoryScope {
        /// The whole project.
        Global => "global",
        /// One module.
        Module => "module",
        /// One unit of work (spec, subtask).
        WorkUnit => "work_unit",
        /// One session only.
        Session => "session",
    }
}

named_enum! {
    /// Who may see a memory.
    Visibility {
        /// Only its author; never leaves the local database.
        Personal => "personal",
        /// Everyone on the project.
        Project => "project",
        /// The author's team.
        Team => "team",
        /// The whole organization.
        Organization => "organization",
    }
}

named_enum! {
    /// Universal work phases; methodology plugins map their own phase names onto these.
    Phase {
        /// Planning, specs, failing tests.
        Define => "define",
        /// Coding.
        Implement => "implement",
        /// QA and acceptance.
        Validate => "validate",
        /// Refactoring and fixing QA issues.
        Refine => "refine",
        /// Research and discovery.
        Explore => "explore",
        /// Wrap-up and learning capture.
        Reflect => "reflect",
    }
}

named_enum! {
    /// How a memory relates to another memory or a file.
    RelationType {
        /// Both must be applied together.
        RequiredWith => "required_with",
        /// They contradict each other.
        ConflictsWith => "conflicts_with",
        /// This memory validates the target.
        Validates => "validates",
        /// This memory replaces the target.
        Supersedes => "supersedes",
        /// This memory was derived from the target.
        DerivedFrom => "derived_from",
    }
}

/// A typed link from one memory to another memory or to a file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MemoryRelation {
    /// The related memory, if the relation targets a memory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_memory_id: Option<String>,
    /// The related file, if the relation targets a file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_file_path: Option<String>,
    /// The kind of relation.
    pub relation_type: RelationType,
    /// How sure we are of it, in `[0, 1]`.
    #[serde(default = "one")]
    pub confidence: f64,
    /// Whether it was inferred rather than stated.
    #[serde(default)]
    pub auto_extracted: bool,
}

fn one() -> f64 {
    1.0
}

fn one_occurrence() -> u32 {
    1
}

/// The unit of work a memory belongs to, in its methodology's own terms.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WorkUnitRef {
    /// The methodology (`native`, `bmad`, `tdd`, …).
    pub methodology: String,
    /// Path from the root work item down, e.g. `["spec_042", "subtask_3"]`.
    #[serde(default)]
    pub hierarchy: Vec<String>,
    /// A human label.
    pub label: String,
}

/// Trust flags that gate injection and drive the review queue.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TrustFlags {
    /// A person should look at it before it is trusted.
    #[serde(default)]
    pub needs_review: bool,
    /// A person confirmed it.
    #[serde(default)]
    pub user_verified: bool,
    /// Never decays and is never pruned.
    #[serde(default)]
    pub pinned: bool,
    /// Derived after untrusted input (a web fetch or search) in the same session.
    #[serde(default)]
    pub contaminated: bool,
    /// The secret scanner could not run on it; audit before sharing.
    #[serde(default)]
    pub secret_scan_skipped: bool,
}

/// Metadata for memories that are chunks of code or prose.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ChunkMeta {
    /// `function`, `class`, `module` or `prose`.
    pub chunk_type: String,
    /// First line, 1-based.
    pub start_line: u32,
    /// Last line, inclusive.
    pub end_line: u32,
    /// Text prepended at embed time (file, module, kind, name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_prefix: Option<String>,
}

/// A memory as submitted by an agent, a user or the observer, before it is stored.
///
/// Parse untrusted JSON with [`NewMemory::from_json`], which reports the failing field.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NewMemory {
    /// What kind of knowledge this is.
    #[serde(rename = "type")]
    pub memory_type: MemoryType,
    /// The knowledge itself.
    pub content: String,
    /// Confidence in `[0, 1]`; defaults to 0.8.
    #[serde(default = "default_confidence")]
    pub confidence: f64,
    /// Free keywords.
    #[serde(default)]
    pub tags: Vec<String>,
    /// Files the memory is about, relative to the project root.
    #[serde(default)]
    pub related_files: Vec<String>,
    /// Modules the memory is about.
    #[serde(default)]
    pub related_modules: Vec<String>,
    /// How widely it applies; defaults to global.
    #[serde(default = "default_scope")]
    pub scope: MemoryScope,
    /// Who may see it; defaults to project.
    #[serde(default = "default_visibility")]
    pub visibility: Visibility,
    /// The phase it was learned in, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<Phase>,
    /// Where it came from; defaults to agent_explicit.
    #[serde(default = "default_source")]
    pub source: MemorySource,
    /// The session that produced it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// The commit it refers to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit_sha: Option<String>,
    /// Every session that contributed evidence.
    #[serde(default)]
    pub provenance_session_ids: Vec<String>,
    /// The unit of work it belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work_unit_ref: Option<WorkUnitRef>,
    /// The methodology plugin that created it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub methodology: Option<String>,
    /// Links to other memories and files.
    #[serde(default)]
    pub relations: Vec<MemoryRelation>,
    /// Decay half-life in days; defaults per type, `None` for types that never decay.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decay_half_life_days: Option<f64>,
    /// Trust flags.
    #[serde(default)]
    pub flags: TrustFlags,
    /// Short text for citation chips, at most 40 characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub citation_text: Option<String>,
    /// Chunk metadata for code or prose chunks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chunk: Option<ChunkMeta>,
    /// The code-graph node the memory is about (`src/auth.ts#function:verifyJwt`); when the
    /// symbol or what it depends on changes, re-indexing flags the memory for review.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_node_id: Option<String>,
    /// The caller's key for this write, not part of the memory: a second write with the
    /// same key in the project stores nothing and answers with the first one's id, so a
    /// caller may retry a write whose outcome it never learned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotency_key: Option<String>,
}

fn default_confidence() -> f64 {
    0.8
}
fn default_scope() -> MemoryScope {
    MemoryScope::Global
}
fn default_visibility() -> Visibility {
    Visibility::Project
}
fn default_source() -> MemorySource {
    MemorySource::AgentExplicit
}

impl NewMemory {
    /// The fields of this memory that only a person may set (through engram's review and
    /// teach operations), named as in JSON: the trust flags `userVerified`, `pinned` and
    /// `secretScanSkipped`, and the source `user_taught`. An agent or a tenant over HTTP
    /// that sets one would make its own memory trusted.
    pub fn person_only_fields(&self) -> Vec<&'static str> {
        let flags = &self.flags;
        [
            (flags.user_verified, "flags.userVerified"),
            (flags.pinned, "flags.pinned"),
            (flags.secret_scan_skipped, "flags.secretScanSkipped"),
            (self.source == MemorySource::UserTaught, "source"),
        ]
        .into_iter()
        .filter_map(|(set, field)| set.then_some(field))
        .collect()
    }

    /// Every free-text field, for the secret scanner: a field added to the memory must be
    /// added here, or it reaches storage and providers unscanned.
    pub fn text_fields_mut(&mut self) -> Vec<&mut String> {
        let NewMemory {
            memory_type: _,
            content,
            confidence: _,
            tags,
            related_files,
            related_modules,
            scope: _,
            visibility: _,
            phase: _,
            source: _,
            session_id,
            commit_sha,
            provenance_session_ids,
            work_unit_ref,
            methodology,
            relations,
            decay_half_life_days: _,
            flags: _,
            citation_text,
            chunk,
            target_node_id,
            idempotency_key,
        } = self;
        let mut fields = vec![content];
        fields.extend(tags.iter_mut());
        fields.extend(related_files.iter_mut());
        fields.extend(related_modules.iter_mut());
        fields.extend(provenance_session_ids.iter_mut());
        fields.extend(
            [
                session_id,
                commit_sha,
                methodology,
                citation_text,
                target_node_id,
                idempotency_key,
            ]
            .into_iter()
            .filter_map(Option::as_mut),
        );
        if let Some(unit) = work_unit_ref {
            fields.push(&mut unit.methodology);
            fields.push(&mut unit.label);
            fields.extend(unit.hierarchy.iter_mut());
        }
        for relation in relations {
            fields.extend(
                [
                    &mut relation.target_memory_id,
                    &mut relation.target_file_path,
                ]
                .into_iter()
                .filter_map(Option::as_mut),
            );
        }
        if let Some(chunk) = chunk {
            fields.push(&mut chunk.chunk_type);
            fields.extend(chunk.context_prefix.as_mut());
        }
        fields
    }

    /// A memory of `memory_type` with `content` and every other field at its default.
    pub fn new(memory_type: MemoryType, content: impl Into<String>) -> Self {
        NewMemory {
            memory_type,
            content: content.into(),
            confidence: default_confidence(),
            tags: Vec::new(),
            related_files: Vec::new(),
            related_modules: Vec::new(),
            scope: default_scope(),
            visibility: default_visibility(),
            phase: None,
            source: default_source(),
            session_id: None,
            commit_sha: None,
            provenance_session_ids: Vec::new(),
            work_unit_ref: None,
            methodology: None,
            relations: Vec::new(),
            decay_half_life_days: None,
            flags: TrustFlags::default(),
            citation_text: None,
            chunk: None,
            target_node_id: None,
            idempotency_key: None,
        }
    }

    /// The half-life to store: the explicit one, else the type's default; pinned memories
    /// never decay.
    pub fn effective_half_life_days(&self) -> Option<f64> {
        if self.flags.pinned {
            return None;
        }
        self.decay_half_life_days
            .or_else(|| self.memory_type.default_half_life_days())
    }
}

/// A stored memory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Memory {
    /// Stable identifier (a UUID).
    pub id: String,
    /// The project it belongs to.
    pub project_id: String,
    /// What kind of knowledge this is.
    #[serde(rename = "type")]
    pub memory_type: MemoryType,
    /// The knowledge itself, with secrets redacted.
    pub content: String,
    /// Confidence in `[0, 1]` at write time.
    pub confidence: f64,
    /// Free keywords.
    pub tags: Vec<String>,
    /// Files the memory is about.
    pub related_files: Vec<String>,
    /// Modules the memory is about.
    pub related_modules: Vec<String>,
    /// When it was stored (RFC 3339).
    pub created_at: String,
    /// When it was last returned to an agent (RFC 3339).
    pub last_accessed_at: String,
    /// How many times it was returned.
    pub access_count: u64,
    /// How widely it applies.
    pub scope: MemoryScope,
    /// Who may see it.
    pub visibility: Visibility,
    /// The phase it was learned in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<Phase>,
    /// Where it came from.
    pub source: MemorySource,
    /// The session that produced it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// The commit it refers to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit_sha: Option<String>,
    /// Every session that contributed evidence.
    pub provenance_session_ids: Vec<String>,
    /// The unit of work it belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work_unit_ref: Option<WorkUnitRef>,
    /// The methodology plugin that created it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub methodology: Option<String>,
    /// Links to other memories and files.
    pub relations: Vec<MemoryRelation>,
    /// Decay half-life in days; `None` never decays.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decay_half_life_days: Option<f64>,
    /// Trust flags.
    pub flags: TrustFlags,
    /// Short text for citation chips.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub citation_text: Option<String>,
    /// Chunk metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chunk: Option<ChunkMeta>,
    /// The embedding model of its vector, if it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embedding_model_id: Option<String>,
    /// Soft-deleted (forgotten) memories are kept for a grace period but never returned.
    pub deprecated: bool,
    /// How many times it was said: 1, plus one for every memory merged into it.
    #[serde(default = "one_occurrence")]
    pub occurrences: u32,
    /// The memory that replaced it, when one did: it is then retired (never injected or
    /// searched) and kept, with its history, to show why engram believed it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub superseded_by: Option<String>,
    /// Why it is stale, when the code it cites changed (a file deleted, a symbol removed
    /// or changed): a stale memory is not injected until a person reviews it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stale_reason: Option<String>,
    /// The code-graph node the memory is about, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_node_id: Option<String>,
}

impl NewMemory {
    /// The memory as it would be stored under `id` in `project_id` at `now` (RFC 3339),
    /// before any use: for showing what a write would look like without making it.
    pub fn into_stored(self, id: &str, project_id: &str, now: &str) -> Memory {
        Memory {
            id: id.to_owned(),
            project_id: project_id.to_owned(),
            memory_type: self.memory_type,
            content: self.content,
            confidence: self.confidence,
            tags: self.tags,
            related_files: self.related_files,
            related_modules: self.related_modules,
            created_at: now.to_owned(),
            last_accessed_at: now.to_owned(),
            access_count: 0,
            scope: self.scope,
            visibility: self.visibility,
            phase: self.phase,
            source: self.source,
            session_id: self.session_id,
            commit_sha: self.commit_sha,
            provenance_session_ids: self.provenance_session_ids,
            work_unit_ref: self.work_unit_ref,
            methodology: self.methodology,
            relations: self.relations,
            decay_half_life_days: self.decay_half_life_days,
            flags: self.flags,
            citation_text: self.citation_text,
            chunk: self.chunk,
            embedding_model_id: None,
            deprecated: false,
            occurrences: 1,
            superseded_by: None,
            stale_reason: None,
            target_node_id: self.target_node_id,
        }
    }
}

impl Memory {
    /// Why the memory waits for a person's review, in their words (for a memory with
    /// `needs_review` set): its code changed, it contradicts a memory trusted more, it was
    /// learned after web content, or the observer saw it in one session only.
    pub fn review_reason(&self) -> String {
        if let Some(reason) = &self.stale_reason {
            return format!("its code changed since it was written ({reason})");
        }
        if self.flags.contaminated {
            return "it was learned after web content entered the session".to_owned();
        }
        if self
            .relations
            .iter()
            .any(|r| r.relation_type == RelationType::ConflictsWith)
        {
            return "it contradicts a memory trusted more".to_owned();
        }
        match self.source {
            MemorySource::ObserverInferred => "the observer saw it in one session only; a second session showing it, or your confirmation, lets it be injected".to_owned(),
            _ => "it is not confirmed yet".to_owned(),
        }
    }

    /// The text shown on a citation chip: the stored citation, else the first 40
    /// characters of the content.
    pub fn citation(&self) -> String {
        match &self.citation_text {
            Some(text) => text.clone(),
            None => self.content.chars().take(40).collect(),
        }
    }
}
