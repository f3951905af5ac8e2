//! Hrana-over-HTTP JSON types (pipeline endpoint, protocol versions 2 and 3).
//!
//! Both directions are modelled so a server (engram's test server) and the client share
//! one definition. Integers travel as strings, floats as numbers, blobs as base64 with or
//! without padding (servers differ; both are accepted).

use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig};
use base64::engine::DecodePaddingMode;
use base64::Engine;
use serde::{Deserialize, Serialize, Serializer};

use engram_store::Value;

mod decode;

const BASE64: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    GeneralPurposeConfig::new()
        .with_encode_padding(false)
        .with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// The body of `POST /v{2,3}/pipeline`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PipelineRequest {
    /// The stream to continue, `None` to open a new one.
    pub baton: Option<String>,
    /// Requests executed in order on the stream.
    pub requests: Vec<StreamRequest>,
}

/// The answer to a pipeline request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PipelineResponse {
    /// The baton for the next request on this stream; `None` once it is closed.
    pub baton: Option<String>,
    /// Where later requests on this stream must go, when the server says so.
    #[serde(default)]
    pub base_url: Option<String>,
    /// One result per request.
    pub results: Vec<StreamResult>,
}

/// One request on a stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum StreamRequest {
    /// Execute one statement.
    Execute {
        /// The statement.
        stmt: Stmt,
    },
    /// Execute conditional steps.
    Batch {
        /// The batch.
        batch: Batch,
    },
    /// Execute a semicolon-separated script without results.
    Sequence {
        /// The SQL text.
        #[serde(default)]
        sql: Option<String>,
    },
    /// Ask whether the stream is outside a transaction (v3).
    GetAutocommit,
    /// Close the stream.
    Close,
}

/// A statement with its arguments.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Stmt {
    /// SQL text.
    pub sql: String,
    /// Positional arguments.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<HranaValue>,
    /// Named arguments (cannot be mixed with positional ones).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub named_args: Vec<NamedArg>,
    /// Whether rows should be returned.
    #[serde(default = "yes")]
    pub want_rows: bool,
}

fn yes() -> bool {
    true
}

/// A named argument.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NamedArg {
    /// The name including its sigil (`:name`, `@name`, `$name`).
    pub name: String,
    /// The value.
    pub value: HranaValue,
}

/// A batch of conditional steps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Batch {
    /// The steps.
    pub steps: Vec<BatchStep>,
}

/// One step of a batch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BatchStep {
    /// The statement.
    pub stmt: Stmt,
    /// Run only if this holds; always run when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub condition: Option<BatchCond>,
}

/// A condition on earlier steps of a batch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum BatchCond {
    /// Step `step` ran and succeeded.
    Ok {
        /// Step index.
        step: u32,
    },
    /// Step `step` ran and failed.
    Error {
        /// Step index.
        step: u32,
    },
    /// Negation.
    Not {
        /// The condition negated.
        cond: Box<BatchCond>,
    },
    /// All hold.
    And {
        /// The conditions.
        conds: Vec<BatchCond>,
    },
    /// Any holds.
    Or {
        /// The conditions.
        conds: Vec<BatchCond>,
    },
    /// The stream is in autocommit mode (v3).
    IsAutocommit,
}

/// The result of one request. Decoded without buffering (see `decode`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum StreamResult {
    /// It succeeded.
    Ok {
        /// What it returned.
        response: StreamResponse,
    },
    /// It failed.
    Error {
        /// Why.
        error: HranaError,
    },
}

/// A successful response to one request. Decoded without buffering (see `decode`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum StreamResponse {
    /// Result of `execute`.
    Execute {
        /// The statement result.
        result: StmtResult,
    },
    /// Result of `batch`.
    Batch {
        /// The batch result.
        result: BatchResult,
    },
    /// Result of `sequence`.
    Sequence,
    /// Result of `get_autocommit`.
    GetAutocommit {
        /// Whether the stream is outside a transaction.
        is_autocommit: bool,
    },
    /// Result of `close`.
    Close,
}

/// What a statement returned.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct StmtResult {
    /// Columns.
    #[serde(default)]
    pub cols: Vec<Col>,
    /// Rows.
    #[serde(default)]
    pub rows: Vec<Vec<HranaValue>>,
    /// Rows changed.
    #[serde(default)]
    pub affected_row_count: u64,
    /// The last inserted rowid, as a decimal string.
    #[serde(default)]
    pub last_insert_rowid: Option<String>,
}

/// A result column.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Col {
    /// Its name.
    pub name: Option<String>,
    /// Its declared type.
    #[serde(default)]
    pub decltype: Option<String>,
}

/// What a batch returned: per step, a result or an error (or neither if it did not run).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct BatchResult {
    /// Results of steps that succeeded.
    pub step_results: Vec<Option<StmtResult>>,
    /// Errors of steps that failed.
    pub step_errors: Vec<Option<HranaError>>,
}

