//! The instance side of resident keywords: which memories a search passes into its
//! statement with their scores, and how the memory changes the statement returns update
//! the postings.

use engram_retrieval::keyword_index::{KeywordColumns, KeywordIndex, ScoreScratch};
use engram_store::Value;

use super::resident::CHANGE_BATCH;

/// Memories picked per keyword candidate kept, as FTS5's fast form takes them: the best
/// `4 × limit` matches are filtered, and when at least `limit` survive they are the
/// filtered top `limit`.
pub(super) const KEYWORD_OVERFETCH: usize = 4;

/// An instance's keyword postings and whether they have caught up with the change log.
#[derive(Debug, Default)]
pub(crate) struct ResidentKeywords {
    /// The postings.
    pub(crate) index: KeywordIndex,
    /// False until a statement returned fewer changes than [`CHANGE_BATCH`]: the index may
    /// then miss memories, so searches pick nothing and FTS5 answers.
    caught_up: bool,
    /// The picks' score accumulators, kept between searches.
    scratch: ScoreScratch,
}

impl ResidentKeywords {
    /// Applies the changes one statement read after the index's position; a full batch
    /// means more may be waiting. The log keeps each memory's latest change only, so
    /// changes at or below the position (from an overlapping, older statement) are skipped.
    pub(super) fn apply(&mut self, changes: Vec<TextChange>) {
        self.caught_up = changes.len() < CHANGE_BATCH;
        let applied = self.index.seq();
        for change in changes.into_iter().filter(|c| c.seq > applied) {
            match &change.text {
                Some(text) => self.index.upsert(
                    &change.id,
                    KeywordColumns {
                        content: &text.content,
                        tags: &text.tags,
                        files: &text.files,
                        project: &text.project,
                    },
                ),
                None => {
                    self.index.remove(&change.id);
                }
            }
            self.index.advance_to(change.seq);
        }
    }
}

/// A memory change read with the candidates: the memory's indexed text now, or `None` when
/// it is no longer in the keyword table (forgotten or deleted).
pub(super) struct TextChange {
    pub(super) id: String,
    pub(super) seq: i64,
    pub(super) text: Option<IndexedText>,
}

/// A memory's text as the keyword table holds it, and its project.
pub(super) struct IndexedText {
    pub(super) content: String,
    /// Tags joined by spaces.
    pub(super) tags: String,
    /// Related files joined by spaces.
    pub(super) files: String,
    /// The memory's project id.
    pub(super) project: String,
}

impl IndexedText {
    /// The keyword table's text of a memory from its stored columns (tags and files are JSON
    /// arrays, written to the table joined by spaces; a value that is not a JSON array of
    /// strings is taken as written).
    pub(super) fn from_columns(content: String, tags: &str, files: &str, project: String) -> Self {
        fn joined(json: &str) -> String {
            serde_json::from_str::<Vec<String>>(json)
                .map(|items| items.join(" "))
                .unwrap_or_else(|_| json.to_owned())
        }
        IndexedText {
            content,
            tags: joined(tags),
            files: joined(files),
            project,
        }
    }
}

/// The keyword tokens that reach the MATCH, each with the one term FTS5 searches for it
/// (folded as `unicode61` folds it, then stemmed), or `None` when FTS5 reads the token as a
/// phrase of several terms, or of none. Computed once per search: the resident pick ranks
/// these terms and the statement's common-term rule looks them up.
pub(super) struct MatchTerms<'a>(Vec<(&'a str, Option<String>)>);

impl<'a> MatchTerms<'a> {
    /// The terms of the analysis's match tokens.
    pub(super) fn of(tokens: impl IntoIterator<Item = &'a String>) -> Self {
        MatchTerms(
            tokens
                .into_iter()
                .filter(|t| engram_core::query::is_match_token(t))
                .map(|t| (t.as_str(), single_term(t)))
                .collect(),
        )
    }

    /// `[[token, term], …]` as the statement's `?TERMS` takes it (a phrase's term is null,
    /// and its frequency is not looked up).
    pub(super) fn param(&self) -> Value {
        Value::from(serde_json::to_string(&self.0).unwrap_or_else(|_| "[]".into()))
    }

    /// Every token's term, or `None` if a token is a phrase.
    fn single_terms(&self) -> Option<Vec<&str>> {
        self.0.iter().map(|(_, term)| term.as_deref()).collect()
    }
}

/// The one term FTS5 searches for a quoted query token, or `None` when it reads the token as
/// a phrase of several terms, or of none.
fn single_term(token: &str) -> Option<String> {
    let mut terms = Vec::with_capacity(1);
    engram_core::fts_terms::for_each_term(token, |t| terms.push(t.to_owned()));
    match terms.len() {
        1 => terms.pop(),
        _ => None,
    }
}

/// The memories the resident keywords rank best for one query, with their scores, passed
/// to the statement; `None` when the index cannot answer (still loading, or a query token
/// FTS5 would not read as exactly one term) and FTS5 does.
pub(super) struct KeywordPick {
    pub(super) scored: Option<Vec<(String, f64)>>,
    /// The change position of the index the pick came from.
    pub(super) seq: i64,
}

