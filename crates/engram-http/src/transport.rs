//! The HTTP capability a host provides.

/// An HTTP response: status and body text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpResponse {
    /// The HTTP status code.
    pub status: u16,
    /// The body, as text.
    pub body: String,
}

/// The first 200 characters of a response body: enough of an unexpected answer (an HTML
/// error page, a proxy's message) to quote in an error without flooding it.
pub fn body_excerpt(body: &str) -> &str {
    match body.char_indices().nth(200) {
        Some((i, _)) => &body[..i],
        None => body,
    }
}

/// Sends one HTTP POST with a JSON body. Hosts implement this with whatever HTTP stack
/// they have; engram never opens sockets itself.
#[allow(async_fn_in_trait)]
pub trait HttpTransport {
    /// POSTs `body` (JSON) to `url`, with `Authorization: Bearer <bearer>` when given.
    /// An `Err` means no HTTP response arrived (DNS, connection, timeout); any status,
    /// including errors, is an `Ok`.
    async fn post_json(
        &self,
        url: &str,
        bearer: Option<&str>,
        body: String,
    ) -> Result<HttpResponse, String>;
}

impl<T: HttpTransport + ?Sized> HttpTransport for &T {
    async fn post_json(
        &self,
        url: &str,
        bearer: Option<&str>,
        body: String,
    ) -> Result<HttpResponse, String> {
        (**self).post_json(url, bearer, body).await
    }
}
