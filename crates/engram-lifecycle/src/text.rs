//! What a memory's text claims, reduced to what the lifecycle rules compare: its
//! normalized form, its words, the values it names, the words it negates, and a change
//! it announces ("moved from A to B").

use std::collections::BTreeSet;

use sha2::{Digest, Sha256};

/// Lower case, with every run of characters that are not letters, digits or `_` turned
/// into one space: two texts that differ only in case, punctuation, markdown emphasis or
/// wrapping have the same normalized form. Code is compared as written: `_` stays
/// (`_suspend` and `suspend` are two symbols), and so does case inside backticks
/// (`` `Function` `` and `` `function` `` are two names).
pub fn normalized(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut pending_space = false;
    let mut in_code = false;
    for c in text.chars() {
        if c.is_alphanumeric() || c == '_' {
            if pending_space && !out.is_empty() {
                out.push(' ');
            }
            pending_space = false;
            if in_code {
                out.push(c);
            } else {
                out.extend(c.to_lowercase());
            }
        } else {
            in_code ^= c == '`';
            pending_space = true;
        }
    }
    out
}

/// The key two memories share when their texts are the same after [`normalized`]: the
/// first 16 bytes of its SHA-256, in hex. Stored with each memory, so a write can find an
/// identical live memory by index, and two parallel writers of one text cannot both
/// insert it.
pub fn content_key(text: &str) -> String {
    let digest = Sha256::digest(normalized(text).as_bytes());
    digest[..16].iter().map(|b| format!("{b:02x}")).collect()
}

/// Whether a text about `files` is bound to them: it names code (a symbol is a symbol of
/// some file: "check the callers of `pytest_configure`" about `capture.py` is not the
/// same memory about `logging.py`). A rule that names none ("use pnpm, not npm") is the
/// same rule wherever it was learned.
pub fn bound_to_files(text: &str, files: &[String]) -> bool {
    !files.is_empty() && !code_names(text).is_empty()
}

/// The key of a memory: [`content_key`] of its text, with its sorted files when the text
/// is [`bound_to_files`] and the code-graph node it targets, if any.
pub fn memory_key(text: &str, files: &[String], target: Option<&str>) -> String {
    let mut keyed = text.to_owned();
    if bound_to_files(text, files) {
        let mut files: Vec<&str> = files.iter().map(String::as_str).collect();
        files.sort_unstable();
        files.dedup();
        keyed.push_str(&format!("\n{}", files.join("\n")));
    }
    if let Some(target) = target {
        keyed.push_str(&format!("\n{target}"));
    }
    content_key(&keyed)
}

/// Words that carry no claim of their own; left out when texts are compared word by word.
const STOP_WORDS: &[&str] = &[
    "a", "an", "the", "and", "or", "of", "to", "in", "on", "for", "with", "by", "at", "is", "are",
    "be", "it", "this", "that", "as", "from", "when", "if", "so", "its", "was", "were", "all",
    "any", "into", "than", "then", "there", "these", "those", "which", "can", "will", "should",
    "must", "you", "your", "we", "our", "us",
];

/// Words that turn what follows them around. Multi-word markers are matched on
/// [`normalized`] words, so `don't` is `don t`.
const NEGATIONS: &[&[&str]] = &[
    &["never"],
    &["not"],
    &["no"],
    &["avoid"],
    &["don", "t"],
    &["doesn", "t"],
    &["isn", "t"],
    &["aren", "t"],
    &["shouldn", "t"],
    &["mustn", "t"],
    &["can", "t"],
    &["cannot"],
    &["won", "t"],
    &["stop"],
    &["disable"],
    &["without"],
    &["instead", "of"],
];

/// Words that end the reach of a negation (besides punctuation): "not X but Y".
const SCOPE_ENDS: &[&str] = &["but", "instead", "rather", "only"];

/// How many words after a negation marker it reaches.
const NEGATION_REACH: usize = 4;

