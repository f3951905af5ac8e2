//! The scanner against the corpus of real formats and the texts it must leave alone.

use super::*;

fn kinds(text: &str) -> Vec<&'static str> {
    SecretScanner::shared()
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
    assert_eq!(
        kinds(r#"{"api_key": "a8f3k2m9x7q1"}"#),
        ["secret_assignment"]
    );
    assert_eq!(kinds("DB_PASSWORD=changeme"), ["password"]);
}

#[test]
fn ordinary_prose_and_code_are_left_alone() {
    assert!(kinds("The password reset flow lives in src/auth/reset.rs").is_empty());
    assert!(kinds("fn risk_score(task: &Task) -> f64 { 0.5 }").is_empty());
    assert!(kinds("use the skeleton-loader; see sk-lite docs").is_empty());
}

#[test]
fn redaction_keeps_the_context_and_removes_the_secret() {
    let scanner = SecretScanner::shared().unwrap();
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
    let scanner = SecretScanner::shared().unwrap();
    let out = scanner.redact("here:\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk");
    assert_eq!(out.text, "here:\n[REDACTED:private_key]");
}
#[derive(serde::Deserialize)]
struct Corpus {
    cases: Vec<Case>,
    clean: Vec<String>,
}

#[derive(serde::Deserialize)]
struct Case {
    name: String,
    secret: String,
    text: String,
}

fn corpus() -> Corpus {
    let text = include_str!("../../../../tests/secrets/corpus.json");
    serde_json::from_str(text).expect("the corpus is valid JSON")
}

/// Whether any ten characters of `secret` in a row are still in `text`.
fn leaks(text: &str, secret: &str) -> bool {
    let chars: Vec<char> = secret.chars().collect();
    let window = chars.len().min(10);
    chars
        .windows(window)
        .any(|w| text.contains(&w.iter().collect::<String>()))
}

#[test]
fn every_format_of_the_corpus_is_redacted() {
    let scanner = SecretScanner::shared().unwrap();
    let corpus = corpus();
    assert!(corpus.cases.len() >= 60);
    let missed: Vec<&str> = corpus
        .cases
        .iter()
        .filter(|case| leaks(&scanner.redact(&case.text).text, &case.secret))
        .map(|case| case.name.as_str())
        .collect();
    assert!(missed.is_empty(), "secrets left in: {missed:?}");
}

#[test]
fn the_clean_texts_of_the_corpus_are_left_alone() {
    let scanner = SecretScanner::shared().unwrap();
    for text in corpus().clean {
        assert_eq!(scanner.redact(&text).text, text);
    }
}

#[test]
fn redacting_twice_changes_nothing_more() {
    let scanner = SecretScanner::shared().unwrap();
    for case in corpus().cases {
        let once = scanner.redact(&case.text).text;
        assert_eq!(scanner.redact(&once).text, once, "{}", case.name);
    }
}

#[test]
fn json_values_are_redacted_by_their_names_too() {
    let scanner = SecretScanner::shared().unwrap();
    let mut value = serde_json::json!({
        "command": "psql postgres://app:pa55word1@db/app",
        "env": {"DB_PASSWORD": "hunter22", "LOG_LEVEL": "debug"},
        "nested": [[{"token": "a8f3k2m9x7q1z5w4"}]],
    });
    let kinds = scanner.redact_json(&mut value);
    let text = value.to_string();
    assert_eq!(kinds.len(), 3, "{text}");
    for secret in ["pa55word1", "hunter22", "a8f3k2m9x7q1z5w4"] {
        assert!(!text.contains(secret), "{text}");
    }
    assert!(text.contains("debug"));
}

#[test]
fn deeply_nested_json_does_not_exhaust_the_stack() {
    let scanner = SecretScanner::shared().unwrap();
    let mut value = serde_json::Value::String("password: hunter22".into());
    for _ in 0..100_000 {
        value = serde_json::Value::Array(vec![value]);
    }
    assert_eq!(scanner.redact_json(&mut value), ["password"]);
    // Dropping a deep value recurses in serde_json; unwind it by hand.
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        if let serde_json::Value::Array(items) = value {
            stack.extend(items);
        }
    }
}

#[test]
fn an_assignment_inside_a_rejected_value_is_still_found() {
    let scanner = SecretScanner::shared().unwrap();
    let text = "secretcase22: //registry.npmjs.org/:_authToken=qyW8pCoN2uA7hK3mZ9xL";
    assert!(!scanner.redact(text).text.contains("qyW8pCoN2u"));
    let text = "tokens: see below; DB_PASSWORD=hunter22";
    assert_eq!(
        scanner.redact(text).text,
        "tokens: see below; DB_PASSWORD=[REDACTED:password]"
    );
}

#[test]
fn a_value_longer_than_the_rules_match_is_redacted_to_its_end() {
    let scanner = SecretScanner::shared().unwrap();
    let alphabet: Vec<char> = "abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQR0123456789"
        .chars()
        .collect();
    let long: String = (0..1200usize)
        .map(|i| alphabet[(i * 7 + i * i / 5) % alphabet.len()])
        .collect();
    let out = scanner.redact(&format!("API_KEY={long} next"));
    assert_eq!(out.text, "API_KEY=[REDACTED:secret_assignment] next");
}
