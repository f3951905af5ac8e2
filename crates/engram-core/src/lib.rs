//! engram's pure core.
//!
//! Everything here is deterministic data and functions: the memory model and its
//! validation, the secret scanner, query sanitization for FTS5, timestamps computed from a
//! clock value the host supplies, and the schema migrations as SQL text. Nothing in this
//! crate performs I/O, reads a clock or keeps global state, so the same code runs natively,
//! in a browser, in a Worker and inside a WebAssembly component.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod context;
pub mod fts_terms;
pub mod memory;
pub mod porter;
pub mod query;
pub mod quote;
pub mod schema;
pub mod secrets;
pub mod time;
pub mod trust;
pub mod validate;
pub mod vector;

pub use memory::{
    ChunkMeta, Memory, MemoryRelation, MemoryScope, MemorySource, MemoryType, NewMemory, Phase,
    RelationType, TrustFlags, Visibility, WorkUnitRef,
};
pub use trust::TrustLevel;
pub use validate::{ValidationError, Violation};
