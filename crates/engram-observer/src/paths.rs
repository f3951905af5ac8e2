//! File paths as the project knows them: relative to the project root, no `./` or `..`.

use serde::{Deserialize, Serialize};

/// Turns the paths agents type into project-relative paths.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PathNormalizer {
    /// Absolute roots of the project (the working directory of the session, a container
    /// mount such as `/testbed`); longest first.
    roots: Vec<String>,
}

impl PathNormalizer {
    /// A normalizer for a project checked out at `roots`.
    pub fn new<I: IntoIterator<Item = S>, S: Into<String>>(roots: I) -> Self {
        let mut roots: Vec<String> = roots
            .into_iter()
            .map(|r| r.into().trim_end_matches('/').to_owned())
            .filter(|r| !r.is_empty())
            .collect();
        roots.sort_by_key(|r| std::cmp::Reverse(r.len()));
        PathNormalizer { roots }
    }

    /// `path` relative to the project, or `None` when it is not a project file (system
    /// folders, temporary files, globs, the project root itself).
    pub fn normalize(&self, path: &str) -> Option<String> {
        let path = path.trim();
        if path.is_empty()
            || path.contains([
                '*', '?', '{', '}', '$', '`', '\n', ' ', '\'', '"', '(', ')', ':', ',', ';', '=',
                '<', '>', '|', '&', '\\',
            ])
        {
            return None;
        }
        let mut relative = path;
        if path.starts_with('/') {
            relative = self.roots.iter().find_map(|root| {
                path.strip_prefix(root.as_str())
                    .filter(|rest| rest.is_empty() || rest.starts_with('/'))
                    .map(|rest| rest.trim_start_matches('/'))
            })?;
        } else if path.starts_with('~') {
            return None;
        }
        let mut parts: Vec<&str> = Vec::new();
        for part in relative.split('/') {
            match part {
                "" | "." => {}
                ".." => {
                    parts.pop()?;
                }
                p => parts.push(p),
            }
        }
        if parts.is_empty() {
            return None;
        }
        Some(parts.join("/"))
    }
}

impl PathNormalizer {
    /// `text` with every path under a project root written from the root
    /// (`/testbed/src/a.py` → `src/a.py`): memories quote what agents and tools printed, and
    /// an absolute path names one machine's checkout. A root counts only where a path
    /// starts (`/x/testbed/a` is not under `/testbed`).
    pub fn relative_text(&self, text: &str) -> String {
        let mut out = text.to_owned();
        for root in &self.roots {
            let prefix = format!("{root}/");
            let mut rewritten = String::with_capacity(out.len());
            let mut rest = out.as_str();
            while let Some(at) = rest.find(&prefix) {
                let starts_path = rest[..at].chars().next_back().is_none_or(|c| {
                    !(c.is_alphanumeric() || matches!(c, '/' | '.' | '_' | '-' | '~'))
                });
                rewritten.push_str(&rest[..at]);
                if !starts_path {
                    rewritten.push_str(&prefix);
                }
                rest = &rest[at + prefix.len()..];
            }
            rewritten.push_str(rest);
            out = rewritten;
        }
        out
    }
}

/// Whether a project path names a file rather than a folder, judged by its last segment.
pub fn looks_like_file(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    match name.rfind('.') {
        Some(0) | None => matches!(name, "Makefile" | "Dockerfile" | "Gemfile" | "Rakefile"),
        Some(dot) => dot + 1 < name.len(),
    }
}

/// Whether a project path is configuration (its edits tend to require edits elsewhere).
pub fn is_config(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    matches!(
        name,
        "package.json"
            | "tsconfig.json"
            | "Cargo.toml"
            | "pyproject.toml"
            | "setup.cfg"
            | "setup.py"
            | "tox.ini"
            | "pytest.ini"
            | "go.mod"
            | "mix.exs"
            | "Makefile"
            | "Dockerfile"
            | "docker-compose.yml"
            | "Gemfile"
            | "pom.xml"
            | "build.gradle"
            | "webpack.config.js"
            | "vite.config.ts"
            | "next.config.js"
            | "wrangler.toml"
    ) || name.starts_with(".env")
        || name.ends_with(".config.js")
        || name.ends_with(".config.ts")
        || path.starts_with("config/")
        || path.contains("/config/")
}

