//! Query analysis: what kind of question this is, which tokens reach FTS5, which code
//! names reach the graph, and whether a short prompt borrows words from recent turns.

pub mod code_names;
mod markdown;
pub mod named_files;
pub mod noise;

use std::collections::HashSet;

use engram_core::query::{self, match_expression_of, token_counts};
use serde::{Deserialize, Serialize};

use self::code_names::names_code;
pub use self::code_names::{identifiers, MAX_IDENTIFIERS};
use self::named_files::named_file_paths;
use self::noise::without_noise;

/// Most tokens a MATCH expression gets.
pub const MAX_MATCH_TOKENS: usize = 32;
/// A prompt with at most this many meaningful tokens is "short" and is enriched from the
/// recent user turns.
pub const SHORT_PROMPT_TOKENS: usize = 3;
/// Most tokens after enrichment (more OR terms dilute a short query).
pub const MAX_ENRICHED_TOKENS: usize = 15;
/// Most recent user turns used for enrichment.
pub const MAX_ENRICHING_TURNS: usize = 3;
/// The graph-path weight of a code name outside the summary line, when the summary line
/// names code ([`QueryAnalysis::identifier_weights`]).
pub const BODY_IDENTIFIER_WEIGHT: f64 = 0.5;

/// What kind of question a query is; it sets the path weights of rank fusion.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QueryType {
    /// Names code: camelCase, snake_case or a path. Keyword and graph lead.
    Identifier,
    /// Natural language. Dense leads.
    Semantic,
    /// Follows impact or dependency questions. Graph leads.
    Structural,
}

/// What the agent runtime knows about the moment of the query; all optional.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct QueryContext {
    /// The last user turns, oldest first (only used to enrich short prompts).
    #[serde(default)]
    pub recent_turns: Vec<String>,
    /// Names of the last tool calls (e.g. `analyze_impact`, `Read`).
    #[serde(default)]
    pub recent_tools: Vec<String>,
    /// Files the agent touched recently; their graph neighbours are candidates.
    #[serde(default)]
    pub recent_files: Vec<String>,
}

/// The analysed query.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct QueryAnalysis {
    /// The detected type.
    pub query_type: QueryType,
    /// Sanitized tokens for the keyword path, most telling first.
    pub tokens: Vec<String>,
    /// The `tokens` that count twice in the keyword path: a long query's summary words that
    /// it also uses as code names (what an issue's title says the report is about).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub emphasized: Vec<String>,
    /// The FTS5 MATCH expression built from [`match_tokens`](Self::match_tokens) only;
    /// `None` when nothing is searchable (no keyword path then).
    #[serde(skip)]
    pub match_expression: Option<String>,
    /// Code names (identifiers, dotted names and their parts) for the graph path.
    pub identifiers: Vec<String>,
    /// The `identifiers` the summary line names (the title of a report): what the report
    /// is about. The rest of a report's names are often the API its example calls to get
    /// there (`DataArray`, `load_dataset`), defined in the project's busiest files.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub summary_identifiers: Vec<String>,
    /// Suffixes of the file paths the query names ([`named_file_paths`]): the graph path
    /// treats the ones that are project files like files the agent touched recently.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub named_files: Vec<String>,
    /// Tokens borrowed from recent turns (empty unless the prompt was short).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub enriched_with: Vec<String>,
    /// The text the dense path embeds: the query, plus the enriching turns if any.
    #[serde(skip)]
    pub dense_text: String,
}

