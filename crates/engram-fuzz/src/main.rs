//! `engram-fuzz [--seconds N | --executions N] [--seed N] [TARGET…]`: runs each target (all
//! by default) and prints its executions, rate and crashes; crashing inputs are written to
//! `fuzz-crashes/<target>-<n>.bin`. Exits 1 when any input crashed.

use std::process::ExitCode;
use std::time::Duration;

use engram_fuzz::{fuzz, Budget, TARGETS};

fn main() -> ExitCode {
    let mut budget = Budget::Time(Duration::from_secs(10));
    let mut seed = 0x5eed_f00d_u64;
    let mut names = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut number = |flag: &str| -> Option<u64> {
            let value = args.next().and_then(|v| v.parse().ok());
            if value.is_none() {
                eprintln!("{flag} takes a number");
            }
            value
        };
        match arg.as_str() {
            "--seconds" => match number("--seconds") {
                Some(n) => budget = Budget::Time(Duration::from_secs(n)),
                None => return ExitCode::from(2),
            },
            "--executions" => match number("--executions") {
                Some(n) => budget = Budget::Executions(n),
                None => return ExitCode::from(2),
            },
            "--seed" => match number("--seed") {
                Some(n) => seed = n,
                None => return ExitCode::from(2),
            },
            name => names.push(name.to_owned()),
        }
    }
    let unknown: Vec<&String> = names
        .iter()
        .filter(|n| !TARGETS.iter().any(|t| t.name == n.as_str()))
        .collect();
    if !unknown.is_empty() {
        let known: Vec<&str> = TARGETS.iter().map(|t| t.name).collect();
        eprintln!("unknown target(s) {unknown:?}; one of {}", known.join(", "));
        return ExitCode::from(2);
    }
    println!(
        "{:<16} {:>12} {:>12} {:>8}",
        "target", "executions", "per second", "crashes"
    );
    let mut crashed = false;
    for target in TARGETS
        .iter()
        .filter(|t| names.is_empty() || names.iter().any(|n| n == t.name))
    {
        let report = fuzz(target, seed, budget);
        let rate = report.executions as f64 / report.elapsed.as_secs_f64().max(1e-9);
        println!(
            "{:<16} {:>12} {:>12.0} {:>8}",
            target.name,
            report.executions,
            rate,
            report.crashes.len()
        );
        for (i, (input, message)) in report.crashes.iter().enumerate() {
            crashed = true;
            let _ = std::fs::create_dir_all("fuzz-crashes");
            let path = format!("fuzz-crashes/{}-{i}.bin", target.name);
            let _ = std::fs::write(&path, input);
            println!("  crash: {message} ({path})");
        }
    }
    if crashed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
