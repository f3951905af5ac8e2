//! engram's observer: memories from what agents do, with no LLM on the hot path.
//!
//! Hosts feed [`Event`]s (tool calls, tool results, reasoning text, step and session ends)
//! into a [`Scratchpad`], which keeps constant-time counters: file reads and edits,
//! co-access within three steps, error fingerprints and their resolution, repeated
//! searches, backtracks, self-corrections and dead ends in the agent's words, the first web
//! step (the trust gate). At the end, [`Scratchpad::finalize`] turns the counters into
//! [`Observation`]s and runs them through the promotion filters against [`Prior`]
//! cross-session statistics; the `engram` crate looks those up and writes what survives in
//! one transaction.
//!
//! [`transcript`] reads recorded sessions: Claude Code JSONL transcripts and bash-only agent
//! trajectories.
//!
//! ```
//! use engram_observer::{Event, Outcome, PathNormalizer, Prior, Scratchpad, SessionKind};
//!
//! let mut pad = Scratchpad::new("s1", SessionKind::Build, PathNormalizer::new(["/repo"]));
//! let call = |step, command: &str| {
//!     Event::ToolCall(engram_observer::ToolCall {
//!         step,
//!         id: None,
//!         tool: "Bash".into(),
//!         input: serde_json::json!({ "command": command }),
//!         at_ms: None,
//!     })
//! };
//! pad.observe(&call(1, "cat /repo/src/app.py"));
//! pad.observe(&call(2, "sed -i 's/a/b/' src/app.py"));
//! assert_eq!(pad.hot_files(1)[0].path, "src/app.py");
//! let done = pad.finalize(Outcome::Success, &Prior::default());
//! assert!(done.observed.iter().any(|(key, _)| key == "file:src/app.py"));
//! ```

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod action;
pub mod change;
pub mod event;
pub mod finalize;
pub mod fingerprint;
pub mod git;
pub mod hot;
pub mod language;
mod merge;
pub mod paths;
pub mod scratchpad;
pub mod shell;
pub mod signal;
pub mod transcript;

pub use action::{actions_of, Action};
pub use event::{Event, Outcome, SessionKind, ToolCall, ToolResult};
pub use finalize::{observer_tag, Candidate, Discarded, Finalized, Observation, Prior};
pub use hot::HotFile;
pub use paths::PathNormalizer;
pub use scratchpad::{Scratchpad, Trigger};
pub use signal::{signal_value, SignalClass};
