//! Hrana's HTTP transport over `wasi:http/outgoing-handler`.

use engram_hrana::{HttpResponse, HttpTransport};
use wasip2::http::outgoing_handler;
use wasip2::http::types::{Fields, Method, OutgoingBody, OutgoingRequest, Scheme};
use wasip2::io::streams::StreamError;

/// Sends requests through the host's `wasi:http`.
pub struct WasiHttpTransport;

impl HttpTransport for WasiHttpTransport {
    async fn post_json(
        &self,
        url: &str,
        bearer: Option<&str>,
        body: String,
    ) -> Result<HttpResponse, String> {
        post(url, bearer, body.as_bytes())
    }
}

/// Splits `scheme://authority/path?query`.
fn split_url(url: &str) -> Result<(Scheme, &str, &str), String> {
    let (scheme, rest) = if let Some(rest) = url.strip_prefix("https://") {
        (Scheme::Https, rest)
    } else if let Some(rest) = url.strip_prefix("http://") {
        (Scheme::Http, rest)
    } else {
        return Err(format!("unsupported URL {url:?}: use http:// or https://"));
    };
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    if authority.is_empty() {
        return Err(format!("URL {url:?} has no host"));
    }
    Ok((scheme, authority, path))
}

fn post(url: &str, bearer: Option<&str>, body: &[u8]) -> Result<HttpResponse, String> {
    let (scheme, authority, path) = split_url(url)?;
    let mut headers = vec![
        ("content-type".to_owned(), b"application/json".to_vec()),
        (
            "content-length".to_owned(),
            body.len().to_string().into_bytes(),
        ),
    ];
    if let Some(token) = bearer {
        headers.push((
            "authorization".to_owned(),
            format!("Bearer {token}").into_bytes(),
        ));
    }
    let fields = Fields::from_list(&headers).map_err(|e| format!("invalid header: {e:?}"))?;
    let request = OutgoingRequest::new(fields);
    let set = |ok: Result<(), ()>, what: &str| ok.map_err(|_| format!("invalid {what} in {url:?}"));
    set(request.set_method(&Method::Post), "method")?;
    set(request.set_scheme(Some(&scheme)), "scheme")?;
    set(request.set_authority(Some(authority)), "authority")?;
    set(request.set_path_with_query(Some(path)), "path")?;
    let outgoing_body = request
        .body()
        .map_err(|_| "request body unavailable".to_owned())?;
    // Send the request first, then stream the body: the host only drains the body once the
    // request is in flight, so writing a large body first could block forever.
    let pending = outgoing_handler::handle(request, None)
        .map_err(|e| format!("HTTP request failed: {e:?}"))?;
    {
        let stream = outgoing_body
            .write()
            .map_err(|_| "request stream unavailable".to_owned())?;
        // blocking_write_and_flush takes at most 4096 bytes per call.
        for chunk in body.chunks(4096) {
            stream
                .blocking_write_and_flush(chunk)
                .map_err(|e| format!("sending request body: {e:?}"))?;
        }
    }
    OutgoingBody::finish(outgoing_body, None).map_err(|e| format!("finishing request: {e:?}"))?;
    pending.subscribe().block();
    let response = match pending.get() {
        Some(Ok(Ok(response))) => response,
        Some(Ok(Err(e))) => return Err(format!("HTTP request failed: {e:?}")),
        Some(Err(())) | None => return Err("HTTP response was not ready".to_owned()),
    };
    let status = response.status();
    let incoming = response
        .consume()
        .map_err(|_| "response body unavailable".to_owned())?;
    let stream = incoming
        .stream()
        .map_err(|_| "response stream unavailable".to_owned())?;
    let mut bytes = Vec::new();
    loop {
        match stream.blocking_read(64 * 1024) {
            Ok(chunk) => bytes.extend_from_slice(&chunk),
            Err(StreamError::Closed) => break,
            Err(e) => return Err(format!("reading response: {e:?}")),
        }
    }
    drop(stream);
    let body = String::from_utf8(bytes).map_err(|_| "response body is not UTF-8".to_owned())?;
    Ok(HttpResponse { status, body })
}
