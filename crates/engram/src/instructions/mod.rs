//! Importing the instruction files people already keep (CLAUDE.md, AGENTS.md, Cursor and
//! Windsurf rules, Copilot instructions…): each rule becomes a typed memory with its file
//! and line as provenance, and importing a new version of a file updates what changed,
//! retires what was removed and leaves the rest alone, in one transaction.

mod origin;
mod plan;
mod sql;

pub use origin::RuleOrigin;

use engram_core::{Memory, MemoryScope, MemorySource, MemoryType, NewMemory, ValidationError};
use engram_instructions::{Format, Import, Instructions};
use engram_store::{Database, Statement, Value};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::row::{memory_from_row, MEMORY_COLUMN_COUNT};
use crate::{Engram, EngramError};

/// Files one import reads at most.
pub const MAX_IMPORT_FILES: usize = 256;

/// The confidence of an imported rule: a person wrote it down for agents to follow.
const IMPORTED_CONFIDENCE: f64 = 0.9;

/// Globs of a rule file's front matter kept on each of its memories, at most.
const MAX_GLOB_TAGS: usize = 16;

/// Instruction files to import, read by the host.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ImportRequest {
    /// The files, each with its path from the project root.
    pub files: Vec<InstructionFile>,
}

impl ImportRequest {
    /// Parses a request from untrusted JSON, naming the failing field (the files are
    /// checked when imported).
    pub fn from_json(json: &str) -> Result<ImportRequest, ValidationError> {
        engram_core::validate::from_json_checked(json, |_: &ImportRequest| Ok(()))
    }
}

/// One instruction file.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct InstructionFile {
    /// Its path from the project root, `/`-separated (`CLAUDE.md`,
    /// `.cursor/rules/review.mdc`, `apps/webapp/CLAUDE.md`).
    pub path: String,
    /// Its contents.
    pub text: String,
}

/// What an import did.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ImportReport {
    /// One per file, in request order.
    pub files: Vec<FileImport>,
    /// The database is out of reach: the write waits in the buffer.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub pending: bool,
}

/// What an import did with one file.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FileImport {
    /// The file.
    pub path: String,
    /// Its format.
    pub format: Format,
    /// It is byte-identical to its last import: nothing was written.
    pub unchanged_file: bool,
    /// Its rules, each with the memory it is and what became of it.
    pub rules: Vec<ImportedRule>,
    /// Rules the file no longer has whose memories were retired (no other file says
    /// them).
    pub retired: Vec<RetiredRule>,
    /// Its `@path` imports.
    pub imports: Vec<Import>,
    /// Imports that point outside the project or at a file not in this request (not
    /// imported).
    pub unresolved: Vec<String>,
}

impl FileImport {
    /// How many of its rules had `outcome`.
    pub fn count(&self, outcome: RuleOutcome) -> usize {
        self.rules.iter().filter(|r| r.outcome == outcome).count()
    }
}

/// One imported rule.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ImportedRule {
    /// The memory that holds it.
    pub id: String,
    /// Its lines in the file.
    pub line: usize,
    /// Its last line.
    pub end_line: usize,
    /// Its type.
    #[serde(rename = "type")]
    pub memory_type: MemoryType,
    /// What became of it.
    pub outcome: RuleOutcome,
    /// Its text as stored (secrets redacted).
    pub text: String,
    /// Project files it names.
    pub files: Vec<String>,
}

/// A rule an import retired.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RetiredRule {
    /// Its memory.
    pub id: String,
    /// Its line in the file's last import.
    pub line: usize,
    /// Its text.
    pub text: String,
}

/// What became of one rule of an imported file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RuleOutcome {
    /// Stored as a new memory.
    Added,
    /// A live memory already said it (another file, or an agent): merged into it.
    Merged,
    /// Imported before with the same text.
    Unchanged,
    /// Imported before in another form only: the memory took the new wording.
    Reformatted,
    /// Imported before and revised: the new memory supersedes the old one.
    Revised,
    /// Imported before, and its memory was forgotten since: left forgotten.
    Forgotten,
}

