//! A TCP proxy on 127.0.0.1 that understands just enough HTTP/1.1 to fail one request at a
//! time: it drops, delays, resets, truncates and breaks requests and responses, and answers
//! 500s and HTML in the server's place, each chosen by a seeded generator.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// What the proxy does to one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Fault {
    /// Forwarded and answered untouched.
    None,
    /// Closed before forwarding: the server never sees it.
    DropRequest,
    /// Reset (RST) before forwarding.
    ResetRequest,
    /// Forwarded after a wait.
    DelayRequest,
    /// Half the body forwarded, then both sides closed.
    TruncateRequest,
    /// The body's JSON broken before forwarding (the server refuses it).
    CorruptRequest,
    /// A 500 answered in the server's place; not forwarded.
    ServerError,
    /// Forwarded (the server applies it), then closed without an answer.
    DropResponse,
    /// Forwarded, then reset without an answer.
    ResetResponse,
    /// Forwarded, then half the answer sent and the connection closed.
    TruncateResponse,
    /// Forwarded, then the answer's JSON broken.
    CorruptResponse,
    /// Forwarded, then a 200 with an HTML page instead of the answer (a captive portal).
    HtmlResponse,
    /// Forwarded and answered after a wait.
    DelayResponse,
}

/// Every fault, in the order [`FaultProxy::counts`] reports them.
pub const FAULTS: [Fault; 12] = [
    Fault::DropRequest,
    Fault::ResetRequest,
    Fault::DelayRequest,
    Fault::TruncateRequest,
    Fault::CorruptRequest,
    Fault::ServerError,
    Fault::DropResponse,
    Fault::ResetResponse,
    Fault::TruncateResponse,
    Fault::CorruptResponse,
    Fault::HtmlResponse,
    Fault::DelayResponse,
];

struct Shared {
    upstream: SocketAddr,
    /// Chance in 1/1000 that a request is faulted.
    rate_per_mille: AtomicU64,
    rng: Mutex<u64>,
    counts: Mutex<std::collections::HashMap<Fault, u64>>,
    /// Requests that found the server down (connection refused upstream).
    refused: AtomicU64,
    stop: AtomicBool,
}