/// Analyses `text` in `context`. Pasted environment listings (`pip list` tables, pin
/// lists, version reports), HTML comments, task lists and a test runner's framing are
/// dropped first ([`without_noise`]): they name packages or repeat an issue template or
/// the runner's banners, not the problem — unless the query is nothing but that, which
/// is then what the user asks about.
///
/// ```
/// use engram_retrieval::{analyze, QueryContext, QueryType};
/// let a = analyze("why does parseConfig fail?", &QueryContext::default());
/// assert_eq!(a.query_type, QueryType::Identifier);
/// assert_eq!(a.identifiers, ["parseConfig"]);
/// let b = analyze("how do we deploy", &QueryContext::default());
/// assert_eq!(b.query_type, QueryType::Semantic);
/// ```
pub fn analyze(text: &str, context: &QueryContext) -> QueryAnalysis {
    let cleaned = without_noise(text);
    let text = if cleaned.chars().any(char::is_alphanumeric) {
        &*cleaned
    } else {
        text
    };
    let query_type = detect_type(text, &context.recent_tools);
    let identifiers = identifiers(text);
    let summary = summary_line(text);
    let TellingTokens {
        mut tokens,
        emphasized,
    } = telling_tokens(text, summary, &identifiers);
    let mut enriched_with = Vec::new();
    let mut dense_text = text.to_owned();
    if tokens.len() <= SHORT_PROMPT_TOKENS && !context.recent_turns.is_empty() {
        let turns: Vec<&String> = context
            .recent_turns
            .iter()
            .rev()
            .take(MAX_ENRICHING_TURNS)
            .collect();
        for turn in &turns {
            for token in query::tokenize(turn) {
                if tokens.len() >= MAX_ENRICHED_TOKENS {
                    break;
                }
                if !tokens.contains(&token) {
                    enriched_with.push(token.clone());
                    tokens.push(token);
                }
            }
        }
        if !enriched_with.is_empty() {
            for turn in turns {
                dense_text.push('\n');
                dense_text.push_str(turn);
            }
        }
    }
    let mut analysis = QueryAnalysis {
        query_type,
        match_expression: None,
        tokens,
        emphasized,
        summary_identifiers: summary
            .map(|line| {
                // Only names that made the cap: the weights cover `identifiers`.
                self::identifiers(line)
                    .into_iter()
                    .filter(|name| identifiers.contains(name))
                    .collect()
            })
            .unwrap_or_default(),
        identifiers,
        named_files: named_file_paths(text),
        enriched_with,
        dense_text,
    };
    analysis.match_expression = match_expression_of(analysis.match_tokens());
    analysis
}

impl QueryAnalysis {
    /// What the keyword path searches for: `tokens`, then `emphasized` once more. FTS5's
    /// BM25 sums over a query's phrases, so a repeated phrase counts twice.
    pub fn match_tokens(&self) -> impl Iterator<Item = &String> {
        self.tokens.iter().chain(&self.emphasized)
    }

    /// Each of [`identifiers`](Self::identifiers) with its weight in the graph path: 1, or
    /// [`BODY_IDENTIFIER_WEIGHT`] for a name outside the summary line when the summary
    /// line names code.
    ///
    /// ```
    /// use engram_retrieval::{analyze, QueryContext};
    /// let a = analyze(
    ///     "`polyval` is wrong for timedelta64\nxr.DataArray(values).polyval()",
    ///     &QueryContext::default(),
    /// );
    /// assert_eq!(a.summary_identifiers, ["polyval"]);
    /// let weights = a.identifier_weights();
    /// assert!(weights.contains(&("polyval", 1.0)));
    /// assert!(weights.contains(&("DataArray", 0.5)));
    /// ```
    pub fn identifier_weights(&self) -> Vec<(&str, f64)> {
        self.identifiers
            .iter()
            .map(|name| {
                let in_summary =
                    self.summary_identifiers.is_empty() || self.summary_identifiers.contains(name);
                let weight = if in_summary {
                    1.0
                } else {
                    BODY_IDENTIFIER_WEIGHT
                };
                (name.as_str(), weight)
            })
            .collect()
    }
}

/// Seeds 000 §7: identifiers (camelCase, snake_case, a path) first; then structural when the
/// agent was just asking the graph; else semantic.
fn detect_type(text: &str, recent_tools: &[String]) -> QueryType {
    if names_code(text) {
        return QueryType::Identifier;
    }
    let structural = recent_tools.iter().any(|tool| {
        let tool: String = tool
            .chars()
            .filter(|c| c.is_alphanumeric())
            .flat_map(char::to_lowercase)
            .collect();
        matches!(
            tool.as_str(),
            "analyzeimpact" | "getdependencies" | "dependencies" | "impact"
        )
    });
    if structural {
        QueryType::Structural
    } else {
        QueryType::Semantic
    }
}

/// A query's keyword tokens, and those among them that count twice.
struct TellingTokens {
    tokens: Vec<String>,
    emphasized: Vec<String>,
}

