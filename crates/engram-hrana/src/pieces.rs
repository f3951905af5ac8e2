//! A transaction too large for one request (a whole repository's code graph), sent as
//! several requests on one server-side stream: still one transaction, committed by the last
//! request or rolled back as a whole.

use engram_store::{Rows, Statement, StoreError};

use crate::client::unexpected;
use crate::proto::{
    Batch, BatchCond, BatchStep, Stmt, StreamRequest, StreamResponse, StreamResult,
};
use crate::{HranaClient, HranaStream, HttpTransport};

/// Requests larger than this are split (servers commonly refuse bodies over 2 MiB).
pub const DEFAULT_MAX_REQUEST_BYTES: usize = 1 << 20;

/// Splits `statements` into runs whose encoded size stays under `limit` (a statement larger
/// than `limit` on its own goes alone: the server is the judge of it).
pub(crate) fn split(statements: &[Statement], limit: usize) -> Vec<&[Statement]> {
    let mut pieces = Vec::new();
    let mut start = 0;
    let mut size = 0;
    for (i, statement) in statements.iter().enumerate() {
        let bytes = encoded_len(statement);
        if i > start && size + bytes > limit {
            pieces.push(&statements[start..i]);
            start = i;
            size = 0;
        }
        size += bytes;
    }
    if start < statements.len() || pieces.is_empty() {
        pieces.push(&statements[start..]);
    }
    pieces
}

/// The statement's size in a request, with room for the step around it.
pub(crate) fn encoded_len(statement: &Statement) -> usize {
    serde_json::to_string(&Stmt::from_statement(statement, true)).map_or(0, |s| s.len()) + 64
}

impl<T: HttpTransport> HranaClient<T> {
    /// Runs `statements` as one transaction over several requests on one stream, each under
    /// `limit` bytes: `BEGIN` rides with the first piece, `COMMIT` with the last; a failure
    /// rolls everything back.
    pub(crate) async fn transaction_in_pieces(
        &self,
        statements: &[Statement],
        limit: usize,
    ) -> Result<Vec<Rows>, StoreError> {
        let pieces = split(statements, limit);
        let last = pieces.len() - 1;
        let mut stream = self.stream();
        let mut rows = Vec::with_capacity(statements.len());
        for (i, piece) in pieces.into_iter().enumerate() {
            match send_piece(&mut stream, piece, i == 0, i == last).await {
                Ok(mut done) => rows.append(&mut done),
                Err(e) => {
                    abandon(&mut stream).await;
                    return Err(e);
                }
            }
        }
        Ok(rows)
    }
}

/// One piece: its statements, each run only if the one before succeeded, after `BEGIN`
/// when `first`, before `COMMIT` and the stream's close when `last`.
async fn send_piece<T: HttpTransport>(
    stream: &mut HranaStream<'_, T>,
    piece: &[Statement],
    first: bool,
    last: bool,
) -> Result<Vec<Rows>, StoreError> {
    let mut steps = Vec::with_capacity(piece.len() + 2);
    let push = |stmt: Stmt, steps: &mut Vec<BatchStep>| {
        let condition = steps
            .len()
            .checked_sub(1)
            .map(|step| BatchCond::Ok { step: step as u32 });
        steps.push(BatchStep { stmt, condition });
    };
    if first {
        push(
            Stmt::from_statement(&Statement::new("BEGIN"), false),
            &mut steps,
        );
    }
    for statement in piece {
        push(Stmt::from_statement(statement, true), &mut steps);
    }
    if last {
        push(
            Stmt::from_statement(&Statement::new("COMMIT"), false),
            &mut steps,
        );
    }
    let mut requests = vec![StreamRequest::Batch {
        batch: Batch { steps },
    }];
    if last {
        requests.push(StreamRequest::Close);
    }
    let results = stream.requests(requests).await?;
    let batch = match results.into_iter().next() {
        Some(StreamResult::Ok {
            response: StreamResponse::Batch { result },
        }) => result,
        Some(StreamResult::Error { error }) => return Err(StoreError::Sql(error.into())),
        Some(other) => return Err(unexpected(&other)),
        None => return Err(StoreError::Protocol("empty results".into())),
    };
    if let Some(error) = batch.step_errors.into_iter().flatten().next() {
        return Err(StoreError::Sql(error.into()));
    }
    let mut results = batch.step_results.into_iter();
    if first {
        results.next();
    }
    let mut rows = Vec::with_capacity(piece.len());
    for _ in piece {
        match results.next().flatten() {
            Some(result) => rows.push(result.into_rows()?),
            None => {
                return Err(StoreError::Protocol(
                    "a step of the transaction has neither result nor error".into(),
                ))
            }
        }
    }
    if last && results.next().flatten().is_none() {
        return Err(StoreError::Protocol("COMMIT did not run".into()));
    }
    Ok(rows)
}

/// Rolls back and closes after a failure; the server's idle timeout does the same if this
/// request is lost too.
async fn abandon<T: HttpTransport>(stream: &mut HranaStream<'_, T>) {
    if !stream.is_open() {
        return;
    }
    let rollback = StreamRequest::Execute {
        stmt: Stmt::from_statement(&Statement::new("ROLLBACK"), false),
    };
    let _ = stream.requests(vec![rollback, StreamRequest::Close]).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_stay_under_the_limit_and_keep_every_statement_in_order() {
        let statements: Vec<Statement> = (0..100)
            .map(|i| {
                Statement::new(format!(
                    "INSERT INTO t VALUES ({i}, '{}')",
                    "x".repeat(i * 10)
                ))
            })
            .collect();
        let limit = 4_000;
        let pieces = split(&statements, limit);
        assert!(pieces.len() > 5);
        let joined: Vec<&Statement> = pieces.iter().flat_map(|p| p.iter()).collect();
        assert_eq!(joined.len(), statements.len());
        assert!(joined
            .iter()
            .zip(&statements)
            .all(|(a, b)| std::ptr::eq(*a, b)));
        for piece in &pieces {
            let size: usize = piece.iter().map(encoded_len).sum();
            assert!(size <= limit || piece.len() == 1, "{size}");
        }
        assert_eq!(split(&statements[..0], limit).len(), 1);
    }
}
