//! Code intelligence for engram: tree-sitter parsing of TypeScript, TSX, JavaScript, Python,
//! Rust and Go; AST chunking for embedding and search; the layer-1 code graph with its
//! impact closure, and the delta between two versions of it for incremental indexing.
//!
//! Pure computation over the text the host hands in — the core never touches a file system,
//! so the same code runs natively, in the npm package, in a Worker and in a component (the
//! grammars are C compiled for each target; see `.cargo/config.toml`).
//!
//! ```
//! use engram_code::{chunk_file, ChunkOptions};
//! let source = "def add(a, b):\n    return a + b\n\nclass Point:\n    x = 0\n";
//! let chunks = chunk_file("geometry.py", source, &ChunkOptions { max_chars: 40, ..ChunkOptions::default() });
//! assert_eq!(chunks[0].name.as_deref(), Some("add"));
//! assert_eq!(chunks[1].kind, "class");
//! ```

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod chunk;
mod closure;
mod delta;
mod graph;
mod language;
mod outline;
mod resolve;
mod syntax;

pub use chunk::{chunk_file, Chunk, ChunkOptions};
pub use closure::{
    full_closure, is_dependency, ClosureRow, DependencyIndex, DEFAULT_CLOSURE_DEPTH,
    DEPENDENCY_KINDS,
};
pub use delta::{diff_graphs, patch_graph, GraphDelta};
pub use graph::{
    build_file_graph, build_graph, definition_id, file_id, graph_of_files, node_path, CodeGraph,
    GraphEdge, GraphNode, GUESSED_WEIGHT, RESOLVED_WEIGHT,
};
pub use language::Language;
pub use outline::{
    content_hash, outline_file, Call, Definition, FileOutline, Heritage, Import, Outliner,
};
pub use resolve::FileSet;

/// How deep the tree walks go into a syntax tree. Deeper subtrees (generated or hostile
/// code: a file nested thousands of levels) are chunked as plain text and not outlined,
/// so no walk can exhaust the stack, natively or in a 1 MiB wasm stack.
pub const MAX_SYNTAX_DEPTH: usize = 256;
