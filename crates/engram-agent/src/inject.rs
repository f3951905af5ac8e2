//! What the agent is told without asking: the memories about a file it just read or
//! edited, appended to the tool's result, and the messages the step triggers add.
//!
//! Injected text is unrequested, so the bar is higher than a search's: only the kinds of
//! memory that stop a mistake (gotchas, error patterns, dead ends, end-to-end
//! observations), only at the confidence the project's trust level asks (0.65 by default),
//! never one that needs review, never one already shown this session, and at most four.

use engram_core::{quote, Memory, MemoryType};
use engram_retrieval::{scoring, Candidate};
use serde::{Deserialize, Serialize};

/// The kinds of memory a file's tool result carries.
pub const FILE_MEMORY_TYPES: [MemoryType; 4] = [
    MemoryType::Gotcha,
    MemoryType::ErrorPattern,
    MemoryType::DeadEnd,
    MemoryType::E2eObservation,
];
/// Most memories one injection carries.
pub const MAX_INJECTED: usize = 4;
/// Most trailing components of a path matched against stored paths: the rest is where the
/// project sits on the machine (`/home/me/src/app/src/db.rs` matches `src/db.rs`).
pub const MAX_PATH_DEPTH: usize = 6;

/// Why an injection was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InjectionKind {
    /// Memories about the file a tool just read or edited, appended to its result.
    FileContext,
    /// Between steps: memories about files read or edited in the last steps not yet shown.
    FileGotchas,
    /// Between steps: what the agent recorded since the last step, said back.
    Reflection,
    /// Between steps: memory already answers what the agent is grepping for.
    KnownAnswer,
}

/// Text to put in front of the model, and the memories it shows.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Injection {
    /// Why.
    pub kind: InjectionKind,
    /// The text: append it to the tool result, or add it as a system message.
    pub text: String,
    /// The memories shown, to add to the session's shown set.
    pub memory_ids: Vec<String>,
}

/// The path suffixes of `path` matched against stored paths, longest first: its last one
/// to [`MAX_PATH_DEPTH`] components, `./` and `..`-free, with `\` read as `/`.
///
/// ```
/// use engram_agent::inject::path_suffixes;
/// assert_eq!(path_suffixes("/home/me/app/src/db.rs"), ["home/me/app/src/db.rs", "me/app/src/db.rs", "app/src/db.rs", "src/db.rs", "db.rs"]);
/// assert_eq!(path_suffixes("./src/db.rs"), ["src/db.rs", "db.rs"]);
/// ```
pub fn path_suffixes(path: &str) -> Vec<String> {
    let parts: Vec<&str> = path
        .split(['/', '\\'])
        .filter(|p| !p.is_empty() && *p != "." && *p != "..")
        .collect();
    let first = parts.len().saturating_sub(MAX_PATH_DEPTH);
    (first..parts.len()).map(|i| parts[i..].join("/")).collect()
}

/// Every suffix of every path in `paths`, each once, in order.
pub fn suffixes_of_all(paths: &[String]) -> Vec<String> {
    let mut all: Vec<String> = Vec::new();
    for suffix in paths.iter().flat_map(|p| path_suffixes(p)) {
        if !all.contains(&suffix) {
            all.push(suffix);
        }
    }
    all
}

/// Whether `memory` may be injected unasked: at least `threshold` confident (the project's
/// [`engram_core::TrustLevel::injection_threshold`]), not in need of review, not forgotten,
/// and not among `shown`.
pub fn injectable(memory: &Memory, shown: &[String], threshold: f64) -> bool {
    memory.confidence >= threshold
        && !memory.flags.needs_review
        && !memory.deprecated
        && !shown.contains(&memory.id)
}

/// How much an unasked-for memory is worth showing: confidence × source trust × decay at
/// `now_millis` (no query to be relevant to, so the retrieval score's other factors do not
/// apply).
pub fn weight(memory: &Memory, now_millis: i64) -> f64 {
    memory.confidence
        * scoring::trust_weight(memory.source)
        * scoring::decay(&Candidate::new(memory.clone()), now_millis)
}

/// `memories` best first by [`weight`] at `now_millis` (ties by id), at most `limit`.
pub fn best_by_weight(memories: Vec<Memory>, now_millis: i64, limit: usize) -> Vec<Memory> {
    let mut scored: Vec<(f64, Memory)> = memories
        .into_iter()
        .map(|m| (weight(&m, now_millis), m))
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.id.cmp(&b.1.id)));
    scored.dedup_by(|a, b| a.1.id == b.1.id);
    scored.into_iter().take(limit).map(|(_, m)| m).collect()
}

/// The files a tool call read or edited, each once, in the order it names them (`Read`,
/// `Edit`, `Write`, … and shell commands, read the way the observer reads them).
pub fn files_touched(tool: &str, input: &serde_json::Value, files: &mut Vec<String>) {
    for action in engram_observer::action::actions_of(tool, input) {
        if let engram_observer::Action::Read { path, .. }
        | engram_observer::Action::Edit { path, .. } = action
        {
            if !files.contains(&path) {
                files.push(path);
            }
        }
    }
}

/// The memories to inject from `found` (memories about the files, as stored), best first:
/// the [`injectable`] ones at `threshold` ordered by [`weight`] at `now_millis`
/// (ties by id), at most [`MAX_INJECTED`].
pub fn pick(found: Vec<Memory>, shown: &[String], threshold: f64, now_millis: i64) -> Vec<Memory> {
    let injectable = found
        .into_iter()
        .filter(|m| injectable(m, shown, threshold))
        .collect();
    best_by_weight(injectable, now_millis, MAX_INJECTED)
}

