//! A small, bounded HTTP/1.1 server over `std::net`, for `/metrics` and `/healthz`.
//!
//! Why not a crate: `tiny_http` (the obvious small synchronous choice) spawns a thread per
//! waiting connection without a bound, reads a header line without a length limit and sets
//! no read timeout, so one slow or hostile client can pin memory and threads. An exporter
//! serves two GET paths to a scraper on a trusted network; the whole server it needs is
//! this file, with every limit explicit:
//!
//! - a fixed pool of worker threads, fed by a bounded queue; a connection that finds the
//!   queue full gets `503` at once instead of waiting;
//! - a request head of at most [`HttpConfig::max_head_bytes`], read within
//!   [`HttpConfig::read_timeout`] as a whole (not per byte), so a trickling client is cut off;
//! - no request bodies: methods other than GET and HEAD get `405`, and a request that
//!   announces a body is answered and the connection closed, so nothing is ever buffered;
//! - keep-alive (Prometheus and wrk reuse connections) with a cap on requests per connection.
//!
//! Malformed input gets a 4xx and the connection closed; nothing here panics on input.

use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TrySendError, sync_channel};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The server's limits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpConfig {
    /// Connections served at once.
    pub workers: usize,
    /// Accepted connections waiting for a worker; more get `503`.
    pub queue: usize,
    /// The time a client has to send a whole request head, and to send the next one on a
    /// kept-alive connection.
    pub read_timeout: Duration,
    pub write_timeout: Duration,
    /// Request line plus headers.
    pub max_head_bytes: usize,
    pub max_requests_per_connection: usize,
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            workers: 4,
            queue: 64,
            read_timeout: Duration::from_secs(5),
            write_timeout: Duration::from_secs(10),
            max_head_bytes: 8 * 1024,
            max_requests_per_connection: 10_000,
        }
    }
}

/// A parsed request head: what the handlers look at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub method: String,
    /// The path, without the query string.
    pub path: String,
    pub accept: Option<String>,
}

/// A response: status, content type and body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    pub status: u16,
    pub content_type: &'static str,
    pub body: Vec<u8>,
}

impl Response {
    pub fn text(status: u16, body: impl Into<String>) -> Self {
        Response {
            status,
            content_type: "text/plain; charset=utf-8",
            body: body.into().into_bytes(),
        }
    }
}

/// What answers requests that parsed. Routing lives with the caller.
pub trait Handler: Send + Sync + 'static {
    fn handle(&self, request: &Request) -> Response;
}

/// A running server; dropping it does not stop it, [`HttpServer::shutdown`] does.
#[derive(Debug)]
pub struct HttpServer {
    local_addr: SocketAddr,
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
}

