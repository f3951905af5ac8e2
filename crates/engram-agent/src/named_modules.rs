//! The modules a task's text names, among those memory knows.
//!
//! A planner that passes no modules still deserves the calibrations of the modules its task
//! is about, and a task usually says where the work is: "make the billing webhook
//! idempotent" is work in `src/billing`. Matching is against modules engram already holds
//! calibrations for, so a word in the task can only select a module that exists.

/// Last path segments that name a container rather than a part of the code: `src/lib`
/// is not named by a task that says "the lib", because every project has one.
const CONTAINER_SEGMENTS: [&str; 10] = [
    "src", "lib", "app", "pkg", "internal", "packages", "crates", "source", "main", "mod",
];

/// The modules among `known` that `task` names, in `known`'s order, each once. A module is
/// named when the task holds its whole path (`src/billing`), or its last segment
/// (`billing`) as a word, unless that segment is a container name such as `src` or `lib`.
/// Matching ignores case; words are runs of letters, digits, `_` and `-`.
///
/// ```
/// use engram_agent::named_modules::named_modules;
/// let known = ["src/billing", "src/auth", "src/lib", "."];
/// let task = "Make the Billing webhook idempotent; see src/lib for the retry helper";
/// assert_eq!(named_modules(task, &known), ["src/billing", "src/lib"]);
/// ```
pub fn named_modules<'a>(task: &str, known: &[&'a str]) -> Vec<&'a str> {
    let task = task.to_lowercase();
    let words: Vec<&str> = task
        .split(|c: char| !is_word_char(c))
        .filter(|w| !w.is_empty())
        .collect();
    let mut named: Vec<&'a str> = Vec::new();
    for &module in known {
        let trimmed = module.trim().trim_matches('/');
        if trimmed.is_empty() || trimmed == "." || named.contains(&module) {
            continue;
        }
        let lower = trimmed.to_lowercase();
        let last = lower.rsplit('/').next().unwrap_or(&lower);
        let by_path = lower.contains('/') && contains_bounded(&task, &lower);
        let by_segment = !CONTAINER_SEGMENTS.contains(&last) && words.contains(&last);
        if by_path || by_segment {
            named.push(module);
        }
    }
    named
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '-'
}

/// Whether `needle` occurs in `haystack` with no word character on either side.
fn contains_bounded(haystack: &str, needle: &str) -> bool {
    haystack.match_indices(needle).any(|(at, _)| {
        let before = haystack[..at].chars().next_back();
        let after = haystack[at + needle.len()..].chars().next();
        !before.is_some_and(is_word_char) && !after.is_some_and(is_word_char)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_module_is_named_by_its_path_or_its_last_segment_as_a_word() {
        let known = ["src/auth", "src/authz", "web/ui", "db", "billing-api"];
        assert_eq!(
            named_modules("Fix the AUTH token refresh", &known),
            ["src/auth"]
        );
        assert_eq!(
            named_modules("authentication is slow", &known),
            Vec::<&str>::new()
        );
        assert_eq!(named_modules("the ui and the db", &known), ["web/ui", "db"]);
        assert_eq!(
            named_modules("retry in billing-api, not billing", &known),
            ["billing-api"]
        );
        assert_eq!(
            named_modules("see src/authz/policy.rs", &known),
            ["src/authz"]
        );
    }

    #[test]
    fn containers_root_and_repeats_are_never_named_by_a_word() {
        let known = ["src/lib", "crates", ".", "", "db", "db"];
        assert_eq!(
            named_modules("the lib crates at the root . db", &known),
            ["db"]
        );
        assert_eq!(named_modules("move it into src/lib", &known), ["src/lib"]);
        assert_eq!(
            named_modules("move it into src/library", &known),
            Vec::<&str>::new()
        );
    }

    #[test]
    fn non_ascii_text_and_empty_inputs_are_safe() {
        assert!(named_modules("", &["db"]).is_empty());
        assert!(named_modules("db", &[]).is_empty());
        assert_eq!(
            named_modules("Übersetzung für die Datenbank: db/über", &["db/über", "ß"]),
            ["db/über"]
        );
    }
}
