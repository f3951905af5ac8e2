//! Our Porter stems against FTS5's own: every distinct word of this repository's README and
//! of two source files goes through SQLite's `porter unicode61` tokenizer, and
//! `fts5vocab` reports the stem it indexed.

use std::collections::BTreeSet;

use engram::Database;
use engram_libsql::LocalDatabase;
use engram_store::{Statement, Value};

fn words() -> BTreeSet<String> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut text = std::fs::read_to_string(root.join("README.md")).expect("README.md");
    for source in [
        "crates/engram-core/src/query.rs",
        "crates/engram-retrieval/src/lib.rs",
    ] {
        text.push_str(&std::fs::read_to_string(root.join(source)).expect("source"));
    }
    text.split(|c: char| !c.is_ascii_alphabetic())
        .filter(|w| w.len() >= 3 && w.len() <= 30)
        .map(str::to_ascii_lowercase)
        .collect()
}

#[tokio::test]
async fn porter_stems_match_fts5s_on_real_prose() {
    let words: Vec<String> = words().into_iter().collect();
    assert!(words.len() > 1000, "only {} words", words.len());
    let db = LocalDatabase::open(":memory:").await.expect("db");
    let mut statements = vec![
        Statement::new("CREATE VIRTUAL TABLE w USING fts5(word, tokenize = 'porter unicode61')"),
        Statement::new("CREATE VIRTUAL TABLE wv USING fts5vocab(w, 'instance')"),
    ];
    for (i, word) in words.iter().enumerate() {
        statements.push(Statement::with_params(
            "INSERT INTO w (rowid, word) VALUES (?1, ?2)",
            vec![Value::Integer(i as i64 + 1), Value::from(word.as_str())],
        ));
    }
    db.transaction(&statements).await.expect("index words");
    let rows = db
        .pipeline(&[Statement::new("SELECT doc, term FROM wv ORDER BY doc")])
        .await
        .expect("vocab")
        .remove(0)
        .expect("rows");
    assert_eq!(rows.rows.len(), words.len());
    let mut differ = Vec::new();
    for row in &rows.rows {
        let doc = row[0].as_i64("doc").expect("doc") as usize;
        let fts5 = row[1].as_text("term").expect("term");
        let word = &words[doc - 1];
        let ours = engram_core::porter::stem(word);
        if ours != fts5 {
            differ.push(format!("{word}: ours {ours}, FTS5 {fts5}"));
        }
    }
    assert!(
        differ.is_empty(),
        "{} of {} differ:\n{}",
        differ.len(),
        words.len(),
        differ.join("\n")
    );
}
