use super::*;

fn fields(json: &str) -> Vec<String> {
    match EngramOptions::from_json(json) {
        Ok(_) => Vec::new(),
        Err(e) => e.violations.into_iter().map(|v| v.field).collect(),
    }
}

#[test]
fn a_server_or_a_local_database_is_required_and_not_both() {
    assert_eq!(fields("{}"), ["url"]);
    assert_eq!(fields(r#"{"url": "http://x", "local": true}"#), ["local"]);
    assert_eq!(fields(r#"{"url": "ftp://x"}"#), ["url"]);
    assert_eq!(fields(r#"{"path": "a.db"}"#), ["url", "path"]);
    assert!(fields(r#"{"url": "libsql://db.example", "authToken": "t"}"#).is_empty());
    assert!(fields(r#"{"local": true, "path": "a.db"}"#).is_empty());
}

#[test]
fn the_database_target_follows_the_options() {
    let remote = EngramOptions::from_json(r#"{"url": "https://db", "authToken": "t"}"#).unwrap();
    assert_eq!(
        remote.database(),
        DatabaseTarget::Remote {
            url: "https://db".into(),
            auth_token: Some("t".into()),
            max_request_bytes: None,
        }
    );
    let local = EngramOptions::from_json(r#"{"local": true}"#).unwrap();
    assert_eq!(local.database(), DatabaseTarget::Local { path: None });
    assert_eq!(local.project(), DEFAULT_PROJECT);
}

#[test]
fn types_and_unknown_fields_are_named() {
    assert_eq!(
        fields(r#"{"local": true, "vectorIndex": "yes"}"#),
        ["vectorIndex"]
    );
    assert_eq!(
        fields(r#"{"local": true, "residentVector": true}"#),
        ["residentVector"]
    );
    assert_eq!(
        fields(r#"{"local": true, "projectId": " "}"#),
        ["projectId"]
    );
    assert_eq!(fields("[]"), ["(root)"]);
}

#[test]
fn embedder_fields_are_checked_per_provider() {
    let local = |embedder: &str| fields(&format!(r#"{{"local": true, "embedder": {embedder}}}"#));
    assert_eq!(local(r#"{"provider": "cohere"}"#), ["embedder.provider"]);
    assert_eq!(
        local(r#"{"provider": "ollama"}"#),
        ["embedder.url", "embedder.model", "embedder.dims"]
    );
    assert_eq!(
        local(r#"{"provider": "ollama", "url": "http://o", "model": "m", "dims": 0}"#),
        ["embedder.dims"]
    );
    assert_eq!(
        local(r#"{"provider": "ollama", "url": "http://o", "model": "m", "dims": -1}"#),
        ["embedder.dims"]
    );
    assert_eq!(
        local(r#"{"provider": "bundled", "dims": 384}"#),
        ["embedder.dims"]
    );
    assert!(
        local(r#"{"provider": "openai", "url": "https://o/v1", "model": "m", "dims": 8}"#)
            .is_empty()
    );
    assert!(local(r#"{"provider": "none"}"#).is_empty());
}

#[test]
fn reranker_fields_are_checked() {
    let local = |reranker: &str| fields(&format!(r#"{{"local": true, "reranker": {reranker}}}"#));
    assert_eq!(
        local(r#"{"provider": "x", "url": "http://r"}"#),
        ["reranker.provider"]
    );
    assert_eq!(
        local(r#"{"provider": "cohere", "url": "http://r"}"#),
        ["reranker.model"]
    );
    assert_eq!(local(r#"{"url": "http://r"}"#), ["reranker.provider"]);
    assert_eq!(local("42"), ["reranker"]);
    assert_eq!(
        local(r#"{"provider": "tei", "url": "r"}"#),
        ["reranker.url"]
    );
    assert_eq!(local(r#"{"provider": "tei"}"#), ["reranker.url"]);
    assert!(local(r#"{"provider": "jina", "url": "https://r", "model": "m"}"#).is_empty());
}

#[test]
fn secrets_never_leave_through_serialize_or_debug() {
    let options = EngramOptions::from_json(
        r#"{"url": "https://db", "authToken": "tok-123", "embedder": {"provider": "openai", "url": "https://o", "model": "m", "dims": 4, "apiKey": "key-456"}, "reranker": {"provider": "tei", "url": "http://r", "apiKey": "key-789"}}"#,
    )
    .unwrap();
    let shown = format!("{options:?} {}", serde_json::to_string(&options).unwrap());
    for secret in ["tok-123", "key-456", "key-789"] {
        assert!(!shown.contains(secret), "{secret} in {shown}");
    }
}
