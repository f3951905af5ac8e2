//! The lesson in what an agent said: its statements of fact about the project, without
//! the thinking aloud around them.
//!
//! A correction reads "Wait, actually the helper tests the controller with
//! `ConnTest.dispatch` directly. There's no ConnCase wrapper." — the lesson is the two
//! statements after "Wait, actually". Sentences about the agent's own moves ("let me
//! re-read", "I should add debugging"), guesses ("it might be the rescue clause"),
//! questions, and talk about the task it was given ("the instructions say …") are not
//! knowledge about the project, and a sentence that opens with "that" or "it" points at
//! something the memory would not show. Dead ends are said in the first person, and keep
//! it.

/// Words that open a sentence as thinking aloud; dropped from its start.
const MARKERS: &[&str] = &[
    "wait",
    "but",
    "actually",
    "hmm",
    "oh",
    "ok",
    "okay",
    "ah",
    "right",
    "so",
    "and",
    "correction",
    "also",
    "well",
];

/// Words that make a sentence about the agent itself.
const FIRST_PERSON: &[&str] = &[
    "i", "i'm", "i'll", "i've", "i'd", "me", "my", "we", "we'll", "we're", "we've", "let's", "us",
    "our", "let",
];

/// Words that make a sentence a guess.
const HEDGES: &[&str] = &[
    "might", "maybe", "perhaps", "probably", "possibly", "likely", "unlikely", "seems", "suspect",
    "guess", "usually", "would",
];

/// Phrases about the task the agent was given rather than the project.
const TASK_TALK: &[&str] = &[
    "the instructions",
    "do not modify",
    "the pr ",
    "the pr's",
    "the issue",
    "the task",
    "the mvce",
    "the snippet",
    "the output",
    "the error says",
    "system reminder",
];

/// Abbreviations whose period ends no sentence.
const ABBREVIATIONS: &[&str] = &["e.g.", "i.e.", "etc.", "vs.", "cf."];

/// Phrases that state a corrected belief, the correction itself in the first person.
const CORRECTED_BELIEF: &[&str] = &["initially thought", "wrong about", "i assumed"];

/// Sentence openers that point back at something the memory would not show.
const DEICTIC: &[&str] = &[
    "that", "that's", "this", "it", "it's", "these", "those", "here", "here's", "they", "they're",
    "which", "its", "both", "same",
];

/// Most sentences a lesson keeps.
const MAX_SENTENCES: usize = 2;

/// Fewest words a kept sentence has.
const MIN_WORDS: usize = 3;

/// The statements of fact in `said` (a sentence or two an agent said when it corrected
/// itself or gave up on an approach), capitalised and joined; `None` when it holds none.
/// A dead end keeps a sentence that opens with "this" ("this approach won't work because
/// …"): that is how dead ends are said.
pub fn lesson_of(said: &str, dead_end: bool) -> Option<String> {
    let sentences = sentences(said);
    let last = sentences.len().saturating_sub(1);
    let kept: Vec<String> = sentences
        .into_iter()
        .enumerate()
        // A sentence cut off mid-way (the said text has a length limit) is not kept.
        .filter(|(i, s)| *i < last || ends_complete(s))
        .filter_map(|(_, s)| statement(s, dead_end))
        .take(MAX_SENTENCES)
        .collect();
    if kept.is_empty() {
        return None;
    }
    Some(kept.join(" "))
}

/// `sentence` without its opening markers, capitalised, when it states a fact.
fn statement(sentence: &str, dead_end: bool) -> Option<String> {
    let body = without_markers(sentence.trim());
    let words: Vec<String> = body
        .split_whitespace()
        .map(|w| {
            w.trim_matches(|c: char| !c.is_alphanumeric() && c != '\'')
                .to_lowercase()
        })
        .collect();
    let first = words.first()?;
    let lower = body.to_lowercase();
    // A dead end is said in the first person ("I need to abandon this and use the public
    // API instead"); only its "let me …" announcements say nothing. So is a correction
    // that says what was believed before ("I initially thought the loader was eager but it
    // is lazy").
    let first_person_allowed = dead_end || CORRECTED_BELIEF.iter().any(|p| lower.contains(p));
    let about_the_agent = words.iter().any(|w| {
        HEDGES.contains(&w.as_str())
            || (!first_person_allowed && FIRST_PERSON.contains(&w.as_str()))
    }) || (dead_end && matches!(first.as_str(), "let" | "let's"));
    let points_back = DEICTIC.contains(&first.as_str()) && !(dead_end && first == "this");
    if words.len() < MIN_WORDS
        || about_the_agent
        || points_back
        || body.ends_with('?')
        || body.ends_with(':')
        || TASK_TALK.iter().any(|t| lower.contains(t))
        || lower.contains("wait,")
        || body.matches('(').count() != body.matches(')').count()
        || starts_mid_token(body)
        || body.starts_with(|c: char| c.is_ascii_digit())
        || !names_code(body)
    {
        return None;
    }
    let mut chars = body.chars();
    let head = chars.next()?;
    Some(head.to_uppercase().chain(chars).collect())
}

/// Whether a sentence names something in the code, so that it stands alone as a statement
/// about the project: a quoted name (`` `x` ``), a call (`parse()`), a dotted or
/// snake_case or CamelCase name, or a file name.
fn names_code(sentence: &str) -> bool {
    sentence.contains('`')
        || sentence.split_whitespace().any(|word| {
            let word = word.trim_matches(|c: char| !c.is_alphanumeric() && c != '_' && c != ')');
            let inner = word.trim_end_matches("()");
            let camel = inner
                .char_indices()
                .skip(1)
                .any(|(i, c)| c.is_uppercase() && inner[..i].chars().any(char::is_lowercase));
            word.ends_with("()")
                || inner.contains("::")
                || (inner.contains('_') && inner.chars().any(char::is_alphabetic))
                || camel
                || (inner.contains('.')
                    && inner.split('.').all(|part| !part.is_empty())
                    && inner.chars().any(char::is_alphabetic)
                    && !inner.chars().all(|c| c.is_ascii_digit() || c == '.'))
        })
}

