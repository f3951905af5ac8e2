//! Code names in a query: what the graph path looks up, what makes a query an
//! identifier query, and which tokens a long report keeps for the keyword path.
//!
//! A name here is something a project can define: a function, class, method, module or
//! file. Words a language reserves (`def`, `self`, `None`), numbers and addresses
//! (`0x7f9bd55e4d00`), command-line flags (`--collect-only`) and slashed prose
//! (`up/down`, `and/or`) look like code in a report but are never defined in it; each
//! one found would spend a place in [`MAX_IDENTIFIERS`] and send the graph path to
//! whatever happens to share its spelling.

use engram_core::query::is_stop_word;

use super::named_files::FILE_EXTENSIONS;

/// Most code names a query sends to the graph path.
pub const MAX_IDENTIFIERS: usize = 32;

/// Words that never name a definition: the reserved words and receivers of Python, and
/// those of TypeScript / JavaScript, Rust and Go that no indexed language uses as a name
/// either. Code pasted into a report is full of them. Words one language reserves but
/// another defines are names: `var` (xarray), `new` (every Rust type), `match`,
/// `struct` and `enum` (Python modules), `throw` and `catch` (generator and promise
/// methods). Case matters: `None` and `Self` are reserved, `none` is not. Kept sorted
/// (byte order) for the binary search.
#[rustfmt::skip]
const RESERVED_WORDS: &[&str] = &[
    "False", "None", "Self", "True", "and", "as", "assert", "async", "await", "break", "class",
    "cls", "const", "continue", "crate", "def", "del", "dyn", "elif", "else", "except",
    "extends", "extern", "finally", "fn", "for", "from", "global", "if", "impl", "implements",
    "import", "in", "instanceof", "is", "lambda", "let", "mut", "nil", "nonlocal", "not",
    "null", "or", "pass", "pub", "raise", "return", "self", "this", "try", "typeof",
    "undefined", "unsafe", "void", "while", "with", "yield",
];

/// Code names in `text`: words with an underscore or an inner capital, dotted names
/// (`caplog.clear`) and their parts, words in backticks, and file names
/// (`src/_pytest/logging.py` gives `logging`). Order of first occurrence, at most
/// [`MAX_IDENTIFIERS`]. Reserved words, names that start with a digit, hyphenated words
/// and slashed words that are not paths are left out: a slashed word is a path when its
/// last component is a project file (`src/db.rs`), it has at least three components, or
/// it is in backticks; `up/down` is prose.
///
/// ```
/// use engram_retrieval::analysis::identifiers;
/// assert_eq!(
///     identifiers("`caplog.clear()` breaks get_records, see logging.py"),
///     ["caplog.clear", "caplog", "clear", "get_records", "logging"]
/// );
/// assert_eq!(
///     identifiers("`--collect-only` needs a short flag, vote up/down\n```\ndef test_a(self):\n```"),
///     ["test_a"]
/// );
/// ```
pub fn identifiers(text: &str) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for (word, in_backticks) in words(text) {
        if word.contains('/') {
            if let Some(stem) = path_stem(word, in_backticks) {
                push_name(&mut names, stem);
            }
            continue;
        }
        if word.contains('-') {
            // A flag (`--collect-only`) or a compound word (`built-in`): no language
            // engram indexes allows a hyphen in a name.
            continue;
        }
        let parts: Vec<&str> = word.split('.').filter(|p| !p.is_empty()).collect();
        if parts.len() > 1 {
            if is_file_name(&parts) {
                push_name(&mut names, parts[0]);
                continue;
            }
            if parts.iter().all(|p| looks_like_name(p)) {
                let dotted = parts.join(".");
                if names.len() < MAX_IDENTIFIERS && !names.contains(&dotted) {
                    names.push(dotted);
                }
                for part in parts {
                    push_name(&mut names, part);
                }
            }
            continue;
        }
        if in_backticks || is_code_like(word) {
            push_name(&mut names, word);
        }
    }
    names
}

/// Whether `text` names code: a snake_case or camelCase word, or a path (see
/// [`path_stem`]). Such a query is an identifier query.
pub(crate) fn names_code(text: &str) -> bool {
    let cased = text
        .chars()
        .zip(text.chars().skip(1))
        .any(|(a, b)| (a.is_lowercase() && b.is_uppercase()) || (a == '_' && b.is_lowercase()));
    cased
        || words(text).any(|(word, in_backticks)| {
            word.contains('/') && path_stem(word, in_backticks).is_some()
        })
}

/// The words of `text` that could be names, paths or flags, each with whether Markdown
/// shows it as code (see [`super::markdown`]): a fenced block counts, but not the
/// language its opening fence names (`python` in a fence is a tag, not a module).
fn words(text: &str) -> impl Iterator<Item = (&str, bool)> {
    super::markdown::segments(text)
        .into_iter()
        .flat_map(|(segment, in_backticks)| {
            segment
                .split(|c: char| !(c.is_alphanumeric() || matches!(c, '_' | '.' | '/' | '-')))
                .map(|word| word.trim_matches(|c| matches!(c, '.' | '/' | '-')))
                .filter(|word| !word.is_empty())
                .map(move |word| (word, in_backticks))
        })
}

