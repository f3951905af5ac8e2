//! The secrets suite: every format of the corpus goes in through every kind of write (a
//! memory's fields, the observer's tool calls, results, errors and reasoning, a search),
//! then every table of the database (the keyword index's shadow tables and its vocabulary
//! included) and every answer is searched for any piece of any secret.

use engram::observer::{
    Event, Outcome, PathNormalizer, Scratchpad, SessionKind, ToolCall, ToolResult,
};
use engram::{Engram, MemoryType, NewMemory, SearchQuery};
use engram_store::{Database, Statement, Value};
use serde_json::json;

/// The secrets corpus: realistic, fake secrets of every format, each in context.
pub const CORPUS: &str = include_str!("../../../tests/secrets/corpus.json");

/// What the suite wrote and searched.
#[derive(Debug, Default)]
pub struct SecretsReport {
    /// Formats in the corpus.
    pub formats: usize,
    /// Tables read back (shadow tables included).
    pub tables: usize,
    /// Rows read back.
    pub rows: usize,
    /// Answers (gets and searches) checked.
    pub answers: usize,
}

#[derive(serde::Deserialize)]
struct Corpus {
    cases: Vec<Case>,
}

#[derive(serde::Deserialize)]
struct Case {
    name: String,
    secret: String,
    text: String,
}

/// Runs the suite on `engram`, reading the tables back through `db` (the same database).
/// Fails naming the secret's format and the table or answer that holds a piece of it.
pub async fn secrets_suite<D: Database, R: Database>(
    engram: &Engram<D>,
    db: &R,
) -> Result<SecretsReport, String> {
    let corpus: Corpus = serde_json::from_str(CORPUS).map_err(|e| e.to_string())?;
    let mut report = SecretsReport {
        formats: corpus.cases.len(),
        ..SecretsReport::default()
    };
    let mut answers = Vec::new();
    for (i, case) in corpus.cases.iter().enumerate() {
        let stored = engram
            .remember(memory_of(i, case))
            .await
            .map_err(|e| format!("{}: remember failed: {e}", case.name))?;
        let memory = engram.get(&stored.id).await.map_err(|e| e.to_string())?;
        answers.push(serde_json::to_string(&memory).map_err(|e| e.to_string())?);
        let query = SearchQuery::new(format!("secretcase{i} {}", case.text));
        let response = engram.search(&query).await.map_err(|e| e.to_string())?;
        if response.hits.is_empty() {
            return Err(format!("{}: the memory was not found again", case.name));
        }
        answers.push(serde_json::to_string(&response).map_err(|e| e.to_string())?);
    }
    let pad = observed_session(&corpus.cases);
    engram
        .checkpoint_session(&pad)
        .await
        .map_err(|e| format!("checkpoint failed: {e}"))?;
    let session = engram
        .finalize_session(&pad, Outcome::Failure)
        .await
        .map_err(|e| format!("finalize failed: {e}"))?;
    answers.push(serde_json::to_string(&session.promoted).map_err(|e| e.to_string())?);
    report.answers = answers.len();

    let (tables, terms) = dump(db, &mut report).await?;
    let pieces = Pieces::of(&corpus.cases);
    let answers = answers
        .iter()
        .enumerate()
        .map(|(i, a)| (format!("answer {i}"), a));
    let tables = tables
        .iter()
        .map(|(name, text)| (format!("table {name}"), text));
    for (place, text) in tables.chain(answers) {
        if let Some((case, piece)) = pieces.find(text) {
            return Err(format!(
                "{}: {place} holds {piece:?}",
                corpus.cases[case].name
            ));
        }
    }
    for case in &corpus.cases {
        let secret = case.secret.to_lowercase();
        if let Some(term) = terms.iter().find(|t| t.len() >= 10 && secret.contains(*t)) {
            return Err(format!(
                "{}: the keyword index has the term {term:?}",
                case.name
            ));
        }
    }
    Ok(report)
}

/// A memory with the case in every field that takes free text of its length.
fn memory_of(i: usize, case: &Case) -> NewMemory {
    let mut memory = NewMemory::new(MemoryType::Gotcha, format!("secretcase{i}: {}", case.text));
    let one_line = !case.text.contains('\n');
    if one_line && case.text.chars().count() <= 128 {
        memory.tags = vec![format!("secretcase{i}"), case.text.clone()];
        memory.related_modules = vec![case.text.clone()];
        memory.provenance_session_ids = vec![case.text.clone()];
        memory.session_id = Some(case.text.clone());
        memory.methodology = Some(case.text.clone());
    }
    // A path holds a bare secret: only formats that are recognisable without context.
    let bare = engram_core::secrets::SecretScanner::shared()
        .is_ok_and(|scanner| !scanner.scan(&case.secret).is_empty());
    if bare && one_line && !case.secret.contains(['/', ' ']) {
        memory.related_files = vec![format!("config/{}/settings.env", case.secret)];
    }
    memory
}

