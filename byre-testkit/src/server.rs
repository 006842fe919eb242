//! The fake Anthropic Messages API server: answers the CLI from a [`Script`] and logs requests.
//!
//! It listens on a loopback port only. Routes:
//!
//! - `POST /v1/messages` (any query, e.g. `?beta=true`): numbered 1, 2, ...; answered by the
//!   first matching rule, as SSE when the body says `"stream": true`, else as one JSON message;
//! - `POST /v1/messages/count_tokens`: `{"input_tokens": N}` with N = body bytes / 4;
//! - anything else: 404 with an API error body.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::{Body, Frame, Incoming};
use hyper::header::{HeaderValue, CONTENT_TYPE};
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::Value;
use tokio::net::TcpListener;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

use crate::script::{self, Block, Reply, RequestView, Script, UNMATCHED_TEXT};
use crate::sse::{self, AssistantMessage, SseEvent};

/// A failure of the fake model server.
#[derive(Debug, thiserror::Error)]
pub enum FakeModelError {
    /// Binding the loopback port failed.
    #[error("cannot bind 127.0.0.1:{port}: {source}")]
    Bind {
        /// The port asked for (0 for any).
        port: u16,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// [`FakeModel::wait_for_requests`] timed out.
    #[error("timed out waiting for {wanted} /v1/messages requests (got {got})")]
    Timeout {
        /// How many requests were awaited.
        wanted: usize,
        /// How many had arrived.
        got: usize,
    },
    /// Waiting for Ctrl-C failed in [`serve_forever`].
    #[error("cannot wait for Ctrl-C: {0}")]
    Signal(#[source] std::io::Error),
}

/// One request the fake model received.
#[derive(Clone, Debug, PartialEq)]
pub struct LoggedRequest {
    /// 1-based arrival order among all requests to this server.
    pub seq: usize,
    /// 1-based number among `POST /v1/messages` requests; `None` for other requests.
    pub number: Option<u32>,
    /// The HTTP method.
    pub method: String,
    /// The path with its query, e.g. `/v1/messages?beta=true`.
    pub path: String,
    /// The request headers (names lower-case; credentials replaced by `<redacted>`).
    pub headers: BTreeMap<String, String>,
    /// The parsed JSON body (`Null` when empty or not JSON).
    pub body: Value,
    /// Index of the rule that answered, `None` when no rule matched (or not a messages request).
    pub rule: Option<usize>,
    /// Whether the request asked for a streamed reply.
    pub stream: bool,
}

impl LoggedRequest {
    /// Whether this is a `POST /v1/messages` request.
    pub fn is_messages(&self) -> bool {
        self.number.is_some()
    }

    /// Whether this is a messages request that no rule matched.
    pub fn is_unmatched(&self) -> bool {
        self.is_messages() && self.rule.is_none()
    }

    /// A header value by (case-insensitive) name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .get(&name.to_ascii_lowercase())
            .map(String::as_str)
    }

    /// The `x-claude-code-session-id` header.
    pub fn session_id(&self) -> Option<&str> {
        self.header("x-claude-code-session-id")
    }

    /// The `model` of the body.
    pub fn model(&self) -> Option<&str> {
        self.body.get("model").and_then(Value::as_str)
    }

    /// The `messages` of the body (empty when absent).
    pub fn messages(&self) -> &[Value] {
        script::messages(&self.body)
    }

    /// The last user text, as the `user_text_*` matchers see it.
    pub fn last_user_text(&self) -> Option<String> {
        script::last_user_text(&self.body)
    }

    /// Every text of the last user message, `<system-reminder>` blocks included, as the
    /// `any_user_text_contains` matcher sees them.
    pub fn user_texts(&self) -> Vec<String> {
        script::user_texts(&self.body)
            .into_iter()
            .map(str::to_owned)
            .collect()
    }

    /// Whether the last user message holds a `tool_result` block.
    pub fn has_tool_result(&self) -> bool {
        script::has_tool_result(&self.body)
    }

    /// The text of each `tool_result` block in the last user message.
    pub fn tool_results(&self) -> Vec<String> {
        script::tool_result_texts(&self.body)
    }

    /// The names of the offered tools.
    pub fn tool_names(&self) -> Vec<String> {
        script::tool_names(&self.body)
    }
}

struct State {
    script: Script,
    fired: Vec<u32>,
    messages_count: u32,
    tool_ids: u32,
    log: Vec<LoggedRequest>,
}

struct Shared {
    state: Mutex<State>,
    /// Number of logged requests of any kind.
    logged: watch::Sender<usize>,
    shutdown: watch::Receiver<bool>,
    nonce: u64,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock cannot leave the state inconsistent enough to matter.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A running fake Messages API on a loopback port. Stops on [`FakeModel::shutdown`] or drop.
pub struct FakeModel {
    addr: SocketAddr,
    shared: Arc<Shared>,
    shutdown: watch::Sender<bool>,
    accept: JoinHandle<()>,
}

impl std::fmt::Debug for FakeModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeModel")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

impl FakeModel {
    /// Starts the server on `127.0.0.1` with a free port.
    pub async fn start(script: Script) -> Result<Self, FakeModelError> {
        Self::start_on(0, script).await
    }

