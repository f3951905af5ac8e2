//! Executing Hrana requests on a libsql connection.

use engram_hrana::proto::{
    BatchCond, BatchResult, Col, HranaError, HranaValue, Stmt, StmtResult, StreamRequest,
    StreamResponse, StreamResult,
};
use engram_libsql::{from_libsql, to_libsql};

/// Runs one stream request. `v3` enables the requests and conditions v2 lacks.
pub async fn run_request(
    conn: &libsql::Connection,
    request: StreamRequest,
    v3: bool,
) -> StreamResult {
    let response = match request {
        StreamRequest::Execute { stmt } => execute(conn, stmt)
            .await
            .map(|result| StreamResponse::Execute { result }),
        StreamRequest::Batch { batch } => {
            let mut outcomes: Vec<Option<bool>> = Vec::with_capacity(batch.steps.len());
            let mut result = BatchResult::default();
            for step in batch.steps {
                let run = match &step.condition {
                    None => Ok(true),
                    Some(cond) => eval(cond, &outcomes, conn, v3),
                };
                match run {
                    Err(error) => {
                        return StreamResult::Error { error };
                    }
                    Ok(false) => {
                        outcomes.push(None);
                        result.step_results.push(None);
                        result.step_errors.push(None);
                    }
                    Ok(true) => match execute(conn, step.stmt).await {
                        Ok(r) => {
                            outcomes.push(Some(true));
                            result.step_results.push(Some(r));
                            result.step_errors.push(None);
                        }
                        Err(e) => {
                            outcomes.push(Some(false));
                            result.step_results.push(None);
                            result.step_errors.push(Some(e));
                        }
                    },
                }
            }
            Ok(StreamResponse::Batch { result })
        }
        StreamRequest::Sequence { sql } => match sql {
            Some(sql) => conn
                .execute_batch(&sql)
                .await
                .map(|_| StreamResponse::Sequence)
                .map_err(sql_error),
            None => Err(protocol_error("sequence needs sql")),
        },
        StreamRequest::GetAutocommit if v3 => Ok(StreamResponse::GetAutocommit {
            is_autocommit: conn.is_autocommit(),
        }),
        StreamRequest::GetAutocommit => Err(protocol_error("get_autocommit needs Hrana v3")),
        StreamRequest::Close => Ok(StreamResponse::Close),
    };
    match response {
        Ok(response) => StreamResult::Ok { response },
        Err(error) => StreamResult::Error { error },
    }
}

fn eval(
    cond: &BatchCond,
    outcomes: &[Option<bool>],
    conn: &libsql::Connection,
    v3: bool,
) -> Result<bool, HranaError> {
    let step = |step: u32| {
        outcomes.get(step as usize).copied().ok_or_else(|| {
            protocol_error(&format!(
                "condition refers to step {step}, which has not run"
            ))
        })
    };
    Ok(match cond {
        BatchCond::Ok { step: s } => step(*s)? == Some(true),
        BatchCond::Error { step: s } => step(*s)? == Some(false),
        BatchCond::Not { cond } => !eval(cond, outcomes, conn, v3)?,
        BatchCond::And { conds } => {
            let mut all = true;
            for c in conds {
                all &= eval(c, outcomes, conn, v3)?;
            }
            all
        }
        BatchCond::Or { conds } => {
            let mut any = false;
            for c in conds {
                any |= eval(c, outcomes, conn, v3)?;
            }
            any
        }
        BatchCond::IsAutocommit if v3 => conn.is_autocommit(),
        BatchCond::IsAutocommit => return Err(protocol_error("is_autocommit needs Hrana v3")),
    })
}

async fn execute(conn: &libsql::Connection, stmt: Stmt) -> Result<StmtResult, HranaError> {
    if !stmt.args.is_empty() && !stmt.named_args.is_empty() {
        return Err(protocol_error(
            "a statement cannot have both positional and named arguments",
        ));
    }
    let params = if stmt.named_args.is_empty() {
        libsql::params::Params::Positional(stmt.args.iter().map(|v| to_libsql(&v.0)).collect())
    } else {
        libsql::params::Params::Named(
            stmt.named_args
                .iter()
                .map(|a| (a.name.clone(), to_libsql(&a.value.0)))
                .collect(),
        )
    };
    let before = conn.total_changes();
    let mut rows = conn.query(&stmt.sql, params).await.map_err(sql_error)?;
    let cols: Vec<Col> = (0..rows.column_count())
        .map(|i| Col {
            name: rows.column_name(i).map(str::to_owned),
            decltype: None,
        })
        .collect();
    let mut out = Vec::new();
    while let Some(row) = rows.next().await.map_err(sql_error)? {
        if !stmt.want_rows {
            continue;
        }
        let mut values = Vec::with_capacity(cols.len());
        for i in 0..cols.len() as i32 {
            values.push(HranaValue(from_libsql(
                row.get_value(i).map_err(sql_error)?,
            )));
        }
        out.push(values);
    }
    let changed = conn.total_changes() != before;
    Ok(StmtResult {
        cols,
        rows: out,
        affected_row_count: if changed { conn.changes() } else { 0 },
        last_insert_rowid: changed.then(|| conn.last_insert_rowid().to_string()),
    })
}

fn sql_error(e: libsql::Error) -> HranaError {
    let code = match &e {
        libsql::Error::SqliteFailure(code, _) => match code & 0xff {
            5 => "SQLITE_BUSY",
            19 => "SQLITE_CONSTRAINT",
            _ => "SQLITE_ERROR",
        },
        _ => "SQLITE_ERROR",
    };
    HranaError {
        message: e.to_string(),
        code: Some(code.to_owned()),
    }
}

pub(crate) fn protocol_error(message: &str) -> HranaError {
    HranaError {
        message: message.to_owned(),
        code: Some("PROTOCOL_ERROR".to_owned()),
    }
}