impl HttpServer {
    /// Binds `addr` and starts the acceptor and the workers.
    pub fn bind(
        addr: SocketAddr,
        config: &HttpConfig,
        handler: &Arc<dyn Handler>,
    ) -> io::Result<HttpServer> {
        let listener = TcpListener::bind(addr)?;
        let local_addr = listener.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        let (tx, rx) = sync_channel::<TcpStream>(config.queue.max(1));
        let rx = Arc::new(Mutex::new(rx));
        let mut threads = Vec::new();
        for n in 0..config.workers.max(1) {
            let rx = Arc::clone(&rx);
            let stop = Arc::clone(&stop);
            let handler = Arc::clone(handler);
            let config = config.clone();
            threads.push(
                std::thread::Builder::new()
                    .name(format!("http-worker-{n}"))
                    .spawn(move || worker(&rx, &stop, &*handler, &config))?,
            );
        }
        let acceptor_stop = Arc::clone(&stop);
        let write_timeout = config.write_timeout;
        threads.push(
            std::thread::Builder::new()
                .name("http-accept".into())
                .spawn(move || accept(&listener, &tx, &acceptor_stop, write_timeout))?,
        );
        Ok(HttpServer {
            local_addr,
            stop,
            threads,
        })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Blocks until the server stops (it only stops through [`HttpServer::shutdown`]).
    pub fn join(self) {
        for t in self.threads {
            let _ = t.join();
        }
    }

    /// Stops accepting, lets the workers finish the request in hand, and waits for them.
    pub fn shutdown(self) {
        self.stop.store(true, Ordering::SeqCst);
        // The acceptor is blocked in accept(): one connection wakes it to see the flag.
        let _ = TcpStream::connect_timeout(&self.local_addr, Duration::from_secs(1));
        self.join();
    }
}

fn accept(
    listener: &TcpListener,
    tx: &SyncSender<TcpStream>,
    stop: &AtomicBool,
    write_timeout: Duration,
) {
    for stream in listener.incoming() {
        if stop.load(Ordering::SeqCst) {
            return;
        }
        let Ok(stream) = stream else {
            // Out of file descriptors and the like: back off instead of spinning.
            std::thread::sleep(Duration::from_millis(10));
            continue;
        };
        match tx.try_send(stream) {
            Ok(()) => {}
            Err(TrySendError::Full(mut stream)) => {
                let _ = stream.set_write_timeout(Some(write_timeout));
                let busy = Response::text(503, "busy: every worker is serving a connection\n");
                let _ = write_response(&mut stream, &busy, false, true);
                let _ = stream.shutdown(Shutdown::Both);
            }
            Err(TrySendError::Disconnected(_)) => return,
        }
    }
}

fn worker(
    rx: &Mutex<Receiver<TcpStream>>,
    stop: &AtomicBool,
    handler: &dyn Handler,
    config: &HttpConfig,
) {
    while !stop.load(Ordering::SeqCst) {
        let next = rx
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .recv_timeout(Duration::from_millis(200));
        match next {
            Ok(stream) => serve_connection(stream, stop, handler, config),
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => return,
        }
    }
}

/// How reading one request head ended.
enum Head {
    /// A complete head, and how many bytes of the buffer it took.
    Complete(usize),
    /// The client closed (or went idle) between requests: close quietly.
    Closed,
    TooLarge,
    TimedOut,
}

fn serve_connection(
    mut stream: TcpStream,
    stop: &AtomicBool,
    handler: &dyn Handler,
    config: &HttpConfig,
) {
    let _ = stream.set_nodelay(true);
    let _ = stream.set_write_timeout(Some(config.write_timeout));
    let mut buf: Vec<u8> = Vec::with_capacity(1024);
    for served in 0..config.max_requests_per_connection {
        if stop.load(Ordering::SeqCst) {
            break;
        }
        let end = match read_head(&mut stream, &mut buf, config) {
            Head::Complete(end) => end,
            Head::Closed => break,
            Head::TooLarge => {
                let r = Response::text(431, "request head too large\n");
                let _ = write_response(&mut stream, &r, false, true);
                break;
            }
            Head::TimedOut => {
                let r = Response::text(408, "request head not received in time\n");
                let _ = write_response(&mut stream, &r, false, true);
                break;
            }
        };
        let parsed = parse_head(&buf[..end]);
        buf.drain(..end);
        let last = served + 1 == config.max_requests_per_connection;
        let (response, head_only, close) = match parsed {
            Ok(head) => {
                // A body we do not read would be taken for the next request: close after.
                let close = !head.keep_alive || head.has_body || last;
                let response = route_method(&head, handler);
                (response, head.request.method == "HEAD", close)
            }
            Err(e) => (
                Response::text(e.status(), format!("{}\n", e.message())),
                false,
                true,
            ),
        };
        if write_response(&mut stream, &response, head_only, close).is_err() || close {
            break;
        }
    }
    let _ = stream.shutdown(Shutdown::Both);
}

fn route_method(head: &ParsedHead, handler: &dyn Handler) -> Response {
    match head.request.method.as_str() {
        "GET" | "HEAD" => handler.handle(&head.request),
        _ => Response::text(405, "only GET and HEAD are served\n"),
    }
}

/// Reads until the blank line that ends a head, keeping what follows it (pipelining).
fn read_head(stream: &mut TcpStream, buf: &mut Vec<u8>, config: &HttpConfig) -> Head {
    let deadline = Instant::now() + config.read_timeout;
    let mut chunk = [0u8; 2048];
    loop {
        if let Some(end) = head_end(buf) {
            return Head::Complete(end);
        }
        if buf.len() > config.max_head_bytes {
            return Head::TooLarge;
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return if buf.is_empty() {
                Head::Closed
            } else {
                Head::TimedOut
            };
        }
        let _ = stream.set_read_timeout(Some(left));
        match stream.read(&mut chunk) {
            Ok(0) => return Head::Closed,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                return if buf.is_empty() {
                    Head::Closed
                } else {
                    Head::TimedOut
                };
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return Head::Closed,
        }
    }
}

/// The end of the head (just past `\r\n\r\n`, or a bare `\n\n`), if it is in `buf`.
fn head_end(buf: &[u8]) -> Option<usize> {
    let crlf = buf.windows(4).position(|w| w == b"\r\n\r\n").map(|p| p + 4);
    let lf = buf.windows(2).position(|w| w == b"\n\n").map(|p| p + 2);
    match (crlf, lf) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

#[derive(Debug, PartialEq, Eq)]
struct ParsedHead {
    request: Request,
    keep_alive: bool,
    has_body: bool,
}

/// Why a head was refused; each maps to a 4xx or 5xx status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BadRequest {
    NotUtf8,
    RequestLine,
    Method,
    Target,
    Version,
    HeaderLine,
    MissingHost,
    ContentLength,
}

impl BadRequest {
    pub fn status(&self) -> u16 {
        match self {
            BadRequest::Version => 505,
            _ => 400,
        }
    }

