//! The pipeline client.

use std::sync::atomic::{AtomicU8, Ordering};

use engram_store::{Database, Rows, SqlError, Statement, StoreError};

use crate::proto::{
    Batch, BatchCond, BatchStep, PipelineRequest, PipelineResponse, Stmt, StreamRequest,
    StreamResponse, StreamResult,
};
use crate::{HranaStream, HttpTransport};

const VERSION_UNKNOWN: u8 = 0;

/// A Hrana-over-HTTP client for one database.
///
/// ```no_run
/// # async fn demo<T: engram_hrana::HttpTransport>(transport: T) -> Result<(), engram_store::StoreError> {
/// use engram_store::{Database, Statement};
/// let db = engram_hrana::HranaClient::new(transport, "libsql://my-db.example.turso.io", Some("token".into()));
/// let results = db.pipeline(&[Statement::new("SELECT 1")]).await?;
/// # Ok(()) }
/// ```
pub struct HranaClient<T> {
    transport: T,
    base_url: String,
    auth_token: Option<String>,
    /// 0 until the first answer tells us which pipeline version the server speaks.
    version: AtomicU8,
    /// Transactions larger than this go in pieces on one stream.
    max_request_bytes: usize,
}

impl<T: std::fmt::Debug> std::fmt::Debug for HranaClient<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The token is deliberately left out: it must never reach logs.
        f.debug_struct("HranaClient")
            .field("base_url", &self.base_url)
            .field("has_token", &self.auth_token.is_some())
            .finish()
    }
}

impl<T: HttpTransport> HranaClient<T> {
    /// A client for the database at `url` (`http://`, `https://` or `libsql://`, which means
    /// `https://`), sending `auth_token` as a bearer token. A token in the URL's query
    /// (`?authToken=…`, as libSQL clients accept) is used when none is given; the query
    /// is never part of a request URL, so it never reaches a log or an error message.
    pub fn new(transport: T, url: &str, auth_token: Option<String>) -> Self {
        let (url, query_token) = split_query_token(url);
        HranaClient {
            transport,
            base_url: normalize_url(url),
            auth_token: auth_token.filter(|t| !t.is_empty()).or(query_token),
            version: AtomicU8::new(VERSION_UNKNOWN),
            max_request_bytes: crate::pieces::DEFAULT_MAX_REQUEST_BYTES,
        }
    }

    /// Sends transactions larger than `bytes` as several requests on one stream (still one
    /// transaction); for servers that accept smaller bodies than the default
    /// [`DEFAULT_MAX_REQUEST_BYTES`](crate::DEFAULT_MAX_REQUEST_BYTES).
    pub fn with_max_request_bytes(mut self, bytes: usize) -> Self {
        self.max_request_bytes = bytes.max(1024);
        self
    }

    /// The transport requests go through.
    pub fn transport(&self) -> &T {
        &self.transport
    }

    /// The server's base URL as used for requests.
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// The pipeline version in use (3 or 2), once known.
    pub fn protocol_version(&self) -> Option<u8> {
        match self.version.load(Ordering::Relaxed) {
            VERSION_UNKNOWN => None,
            v => Some(v),
        }
    }

