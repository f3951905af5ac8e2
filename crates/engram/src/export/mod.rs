//! Ways out: a project's memories as JSON (every column, with their history and import
//! origins, readable back into an empty database as the same memories), as Markdown for a
//! person, and as a section of a CLAUDE.md or AGENTS.md. Every text goes through the
//! secret scanner on its way out.

mod rows;

use engram_core::{Memory, ValidationError};
use engram_store::{Database, Statement, Value};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value as Json};

use crate::row::memory_from_row;
use crate::sql::MEMORY_COLUMNS;
use crate::{Engram, EngramError};

pub use rows::{HISTORY_COLUMNS, MEMORY_TABLE_COLUMNS, ORIGIN_COLUMNS};

/// What [`ProjectExport::format`] says.
pub const EXPORT_FORMAT: &str = "engram-export";
/// The export layout this build writes and reads.
pub const EXPORT_VERSION: u32 = 1;

/// A project's memories, whole: every column of every memory (live and retired), every
/// history entry and every import origin, as JSON objects keyed by column.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProjectExport {
    /// Always [`EXPORT_FORMAT`].
    pub format: String,
    /// The layout: [`EXPORT_VERSION`].
    pub version: u32,
    /// The schema version of the database it came from.
    pub schema_version: u32,
    /// The project it came from.
    pub project_id: String,
    /// The memories, oldest first.
    pub memories: Vec<Map<String, Json>>,
    /// Their history entries, in order.
    pub history: Vec<Map<String, Json>>,
    /// Where imported rules came from (file, line, rule text).
    pub origins: Vec<Map<String, Json>>,
    /// Secrets the scanner found and redacted on the way out (none in a healthy store).
    #[serde(default)]
    pub redacted: u64,
    /// The project's trust level, when a person set one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trust_level: Option<engram_core::TrustLevel>,
}

impl ProjectExport {
    /// Parses an export from untrusted JSON, naming the failing field.
    pub fn from_json(json: &str) -> Result<ProjectExport, ValidationError> {
        engram_core::validate::from_json(json)
    }
}

/// What reading an export back stored.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExportLoaded {
    /// Memories stored.
    pub memories: u64,
    /// History entries stored.
    pub history: u64,
    /// Import origins stored.
    pub origins: u64,
}

impl<D: Database> Engram<D> {
    /// The project's memories, whole, and its trust level, for [`Engram::load_export`]
    /// (one round trip).
    pub async fn export(&self) -> Result<ProjectExport, EngramError> {
        let project = Value::from(self.project_id());
        let mut statements: Vec<Statement> = [
            format!(
                "SELECT {} FROM memories WHERE project_id = ?1 ORDER BY created_at, id",
                MEMORY_TABLE_COLUMNS.join(", ")
            ),
            format!(
                "SELECT {} FROM memory_history WHERE project_id = ?1 ORDER BY id",
                HISTORY_COLUMNS.join(", ")
            ),
            format!(
                "SELECT {} FROM memory_origins WHERE project_id = ?1 ORDER BY file, rule_key",
                ORIGIN_COLUMNS.join(", ")
            ),
        ]
        .into_iter()
        .map(|sql| Statement::with_params(sql, vec![project.clone()]))
        .collect();
        statements.push(self.trust_statement());
        let mut answers = self.db.pipeline(&statements).await?.into_iter();
        let mut next = || -> Result<engram_store::Rows, EngramError> {
            Ok(answers
                .next()
                .ok_or_else(|| engram_store::StoreError::Protocol("an answer is missing".into()))?
                .map_err(engram_store::StoreError::Sql)?)
        };
        let (mut memories, mut history, mut origins) = (
            rows::objects(&next()?),
            rows::objects(&next()?),
            rows::objects(&next()?),
        );
        let trust = Self::trust_from_rows(&next()?)?;
        let mut redacted = 0;
        if let Some(scanner) = self.scanner {
            for object in memories.iter_mut().chain(&mut history).chain(&mut origins) {
                redacted += rows::redact(object, scanner);
            }
        }
        Ok(ProjectExport {
            format: EXPORT_FORMAT.to_owned(),
            version: EXPORT_VERSION,
            schema_version: engram_core::schema::latest_version(),
            project_id: self.project_id().to_owned(),
            memories,
            history,
            origins,
            redacted,
            trust_level: trust.set.then_some(trust.level),
        })
    }

