//! A native transport on reqwest.

use crate::{HttpResponse, HttpTransport};

/// [`HttpTransport`] over a shared `reqwest::Client` (connection pooling, rustls).
#[derive(Debug, Clone, Default)]
pub struct ReqwestTransport {
    client: reqwest::Client,
}

impl ReqwestTransport {
    /// A transport with reqwest's defaults and a 30 s request timeout.
    pub fn new() -> Self {
        let client = reqwest::Client::builder()
            .timeout(std::time::Duration::from_secs(30))
            .build()
            .unwrap_or_default();
        ReqwestTransport { client }
    }
}

impl HttpTransport for ReqwestTransport {
    async fn post_json(
        &self,
        url: &str,
        bearer: Option<&str>,
        body: String,
    ) -> Result<HttpResponse, String> {
        let mut request = self
            .client
            .post(url)
            .header("content-type", "application/json")
            .body(body);
        if let Some(token) = bearer {
            request = request.bearer_auth(token);
        }
        let response = request.send().await.map_err(|e| e.to_string())?;
        let status = response.status().as_u16();
        let body = response.text().await.map_err(|e| e.to_string())?;
        Ok(HttpResponse { status, body })
    }
}