/// Keyword tokens, at most [`MAX_MATCH_TOKENS`]. A short query keeps its tokens in order;
/// a long one (an issue report, a stack trace) keeps the most telling: the tokens of its
/// summary line (the first line with words, when more lines follow: an issue's title, a
/// commit's subject), then tokens that are part of a code name, then those it repeats,
/// first occurrence breaking ties.
///
/// The summary goes first because a report states its point there once, in plain words,
/// while the body repeats whatever it pastes (code, output, logs): ranked by repetition
/// alone, the title's words lost their places to `def`, `assert` and the test session's
/// banner. On SWE-bench pytest (dev) this took the full pipeline's Acc@5 from 0.68 to 0.74
/// and BM25 alone from 0.56 to 0.62.
///
/// For the same reason a long query's summary words that it also uses as code names
/// (`polyval` in "`polyval` with timedelta64 coordinates produces wrong results") count
/// twice: the title names the API the report is about once, and in an OR of 32 terms the
/// project's everyday words the body pastes (`data`, `values`, `array`) sum past it. On
/// the SWE-bench dev instances of xarray, pylint, requests, seaborn and flask (64) this
/// took the full pipeline's file-localization hits at 1/5/10 from 32/45/50 to 34/47/53 and
/// BM25's from 21/39/48 to 23/43/53; pytest's (34) did not change. Doubling every title
/// word instead cost pytest two hits at 5: "error" and "message" are everyday words there.
fn telling_tokens(text: &str, summary: Option<&str>, identifiers: &[String]) -> TellingTokens {
    let counts = token_counts(text);
    if counts.len() <= MAX_MATCH_TOKENS {
        return TellingTokens {
            tokens: counts.into_iter().map(|(t, _)| t).collect(),
            emphasized: Vec::new(),
        };
    }
    let code_parts: HashSet<String> = identifiers
        .iter()
        .flat_map(|name| query::tokenize(name))
        .collect();
    let summary: HashSet<String> = summary
        .map(query::tokenize)
        .unwrap_or_default()
        .into_iter()
        .collect();
    let mut ranked: Vec<(usize, (bool, u32), String)> = counts
        .into_iter()
        .enumerate()
        .map(|(order, (token, count))| {
            let code = u32::from(code_parts.contains(&token));
            (order, (summary.contains(&token), count + 2 * code), token)
        })
        .collect();
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    ranked.truncate(MAX_MATCH_TOKENS);
    ranked.sort_by_key(|(order, _, _)| *order);
    let tokens: Vec<String> = ranked.into_iter().map(|(_, _, t)| t).collect();
    let emphasized = tokens
        .iter()
        .filter(|t| summary.contains(*t) && code_parts.contains(*t))
        .cloned()
        .collect();
    TellingTokens { tokens, emphasized }
}