/// A rule imported before, as read back.
pub(crate) struct Known {
    pub memory: Memory,
    pub rule_key: String,
    pub rule_text: String,
    pub line: usize,
    pub end_line: usize,
    /// How many files the memory has as origins (this one included).
    pub origins: i64,
}

/// A file, read and checked, with its rules as the memories they become.
pub(crate) struct ParsedFile {
    pub instructions: Instructions,
    pub sha256: String,
    /// One per rule, redacted.
    pub memories: Vec<NewMemory>,
}

impl<D: Database> Engram<D> {
    /// Imports instruction files: parses each, stores its rules as memories (merged into
    /// a live memory that already says one), and for a file imported before, keeps the
    /// rules it still has, supersedes the revised ones and retires the removed ones. A
    /// file byte-identical to its last import writes nothing. Bad input (an invalid path,
    /// a file that is not an instruction file, too large, binary or malformed) is a
    /// typed error, and then nothing is written.
    pub async fn import_instructions(
        &self,
        request: ImportRequest,
    ) -> Result<ImportReport, EngramError> {
        let files = self.parse_files(&request)?;
        let states = self.read_imported(&files).await?;
        plan::import(self, &files, states).await
    }

    /// [`Engram::import_instructions`] of a JSON [`ImportRequest`].
    pub async fn import_instructions_json(&self, json: &str) -> Result<ImportReport, EngramError> {
        self.import_instructions(ImportRequest::from_json(json)?)
            .await
    }

    fn parse_files(&self, request: &ImportRequest) -> Result<Vec<ParsedFile>, EngramError> {
        if request.files.is_empty() || request.files.len() > MAX_IMPORT_FILES {
            return Err(ValidationError::field(
                "files",
                format!("must hold 1 to {MAX_IMPORT_FILES} files"),
            )
            .into());
        }
        let mut files = Vec::with_capacity(request.files.len());
        for (i, file) in request.files.iter().enumerate() {
            check_path(i, &file.path)?;
            if request.files[..i].iter().any(|f| f.path == file.path) {
                return Err(
                    ValidationError::field(format!("files[{i}].path"), "is given twice").into(),
                );
            }
            let instructions = engram_instructions::parse(&file.path, file.text.as_bytes())
                .map_err(|e| {
                    ValidationError::field(format!("files[{i}]"), format!("{}: {e}", file.path))
                })?;
            let memories = instructions
                .rules
                .iter()
                .map(|rule| {
                    let mut memory = rule_memory(&instructions, rule);
                    self.redact(&mut memory);
                    memory
                })
                .collect();
            files.push(ParsedFile {
                sha256: hex_sha256(file.text.as_bytes()),
                instructions,
                memories,
            });
        }
        Ok(files)
    }

    /// Per file, in one round trip: its stored hash, and the rules imported from it.
    async fn read_imported(
        &self,
        files: &[ParsedFile],
    ) -> Result<Vec<(Option<String>, Vec<Known>)>, EngramError> {
        let project = Value::from(self.project_id());
        let mut statements = Vec::with_capacity(files.len() * 2);
        for file in files {
            let path = Value::from(file.instructions.path.as_str());
            statements.push(Statement::with_params(
                sql::IMPORTED_FILE,
                vec![project.clone(), path.clone()],
            ));
            statements.push(Statement::with_params(
                sql::origins_of_file(),
                vec![project.clone(), path],
            ));
        }
        let answers = self.db.pipeline(&statements).await?;
        let mut results = Vec::with_capacity(answers.len());
        for answer in answers {
            results.push(answer.map_err(engram_store::StoreError::Sql)?);
        }
        let mut states = Vec::with_capacity(files.len());
        for pair in results.chunks(2) {
            let sha = pair[0]
                .rows
                .first()
                .and_then(|row| row.first())
                .and_then(|v| v.as_text("sha256").ok())
                .map(str::to_owned);
            let mut known = Vec::new();
            for row in pair.get(1).map(|r| r.rows.as_slice()).unwrap_or(&[]) {
                known.push(known_from_row(row)?);
            }
            states.push((sha, known));
        }
        Ok(states)
    }
}

