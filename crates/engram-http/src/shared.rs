//! A transport of any type behind one cloneable handle.

use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;

use crate::{HttpResponse, HttpTransport};

/// The future one erased POST returns.
type PostFuture<'a> = Pin<Box<dyn Future<Output = Result<HttpResponse, String>> + 'a>>;

/// [`HttpTransport`] with its future boxed, so transports of different types fit one slot.
trait ErasedTransport {
    fn post<'a>(&'a self, url: &'a str, bearer: Option<&'a str>, body: String) -> PostFuture<'a>;
}

impl<T: HttpTransport> ErasedTransport for T {
    fn post<'a>(&'a self, url: &'a str, bearer: Option<&'a str>, body: String) -> PostFuture<'a> {
        Box::pin(self.post_json(url, bearer, body))
    }
}

/// A host's transport shared by everything that sends requests through it (the database
/// client, remote embedding providers, rerank services): cloning it is cheap, and it is one
/// type whatever the host's transport is.
#[derive(Clone)]
pub struct SharedTransport(Rc<dyn ErasedTransport>);

impl SharedTransport {
    /// Shares `transport`.
    pub fn new<T: HttpTransport + 'static>(transport: T) -> Self {
        SharedTransport(Rc::new(transport))
    }
}

impl std::fmt::Debug for SharedTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SharedTransport")
    }
}

impl HttpTransport for SharedTransport {
    async fn post_json(
        &self,
        url: &str,
        bearer: Option<&str>,
        body: String,
    ) -> Result<HttpResponse, String> {
        self.0.post(url, bearer, body).await
    }
}
