//! The capabilities a host gives engram.
//!
//! engram's core does no I/O and reads no clock: everything it needs from the outside
//! world arrives through the small traits here. A host — Node, a browser, a Worker, a
//! wasmtime component, the native CLI — implements the ones it has and hands them over in
//! a [`Capabilities`]. Crates that provide a capability (the in-sandbox model, a remote
//! embedding provider, a rerank service) depend on this crate, not on the engram API.

#![forbid(unsafe_code)]

mod capabilities;
mod clock;
mod embed;
mod files;
mod generate;
mod rerank;
mod sleep;

pub use capabilities::Capabilities;
pub use clock::{Clock, Entropy, Host};
#[cfg(feature = "native")]
pub use clock::{OsEntropy, SystemClock};
pub use embed::{Embed, EmbedFuture};
#[cfg(feature = "native")]
pub use files::DirectoryProbe;
pub use files::FileProbe;
pub use generate::{Generate, GenerateFuture};
pub use rerank::{Rerank, RerankFuture};
#[cfg(feature = "native")]
pub use sleep::ThreadSleep;
pub use sleep::{Sleep, SleepFuture};

/// The HTTP capability: one JSON POST, implemented by `fetch`, `wasi:http` or reqwest.
pub use engram_http as http;
pub use engram_http::{HttpResponse, HttpTransport, SharedTransport};
