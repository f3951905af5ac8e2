//! Our Porter stems against FTS5's own: every distinct word of this repository's README, its
//! `docs/` and two source files goes through SQLite's `porter unicode61` tokenizer, and
//! `fts5vocab` reports the stem it indexed.

use std::collections::BTreeSet;

use engram::Database;
use engram_libsql::LocalDatabase;
use engram_store::{Statement, Value};

/// The repository's prose: the README and every page of `docs/`, in a fixed order.
fn prose() -> Vec<String> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut pages: Vec<_> = std::fs::read_dir(root.join("docs"))
        .expect("docs/")
        .map(|entry| entry.expect("docs/ entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "md"))
        .collect();
    pages.sort();
    pages.insert(0, root.join("README.md"));
    pages
        .iter()
        .map(|page| std::fs::read_to_string(page).expect("a prose page"))
        .collect()
}

fn words() -> BTreeSet<String> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut text = prose().concat();
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

/// Indexes `texts` (rowid = position + 1) in a `porter unicode61` table and returns, per
/// text, the terms FTS5 recorded in order of position, and the length it recorded.
async fn fts5_terms(texts: &[String]) -> Vec<(Vec<String>, i64)> {
    let db = LocalDatabase::open(":memory:").await.expect("db");
    let mut statements = vec![
        Statement::new("CREATE VIRTUAL TABLE t USING fts5(x, tokenize = 'porter unicode61')"),
        Statement::new("CREATE VIRTUAL TABLE tv USING fts5vocab(t, 'instance')"),
    ];
    for (i, text) in texts.iter().enumerate() {
        statements.push(Statement::with_params(
            "INSERT INTO t (rowid, x) VALUES (?1, ?2)",
            vec![Value::Integer(i as i64 + 1), Value::from(text.as_str())],
        ));
    }
    db.transaction(&statements).await.expect("index texts");
    let mut results = db
        .pipeline(&[
            Statement::new("SELECT doc, term FROM tv ORDER BY doc, offset"),
            Statement::new("SELECT id, sz FROM t_docsize ORDER BY id"),
        ])
        .await
        .expect("vocab");
    let sizes = results.pop().unwrap().expect("sizes");
    let terms = results.pop().unwrap().expect("terms");
    let mut out = vec![(Vec::new(), 0); texts.len()];
    for row in &terms.rows {
        let doc = row[0].as_i64("doc").expect("doc") as usize;
        out[doc - 1]
            .0
            .push(row[1].as_text("term").expect("term").to_owned());
    }
    for row in &sizes.rows {
        let id = row[0].as_i64("id").expect("id") as usize;
        // One column: the size blob is a single SQLite varint, most significant 7 bits
        // first (a text of 128 terms or more takes two bytes).
        let Value::Blob(blob) = &row[1] else {
            panic!("size {:?}", row[1])
        };
        let mut size = 0i64;
        for byte in blob {
            size = (size << 7) | i64::from(byte & 0x7f);
            if byte & 0x80 == 0 {
                break;
            }
        }
        out[id - 1].1 = size;
    }
    out
}

fn our_terms(text: &str) -> Vec<String> {
    let mut terms = Vec::new();
    engram_core::fts_terms::for_each_term(text, |t| terms.push(t.to_owned()));
    terms
}

/// Every ASCII character, then for non-ASCII: the edges of every range the table keeps (and
/// the code points just outside them), every folded code point, and a stride over all the
/// planes, each between two letters; then real prose and code with numbers, identifiers
/// and accented words.
#[tokio::test]
async fn fts_terms_match_fts5_per_code_point_and_on_real_text() {
    let mut points: BTreeSet<u32> = (1..0x80).collect();
    points.extend((0x80..0x11_0000).step_by(97));
    for &(first, last) in engram_core::fts_terms::TOKEN_RANGES {
        points.extend([first.saturating_sub(1), first, last, last + 1]);
    }
    points.extend(engram_core::fts_terms::FOLDS.iter().map(|&(from, _)| from));
    let mut texts: Vec<String> = points
        .iter()
        .filter_map(|&p| char::from_u32(p))
        .map(|c| format!("qq{c}zz qq{c}ings"))
        .collect();
    for page in prose() {
        texts.extend(page.lines().map(str::to_owned));
    }
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    for source in [
        "crates/engram-core/src/query.rs",
        "crates/engram-core/src/fts_terms.rs",
        "crates/engram-retrieval/src/analysis/mod.rs",
    ] {
        let text = std::fs::read_to_string(root.join(source)).expect("source");
        texts.extend(text.lines().map(str::to_owned));
    }
    texts.push("Réservations ÉCOLE naïve Ñandú 12s utf8s x²y ΣΑΣ İstanbul ﬁle ＡＢＣ".into());
    let fts5 = fts5_terms(&texts).await;
    let mut differ = Vec::new();
    for (text, (terms, size)) in texts.iter().zip(&fts5) {
        let ours = our_terms(text);
        if &ours != terms || engram_core::fts_terms::term_count(text) as i64 != *size {
            differ.push(format!("{text:?}: ours {ours:?}, FTS5 {terms:?} ({size})"));
        }
    }
    assert!(texts.len() > 15_000, "only {} texts", texts.len());
    assert!(
        differ.is_empty(),
        "{} of {} texts differ:\n{}",
        differ.len(),
        texts.len(),
        differ[..differ.len().min(40)].join("\n")
    );
}