    pub fn message(&self) -> &'static str {
        match self {
            BadRequest::NotUtf8 => "bad request: the head is not text",
            BadRequest::RequestLine => "bad request: expected `METHOD /path HTTP/1.1`",
            BadRequest::Method => "bad request: the method is not a token",
            BadRequest::Target => "bad request: the target must be a path starting with /",
            BadRequest::Version => "HTTP version not supported: use HTTP/1.0 or HTTP/1.1",
            BadRequest::HeaderLine => "bad request: a header line is not `Name: value`",
            BadRequest::MissingHost => "bad request: HTTP/1.1 needs a Host header",
            BadRequest::ContentLength => "bad request: Content-Length is not a number",
        }
    }
}

fn is_token(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

fn parse_head(head: &[u8]) -> Result<ParsedHead, BadRequest> {
    let text = std::str::from_utf8(head).map_err(|_| BadRequest::NotUtf8)?;
    let mut lines = text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l));
    // RFC 9112 §2.2: a server should ignore empty lines before the request line.
    let request_line = lines
        .by_ref()
        .find(|l| !l.is_empty())
        .ok_or(BadRequest::RequestLine)?;
    let mut parts = request_line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(BadRequest::RequestLine);
    };
    if !is_token(method) {
        return Err(BadRequest::Method);
    }
    if !target.starts_with('/') || target.bytes().any(|b| b.is_ascii_control() || b == b' ') {
        return Err(BadRequest::Target);
    }
    let http11 = match version {
        "HTTP/1.1" => true,
        "HTTP/1.0" => false,
        v if v.starts_with("HTTP/") && v.len() <= 8 => return Err(BadRequest::Version),
        _ => return Err(BadRequest::RequestLine),
    };
    let mut accept = None;
    let mut host = false;
    let mut connection: Option<String> = None;
    let mut has_body = false;
    for line in lines {
        if line.is_empty() {
            break;
        }
        let (name, value) = line.split_once(':').ok_or(BadRequest::HeaderLine)?;
        if !is_token(name) {
            return Err(BadRequest::HeaderLine);
        }
        let value = value.trim();
        match name.to_ascii_lowercase().as_str() {
            "host" => host = true,
            "accept" => accept = Some(value.to_owned()),
            "connection" => connection = Some(value.to_ascii_lowercase()),
            "content-length" => {
                let n: u64 = value.parse().map_err(|_| BadRequest::ContentLength)?;
                has_body |= n > 0;
            }
            "transfer-encoding" => has_body = true,
            _ => {}
        }
    }
    if http11 && !host {
        return Err(BadRequest::MissingHost);
    }
    let keep_alive = match connection.as_deref() {
        Some(c) if c.contains("close") => false,
        Some(c) if c.contains("keep-alive") => true,
        _ => http11,
    };
    let path = target.split(['?', '#']).next().unwrap_or(target).to_owned();
    Ok(ParsedHead {
        request: Request {
            method: method.to_owned(),
            path,
            accept,
        },
        keep_alive,
        has_body,
    })
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        505 => "HTTP Version Not Supported",
        _ => "",
    }
}