/// An error reported by the server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HranaError {
    /// Human-readable message.
    pub message: String,
    /// Machine-readable code.
    #[serde(default)]
    pub code: Option<String>,
}

/// A value on the wire.
#[derive(Debug, Clone, PartialEq)]
pub struct HranaValue(pub Value);

/// A value's wire form, for encoding (decoding is `decode`'s, which needs no buffering).
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum WireValue<'a> {
    Null,
    Integer { value: IntegerText },
    Float { value: f64 },
    Text { value: &'a str },
    Blob { base64: String },
}

/// An integer sent as a decimal string.
struct IntegerText(i64);

impl Serialize for IntegerText {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0.to_string())
    }
}

impl Serialize for HranaValue {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let wire = match &self.0 {
            Value::Null => WireValue::Null,
            Value::Integer(v) => WireValue::Integer {
                value: IntegerText(*v),
            },
            Value::Float(v) => WireValue::Float { value: *v },
            Value::Text(v) => WireValue::Text { value: v },
            Value::Blob(v) => WireValue::Blob {
                base64: BASE64.encode(v),
            },
        };
        wire.serialize(s)
    }
}

impl Stmt {
    /// A statement from engram's storage type.
    pub fn from_statement(statement: &engram_store::Statement, want_rows: bool) -> Self {
        Stmt {
            sql: statement.sql.clone(),
            args: statement.params.iter().cloned().map(HranaValue).collect(),
            named_args: Vec::new(),
            want_rows,
        }
    }
}

impl StmtResult {
    /// Converts to engram's storage type.
    pub fn into_rows(self) -> Result<engram_store::Rows, engram_store::StoreError> {
        let last_insert_rowid = match self.last_insert_rowid {
            None => None,
            Some(text) => Some(text.parse().map_err(|_| {
                engram_store::StoreError::Protocol(format!("invalid last_insert_rowid {text:?}"))
            })?),
        };
        Ok(engram_store::Rows {
            columns: self
                .cols
                .into_iter()
                .map(|c| c.name.unwrap_or_default())
                .collect(),
            rows: self
                .rows
                .into_iter()
                .map(|row| row.into_iter().map(|v| v.0).collect())
                .collect(),
            affected_row_count: self.affected_row_count,
            last_insert_rowid,
        })
    }
}

impl From<HranaError> for engram_store::SqlError {
    fn from(e: HranaError) -> Self {
        engram_store::SqlError {
            message: e.message,
            code: e.code,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roundtrip(json: &str) -> Value {
        serde_json::from_str::<HranaValue>(json).unwrap().0
    }

    #[test]
    fn values_decode_every_wire_form() {
        assert_eq!(roundtrip(r#"{"type":"null"}"#), Value::Null);
        assert_eq!(
            roundtrip(r#"{"type":"integer","value":"-9223372036854775808"}"#),
            Value::Integer(i64::MIN)
        );
        assert_eq!(
            roundtrip(r#"{"type":"integer","value":42}"#),
            Value::Integer(42)
        );
        assert_eq!(
            roundtrip(r#"{"type":"float","value":1.5}"#),
            Value::Float(1.5)
        );
        assert_eq!(
            roundtrip(r#"{"type":"blob","base64":"AAEC"}"#),
            Value::Blob(vec![0, 1, 2])
        );
        assert_eq!(
            roundtrip(r#"{"type":"blob","base64":"AAE"}"#),
            Value::Blob(vec![0, 1])
        );
        assert_eq!(
            roundtrip(r#"{"type":"blob","base64":"AAE="}"#),
            Value::Blob(vec![0, 1])
        );
        assert!(serde_json::from_str::<HranaValue>(r#"{"type":"integer","value":"x"}"#).is_err());
    }

    #[test]
    fn integers_are_sent_as_strings() {
        let json = serde_json::to_string(&HranaValue(Value::Integer(7))).unwrap();
        assert_eq!(json, r#"{"type":"integer","value":"7"}"#);
    }

    #[test]
    fn requests_serialize_as_the_protocol_says() {
        let req = PipelineRequest {
            baton: None,
            requests: vec![
                StreamRequest::Batch {
                    batch: Batch {
                        steps: vec![BatchStep {
                            stmt: Stmt {
                                sql: "SELECT 1".into(),
                                ..Stmt::default()
                            },
                            condition: Some(BatchCond::Not {
                                cond: Box::new(BatchCond::Ok { step: 0 }),
                            }),
                        }],
                    },
                },
                StreamRequest::Close,
            ],
        };
        assert_eq!(
            serde_json::to_string(&req).unwrap(),
            r#"{"baton":null,"requests":[{"type":"batch","batch":{"steps":[{"stmt":{"sql":"SELECT 1","want_rows":false},"condition":{"type":"not","cond":{"type":"ok","step":0}}}]}},{"type":"close"}]}"#
        );
    }
}