/// The running proxy (its own thread and runtime).
pub struct FaultProxy {
    addr: SocketAddr,
    shared: Arc<Shared>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl FaultProxy {
    /// Proxies to `upstream`, faulting `rate_per_mille` of the requests, from `seed`.
    pub fn start(upstream: SocketAddr, rate_per_mille: u64, seed: u64) -> FaultProxy {
        let shared = Arc::new(Shared {
            upstream,
            rate_per_mille: AtomicU64::new(rate_per_mille),
            rng: Mutex::new(seed | 1),
            counts: Mutex::new(std::collections::HashMap::new()),
            refused: AtomicU64::new(0),
            stop: AtomicBool::new(false),
        });
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let theirs = Arc::clone(&shared);
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .expect("proxy runtime");
            runtime.block_on(async move {
                let listener = TcpListener::bind("127.0.0.1:0").await.expect("proxy binds");
                ready_tx
                    .send(listener.local_addr().expect("proxy address"))
                    .expect("test waits");
                while !theirs.stop.load(Ordering::SeqCst) {
                    let accepted =
                        tokio::time::timeout(Duration::from_millis(50), listener.accept()).await;
                    if let Ok(Ok((client, _))) = accepted {
                        tokio::spawn(serve_connection(client, Arc::clone(&theirs)));
                    }
                }
            });
        });
        let addr = ready_rx.recv().expect("proxy started");
        FaultProxy {
            addr,
            shared,
            thread: Some(thread),
        }
    }

    /// The URL clients use instead of the server's.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Changes how often requests are faulted (0 stops faulting).
    pub fn set_rate_per_mille(&self, rate: u64) {
        self.shared.rate_per_mille.store(rate, Ordering::SeqCst);
    }

    /// How many times each fault was injected.
    pub fn counts(&self) -> Vec<(Fault, u64)> {
        let counts = self.shared.counts.lock().expect("counts");
        FAULTS
            .iter()
            .map(|f| (*f, counts.get(f).copied().unwrap_or(0)))
            .collect()
    }

    /// Requests that arrived while the server was down.
    pub fn refused(&self) -> u64 {
        self.shared.refused.load(Ordering::SeqCst)
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Shared {
    fn next_random(&self) -> u64 {
        let mut state = self.rng.lock().expect("rng");
        // splitmix64
        *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = *state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn choose(&self) -> Fault {
        let rate = self.rate_per_mille.load(Ordering::SeqCst);
        if self.next_random() % 1000 >= rate {
            return Fault::None;
        }
        let fault = FAULTS[(self.next_random() % FAULTS.len() as u64) as usize];
        *self
            .counts
            .lock()
            .expect("counts")
            .entry(fault)
            .or_default() += 1;
        fault
    }

    fn delay(&self) -> Duration {
        Duration::from_millis(20 + self.next_random() % 80)
    }
}

/// One HTTP/1.1 message: its head (through the blank line) and its body.
struct Message {
    head: Vec<u8>,
    body: Vec<u8>,
}

impl Message {
    fn bytes(&self) -> Vec<u8> {
        let mut all = self.head.clone();
        all.extend_from_slice(&self.body);
        all
    }

    /// The same message with its body's first byte replaced, so the JSON no longer parses
    /// (a flipped byte that kept it valid would be a different request, which TCP's and
    /// TLS's checksums keep real networks from delivering).
    fn broken(&self) -> Message {
        let mut body = self.body.clone();
        if let Some(first) = body.first_mut() {
            *first = b'<';
        }
        Message {
            head: self.head.clone(),
            body,
        }
    }
}

/// Reads one message with a `Content-Length` body; `None` at a clean end of stream.
async fn read_message(stream: &mut TcpStream, pending: &mut Vec<u8>) -> Option<Message> {
    let mut buf = [0u8; 16 * 1024];
    let head_end = loop {
        if let Some(at) = pending.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
        let n = stream.read(&mut buf).await.ok()?;
        if n == 0 {
            return None;
        }
        pending.extend_from_slice(&buf[..n]);
    };
    let head: Vec<u8> = pending.drain(..head_end).collect();
    let text = String::from_utf8_lossy(&head).to_ascii_lowercase();
    let length = text
        .lines()
        .find_map(|line| line.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse::<usize>().ok())
        .unwrap_or(0);
    while pending.len() < length {
        let n = stream.read(&mut buf).await.ok()?;
        if n == 0 {
            return None;
        }
        pending.extend_from_slice(&buf[..n]);
    }
    let body = pending.drain(..length).collect();
    Some(Message { head, body })
}

/// Sends `request` to the server on a connection of its own and reads the answer.
async fn forward(shared: &Shared, request: &Message) -> Option<Message> {
    let Ok(mut upstream) = TcpStream::connect(shared.upstream).await else {
        shared.refused.fetch_add(1, Ordering::SeqCst);
        return None;
    };
    upstream.write_all(&request.bytes()).await.ok()?;
    read_message(&mut upstream, &mut Vec::new()).await
}

// Deprecated because a positive linger blocks the thread on drop; a zero linger resets at
// once, which is the point.
#[allow(deprecated)]
fn reset(stream: TcpStream) {
    // Linger 0 makes the close an RST instead of a FIN.
    let _ = stream.set_linger(Some(Duration::ZERO));
    drop(stream);
}

fn plain_response(status: &str, content_type: &str, body: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

async fn serve_connection(mut client: TcpStream, shared: Arc<Shared>) {
    let mut pending = Vec::new();
    while let Some(request) = read_message(&mut client, &mut pending).await {
        let fault = shared.choose();
        let request = match fault {
            Fault::DropRequest => return,
            Fault::ResetRequest => return reset(client),
            Fault::DelayRequest => {
                tokio::time::sleep(shared.delay()).await;
                request
            }
            Fault::TruncateRequest => {
                if let Ok(mut upstream) = TcpStream::connect(shared.upstream).await {
                    let bytes = request.bytes();
                    let cut = request.head.len() + request.body.len() / 2;
                    let _ = upstream.write_all(&bytes[..cut]).await;
                }
                return;
            }
            Fault::CorruptRequest => request.broken(),
            Fault::ServerError => {
                let answer = plain_response(
                    "500 Internal Server Error",
                    "text/plain",
                    "injected failure",
                );
                if client.write_all(&answer).await.is_err() {
                    return;
                }
                continue;
            }
            _ => request,
        };
        let Some(response) = forward(&shared, &request).await else {
            // The server is down (or died mid-request): the client sees the connection go.
            return;
        };
        let answer = match fault {
            Fault::DropResponse => return,
            Fault::ResetResponse => return reset(client),
            Fault::TruncateResponse => {
                let bytes = response.bytes();
                let cut = response.head.len() + response.body.len() / 2;
                let _ = client.write_all(&bytes[..cut]).await;
                return;
            }
            Fault::CorruptResponse => response.broken().bytes(),
            Fault::HtmlResponse => plain_response(
                "200 OK",
                "text/html",
                "<html><body>Please sign in to the network</body></html>",
            ),
            Fault::DelayResponse => {
                tokio::time::sleep(shared.delay()).await;
                response.bytes()
            }
            _ => response.bytes(),
        };
        if client.write_all(&answer).await.is_err() {
            return;
        }
    }
}
