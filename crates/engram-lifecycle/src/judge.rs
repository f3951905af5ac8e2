//! Whether a new memory merges into a live one, supersedes it, or stands beside it.
//!
//! Both mistakes cost, unequally: a missed merge leaves a duplicate a person can still
//! see and merge; a wrong merge or a wrong supersession hides knowledge. So every rule
//! here asks for more than similarity: a merge needs the same values and the same
//! negations, a supersession needs the same subject and a named change (a flipped
//! negation, a changed value, or an announced replacement).

use std::collections::BTreeSet;

use engram_core::MemoryType;
use serde::Serialize;

use crate::text::{jaccard, Claim};

/// Cosine (bundled MiniLM) at or above which two memories of one type with the same
/// values and negations say the same thing.
pub const MERGE_COSINE: f64 = 0.92;
/// Word overlap (Jaccard) that stands in for [`MERGE_COSINE`] when there is no vector.
pub const MERGE_OVERLAP: f64 = 0.85;
/// Word overlap a merge needs besides [`MERGE_COSINE`]: a model can find two short texts
/// alike that share little more than their topic.
pub const MERGE_OVERLAP_WITH_VECTORS: f64 = 0.6;
/// Cosine at or above which two memories can be about the same subject, for supersession.
pub const SUBJECT_COSINE: f64 = 0.75;
/// Word overlap two memories about the same subject share, with or without vectors.
pub const SUBJECT_OVERLAP: f64 = 0.5;

/// A memory as the judgement sees it.
#[derive(Debug, Clone, Copy)]
pub struct Stated<'a> {
    /// Its text.
    pub content: &'a str,
    /// The files it is about.
    pub files: &'a [String],
    /// The code-graph node it is about, if any: two memories about two nodes are about
    /// two subjects, however alike their words.
    pub target: Option<&'a str>,
}

/// Why a memory supersedes another.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase", tag = "kind")]
pub enum Change {
    /// One says to do what the other says not to do.
    Polarity {
        /// The words negated in one text and not the other.
        words: Vec<String>,
    },
    /// The same rule with another value (a number, command, path, version or name).
    Value {
        /// Values of the old memory the new one no longer names.
        from: Vec<String>,
        /// Values of the new memory the old one did not name.
        to: Vec<String>,
    },
    /// The new memory says the old one's subject was replaced.
    Replacement {
        /// What it says was replaced.
        replaced: String,
    },
    /// The file the rule was imported from now says it in other words.
    Revised {
        /// The file, from the project root.
        source: String,
    },
    /// Whoever recorded the new memory said it replaces this one (an agent correcting a
    /// memory it was shown).
    Declared,
}

impl Change {
    /// A sentence for history entries and reports.
    pub fn describe(&self) -> String {
        match self {
            Change::Polarity { words } => {
                format!("the instruction was reversed ({})", words.join(", "))
            }
            Change::Value { from, to } => {
                format!(
                    "the value changed from {} to {}",
                    from.join(", "),
                    to.join(", ")
                )
            }
            Change::Replacement { replaced } => format!("it says {replaced} was replaced"),
            Change::Revised { source } => format!("{source} now says it in other words"),
            Change::Declared => "whoever recorded it said it replaces this one".to_owned(),
        }
    }
}

/// What to do with a new memory, given one live memory of its project and type.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase", tag = "kind")]
pub enum Judgement {
    /// It says the same thing: merge it into the live one.
    Duplicate {
        /// Why: `same text` or the similarity that decided.
        reason: String,
        /// The new text says all the old one does and more: the merged memory takes its
        /// wording (the old one stays in the history).
        adopt_wording: bool,
    },
    /// It replaces the live one, which is retired and points to it.
    Supersedes {
        /// What changed.
        change: Change,
    },
    /// They are different memories.
    Distinct,
}

/// Whether memories of this type state claims that a newer one can replace. Snapshots
/// and measurements (work states, calibrations, context costs, prefetch patterns, work
/// outcomes) accumulate instead.
pub fn supersedable(memory_type: MemoryType) -> bool {
    !matches!(
        memory_type,
        MemoryType::WorkState
            | MemoryType::TaskCalibration
            | MemoryType::ContextCost
            | MemoryType::PrefetchPattern
            | MemoryType::WorkUnitOutcome
    )
}

