//! The HTTP capability a host gives engram.
//!
//! engram never opens sockets itself: the libSQL client ([`engram-hrana`]) and the remote
//! embedding providers send their requests through an [`HttpTransport`] the host
//! implements — JS `fetch` under wasm-bindgen, `wasi:http` in a component, or reqwest
//! natively (feature `reqwest`, [`ReqwestTransport`]).
//!
//! [`engram-hrana`]: https://docs.rs/engram-hrana

#![forbid(unsafe_code)]
#![warn(missing_docs)]

#[cfg(feature = "reqwest")]
mod reqwest_transport;
mod shared;
mod transport;

#[cfg(feature = "reqwest")]
pub use reqwest_transport::ReqwestTransport;
pub use shared::SharedTransport;
pub use transport::{body_excerpt, HttpResponse, HttpTransport};
