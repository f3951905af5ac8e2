//! Which kind of instruction file a path is, from its name and folder.

use serde::Serialize;

/// The kinds of instruction file engram reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    /// `CLAUDE.md` or `CLAUDE.local.md`, at the root or nested in a folder.
    ClaudeMd,
    /// `AGENTS.md`, at the root or nested.
    AgentsMd,
    /// `GEMINI.md`, at the root or nested.
    GeminiMd,
    /// `.cursorrules` (Cursor's legacy single file).
    CursorRules,
    /// `.cursor/rules/*.mdc`: front matter (`description`, `globs`, `alwaysApply`), then
    /// markdown.
    CursorRule,
    /// `.windsurfrules` (Windsurf's legacy single file).
    WindsurfRules,
    /// `.windsurf/rules/*.md`: front matter (`trigger`, `globs`, `description`), then
    /// markdown.
    WindsurfRule,
    /// `.github/copilot-instructions.md` or `.github/instructions/*.instructions.md`.
    CopilotInstructions,
    /// Claude Code's auto-memory index, `MEMORY.md`.
    ClaudeMemory,
    /// Any other markdown file, reached through an `@path` import.
    Markdown,
}

impl Format {
    /// The format of the file at `path` (relative to the project root, `/`-separated),
    /// or `None` when engram does not read that kind of file.
    pub fn of_path(path: &str) -> Option<Format> {
        let path = path.trim_start_matches("./");
        let (folder, name) = match path.rsplit_once('/') {
            Some((folder, name)) => (folder, name),
            None => ("", path),
        };
        let in_folder = |suffix: &str| folder == suffix || folder.ends_with(&format!("/{suffix}"));
        let under = |prefix: &str| {
            folder == prefix
                || folder.starts_with(&format!("{prefix}/"))
                || folder.contains(&format!("/{prefix}/"))
                || folder.ends_with(&format!("/{prefix}"))
        };
        let format = match name {
            "CLAUDE.md" | "CLAUDE.local.md" => Format::ClaudeMd,
            "AGENTS.md" => Format::AgentsMd,
            "GEMINI.md" => Format::GeminiMd,
            ".cursorrules" => Format::CursorRules,
            ".windsurfrules" => Format::WindsurfRules,
            "MEMORY.md" => Format::ClaudeMemory,
            "copilot-instructions.md" if in_folder(".github") => Format::CopilotInstructions,
            _ if name.ends_with(".instructions.md") && under(".github/instructions") => {
                Format::CopilotInstructions
            }
            _ if name.ends_with(".mdc") && under(".cursor/rules") => Format::CursorRule,
            _ if name.ends_with(".md") && under(".windsurf/rules") => Format::WindsurfRule,
            _ if name.ends_with(".md") || name.ends_with(".markdown") => Format::Markdown,
            _ => return None,
        };
        Some(format)
    }

    /// Whether files of this format open with front matter that says where they apply.
    pub fn has_front_matter(self) -> bool {
        matches!(
            self,
            Format::CursorRule | Format::WindsurfRule | Format::CopilotInstructions
        )
    }

    /// The name used in reports and provenance.
    pub fn as_str(self) -> &'static str {
        match self {
            Format::ClaudeMd => "claude_md",
            Format::AgentsMd => "agents_md",
            Format::GeminiMd => "gemini_md",
            Format::CursorRules => "cursorrules",
            Format::CursorRule => "cursor_rule",
            Format::WindsurfRules => "windsurfrules",
            Format::WindsurfRule => "windsurf_rule",
            Format::CopilotInstructions => "copilot_instructions",
            Format::ClaudeMemory => "claude_memory",
            Format::Markdown => "markdown",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_follow_the_name_and_folder() {
        let cases = [
            ("CLAUDE.md", Some(Format::ClaudeMd)),
            ("apps/webapp/CLAUDE.md", Some(Format::ClaudeMd)),
            ("crates/oxc_formatter/AGENTS.md", Some(Format::AgentsMd)),
            ("GEMINI.md", Some(Format::GeminiMd)),
            (".cursorrules", Some(Format::CursorRules)),
            (".cursor/rules/review.mdc", Some(Format::CursorRule)),
            (".cursor/rules/backend/ids.mdc", Some(Format::CursorRule)),
            (".windsurf/rules/backend/ids.md", Some(Format::WindsurfRule)),
            (".windsurfrules", Some(Format::WindsurfRules)),
            (
                ".github/copilot-instructions.md",
                Some(Format::CopilotInstructions),
            ),
            (
                ".github/instructions/go.instructions.md",
                Some(Format::CopilotInstructions),
            ),
            ("memory/MEMORY.md", Some(Format::ClaudeMemory)),
            ("CONTRIBUTING.md", Some(Format::Markdown)),
            ("copilot-instructions.md", Some(Format::Markdown)),
            ("notes.mdc", None),
            ("src/main.rs", None),
        ];
        for (path, format) in cases {
            assert_eq!(Format::of_path(path), format, "{path}");
        }
    }
}
