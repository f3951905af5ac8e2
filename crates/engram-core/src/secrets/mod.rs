//! The secret scanner: finds API keys, tokens, private keys and passwords in
//! text and redacts them. Secrets are redacted, never rejected: the rest of a memory is
//! still worth keeping.

use std::sync::OnceLock;

use regex::{Regex, RegexSet};

use crate::memory::NewMemory;
use checks::{looks_random, name_family, plausible_password, NameFamily};
use rules::{Check, RULES};

mod checks;
mod rules;
#[cfg(test)]
mod tests;

/// A secret found in a text.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SecretFinding {
    /// The kind of secret (`openai_key`, `password`, …).
    pub kind: &'static str,
    /// Byte offset of the redacted span in the original text.
    pub start: usize,
    /// Byte offset just past the redacted span.
    pub end: usize,
}

/// The result of scanning a text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redacted {
    /// The text with every secret replaced by `[REDACTED:<kind>]`.
    pub text: String,
    /// What was found, in text order.
    pub findings: Vec<SecretFinding>,
}

/// The scanner could not be built; callers store the memory flagged
/// `secret_scan_skipped` instead of failing the write.
#[derive(Debug, Clone, thiserror::Error)]
#[error("secret scanner unavailable: pattern {kind} failed to compile: {message}")]
pub struct ScannerFault {
    /// The pattern that failed.
    pub kind: &'static str,
    /// The compiler's message.
    pub message: String,
}

/// Finds and redacts secrets. The rules are constants, so one compiled scanner serves
/// the whole process: use [`SecretScanner::shared`].
#[derive(Debug, Clone)]
pub struct SecretScanner {
    /// Which rules match anywhere in a text, in one pass.
    any: RegexSet,
    /// Each rule's own pattern, run only where the set says it matches.
    each: Vec<Regex>,
}

