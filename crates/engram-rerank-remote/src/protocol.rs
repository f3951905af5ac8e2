//! Request bodies and answer parsing; pure, so every malformed answer is unit-tested.

use engram_http::body_excerpt;
use serde::Deserialize;
use serde_json::json;

use crate::{RerankConfig, RerankProtocol};

/// The JSON body asking for scores of `documents` against `query`.
pub(crate) fn request_body(config: &RerankConfig, query: &str, documents: &[String]) -> String {
    let mut body = match config.protocol {
        RerankProtocol::Cohere => json!({ "query": query, "documents": documents }),
        // TEI rejects inputs longer than its model's window unless asked to truncate.
        RerankProtocol::Tei => json!({ "query": query, "texts": documents, "truncate": true }),
    };
    if let Some(model) = &config.model {
        body["model"] = json!(model);
    }
    body.to_string()
}

#[derive(Deserialize)]
struct Scored {
    index: usize,
    #[serde(alias = "relevance_score")]
    score: f64,
}

#[derive(Deserialize)]
struct CohereAnswer {
    #[serde(alias = "data")]
    results: Vec<Scored>,
}

/// The scores in a 2xx answer, in document order: exactly one finite score per document.
pub(crate) fn parse_scores(
    protocol: RerankProtocol,
    body: &str,
    expected: usize,
) -> Result<Vec<f64>, String> {
    let malformed = |e: serde_json::Error| {
        format!(
            "rerank service answered malformed JSON ({e}): {}",
            body_excerpt(body)
        )
    };
    let scored = match protocol {
        RerankProtocol::Cohere => {
            serde_json::from_str::<CohereAnswer>(body)
                .map_err(malformed)?
                .results
        }
        RerankProtocol::Tei => serde_json::from_str::<Vec<Scored>>(body).map_err(malformed)?,
    };
    let mut scores: Vec<Option<f64>> = vec![None; expected];
    for item in scored {
        match scores.get_mut(item.index) {
            Some(slot @ None) if item.score.is_finite() => *slot = Some(item.score),
            Some(None) => {
                return Err(format!(
                    "rerank service answered a non-finite score for document {}",
                    item.index
                ))
            }
            _ => {
                return Err(format!(
                    "rerank service answered an out-of-range or repeated index {}",
                    item.index
                ))
            }
        }
    }
    let found = scores.iter().filter(|s| s.is_some()).count();
    scores
        .into_iter()
        .collect::<Option<Vec<f64>>>()
        .ok_or_else(|| {
            format!(
                "rerank service scored {found} of {expected} documents (is top_n set on a proxy?)"
            )
        })
}

/// What a non-2xx answer says: the service's own message when it sent one
/// (`{"message"}` from Cohere, `{"error"}` from TEI, `{"detail"}` from Jina and vLLM).
pub(crate) fn error_message(status: u16, body: &str) -> String {
    let detail = serde_json::from_str::<serde_json::Value>(body)
        .ok()
        .and_then(|v| {
            ["message", "error", "detail"].iter().find_map(|key| {
                let field = v.get(key)?;
                field
                    .as_str()
                    .or_else(|| field.get("message").and_then(|m| m.as_str()))
                    .map(str::to_owned)
            })
        })
        .unwrap_or_else(|| body_excerpt(body).to_owned());
    format!("rerank service answered HTTP {status}: {detail}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn docs(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("doc {i}")).collect()
    }

    #[test]
    fn bodies_follow_each_protocol() {
        let mut config = RerankConfig::new(RerankProtocol::Cohere, "http://x");
        config.model = Some("rerank-v3.5".into());
        let body: serde_json::Value =
            serde_json::from_str(&request_body(&config, "q", &docs(2))).unwrap();
        assert_eq!(
            body,
            json!({"model": "rerank-v3.5", "query": "q", "documents": ["doc 0", "doc 1"]})
        );
        let config = RerankConfig::new(RerankProtocol::Tei, "http://x");
        let body: serde_json::Value =
            serde_json::from_str(&request_body(&config, "q", &docs(1))).unwrap();
        assert_eq!(
            body,
            json!({"query": "q", "texts": ["doc 0"], "truncate": true})
        );
    }

    #[test]
    fn scores_come_back_in_document_order() {
        let cohere = r#"{"id":"x","results":[{"index":1,"relevance_score":0.9},{"index":0,"relevance_score":0.1}]}"#;
        assert_eq!(
            parse_scores(RerankProtocol::Cohere, cohere, 2),
            Ok(vec![0.1, 0.9])
        );
        let voyage = r#"{"object":"list","data":[{"index":0,"relevance_score":0.5}]}"#;
        assert_eq!(
            parse_scores(RerankProtocol::Cohere, voyage, 1),
            Ok(vec![0.5])
        );
        let tei = r#"[{"index":1,"score":3.5},{"index":0,"score":-2.0}]"#;
        assert_eq!(
            parse_scores(RerankProtocol::Tei, tei, 2),
            Ok(vec![-2.0, 3.5])
        );
    }

    #[test]
    fn malformed_answers_are_errors() {
        let cases = [
            (
                RerankProtocol::Cohere,
                "<html>busy</html>",
                "malformed JSON",
            ),
            (
                RerankProtocol::Cohere,
                r#"{"results":[{"index":0,"relevance_score":0.1}]}"#,
                "scored 1 of 2",
            ),
            (
                RerankProtocol::Cohere,
                r#"{"results":[{"index":0,"relevance_score":0.1},{"index":0,"relevance_score":0.2}]}"#,
                "repeated index 0",
            ),
            (
                RerankProtocol::Tei,
                r#"[{"index":0,"score":1},{"index":7,"score":1}]"#,
                "out-of-range or repeated index 7",
            ),
            (
                RerankProtocol::Tei,
                r#"[{"index":0,"score":1},{"index":1,"score":"high"}]"#,
                "malformed JSON",
            ),
            (RerankProtocol::Tei, r#"{"results":[]}"#, "malformed JSON"),
        ];
        for (protocol, body, expected) in cases {
            let error = parse_scores(protocol, body, 2).unwrap_err();
            assert!(error.contains(expected), "{body}: {error}");
        }
    }

    #[test]
    fn error_answers_name_the_cause() {
        assert_eq!(
            error_message(401, r#"{"message":"invalid api token"}"#),
            "rerank service answered HTTP 401: invalid api token"
        );
        assert_eq!(
            error_message(
                413,
                r#"{"error":"Input validation error","error_type":"Validation"}"#
            ),
            "rerank service answered HTTP 413: Input validation error"
        );
        assert_eq!(
            error_message(422, r#"{"detail":{"message":"model not found"}}"#),
            "rerank service answered HTTP 422: model not found"
        );
        assert!(error_message(502, &"x".repeat(500)).len() < 260);
    }
}