fn known_from_row(row: &[Value]) -> Result<Known, EngramError> {
    let memory = memory_from_row(row)?;
    let at = |i: usize| {
        row.get(MEMORY_COLUMN_COUNT + i)
            .cloned()
            .unwrap_or(Value::Null)
    };
    let text = |i: usize, name: &str| -> Result<String, EngramError> {
        Ok(at(i).as_text(name).map(str::to_owned)?)
    };
    let number = |i: usize, name: &str| -> Result<i64, EngramError> { Ok(at(i).as_i64(name)?) };
    Ok(Known {
        memory,
        rule_key: text(0, "rule_key")?,
        rule_text: text(1, "rule_text")?,
        line: usize::try_from(number(2, "line")?).unwrap_or(0),
        end_line: usize::try_from(number(3, "end_line")?).unwrap_or(0),
        origins: number(4, "origins")?,
    })
}

/// A path from the project root: relative, `/`-separated, inside the project.
fn check_path(i: usize, path: &str) -> Result<(), EngramError> {
    let problem = if path.is_empty() {
        Some("must not be empty")
    } else if path.len() > engram_core::validate::MAX_PATH_BYTES {
        Some("is too long")
    } else if path.starts_with('/') || path.contains('\\') || path.contains(':') {
        Some("must be relative to the project root, with `/` separators")
    } else if path.split('/').any(|part| part == ".." || part.is_empty()) {
        Some("must stay inside the project (no `..` or empty parts)")
    } else if path.chars().any(char::is_control) {
        Some("must not contain control characters")
    } else {
        None
    };
    match problem {
        Some(problem) => Err(ValidationError::field(format!("files[{i}].path"), problem).into()),
        None => Ok(()),
    }
}

/// The memory one rule of `file` becomes.
fn rule_memory(file: &Instructions, rule: &engram_instructions::Rule) -> NewMemory {
    let mut memory = NewMemory::new(rule.memory_type, rule.text.clone());
    memory.source = MemorySource::UserTaught;
    memory.confidence = IMPORTED_CONFIDENCE;
    memory.related_files = rule.files.clone();
    if !file.folder.is_empty() {
        memory.related_modules = vec![file.folder.clone()];
        memory.scope = MemoryScope::Module;
    }
    memory.tags = vec!["imported".to_owned(), file.format.as_str().to_owned()];
    if let Some(front) = &file.front_matter {
        memory.tags.extend(
            front
                .globs
                .iter()
                .filter(|g| g.len() + 5 <= engram_core::validate::MAX_LABEL_CHARS)
                .take(MAX_GLOB_TAGS)
                .map(|g| format!("glob:{g}")),
        );
        if front.always_apply {
            memory.tags.push("always-apply".to_owned());
        }
    }
    memory.citation_text = Some(citation(&file.path, rule.line));
    memory
}

/// `name:line` of a rule, at most 40 characters (the file name's start is cut first).
fn citation(path: &str, line: usize) -> String {
    let name = path.rsplit('/').next().unwrap_or(path);
    let suffix = format!(":{line}");
    let room = engram_core::validate::MAX_CITATION_CHARS.saturating_sub(suffix.len());
    let chars: Vec<char> = name.chars().collect();
    let kept: String = chars[chars.len().saturating_sub(room)..].iter().collect();
    format!("{kept}{suffix}")
}

fn hex_sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn citations_fit_the_chip() {
        assert_eq!(citation("AGENTS.md", 12), "AGENTS.md:12");
        let long = citation(
            ".cursor/rules/backend/a-very-long-rule-file-name-for-ids.mdc",
            123,
        );
        assert_eq!(
            long.chars().count(),
            engram_core::validate::MAX_CITATION_CHARS
        );
        assert!(long.ends_with("ids.mdc:123"));
    }

    #[test]
    fn paths_must_stay_in_the_project() {
        for bad in [
            "",
            "/etc/x.md",
            "../x.md",
            "a//CLAUDE.md",
            "a\\CLAUDE.md",
            "C:/x.md",
        ] {
            assert!(check_path(0, bad).is_err(), "{bad}");
        }
        assert!(check_path(0, "apps/webapp/CLAUDE.md").is_ok());
    }
}