/// What a text claims, in the terms the lifecycle rules compare.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Claim {
    /// Content words (lower case, stop words and negation markers left out).
    pub words: BTreeSet<String>,
    /// Concrete values: numbers, versions, code spans, paths, identifiers, flags.
    pub values: BTreeSet<String>,
    /// Content words within the reach of a negation ("never use X" negates `use` and `x`).
    pub negated: BTreeSet<String>,
    /// The first content word each negation turns around ("never assume …" gives
    /// `assum`): what a reversal flips, without the reach's tail.
    pub negation_heads: BTreeSet<String>,
    /// Numbers that name which thing the text is about rather than a setting of it
    /// ("step 3", "worker 12", "release 4"), with the word before them: two texts with
    /// different labels are about different things.
    pub labels: BTreeSet<String>,
    /// What the text says was replaced, from "moved/switched/migrated from A to B",
    /// "replaced A with B", "no longer A": the normalized A.
    pub replaced: Vec<String>,
    /// The values that are code names (`snake_case`, `camelCase`, `Type.method`,
    /// `a::b`, `call()`), lower case: the symbols the text is about.
    pub names: BTreeSet<String>,
    /// The value the text opens with, if it opens with one ("`Frame` has callers …"):
    /// what the text is about, not a setting in it.
    pub opening: Option<String>,
}

impl Claim {
    /// Reads `text`'s claim.
    pub fn of(text: &str) -> Claim {
        let (values, labels) = values_and_labels(text);
        let normal = normalized(text);
        let tokens: Vec<&str> = normal.split(' ').filter(|t| !t.is_empty()).collect();
        let mut claim = Claim {
            values,
            labels,
            replaced: replaced_subjects(&tokens),
            names: code_names(text),
            ..Claim::default()
        };
        claim.opening = opening_value(text, &claim.values);
        let clause_ends = clause_ends(text, &tokens);
        let mut i = 0;
        while i < tokens.len() {
            if let Some(marker) = negation_at(&tokens, i) {
                let start = i + marker;
                let mut reach = 0;
                let mut j = start;
                while j < tokens.len() && reach < NEGATION_REACH && !clause_ends.contains(&j) {
                    let t = tokens[j];
                    if SCOPE_ENDS.contains(&t) || negation_at(&tokens, j).is_some() {
                        break;
                    }
                    if !STOP_WORDS.contains(&t) {
                        if reach == 0 {
                            claim.negation_heads.insert(stem(t));
                        }
                        claim.negated.insert(stem(t));
                        reach += 1;
                    }
                    j += 1;
                }
                i = start;
                continue;
            }
            if !STOP_WORDS.contains(&tokens[i]) {
                claim.words.insert(stem(tokens[i]));
            }
            i += 1;
        }
        claim.words.extend(claim.negated.iter().cloned());
        claim
    }
}

/// A word under the keyword index's Porter stemmer, so "commit" and "committing" agree.
fn stem(word: &str) -> String {
    engram_core::porter::stem(word)
}

/// The length of the negation marker starting at word `i`, if one does.
fn negation_at(tokens: &[&str], i: usize) -> Option<usize> {
    NEGATIONS
        .iter()
        .find(|marker| tokens.get(i..i + marker.len()) == Some(marker))
        .map(|marker| marker.len())
}

/// The word positions where a new clause starts (after `.`, `,`, `;`, `:` or a line break
/// in the original text), which a negation does not reach across.
fn clause_ends(text: &str, tokens: &[&str]) -> BTreeSet<usize> {
    let mut ends = BTreeSet::new();
    let mut index = 0;
    let mut in_word = false;
    let mut boundary = false;
    for c in text.chars() {
        if c.is_alphanumeric() {
            if !in_word {
                if boundary && index > 0 {
                    ends.insert(index);
                }
                boundary = false;
                in_word = true;
            }
        } else {
            if in_word {
                index += 1;
                in_word = false;
            }
            if matches!(c, '.' | ',' | ';' | ':' | '\n' | '!' | '?' | '(' | ')') {
                boundary = true;
            }
        }
    }
    ends.retain(|&e| e < tokens.len());
    ends
}

