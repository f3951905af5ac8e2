//! One import as one transaction: each file's new version reconciled with its last
//! import, the new and revised rules prepared in one batch (one embedder call), and every
//! statement written together.

use engram_core::NewMemory;
use engram_instructions::{reconcile, Known as KnownRule, Outcome};
use engram_lifecycle::judge::Change;
use engram_lifecycle::HistoryAction;
use engram_store::{Database, Statement, Value};

use super::{
    sql, FileImport, ImportReport, ImportedRule, Known, ParsedFile, RetiredRule, RuleOutcome,
};
use crate::lifecycle::consolidate::{history, HistoryRecord, Placement};
use crate::{Engram, EngramError};

/// Who the history says made an import's changes.
const ACTOR: &str = "import";

/// A rule of the new version that is written as a memory (added or revised).
struct ToStore {
    file: usize,
    rule: usize,
    /// The known rule it revises, if any.
    revises: Option<usize>,
}

/// What one import writes, gathered file by file before anything is prepared.
struct Batch<'a, D> {
    engram: &'a Engram<D>,
    project: String,
    now: String,
    /// Origins, rewordings and file hashes.
    statements: Vec<Statement>,
    /// Retirements are decided last: a rule removed here may have been merged into by a
    /// rule another file of this import adds.
    retirements: Vec<Statement>,
    /// The rules written as memories, with the memory each becomes and its placement
    /// when it is decided here (a revision supersedes the rule it revises).
    to_store: Vec<ToStore>,
    news: Vec<NewMemory>,
    forced: Vec<Option<Placement>>,
}

pub(super) async fn import<D: Database>(
    engram: &Engram<D>,
    files: &[ParsedFile],
    states: Vec<(Option<String>, Vec<Known>)>,
) -> Result<ImportReport, EngramError> {
    let mut batch = Batch {
        engram,
        project: engram.project_id().to_owned(),
        now: engram.now_text(),
        statements: Vec::new(),
        retirements: Vec::new(),
        to_store: Vec::new(),
        news: Vec::new(),
        forced: Vec::new(),
    };
    let request_paths: Vec<String> = files.iter().map(|f| f.instructions.path.clone()).collect();
    let mut report = ImportReport::default();
    for (f, (file, (sha, known))) in files.iter().zip(&states).enumerate() {
        let mut entry = file_entry(file, &request_paths);
        if sha.as_deref() == Some(file.sha256.as_str()) {
            entry.unchanged_file = true;
            entry.rules = unchanged_rules(file, known);
        } else {
            batch.plan_file(f, file, known, &mut entry);
        }
        report.files.push(entry);
    }
    if batch.statements.is_empty() && batch.news.is_empty() {
        return Ok(report);
    }
    batch.commit(files, &states, &mut report).await?;
    drop_retired_still_sourced(&mut report);
    Ok(report)
}