/// The first line with a word in it, when another line with words follows; a text of one
/// line has no summary apart from itself.
fn summary_line(text: &str) -> Option<&str> {
    let mut lines = text
        .lines()
        .filter(|line| line.chars().any(char::is_alphanumeric));
    let first = lines.next()?;
    lines.next().map(|_| first)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn context(tools: &[&str], turns: &[&str]) -> QueryContext {
        QueryContext {
            recent_turns: turns.iter().map(|s| s.to_string()).collect(),
            recent_tools: tools.iter().map(|s| s.to_string()).collect(),
            recent_files: vec![],
        }
    }

    /// Fails naming the first of `words` missing from `list`, and the list.
    fn assert_holds(list: &[String], words: &[&str]) {
        for word in words {
            assert!(list.iter().any(|t| t == word), "{word} missing: {list:?}");
        }
    }

    #[test]
    fn types_follow_the_seed_rules() {
        let none = QueryContext::default();
        assert_eq!(
            analyze("max_retries", &none).query_type,
            QueryType::Identifier
        );
        assert_eq!(
            analyze("src/db.rs lock", &none).query_type,
            QueryType::Identifier
        );
        // A slash between two words is prose, not a path.
        assert_eq!(
            analyze("vote up/down on a shorter `--collect-only`", &none).query_type,
            QueryType::Semantic
        );
        assert_eq!(
            analyze("what breaks login", &none).query_type,
            QueryType::Semantic
        );
        let after_impact = context(&["analyze_impact"], &[]);
        assert_eq!(
            analyze("what breaks login", &after_impact).query_type,
            QueryType::Structural
        );
        // Identifiers win over structural context.
        assert_eq!(
            analyze("parseConfig", &after_impact).query_type,
            QueryType::Identifier
        );
    }

    #[test]
    fn short_prompts_borrow_tokens_from_recent_turns() {
        let ctx = context(
            &[],
            &["we use redis for the session cache", "fix the login bug"],
        );
        let a = analyze("fix that", &ctx);
        assert_eq!(a.tokens[0], "fix");
        assert!(a.enriched_with.contains(&"login".to_owned()), "{a:?}");
        assert!(a.enriched_with.contains(&"redis".to_owned()), "{a:?}");
        assert!(a.tokens.len() <= MAX_ENRICHED_TOKENS);
        assert!(a.dense_text.contains("fix the login bug"));
        // A specific prompt is not diluted.
        let b = analyze("postgres connection refused in integration tests", &ctx);
        assert!(b.enriched_with.is_empty());
        assert!(!b.tokens.contains(&"redis".to_owned()));
    }

    #[test]
    fn long_queries_keep_code_and_repeated_tokens() {
        let mut text = String::from("caplog.get_records() and caplog.clear() conflict. ");
        for i in 0..60 {
            text.push_str(&format!("filler{i} "));
        }
        text.push_str("records records records");
        let a = analyze(&text, &QueryContext::default());
        assert_eq!(a.tokens.len(), MAX_MATCH_TOKENS);
        assert_holds(&a.tokens, &["caplog", "getrecords", "records", "clear"]);
        assert!(!a.tokens.contains(&"filler59".to_owned()));
    }

    #[test]
    fn pasted_package_listings_reach_neither_path() {
        let mut report = String::from("caplog.clear() breaks get_records\n```\n");
        for (name, version) in [("attrs", "19.1.0"), ("boto3", "1.9.51"), ("moto", "1.3.7")] {
            report.push_str(&format!("{name}  {version}\n"));
        }
        report.push_str("```\nsee the fixture");
        let a = analyze(&report, &QueryContext::default());
        for noise in ["attrs", "boto3", "moto"] {
            assert!(!a.tokens.contains(&noise.to_owned()), "{:?}", a.tokens);
            assert!(
                !a.identifiers.contains(&noise.to_owned()),
                "{:?}",
                a.identifiers
            );
            assert!(!a.dense_text.contains(noise), "{}", a.dense_text);
        }
        assert_holds(&a.tokens, &["caplog", "fixture"]);
    }

    #[test]
    fn a_query_that_is_only_a_listing_is_searched_as_written() {
        let a = analyze(
            "attrs 19.1.0\nboto3 1.9.51\nsix 1.12.0",
            &QueryContext::default(),
        );
        assert!(a.tokens.contains(&"boto3".to_owned()), "{:?}", a.tokens);
        assert!(a.match_expression.is_some());
        assert!(a.dense_text.contains("boto3"));
    }

    #[test]
    fn a_long_report_keeps_its_summary_line() {
        let mut report = String::from("\n## Flaky teardown ordering with xdist\n");
        for i in 0..40 {
            report.push_str(&format!("body{i} body{i} def assert\n"));
        }
        let a = analyze(&report, &QueryContext::default());
        assert_eq!(a.tokens.len(), MAX_MATCH_TOKENS);
        assert_holds(&a.tokens, &["flaky", "teardown", "ordering", "xdist"]);
        // The title's words come first in the text, so they also lead the tokens.
        assert_eq!(a.tokens[0], "flaky");
        // One long line has no summary apart from itself: repetition decides.
        let line: String = (0..40).map(|i| format!("once{i} ")).collect::<String>() + "twice twice";
        let b = analyze(&line, &QueryContext::default());
        assert!(b.tokens.contains(&"twice".to_owned()), "{:?}", b.tokens);
        assert!(!b.tokens.contains(&"once39".to_owned()));
    }

    #[test]
    fn a_long_reports_title_names_count_twice() {
        let mut report = String::from("`polyval` with timedelta64 coordinates is wrong\n");
        for i in 0..40 {
            report.push_str(&format!("data{i} = xr.polyval(values, coeffs)\n"));
        }
        let a = analyze(&report, &QueryContext::default());
        assert_eq!(a.tokens.len(), MAX_MATCH_TOKENS);
        // `polyval` is a title word the report uses as code; "wrong" is only a word, and
        // `values` is code the title does not mention.
        assert_eq!(a.emphasized, ["polyval"]);
        assert_eq!(a.match_tokens().count(), a.tokens.len() + 1);
        let expression = a.match_expression.expect("expression");
        assert_eq!(expression.matches("\"polyval\"").count(), 2);
        assert_eq!(expression.matches("\"values\"").count(), 1);
        // A query that fits the cap keeps every token once.
        let short = analyze(
            "`polyval` with timedelta64 is wrong\nxr.polyval(values)",
            &QueryContext::default(),
        );
        assert!(short.emphasized.is_empty());
        assert!(short.match_tokens().eq(&short.tokens));
    }

    #[test]
    fn names_outside_a_summary_that_names_code_weigh_half() {
        let weight_of = |text: &str, name: &str| {
            let a = analyze(text, &QueryContext::default());
            let weights = a.identifier_weights();
            assert_eq!(weights.len(), a.identifiers.len());
            weights.iter().find(|(n, _)| *n == name).map(|(_, w)| *w)
        };
        let report = "xr.where(cond, keep_attrs=True) drops attrs\nds = load_dataset('air')";
        assert_eq!(weight_of(report, "keep_attrs"), Some(1.0));
        assert_eq!(weight_of(report, "xr.where"), Some(1.0));
        assert_eq!(
            weight_of(report, "load_dataset"),
            Some(BODY_IDENTIFIER_WEIGHT)
        );
        // A summary without code, or a one-line query, leaves every name whole.
        let prose = "attributes are lost\nds = load_dataset('air')";
        assert_eq!(weight_of(prose, "load_dataset"), Some(1.0));
        assert_eq!(
            weight_of("load_dataset and keep_attrs", "keep_attrs"),
            Some(1.0)
        );
    }
}