/// The subjects a text says were replaced: "from A to B", "replaced A with B",
/// "no longer A", "instead of A" (A up to two words, normalized).
fn replaced_subjects(tokens: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    let verbs = [
        "moved",
        "switched",
        "migrated",
        "changed",
        "upgraded",
        "downgraded",
        "went",
        "move",
        "switch",
        "migrate",
    ];
    for i in 0..tokens.len() {
        let take = |from: usize, until: &[&str]| {
            let words: Vec<&str> = tokens[from.min(tokens.len())..]
                .iter()
                .take_while(|t| !until.contains(t))
                .take(2)
                .copied()
                .collect();
            (!words.is_empty()).then(|| words.join(" "))
        };
        if verbs.contains(&tokens[i]) {
            if let Some(j) = (i + 1..tokens.len().min(i + 4)).find(|&j| tokens[j] == "from") {
                out.extend(take(j + 1, &["to", "with", "for"]));
            }
        }
        if tokens[i] == "replaced" || tokens[i] == "replace" {
            out.extend(take(i + 1, &["with", "by"]));
        }
        if tokens[i] == "no" && tokens.get(i + 1) == Some(&"longer") {
            out.extend(take(i + 2, &[]));
        }
        if tokens[i] == "instead" && tokens.get(i + 1) == Some(&"of") {
            out.extend(take(i + 2, &[]));
        }
    }
    out
}

/// Words after which a bare number is a setting ("is 30", "at most 5", "Node 20").
const SETTING_WORDS: &[&str] = &[
    "is", "=", "to", "of", "at", "than", "be", "are", "was", "under", "over", "max", "min",
    "maximum", "minimum", "limit", "least", "most", "default", "from", "version", "v", "node",
    "python", "java", "go", "ruby", "rust", "up", "by", "within", "every", "after", "before",
    "only", "exactly", "about", "around", "set", "uses", "use", "needs", "requires", "with",
];

/// Words after a number that make it a quantity ("30 s", "512 MB").
const UNITS: &[&str] = &[
    "time",
    "session",
    "sessions",
    "searches",
    "steps",
    "runs",
    "calls",
    "reads",
    "edits",
    "failures",
    "errors",
    "s",
    "ms",
    "us",
    "ns",
    "sec",
    "secs",
    "second",
    "seconds",
    "min",
    "mins",
    "minute",
    "minutes",
    "h",
    "hour",
    "hours",
    "day",
    "days",
    "week",
    "weeks",
    "kb",
    "mb",
    "gb",
    "tb",
    "b",
    "bytes",
    "px",
    "em",
    "rem",
    "pt",
    "%",
    "percent",
    "x",
    "times",
    "chars",
    "characters",
    "lines",
    "tokens",
    "retries",
    "attempts",
    "threads",
    "cores",
    "workers",
    "items",
];

/// The concrete values a text names: numbers, versions, code spans, and words that look
/// like code (paths, dotted or `::` names, snake_case, camelCase, `--flags`).
pub fn values(text: &str) -> BTreeSet<String> {
    values_and_labels(text).0
}

/// [`values`], and the labelled numbers ([`Claim::labels`]) apart: a bare integer is a
/// value after a setting word or before a unit, a label after any other word.
fn values_and_labels(text: &str) -> (BTreeSet<String>, BTreeSet<String>) {
    let words: Vec<String> = text
        .split(|c: char| c.is_whitespace() || c == '`')
        .map(|w| {
            w.trim_matches(|c: char| !c.is_alphanumeric() && c != '%' && c != '=')
                .to_lowercase()
        })
        .filter(|w| !w.is_empty())
        .collect();
    let mut labels = BTreeSet::new();
    let mut bare = BTreeSet::new();
    for (i, word) in words.iter().enumerate() {
        if !word.chars().all(|c| c.is_ascii_digit()) {
            continue;
        }
        let before = i.checked_sub(1).map(|j| words[j].as_str());
        let after = words.get(i + 1).map(String::as_str);
        let quantity = after.is_some_and(|a| UNITS.contains(&a));
        match before {
            Some(b)
                if !quantity
                    && !SETTING_WORDS.contains(&b)
                    && !b.chars().any(|c| c.is_ascii_digit()) =>
            {
                labels.insert(format!("{b} {word}"));
                bare.insert(word.clone());
            }
            _ => {}
        }
    }
    let mut out = values_only(text);
    for number in &bare {
        // A number that is a label somewhere is not compared as a value.
        out.remove(number);
    }
    (out, labels)
}