/// Judges `new` against the live memory `old` of the same project and type; `cosine` is
/// their vectors' similarity when both have one of the same model.
pub fn judge(new: Stated<'_>, old: Stated<'_>, cosine: Option<f64>) -> Judgement {
    if matches!((new.target, old.target), (Some(a), Some(b)) if a != b) {
        return Judgement::Distinct;
    }
    let disjoint = !new.files.is_empty()
        && !old.files.is_empty()
        && !new.files.iter().any(|f| old.files.contains(f));
    if crate::text::normalized(new.content) == crate::text::normalized(old.content) {
        // The same words about a symbol of another file are about another symbol, and so
        // are words that differ only in a name's case (`MonkeyPatch` / `monkeypatch`).
        let names = crate::text::code_names(new.content);
        if (disjoint && crate::text::bound_to_files(new.content, new.files))
            || names != crate::text::code_names(old.content)
        {
            return Judgement::Distinct;
        }
        return Judgement::Duplicate {
            reason: "same text".into(),
            adopt_wording: false,
        };
    }
    let n = Claim::of(new.content);
    let o = Claim::of(old.content);
    if n.labels != o.labels && !(n.labels.is_empty() || o.labels.is_empty()) {
        // "step 3 …" and "step 4 …" are about two things, however alike.
        return Judgement::Distinct;
    }
    let overlap = jaccard(&n.words, &o.words);
    let shared_files = new.files.iter().any(|f| old.files.contains(f));
    let same_subject = overlap >= SUBJECT_OVERLAP
        && cosine.is_none_or(|c| c >= SUBJECT_COSINE)
        && (shared_files || new.files.is_empty() || old.files.is_empty());
    if same_subject {
        if let Some(change) = changed(&n, &o) {
            return Judgement::Supersedes { change };
        }
    }
    if let Some(replaced) = announced_replacement(&n, &o) {
        if overlap >= SUBJECT_OVERLAP / 2.0 && cosine.is_none_or(|c| c >= SUBJECT_COSINE) {
            return Judgement::Supersedes {
                change: Change::Replacement { replaced },
            };
        }
    }
    // Only additions: a word swapped for another ("the billing service …" / "the search
    // service …") can change what the memory is about, however alike the rest.
    let nested = n.words.is_subset(&o.words) || n.words.is_superset(&o.words);
    let same_claim = nested && n.values == o.values && n.negation_heads == o.negation_heads;
    let close = match cosine {
        Some(c) => c >= MERGE_COSINE && overlap >= MERGE_OVERLAP_WITH_VECTORS,
        None => overlap >= MERGE_OVERLAP,
    };
    if same_claim && close {
        let reason = match cosine {
            Some(c) => format!("cosine {c:.3}, same values and negations"),
            None => format!("word overlap {overlap:.2}, same values and negations"),
        };
        let adopt_wording = n.words.is_superset(&o.words) && n.words.len() > o.words.len();
        return Judgement::Duplicate {
            reason,
            adopt_wording,
        };
    }
    Judgement::Distinct
}

/// The change between two claims about one subject, if there is one: a flipped
/// negation, or values that were swapped for others (adding a value refines a rule, it
/// does not change it).
fn changed(n: &Claim, o: &Claim) -> Option<Change> {
    // The rest of the rule must be the same rule: its words without the values, with
    // words added but none swapped for another.
    let strip = |c: &Claim| -> BTreeSet<String> {
        c.words
            .iter()
            .filter(|w| !c.values.iter().any(|v| v.contains(w.as_str())))
            .cloned()
            .collect()
    };
    let (rest_n, rest_o) = (strip(n), strip(o));
    if !(rest_n.is_subset(&rest_o) || rest_n.is_superset(&rest_o)) {
        return None;
    }
    let shared: BTreeSet<&String> = n.words.intersection(&o.words).collect();
    let flipped: Vec<String> = n
        .negation_heads
        .symmetric_difference(&o.negation_heads)
        .filter(|w| shared.contains(w))
        .cloned()
        .collect();
    if !flipped.is_empty() {
        return Some(Change::Polarity { words: flipped });
    }
    let from: Vec<String> = o.values.difference(&n.values).cloned().collect();
    let to: Vec<String> = n.values.difference(&o.values).cloned().collect();
    // A changed path names another file, so another subject ("`a.py` and `b.py` change
    // together" / "`a.py` and `c.py` …"), not another value of the same setting; and a
    // changed code name another symbol ("check the callers of `a` …" / "… of `b` …"), as
    // does a value the memory opens with ("`Frame` has callers …" / "`fullsource` has …").
    let subject = |v: &String| {
        n.names.contains(v)
            || o.names.contains(v)
            || n.opening.as_ref() == Some(v)
            || o.opening.as_ref() == Some(v)
    };
    if from
        .iter()
        .chain(&to)
        .any(|v| looks_like_path(v) || subject(v))
    {
        return None;
    }
    (!from.is_empty() && !to.is_empty()).then_some(Change::Value { from, to })
}

