//! The storage suite.

use engram_store::{migrate, Database, Statement, StoreError, Value};

use crate::{ensure, fail, Failure};

/// Runs every storage check against `db`. `tag` makes table names unique so the suite can
/// run repeatedly against one shared server.
pub async fn storage_suite<D: Database>(db: &D, tag: &str) -> Result<(), Failure> {
    let t = format!("conf_{tag}");
    // First: on a fresh database the suite's own tables would make it another
    // application's, which migration refuses to touch.
    migrations_are_idempotent(db).await?;
    pipeline_results_are_independent(db, &t).await?;
    transactions_are_atomic(db, &t).await?;
    values_round_trip(db, &t).await?;
    fts5_with_porter(db, &t).await?;
    vector_functions(db).await?;
    json_functions(db).await?;
    Ok(())
}

async fn pipeline_results_are_independent<D: Database>(db: &D, t: &str) -> Result<(), Failure> {
    let check = "pipeline results are per statement";
    let results = db
        .pipeline(&[
            Statement::new(format!(
                "CREATE TABLE {t}_p (id INTEGER PRIMARY KEY, v TEXT)"
            )),
            Statement::new("SELECT * FROM no_such_table_anywhere"),
            Statement::with_params(
                format!("INSERT INTO {t}_p (v) VALUES (?1)"),
                vec!["x".into()],
            ),
            Statement::new(format!("SELECT count(*) AS n FROM {t}_p")),
        ])
        .await
        .map_err(fail(check))?;
    ensure(results.len() == 4, check, || {
        format!("{} results", results.len())
    })?;
    ensure(results[0].is_ok(), check, || {
        format!("create: {:?}", results[0])
    })?;
    ensure(results[1].is_err(), check, || {
        "bad select did not fail".into()
    })?;
    let insert = results[2].as_ref().map_err(|e| fail(check)(e.clone()))?;
    ensure(insert.affected_row_count == 1, check, || {
        format!("affected {}", insert.affected_row_count)
    })?;
    ensure(insert.last_insert_rowid == Some(1), check, || {
        format!("rowid {:?}", insert.last_insert_rowid)
    })?;
    let count = results[3].as_ref().map_err(|e| fail(check)(e.clone()))?;
    ensure(count.columns == ["n"], check, || {
        format!("columns {:?}", count.columns)
    })?;
    ensure(count.rows == [[Value::Integer(1)]], check, || {
        format!("rows {:?}", count.rows)
    })
}

async fn transactions_are_atomic<D: Database>(db: &D, t: &str) -> Result<(), Failure> {
    let check = "a failed transaction writes nothing";
    db.transaction(&[Statement::new(format!(
        "CREATE TABLE {t}_tx (id INTEGER PRIMARY KEY, v TEXT NOT NULL)"
    ))])
    .await
    .map_err(fail(check))?;
    let err = db
        .transaction(&[
            Statement::with_params(
                format!("INSERT INTO {t}_tx (v) VALUES (?1)"),
                vec!["kept?".into()],
            ),
            Statement::with_params(
                format!("INSERT INTO {t}_tx (v) VALUES (?1)"),
                vec![Value::Null],
            ),
        ])
        .await;
    ensure(matches!(err, Err(StoreError::Sql(_))), check, || {
        format!("expected SQL error, got {err:?}")
    })?;
    let ok = db
        .transaction(&[
            Statement::with_params(
                format!("INSERT INTO {t}_tx (v) VALUES (?1)"),
                vec!["a".into()],
            ),
            Statement::new(format!("SELECT count(*) FROM {t}_tx")),
        ])
        .await
        .map_err(fail(check))?;
    ensure(ok.len() == 2, check, || format!("{} results", ok.len()))?;
    ensure(ok[1].rows == [[Value::Integer(1)]], check, || {
        format!("rolled-back row leaked: {:?}", ok[1].rows)
    })
}

