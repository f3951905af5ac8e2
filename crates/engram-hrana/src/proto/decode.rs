//! Decoding the tagged objects of a pipeline response in one pass.
//!
//! serde's derive reads an internally tagged enum (`{"type": "ok", "response": …}`) by first
//! buffering the whole object into its generic content tree, because the tag may come after
//! the payload. A response nests three such layers — result, response, and each of its
//! values — so a search's rows were copied into the tree and walked again at every layer:
//! most of a client's CPU time per request. Here each payload field decodes straight into
//! its final type whatever the key order: a result's and a response's payload fields are
//! the same type for every tag that has them (a statement's and a batch's fields are read
//! into one struct and sorted out by the tag at the end), and a value's payload is a
//! scalar.

use std::fmt;

use base64::Engine;
use serde::de::{self, IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};

use engram_store::Value;

use super::{
    BatchResult, Col, HranaError, HranaValue, StmtResult, StreamResponse, StreamResult, BASE64,
};

/// The keys of a tagged object; any other key is skipped.
#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "snake_case")]
enum Key {
    Type,
    Response,
    Error,
    Result,
    IsAutocommit,
    Value,
    Base64,
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum ResultTag {
    Ok,
    Error,
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum ResponseTag {
    Execute,
    Batch,
    Sequence,
    GetAutocommit,
    Close,
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum ValueTag {
    Null,
    Integer,
    Float,
    Text,
    Blob,
}

/// Sets `slot` from the map's next value, refusing a key given twice.
fn take<'de, A: MapAccess<'de>, T: Deserialize<'de>>(
    map: &mut A,
    slot: &mut Option<T>,
    key: &'static str,
) -> Result<(), A::Error> {
    if slot.is_some() {
        return Err(de::Error::duplicate_field(key));
    }
    *slot = Some(map.next_value()?);
    Ok(())
}

impl<'de> Deserialize<'de> for StreamResult {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct ResultVisitor;
        impl<'de> Visitor<'de> for ResultVisitor {
            type Value = StreamResult;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a Hrana stream result object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<StreamResult, A::Error> {
                let mut tag = None;
                let mut response = None;
                let mut error = None;
                while let Some(key) = map.next_key::<Key>()? {
                    match key {
                        Key::Type => take(&mut map, &mut tag, "type")?,
                        Key::Response => take(&mut map, &mut response, "response")?,
                        Key::Error => take(&mut map, &mut error, "error")?,
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                match tag.ok_or_else(|| de::Error::missing_field("type"))? {
                    ResultTag::Ok => Ok(StreamResult::Ok {
                        response: response.ok_or_else(|| de::Error::missing_field("response"))?,
                    }),
                    ResultTag::Error => Ok(StreamResult::Error {
                        error: error.ok_or_else(|| de::Error::missing_field("error"))?,
                    }),
                }
            }
        }
        d.deserialize_map(ResultVisitor)
    }
}

/// The fields of a statement result and of a batch result together, so that a `result`
/// decodes before its tag is known.
#[derive(Deserialize)]
struct AnyResult {
    #[serde(default)]
    cols: Vec<Col>,
    #[serde(default)]
    rows: Vec<Vec<HranaValue>>,
    #[serde(default)]
    affected_row_count: u64,
    #[serde(default)]
    last_insert_rowid: Option<String>,
    #[serde(default)]
    step_results: Option<Vec<Option<StmtResult>>>,
    #[serde(default)]
    step_errors: Option<Vec<Option<HranaError>>>,
}

impl<'de> Deserialize<'de> for StreamResponse {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct ResponseVisitor;
        impl<'de> Visitor<'de> for ResponseVisitor {
            type Value = StreamResponse;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a Hrana stream response object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<StreamResponse, A::Error> {
                let mut tag = None;
                let mut payload: Option<AnyResult> = None;
                let mut is_autocommit = None;
                while let Some(key) = map.next_key::<Key>()? {
                    match key {
                        Key::Type => take(&mut map, &mut tag, "type")?,
                        Key::Result => take(&mut map, &mut payload, "result")?,
                        Key::IsAutocommit => take(&mut map, &mut is_autocommit, "is_autocommit")?,
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                let result = || payload.ok_or_else(|| de::Error::missing_field("result"));
                Ok(match tag.ok_or_else(|| de::Error::missing_field("type"))? {
                    ResponseTag::Execute => {
                        let r = result()?;
                        StreamResponse::Execute {
                            result: StmtResult {
                                cols: r.cols,
                                rows: r.rows,
                                affected_row_count: r.affected_row_count,
                                last_insert_rowid: r.last_insert_rowid,
                            },
                        }
                    }
                    ResponseTag::Batch => {
                        let r = result()?;
                        StreamResponse::Batch {
                            result: BatchResult {
                                step_results: r
                                    .step_results
                                    .ok_or_else(|| de::Error::missing_field("step_results"))?,
                                step_errors: r
                                    .step_errors
                                    .ok_or_else(|| de::Error::missing_field("step_errors"))?,
                            },
                        }
                    }
                    ResponseTag::Sequence => StreamResponse::Sequence,
                    ResponseTag::GetAutocommit => StreamResponse::GetAutocommit {
                        is_autocommit: is_autocommit
                            .ok_or_else(|| de::Error::missing_field("is_autocommit"))?,
                    },
                    ResponseTag::Close => StreamResponse::Close,
                })
            }
        }
        d.deserialize_map(ResponseVisitor)
    }
}

/// A value's payload before its tag says what it is: integers travel as strings (numbers
/// are accepted too), floats as numbers, text as a string.
enum Scalar {
    Null,
    Text(String),
    Signed(i64),
    Unsigned(u64),
    Float(f64),
}

impl<'de> Deserialize<'de> for Scalar {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct ScalarVisitor;
        impl Visitor<'_> for ScalarVisitor {
            type Value = Scalar;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string, a number or null")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Scalar, E> {
                Ok(Scalar::Text(v.to_owned()))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Scalar, E> {
                Ok(Scalar::Text(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Scalar, E> {
                Ok(Scalar::Signed(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Scalar, E> {
                Ok(Scalar::Unsigned(v))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Scalar, E> {
                Ok(Scalar::Float(v))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Scalar, E> {
                Ok(Scalar::Null)
            }
            fn visit_none<E: de::Error>(self) -> Result<Scalar, E> {
                Ok(Scalar::Null)
            }
        }
        d.deserialize_any(ScalarVisitor)
    }
}

impl<'de> Deserialize<'de> for HranaValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct ValueVisitor;
        impl<'de> Visitor<'de> for ValueVisitor {
            type Value = HranaValue;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a Hrana value object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<HranaValue, A::Error> {
                let mut tag = None;
                let mut payload: Option<Scalar> = None;
                let mut base64: Option<String> = None;
                while let Some(key) = map.next_key::<Key>()? {
                    match key {
                        Key::Type => take(&mut map, &mut tag, "type")?,
                        Key::Value => take(&mut map, &mut payload, "value")?,
                        Key::Base64 => take(&mut map, &mut base64, "base64")?,
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                let tag = tag.ok_or_else(|| de::Error::missing_field("type"))?;
                let value = || payload.ok_or_else(|| de::Error::missing_field("value"));
                Ok(HranaValue(match tag {
                    ValueTag::Null => Value::Null,
                    ValueTag::Integer => Value::Integer(match value()? {
                        Scalar::Text(text) => text
                            .parse()
                            .map_err(|_| de::Error::custom(format!("invalid integer {text:?}")))?,
                        Scalar::Signed(n) => n,
                        Scalar::Unsigned(n) => i64::try_from(n)
                            .map_err(|_| de::Error::custom(format!("integer {n} out of range")))?,
                        _ => {
                            return Err(de::Error::custom(
                                "an integer value must be a string or an integer",
                            ))
                        }
                    }),
                    ValueTag::Float => Value::Float(match value()? {
                        Scalar::Float(f) => f,
                        Scalar::Signed(n) => n as f64,
                        Scalar::Unsigned(n) => n as f64,
                        _ => return Err(de::Error::custom("a float value must be a number")),
                    }),
                    ValueTag::Text => match value()? {
                        Scalar::Text(text) => Value::Text(text),
                        _ => return Err(de::Error::custom("a text value must be a string")),
                    },
                    ValueTag::Blob => {
                        let encoded = base64.ok_or_else(|| de::Error::missing_field("base64"))?;
                        Value::Blob(
                            BASE64
                                .decode(encoded.trim_end_matches('=').as_bytes())
                                .map_err(de::Error::custom)?,
                        )
                    }
                }))
            }
        }
        d.deserialize_map(ValueVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::PipelineResponse;

    fn value(json: &str) -> Result<Value, serde_json::Error> {
        serde_json::from_str::<HranaValue>(json).map(|v| v.0)
    }

    #[test]
    fn values_decode_whatever_the_key_order() {
        assert_eq!(
            value(r#"{"value":"12","type":"integer"}"#).unwrap(),
            Value::Integer(12)
        );
        assert_eq!(
            value(r#"{"value":"a\"b","type":"text"}"#).unwrap(),
            Value::Text("a\"b".into())
        );
        assert_eq!(
            value(r#"{"base64":"AAEC","type":"blob"}"#).unwrap(),
            Value::Blob(vec![0, 1, 2])
        );
        assert_eq!(
            value(r#"{"value":2,"type":"float"}"#).unwrap(),
            Value::Float(2.0)
        );
        assert_eq!(
            value(r#"{"type":"null","extra":[1,{"a":2}]}"#).unwrap(),
            Value::Null
        );
    }

    #[test]
    fn malformed_values_are_errors() {
        for json in [
            r#"{"value":"1"}"#,
            r#"{"type":"integer"}"#,
            r#"{"type":"integer","value":1.5}"#,
            r#"{"type":"integer","value":9223372036854775808}"#,
            r#"{"type":"text","value":3}"#,
            r#"{"type":"float","value":"1.5"}"#,
            r#"{"type":"blob","value":"AAEC"}"#,
            r#"{"type":"blob","base64":"!!"}"#,
            r#"{"type":"date","value":"2026"}"#,
            r#"{"type":"text","value":"a","value":"b"}"#,
            r#"["text","a"]"#,
        ] {
            assert!(value(json).is_err(), "{json} decoded");
        }
    }

    #[test]
    fn results_decode_with_the_tag_after_the_payload() {
        let json = r#"{"baton":null,"results":[
            {"response":{"result":{"rows":[[{"value":"x","type":"text"}]],"cols":[{"name":"a"}],
              "affected_row_count":0,"last_insert_rowid":null,"rows_read":1},"type":"execute"},"type":"ok"},
            {"type":"ok","response":{"type":"batch","result":{"step_results":[null],
              "step_errors":[{"message":"no such table: t","code":"SQLITE_ERROR"}]}}},
            {"error":{"message":"boom"},"type":"error"},
            {"type":"ok","response":{"is_autocommit":true,"type":"get_autocommit"}},
            {"type":"ok","response":{"type":"close"}}]}"#;
        let response: PipelineResponse = serde_json::from_str(json).unwrap();
        let [first, second, third, fourth, fifth] = &response.results[..] else {
            panic!("{} results", response.results.len());
        };
        assert_eq!(
            *first,
            StreamResult::Ok {
                response: StreamResponse::Execute {
                    result: StmtResult {
                        cols: vec![Col {
                            name: Some("a".into()),
                            decltype: None
                        }],
                        rows: vec![vec![HranaValue(Value::Text("x".into()))]],
                        affected_row_count: 0,
                        last_insert_rowid: None,
                    }
                }
            }
        );
        let StreamResult::Ok {
            response: StreamResponse::Batch { result },
        } = second
        else {
            panic!("{second:?}");
        };
        assert_eq!(result.step_results, vec![None]);
        assert_eq!(
            result.step_errors[0].as_ref().map(|e| e.message.as_str()),
            Some("no such table: t")
        );
        assert!(matches!(third, StreamResult::Error { error } if error.message == "boom"));
        assert_eq!(
            *fourth,
            StreamResult::Ok {
                response: StreamResponse::GetAutocommit {
                    is_autocommit: true
                }
            }
        );
        assert_eq!(
            *fifth,
            StreamResult::Ok {
                response: StreamResponse::Close
            }
        );
    }

    #[test]
    fn results_missing_their_payload_are_errors() {
        for json in [
            r#"{"type":"ok"}"#,
            r#"{"type":"error"}"#,
            r#"{"response":{"type":"close"}}"#,
            r#"{"type":"ok","response":{"type":"execute"}}"#,
            r#"{"type":"ok","response":{"type":"batch","result":{"step_results":[]}}}"#,
            r#"{"type":"ok","response":{"type":"get_autocommit"}}"#,
            r#"{"type":"ok","response":{"type":"describe","result":{}}}"#,
        ] {
            assert!(
                serde_json::from_str::<StreamResult>(json).is_err(),
                "{json} decoded"
            );
        }
    }

    #[test]
    fn encoding_then_decoding_gives_the_same_results() {
        let results = vec![
            StreamResult::Ok {
                response: StreamResponse::Execute {
                    result: StmtResult {
                        cols: vec![Col {
                            name: Some("v".into()),
                            decltype: Some("TEXT".into()),
                        }],
                        rows: vec![vec![
                            HranaValue(Value::Null),
                            HranaValue(Value::Integer(i64::MIN)),
                            HranaValue(Value::Float(-0.25)),
                            HranaValue(Value::Text("line\nbreak \u{1F600}".into())),
                            HranaValue(Value::Blob(vec![255, 0, 7])),
                        ]],
                        affected_row_count: 3,
                        last_insert_rowid: Some("9".into()),
                    },
                },
            },
            StreamResult::Ok {
                response: StreamResponse::Sequence,
            },
            StreamResult::Error {
                error: HranaError {
                    message: "busy".into(),
                    code: Some("SQLITE_BUSY".into()),
                },
            },
        ];
        let json = serde_json::to_string(&results).unwrap();
        let back: Vec<StreamResult> = serde_json::from_str(&json).unwrap();
        assert_eq!(back, results);
    }
}