/// Whether a value is a file path: it has a `/`, or ends in a short extension after a
/// name (`utils.py`, `schema.prisma`), not a version (`5.4.1`).
fn looks_like_path(value: &str) -> bool {
    if value.contains('/') && !value.contains(' ') {
        return true;
    }
    match value.rsplit_once('.') {
        Some((name, ext)) => {
            !name.is_empty()
                && (1..=6).contains(&ext.len())
                && ext.chars().all(|c| c.is_ascii_alphabetic())
                && name.chars().any(|c| c.is_ascii_alphabetic())
        }
        None => false,
    }
}

/// What `n` says was replaced, when that is what `o` is about.
fn announced_replacement(n: &Claim, o: &Claim) -> Option<String> {
    n.replaced
        .iter()
        // A memory that reports the same replacement does not hold the old way.
        .filter(|subject| !o.replaced.contains(subject))
        .find(|subject| {
            subject
                .split(' ')
                .map(engram_core::porter::stem)
                .all(|w| o.words.contains(&w) && !o.negation_heads.contains(&w))
        })
        .cloned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(content: &str) -> Stated<'_> {
        Stated {
            content,
            files: &[],
            target: None,
        }
    }

    fn kind(j: &Judgement) -> &'static str {
        match j {
            Judgement::Duplicate { .. } => "duplicate",
            Judgement::Supersedes { .. } => "supersedes",
            Judgement::Distinct => "distinct",
        }
    }

    #[test]
    fn a_swapped_code_name_is_another_symbol_not_a_changed_value() {
        // Two gotchas about two functions of pytest's `_argcomplete.py`, alike but for the
        // name: neither replaces the other.
        for (new, old) in [
            (
                "Check the callers of try_argcomplete before changing it",
                "Check the callers of FastFilesCompleter before changing it",
            ),
            (
                "`filescompleter` has callers outside src/_pytest/_argcomplete.py: check them first",
                "`try_argcomplete` has callers outside src/_pytest/_argcomplete.py: check them first",
            ),
            (
                "`Frame` has callers outside src/_pytest/_code/code.py: check them first",
                "`fullsource` has callers outside src/_pytest/_code/code.py: check them first",
            ),
        ] {
            let j = judge(s(new), s(old), Some(0.9));
            assert_eq!(kind(&j), "distinct", "{new:?} / {old:?}: {j:?}");
        }
    }

    #[test]
    fn the_same_words_about_a_symbol_of_another_file_do_not_merge() {
        let (capture, logging) = (
            vec!["src/_pytest/capture.py".to_owned()],
            vec!["src/_pytest/logging.py".to_owned()],
        );
        let text = "Check the callers of pytest_configure before changing it";
        let at = |files| Stated {
            content: text,
            files,
            target: None,
        };
        assert_eq!(kind(&judge(at(&capture), at(&logging), None)), "distinct");
        assert_eq!(kind(&judge(at(&capture), at(&capture), None)), "duplicate");
        let j = judge(
            s("Check the callers of MonkeyPatch before changing it"),
            s("Check the callers of monkeypatch before changing it"),
            None,
        );
        assert_eq!(kind(&j), "distinct", "a class and a function: {j:?}");
        let on = |target| Stated {
            content: "Check the callers of `fail` before changing it",
            files: &capture,
            target: Some(target),
        };
        let j = judge(
            on("src/_pytest/outcomes.py#function:fail"),
            on("src/_pytest/outcomes.py#class:Failed"),
            None,
        );
        assert_eq!(kind(&j), "distinct", "two targets, two subjects: {j:?}");
        let rule = "Use pnpm, not npm";
        let said = |files| Stated {
            content: rule,
            files,
            target: None,
        };
        assert_eq!(
            kind(&judge(said(&capture), said(&logging), None)),
            "duplicate",
            "a rule that names no code is one rule wherever it was learned"
        );
        assert_ne!(
            crate::text::memory_key(text, &capture, None),
            crate::text::memory_key(text, &logging, None)
        );
        assert_eq!(
            crate::text::memory_key(rule, &capture, None),
            crate::text::memory_key(rule, &logging, None)
        );
    }

    #[test]
    fn the_same_text_in_another_form_merges() {
        let j = judge(s("Use **pnpm**, not npm."), s("use pnpm not npm"), None);
        assert_eq!(kind(&j), "duplicate");
    }

    #[test]
    fn a_reversed_instruction_supersedes() {
        let j = judge(s("Use npm, not pnpm"), s("Use pnpm, not npm"), Some(0.97));
        assert_eq!(kind(&j), "supersedes", "{j:?}");
        let j = judge(
            s("Never mock the database in integration tests"),
            s("Always mock the database in integration tests"),
            Some(0.9),
        );
        assert_eq!(kind(&j), "supersedes", "{j:?}");
    }

    #[test]
    fn a_changed_value_supersedes_and_an_added_one_refines() {
        let j = judge(
            s("The request timeout is 60 s"),
            s("The request timeout is 30 s"),
            Some(0.96),
        );
        assert!(
            matches!(
                j,
                Judgement::Supersedes {
                    change: Change::Value { .. }
                }
            ),
            "{j:?}"
        );
        let j = judge(
            s("Run tests with `cargo nextest run --no-fail-fast`"),
            s("Run tests with `cargo nextest run`"),
            Some(0.95),
        );
        assert_eq!(
            kind(&j),
            "supersedes",
            "a changed command is a changed value: {j:?}"
        );
        let j = judge(
            s("Run the tests with pytest, and -x to stop at the first failure"),
            s("Run the tests with pytest"),
            Some(0.88),
        );
        assert_eq!(kind(&j), "distinct", "{j:?}");
    }

    #[test]
    fn an_announced_replacement_supersedes() {
        let j = judge(
            s("We moved from Jest to Vitest for unit tests"),
            s("Unit tests run with Jest"),
            Some(0.8),
        );
        assert!(
            matches!(
                j,
                Judgement::Supersedes {
                    change: Change::Replacement { .. }
                }
            ),
            "{j:?}"
        );
    }

    #[test]
    fn similar_but_different_rules_stand_apart() {
        let j = judge(
            s("NEVER update all dependencies in the lockfile at once"),
            s("NEVER assume clippy warnings are pre-existing"),
            Some(0.6),
        );
        assert_eq!(kind(&j), "distinct");
        // Same words, different files: different subjects.
        let a = ["src/a.rs".to_owned()];
        let b = ["src/b.rs".to_owned()];
        let j = judge(
            Stated {
                content: "The parser panics on empty input",
                files: &a,
                target: None,
            },
            Stated {
                content: "The parser does not panic on empty input",
                files: &b,
                target: None,
            },
            Some(0.9),
        );
        assert_eq!(kind(&j), "distinct", "{j:?}");
    }

    #[test]
    fn a_widened_rule_is_not_a_reversal() {
        let j = judge(
            s("NEVER assume clippy warnings or test failures are pre-existing"),
            s("NEVER assume clippy warnings are pre-existing"),
            Some(0.95),
        );
        assert!(
            matches!(
                j,
                Judgement::Duplicate {
                    adopt_wording: true,
                    ..
                }
            ),
            "{j:?}"
        );
    }

    #[test]
    fn one_subject_swapped_for_another_is_a_different_memory() {
        let j = judge(
            s("the billing service times out when the pool is exhausted"),
            s("the search service times out when the pool is exhausted"),
            Some(0.95),
        );
        assert_eq!(kind(&j), "distinct", "{j:?}");
    }

    #[test]
    fn the_same_replacement_said_of_another_subject_supersedes_nothing() {
        let j = judge(
            s("the search service went back from graphql to rest"),
            s("the billing service went back from graphql to rest"),
            Some(0.9),
        );
        assert_eq!(kind(&j), "distinct", "{j:?}");
    }

    #[test]
    fn a_coupling_with_another_file_is_another_memory() {
        let a = [
            "pylint/config/callback_actions.py".to_owned(),
            "pylint/config/argument.py".to_owned(),
        ];
        let b = [
            "pylint/config/utils.py".to_owned(),
            "pylint/config/callback_actions.py".to_owned(),
        ];
        let j = judge(
            Stated {
                content: "`pylint/config/utils.py` and `pylint/config/callback_actions.py` are worked on together (within 3 steps of each other, 1 times in one session, usually `pylint/config/utils.py` first); when changing one, open the other.",
                files: &b,
                target: None,
            },
            Stated {
                content: "`pylint/config/callback_actions.py` and `pylint/config/argument.py` are worked on together (within 3 steps of each other, 2 times in one session, usually `pylint/config/callback_actions.py` first); when changing one, open the other.",
                files: &a,
                target: None,
            },
            Some(0.987),
        );
        assert_eq!(kind(&j), "distinct", "{j:?}");
    }

    #[test]
    fn numbered_things_are_told_apart() {
        let j = judge(
            s("release 3: the lock wait grew past the timeout"),
            s("release 4: the lock wait grew past the timeout"),
            None,
        );
        assert_eq!(kind(&j), "distinct", "{j:?}");
    }

    #[test]
    fn without_vectors_high_word_overlap_merges() {
        let j = judge(
            s("Always run `make schema` after editing the proto files"),
            s("Run `make schema` always after editing proto files"),
            None,
        );
        assert_eq!(kind(&j), "duplicate", "{j:?}");
    }
}