fn values_only(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut rest = text;
    while let Some(open) = rest.find('`') {
        let after = &rest[open + 1..];
        let Some(close) = after.find('`') else {
            break;
        };
        let span = after[..close].trim();
        // Code is compared as written, as `normalized` keeps it.
        if !span.is_empty() {
            out.insert(span.to_owned());
        }
        rest = &after[close + 1..];
    }
    for raw in text.split(|c: char| c.is_whitespace() || c == '`') {
        let word = raw.trim_matches(|c: char| {
            matches!(
                c,
                ',' | ';' | ':' | '!' | '?' | '(' | ')' | '[' | ']' | '{' | '}' | '"' | '\'' | '*'
            ) || (c == '.')
        });
        if looks_like_value(word) {
            out.insert(word.to_lowercase());
        }
    }
    out
}

fn looks_like_value(word: &str) -> bool {
    if word.is_empty() || !word.chars().any(|c| c.is_alphanumeric()) {
        return false;
    }
    let has_digit = word.chars().any(|c| c.is_ascii_digit());
    let inner = word.get(1..word.len().saturating_sub(1)).unwrap_or("");
    let code_punct = inner.contains(['_', '.', '/', '@', '='])
        || inner.contains("::")
        || word.starts_with("--")
        || (word.starts_with('-') && word.len() == 2);
    let camel = word
        .chars()
        .zip(word.chars().skip(1))
        .any(|(a, b)| a.is_lowercase() && b.is_uppercase());
    has_digit || code_punct || camel
}

/// The value `text` opens with (its first word, or its first code span), if that is one
/// of `values`.
fn opening_value(text: &str, values: &BTreeSet<String>) -> Option<String> {
    let text = text.trim_start_matches(|c: char| c.is_whitespace() || matches!(c, '-' | '*' | '>'));
    // A code span as written, a bare word in lower case: as `values` holds them.
    let first = match text.strip_prefix('`') {
        Some(rest) => rest.split('`').next().unwrap_or_default().trim().to_owned(),
        None => text
            .split_whitespace()
            .next()
            .unwrap_or_default()
            .trim_end_matches([',', ';', ':', '.', ')'])
            .to_lowercase(),
    };
    values.contains(&first).then_some(first)
}

/// The code names in `text`, lower case: words shaped like a symbol of a program — with
/// an inner `_`, `::` or a `.` between names, camelCase, or a call's `()` — and not a
/// number, version, path or flag.
pub fn code_names(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for raw in text.split(|c: char| c.is_whitespace() || c == '`' || c == ',' || c == ';') {
        let word = raw.trim_matches(|c: char| !(c.is_alphanumeric() || c == '_'));
        let call = raw.contains("()");
        let word = word.split("()").next().unwrap_or(word);
        let symbol_chars = word
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '.' | ':'));
        let starts_with_letter = word
            .chars()
            .next()
            .is_some_and(|c| c.is_alphabetic() || c == '_');
        if word.is_empty() || !symbol_chars || !starts_with_letter || word.contains('/') {
            continue;
        }
        let inner = word.get(1..word.len().saturating_sub(1)).unwrap_or("");
        let dotted = word
            .split('.')
            .filter(|p| !p.is_empty())
            .collect::<Vec<_>>();
        // `utils.py` is a file, not a symbol.
        let file = dotted.len() == 2
            && (1..=4).contains(&dotted[1].len())
            && dotted[1].chars().all(|c| c.is_ascii_lowercase());
        let camel = word
            .chars()
            .zip(word.chars().skip(1))
            .any(|(a, b)| a.is_lowercase() && b.is_uppercase());
        let named = inner.contains('_') || inner.contains("::") || (dotted.len() > 1 && !file);
        if call || camel || named {
            out.insert(word.to_lowercase());
        }
    }
    out
}