    /// Starts the server on `127.0.0.1:port` (0 picks a free port).
    pub async fn start_on(port: u16, script: Script) -> Result<Self, FakeModelError> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, port))
            .await
            .map_err(|source| FakeModelError::Bind { port, source })?;
        let addr = listener
            .local_addr()
            .map_err(|source| FakeModelError::Bind { port, source })?;
        let (shutdown, shutdown_rx) = watch::channel(false);
        let (logged, _) = watch::channel(0);
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                fired: vec![0; script.rules.len()],
                script,
                messages_count: 0,
                tool_ids: 0,
                log: Vec::new(),
            }),
            logged,
            shutdown: shutdown_rx,
            nonce: nonce(),
        });
        let accept = tokio::spawn(accept_loop(listener, Arc::clone(&shared)));
        Ok(Self {
            addr,
            shared,
            shutdown,
            accept,
        })
    }

    /// The base URL to give the CLI as `ANTHROPIC_BASE_URL`, e.g. `http://127.0.0.1:41234`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The socket address the server listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Every request received so far, in arrival order.
    pub fn requests(&self) -> Vec<LoggedRequest> {
        self.shared.lock().log.clone()
    }

    /// The `POST /v1/messages` requests received so far, in order.
    pub fn message_requests(&self) -> Vec<LoggedRequest> {
        let state = self.shared.lock();
        state
            .log
            .iter()
            .filter(|r| r.is_messages())
            .cloned()
            .collect()
    }

    /// The `POST /v1/messages` requests that no rule matched.
    pub fn unmatched(&self) -> Vec<LoggedRequest> {
        let state = self.shared.lock();
        state
            .log
            .iter()
            .filter(|r| r.is_unmatched())
            .cloned()
            .collect()
    }

    /// How often each rule has fired, by rule index.
    pub fn rule_hits(&self) -> Vec<u32> {
        self.shared.lock().fired.clone()
    }

    /// Waits until at least `n` `POST /v1/messages` requests have arrived (they are logged when
    /// they arrive, before the reply is sent) and returns them.
    pub async fn wait_for_requests(
        &self,
        n: usize,
        timeout: Duration,
    ) -> Result<Vec<LoggedRequest>, FakeModelError> {
        let mut logged = self.shared.logged.subscribe();
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let got = self.message_requests();
            if got.len() >= n {
                return Ok(got);
            }
            let changed = tokio::time::timeout_at(deadline, logged.changed()).await;
            if !matches!(changed, Ok(Ok(()))) {
                let got = self.message_requests();
                if got.len() >= n {
                    return Ok(got);
                }
                return Err(FakeModelError::Timeout {
                    wanted: n,
                    got: got.len(),
                });
            }
        }
    }

    /// Stops the server: closes the listener and every open connection, hanging ones included.
    pub async fn shutdown(mut self) {
        let _ = self.shutdown.send(true);
        self.accept.abort();
        // Wait for the accept loop to go away so the port is released.
        let _ = (&mut self.accept).await;
        tokio::task::yield_now().await;
    }
}