impl SecretScanner {
    /// Compiles the built-in rules.
    pub fn new() -> Result<Self, ScannerFault> {
        let fault = |kind: &'static str| {
            move |err: regex::Error| ScannerFault {
                kind,
                message: err.to_string(),
            }
        };
        let each = RULES
            .iter()
            .map(|rule| Regex::new(rule.pattern).map_err(fault(rule.kind)))
            .collect::<Result<Vec<_>, _>>()?;
        let any = RegexSet::new(RULES.iter().map(|rule| rule.pattern)).map_err(fault("all"))?;
        Ok(SecretScanner { any, each })
    }

    /// The process's scanner, compiled on first use.
    pub fn shared() -> Result<&'static SecretScanner, ScannerFault> {
        static SHARED: OnceLock<Result<SecretScanner, ScannerFault>> = OnceLock::new();
        SHARED
            .get_or_init(SecretScanner::new)
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Finds every secret in `text`, in text order; overlapping findings merge into one,
    /// named by the earliest rule.
    pub fn scan(&self, text: &str) -> Vec<SecretFinding> {
        let mut spans: Vec<(usize, usize, usize, &'static str)> = Vec::new();
        for index in self.any.matches(text).iter() {
            let rule = &RULES[index];
            let mut at = 0;
            while let Some(caps) = self.each[index].captures_at(text, at) {
                let (Some(whole), Some(span)) = (caps.get(0), caps.name("s").or(caps.get(0)))
                else {
                    break;
                };
                let name = caps.name("n").map(|n| n.as_str());
                let kind = verdict(rule.kind, rule.check, name, span.as_str());
                match kind {
                    Some(kind) if span.start() < span.end() => {
                        spans.push((span.start(), span.end(), index, kind));
                        at = whole.end().max(at + 1);
                    }
                    // A rejected value may itself hold an assignment (`a: b=c`): look again
                    // from where the value starts, not past it. Not in a long one: hostile
                    // text (`a_key=a_key=…`) would make that quadratic.
                    _ if span.start() > whole.start() && span.len() <= MAX_RESCANNED => {
                        at = span.start()
                    }
                    _ if span.start() > whole.start() => at = whole.end(),
                    _ => at = whole.start() + 1,
                }
                if at > text.len() {
                    break;
                }
                while !text.is_char_boundary(at) {
                    at += 1;
                }
            }
        }
        spans.sort_unstable();
        let mut findings: Vec<(SecretFinding, usize)> = Vec::new();
        for (start, end, index, kind) in spans {
            match findings.last_mut() {
                Some((last, rule)) if start < last.end => {
                    last.end = last.end.max(end);
                    if index < *rule {
                        *rule = index;
                        last.kind = kind;
                    }
                }
                _ => findings.push((SecretFinding { kind, start, end }, index)),
            }
        }
        findings.into_iter().map(|(finding, _)| finding).collect()
    }

    /// Replaces every secret in `text` with `[REDACTED:<kind>]`.
    ///
    /// ```
    /// let scanner = engram_core::secrets::SecretScanner::shared().unwrap();
    /// let out = scanner.redact("deploy with DB_PASSWORD=hunter2hunter2 then restart");
    /// assert_eq!(out.text, "deploy with DB_PASSWORD=[REDACTED:password] then restart");
    /// ```
    pub fn redact(&self, text: &str) -> Redacted {
        let findings = self.scan(text);
        let mut out = String::with_capacity(text.len());
        let mut cursor = 0;
        for f in &findings {
            out.push_str(&text[cursor..f.start]);
            out.push_str(MARKER);
            out.push_str(f.kind);
            out.push(']');
            cursor = f.end;
        }
        out.push_str(&text[cursor..]);
        Redacted {
            text: out,
            findings,
        }
    }

    /// Redacts `text` where it lies; returns the kinds found (none leaves it untouched).
    pub fn redact_in_place(&self, text: &mut String) -> Vec<&'static str> {
        if text.is_empty() {
            return Vec::new();
        }
        let out = self.redact(text);
        if out.findings.is_empty() {
            return Vec::new();
        }
        *text = out.text;
        out.findings.iter().map(|f| f.kind).collect()
    }

    /// Redacts every text field of `memory` (content, tags, files, modules, citation,
    /// provenance, relations, chunk and work unit); returns the kinds found, in order.
    pub fn redact_memory(&self, memory: &mut NewMemory) -> Vec<&'static str> {
        let mut kinds = Vec::new();
        for text in memory.text_fields_mut() {
            kinds.extend(self.redact_in_place(text));
        }
        kinds
    }

    /// Redacts every string inside a JSON value (keys are names, not values, and stay).
    pub fn redact_json(&self, value: &mut serde_json::Value) -> Vec<&'static str> {
        let mut kinds = Vec::new();
        let mut stack = vec![value];
        // An explicit stack: hostile input may nest deeper than the call stack allows.
        while let Some(value) = stack.pop() {
            match value {
                serde_json::Value::String(text) => kinds.extend(self.redact_in_place(text)),
                serde_json::Value::Array(items) => stack.extend(items.iter_mut()),
                serde_json::Value::Object(fields) => {
                    for (name, field) in fields.iter_mut() {
                        // `{"password": "hunter22"}`: the name says what the value is.
                        if let serde_json::Value::String(text) = field {
                            if let Some(kind) = secret_by_name(name, text) {
                                *text = format!("{MARKER}{kind}]");
                                kinds.push(kind);
                                continue;
                            }
                        }
                        stack.push(field);
                    }
                }
                _ => {}
            }
        }
        kinds
    }
}

/// The kind of secret a value assigned to `name` is because of the name, if it is one.
fn secret_by_name(name: &str, value: &str) -> Option<&'static str> {
    verdict(ASSIGNMENT, Check::Named, Some(name), value)
}

/// The longest rejected value searched again for an assignment inside it.
const MAX_RESCANNED: usize = 512;

/// How a redaction starts: `[REDACTED:<kind>]`.
const MARKER: &str = "[REDACTED:";

/// The kind reported for a key or token found by the name it is assigned to.
const ASSIGNMENT: &str = "secret_assignment";

/// The kind a match is reported as when it passes its rule's check.
fn verdict(
    kind: &'static str,
    check: Check,
    name: Option<&str>,
    value: &str,
) -> Option<&'static str> {
    // Our own marker is never a secret: scanning redacted text changes nothing.
    if value.starts_with(MARKER) {
        return None;
    }
    let pass = match check {
        Check::None => true,
        Check::Password => plausible_password(value),
        Check::Random => looks_random(value),
        Check::Named => {
            return match name.and_then(name_family)? {
                NameFamily::Password => plausible_password(value).then_some("password"),
                NameFamily::Key => looks_random(value).then_some(ASSIGNMENT),
            }
        }
    };
    pass.then_some(kind)
}
