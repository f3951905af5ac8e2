//! What agents say when they correct themselves or give up on an approach.

use std::sync::OnceLock;

use regex_lite::Regex;

mod lesson;

pub use lesson::lesson_of;

/// A phrase in the agent's own words that carries a lesson.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Utterance {
    /// The agent corrected an earlier belief ("I was wrong about …", "Actually, …").
    SelfCorrection,
    /// The agent abandoned an approach ("this approach won't work", "not available in CI").
    DeadEnd,
}

const SELF_CORRECTION: &[&str] = &[
    r"(?i)I was wrong about (.+?)\. (.+?) is actually",
    r"(?i)Let me reconsider[.:]? (.+)",
    r"(?i)Actually,? (.+?) (not|instead of|rather than) (.+)",
    r"(?i)I initially thought (.+?) but (.+)",
    r"(?i)Correction: (.+)",
];

/// "Wait, …" is how models think aloud; it is a correction only with a corrective cue.
const WAIT: &str = r"(?i)\bWait[,.] (.+)";
const CORRECTIVE_CUES: &[&str] = &[
    " not ",
    "n't ",
    "actually",
    "instead",
    "wrong",
    "mistake",
    "incorrect",
    "misread",
    "forgot",
    "missed",
];

const DEAD_END: &[&str] = &[
    r"(?i)this approach (won't|will not|cannot|can't|doesn't|does not) work",
    r"(?i)I need to abandon this",
    r"(?i)let me try a different approach",
    r"(?i)unavailable in (test|ci|production)",
    r"(?i)not available in this environment",
];

fn compiled(
    patterns: &'static [&'static str],
    cell: &'static OnceLock<Vec<Regex>>,
) -> &'static [Regex] {
    cell.get_or_init(|| patterns.iter().filter_map(|p| Regex::new(p).ok()).collect())
}

/// Lower-case words every pattern of the set needs; texts without any skip the regexes
/// (reasoning texts run to kilobytes and most carry no lesson).
const ANCHORS: &[&str] = &[
    "wrong about",
    "reconsider",
    "actually",
    "initially thought",
    "correction:",
    "wait",
    "approach",
    "abandon",
    "unavailable in",
    "not available in",
];

/// The first lesson in `text`, with its kind: a sentence that matches a lesson pattern,
/// made a lesson by [`lesson_of`] (lines whose sentence states nothing are passed over).
/// Dead ends win over self-corrections when a sentence matches both.
pub fn find(text: &str) -> Option<(Utterance, String)> {
    // Line by line: the patterns' lazy groups would otherwise scan kilobytes per attempt.
    text.split('\n').find_map(|line| {
        let (kind, said) = find_in_line(line)?;
        Some((kind, lesson_of(&said, kind == Utterance::DeadEnd)?))
    })
}

fn find_in_line(text: &str) -> Option<(Utterance, String)> {
    static CORRECTIONS: OnceLock<Vec<Regex>> = OnceLock::new();
    static DEAD_ENDS: OnceLock<Vec<Regex>> = OnceLock::new();
    let lower = text.to_ascii_lowercase();
    if !ANCHORS.iter().any(|a| lower.contains(a)) {
        return None;
    }
    for (kind, set) in [
        (Utterance::DeadEnd, compiled(DEAD_END, &DEAD_ENDS)),
        (
            Utterance::SelfCorrection,
            compiled(SELF_CORRECTION, &CORRECTIONS),
        ),
    ] {
        for re in set {
            if let Some(m) = re.find(text) {
                return Some((kind, sentence_around(text, m.start())));
            }
        }
    }
    static WAIT_RE: OnceLock<Option<Regex>> = OnceLock::new();
    if !lower.contains("wait") {
        return None;
    }
    if let Some(m) = WAIT_RE
        .get_or_init(|| Regex::new(WAIT).ok())
        .as_ref()
        .and_then(|re| re.find(text))
    {
        let sentence = sentence_around(text, m.start());
        let lower = sentence.to_lowercase();
        if CORRECTIVE_CUES.iter().any(|cue| lower.contains(cue)) {
            return Some((Utterance::SelfCorrection, sentence));
        }
    }
    None
}

/// The sentence containing byte offset `at`, at most 300 characters.
fn sentence_around(text: &str, at: usize) -> String {
    let start = text[..at].rfind(['\n', '.', '!', '?']).map_or(0, |i| i + 1);
    let rest = &text[at..];
    let end = rest.find(['\n']).map_or(text.len(), |i| at + i);
    let end = text[at..end]
        .match_indices(". ")
        .nth(1)
        .map_or(end, |(i, _)| at + i + 1);
    text[start..end].trim().chars().take(300).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_lessons() {
        let (kind, sentence) =
            find("Ran it.\nI was wrong about the cache. The `Loader` is actually lazy. Next step.")
                .unwrap();
        assert_eq!(kind, Utterance::SelfCorrection);
        assert_eq!(sentence, "The `Loader` is actually lazy.");
        let (kind, _) =
            find("Hmm, this approach won't work because the `db` fixture is global.").unwrap();
        assert_eq!(kind, Utterance::DeadEnd);
        assert!(find("Now I will read the file and run the tests.").is_none());
        assert!(find("Wait, `test_requests.py` line 362:").is_none());
        let (kind, lesson) =
            find("Wait, the --dist flag is not passed to the child_process.").unwrap();
        assert_eq!(kind, Utterance::SelfCorrection);
        assert_eq!(
            lesson,
            "The --dist flag is not passed to the child_process."
        );
        // A line that only thinks aloud is passed over for one that states something.
        let (_, lesson) =
            find("Actually, let me re-read it.\nWait, the env var is not read in CI.\nWait, `DATABASE_URL` is not read in CI.").unwrap();
        assert_eq!(lesson, "`DATABASE_URL` is not read in CI.");
        // A sentence that names nothing in the code is not a lesson on its own.
        assert!(find("Wait, the flag is not passed to the child process.").is_none());
    }
}