impl KeywordPick {
    /// The pick for a query of `terms` (from the analysis's tokens, whose quoted, OR-ed list
    /// is the MATCH expression) keeping `limit` keyword candidates. It mirrors the statement's
    /// FTS5 fast form: the tokens whose stems are in fewer than half the memories (all of
    /// them if none is), their best [`KEYWORD_OVERFETCH`] × `limit` matches in `project`
    /// (the statement keeps only its memories, so the pick holds no others).
    pub(super) fn from(
        resident: &mut ResidentKeywords,
        terms: &MatchTerms,
        limit: usize,
        project: &str,
    ) -> Self {
        let seq = resident.index.seq();
        // A phrase (`max_retries` reads as `max retries`) needs term positions, which the
        // index does not keep: FTS5 answers such a query.
        let Some(terms) = terms.single_terms().filter(|_| resident.caught_up) else {
            return KeywordPick { scored: None, seq };
        };
        let query = resident.index.informative(&terms);
        let scored = resident
            .index
            .best_with(
                &query,
                KEYWORD_OVERFETCH * limit,
                Some(project),
                &mut resident.scratch,
            )
            .into_iter()
            .map(|(id, score)| (id.to_owned(), score))
            .collect();
        KeywordPick {
            scored: Some(scored),
            seq,
        }
    }

    /// No pick, from an index at `seq`: FTS5 answers.
    #[cfg(feature = "test-support")]
    pub(super) fn none(seq: i64) -> Self {
        KeywordPick { scored: None, seq }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn added(id: &str, seq: i64, content: &str) -> TextChange {
        TextChange {
            id: id.to_owned(),
            seq,
            text: Some(IndexedText::from_columns(
                content.to_owned(),
                "[]",
                "[]",
                "p".into(),
            )),
        }
    }

    #[test]
    fn tags_and_files_are_joined_as_the_table_has_them() {
        let text = IndexedText::from_columns(
            "c".into(),
            r#"["db","lock wait"]"#,
            r#"["src/a.rs"]"#,
            "p".into(),
        );
        assert_eq!(text.tags, "db lock wait");
        assert_eq!(text.files, "src/a.rs");
        assert_eq!(
            IndexedText::from_columns("c".into(), "oops", "", "p".into()).tags,
            "oops"
        );
    }

    #[test]
    fn a_pick_waits_for_the_index_and_declines_what_fts5_reads_otherwise() {
        let mut resident = ResidentKeywords::default();
        let tokens = |list: &[&str]| list.iter().map(|t| t.to_string()).collect::<Vec<_>>();
        assert!(
            KeywordPick::from(&mut resident, &MatchTerms::of(&tokens(&["lock"])), 2, "p")
                .scored
                .is_none()
        );
        resident.apply(vec![
            added("a", 1, "database lock timeout"),
            added("b", 2, "lock files"),
            added("c", 3, "unrelated"),
            added("d", 4, "another row"),
            added("e", 5, "more rows"),
            added("f", 6, "rows again"),
        ]);
        let pick = KeywordPick::from(
            &mut resident,
            &MatchTerms::of(&tokens(&["locks", "timeout"])),
            2,
            "p",
        );
        assert_eq!(pick.seq, 6);
        let ids: Vec<&str> = pick
            .scored
            .as_ref()
            .unwrap()
            .iter()
            .map(|s| s.0.as_str())
            .collect();
        assert_eq!(ids, ["a", "b"]);
        // A phrase is left to FTS5; a token of another script is one folded term.
        for declined in [&["max_retries"][..], &["lock", "max_retries"]] {
            assert!(
                KeywordPick::from(&mut resident, &MatchTerms::of(&tokens(declined)), 2, "p")
                    .scored
                    .is_none()
            );
        }
        resident.apply(vec![added("g", 7, "Réservations au café")]);
        let pick = KeywordPick::from(
            &mut resident,
            &MatchTerms::of(&tokens(&["CAFÉ", "réservation"])),
            2,
            "p",
        );
        assert_eq!(pick.scored.unwrap()[0].0, "g");
        assert_eq!(single_term("Réservations").as_deref(), Some("reserv"));
        assert_eq!(single_term("\u{301}"), None);
        // Removal and an older snapshot arriving late.
        resident.apply(vec![TextChange {
            id: "a".into(),
            seq: 8,
            text: None,
        }]);
        resident.apply(vec![added("a", 3, "database lock timeout")]);
        assert!(!resident.index.contains("a"));
        assert_eq!(resident.index.seq(), 8);
        // Another project's memory is never picked for this one, and only it for its own.
        let mut other = added("h", 9, "database lock timeout");
        if let Some(text) = other.text.as_mut() {
            text.project = "q".into();
        }
        resident.apply(vec![other]);
        let lock_tokens = tokens(&["lock", "timeout"]);
        let lock = MatchTerms::of(&lock_tokens);
        let mut picked = |project| {
            KeywordPick::from(&mut resident, &lock, 2, project)
                .scored
                .unwrap()
                .into_iter()
                .map(|s| s.0)
                .collect::<Vec<_>>()
        };
        assert_eq!(picked("p"), ["b"]);
        assert_eq!(picked("q"), ["h"]);
    }
}