/// How a memory type reads in injected text.
pub fn label(memory_type: MemoryType) -> &'static str {
    match memory_type {
        MemoryType::Gotcha => "Gotcha",
        MemoryType::Decision => "Decision",
        MemoryType::Preference => "Preference",
        MemoryType::Pattern => "Pattern",
        MemoryType::Requirement => "Requirement",
        MemoryType::ErrorPattern => "Error pattern",
        MemoryType::ModuleInsight => "Module insight",
        MemoryType::PrefetchPattern => "Files read together",
        MemoryType::WorkState => "Work in progress",
        MemoryType::CausalDependency => "Coupled change",
        MemoryType::TaskCalibration => "Calibration",
        MemoryType::E2eObservation => "Observed behaviour",
        MemoryType::DeadEnd => "Dead end",
        MemoryType::WorkUnitOutcome => "Outcome",
        MemoryType::WorkflowRecipe => "Recipe",
        MemoryType::ContextCost => "Context cost",
    }
}

/// One memory as a line: `- Gotcha: content [Memory #id: citation]`.
pub fn line(memory: &Memory) -> String {
    // Content is quoted: it must not pose as a chip, a heading or a prompt tag.
    format!(
        "- {}: {} [Memory #{}: {}]\n",
        label(memory.memory_type),
        quote::for_prompt(memory.content.trim()),
        memory.id,
        quote::chip_text(&memory.citation())
    )
}

/// The injection for memories about `files`, or `None` when there are none.
pub fn for_files(kind: InjectionKind, files: &[String], memories: &[Memory]) -> Option<Injection> {
    if memories.is_empty() {
        return None;
    }
    let mut text = match files {
        [one] => format!("Memory context for {one}:\n"),
        _ => format!("Memory context for {}:\n", files.join(", ")),
    };
    if kind == InjectionKind::FileContext {
        text.insert_str(0, "\n---\n");
    }
    for m in memories {
        text.push_str(&line(m));
    }
    Some(Injection {
        kind,
        text,
        memory_ids: memories.iter().map(|m| m.id.clone()).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use engram_core::MemorySource;
    use engram_retrieval::test_support::fake_memory;

    fn memory(id: &str, t: MemoryType, confidence: f64) -> Memory {
        let mut m = fake_memory(id, &format!("content of {id}"));
        m.memory_type = t;
        m.confidence = confidence;
        m
    }

    #[test]
    fn only_confident_live_unseen_memories_are_injected() {
        let mut review = memory("review", MemoryType::Gotcha, 0.9);
        review.flags.needs_review = true;
        let found = vec![
            memory("weak", MemoryType::Gotcha, 0.6),
            review,
            memory("shown", MemoryType::Gotcha, 0.9),
            memory("ok", MemoryType::DeadEnd, 0.65),
        ];
        let ids = |threshold: f64| -> Vec<String> {
            pick(found.clone(), &["shown".to_owned()], threshold, 0)
                .into_iter()
                .map(|m| m.id)
                .collect()
        };
        assert_eq!(ids(0.65), ["ok"]);
        // A more trusting project lowers the bar; a cautious one raises it.
        assert_eq!(ids(0.55), ["ok", "weak"]);
        assert!(ids(0.80).is_empty());
    }

    #[test]
    fn picks_the_most_trusted_four_once_each() {
        let mut found: Vec<Memory> = (0..6)
            .map(|i| memory(&format!("m{i}"), MemoryType::Gotcha, 0.7 + 0.01 * i as f64))
            .collect();
        found[0].source = MemorySource::UserTaught; // 0.70 × 1.4 beats 0.75 × 0.85
        for m in &mut found[1..] {
            m.source = MemorySource::ObserverInferred;
        }
        found.push(found[5].clone()); // found through two files
        let ids: Vec<String> = pick(found, &[], 0.65, 0)
            .into_iter()
            .map(|m| m.id)
            .collect();
        assert_eq!(ids, ["m0", "m5", "m4", "m3"]);
    }

    #[test]
    fn the_text_names_the_file_and_cites_each_memory() {
        let memories = [
            memory("a1", MemoryType::Gotcha, 0.9),
            memory("b2", MemoryType::DeadEnd, 0.9),
        ];
        let injection =
            for_files(InjectionKind::FileContext, &["src/db.rs".into()], &memories).unwrap();
        assert_eq!(
            injection.text,
            "\n---\nMemory context for src/db.rs:\n\
- Gotcha: content of a1 [Memory #a1: content of a1]\n\
- Dead end: content of b2 [Memory #b2: content of b2]\n"
        );
        assert_eq!(injection.memory_ids, ["a1", "b2"]);
        assert_eq!(for_files(InjectionKind::FileGotchas, &[], &[]), None);
    }

    #[test]
    fn suffixes_skip_dots_and_stop_at_six_components() {
        assert_eq!(path_suffixes("a\\b.rs"), ["a/b.rs", "b.rs"]);
        assert_eq!(path_suffixes("/1/2/3/4/5/6/7/x.py")[0], "3/4/5/6/7/x.py");
        assert!(path_suffixes("").is_empty());
        assert_eq!(
            suffixes_of_all(&["src/a.rs".into(), "lib/src/a.rs".into()]),
            ["src/a.rs", "a.rs", "lib/src/a.rs"]
        );
    }
}
