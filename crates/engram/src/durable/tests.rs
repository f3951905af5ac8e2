use super::*;
use engram_store::SqlError;

#[test]
fn passing_failures_are_the_ones_a_retry_can_cure() {
    assert!(is_passing(&StoreError::Transport(
        "connection refused".into()
    )));
    assert!(is_passing(&StoreError::Http {
        status: 503,
        body: String::new()
    }));
    assert!(is_passing(&StoreError::Http {
        status: 429,
        body: String::new()
    }));
    assert!(is_passing(&StoreError::Protocol(
        "cannot decode pipeline response".into()
    )));
    assert!(!is_passing(&StoreError::Http {
        status: 400,
        body: String::new()
    }));
    assert!(!is_passing(&StoreError::Unauthorized { status: 401 }));
    assert!(!is_passing(&StoreError::Sql(SqlError {
        message: "no such table: memories".into(),
        code: None
    })));
}

#[test]
fn degraded_while_writes_wait_or_the_last_one_failed() {
    let durability = Durability::new(RetryPolicy::default());
    assert!(!durability.status().degraded);
    durability.failed(&StoreError::Transport("refused".into()));
    let status = durability.status();
    assert!(status.degraded);
    assert_eq!(
        status.last_error.as_deref(),
        Some("could not reach the database: refused")
    );
    durability.push(Write {
        statements: Vec::new(),
        key: "write:1".into(),
        memory_ids: vec!["a".into()],
    });
    durability.healthy();
    assert!(durability.status().degraded, "a write still waits");
    assert_eq!(durability.status().pending, 1);
    let write = durability.take_oldest().expect("the buffered write");
    assert_eq!(write.memory_ids, ["a"]);
    let status = durability.status();
    assert!(!status.degraded);
    assert_eq!(status.last_error, None);
}

#[test]
fn receipt_keys_keep_callers_apart_from_engram() {
    assert_eq!(receipt::key(Some("abc"), || unreachable!()), "caller:abc");
    assert_eq!(receipt::key(None, || "r1".into()), "write:r1");
    assert_ne!(
        receipt::key(Some("write:r1"), String::new),
        receipt::key(None, || "r1".into())
    );
}
