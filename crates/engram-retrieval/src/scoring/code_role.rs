//! What part a code chunk plays in its project: implementation, test or example.
//!
//! A bug report, a question or a plan names behaviour; the code that implements it is what
//! the agent will read and change. Tests restate that behaviour in the same words — they
//! call the same functions and paste the same failures — so by text alone they crowd out
//! the implementation, while the files a fix changes are almost never tests
//! (docs/retrieval.md has the measurements). Example code (documentation snippets, sample programs, benchmarks) does the
//! same: it calls the API the way a report's reproduction does, and pylint's documentation
//! holds a `bad.py` and a `good.py` named after each message a report quotes. Chunks of
//! test and example files therefore count [`TEST_CODE_WEIGHT`] and
//! [`EXAMPLE_CODE_WEIGHT`] in the final score; tests count fully in the validate phase,
//! where they are the point.

use engram_core::{Memory, Phase};

/// The multiplier of a test file's code chunk outside the validate phase.
pub const TEST_CODE_WEIGHT: f64 = 0.5;

/// The multiplier of an example file's code chunk, in every phase.
pub const EXAMPLE_CODE_WEIGHT: f64 = 0.5;

/// Directories whose files are tests, in the layouts of Python (`tests`, pytest's own
/// `testing`), JavaScript (`__tests__`), Ruby and JS specs, and Rust integration tests.
const TEST_DIRECTORIES: [&str; 6] = ["test", "tests", "testing", "__tests__", "spec", "specs"];

/// Directories whose files show the project in use rather than implement it:
/// documentation, sample programs and benchmarks (Rust's `examples` and `benches`,
/// airspeed velocity's `asv_bench`).
const EXAMPLE_DIRECTORIES: [&str; 8] = [
    "doc",
    "docs",
    "example",
    "examples",
    "bench",
    "benches",
    "benchmarks",
    "asv_bench",
];

/// The part a file's code plays in its project.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CodeRole {
    /// The code an agent reads and changes.
    Implementation,
    /// Tests ([`is_test_path`]).
    Test,
    /// Documentation snippets, sample programs and benchmarks: files under `doc`, `docs`,
    /// `example(s)`, `bench(es)`, `benchmarks` or `asv_bench`.
    Example,
}

/// The role of the file at `path`, by its directories and name. A test under an example
/// directory (`docs/tests/test_a.py`) is a test.
///
/// ```
/// use engram_retrieval::scoring::code_role::{code_role, CodeRole};
/// assert_eq!(code_role("xarray/core/merge.py"), CodeRole::Implementation);
/// assert_eq!(code_role("xarray/tests/test_merge.py"), CodeRole::Test);
/// assert_eq!(code_role("doc/data/messages/u/unused-import/bad.py"), CodeRole::Example);
/// assert_eq!(code_role("asv_bench/benchmarks/rolling.py"), CodeRole::Example);
/// ```
pub fn code_role(path: &str) -> CodeRole {
    if is_test_path(path) {
        CodeRole::Test
    } else if split_path(path)
        .is_some_and(|(mut dirs, _)| dirs.any(|dir| EXAMPLE_DIRECTORIES.contains(&dir)))
    {
        CodeRole::Example
    } else {
        CodeRole::Implementation
    }
}

/// `path`'s directories (either separator, empty parts skipped) and its file name; `None`
/// for an empty path.
fn split_path(path: &str) -> Option<(impl Iterator<Item = &str>, &str)> {
    let mut parts = path.split(['/', '\\']).filter(|p| !p.is_empty());
    let name = parts.next_back()?;
    Some((parts, name))
}

/// Whether `path` is a test file by the conventions of the languages engram indexes:
/// a file under a test directory, `test_*.py`, `*_test.py`, `conftest.py`, `*_test.go`,
/// `*.test.*` and `*.spec.*` (JavaScript, TypeScript).
///
/// ```
/// use engram_retrieval::scoring::code_role::is_test_path;
/// assert!(is_test_path("xarray/tests/test_computation.py"));
/// assert!(is_test_path("testing/logging/test_reporting.py"));
/// assert!(is_test_path("src/parser_test.go"));
/// assert!(is_test_path("web/app.spec.tsx"));
/// assert!(!is_test_path("src/_pytest/logging.py"));
/// assert!(!is_test_path("src/contest.py"));
/// ```
pub fn is_test_path(path: &str) -> bool {
    let Some((mut dirs, name)) = split_path(path) else {
        return false;
    };
    if dirs.any(|dir| TEST_DIRECTORIES.contains(&dir)) {
        return true;
    }
    let stem = name.rsplit_once('.').map_or(name, |(stem, _)| stem);
    (name.ends_with(".py") && (stem.starts_with("test_") || stem.ends_with("_test")))
        || name == "conftest.py"
        || name.ends_with("_test.go")
        || stem.ends_with(".test")
        || stem.ends_with(".spec")
}

