//! The secret scanner: finds API keys, tokens, private keys and passwords in
//! text and redacts them. Secrets are redacted, never rejected: the rest of a memory is
//! still worth keeping.

use regex_lite::Regex;

/// One kind of secret the scanner knows, with the pattern that finds it.
///
/// When the pattern has a capture group, only the group is redacted (so
/// `password = hunter22` keeps `password = `); otherwise the whole match is.
const PATTERNS: &[(&str, &str)] = &[
    (
        "private_key",
        r"(?s)-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\z)",
    ),
    ("anthropic_key", r"sk-ant-[A-Za-z0-9_\-]{20,}"),
    ("openai_key", r"\bsk-(?:proj-)?[A-Za-z0-9_\-]{20,}"),
    (
        "github_token",
        r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})",
    ),
    ("aws_access_key", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    ("slack_token", r"\bxox[abprs]-[A-Za-z0-9\-]{10,}"),
    ("google_api_key", r"\bAIza[0-9A-Za-z_\-]{35}"),
    ("stripe_key", r"\b[rs]k_(?:live|test)_[0-9A-Za-z]{16,}"),
    (
        "jwt",
        r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",
    ),
    ("bearer_token", r"(?i)\bbearer\s+([A-Za-z0-9._~+/=\-]{16,})"),
    (
        "password",
        r#"(?i)\b(?:password|passwd|pwd|secret|api[_-]?key|access[_-]?token|auth[_-]?token|client[_-]?secret)\b["']?\s*[:=]\s*["']?([^\s"',;]{4,})"#,
    ),
    (
        "url_credentials",
        r"\b[a-zA-Z][a-zA-Z0-9+.\-]*://[^\s:/@]+:([^\s@/]+)@",
    ),
];

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

/// Finds and redacts secrets. Build one per engram instance and reuse it.
#[derive(Debug, Clone)]
pub struct SecretScanner {
    patterns: Vec<(&'static str, Regex)>,
}

impl SecretScanner {
    /// Compiles the built-in patterns.
    pub fn new() -> Result<Self, ScannerFault> {
        let patterns = PATTERNS
            .iter()
            .map(|&(kind, pattern)| {
                Regex::new(pattern)
                    .map(|re| (kind, re))
                    .map_err(|err| ScannerFault {
                        kind,
                        message: err.to_string(),
                    })
            })
            .collect::<Result<_, _>>()?;
        Ok(SecretScanner { patterns })
    }

    /// Finds every secret in `text`; overlapping findings are merged, earliest pattern wins.
    pub fn scan(&self, text: &str) -> Vec<SecretFinding> {
        let mut findings: Vec<SecretFinding> = Vec::new();
        for (kind, re) in &self.patterns {
            for caps in re.captures_iter(text) {
                let Some(span) = caps.get(1).or_else(|| caps.get(0)) else {
                    continue;
                };
                let overlaps = findings
                    .iter()
                    .any(|f| span.start() < f.end && f.start < span.end());
                if !overlaps && span.start() < span.end() {
                    findings.push(SecretFinding {
                        kind,
                        start: span.start(),
                        end: span.end(),
                    });
                }
            }
        }
        findings.sort_by_key(|f| f.start);
        findings
    }

    /// Replaces every secret in `text` with `[REDACTED:<kind>]`.
    ///
    /// ```
    /// let scanner = engram_core::secrets::SecretScanner::new().unwrap();
    /// let out = scanner.redact("deploy with password: hunter2hunter2 then restart");
    /// assert_eq!(out.text, "deploy with password: [REDACTED:password] then restart");
    /// ```
    pub fn redact(&self, text: &str) -> Redacted {
        let findings = self.scan(text);
        let mut out = String::with_capacity(text.len());
        let mut cursor = 0;
        for f in &findings {
            out.push_str(&text[cursor..f.start]);
            out.push_str("[REDACTED:");
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
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<&'static str> {
        SecretScanner::new()
            .unwrap()
            .scan(text)
            .iter()
            .map(|f| f.kind)
            .collect()
    }

    #[test]
    fn finds_each_kind() {
        let openai = format!("sk-{}", "a1B2".repeat(12));
        let anthropic = format!("sk-ant-api03-{}", "x9Y_".repeat(20));
        let github = format!("ghp_{}", "Ab3".repeat(12));
        assert_eq!(kinds(&format!("key {openai} end")), ["openai_key"]);
        assert_eq!(kinds(&format!("key {anthropic}")), ["anthropic_key"]);
        assert_eq!(kinds(&format!("token={github}")), ["github_token"]);
        assert_eq!(kinds("AKIAIOSFODNN7EXAMPLE is the id"), ["aws_access_key"]);
        assert_eq!(
            kinds("-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----"),
            ["private_key"]
        );
        assert_eq!(
            kinds("curl -H 'Authorization: Bearer abcdefghijklmnop1234'"),
            ["bearer_token"]
        );
        assert_eq!(
            kinds("postgres://app:s3cr3tpass@db.internal/app"),
            ["url_credentials"]
        );
        assert_eq!(kinds(r#"{"api_key": "zzzzzzzz"}"#), ["password"]);
    }

    #[test]
    fn ordinary_prose_and_code_are_left_alone() {
        assert!(kinds("The password reset flow lives in src/auth/reset.rs").is_empty());
        assert!(kinds("fn risk_score(task: &Task) -> f64 { 0.5 }").is_empty());
        assert!(kinds("use the skeleton-loader; see sk-lite docs").is_empty());
    }

    #[test]
    fn redaction_keeps_the_context_and_removes_the_secret() {
        let scanner = SecretScanner::new().unwrap();
        let key = format!("sk-{}", "Q".repeat(40));
        let out = scanner.redact(&format!("set OPENAI to {key}; then PASSWORD=letmein99 ok"));
        assert_eq!(
            out.text,
            "set OPENAI to [REDACTED:openai_key]; then PASSWORD=[REDACTED:password] ok"
        );
        assert!(!out.text.contains(&key));
        assert_eq!(out.findings.len(), 2);
    }

    #[test]
    fn an_unterminated_private_key_is_redacted_to_the_end() {
        let scanner = SecretScanner::new().unwrap();
        let out = scanner.redact("here:\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk");
        assert_eq!(out.text, "here:\n[REDACTED:private_key]");
    }
}