/// The file stem of a slashed word that is a path: one whose last component is a
/// project file (`src/db.rs`), one of at least three components (`xarray/core/merge`),
/// or any slashed word in backticks. Two plain words joined by a slash (`up/down`,
/// `read/write`) are prose.
fn path_stem(word: &str, in_backticks: bool) -> Option<&str> {
    let components: Vec<&str> = word.split('/').filter(|c| !c.is_empty()).collect();
    let last = components.last()?;
    let parts: Vec<&str> = last.split('.').collect();
    let is_path = in_backticks || components.len() >= 3 || is_file_name(&parts);
    is_path.then_some(parts[0])
}

/// Adds a plain (undotted) name once: at least three characters, starting with a letter
/// or underscore, neither a stop word nor a reserved word.
fn push_name(names: &mut Vec<String>, name: &str) {
    let name = name.trim_matches('_');
    if name.chars().count() >= 3
        && looks_like_name(name)
        && RESERVED_WORDS.binary_search(&name).is_err()
        && !is_stop_word(&name.to_lowercase())
        && names.len() < MAX_IDENTIFIERS
        && !names.iter().any(|n| n == name)
    {
        names.push(name.to_owned());
    }
}

/// `name.ext` with an extension of a project file (`conftest.py`, `tox.ini`): its stem
/// names a module, its extension nothing.
fn is_file_name(parts: &[&str]) -> bool {
    parts.len() == 2 && FILE_EXTENSIONS.contains(&parts[1])
}

/// A part of a dotted name: starts with a letter or underscore, at least 2 characters.
fn looks_like_name(part: &str) -> bool {
    part.chars().count() >= 2
        && part
            .chars()
            .next()
            .is_some_and(|c| c.is_alphabetic() || c == '_')
        && part.chars().all(|c| c.is_alphanumeric() || c == '_')
}

/// snake_case or camelCase / PascalCase with an inner capital.
fn is_code_like(word: &str) -> bool {
    if !looks_like_name(word) {
        return false;
    }
    let chars: Vec<char> = word.chars().collect();
    let snake = word.trim_matches('_').contains('_');
    let inner_capital = chars
        .windows(2)
        .any(|w| w[0].is_lowercase() && w[1].is_uppercase());
    snake || inner_capital
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_one_language_reserves_and_another_defines_stay() {
        assert_eq!(
            identifiers("`xr.polyval` and `var` differ; `Foo::new` and `re.match`"),
            [
                "xr.polyval",
                "polyval",
                "var",
                "Foo",
                "new",
                "re.match",
                "match"
            ]
        );
    }

    #[test]
    fn reserved_words_are_sorted_for_the_binary_search() {
        assert!(RESERVED_WORDS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn identifiers_skip_prose_and_numbers() {
        assert_eq!(
            identifiers("the version is 1.2.3, e.g. now"),
            Vec::<String>::new()
        );
        assert_eq!(
            identifiers("LogCaptureFixture handles it"),
            ["LogCaptureFixture"]
        );
        assert_eq!(identifiers("see `monkeypatch`"), ["monkeypatch"]);
        assert_eq!(identifiers("in src/_pytest/python_api.py"), ["python_api"]);
        // A file name gives its stem, whatever kind of project file it is.
        assert_eq!(
            identifiers("set in tox.ini and setup.cfg, not conftest.py"),
            ["tox", "setup", "conftest"]
        );
        assert_eq!(identifiers("xr.Dataset"), ["xr.Dataset", "Dataset"]);
    }

    #[test]
    fn pasted_code_gives_its_names_not_its_language() {
        let report = "Fails:\n```python\nimport pytest\n\nclass Foo(object):\n    def test_one(self):\n        \
                      assert None is not True\n        return lambda: 0x7f9bd55e4d00\n```";
        assert_eq!(identifiers(report), ["pytest", "Foo", "object", "test_one"]);
    }

    #[test]
    fn an_unmatched_backtick_leaves_the_prose_after_it_prose() {
        // SWE-bench pytest-8906: the quoted error message lost its closing backtick.
        // Counted from the start, that backtick would make "proposed solution" names.
        let report = ">To skip a module use `pytestmark = pytest.mark.skip.\n\n\
                      The proposed solution `pytestmark` does not work in my case.";
        assert_eq!(
            identifiers(report),
            ["pytest.mark.skip", "pytest", "mark", "skip", "pytestmark"]
        );
    }

    #[test]
    fn flags_and_slashed_prose_are_not_names() {
        assert_eq!(
            identifiers("`pytest --collect-only` is long; thumbs up/down, and/or `-k`"),
            ["pytest"]
        );
        // In backticks, or with a file or three components, a slashed word is a path.
        assert_eq!(
            identifiers("`core/merge` and xarray/core/dataset and src/users.rs, not read/write"),
            ["merge", "dataset", "users"]
        );
        // A hyphen inside a directory does not hide the file a path names.
        assert_eq!(identifiers("see my-pkg/utils.py"), ["utils"]);
    }

    #[test]
    fn a_query_names_code_by_its_case_or_a_path() {
        assert!(names_code("max_retries"));
        assert!(names_code("getUser fails"));
        assert!(names_code("src/db.rs lock"));
        assert!(names_code("why is `core/merge` slow"));
        assert!(!names_code("thumbs up/down on a shortcut"));
        assert!(!names_code("read and/or write a file"));
        assert!(!names_code("what breaks login"));
    }
}
