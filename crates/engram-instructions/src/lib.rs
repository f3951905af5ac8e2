//! The instruction files people keep for their agents, read into typed rules, as pure
//! functions: no file system, no clock. The host reads the files (and follows `@path`
//! imports with [`resolve_import`]); engram's engine stores the rules as memories and,
//! on a re-import, [`reconcile`]s the new version with what it imported before.
//!
//! Formats: `CLAUDE.md` (nested too), `AGENTS.md`, `GEMINI.md`, `.cursorrules`,
//! `.cursor/rules/*.mdc`, `.windsurfrules`, `.windsurf/rules/*.md`,
//! `.github/copilot-instructions.md` (and `.github/instructions/*.instructions.md`),
//! Claude Code's `MEMORY.md`, and any markdown file one of them imports.

mod blocks;
mod classify;
mod format;
mod front_matter;
mod mentions;
pub mod reconcile;
mod rules;
pub mod section;

pub use format::Format;
pub use front_matter::FrontMatter;
pub use mentions::resolve_import;
pub use reconcile::{reconcile, Known, Outcome, Reconciled};
pub use rules::{Rule, MAX_RULE_BYTES};

/// The largest instruction file read: real ones are a few kilobytes, and a larger file
/// is not a set of rules a person keeps.
pub const MAX_FILE_BYTES: usize = 1024 * 1024;

/// Why a file could not be read as instructions. Nothing is imported from it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImportError {
    /// The file is larger than [`MAX_FILE_BYTES`].
    TooLarge {
        /// Its size.
        bytes: usize,
    },
    /// The file is not text: it holds a NUL byte or is not UTF-8.
    Binary {
        /// The offset of the first byte that is not text.
        offset: usize,
    },
    /// The file's structure is broken where it matters (an unclosed front matter).
    Malformed {
        /// The line, 1-based.
        line: usize,
        /// What is wrong.
        problem: String,
    },
    /// The path is not an instruction file engram reads.
    UnknownFormat {
        /// The path.
        path: String,
    },
}

impl std::fmt::Display for ImportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ImportError::TooLarge { bytes } => write!(
                f,
                "is {bytes} bytes; instruction files are read up to {MAX_FILE_BYTES}"
            ),
            ImportError::Binary { offset } => {
                write!(f, "is not text (binary data at byte {offset})")
            }
            ImportError::Malformed { line, problem } => write!(f, "line {line}: {problem}"),
            ImportError::UnknownFormat { path } => write!(
                f,
                "{path} is not an instruction file engram reads (CLAUDE.md, AGENTS.md, GEMINI.md, .cursorrules, .cursor/rules/*.mdc, .windsurfrules, .windsurf/rules/*.md, .github/copilot-instructions.md, MEMORY.md or markdown)"
            ),
        }
    }
}

impl std::error::Error for ImportError {}

/// One instruction file, read.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Instructions {
    /// Its path from the project root.
    pub path: String,
    /// Its format.
    pub format: Format,
    /// Its front matter, if it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub front_matter: Option<FrontMatter>,
    /// Its rules, in file order.
    pub rules: Vec<Rule>,
    /// The files it imports (`@path`), as written, with the line of each.
    pub imports: Vec<Import>,
    /// The folder it applies to when it is nested (`apps/webapp` for
    /// `apps/webapp/CLAUDE.md`); empty at the root.
    pub folder: String,
}

/// An `@path` import.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Import {
    /// As written.
    pub target: String,
    /// From the project root; `None` when it points outside the project.
    pub resolved: Option<String>,
    /// The line it is on.
    pub line: usize,
}