async fn values_round_trip<D: Database>(db: &D, t: &str) -> Result<(), Failure> {
    let check = "values round-trip";
    let values = vec![
        Value::Null,
        Value::Integer(i64::MIN),
        Value::Integer(i64::MAX),
        Value::Float(-0.125),
        Value::Float(1e300),
        Value::Text("naïve 数据 🦀 \"quoted\" \\ back".into()),
        Value::Text(String::new()),
        Value::Blob(vec![]),
        Value::Blob(vec![0xff]),
        Value::Blob(vec![0, 1]),
        Value::Blob((0..=255).collect()),
    ];
    let mut statements = vec![Statement::new(format!("CREATE TABLE {t}_v (i INTEGER, v)"))];
    for (i, v) in values.iter().enumerate() {
        statements.push(Statement::with_params(
            format!("INSERT INTO {t}_v (i, v) VALUES (?1, ?2)"),
            vec![Value::Integer(i as i64), v.clone()],
        ));
    }
    statements.push(Statement::new(format!("SELECT v FROM {t}_v ORDER BY i")));
    let rows = db.transaction(&statements).await.map_err(fail(check))?;
    let got: Vec<Value> = rows
        .last()
        .map(|r| {
            r.rows
                .iter()
                .filter_map(|row| row.first().cloned())
                .collect()
        })
        .unwrap_or_default();
    ensure(got == values, check, || {
        format!("sent {values:?}\ngot  {got:?}")
    })
}

async fn fts5_with_porter<D: Database>(db: &D, t: &str) -> Result<(), Failure> {
    let check = "FTS5 with porter unicode61";
    let rows = db
        .transaction(&[
            Statement::new(format!(
                "CREATE VIRTUAL TABLE {t}_fts USING fts5(body, tokenize = 'porter unicode61')"
            )),
            Statement::with_params(
                format!("INSERT INTO {t}_fts (body) VALUES (?1), (?2)"),
                vec!["migrations running slowly".into(), "unrelated text".into()],
            ),
            Statement::with_params(
                format!("SELECT body, bm25({t}_fts) FROM {t}_fts WHERE {t}_fts MATCH ?1"),
                vec!["\"migration\" OR \"runs\"".into()],
            ),
        ])
        .await
        .map_err(fail(check))?;
    let hits = &rows[2].rows;
    ensure(hits.len() == 1, check, || format!("hits {hits:?}"))?;
    ensure(
        hits[0][0] == Value::from("migrations running slowly"),
        check,
        || format!("{hits:?}"),
    )?;
    ensure(
        matches!(hits[0][1], Value::Float(s) if s < 0.0),
        check,
        || format!("bm25 {:?}", hits[0][1]),
    )
}

async fn vector_functions<D: Database>(db: &D) -> Result<(), Failure> {
    let check = "libSQL vector functions";
    let results = db
        .pipeline(&[Statement::new(
            "SELECT vector_distance_cos(vector32('[1,0,0]'), vector32('[0,1,0]')), \
             vector_distance_cos(vector32('[1,2,3]'), vector32('[2,4,6]')), \
             length(vector32('[1,2,3]'))",
        )])
        .await
        .map_err(fail(check))?;
    let rows = results
        .into_iter()
        .next()
        .ok_or_else(|| fail(check)("no result"))?
        .map_err(fail(check))?;
    let row = &rows.rows[0];
    let orthogonal = row[0].as_f64("d").map_err(fail(check))?;
    let parallel = row[1].as_f64("d").map_err(fail(check))?;
    ensure((orthogonal - 1.0).abs() < 1e-6, check, || {
        format!("orthogonal distance {orthogonal}")
    })?;
    ensure(parallel.abs() < 1e-6, check, || {
        format!("parallel distance {parallel}")
    })?;
    ensure(row[2] == Value::Integer(12), check, || {
        format!("F32 blob length {:?}", row[2])
    })
}

async fn json_functions<D: Database>(db: &D) -> Result<(), Failure> {
    let check = "JSON functions";
    let results = db
        .pipeline(&[Statement::with_params(
            "SELECT group_concat(value, '|') FROM json_each(?1)",
            vec![r#"["gotcha","decision"]"#.into()],
        )])
        .await
        .map_err(fail(check))?;
    let rows = results
        .into_iter()
        .next()
        .ok_or_else(|| fail(check)("no result"))?
        .map_err(fail(check))?;
    ensure(
        rows.rows == [[Value::from("gotcha|decision")]],
        check,
        || format!("{:?}", rows.rows),
    )
}

async fn migrations_are_idempotent<D: Database>(db: &D) -> Result<(), Failure> {
    let check = "migrations are idempotent";
    migrate(db, "2026-01-01T00:00:00.000Z")
        .await
        .map_err(fail(check))?;
    let again = migrate(db, "2026-01-01T00:00:01.000Z")
        .await
        .map_err(fail(check))?;
    ensure(again.is_empty(), check, || format!("re-applied {again:?}"))
}
