//! A client for libSQL servers speaking Hrana over HTTP (`/v3/pipeline`, falling back to
//! `/v2/pipeline`), and the protocol's JSON types ([`proto`]).
//!
//! The HTTP request itself is delegated to an [`HttpTransport`] so one client runs
//! everywhere: JS `fetch` under wasm-bindgen, `wasi:http` in a component, reqwest natively
//! (feature `reqwest`). Every [`Database`](engram_store::Database) call is exactly one HTTP
//! request: a pipeline of independent statements, or an atomic batch
//! (`BEGIN`, steps each conditioned on the previous one, `COMMIT`, `ROLLBACK` if the commit
//! did not happen, then `close`). Interactive transactions use [`HranaStream`] and batons.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod client;
mod pieces;
pub mod proto;
mod stream;

pub use client::HranaClient;
#[cfg(feature = "reqwest")]
pub use engram_http::ReqwestTransport;
pub use engram_http::{HttpResponse, HttpTransport};
pub use pieces::DEFAULT_MAX_REQUEST_BYTES;
pub use stream::HranaStream;
