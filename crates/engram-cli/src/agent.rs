//! `engram agent …`: the agent-loop integration for runtimes that shell out —
//! tool definitions, tool calls, the session start's context, tool-result augmentation,
//! the step-injection decider, and planning (calibrations, the step limit, the planner's
//! context). Requests are JSON (an argument, or `-` for stdin), the
//! same shapes the JS package and the component take.

use clap::Subcommand;
use engram::agent_loop::tools::{render, ToolFormat};
use engram::{
    CalibrationSample, Database, Engram, EngramError, Injection, Phase, PlannerRequest,
    SessionStart, StepLimitRequest, StepRequest, ToolResultContext,
};

use crate::{parse_phase, read_input, CliError};

/// The agent-loop commands.
#[derive(Subcommand)]
pub enum AgentCommand {
    /// Print engram's tools (search_memory, record_memory, analyze_impact) as JSON, in the
    /// shape an agent SDK takes.
    Tools {
        /// anthropic (`input_schema`), openai (`type: function`) or mcp (`inputSchema`).
        #[arg(long, default_value = "anthropic", value_parser = parse_format)]
        format: ToolFormat,
    },
    /// Run a tool call the model made: prints the tool result's text (--json: the text,
    /// the memories shown and the structured answer).
    Call {
        /// The tool's name.
        name: String,
        /// The model's arguments: a JSON object, or `-` to read it from stdin.
        arguments: String,
    },
    /// The context a session starts with, packed into the phase's budget.
    Context {
        /// The task or the user's first message.
        #[arg(long)]
        task: Option<String>,
        /// A file the task is about (repeatable).
        #[arg(long = "file")]
        files: Vec<String>,
        /// A module the task is about (repeatable).
        #[arg(long = "module")]
        modules: Vec<String>,
        /// The session's phase.
        #[arg(long, value_parser = parse_phase)]
        phase: Option<Phase>,
        /// Tokens the context may cost.
        #[arg(long)]
        budget: Option<u32>,
    },
    /// What to append to a tool's result: `{"tool": "Read", "input": {"file_path": …},
    /// "shownIds": […]}` (a JSON argument or `-`). Prints nothing when there is nothing
    /// to add.
    Augment {
        /// The request as JSON, or `-` for stdin.
        request: String,
    },
    /// Whether to inject a message before the next step: `{"step": 6, "recentToolCalls":
    /// […], "recorded": […], "shownIds": […]}` (a JSON argument or `-`). Prints nothing
    /// when no trigger fires.
    Step {
        /// The request as JSON, or `-` for stdin.
        request: String,
    },
    /// Record a finished work unit's planned and actual steps in its module; prints the
    /// module's calibration (actual over planned steps, over every work unit reported).
    Calibrate {
        /// The module the work was in.
        #[arg(long)]
        module: String,
        /// Steps the plan gave it.
        #[arg(long)]
        planned: u32,
        /// Steps it took.
        #[arg(long)]
        actual: u32,
        /// The methodology that planned it (default native).
        #[arg(long)]
        methodology: Option<String>,
        /// The session that did the work.
        #[arg(long)]
        session: Option<String>,
    },
    /// The step limit for a task: the base scaled by how many steps work in its modules
    /// really takes (at most 2×). Prints the limit; the reason goes to stderr.
    StepLimit {
        /// The limit without memory.
        #[arg(long)]
        base: u32,
        /// A module the task works in (repeatable).
        #[arg(long = "module")]
        modules: Vec<String>,
        /// The methodology that planned the task (default native).
        #[arg(long)]
        methodology: Option<String>,
        /// A hard limit no calibration may exceed.
        #[arg(long)]
        max: Option<u32>,
    },
    /// The planner's context: calibrations, dead ends, coupled files, recent outcomes and
    /// recipes for a task, in sections.
    Plan {
        /// The task to plan.
        #[arg(long)]
        task: String,
        /// A module the task works in (repeatable).
        #[arg(long = "module")]
        modules: Vec<String>,
        /// The methodology that plans it (default native).
        #[arg(long)]
        methodology: Option<String>,
        /// Tokens the context may cost (default 2,500).
        #[arg(long)]
        budget: Option<u32>,
    },
}

fn parse_format(text: &str) -> Result<ToolFormat, String> {
    ToolFormat::parse(text)
        .ok_or_else(|| format!("unknown format {text:?}; one of anthropic, openai, mcp"))
}