    /// Opens an interactive stream (for transactions spanning several round trips).
    pub fn stream(&self) -> HranaStream<'_, T> {
        HranaStream::new(self)
    }

    /// Sends one pipeline request to `base_url` (the stream's own one, if the server moved
    /// it), negotiating the protocol version on first use.
    pub(crate) async fn send(
        &self,
        base_url: Option<&str>,
        request: &PipelineRequest,
    ) -> Result<PipelineResponse, StoreError> {
        let body = serde_json::to_string(request)
            .map_err(|e| StoreError::Protocol(format!("cannot encode request: {e}")))?;
        let base = base_url
            .map(normalize_url)
            .unwrap_or_else(|| self.base_url.clone());
        let known = self.version.load(Ordering::Relaxed);
        let version = if known == VERSION_UNKNOWN { 3 } else { known };
        let mut response = self.post(&base, version, body.clone()).await?;
        if known == VERSION_UNKNOWN && response.status == 404 {
            response = self.post(&base, 2, body).await?;
            if response.status != 404 {
                self.version.store(2, Ordering::Relaxed);
            }
        } else if known == VERSION_UNKNOWN && (200..300).contains(&response.status) {
            self.version.store(3, Ordering::Relaxed);
        }
        match response.status {
            200..=299 => serde_json::from_str(&response.body).map_err(|e| {
                StoreError::Protocol(format!(
                    "cannot decode pipeline response: {e}: {}",
                    snippet(&response.body)
                ))
            }),
            status @ (401 | 403) => Err(StoreError::Unauthorized { status }),
            status => Err(StoreError::Http {
                status,
                body: snippet(&response.body),
            }),
        }
    }

    async fn post(
        &self,
        base: &str,
        version: u8,
        body: String,
    ) -> Result<crate::HttpResponse, StoreError> {
        let url = format!("{base}/v{version}/pipeline");
        self.transport
            .post_json(&url, self.auth_token.as_deref(), body)
            .await
            .map_err(StoreError::Transport)
    }
}

impl<T: HttpTransport> Database for HranaClient<T> {
    async fn pipeline(
        &self,
        statements: &[Statement],
    ) -> Result<Vec<Result<Rows, SqlError>>, StoreError> {
        let mut requests: Vec<StreamRequest> = statements
            .iter()
            .map(|s| StreamRequest::Execute {
                stmt: Stmt::from_statement(s, true),
            })
            .collect();
        requests.push(StreamRequest::Close);
        let response = self
            .send(
                None,
                &PipelineRequest {
                    baton: None,
                    requests,
                },
            )
            .await?;
        expect_results(&response, statements.len() + 1)?;
        response
            .results
            .into_iter()
            .take(statements.len())
            .map(|result| match result {
                StreamResult::Ok {
                    response: StreamResponse::Execute { result },
                } => result.into_rows().map(Ok),
                StreamResult::Error { error } => Ok(Err(error.into())),
                other => Err(unexpected(&other)),
            })
            .collect()
    }

    async fn transaction(&self, statements: &[Statement]) -> Result<Vec<Rows>, StoreError> {
        let size: usize = statements.iter().map(crate::pieces::encoded_len).sum();
        if size > self.max_request_bytes {
            return self
                .transaction_in_pieces(statements, self.max_request_bytes)
                .await;
        }
        let n = statements.len() as u32;
        // Steps: 0 = BEGIN, 1..=n the statements, n+1 = COMMIT, n+2 = ROLLBACK.
        let mut steps = Vec::with_capacity(statements.len() + 3);
        steps.push(BatchStep {
            stmt: Stmt::from_statement(&Statement::new("BEGIN"), false),
            condition: None,
        });
        for (i, statement) in statements.iter().enumerate() {
            steps.push(BatchStep {
                stmt: Stmt::from_statement(statement, true),
                condition: Some(BatchCond::Ok { step: i as u32 }),
            });
        }
        steps.push(BatchStep {
            stmt: Stmt::from_statement(&Statement::new("COMMIT"), false),
            condition: Some(BatchCond::Ok { step: n }),
        });
        steps.push(BatchStep {
            stmt: Stmt::from_statement(&Statement::new("ROLLBACK"), false),
            condition: Some(BatchCond::Not {
                cond: Box::new(BatchCond::Ok { step: n + 1 }),
            }),
        });
        let request = PipelineRequest {
            baton: None,
            requests: vec![
                StreamRequest::Batch {
                    batch: Batch { steps },
                },
                StreamRequest::Close,
            ],
        };
        let response = self.send(None, &request).await?;
        expect_results(&response, 2)?;
        let Some(first) = response.results.into_iter().next() else {
            return Err(StoreError::Protocol("empty results".into()));
        };
        let batch = match first {
            StreamResult::Ok {
                response: StreamResponse::Batch { result },
            } => result,
            StreamResult::Error { error } => return Err(StoreError::Sql(error.into())),
            other => return Err(unexpected(&other)),
        };
        let mut errors = batch.step_errors.into_iter();
        let mut results = batch.step_results.into_iter();
        // The first failing step (BEGIN, a statement or COMMIT) is the cause.
        for _ in 0..=n + 1 {
            if let Some(Some(error)) = errors.next() {
                return Err(StoreError::Sql(error.into()));
            }
        }
        results.next(); // BEGIN
        let mut rows = Vec::with_capacity(statements.len());
        for i in 0..statements.len() {
            match results.next().flatten() {
                Some(result) => rows.push(result.into_rows()?),
                None => {
                    return Err(StoreError::Protocol(format!(
                        "transaction step {} has neither result nor error",
                        i + 1
                    )))
                }
            }
        }
        if results.next().flatten().is_none() {
            return Err(StoreError::Protocol("COMMIT did not run".into()));
        }
        Ok(rows)
    }

