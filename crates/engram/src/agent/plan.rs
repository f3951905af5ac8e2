//! Planning from memory: task calibrations recorded as work units finish, the
//! step limit they imply, and the planner's context.

use engram_agent::named_modules::named_modules;
use engram_agent::plan::{
    self, check_label, check_modules, step_limit, Calibration, CalibrationSample, StepLimit,
    StepLimitRequest, PLANNER_SECTIONS,
};
use engram_core::{
    MemoryRelation, MemorySource, MemoryType, NewMemory, RelationType, ValidationError,
};
use engram_retrieval::packing::pack_in_sections;
use engram_retrieval::Candidate;
use engram_store::{Database, Rows, Statement, StoreError, Value};
use serde::{Deserialize, Serialize};

use super::{sql, PromptContext};
use crate::retrieve::json_array;
use crate::retrieve::query::{SearchQuery, MAX_BUDGET_TOKENS, MAX_QUERY_BYTES};
use crate::row::{memory_from_row, MEMORY_COLUMN_COUNT};
use crate::{Engram, EngramError};

/// The most calibrations the planner reads when the request names no modules; a project
/// has one per module and methodology.
const MAX_CALIBRATIONS_READ: u32 = 512;

/// What a planner asks before it plans a task.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PlannerRequest {
    /// The task to plan.
    pub task: String,
    /// The modules it works in: calibrations, dead ends, coupled files and outcomes are
    /// theirs. Without modules, the task's search alone decides, and the calibrations shown
    /// are those of the calibrated modules the task names.
    #[serde(default)]
    pub modules: Vec<String>,
    /// The methodology that plans it (default `native`), for its calibrations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub methodology: Option<String>,
    /// Tokens the context may cost (default 2,500, the define phase's budget).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<u32>,
}

impl PlannerRequest {
    /// Parses a request from untrusted JSON, naming the failing field.
    pub fn from_json(json: &str) -> Result<PlannerRequest, ValidationError> {
        engram_core::validate::from_json_checked(json, Self::validate)
    }

    /// Checks the request against engram's limits.
    pub fn validate(&self) -> Result<(), ValidationError> {
        if self.task.trim().is_empty() {
            return Err(ValidationError::field("task", "must not be empty"));
        }
        if self.task.len() > MAX_QUERY_BYTES {
            return Err(ValidationError::field(
                "task",
                format!(
                    "is {} bytes; the limit is {MAX_QUERY_BYTES}",
                    self.task.len()
                ),
            ));
        }
        check_modules(&self.modules)?;
        if let Some(methodology) = &self.methodology {
            check_label("methodology", methodology)?;
        }
        match self.budget {
            Some(b) if b > MAX_BUDGET_TOKENS => Err(ValidationError::field(
                "budget",
                format!("must be at most {MAX_BUDGET_TOKENS} tokens, got {b}"),
            )),
            _ => Ok(()),
        }
    }

    fn methodology(&self) -> &str {
        plan::methodology_or_default(self.methodology.as_deref())
    }
}

/// The planner's context: what memory says about planning the task, in sections.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlannerContext {
    /// The packed text for the planner's prompt, one section per kind of memory.
    #[serde(flatten)]
    pub packed: PromptContext,
    /// The calibrations of the task's modules, most overrun first: multiply estimates by
    /// their ratio.
    pub calibrations: Vec<Calibration>,
    /// The modules the calibrations are for: the request's, or, when it names none, the
    /// calibrated modules its task names (see [`engram_agent::named_modules`]).
    pub modules: Vec<String>,
    /// What went wrong on the way (a skipped dense path, say).
    pub warnings: Vec<String>,
}

