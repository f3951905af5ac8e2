//! Request bodies and response parsing; pure, so every malformed answer is unit-tested.

use engram_http::body_excerpt;
use serde::Deserialize;
use serde_json::json;

use crate::{Protocol, RemoteConfig};

/// The JSON body asking for `texts`.
pub(crate) fn request_body(config: &RemoteConfig, texts: &[String]) -> String {
    let mut body = json!({ "model": config.model, "input": texts });
    if config.protocol == Protocol::OpenAiCompatible {
        body["encoding_format"] = json!("float");
    }
    if config.request_dims {
        body["dimensions"] = json!(config.dims);
    }
    body.to_string()
}

#[derive(Deserialize)]
struct OpenAiAnswer {
    data: Vec<OpenAiItem>,
}

#[derive(Deserialize)]
struct OpenAiItem {
    index: usize,
    embedding: Vec<f32>,
}

#[derive(Deserialize)]
struct OllamaAnswer {
    embeddings: Vec<Vec<f32>>,
}

/// The vectors in a 2xx answer, in input order, checked for count and length.
pub(crate) fn parse_vectors(
    config: &RemoteConfig,
    body: &str,
    expected: usize,
) -> Result<Vec<Vec<f32>>, String> {
    let vectors = match config.protocol {
        Protocol::OpenAiCompatible => {
            let answer: OpenAiAnswer = serde_json::from_str(body).map_err(|e| {
                format!(
                    "provider answered malformed JSON ({e}): {}",
                    body_excerpt(body)
                )
            })?;
            let mut slots: Vec<Option<Vec<f32>>> = vec![None; expected];
            for item in answer.data {
                match slots.get_mut(item.index) {
                    Some(slot @ None) => *slot = Some(item.embedding),
                    _ => {
                        return Err(format!(
                            "provider answered an out-of-range or repeated index {}",
                            item.index
                        ))
                    }
                }
            }
            slots
                .into_iter()
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| format!("provider answered fewer than {expected} vectors"))?
        }
        Protocol::Ollama => {
            let answer: OllamaAnswer = serde_json::from_str(body).map_err(|e| {
                format!(
                    "provider answered malformed JSON ({e}): {}",
                    body_excerpt(body)
                )
            })?;
            answer.embeddings
        }
    };
    if vectors.len() != expected {
        return Err(format!(
            "provider answered {} vectors for {expected} texts",
            vectors.len()
        ));
    }
    for v in &vectors {
        if v.len() != config.dims {
            return Err(format!(
                "provider answered {} dimensions, configured {} (model changed or dims misconfigured)",
                v.len(),
                config.dims
            ));
        }
    }
    Ok(vectors)
}

/// The message of a non-2xx answer.
pub(crate) fn error_message(status: u16, body: &str) -> String {
    #[derive(Deserialize)]
    struct Nested {
        message: String,
    }
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum ErrorField {
        Nested(Nested),
        Plain(String),
    }
    #[derive(Deserialize)]
    struct ErrorAnswer {
        error: ErrorField,
    }
    let detail = match serde_json::from_str::<ErrorAnswer>(body) {
        Ok(ErrorAnswer {
            error: ErrorField::Nested(Nested { message }) | ErrorField::Plain(message),
        }) => message,
        Err(_) => body_excerpt(body).to_owned(),
    };
    format!("provider answered HTTP {status}: {detail}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn openai(dims: usize) -> RemoteConfig {
        RemoteConfig::new(Protocol::OpenAiCompatible, "http://h", "m", dims)
    }

    #[test]
    fn openai_answers_are_put_back_in_input_order() {
        let body = r#"{"data":[{"index":1,"embedding":[3,4]},{"index":0,"embedding":[1,2]}]}"#;
        assert_eq!(
            parse_vectors(&openai(2), body, 2).unwrap(),
            vec![vec![1.0, 2.0], vec![3.0, 4.0]]
        );
    }

    #[test]
    fn malformed_answers_are_errors() {
        for (body, needle) in [
            ("<html>502 Bad Gateway</html>", "malformed JSON"),
            (
                r#"{"data":[{"index":0,"embedding":[1,2,3]},{"index":1,"embedding":[1,2,3]}]}"#,
                "3 dimensions, configured 2",
            ),
            (
                r#"{"data":[{"index":0,"embedding":[1,2]}]}"#,
                "fewer than 2",
            ),
            (
                r#"{"data":[{"index":0,"embedding":[1,2]},{"index":0,"embedding":[1,2]}]}"#,
                "repeated",
            ),
            (
                r#"{"data":[{"index":0,"embedding":["a",2]}]}"#,
                "malformed JSON",
            ),
        ] {
            let err = parse_vectors(&openai(2), body, 2).unwrap_err();
            assert!(err.contains(needle), "{body}: {err}");
        }
        let ollama = RemoteConfig::new(Protocol::Ollama, "http://h", "m", 2);
        let err = parse_vectors(&ollama, r#"{"embeddings":[[1,2]]}"#, 2).unwrap_err();
        assert!(err.contains("1 vectors for 2 texts"), "{err}");
    }

    #[test]
    fn error_bodies_of_both_protocols_are_read() {
        assert_eq!(
            error_message(401, r#"{"error":{"message":"bad key","type":"x"}}"#),
            "provider answered HTTP 401: bad key"
        );
        assert_eq!(
            error_message(404, r#"{"error":"model \"x\" not found"}"#),
            "provider answered HTTP 404: model \"x\" not found"
        );
        assert_eq!(
            error_message(502, "oops"),
            "provider answered HTTP 502: oops"
        );
    }

    #[test]
    fn request_dims_only_when_asked() {
        let mut c = openai(256);
        assert!(!request_body(&c, &["a".into()]).contains("dimensions"));
        c.request_dims = true;
        assert!(request_body(&c, &["a".into()]).contains(r#""dimensions":256"#));
    }
}
