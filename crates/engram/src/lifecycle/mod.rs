//! The memory lifecycle on a database: consolidation on write, history, pruning.

pub(crate) mod consolidate;
mod history;
mod prune;
mod sql;

pub use prune::PruneReport;
pub(crate) use sql::INSERT_HISTORY;
