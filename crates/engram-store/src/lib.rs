//! Storage for engram: one small async trait, [`Database`], implemented by every backend
//! (Hrana over HTTP, the embedded libSQL file, SQLite inside wasm), plus the types that cross
//! it and the migration runner.
//!
//! The trait has exactly two operations, both one round trip: a [`Database::pipeline`] of
//! independent statements (reads, such as every candidate query of a search) and an atomic
//! [`Database::transaction`] (writes). Futures carry no `Send` bound so the same trait serves
//! single-threaded wasm hosts; native callers drive it on any executor.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod error;
mod migrate;
mod value;

pub use error::{SqlError, StoreError};
pub use migrate::migrate;
pub use value::{Rows, Statement, Value};

/// A SQL database engram can store memories in.
#[allow(async_fn_in_trait)]
pub trait Database {
    /// Runs `statements` in order, each on its own (autocommit), in one round trip.
    ///
    /// One failing statement does not stop the others: each gets its own result.
    /// The outer error is for failures of the round trip itself (network, auth, protocol).
    async fn pipeline(
        &self,
        statements: &[Statement],
    ) -> Result<Vec<Result<Rows, SqlError>>, StoreError>;

    /// Runs `statements` atomically in one round trip: all of them commit, or none do and
    /// the first failure is returned.
    async fn transaction(&self, statements: &[Statement]) -> Result<Vec<Rows>, StoreError>;

    /// A short description of the backend for status output (`hrana http://…`, `file …`).
    fn describe(&self) -> String;
}

impl<D: Database + ?Sized> Database for &D {
    async fn pipeline(
        &self,
        statements: &[Statement],
    ) -> Result<Vec<Result<Rows, SqlError>>, StoreError> {
        (**self).pipeline(statements).await
    }

    async fn transaction(&self, statements: &[Statement]) -> Result<Vec<Rows>, StoreError> {
        (**self).transaction(statements).await
    }

    fn describe(&self) -> String {
        (**self).describe()
    }
}