impl<D: Database> Engram<D> {
    /// Records a finished work unit's planned and actual steps in its module: the module's
    /// totals grow by one sample, and its `task_calibration` memory is replaced by one that
    /// states the new ratio (the old one is forgotten, and the new one supersedes it). Two
    /// round trips: the totals are read, then written with the memory in one transaction.
    pub async fn record_calibration(
        &self,
        sample: &CalibrationSample,
    ) -> Result<Calibration, EngramError> {
        sample.validate()?;
        let module = sample.module.trim();
        let methodology = sample.methodology();
        let rows = self
            .single(self.calibration_lookup(methodology, &[module.to_owned()]))
            .await?;
        let (mut samples, mut planned, mut actual, mut previous) = (0, 0, 0, None);
        if let Some(row) = rows.rows.first() {
            let (old, memory) = calibration_from_row(row, 0)?;
            samples = old.0;
            planned = old.1;
            actual = old.2;
            previous = memory;
        }
        samples += 1;
        planned += u64::from(sample.planned_steps);
        actual += u64::from(sample.actual_steps);
        let mut calibration =
            Calibration::from_totals(module, methodology, samples, planned, actual);
        let memory = NewMemory {
            confidence: calibration.confidence(),
            tags: vec!["task_calibration".to_owned(), methodology.to_owned()],
            related_modules: vec![module.to_owned()],
            source: MemorySource::ObserverInferred,
            session_id: sample.session_id.clone(),
            provenance_session_ids: sample.session_id.iter().cloned().collect(),
            methodology: Some(methodology.to_owned()),
            relations: previous
                .iter()
                .map(|id| MemoryRelation {
                    target_memory_id: Some(id.clone()),
                    target_file_path: None,
                    relation_type: RelationType::Supersedes,
                    confidence: 1.0,
                    auto_extracted: true,
                })
                .collect(),
            citation_text: Some(citation(module)),
            ..NewMemory::new(MemoryType::TaskCalibration, calibration.text())
        };
        let (mut statements, remembered, _) = self.prepare_memories(vec![memory]).await?;
        let id = remembered
            .into_iter()
            .next()
            .map(|r| r.id)
            .ok_or_else(|| StoreError::Decode("no memory prepared".into()))?;
        let now = engram_core::time::rfc3339_from_millis(self.host.clock.now_millis());
        // A calibration that repeats the live one merged into it: nothing to forget.
        if let Some(previous) = previous.as_ref().filter(|p| **p != id) {
            // Forgotten first, so the new memory is the module's only live calibration.
            let mut forget = self.forget_statements(previous, &now).to_vec();
            forget.append(&mut statements);
            statements = forget;
        }
        statements.push(Statement::with_params(
            sql::ADD_CALIBRATION_SAMPLE,
            vec![
                Value::from(self.config.project_id.as_str()),
                Value::from(module),
                Value::from(methodology),
                Value::from(i64::from(sample.planned_steps)),
                Value::from(i64::from(sample.actual_steps)),
                Value::from(id.as_str()),
                Value::from(now),
            ],
        ));
        let write = crate::durable::Write {
            statements,
            key: crate::durable::receipt_key(None, || self.new_id()),
            memory_ids: vec![id.clone()],
        };
        self.commit(write, false).await?;
        calibration.memory_id = Some(id);
        Ok(calibration)
    }

    /// The step limit for a task: the runtime's base limit scaled by
    /// how many steps work in the task's modules really takes against its plans (see
    /// [`engram_agent::plan::step_limit`]). One round trip.
    pub async fn step_limit(&self, request: &StepLimitRequest) -> Result<StepLimit, EngramError> {
        request.validate()?;
        let calibrations = if request.modules.is_empty() {
            Vec::new()
        } else {
            let rows = self
                .single(self.calibration_lookup(request.methodology(), &request.modules))
                .await?;
            calibrations_from(&rows, 0)?
                .into_iter()
                .map(|(c, _)| c)
                .collect()
        };
        Ok(step_limit(request, &calibrations))
    }

