//! The conformance suite on libSQL (an embedded file, the test server over HTTP, a remote
//! server) and the engine-independent checks, in one test binary: every module links the
//! same engram, so one binary compiles and links it once instead of once per file.

#[path = "../common/mod.rs"]
#[macro_use]
mod common;
#[path = "../file_db/mod.rs"]
mod file_db;
#[path = "../real_model/mod.rs"]
mod real_model;

mod agent_loop;
mod busy;
mod capabilities;
mod code_graph;
mod embedded;
mod export;
mod fault_proxy;
mod faults;
mod hook_recovery;
mod http;
mod instructions;
mod integrity;
mod keyword_scope;
mod lifecycle;
mod manage;
mod narrowed_search;
mod observer;
mod panel;
mod planning;
mod porter;
mod remote;
mod resident_keywords;
mod resident_vectors;
mod retrieval;
mod search_many;
mod vector_index;
