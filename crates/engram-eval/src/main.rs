//! `engram-eval`: retrieval and the observer scored on real evaluation data
//! (`../shared/eval`): CoSQA code search, SWE-bench file localization, and the observer
//! replayed over recorded agent trajectories. Each prints BM25 only, dense only, the full
//! pipeline and its ablations side by side, with per-query paired tests.
//!
//! The laboratory, apart from the product: the `engram` binary has no ablation switches.

use std::process::ExitCode;

use clap::Parser;

#[macro_use]
extern crate engram_cli;

mod eval;

use engram_cli::{model, observe, open, output};
pub(crate) use engram_cli::{CliError, Target};

/// Score engram's retrieval and observer on the evaluation data.
#[derive(Parser)]
#[command(name = "engram-eval", version, about)]
struct Cli {
    #[command(flatten)]
    target: Target,
    /// Print machine-readable JSON instead of text.
    #[arg(long, global = true)]
    json: bool,
    #[command(flatten)]
    args: eval::EvalArgs,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    engram_cli::run_to_exit(eval::run(&cli.args, &cli.target, cli.json), cli.json)
}
