//! The conformance suite on plain SQLite through rusqlite. A binary of its own: rusqlite's
//! bundled SQLite and libSQL's export the same C symbols, so they must not link together.

#[path = "../common/mod.rs"]
#[macro_use]
mod common;
#[path = "../real_model/mod.rs"]
mod real_model;

mod embedding;
mod sqlite;