    fn describe(&self) -> String {
        format!("libSQL server {} (Hrana over HTTP)", self.base_url)
    }
}

fn expect_results(response: &PipelineResponse, n: usize) -> Result<(), StoreError> {
    if response.results.len() == n {
        Ok(())
    } else {
        Err(StoreError::Protocol(format!(
            "expected {n} results, server sent {}",
            response.results.len()
        )))
    }
}

pub(crate) fn unexpected(result: &StreamResult) -> StoreError {
    StoreError::Protocol(format!("unexpected response {result:?}"))
}

/// The URL without its query, and the `authToken` the query held.
fn split_query_token(url: &str) -> (&str, Option<String>) {
    let Some((base, query)) = url.split_once('?') else {
        return (url, None);
    };
    let token = query
        .split('&')
        .filter_map(|pair| pair.split_once('='))
        .find(|(name, _)| matches!(*name, "authToken" | "auth_token"))
        .map(|(_, value)| value.to_owned())
        .filter(|value| !value.is_empty());
    (base, token)
}

fn normalize_url(url: &str) -> String {
    let url = url.trim().trim_end_matches('/');
    match url.strip_prefix("libsql://") {
        Some(rest) => format!("https://{rest}"),
        None => url.to_owned(),
    }
}

fn snippet(body: &str) -> String {
    body.chars().take(300).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fake transport for the tests that never send.
    #[derive(Debug)]
    struct NoNetwork;

    impl HttpTransport for NoNetwork {
        async fn post_json(
            &self,
            _url: &str,
            _bearer: Option<&str>,
            _body: String,
        ) -> Result<crate::HttpResponse, String> {
            Err("no network in this test".into())
        }
    }

    #[test]
    fn a_token_in_the_query_is_taken_out_of_the_url() {
        let (base, token) = split_query_token("libsql://db.turso.io?authToken=s3cr3t&tls=1");
        assert_eq!(base, "libsql://db.turso.io");
        assert_eq!(token.as_deref(), Some("s3cr3t"));
        assert_eq!(split_query_token("http://127.0.0.1:8080").1, None);
        let client = HranaClient::new(NoNetwork, "https://db.example?authToken=s3cr3t", None);
        assert_eq!(client.base_url(), "https://db.example");
        assert!(!client.describe().contains("s3cr3t"));
        assert!(!format!("{client:?}").contains("s3cr3t"));
        let given = HranaClient::new(
            NoNetwork,
            "https://db.example?authToken=s3cr3t",
            Some("t".into()),
        );
        assert_eq!(given.auth_token.as_deref(), Some("t"));
    }

    #[test]
    fn urls_are_normalized() {
        assert_eq!(
            normalize_url("libsql://db.turso.io/"),
            "https://db.turso.io"
        );
        assert_eq!(
            normalize_url("http://127.0.0.1:8080"),
            "http://127.0.0.1:8080"
        );
    }
}
