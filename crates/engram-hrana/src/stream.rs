//! Interactive streams: several round trips on one server-side connection, tied together by
//! batons.

use engram_store::{Rows, Statement, StoreError};

use crate::client::unexpected;
use crate::proto::{PipelineRequest, Stmt, StreamRequest, StreamResponse, StreamResult};
use crate::{HranaClient, HttpTransport};

/// A server-side connection held open across requests, e.g. for an interactive
/// transaction (`BEGIN`, reads and writes that depend on each other, `COMMIT`).
///
/// Always finish with [`HranaStream::close`]; a stream that is dropped open is closed by the
/// server after its idle timeout, rolling back any open transaction.
pub struct HranaStream<'c, T> {
    client: &'c HranaClient<T>,
    baton: Option<String>,
    base_url: Option<String>,
    closed: bool,
}

impl<'c, T: HttpTransport> HranaStream<'c, T> {
    pub(crate) fn new(client: &'c HranaClient<T>) -> Self {
        HranaStream {
            client,
            baton: None,
            base_url: None,
            closed: false,
        }
    }

    /// Executes one statement on this stream.
    pub async fn execute(&mut self, statement: &Statement) -> Result<Rows, StoreError> {
        let result = self
            .round_trip(StreamRequest::Execute {
                stmt: Stmt::from_statement(statement, true),
            })
            .await?;
        match result {
            StreamResult::Ok {
                response: StreamResponse::Execute { result },
            } => result.into_rows(),
            StreamResult::Error { error } => Err(StoreError::Sql(error.into())),
            other => Err(unexpected(&other)),
        }
    }

    /// Whether the stream is outside a transaction (protocol v3 only).
    pub async fn is_autocommit(&mut self) -> Result<bool, StoreError> {
        match self.round_trip(StreamRequest::GetAutocommit).await? {
            StreamResult::Ok {
                response: StreamResponse::GetAutocommit { is_autocommit },
            } => Ok(is_autocommit),
            StreamResult::Error { error } => Err(StoreError::Sql(error.into())),
            other => Err(unexpected(&other)),
        }
    }

    /// Closes the stream; an open transaction is rolled back by the server.
    pub async fn close(mut self) -> Result<(), StoreError> {
        if self.baton.is_none() {
            self.closed = true;
            return Ok(());
        }
        self.round_trip(StreamRequest::Close).await?;
        self.closed = true;
        Ok(())
    }

    async fn round_trip(&mut self, request: StreamRequest) -> Result<StreamResult, StoreError> {
        self.requests(vec![request])
            .await?
            .into_iter()
            .next()
            .ok_or_else(|| StoreError::Protocol("empty results".into()))
    }

    /// Sends `requests` in one round trip on this stream; the server's baton (and base URL)
    /// carries the stream to the next.
    pub(crate) async fn requests(
        &mut self,
        requests: Vec<StreamRequest>,
    ) -> Result<Vec<StreamResult>, StoreError> {
        if self.closed {
            return Err(StoreError::Protocol("stream already closed".into()));
        }
        let response = self
            .client
            .send(
                self.base_url.as_deref(),
                &PipelineRequest {
                    baton: self.baton.clone(),
                    requests,
                },
            )
            .await?;
        self.baton = response.baton;
        if response.base_url.is_some() {
            self.base_url = response.base_url;
        }
        if self.baton.is_none() {
            self.closed = true;
        }
        Ok(response.results)
    }

    /// Whether the server still holds this stream open.
    pub(crate) fn is_open(&self) -> bool {
        !self.closed && self.baton.is_some()
    }
}