impl<D: Database> Batch<'_, D> {
    /// Reconciles a changed file with the rules imported from it before.
    fn plan_file(&mut self, f: usize, file: &ParsedFile, known: &[Known], entry: &mut FileImport) {
        let new: Vec<(&str, &[String])> = file
            .memories
            .iter()
            .map(|m| (m.content.as_str(), m.related_files.as_slice()))
            .collect();
        let knowns: Vec<KnownRule<'_>> = known
            .iter()
            .map(|k| KnownRule {
                text: &k.rule_text,
                files: &k.memory.related_files,
            })
            .collect();
        let reconciled = reconcile(&knowns, &new);
        for (r, outcome) in reconciled.outcomes.iter().enumerate() {
            let rule = self.place_rule((f, file, r), known, outcome);
            entry.rules.push(rule);
        }
        for k in reconciled.removed {
            let (dropped, retire) =
                drop_origin(self.engram, &self.project, file, &known[k], &self.now);
            self.statements.push(dropped);
            self.retirements.extend(retire);
            if !known[k].memory.deprecated {
                entry.retired.push(RetiredRule {
                    id: known[k].memory.id.clone(),
                    line: known[k].line,
                    text: known[k].rule_text.clone(),
                });
            }
        }
        self.statements.push(Statement::with_params(
            sql::UPSERT_IMPORTED_FILE,
            vec![
                Value::from(self.project.as_str()),
                Value::from(file.instructions.path.as_str()),
                Value::from(file.instructions.format.as_str()),
                Value::from(file.sha256.as_str()),
                Value::Integer(file.memories.len() as i64),
                Value::from(self.now.as_str()),
            ],
        ));
    }

    /// What rule `r` of file `f` does, given its reconciliation; its report entry (the
    /// id of a rule still to be stored is filled in after it is).
    fn place_rule(
        &mut self,
        (f, file, r): (usize, &ParsedFile, usize),
        known: &[Known],
        outcome: &Outcome,
    ) -> ImportedRule {
        let memory = &file.memories[r];
        let rule = &file.instructions.rules[r];
        let forgotten_or = |k: usize, outcome: RuleOutcome| {
            if known[k].memory.deprecated {
                RuleOutcome::Forgotten
            } else {
                outcome
            }
        };
        let (id, outcome) = match outcome {
            Outcome::Unchanged { known: k } => {
                let k = *k;
                if known[k].line != rule.line || known[k].end_line != rule.end_line {
                    let id = &known[k].memory.id;
                    self.statements
                        .push(origin(&self.project, file, r, id, memory));
                }
                (
                    known[k].memory.id.clone(),
                    forgotten_or(k, RuleOutcome::Unchanged),
                )
            }
            Outcome::Reformatted { known: k } => {
                let k = *k;
                let statements = reword(&self.project, file, r, &known[k], memory, &self.now);
                self.statements.extend(statements);
                (
                    known[k].memory.id.clone(),
                    forgotten_or(k, RuleOutcome::Reformatted),
                )
            }
            Outcome::Revised { known: k, change } => {
                let old = &known[*k];
                // Another file still says the old form, or a person forgot it: the new
                // form is stored beside it instead of replacing it.
                let replaces = !old.memory.deprecated && old.origins <= 1;
                let change = change.clone().unwrap_or(Change::Revised {
                    source: file.instructions.path.clone(),
                });
                let placement = replaces.then(|| Placement::Supersede {
                    old: Box::new(old.memory.clone()),
                    change,
                });
                self.store(f, r, Some(*k), memory, placement);
                (String::new(), RuleOutcome::Revised)
            }
            Outcome::Added => {
                self.store(f, r, None, memory, None);
                (String::new(), RuleOutcome::Added)
            }
        };
        ImportedRule {
            id,
            line: rule.line,
            end_line: rule.end_line,
            memory_type: memory.memory_type,
            outcome,
            text: memory.content.clone(),
            files: memory.related_files.clone(),
        }
    }

    fn store(
        &mut self,
        file: usize,
        rule: usize,
        revises: Option<usize>,
        memory: &NewMemory,
        placement: Option<Placement>,
    ) {
        self.forced.push(placement);
        self.news.push(memory.clone());
        self.to_store.push(ToStore {
            file,
            rule,
            revises,
        });
    }

    /// Prepares the rules to store in one batch, records their origins (and drops the
    /// revised rules'), and writes everything in one transaction.
    async fn commit(
        mut self,
        files: &[ParsedFile],
        states: &[(Option<String>, Vec<Known>)],
        report: &mut ImportReport,
    ) -> Result<(), EngramError> {
        let (mut write, remembered, stored) =
            self.engram.prepare_placed(self.news, self.forced).await?;
        for ((store, answer), memory) in self.to_store.iter().zip(&remembered).zip(&stored) {
            let file = &files[store.file];
            write.push(origin(&self.project, file, store.rule, &answer.id, memory));
            if let Some(k) = store.revises {
                let old = &states[store.file].1[k];
                let (dropped, retire) =
                    drop_origin(self.engram, &self.project, file, old, &self.now);
                write.push(dropped);
                self.retirements.extend(retire);
            }
            let rule = &mut report.files[store.file].rules[store.rule];
            rule.id = answer.id.clone();
            rule.text = memory.content.clone();
            if answer.merged && store.revises.is_none() {
                rule.outcome = RuleOutcome::Merged;
            }
        }
        write.extend(self.statements);
        write.extend(self.retirements);
        let ids: Vec<String> = remembered.iter().map(|r| r.id.clone()).collect();
        let committed = self
            .engram
            .commit(
                crate::durable::Write {
                    statements: write,
                    key: crate::durable::receipt_key(None, || self.engram.new_id()),
                    memory_ids: ids,
                },
                true,
            )
            .await?;
        report.pending = matches!(committed, crate::durable::Committed::Pending);
        Ok(())
    }
}

/// A report entry for a file, before its rules are placed.
fn file_entry(file: &ParsedFile, request_paths: &[String]) -> FileImport {
    let unresolved = file
        .instructions
        .imports
        .iter()
        .filter(|i| {
            i.resolved
                .as_ref()
                .is_none_or(|path| !request_paths.contains(path))
        })
        .map(|i| i.target.clone())
        .collect();
    FileImport {
        path: file.instructions.path.clone(),
        format: file.instructions.format,
        unchanged_file: false,
        rules: Vec::new(),
        retired: Vec::new(),
        imports: file.instructions.imports.clone(),
        unresolved,
    }
}

