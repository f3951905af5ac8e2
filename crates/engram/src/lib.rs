//! engram: long-term memory for AI coding agents.
//!
//! [`Engram`] is the API every host wraps: it validates, redacts secrets and stores
//! memories in any [`Database`] (a libSQL server over HTTP, an embedded file, SQLite inside
//! wasm), and searches them. The clock and randomness come from the host through
//! [`Host`], so the same code runs natively, in a browser, in a Worker and in a component.
//!
//! ```
//! # async fn demo<D: engram_store::Database>(db: D, host: engram::Host) -> Result<(), engram::EngramError> {
//! use engram::{Engram, EngramConfig, MemoryType, NewMemory, SearchQuery};
//! let engram = Engram::open(db, EngramConfig::default(), host).await?;
//! let stored = engram
//!     .remember(NewMemory::new(MemoryType::Gotcha, "Run `make schema` after editing proto files"))
//!     .await?;
//! let found = engram.search(&SearchQuery::new("proto schema")).await?;
//! assert_eq!(found.hits[0].memory.id, stored.id);
//! # Ok(()) }
//! ```

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod agent;
mod breaker;
mod cache;
mod capability;
mod code;
mod durable;
mod embed;
mod embedding;
mod engram;
mod error;
mod export;
mod instructions;
mod integrity;
mod lifecycle;
mod manage;
mod observe;
mod options;
mod retrieve;
mod row;
mod sql;
mod vector_index;

pub use crate::agent::{
    HookAnswer, HookStatus, PlannerContext, PlannerRequest, PromptContext, PromptOutput,
    SessionContext, SessionStart, ToolOutput, ToolResultContext, STANDING_MEMORIES,
};
pub use crate::breaker::{Circuit, FAILURES_TO_OPEN, RETRY_AFTER_MILLIS};
pub use crate::cache::{CACHE_CAPACITY, CACHE_TTL_MILLIS};
pub use crate::capability::{hyde_prompt, HYDE_MAX_TOKENS, RERANK_CANDIDATES};
pub use crate::code::{
    AttachedMemory, CodeIndexStatus, ImpactReport, LinkedNode, Neighbour, RelatedFile,
};
#[cfg(feature = "code")]
pub use crate::code::{
    FlaggedMemory, IndexOptions, IndexProgress, IndexReport, Rename, SourceFile, MAX_FILE_BYTES,
    MAX_PATH_CHARS,
};
pub use crate::durable::{
    RetryPolicy, WriteStatus, DEFAULT_RETRY_DELAYS_MS, DEFAULT_WRITE_BUFFER,
    RECEIPT_RETENTION_MILLIS,
};
pub use crate::engram::{EmbedProgress, EmbeddingStatus, Engram, EngramConfig, Remembered};
pub use crate::error::{EngramError, ErrorCode};
pub use crate::export::{
    ExportLoaded, ProjectExport, EXPORT_FORMAT, EXPORT_VERSION, HISTORY_COLUMNS,
    MEMORY_TABLE_COLUMNS, ORIGIN_COLUMNS, SECTION_MIN_CONFIDENCE,
};
pub use crate::instructions::{
    FileImport, ImportReport, ImportRequest, ImportedRule, InstructionFile, RetiredRule,
    RuleOrigin, RuleOutcome, MAX_IMPORT_FILES,
};
pub use crate::integrity::{IntegrityReport, KeywordRebuild};
pub use crate::lifecycle::{PruneReport, PruneRequest, UsesFlushed, MAX_PENDING_USES};
pub use crate::manage::{
    CoAccessEdge, DependencyEdge, FolderCoverage, HealthReport, ListPage, ListRequest, MapFile,
    MapRequest, MemoryFilter, MemoryUpdate, ModuleMap, SessionReview, SessionSummary, SortKey,
    Status, Taught, TrustSetting, WeekGrowth, BYTES_PER_TOKEN, DEFAULT_MAP_FILES, DEFAULT_SESSIONS,
    FLAGS_SUGGESTING_CAUTION, GROWTH_WEEKS, MAX_MAP_FILES, MAX_PAGE, MAX_SESSIONS, MIN_ID_PREFIX,
    PREVIEW_ID,
};
pub use crate::observe::{PromotedMemory, SessionReport, REPORTED_HOT_FILES};
pub use crate::options::{
    DatabaseTarget, EmbedderKind, EmbedderOptions, EngramOptions, RerankerOptions, DEFAULT_PROJECT,
};
/// Ablation switches for the pipeline's optional stages (tests and evaluation only).
#[cfg(feature = "test-support")]
pub use crate::retrieve::query::Stages;
pub use crate::retrieve::query::{
    SearchHit, SearchIntent, SearchMode, SearchQuery, SearchResponse, StageTimings,
    MAX_BATCH_QUERIES, MAX_BUDGET_TOKENS, MAX_FILTER_ENTRIES, MAX_QUERY_BYTES, MAX_SEARCH_LIMIT,
};
pub use crate::vector_index::VECTOR_INDEX_MIN_MEMORIES;
pub use engram_agent::{
    self as agent_loop, Calibration, CalibrationSample, Injection, InjectionKind, StepLimit,
    StepLimitRequest, StepRequest, ToolFormat,
};
pub use engram_core::trust::ReviewDetail;
pub use engram_core::{
    Memory, MemoryScope, MemorySource, MemoryType, NewMemory, Phase, TrustFlags, TrustLevel,
    ValidationError, Visibility,
};
pub use engram_host::{
    Capabilities, Clock, Embed, EmbedFuture, Entropy, FileProbe, Generate, GenerateFuture, Host,
    Rerank, RerankFuture, SharedTransport, Sleep, SleepFuture,
};
#[cfg(feature = "native-host")]
pub use engram_host::{DirectoryProbe, OsEntropy, SystemClock, ThreadSleep};
pub use engram_lifecycle::{
    self as lifecycle_rules, HistoryAction, HistoryEntry, PruneDecision, PrunePolicy,
};
pub use engram_observer as observer;
pub use engram_retrieval::{
    self as retrieval, Breakdown, PathScore, QueryContext, QueryType, RRF_K,
};
pub use engram_store::{Database, StoreError};