impl Drop for FakeModel {
    fn drop(&mut self) {
        let _ = self.shutdown.send(true);
        self.accept.abort();
    }
}

/// Runs a fake model until Ctrl-C, printing its base URL and one line per request
/// (for `cargo xtask fake-model --script FILE [--port N]`).
pub async fn serve_forever(script: Script, port: Option<u16>) -> Result<(), FakeModelError> {
    let model = FakeModel::start_on(port.unwrap_or(0), script).await?;
    println!("fake model listening on {}", model.base_url());
    println!("ANTHROPIC_BASE_URL={}", model.base_url());
    let mut logged = model.shared.logged.subscribe();
    let mut printed = 0;
    let ctrl_c = tokio::signal::ctrl_c();
    tokio::pin!(ctrl_c);
    loop {
        tokio::select! {
            res = &mut ctrl_c => {
                res.map_err(FakeModelError::Signal)?;
                break;
            }
            changed = logged.changed() => {
                if changed.is_err() {
                    break;
                }
                let log = model.requests();
                for r in log.iter().skip(printed) {
                    println!("{}", summary(r));
                }
                printed = log.len();
            }
        }
    }
    model.shutdown().await;
    Ok(())
}

fn summary(r: &LoggedRequest) -> String {
    let what = match (r.number, r.rule) {
        (Some(n), Some(rule)) => format!("#{n} rule {rule}"),
        (Some(n), None) => format!("#{n} UNMATCHED"),
        (None, _) => "-".to_string(),
    };
    let text = r.last_user_text().unwrap_or_default();
    let text: String = text.chars().take(60).collect();
    format!(
        "{} {} {what} stream={} user_text={text:?}",
        r.method, r.path, r.stream
    )
}

/// 64 random bits, from byre-session's one random generator (its v4 session ids).
fn nonce() -> u64 {
    let id = byre_session::new_session_id().replace('-', "");
    u64::from_str_radix(&id[..16], 16).unwrap_or_default()
}

async fn wait_shutdown(mut rx: watch::Receiver<bool>) {
    loop {
        if *rx.borrow_and_update() {
            return;
        }
        if rx.changed().await.is_err() {
            return;
        }
    }
}

async fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = wait_shutdown(shared.shutdown.clone()) => return,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            Err(_) => {
                // E.g. too many open files: back off briefly instead of spinning.
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
        };
        let shared = Arc::clone(&shared);
        tokio::spawn(async move {
            let shutdown = shared.shutdown.clone();
            let service = service_fn(move |req| handle(Arc::clone(&shared), req));
            let conn = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service);
            tokio::select! {
                _ = conn => {}
                () = wait_shutdown(shutdown) => {}
            }
        });
    }
}

type ResponseBody = BoxBody<Bytes, std::io::Error>;

async fn handle(
    shared: Arc<Shared>,
    req: Request<Incoming>,
) -> Result<Response<ResponseBody>, Infallible> {
    let method = req.method().clone();
    let path = req.uri().path().to_string();
    let path_and_query = req
        .uri()
        .path_and_query()
        .map_or_else(|| path.clone(), |p| p.as_str().to_string());
    let headers = log_headers(req.headers());
    let bytes = match req.into_body().collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(_) => Bytes::new(),
    };
    let body: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    let mut entry = LoggedRequest {
        seq: 0,
        number: None,
        method: method.to_string(),
        path: path_and_query,
        headers,
        stream: script::is_streaming(&body),
        body,
        rule: None,
    };

    if method == Method::POST && path == "/v1/messages" {
        return Ok(messages(&shared, entry).await);
    }
    let response = if method == Method::POST && path == "/v1/messages/count_tokens" {
        let tokens = (bytes.len() as u64 / 4).max(1);
        json_response(StatusCode::OK, sse::count_tokens_json(tokens))
    } else {
        let message = format!("fake model: no route for {method} {path}");
        json_response(
            StatusCode::NOT_FOUND,
            sse::error_json("not_found_error", &message),
        )
    };
    entry.stream = false;
    push_log(&shared, entry);
    Ok(response)
}

