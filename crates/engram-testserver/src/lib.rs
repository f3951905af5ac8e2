//! A libSQL server for engram's tests and CI.
//!
//! No package registry ships `sqld`, so this crate serves the part of the Hrana-over-HTTP
//! protocol engram and other clients use — `POST /v3/pipeline` and `/v2/pipeline` with
//! `execute`, `batch` (with conditions), `sequence`, `get_autocommit` and `close`, batons
//! for interactive streams, bearer-token auth — on top of the `libsql` crate's local engine,
//! so FTS5, `vector32`, `vector_distance_cos` and `libsql_vector_idx` behave as on a real
//! server. It listens on 127.0.0.1 only.
//!
//! `engram ui` serves a project's database file to the memory panel with [`serve`].
//!
//! `GET /engram-test/stats` reports how many pipeline requests arrived, so tests in any host
//! can assert round-trip counts.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod execute;
mod server;

pub use server::{remove_db_files, serve, serve_router, ServerConfig, TestServer};
