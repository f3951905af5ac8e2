//! Agent-loop integration as pure functions.
//!
//! An agent runtime meets engram at five points: planning (calibrations, dead ends, coupled
//! files, outcomes and recipes, and a step limit scaled by how long work in the task's
//! modules really takes), the session start (standing knowledge and the task's recipes),
//! each tool result (what is known about the file just read or edited), each step (three
//! triggers that may add one short system message), and the tools the agent itself calls
//! (`search_memory`, `record_memory`, `analyze_impact`). This
//! crate decides what each point looks up and how the answer reads; `engram` runs the
//! lookups against the database.
//!
//! Nothing here does I/O or reads a clock: the caller passes the current time and the
//! memories it fetched.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod hook;
pub mod inject;
pub mod mcp;
pub mod named_modules;
pub mod plan;
pub mod prompts;
pub mod step;
pub mod tools;

pub use inject::{Injection, InjectionKind};
pub use plan::{Calibration, CalibrationSample, StepLimit, StepLimitRequest};
pub use prompts::PromptDefinition;
pub use step::{RecordedEntry, StepPlan, StepRequest};
pub use tools::{ToolCall, ToolDefinition, ToolFormat};