/// Numbers, matches and logs a `POST /v1/messages` request, then answers it.
async fn messages(shared: &Arc<Shared>, mut entry: LoggedRequest) -> Response<ResponseBody> {
    let (reply, number, tool_ids) = {
        let mut state = shared.lock();
        state.messages_count += 1;
        let number = state.messages_count;
        entry.number = Some(number);
        let view = RequestView {
            number,
            body: &entry.body,
        };
        let rule = if entry.body.is_object() {
            state.script.select(&view, &state.fired)
        } else {
            None
        };
        let reply = match rule {
            Some(i) => {
                state.fired[i] += 1;
                state.script.rules[i].reply.clone()
            }
            None => Reply::text(UNMATCHED_TEXT),
        };
        // Reserve ids for the generated tool-use ids.
        let wanted = match &reply {
            Reply::Message(m) => m
                .blocks
                .iter()
                .filter(|b| matches!(b, Block::ToolUse { id: None, .. }))
                .count() as u32,
            _ => 0,
        };
        let first_tool_id = state.tool_ids + 1;
        state.tool_ids += wanted;
        entry.rule = rule;
        (reply, number, first_tool_id)
    };
    let body = entry.body.clone();
    let stream = entry.stream;
    if !body.is_object() {
        push_log(shared, entry);
        return json_response(
            StatusCode::BAD_REQUEST,
            sse::error_json(
                "invalid_request_error",
                "fake model: body is not a JSON object",
            ),
        );
    }
    push_log(shared, entry);

    let model = body
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or("claude-fake")
        .to_string();
    let message_id = format!("msg_fake{:016x}{number:04}", shared.nonce);
    match reply {
        Reply::Message(m) => {
            if m.delay_ms > 0 {
                tokio::time::sleep(Duration::from_millis(m.delay_ms)).await;
            }
            let mut next_tool = tool_ids;
            let blocks = m
                .blocks
                .iter()
                .cloned()
                .map(|block| match block {
                    Block::ToolUse {
                        id: None,
                        name,
                        input,
                    } => {
                        let id = format!("toolu_fake{next_tool:04}");
                        next_tool += 1;
                        Block::ToolUse {
                            id: Some(id),
                            name,
                            input,
                        }
                    }
                    other => other,
                })
                .collect();
            let message = AssistantMessage {
                id: m.id.clone().unwrap_or(message_id),
                model: m.model.clone().unwrap_or(model),
                blocks,
                stop_reason: m.effective_stop_reason(),
                usage: m.usage,
            };
            if stream {
                let mut events = sse::stream_events(&message, m.chunk_size);
                if let Some(cut) = m.cut_after_deltas {
                    let mut deltas = 0;
                    let at = events.iter().position(|event| {
                        deltas += usize::from(event.is_delta());
                        deltas > cut
                    });
                    events.truncate(at.unwrap_or(events.len()));
                    return stream_response(shared, events, m.chunk_delay_ms, false, true);
                }
                stream_response(shared, events, m.chunk_delay_ms, false, false)
            } else {
                json_response(StatusCode::OK, sse::message_json(&message))
            }
        }
        Reply::Error(e) => {
            if e.delay_ms > 0 {
                tokio::time::sleep(Duration::from_millis(e.delay_ms)).await;
            }
            let status =
                StatusCode::from_u16(e.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            let mut response = json_response(
                status,
                sse::error_json(&e.effective_kind(), &e.effective_message()),
            );
            if let Some(secs) = e.effective_retry_after() {
                response
                    .headers_mut()
                    .insert("retry-after", HeaderValue::from(secs));
            }
            response
        }
        Reply::Hang => {
            let events = if stream {
                sse::prelude(&AssistantMessage {
                    id: message_id,
                    model,
                    blocks: Vec::new(),
                    stop_reason: String::new(),
                    usage: script::Usage::default(),
                })
            } else {
                Vec::new()
            };
            let mut response = stream_response(shared, events, 0, true, false);
            if !stream {
                response
                    .headers_mut()
                    .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
            }
            response
        }
        Reply::HangBeforeHeaders => {
            // Never answers; the connection task drops this future on shutdown.
            std::future::pending::<()>().await;
            json_response(StatusCode::INTERNAL_SERVER_ERROR, String::new())
        }
    }
}

fn push_log(shared: &Shared, mut entry: LoggedRequest) {
    let total = {
        let mut state = shared.lock();
        entry.seq = state.log.len() + 1;
        state.log.push(entry);
        state.log.len()
    };
    shared.logged.send_replace(total);
}

fn log_headers(headers: &hyper::HeaderMap) -> BTreeMap<String, String> {
    let mut out: BTreeMap<String, String> = BTreeMap::new();
    for (name, value) in headers {
        let name = name.as_str().to_ascii_lowercase();
        let value = if matches!(
            name.as_str(),
            "authorization" | "x-api-key" | "proxy-authorization" | "cookie"
        ) {
            "<redacted>".to_string()
        } else {
            String::from_utf8_lossy(value.as_bytes()).into_owned()
        };
        out.entry(name)
            .and_modify(|v| {
                v.push_str(", ");
                v.push_str(&value);
            })
            .or_insert(value);
    }
    out
}

fn json_response(status: StatusCode, body: String) -> Response<ResponseBody> {
    let mut response = Response::new(
        Full::new(Bytes::from(body))
            .map_err(|never| match never {})
            .boxed(),
    );
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
        .headers_mut()
        .insert("request-id", HeaderValue::from_static("req_fake"));
    response
}

/// An SSE response whose events are sent by a task (with `chunk_delay_ms` before each delta).
/// With `hang`, the task then keeps the body open until the client leaves or shutdown; with
/// `cut`, the body then fails (the connection breaks).
fn stream_response(
    shared: &Arc<Shared>,
    events: Vec<SseEvent>,
    chunk_delay_ms: u64,
    hang: bool,
    cut: bool,
) -> Response<ResponseBody> {
    let (tx, rx) = mpsc::channel::<std::io::Result<Bytes>>(8);
    let shutdown = shared.shutdown.clone();
    tokio::spawn(async move {
        let send_all = async {
            for event in events {
                if chunk_delay_ms > 0 && event.is_delta() {
                    tokio::time::sleep(Duration::from_millis(chunk_delay_ms)).await;
                }
                if tx.send(Ok(Bytes::from(event.encode()))).await.is_err() {
                    return;
                }
            }
            if cut {
                let broken = std::io::Error::new(std::io::ErrorKind::ConnectionReset, "cut");
                let _ = tx.send(Err(broken)).await;
            }
            if hang {
                tx.closed().await;
            }
        };
        tokio::select! {
            () = send_all => {}
            () = wait_shutdown(shutdown) => {}
        }
    });
    let mut response = Response::new(ChannelBody { rx }.boxed());
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    headers.insert("cache-control", HeaderValue::from_static("no-cache"));
    headers.insert("request-id", HeaderValue::from_static("req_fake"));
    response
}

/// A response body fed from a channel; it ends when the sender is dropped.
struct ChannelBody {
    rx: mpsc::Receiver<std::io::Result<Bytes>>,
}

impl Body for ChannelBody {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<Frame<Bytes>, std::io::Error>>> {
        self.rx
            .poll_recv(cx)
            .map(|chunk| chunk.map(|bytes| bytes.map(Frame::data)))
    }
}