/// A failed session whose tool calls, results, errors and reasoning carry every secret.
fn observed_session(cases: &[Case]) -> Scratchpad {
    let mut pad = Scratchpad::new(
        "secrets-session",
        SessionKind::Build,
        PathNormalizer::new(["/repo"]),
    );
    for (i, case) in cases.iter().enumerate() {
        let step = i as u32 + 1;
        let id = format!("c{step}");
        let calls = [
            (
                "Bash",
                json!({ "command": format!("deploy --env {}", case.text) }),
            ),
            ("Grep", json!({ "pattern": case.text, "path": "/repo/src" })),
            ("Read", json!({ "file_path": format!("/repo/src/{i}.env") })),
        ];
        for (tool, input) in calls {
            pad.observe(&Event::ToolCall(ToolCall {
                step,
                id: Some(id.clone()),
                tool: tool.into(),
                input,
                at_ms: None,
            }));
            pad.observe(&Event::ToolResult(ToolResult {
                step,
                id: Some(id.clone()),
                output: format!("Error: connection refused for {}\nexit 1", case.text),
                is_error: true,
            }));
        }
        pad.observe(&Event::Reasoning {
            step,
            text: format!("Lesson: never use {} directly, it fails", case.text),
        });
    }
    pad
}

/// Every table's rows as text, and the keyword index's terms.
async fn dump<R: Database>(
    db: &R,
    report: &mut SecretsReport,
) -> Result<(Vec<(String, String)>, Vec<String>), String> {
    let names = db
        .transaction(&[Statement::new(
            "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name",
        )])
        .await
        .map_err(|e| e.to_string())?;
    let names: Vec<String> = names[0]
        .rows
        .iter()
        .filter_map(|row| match row.first() {
            Some(Value::Text(name)) => Some(name.clone()),
            _ => None,
        })
        .collect();
    let mut tables = Vec::new();
    for name in names {
        let sql = format!("SELECT * FROM \"{}\"", name.replace('"', "\"\""));
        let rows = db
            .transaction(&[Statement::new(sql)])
            .await
            .map_err(|e| format!("reading {name}: {e}"))?;
        let mut text = String::new();
        for row in &rows[0].rows {
            report.rows += 1;
            for value in row {
                match value {
                    Value::Text(t) => text.push_str(t),
                    Value::Blob(b) => text.push_str(&String::from_utf8_lossy(b)),
                    _ => {}
                }
                text.push('\u{1f}');
            }
        }
        tables.push((name, text));
    }
    report.tables = tables.len();
    let vocab = db
        .transaction(&[Statement::new("SELECT term FROM memories_fts_vocab")])
        .await
        .map_err(|e| format!("reading the keyword vocabulary: {e}"))?;
    let terms = vocab[0]
        .rows
        .iter()
        .filter_map(|row| match row.first() {
            Some(Value::Text(term)) => Some(term.clone()),
            _ => None,
        })
        .collect();
    Ok((tables, terms))
}

/// Every run of [`Pieces::LEN`] bytes of every secret, to find any of them in one pass
/// over a text.
struct Pieces<'a> {
    owner: std::collections::HashMap<&'a [u8], usize>,
}

impl<'a> Pieces<'a> {
    const LEN: usize = 10;

    fn of(cases: &'a [Case]) -> Self {
        let mut owner = std::collections::HashMap::new();
        for (i, case) in cases.iter().enumerate() {
            let secret = case.secret.as_bytes();
            for piece in secret.windows(Self::LEN.min(secret.len())) {
                owner.entry(piece).or_insert(i);
            }
        }
        Pieces { owner }
    }

    /// The case and the piece of its secret that `text` holds, if any.
    fn find(&self, text: &str) -> Option<(usize, String)> {
        text.as_bytes().windows(Self::LEN).find_map(|window| {
            let case = *self.owner.get(window)?;
            Some((case, String::from_utf8_lossy(window).into_owned()))
        })
    }
}
