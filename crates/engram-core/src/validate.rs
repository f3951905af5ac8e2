//! Validation of everything that enters engram, with errors that name the field.

use crate::memory::{MemoryRelation, NewMemory};

/// Largest accepted memory content, in bytes of UTF-8.
pub const MAX_CONTENT_BYTES: usize = 32 * 1024;
/// Most tags, related files or related modules on one memory.
pub const MAX_LIST_ITEMS: usize = 64;
/// Longest tag or module name, in characters.
pub const MAX_LABEL_CHARS: usize = 128;
/// Longest related file path, in bytes.
pub const MAX_PATH_BYTES: usize = 1024;
/// Longest citation text, in characters.
pub const MAX_CITATION_CHARS: usize = 40;
/// Maximum length of a code-graph node id (`path#kind:qualified name`).
pub const MAX_NODE_ID_CHARS: usize = 1024;
/// Longest identifier (session id, commit sha, methodology), in characters.
pub const MAX_ID_CHARS: usize = 256;

/// One rule broken by one field.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Violation {
    /// The field, as a path in the input (`content`, `tags[2]`, `relations[0].confidence`).
    pub field: String,
    /// What is wrong with it.
    pub problem: String,
}

/// The input was rejected; nothing was written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, serde::Serialize)]
#[error("invalid input: {}", describe(.violations))]
pub struct ValidationError {
    /// Every rule the input broke (at least one).
    pub violations: Vec<Violation>,
}

fn describe(violations: &[Violation]) -> String {
    violations
        .iter()
        .map(|v| format!("{}: {}", v.field, v.problem))
        .collect::<Vec<_>>()
        .join("; ")
}

impl ValidationError {
    /// An error for a single field.
    pub fn field(field: impl Into<String>, problem: impl Into<String>) -> Self {
        ValidationError {
            violations: vec![Violation {
                field: field.into(),
                problem: problem.into(),
            }],
        }
    }

    /// The same violations, their fields inside `prefix` (an entry of a list, `[2]`):
    /// `text` becomes `[2].text`, `tags[1]` becomes `[2].tags[1]`, the root `[2]`.
    pub fn within(mut self, prefix: &str) -> Self {
        for violation in &mut self.violations {
            violation.field = match violation.field.as_str() {
                "" | "(root)" => prefix.to_owned(),
                field if field.starts_with('[') => format!("{prefix}{field}"),
                field => format!("{prefix}.{field}"),
            };
        }
        self
    }

    /// The first offending field.
    pub fn first_field(&self) -> &str {
        self.violations
            .first()
            .map(|v| v.field.as_str())
            .unwrap_or("")
    }
}

/// Collects violations while walking an input.
#[derive(Default)]
struct Checker {
    violations: Vec<Violation>,
}

impl Checker {
    fn fail(&mut self, field: impl Into<String>, problem: impl Into<String>) {
        self.violations.push(Violation {
            field: field.into(),
            problem: problem.into(),
        });
    }

    fn unit_interval(&mut self, field: &str, value: f64) {
        if !(value.is_finite() && (0.0..=1.0).contains(&value)) {
            self.fail(field, format!("must be a number from 0 to 1, got {value}"));
        }
    }

    fn text(&mut self, field: &str, value: &str, max_chars: usize) {
        if value.trim().is_empty() {
            self.fail(field, "must not be empty");
        } else if value.chars().count() > max_chars {
            self.fail(field, format!("must be at most {max_chars} characters"));
        } else if value.chars().any(char::is_control) {
            self.fail(field, "must not contain control characters");
        }
    }

    fn optional_text(&mut self, field: &str, value: Option<&str>, max_chars: usize) {
        if let Some(value) = value {
            self.text(field, value, max_chars);
        }
    }

    fn path(&mut self, field: &str, value: &str) {
        if value.trim().is_empty() {
            self.fail(field, "must not be empty");
        } else if value.len() > MAX_PATH_BYTES {
            self.fail(field, format!("must be at most {MAX_PATH_BYTES} bytes"));
        } else if value.contains('\0') || value.chars().any(char::is_control) {
            self.fail(field, "must not contain control characters");
        }
    }

    fn list(&mut self, field: &str, items: &[String], each: impl Fn(&mut Self, &str, &str)) {
        if items.len() > MAX_LIST_ITEMS {
            self.fail(field, format!("must have at most {MAX_LIST_ITEMS} items"));
            return;
        }
        for (i, item) in items.iter().enumerate() {
            each(self, &format!("{field}[{i}]"), item);
        }
    }