/// Share of the union that two sets have in common (1 for two empty sets).
pub fn jaccard<T: Ord>(a: &BTreeSet<T>, b: &BTreeSet<T>) -> f64 {
    let union = a.union(b).count();
    if union == 0 {
        return 1.0;
    }
    a.intersection(b).count() as f64 / union as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_names_are_symbols_not_numbers_versions_paths_or_files() {
        assert_eq!(
            code_names("Check the callers of FastFilesCompleter and try_argcomplete() first"),
            BTreeSet::from([
                "fastfilescompleter".to_owned(),
                "try_argcomplete".to_owned()
            ])
        );
        assert_eq!(
            code_names("`LogCaptureFixture.get_records` moved; see std::fs and main()"),
            BTreeSet::from([
                "logcapturefixture.get_records".to_owned(),
                "std::fs".to_owned(),
                "main".to_owned()
            ])
        );
        assert!(code_names(
            "Use pnpm 9.1.2, `--frozen-lockfile`, src/db.rs and utils.py; timeout 30s"
        )
        .is_empty());
    }

    #[test]
    fn normalizing_ignores_case_punctuation_and_wrapping() {
        assert_eq!(normalized("Use **pnpm**,\n  not npm."), "use pnpm not npm");
        assert_eq!(
            content_key("Use pnpm, not npm."),
            content_key("use pnpm not npm")
        );
        assert_ne!(
            content_key("use pnpm not npm"),
            content_key("use npm not pnpm")
        );
        assert_eq!(content_key("x").len(), 32);
        assert_ne!(
            content_key("`_suspend` has callers"),
            content_key("`suspend` has callers")
        );
        assert_ne!(
            content_key("`Function` has callers"),
            content_key("`function` has callers")
        );
        assert_eq!(
            content_key("USE `pnpm`"),
            content_key("use `pnpm`"),
            "case outside code is not compared"
        );
    }

    #[test]
    fn values_are_numbers_code_spans_and_code_like_words() {
        let v = values("Run `cargo nextest run` with --no-fail-fast; timeout is 30s in src/lib.rs");
        for expected in ["cargo nextest run", "--no-fail-fast", "30s", "src/lib.rs"] {
            assert!(v.contains(expected), "{expected} missing from {v:?}");
        }
        assert!(!v.contains("timeout"));
        assert!(values("parseConfig and snake_case").contains("parseconfig"));
    }

    #[test]
    fn numbers_that_name_a_thing_are_labels_not_values() {
        let c = Claim::of("release 4: the lock wait grew past the timeout");
        assert!(
            c.labels.contains("release 4") && !c.values.contains("4"),
            "{c:?}"
        );
        let c = Claim::of("The request timeout is 30 s, retried 3 times");
        assert!(c.values.contains("30") && c.values.contains("3"), "{c:?}");
        assert!(c.labels.is_empty(), "{c:?}");
    }

    #[test]
    fn negations_reach_to_the_end_of_their_clause() {
        let c = Claim::of("Use pnpm, not npm, for installs");
        assert_eq!(c.negated, BTreeSet::from(["npm".to_owned()]));
        let c = Claim::of("Never run the whole test suite");
        assert!(
            c.negated.contains("run") && c.negated.contains("whole"),
            "{c:?}"
        );
        let c = Claim::of("Don't use `unwrap` in library code");
        assert!(
            c.negated.contains("us") || c.negated.contains("use"),
            "{c:?}"
        );
        assert!(c.negated.contains("unwrap"), "{c:?}");
        assert!(Claim::of("Always run the whole test suite")
            .negated
            .is_empty());
    }

    #[test]
    fn announced_replacements_are_read() {
        assert_eq!(
            Claim::of("We moved from Jest to Vitest").replaced,
            vec!["jest".to_owned()]
        );
        assert_eq!(
            Claim::of("Replaced moment with date-fns").replaced,
            vec!["moment".to_owned()]
        );
        assert!(Claim::of("Use Vitest for tests").replaced.is_empty());
    }
}