fn write_response(
    stream: &mut TcpStream,
    response: &Response,
    head_only: bool,
    close: bool,
) -> io::Result<()> {
    let mut out = Vec::with_capacity(response.body.len() + 256);
    let _ = write!(
        out,
        "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: {}\r\n",
        response.status,
        reason(response.status),
        response.content_type,
        response.body.len(),
        if close { "close" } else { "keep-alive" },
    );
    if response.status == 405 {
        out.extend_from_slice(b"Allow: GET, HEAD\r\n");
    }
    out.extend_from_slice(b"\r\n");
    if !head_only {
        out.extend_from_slice(&response.body);
    }
    stream.write_all(&out)?;
    stream.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_what_prometheus_sends() {
        let head = b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1:9836\r\nUser-Agent: Prometheus/2.42.0\r\nAccept: application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1\r\nAccept-Encoding: gzip\r\nX-Prometheus-Scrape-Timeout-Seconds: 10\r\n\r\n";
        let parsed = parse_head(head).unwrap();
        assert_eq!(parsed.request.method, "GET");
        assert_eq!(parsed.request.path, "/metrics");
        assert!(
            parsed
                .request
                .accept
                .unwrap()
                .starts_with("application/openmetrics-text")
        );
        assert!(parsed.keep_alive);
        assert!(!parsed.has_body);
    }

    #[test]
    fn refuses_garbage_with_the_right_status() {
        let cases: [(&[u8], BadRequest); 7] = [
            (b"\xff\xfe\r\n\r\n", BadRequest::NotUtf8),
            (b"hello\r\n\r\n", BadRequest::RequestLine),
            (
                b"GET metrics HTTP/1.1\r\nHost: x\r\n\r\n",
                BadRequest::Target,
            ),
            (b"GET / HTTP/2.0\r\nHost: x\r\n\r\n", BadRequest::Version),
            (
                b"GET / HTTP/1.1\r\nno colon here\r\n\r\n",
                BadRequest::HeaderLine,
            ),
            (b"GET / HTTP/1.1\r\n\r\n", BadRequest::MissingHost),
            (
                b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: lots\r\n\r\n",
                BadRequest::ContentLength,
            ),
        ];
        for (head, want) in cases {
            assert_eq!(
                parse_head(head),
                Err(want.clone()),
                "{}",
                String::from_utf8_lossy(head)
            );
        }
        assert_eq!(BadRequest::Version.status(), 505);
        assert_eq!(BadRequest::Target.status(), 400);
    }

    #[test]
    fn http10_closes_unless_asked_and_bodies_close() {
        let p = parse_head(b"GET /healthz HTTP/1.0\r\n\r\n").unwrap();
        assert!(!p.keep_alive);
        let p = parse_head(b"GET /healthz HTTP/1.0\r\nConnection: keep-alive\r\n\r\n").unwrap();
        assert!(p.keep_alive);
        let p = parse_head(b"POST /metrics?x=1 HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\n")
            .unwrap();
        assert!(p.has_body);
        assert_eq!(p.request.path, "/metrics");
    }

    #[test]
    fn finds_the_end_of_a_head() {
        assert_eq!(head_end(b"GET / HTTP/1.1\r\nHost: x\r\n\r\nGET"), Some(27));
        assert_eq!(head_end(b"GET / HTTP/1.0\n\n"), Some(16));
        assert_eq!(head_end(b"GET / HTTP/1.1\r\nHost: x\r\n"), None);
    }
}