/// Folders whose files are produced by builds, installs, test runs and tools, never the
/// project's own source: a memory citing them points a later session at output.
const OUTPUT_FOLDERS: &[&str] = &[
    "build",
    "dist",
    "target",
    "node_modules",
    "__pycache__",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    ".tox",
    ".nox",
    ".venv",
    "venv",
    ".eggs",
    "htmlcov",
    ".git",
    ".engram",
    ".next",
    "_build",
    "deps",
    "coverage",
    ".cache",
    "tmp",
    "temp",
];

/// Whether a project path is scratch rather than the project's own file: an editor backup
/// or patch leftover (`x.py.bak`, `x.py~`, `x.orig`, `.x.swp`), compiled output (`.pyc`),
/// or anything under a build, install, cache or temporary folder (`build/lib/…`,
/// `__pycache__/…`, `Temp/…`, `x.egg-info/…`). Such files are evidence of what a session
/// did, never what a memory should send a later session to.
pub fn is_scratch_path(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    let lower = name.to_ascii_lowercase();
    let backup = lower.ends_with('~')
        || [
            ".bak", ".orig", ".rej", ".swp", ".swo", ".tmp", ".old", ".pyc", ".pyo", ".backup",
        ]
        .iter()
        .any(|suffix| lower.ends_with(suffix))
        || lower.contains(".bak.")
        || (lower.starts_with(".#"));
    let folders = path.rsplit_once('/').map_or("", |(dir, _)| dir);
    backup
        || folders.split('/').any(|folder| {
            let folder = folder.to_ascii_lowercase();
            OUTPUT_FOLDERS.contains(&folder.as_str()) || folder.ends_with(".egg-info")
        })
}

/// The module a file belongs to: its first two folders (`src/auth/jwt.ts` → `src/auth`), or
/// the root module `.` for top-level files.
pub fn module_of(path: &str) -> &str {
    let mut cut = None;
    for (i, _) in path.match_indices('/').take(2) {
        cut = Some(i);
    }
    match cut {
        Some(i) => &path[..i],
        None => ".",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalizes_against_roots() {
        let n = PathNormalizer::new(["/testbed", "/home/USER/projects/spotter/"]);
        assert_eq!(
            n.normalize("/testbed/requests/models.py").as_deref(),
            Some("requests/models.py")
        );
        assert_eq!(n.normalize("./a/../b/c.py").as_deref(), Some("b/c.py"));
        assert_eq!(
            n.normalize("/home/USER/projects/spotter/lib/x.ex")
                .as_deref(),
            Some("lib/x.ex")
        );
        assert_eq!(n.normalize("/testbedx/a.py"), None);
        assert_eq!(n.normalize("/tmp/a.py"), None);
        assert_eq!(n.normalize("../outside.py"), None);
        assert_eq!(n.normalize("src/*.py"), None);
        assert_eq!(n.normalize("/testbed"), None);
    }

    #[test]
    fn text_names_project_files_from_the_root() {
        let n = PathNormalizer::new(["/testbed", "/home/USER/projects/spotter/"]);
        assert_eq!(
            n.relative_text(
                "File \"/testbed/src/a.py\", line 3; see /home/USER/projects/spotter/lib/x.ex"
            ),
            "File \"src/a.py\", line 3; see lib/x.ex"
        );
        assert_eq!(
            n.relative_text("/x/testbed/a.py and /tmp/b"),
            "/x/testbed/a.py and /tmp/b"
        );
    }

    #[test]
    fn classifies_paths() {
        assert!(looks_like_file("requests/models.py"));
        assert!(!looks_like_file("requests/"));
        assert!(!looks_like_file(".github"));
        assert!(
            is_config("setup.cfg") && is_config("app/config/dev.exs") && !is_config("src/a.py")
        );
        assert_eq!(module_of("src/auth/jwt.ts"), "src/auth");
        for scratch in [
            "utils.py.bak",
            "src/a.py~",
            "build/lib/requests/__init__.py",
            "Temp/MyPackage/MyModule.py",
            "src/__pycache__/a.cpython-311.pyc",
            "requests.egg-info/SOURCES.txt",
            "lib/x.py.orig",
        ] {
            assert!(is_scratch_path(scratch), "{scratch}");
        }
        for project in [
            "src/build.rs",
            "requests/models.py",
            "lib/temp_utils.py",
            "tests/test_a.py",
        ] {
            assert!(!is_scratch_path(project), "{project}");
        }
        assert_eq!(module_of("src/a/b/c.ts"), "src/a");
        assert_eq!(module_of("setup.py"), ".");
        assert_eq!(module_of("lib/x.ex"), "lib");
    }
}