/// The rules of a file identical to its last import, with the memories they are.
fn unchanged_rules(file: &ParsedFile, known: &[Known]) -> Vec<ImportedRule> {
    file.memories
        .iter()
        .zip(&file.instructions.rules)
        .map(|(memory, rule)| {
            let key = engram_lifecycle::text::content_key(&memory.content);
            let found = known.iter().find(|k| k.rule_key == key);
            ImportedRule {
                id: found.map(|k| k.memory.id.clone()).unwrap_or_default(),
                line: rule.line,
                end_line: rule.end_line,
                memory_type: memory.memory_type,
                outcome: match found {
                    Some(k) if k.memory.deprecated => RuleOutcome::Forgotten,
                    _ => RuleOutcome::Unchanged,
                },
                text: memory.content.clone(),
                files: memory.related_files.clone(),
            }
        })
        .collect()
}

/// The statement recording that rule `r` of `file` is memory `id`.
fn origin(project: &str, file: &ParsedFile, r: usize, id: &str, memory: &NewMemory) -> Statement {
    let rule = &file.instructions.rules[r];
    Statement::with_params(
        sql::UPSERT_ORIGIN,
        vec![
            Value::from(project),
            Value::from(file.instructions.path.as_str()),
            Value::from(engram_lifecycle::text::content_key(&memory.content)),
            Value::from(id),
            Value::Integer(rule.line as i64),
            Value::Integer(rule.end_line as i64),
            Value::from(rule.section.join(" > ")),
            Value::from(memory.content.as_str()),
        ],
    )
}

/// The statements that give a known memory the reformatted wording of rule `r`.
fn reword(
    project: &str,
    file: &ParsedFile,
    r: usize,
    known: &Known,
    memory: &NewMemory,
    now: &str,
) -> Vec<Statement> {
    let id = known.memory.id.as_str();
    let mut statements = vec![Statement::with_params(
        sql::DELETE_ORIGIN,
        vec![
            Value::from(project),
            Value::from(file.instructions.path.as_str()),
            Value::from(known.rule_key.as_str()),
        ],
    )];
    statements.push(origin(project, file, r, id, memory));
    if known.memory.deprecated {
        return statements;
    }
    let mut reworded = known.memory.clone();
    reworded.content = memory.content.clone();
    let key = crate::engram::content_key(&NewMemory {
        content: memory.content.clone(),
        related_files: known.memory.related_files.clone(),
        visibility: known.memory.visibility,
        ..memory.clone()
    });
    statements.extend([
        Statement::with_params(
            sql::REWORD,
            vec![
                Value::from(id),
                Value::from(project),
                Value::from(memory.content.as_str()),
                Value::from(key),
                Value::from(now),
            ],
        ),
        Statement::with_params(crate::lifecycle::MERGE_KEYWORD_ROW, vec![Value::from(id)]),
        history(
            HistoryRecord {
                memory_id: id,
                action: HistoryAction::Edited,
                before: Some(serde_json::json!({ "content": known.memory.content })),
                after: Some(serde_json::json!({ "content": memory.content })),
                reason: &format!("reformatted in {}", file.instructions.path),
                actor: ACTOR,
                related_id: None,
            },
            project,
            now,
        ),
    ]);
    statements
}

/// The statement that drops a known rule's origin in `file`, and those that retire its
/// memory when no file says it any more (to be written after every origin).
fn drop_origin<D: Database>(
    engram: &Engram<D>,
    project: &str,
    file: &ParsedFile,
    known: &Known,
    now: &str,
) -> (Statement, [Statement; 4]) {
    let dropped = Statement::with_params(
        sql::DELETE_ORIGIN,
        vec![
            Value::from(project),
            Value::from(file.instructions.path.as_str()),
            Value::from(known.rule_key.as_str()),
        ],
    );
    let mut retire = engram.retire_statements(
        &known.memory.id,
        now,
        HistoryAction::Retired,
        &format!("removed from {}", file.instructions.path),
        ACTOR,
    );
    retire[0] = Statement::with_params(
        sql::RETIRE_UNSOURCED,
        vec![
            Value::from(known.memory.id.as_str()),
            Value::from(project),
            Value::from(now),
        ],
    );
    (dropped, retire)
}

/// A memory another rule of this import merged into is not retired (its retirement
/// statement finds an origin and does nothing): the report says so too.
fn drop_retired_still_sourced(report: &mut ImportReport) {
    let kept: Vec<String> = report
        .files
        .iter()
        .flat_map(|f| f.rules.iter().map(|r| r.id.clone()))
        .collect();
    for file in &mut report.files {
        file.retired.retain(|r| !kept.contains(&r.id));
    }
}