/// `text` itself, or stdin's text when it is `-`.
fn argument(text: &str) -> Result<String, CliError> {
    if text == "-" {
        read_input("-")
    } else {
        Ok(text.to_owned())
    }
}

/// Prints the definitions; needs no database.
pub fn tools(format: ToolFormat) {
    let rendered = render(format);
    say!(
        "{}",
        serde_json::to_string_pretty(&rendered).unwrap_or_default()
    );
}

/// Runs an agent-loop command on `engram`.
pub async fn run<D: Database>(
    engram: &Engram<D>,
    command: AgentCommand,
    json: bool,
) -> Result<(), CliError> {
    match command {
        AgentCommand::Tools { format } => tools(format),
        AgentCommand::Call { name, arguments } => {
            let output = engram.call_tool(&name, &argument(&arguments)?).await?;
            if json {
                say!("{}", serde_json::to_string(&output).unwrap_or_default());
            } else {
                say!("{}", output.text.trim_end());
            }
        }
        AgentCommand::Context {
            task,
            files,
            modules,
            phase,
            budget,
        } => {
            let start = SessionStart {
                task,
                files,
                modules,
                phase,
                budget,
            };
            let context = engram.session_context(&start).await?;
            print_packed(serde_json::to_value(&context).unwrap_or_default(), json);
        }
        AgentCommand::Augment { request } => {
            let context =
                ToolResultContext::from_json(&argument(&request)?).map_err(EngramError::from)?;
            injection(engram.augment_tool_result(&context).await?, json);
        }
        AgentCommand::Step { request } => {
            let request =
                StepRequest::from_json(&argument(&request)?).map_err(EngramError::from)?;
            injection(engram.step_injection(&request).await?, json);
        }
        AgentCommand::Calibrate {
            module,
            planned,
            actual,
            methodology,
            session,
        } => {
            let sample = CalibrationSample {
                module,
                planned_steps: planned,
                actual_steps: actual,
                methodology,
                session_id: session,
            };
            let calibration = engram.record_calibration(&sample).await?;
            if json {
                say!(
                    "{}",
                    serde_json::to_string(&calibration).unwrap_or_default()
                );
            } else {
                say!("{}", calibration.text());
            }
        }
        AgentCommand::StepLimit {
            base,
            modules,
            methodology,
            max,
        } => {
            let request = StepLimitRequest {
                base_max_steps: base,
                modules,
                methodology,
                max_steps: max,
            };
            let limit = engram.step_limit(&request).await?;
            if json {
                say!("{}", serde_json::to_string(&limit).unwrap_or_default());
            } else {
                say!("{}", limit.max_steps);
                eprintln!("{}", limit.reason);
            }
        }
        AgentCommand::Plan {
            task,
            modules,
            methodology,
            budget,
        } => {
            let request = PlannerRequest {
                task,
                modules,
                methodology,
                budget,
            };
            let context = engram.planner_context(&request).await?;
            print_packed(serde_json::to_value(&context).unwrap_or_default(), json);
        }
    }
    Ok(())
}

/// Prints a packed context (a session start's or a planner's, as JSON): all of it with
/// --json, or its warnings and text, and on stderr how much of the budget it took.
fn print_packed(context: serde_json::Value, json: bool) {
    if json {
        say!("{context}");
        return;
    }
    let count = |field: &str| context[field].as_u64().unwrap_or_default();
    let listed = |field: &str| context[field].as_array().map_or(0, Vec::len);
    for warning in context["warnings"].as_array().into_iter().flatten() {
        eprintln!("warning: {}", warning.as_str().unwrap_or_default());
    }
    let text = context["text"].as_str().unwrap_or_default();
    if !text.is_empty() {
        say!("{}", text.trim_end());
    }
    let omitted = listed("omitted");
    eprintln!(
        "{} memories, {} of {} tokens{}",
        listed("memoryIds"),
        count("tokens"),
        count("budget"),
        if omitted == 0 {
            String::new()
        } else {
            format!(", {omitted} left out for room")
        }
    );
}

fn injection(found: Option<Injection>, json: bool) {
    match (found, json) {
        (found, true) => say!("{}", serde_json::to_string(&found).unwrap_or_default()),
        (Some(injection), false) => say!("{}", injection.text.trim_end()),
        (None, false) => {}
    }
}
