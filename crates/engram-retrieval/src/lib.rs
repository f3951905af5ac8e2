//! engram's retrieval pipeline as pure functions.
//!
//! The database produces ranked candidates from three paths — dense vectors, FTS5 BM25 and
//! the code graph — in one round trip; everything after that happens here, with no I/O and
//! no clock (the caller passes "now"):
//!
//! 1. [`analysis`]: query type (identifier / semantic / structural), sanitized tokens,
//!    identifiers and the files the query names ([`named_files`]) for the graph path,
//!    short-prompt enrichment from recent user turns; pasted environment listings and
//!    HTML comments are dropped first ([`noise`]).
//! 2. [`fusion`]: weighted reciprocal rank fusion (k = 60) with per-query-type weights.
//! 3. [`boost`]: the graph neighbourhood boost for candidates 11–50 that neighbour the top 10.
//! 4. [`scoring`]: phase weights × source trust × confidence × decay, with test code
//!    counting half outside the validate phase and example code half ([`role`]).
//! 5. [`diversity`]: overlapping chunks deduplicated, then maximal marginal relevance.
//! 6. [`rerank`]: an optional host reranker's scores for the best 20, fused with the
//!    pipeline's order (reciprocal ranks, k = 60).
//! 7. [`select`](mod@select): the auto-inject mode (absolute minimum + relative cutoff,
//!    ≤ 3, may return nothing) and the search mode (≤ 10).
//! 8. [`packing`]: per-phase token budgets, per-type allocations, clustered by file, with
//!    citation chips; a budget is never exceeded ([`tokens`] never undercounts).
//!
//! For long-lived hosts, [`resident::VectorSet`] keeps the vectors in memory so the dense
//! path scans a matrix instead of the table.
//!
//! Every result carries a [`Breakdown`] of how its score came to be.

pub mod analysis;
pub mod boost;
pub mod diversity;
pub mod fusion;
pub mod keyword_index;
pub mod packing;
pub mod rerank;
pub mod resident;
pub mod scoring;
pub mod select;
pub mod terms;
pub mod tokens;

mod candidate;

pub use analysis::{analyze, QueryAnalysis, QueryContext, QueryType};
#[cfg(any(test, feature = "test-support"))]
pub use candidate::test_support;
pub use candidate::{Breakdown, Candidate, PathHit, PathKind, PathScore};
pub use fusion::{fuse, PathWeights, RRF_K};
pub use packing::{pack, PackedContext, PackingBudget};
pub use select::{select, Mode, Selection};