    fn relation(&mut self, field: &str, relation: &MemoryRelation) {
        self.unit_interval(&format!("{field}.confidence"), relation.confidence);
        match (&relation.target_memory_id, &relation.target_file_path) {
            (None, None) => self.fail(field, "needs targetMemoryId or targetFilePath"),
            (Some(id), _) => self.text(&format!("{field}.targetMemoryId"), id, MAX_ID_CHARS),
            (None, Some(path)) => self.path(&format!("{field}.targetFilePath"), path),
        }
    }

    fn finish(self) -> Result<(), ValidationError> {
        if self.violations.is_empty() {
            Ok(())
        } else {
            Err(ValidationError {
                violations: self.violations,
            })
        }
    }
}

/// Parses untrusted JSON into `T`, naming the field (as a path like `tags[1]`) that failed.
pub fn from_json<T: serde::de::DeserializeOwned>(json: &str) -> Result<T, ValidationError> {
    let mut de = serde_json::Deserializer::from_str(json);
    serde_path_to_error::deserialize(&mut de).map_err(|err| {
        let path = err.path().to_string();
        let problem = err.into_inner().to_string();
        // serde reports a missing field at the object that lacks it: name the field itself.
        let missing = problem
            .strip_prefix("missing field `")
            .and_then(|rest| rest.split('`').next());
        let field = match (path.as_str(), missing) {
            (".", Some(name)) => name.to_owned(),
            (_, Some(name)) => format!("{path}.{name}"),
            (".", None) => "(root)".to_owned(),
            (_, None) => path,
        };
        ValidationError::field(field, problem)
    })
}

/// [`from_json`], then `check` on what it parsed: a request type's `from_json` in one call.
pub fn from_json_checked<T: serde::de::DeserializeOwned>(
    json: &str,
    check: impl FnOnce(&T) -> Result<(), ValidationError>,
) -> Result<T, ValidationError> {
    let value: T = from_json(json)?;
    check(&value)?;
    Ok(value)
}

impl NewMemory {
    /// Parses a memory from untrusted JSON, naming the field that failed to parse.
    pub fn from_json(json: &str) -> Result<NewMemory, ValidationError> {
        from_json(json)
    }

