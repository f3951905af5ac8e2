//! Files a query names: paths in a traceback (`File "/venv/lib/python3.9/site-packages/
//! pylint/lint/run.py", line 12`), links to a repository (`…/blob/main/xarray/core/merge.py
//! #L504`), or a plain `src/auth/session.ts`.
//!
//! Where the path starts differs from where the project's files start (a virtualenv, a
//! clone under a home directory, a link's `blob/<branch>`), so each named path gives its
//! suffixes, and the storage keeps whichever is a file of the project: an exact match per
//! suffix is an index seek, where matching the ends of stored paths would scan them all.

/// Most path suffixes a query gives (a traceback of many frames stops here).
pub const MAX_NAMED_PATHS: usize = 48;
/// Most trailing components of one path that are tried: deeper prefixes are the machine's
/// (`/home/me/.venv/lib/python3.11/site-packages`), not the project's.
pub const MAX_PATH_DEPTH: usize = 6;

/// Extensions that make a word without a directory a file name (`conftest.py`), rather
/// than a dotted name (`xr.Dataset`) or a host (`github.com`).
pub(crate) const FILE_EXTENSIONS: &[&str] = &[
    "py", "pyi", "rs", "ts", "tsx", "js", "jsx", "mjs", "cjs", "go", "java", "kt", "rb", "c", "h",
    "cc", "cpp", "hpp", "cs", "swift", "php", "md", "rst", "toml", "json", "yaml", "yml", "cfg",
    "ini", "txt", "ex", "exs",
];

/// The path suffixes of the files `text` names, `/`-separated, longest of each path first,
/// in order of first mention, at most [`MAX_NAMED_PATHS`].
///
/// ```
/// use engram_retrieval::analysis::named_files::named_file_paths;
/// assert_eq!(
///     named_file_paths("see https://github.com/o/r/blob/main/src/app/merge.py#L504"),
///     ["r/blob/main/src/app/merge.py", "blob/main/src/app/merge.py", "main/src/app/merge.py",
///      "src/app/merge.py", "app/merge.py", "merge.py"]
/// );
/// assert_eq!(named_file_paths("conftest.py breaks, not xr.Dataset"), ["conftest.py"]);
/// ```
pub fn named_file_paths(text: &str) -> Vec<String> {
    let mut paths: Vec<String> = Vec::new();
    for word in text.split(|c: char| {
        c.is_whitespace()
            || matches!(
                c,
                '"' | '\'' | '`' | '(' | ')' | '[' | ']' | '<' | '>' | ',' | ';' | '|' | '*'
            )
    }) {
        let Some(parts) = file_path_parts(word) else {
            continue;
        };
        let deepest = parts.len().saturating_sub(MAX_PATH_DEPTH);
        for start in deepest..parts.len() {
            if paths.len() >= MAX_NAMED_PATHS {
                return paths;
            }
            let suffix = parts[start..].join("/");
            if !paths.contains(&suffix) {
                paths.push(suffix);
            }
        }
    }
    paths
}

/// The components of `word` if it is a file path: its last component has an extension,
/// and it either has a directory or a known source extension. A link's `#fragment` or
/// `?query`, a trailing `:line[:column]` and sentence punctuation are cut first; a scheme
/// (`https:`) or a drive (`C:`) is not a component.
fn file_path_parts(word: &str) -> Option<Vec<&str>> {
    let mut word = word.split(['#', '?']).next()?.trim_end_matches(['.', ':']);
    for _ in 0..2 {
        if let Some((head, tail)) = word.rsplit_once(':') {
            if !tail.is_empty() && tail.chars().all(|c| c.is_ascii_digit()) {
                word = head;
            }
        }
    }
    let parts: Vec<&str> = word
        .split(['/', '\\'])
        .filter(|p| !p.is_empty() && *p != "." && *p != ".." && !p.ends_with(':'))
        .collect();
    let name = *parts.last()?;
    let (stem, extension) = name.rsplit_once('.')?;
    let extension_ok = !extension.is_empty()
        && extension.len() <= 8
        && extension.chars().all(|c| c.is_ascii_alphanumeric());
    let stem_ok = !stem.is_empty()
        && stem
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '+' | '@'));
    let no_colons = parts.iter().all(|p| !p.contains(':'));
    let known = FILE_EXTENSIONS.contains(&extension);
    (extension_ok && stem_ok && no_colons && (parts.len() > 1 || known)).then_some(parts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_traceback_frame_gives_the_suffixes_of_its_last_components() {
        let frame =
            r#"  File "/home/me/.venv/lib/python3.9/site-packages/pylint/lint/run.py", line 12"#;
        assert_eq!(
            named_file_paths(frame),
            [
                "lib/python3.9/site-packages/pylint/lint/run.py",
                "python3.9/site-packages/pylint/lint/run.py",
                "site-packages/pylint/lint/run.py",
                "pylint/lint/run.py",
                "lint/run.py",
                "run.py",
            ]
        );
    }

    #[test]
    fn line_numbers_punctuation_and_drives_are_cut() {
        assert_eq!(named_file_paths("at src/a.rs:12:5."), ["src/a.rs", "a.rs"]);
        assert_eq!(
            named_file_paths(r"C:\repo\pkg\mod.py:3"),
            ["repo/pkg/mod.py", "pkg/mod.py", "mod.py"]
        );
        assert_eq!(
            named_file_paths("data/model.h5 loads"),
            ["data/model.h5", "model.h5"]
        );
        assert_eq!(named_file_paths("edit setup.cfg."), ["setup.cfg"]);
    }

    #[test]
    fn names_that_are_not_files_give_nothing() {
        for text in [
            "xr.Dataset.merge(other)",
            "see github.com and 3.14 or v1.2.3",
            "http://example.com/blog/minimal-bug-reports",
            "a/b/ and ./ and ..",
            "",
        ] {
            assert!(named_file_paths(text).is_empty(), "{text}");
        }
    }

    #[test]
    fn a_long_traceback_stops_at_the_cap() {
        let frames: String = (0..40)
            .map(|i| format!("File \"/x/pkg{i}/mod{i}.py\", line 1\n"))
            .collect();
        let paths = named_file_paths(&frames);
        assert_eq!(paths.len(), MAX_NAMED_PATHS);
        assert_eq!(paths[..3], ["x/pkg0/mod0.py", "pkg0/mod0.py", "mod0.py"]);
    }
}