/// The role multiplier of `memory` in `phase`: [`TEST_CODE_WEIGHT`] for a code chunk of a
/// test file outside the validate phase, [`EXAMPLE_CODE_WEIGHT`] for a code chunk of an
/// example file, 1 otherwise (memories that are not code keep their weight whatever files
/// they name: a gotcha about a flaky test is not test code).
pub fn role_weight(phase: Option<Phase>, memory: &Memory) -> f64 {
    let role = match (&memory.chunk, memory.related_files.first()) {
        (Some(_), Some(file)) => code_role(file),
        _ => CodeRole::Implementation,
    };
    match role {
        CodeRole::Test if phase != Some(Phase::Validate) => TEST_CODE_WEIGHT,
        CodeRole::Example => EXAMPLE_CODE_WEIGHT,
        CodeRole::Test | CodeRole::Implementation => 1.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::candidate::test_support::fake_memory;
    use engram_core::ChunkMeta;

    fn chunk_of(path: &str) -> Memory {
        let mut m = fake_memory("a", "def test_x(): assert parse('') == []");
        m.related_files = vec![path.into()];
        m.chunk = Some(ChunkMeta {
            chunk_type: "function".into(),
            start_line: 1,
            end_line: 1,
            context_prefix: None,
        });
        m
    }

    #[test]
    fn test_code_counts_half_except_when_validating() {
        let test = chunk_of("tests/test_parse.py");
        assert_eq!(role_weight(None, &test), TEST_CODE_WEIGHT);
        assert_eq!(role_weight(Some(Phase::Implement), &test), TEST_CODE_WEIGHT);
        assert_eq!(role_weight(Some(Phase::Validate), &test), 1.0);
        assert_eq!(role_weight(None, &chunk_of("src/parse.py")), 1.0);
    }

    #[test]
    fn example_code_counts_half_in_every_phase() {
        let example = chunk_of("docs/examples/parse_config.py");
        assert_eq!(role_weight(None, &example), EXAMPLE_CODE_WEIGHT);
        assert_eq!(
            role_weight(Some(Phase::Validate), &example),
            EXAMPLE_CODE_WEIGHT
        );
    }

    #[test]
    fn roles_by_directory() {
        use CodeRole::{Example, Implementation, Test};
        for (path, role) in [
            ("examples/a.rs", Example),
            ("benches/search.rs", Example),
            ("bench/bench.py", Example),
            ("doc/en/conf.py", Example),
            ("docs/tests/test_a.py", Test),
            ("examples/a_test.go", Test),
            ("src/docs.rs", Implementation),
            ("src/examples.py", Implementation),
            ("pkg/benchmark.py", Implementation),
            ("docstring/a.py", Implementation),
        ] {
            assert_eq!(code_role(path), role, "{path}");
        }
    }

    #[test]
    fn memories_that_are_not_code_keep_their_weight() {
        let mut gotcha = chunk_of("tests/test_parse.py");
        gotcha.chunk = None;
        assert_eq!(role_weight(None, &gotcha), 1.0);
    }

    #[test]
    fn test_paths_by_convention() {
        for path in [
            "tests/unit/a.rs",
            "pkg/__tests__/a.js",
            "spec/models/user_spec.rb",
            "conftest.py",
            "a/b/test_c.py",
            "a/b/c_test.py",
            "C:\\repo\\tests\\a.py",
            "src/ui/button.test.ts",
        ] {
            assert!(is_test_path(path), "{path}");
        }
        for path in [
            "",
            "src/testament.py",
            "src/latest.py",
            "docs/testing.md",
            "src/attest/mod.rs",
            "protest.go",
        ] {
            assert!(!is_test_path(path), "{path}");
        }
    }
}