    /// Checks every field against engram's limits; reports every violation at once.
    pub fn validate(&self) -> Result<(), ValidationError> {
        let mut check = Checker::default();
        if self.content.trim().is_empty() {
            check.fail("content", "must not be empty");
        } else if self.content.len() > MAX_CONTENT_BYTES {
            check.fail(
                "content",
                format!(
                    "is {} bytes; the limit is {MAX_CONTENT_BYTES}",
                    self.content.len()
                ),
            );
        } else if self.content.contains('\0') {
            check.fail("content", "must not contain NUL characters");
        }
        check.unit_interval("confidence", self.confidence);
        check.list("tags", &self.tags, |c, f, v| c.text(f, v, MAX_LABEL_CHARS));
        check.list("relatedFiles", &self.related_files, |c, f, v| c.path(f, v));
        check.list("relatedModules", &self.related_modules, |c, f, v| {
            c.text(f, v, MAX_LABEL_CHARS)
        });
        check.list(
            "provenanceSessionIds",
            &self.provenance_session_ids,
            |c, f, v| c.text(f, v, MAX_ID_CHARS),
        );
        check.optional_text("sessionId", self.session_id.as_deref(), MAX_ID_CHARS);
        check.optional_text(
            "idempotencyKey",
            self.idempotency_key.as_deref(),
            MAX_ID_CHARS,
        );
        check.optional_text("commitSha", self.commit_sha.as_deref(), MAX_ID_CHARS);
        check.optional_text("methodology", self.methodology.as_deref(), MAX_ID_CHARS);
        check.optional_text(
            "citationText",
            self.citation_text.as_deref(),
            MAX_CITATION_CHARS,
        );
        check.optional_text(
            "targetNodeId",
            self.target_node_id.as_deref(),
            MAX_NODE_ID_CHARS,
        );
        if let Some(days) = self.decay_half_life_days {
            if !(days.is_finite() && days > 0.0) {
                check.fail("decayHalfLifeDays", "must be a positive number of days");
            }
        }
        if self.relations.len() > MAX_LIST_ITEMS {
            check.fail(
                "relations",
                format!("must have at most {MAX_LIST_ITEMS} items"),
            );
        } else {
            for (i, relation) in self.relations.iter().enumerate() {
                check.relation(&format!("relations[{i}]"), relation);
            }
        }
        if let Some(unit) = &self.work_unit_ref {
            check.text("workUnitRef.methodology", &unit.methodology, MAX_ID_CHARS);
            check.text("workUnitRef.label", &unit.label, MAX_LABEL_CHARS);
        }
        if let Some(chunk) = &self.chunk {
            check.text("chunk.chunkType", &chunk.chunk_type, MAX_LABEL_CHARS);
            if chunk.start_line == 0 || chunk.end_line < chunk.start_line {
                check.fail(
                    "chunk",
                    "needs 1 <= startLine <= endLine (lines are 1-based)",
                );
            }
        }
        check.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::{MemoryType, RelationType};

    #[test]
    fn a_default_memory_is_valid() {
        NewMemory::new(MemoryType::Gotcha, "run migrations before tests")
            .validate()
            .unwrap();
    }

    #[test]
    fn every_broken_field_is_named() {
        let mut m = NewMemory::new(MemoryType::Gotcha, "  ");
        m.confidence = 1.5;
        m.tags = vec!["ok".into(), "".into()];
        m.citation_text = Some("x".repeat(41));
        m.relations = vec![MemoryRelation {
            target_memory_id: None,
            target_file_path: None,
            relation_type: RelationType::Supersedes,
            confidence: f64::NAN,
            auto_extracted: false,
        }];
        let err = m.validate().unwrap_err();
        let fields: Vec<_> = err.violations.iter().map(|v| v.field.as_str()).collect();
        assert_eq!(
            fields,
            [
                "content",
                "confidence",
                "tags[1]",
                "citationText",
                "relations[0].confidence",
                "relations[0]"
            ]
        );
    }

    #[test]
    fn oversize_content_is_rejected_with_its_size() {
        let m = NewMemory::new(MemoryType::Decision, "a".repeat(MAX_CONTENT_BYTES + 1));
        let err = m.validate().unwrap_err();
        assert_eq!(err.first_field(), "content");
        assert!(err.to_string().contains("32769 bytes"), "{err}");
    }

    #[test]
    fn json_errors_name_the_field() {
        let err = NewMemory::from_json(r#"{"type":"gossip","content":"x"}"#).unwrap_err();
        assert_eq!(err.first_field(), "type");
        assert!(
            err.to_string().contains("unknown variant `gossip`"),
            "{err}"
        );

        let err =
            NewMemory::from_json(r#"{"type":"gotcha","content":"x","tags":[1]}"#).unwrap_err();
        assert_eq!(err.first_field(), "tags[0]");

        let err = NewMemory::from_json(r#"{"type":"gotcha","content":"x","bogus":1}"#).unwrap_err();
        assert!(err.to_string().contains("unknown field `bogus`"), "{err}");

        let err = NewMemory::from_json("{not json").unwrap_err();
        assert!(!err.violations.is_empty());

        // A missing field is named, not the object that lacks it.
        let err = NewMemory::from_json(r#"{"type":"gotcha"}"#).unwrap_err();
        assert_eq!(err.first_field(), "content");
        let err = NewMemory::from_json(r#"{"type":"gotcha","content":"x","relations":[{}]}"#)
            .unwrap_err();
        assert!(err.first_field().starts_with("relations[0]."), "{err}");
    }

    #[test]
    fn json_round_trip_keeps_every_field() {
        let json = r#"{
            "type": "dead_end", "content": "tried mocking the clock", "confidence": 0.6,
            "tags": ["testing"], "relatedFiles": ["src/clock.rs"], "relatedModules": ["clock"],
            "scope": "module", "visibility": "team", "phase": "refine", "source": "observer_inferred",
            "sessionId": "s1", "commitSha": "abc123", "provenanceSessionIds": ["s0", "s1"],
            "workUnitRef": {"methodology": "native", "hierarchy": ["spec_1"], "label": "clock"},
            "methodology": "native",
            "relations": [{"targetFilePath": "src/time.rs", "relationType": "derived_from", "confidence": 0.5, "autoExtracted": true}],
            "decayHalfLifeDays": 90.0,
            "flags": {"needsReview": true, "userVerified": false, "pinned": false, "contaminated": true, "secretScanSkipped": false},
            "citationText": "clock mocking dead end",
            "chunk": {"chunkType": "function", "startLine": 3, "endLine": 9, "contextPrefix": "src/clock.rs fn now"}
        }"#;
        let parsed = NewMemory::from_json(json).unwrap();
        parsed.validate().unwrap();
        let again = NewMemory::from_json(&serde_json::to_string(&parsed).unwrap()).unwrap();
        assert_eq!(parsed, again);
        assert!(again.flags.contaminated);
        assert_eq!(again.chunk.unwrap().end_line, 9);
    }
}