/// Reads the instruction file at `path` (from the project root, `/`-separated) with
/// contents `bytes`.
pub fn parse(path: &str, bytes: &[u8]) -> Result<Instructions, ImportError> {
    let format = Format::of_path(path).ok_or_else(|| ImportError::UnknownFormat {
        path: path.to_owned(),
    })?;
    if bytes.len() > MAX_FILE_BYTES {
        return Err(ImportError::TooLarge { bytes: bytes.len() });
    }
    if let Some(offset) = bytes.iter().position(|b| *b == 0) {
        return Err(ImportError::Binary { offset });
    }
    let text = std::str::from_utf8(bytes).map_err(|e| ImportError::Binary {
        offset: e.valid_up_to(),
    })?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    // The section engram wrote is its own words, not the person's rules.
    let text = section::without_section(text).map_err(|e| ImportError::Malformed {
        line: 1,
        problem: e.to_string(),
    })?;
    let text = text.as_ref();
    let (front_matter, body_start) = front_matter::split(text)?;
    let lines: Vec<&str> = text.lines().skip(body_start).collect();
    let own_folder = path.rsplit_once('/').map_or("", |(folder, _)| folder);
    let folder = instruction_folder(format, own_folder);
    let blocks = blocks::read(&lines, body_start + 1);
    let read = rules::rules_of(&blocks, &folder);
    // A rule folder's imports are from the project it belongs to (`@.github/…` in
    // `.cursor/rules/review.mdc`); other files import relative to their own folder.
    let base = if format.has_front_matter() {
        folder.as_str()
    } else {
        own_folder
    };
    let imports = read
        .imports
        .into_iter()
        .map(|(target, line)| Import {
            resolved: mentions::resolve_in(base, &target),
            target,
            line,
        })
        .collect();
    Ok(Instructions {
        path: path.to_owned(),
        format,
        front_matter,
        rules: read.rules,
        imports,
        folder,
    })
}

/// The folder a file's rules apply to: a nested `CLAUDE.md`'s own folder; for rule
/// folders (`.cursor/rules/…`, `.github/…`), the folder that holds them.
fn instruction_folder(format: Format, folder: &str) -> String {
    let marker = match format {
        Format::CursorRule => Some(".cursor/rules"),
        Format::WindsurfRule => Some(".windsurf/rules"),
        Format::CopilotInstructions => Some(".github"),
        _ => None,
    };
    let owner = match marker {
        Some(marker) => folder
            .find(marker)
            .map_or(folder, |at| folder[..at].trim_end_matches('/')),
        None => folder,
    };
    owner.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_files_get_typed_errors() {
        assert_eq!(
            parse("src/main.rs", b"fn main() {}"),
            Err(ImportError::UnknownFormat {
                path: "src/main.rs".into()
            })
        );
        assert_eq!(
            parse("CLAUDE.md", &vec![b'a'; MAX_FILE_BYTES + 1]),
            Err(ImportError::TooLarge {
                bytes: MAX_FILE_BYTES + 1
            })
        );
        assert_eq!(
            parse("AGENTS.md", b"- rule\0"),
            Err(ImportError::Binary { offset: 6 })
        );
        assert_eq!(
            parse("AGENTS.md", b"- caf\xe9 rule"),
            Err(ImportError::Binary { offset: 5 })
        );
        assert!(matches!(
            parse(".cursor/rules/x.mdc", b"---\nglobs: a\n"),
            Err(ImportError::Malformed { .. })
        ));
    }

    #[test]
    fn a_rule_folder_imports_from_its_project_and_a_nested_file_from_its_folder() {
        let got = parse(
            ".cursor/rules/review.mdc",
            b"---\nglobs: x\n---\n@.github/copilot-instructions.md\n",
        )
        .unwrap();
        assert_eq!(
            got.imports[0].resolved.as_deref(),
            Some(".github/copilot-instructions.md")
        );
        let got = parse(
            "crates/fmt/AGENTS.md",
            b"Follow @../core/POLICY.md , always.\n",
        )
        .unwrap();
        assert_eq!(
            got.imports[0].resolved.as_deref(),
            Some("crates/core/POLICY.md")
        );
    }

    #[test]
    fn a_nested_file_applies_to_its_folder_and_rule_folders_to_their_owner() {
        let got = parse(
            "apps/webapp/CLAUDE.md",
            b"- Use `env` from `./app/env.server.ts`, never `process.env`\n",
        )
        .unwrap();
        assert_eq!(got.folder, "apps/webapp");
        assert_eq!(got.rules[0].files, vec!["apps/webapp/app/env.server.ts"]);
        let got = parse(
            ".cursor/rules/backend/ids.mdc",
            b"---\nglobs: x\n---\n- Keep ids typed everywhere\n",
        )
        .unwrap();
        assert_eq!(got.folder, "");
        assert_eq!(got.rules[0].line, 4);
        let got = parse("packages/a/.github/copilot-instructions.md", b"").unwrap();
        assert_eq!(got.folder, "packages/a");
    }
}