/// `text` without the markers that open it ("But wait, actually …").
fn without_markers(mut text: &str) -> &str {
    loop {
        let end = text
            .find(|c: char| !c.is_alphabetic())
            .unwrap_or(text.len());
        if end == 0 || !MARKERS.contains(&text[..end].to_lowercase().as_str()) {
            return text;
        }
        // A marker is a word of its own ("So", not "So's").
        if text[end..].starts_with('\'') {
            return text;
        }
        text = text[end..].trim_start_matches(|c: char| {
            c.is_whitespace() || matches!(c, ',' | '.' | '!' | ':' | ';' | '-' | '—' | '–')
        });
    }
}

/// Whether `text` starts inside a token the sentence split cut (`py\` to …` after
/// `utils.` was taken for a sentence end).
fn starts_mid_token(text: &str) -> bool {
    let first = text.split_whitespace().next().unwrap_or("");
    first
        .char_indices()
        .any(|(i, c)| i > 0 && matches!(c, '`' | '"' | ')' | ']'))
        && !first.starts_with(['`', '"', '(', '['])
}

/// Whether a sentence ends where sentences end.
fn ends_complete(sentence: &str) -> bool {
    sentence
        .trim_end()
        .ends_with(['.', '!', '?', '"', '`', ')', '\''])
}

/// `text` split after `.`, `!` or `?` followed by a space, outside double quotes.
fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut quoted = false;
    let bytes = text.as_bytes();
    // ASCII lower case keeps every byte offset, so `lower[..=i]` is `text[..=i]`.
    let lower = text.to_ascii_lowercase();
    for (i, c) in text.char_indices() {
        match c {
            // A quote that closes a sentence closes ours too: `says "Fix them." But …`.
            '"' if quoted
                && text[..i].ends_with(['.', '!', '?'])
                && bytes.get(i + 1) == Some(&b' ') =>
            {
                quoted = false;
                out.push(text[start..=i].trim());
                start = i + 1;
            }
            '"' => quoted = !quoted,
            '.' | '!' | '?'
                if !quoted
                    && bytes.get(i + 1) == Some(&b' ')
                    && !ABBREVIATIONS.iter().any(|a| lower[..=i].ends_with(a)) =>
            {
                out.push(text[start..=i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    let rest = text[start..].trim();
    if !rest.is_empty() {
        out.push(rest);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thinking_aloud_goes_and_statements_stay() {
        let cases = [
            (
                "Wait, actually the existing approach in the codebase (hooks_controller_test.exs) tests the controller using Phoenix.ConnTest.dispatch directly. There's no ConnCase wrapper.",
                Some("The existing approach in the codebase (hooks_controller_test.exs) tests the controller using Phoenix.ConnTest.dispatch directly. There's no ConnCase wrapper."),
            ),
            // Sentences that name nothing in the code do not stand alone as a lesson.
            (
                "Wait, there's an issue with this fix. 1711 is `if not self:`.",
                None,
            ),
            (
                "The issue might be in the rescue clause silently catching an error, so I should add some debugging. The session ID is coming through as a string in the URL but needs to be a UUID for the filter to work properly.",
                None,
            ),
            ("Actually wait, let me re-read. The error says:", None),
            (
                "Wait, CLAUDE.md says \"Do not ignore credo lintings. Fix them.\" But these are pre-existing issues in files I didn't touch.",
                Some("CLAUDE.md says \"Do not ignore credo lintings. Fix them.\""),
            ),
            (
                "Wait, installing `pytest-xdist` upgraded `pytest` to 8.4.2. The current repository is `pytest` itself, and I should be testing against it.",
                Some("Installing `pytest-xdist` upgraded `pytest` to 8.4.2."),
            ),
            ("Wait, `$` is not a valid identifier start in Python?", None),
            (
                "Wait, if `xfailed` is already present (e.g. a static xfail), it is not evaluated again.",
                Some("If `xfailed` is already present (e.g. a static xfail), it is not evaluated again."),
            ),
            (
                "`_as_array_or_item` (Wait, the name is not visible, but it wraps data).",
                None,
            ),
            ("Wait, \"DO NOT MODIFY: Tests\". Does that mean I cannot add new tests?", None),
            ("py` to actually do something instead of `_DoNothingAction`.", None),
            ("Wait, that still has the guard clause issue! I need to fix t", None),
            (
                "I was wrong about the cache. The loader is actually lazy.",
                None,
            ),
            (
                "I was wrong about `cache_get`. The `Loader` is actually lazy.",
                Some("I was wrong about `cache_get`. The `Loader` is actually lazy."),
            ),
            (
                "I initially thought load_config was eager but it is lazy.",
                Some("I initially thought load_config was eager but it is lazy."),
            ),
        ];
        for (said, lesson) in cases {
            assert_eq!(lesson_of(said, false).as_deref(), lesson, "{said}");
        }
    }

    #[test]
    fn a_dead_end_may_name_this_approach() {
        assert_eq!(
            lesson_of(
                "Hmm, this approach won't work because the `db` fixture is global.",
                true
            )
            .as_deref(),
            Some("This approach won't work because the `db` fixture is global.")
        );
        assert_eq!(lesson_of("Let me try a different approach.", true), None);
        assert_eq!(
            lesson_of(
                "I need to abandon this and use the public `Session.request()` API instead.",
                true
            )
            .as_deref(),
            Some("I need to abandon this and use the public `Session.request()` API instead.")
        );
    }
}
