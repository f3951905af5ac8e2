//! The memory lifecycle on a database: consolidation on write, history, reinforcement by
//! use, pruning.

mod behind;
pub(crate) mod consolidate;
mod history;
mod prune;
pub(crate) mod sql;
mod stale;
#[cfg(feature = "code")]
mod stale_graph;

pub(crate) use behind::{behind_statements, WriteBehind};
pub use behind::{UsesFlushed, MAX_PENDING_USES};
pub use prune::{PruneReport, PruneRequest};
pub(crate) use sql::{INSERT_HISTORY, MEMORY_SIDE_TABLES, MERGE_KEYWORD_ROW};