    /// Stores an export in this project, in one transaction: each memory with its id and
    /// every column as exported (the project is this one), its keyword row when live, its
    /// file and module links, its history and its origins, and the trust level when the
    /// export carries one. Vectors are not exported: run
    /// [`Engram::embed_pending`] afterwards. An export of another format or version, a
    /// column this build does not know, a value that is not a scalar, or an id this
    /// database holds already is `invalid_input`, and nothing is written.
    pub async fn load_export(&self, export: &ProjectExport) -> Result<ExportLoaded, EngramError> {
        if export.format != EXPORT_FORMAT {
            return Err(
                ValidationError::field("format", format!("must be {EXPORT_FORMAT:?}")).into(),
            );
        }
        if export.version != EXPORT_VERSION {
            return Err(
                ValidationError::field("version", format!("must be {EXPORT_VERSION}")).into(),
            );
        }
        let plan = rows::Plan::of(export, self.project_id())?;
        let taken = self
            .single(Statement::with_params(
                "SELECT id FROM memories WHERE id IN (SELECT value FROM json_each(?1)) LIMIT 3",
                vec![Value::from(
                    serde_json::to_string(&plan.ids).unwrap_or_else(|_| "[]".into()),
                )],
            ))
            .await?;
        if let Some(first) = taken.rows.first().and_then(|row| row.first()) {
            return Err(ValidationError::field(
                "memories",
                format!("memory {} (and maybe others) is in this database already: load an export into an empty project", first.as_text("id")?),
            )
            .into());
        }
        let mut statements = plan.statements;
        if let Some(level) = export.trust_level {
            statements.push(self.trust_upsert(level));
        }
        self.transaction_with_behind(&statements).await?;
        Ok(plan.loaded)
    }

    /// The project's live memories as Markdown for a person: grouped by module, then by
    /// type, each with its files, confidence, source and id.
    pub async fn export_markdown(&self) -> Result<String, EngramError> {
        let memories = self.live_memories(None).await?;
        let text = rows::markdown(self.project_id(), &memories);
        Ok(self.redacted_text(text))
    }

    /// The body of the section [`engram_instructions::section::splice`] writes into the
    /// instruction file at `file` (its path from the project root): the live, trusted
    /// memories an agent should act on, without those imported from that very file.
    pub async fn export_section(&self, file: &str) -> Result<String, EngramError> {
        let memories: Vec<Memory> = self
            .live_memories(Some(file))
            .await?
            .into_iter()
            .filter(|m| !m.flags.needs_review && m.stale_reason.is_none())
            .filter(|m| m.flags.user_verified || m.confidence >= SECTION_MIN_CONFIDENCE)
            .collect();
        Ok(self.redacted_text(engram_instructions::section::render(&memories)))
    }

    /// Live memories, oldest first; without those imported from `except_file` when given.
    async fn live_memories(&self, except_file: Option<&str>) -> Result<Vec<Memory>, EngramError> {
        let rows = self
            .single(Statement::with_params(
                format!(
                    "SELECT {MEMORY_COLUMNS} FROM memories m WHERE m.project_id = ?1 AND m.deprecated = 0 \
AND m.chunk_type IS NULL AND NOT EXISTS (SELECT 1 FROM memory_origins o WHERE o.memory_id = m.id \
AND o.project_id = ?1 AND o.file = ?2) ORDER BY m.created_at, m.id"
                ),
                vec![Value::from(self.project_id()), Value::from(except_file)],
            ))
            .await?;
        rows.rows
            .iter()
            .map(|row| memory_from_row(row).map_err(EngramError::from))
            .collect()
    }

    fn redacted_text(&self, mut text: String) -> String {
        if let Some(scanner) = self.scanner {
            scanner.redact_in_place(&mut text);
        }
        text
    }
}

/// The least confidence of a memory nobody verified that a generated section lists.
pub const SECTION_MIN_CONFIDENCE: f64 = 0.7;
