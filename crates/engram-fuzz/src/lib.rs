//! Fuzz targets for every parser of outside input, and a seeded mutation fuzzer to run them.
//!
//! Each [`Target`] takes arbitrary bytes and must neither panic nor break its own
//! invariant (redacting twice changes nothing; quoted content holds no prompt tag). The
//! fuzzer mutates each target's seeds (bit flips, byte and token insertions, splices,
//! repetition into deep nesting), runs the target under `catch_unwind`, and keeps every
//! input that panicked. It is not coverage-guided: cargo-fuzz needs a nightly toolchain,
//! which this workspace does not use; the structured mutations reach the parsers' deep
//! paths instead.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};

mod mutate;
mod targets;

pub use mutate::Mutator;
pub use targets::TARGETS;

/// One fuzz target.
pub struct Target {
    /// Its name on the command line.
    pub name: &'static str,
    /// Inputs to start mutating from.
    pub seeds: fn() -> Vec<Vec<u8>>,
    /// Runs one input; panics on a bug.
    pub run: fn(&[u8]),
}

/// What one target's run found.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// Inputs run.
    pub executions: u64,
    /// How long it took.
    pub elapsed: Duration,
    /// Inputs that panicked, with the panic's message.
    pub crashes: Vec<(Vec<u8>, String)>,
}

/// How long a run goes on.
#[derive(Debug, Clone, Copy)]
pub enum Budget {
    /// This many inputs.
    Executions(u64),
    /// This long.
    Time(Duration),
}

/// Fuzzes `target` from `seed` (the random stream) within `budget`.
pub fn fuzz(target: &Target, seed: u64, budget: Budget) -> Report {
    let seeds = (target.seeds)();
    let mut mutator = Mutator::new(seed, seeds);
    let started = Instant::now();
    let mut report = Report::default();
    let quiet = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    loop {
        let done = match budget {
            Budget::Executions(n) => report.executions >= n,
            // Checking the clock every 256 inputs keeps it off the profile.
            Budget::Time(limit) => report.executions % 256 == 0 && started.elapsed() >= limit,
        };
        if done {
            break;
        }
        let input = mutator.next_input();
        if let Err(panic) = catch_unwind(AssertUnwindSafe(|| (target.run)(&input))) {
            let message = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                .unwrap_or_default();
            if report.crashes.len() < 16 {
                report.crashes.push((input.clone(), message));
            }
        } else {
            mutator.keep_if_new(&input);
        }
        report.executions += 1;
    }
    std::panic::set_hook(quiet);
    report.elapsed = started.elapsed();
    report
}