    /// The planner's context: the calibrations of the task's
    /// modules (of those the task names when the request gives none), their dead ends
    /// (constraints for the plan), coupled files (scope), recent work-unit outcomes and the
    /// task's recipes, in sections packed into the budget. One round trip: the
    /// calibrations are read with the sections' searches.
    pub async fn planner_context(
        &self,
        request: &PlannerRequest,
    ) -> Result<PlannerContext, EngramError> {
        request.validate()?;
        let queries: Vec<SearchQuery> = PLANNER_SECTIONS[1..]
            .iter()
            .map(|(memory_type, _, limit)| {
                let mut query = SearchQuery::new(request.task.as_str());
                query.types = vec![*memory_type];
                query.limit = *limit;
                if *memory_type != MemoryType::WorkflowRecipe {
                    query.modules = request.modules.clone();
                }
                query
            })
            .collect();
        // Without modules, every calibrated module is read, and those the task names count.
        let read = Statement::with_params(
            sql::calibrations_with_memories(MAX_CALIBRATIONS_READ),
            self.calibration_params(request.methodology(), &request.modules),
        );
        let (answers, rows) = self.search_with(&queries, vec![read]).await?;
        let mut warnings = Vec::new();
        let mut ranked: Vec<Candidate> = Vec::new();
        let mut calibrations = Vec::new();
        let mut modules = request.modules.clone();
        if let Some(rows) = rows.first() {
            let read = calibrations_from(rows, MEMORY_COLUMN_COUNT)?;
            if request.modules.is_empty() {
                let known: Vec<&str> = read.iter().map(|(c, _)| c.module.as_str()).collect();
                modules = named_modules(&request.task, &known)
                    .into_iter()
                    .map(str::to_owned)
                    .collect();
            }
            // With modules, the read holds only theirs; without, every calibrated module's,
            // and the task's are kept. Only the kept calibrations' memories are decoded.
            let mut found = read
                .into_iter()
                .zip(&rows.rows)
                .filter(|((calibration, _), _)| modules.contains(&calibration.module))
                .map(|((calibration, _), row)| Ok((calibration, memory_from_row(row)?)))
                .collect::<Result<Vec<_>, StoreError>>()?;
            found.sort_by(|(a, _), (b, _)| {
                b.ratio
                    .total_cmp(&a.ratio)
                    .then_with(|| a.module.cmp(&b.module))
            });
            found.truncate(PLANNER_SECTIONS[0].2 as usize);
            for (calibration, memory) in found {
                ranked.push(Candidate::new(memory));
                calibrations.push(calibration);
            }
        }
        for (query, found) in queries.iter().zip(answers) {
            crate::agent::add_warnings(&mut warnings, found.warnings);
            let mut hits: Vec<Candidate> = found
                .hits
                .into_iter()
                .filter(|hit| !ranked.iter().any(|c| c.memory.id == hit.memory.id))
                .map(|hit| Candidate::new(hit.memory))
                .collect();
            if query.types == [MemoryType::WorkUnitOutcome] {
                // The latest outcomes first: what happened last is what the plan follows.
                hits.sort_by(|a, b| b.memory.created_at.cmp(&a.memory.created_at));
            }
            ranked.extend(hits);
        }
        let sections: Vec<(MemoryType, &str)> =
            PLANNER_SECTIONS.iter().map(|(t, h, _)| (*t, *h)).collect();
        Ok(PlannerContext {
            packed: pack_in_sections(&ranked, &plan::planner_budget(request.budget), &sections)
                .into(),
            calibrations,
            modules,
            warnings,
        })
    }

    fn calibration_lookup(&self, methodology: &str, modules: &[String]) -> Statement {
        Statement::with_params(
            sql::SELECT_CALIBRATIONS,
            self.calibration_params(methodology, modules),
        )
    }

    fn calibration_params(&self, methodology: &str, modules: &[String]) -> Vec<Value> {
        let modules: Vec<String> = modules.iter().map(|m| m.trim().to_owned()).collect();
        vec![
            Value::from(self.config.project_id.as_str()),
            Value::from(methodology),
            json_array(&modules),
        ]
    }
}

/// A calibration row's work units, planned steps and actual steps.
type Totals = (u32, u64, u64);

/// The totals and the memory id of one calibration row, whose columns start at `at`
/// (module, methodology, samples, planned, actual, memory id).
fn calibration_from_row(row: &[Value], at: usize) -> Result<(Totals, Option<String>), StoreError> {
    let count = |i: usize, what: &str| -> Result<i64, StoreError> {
        let value = row
            .get(at + i)
            .ok_or_else(|| StoreError::Decode(format!("calibration row lacks {what}")))?
            .as_i64(what)?;
        if value < 0 {
            return Err(StoreError::Decode(format!("{what} is negative: {value}")));
        }
        Ok(value)
    };
    let samples = u32::try_from(count(2, "samples")?)
        .map_err(|_| StoreError::Decode("samples out of range".into()))?;
    let memory = match row.get(at + 5) {
        Some(value) => value.as_opt_text("memory_id")?.map(str::to_owned),
        None => None,
    };
    Ok((
        (
            samples,
            count(3, "planned_steps")? as u64,
            count(4, "actual_steps")? as u64,
        ),
        memory,
    ))
}

/// Every calibration of `rows` (columns from `at`, as [`calibration_from_row`] reads them),
/// with its memory id.
fn calibrations_from(
    rows: &Rows,
    at: usize,
) -> Result<Vec<(Calibration, Option<String>)>, StoreError> {
    rows.rows
        .iter()
        .map(|row| {
            let text = |i: usize, what: &str| -> Result<String, StoreError> {
                row.get(at + i)
                    .ok_or_else(|| StoreError::Decode(format!("calibration row lacks {what}")))?
                    .as_text(what)
                    .map(str::to_owned)
            };
            let ((samples, planned, actual), memory) = calibration_from_row(row, at)?;
            let mut calibration = Calibration::from_totals(
                &text(0, "module")?,
                &text(1, "methodology")?,
                samples,
                planned,
                actual,
            );
            calibration.memory_id = memory.clone();
            Ok((calibration, memory))
        })
        .collect()
}

/// The citation chip of a module's calibration, within the 40 characters a chip may have.
fn citation(module: &str) -> String {
    let tail: String = module
        .chars()
        .rev()
        .take(28)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    format!("steps in {tail}")
}
