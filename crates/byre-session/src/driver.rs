//! The tokio driver: runs a [`Session`] against a real CLI process and offers the public API —
//! a cloneable [`Claude`] handle with `&self` methods and an [`Events`] stream.
//!
//! One task owns the process and the session core. Reading tasks split the CLI's stdout into
//! lines and decode them, on two tasks at once, handing them over in batches and in order
//! (`reader`); the driver task takes a batch only when every event so far is in the event
//! queue, which hands events to the [`Events`] stream in batches too (`queue`). So a slow
//! consumer pauses reading: nothing is dropped and nothing grows without bound. The driver task
//! writes what the core transmits, runs the host's handlers concurrently (each CLI request gets
//! exactly one answer, also when a handler fails or panics), and fails every pending request at
//! once when the CLI exits. CLI requests still appear in the event stream
//! ([`Event::Request`]) for information: the driver answers them through the registered
//! handlers, or with an error when there is none.

use std::collections::HashMap;
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use byre_proto::{
    CliMessage, CliRequest, ControlRequestBody, HookEvent, HookInput, HookMatcher, HookOutput,
    HostRequest, InitializeRequest, InitializeResponse, RawJson, UserMessage,
};
use byre_transport::{
    find_claude, CliProcess, ExitInfo, Frame, Launch, LaunchError, NdjsonCodec, ProcessOptions,
    TranscriptWriter,
};
use futures::{SinkExt, Stream, StreamExt};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinSet;
use tokio_util::codec::FramedWrite;

use crate::correlation::RequestId;
use crate::session::{Event, RequestFailure, Session, SessionConfig};

mod queue;
mod reader;

/// A hook handler: the hook's input and the tool call id, answered with the hook's output or
/// an error message.
pub type HookHandler = Arc<
    dyn Fn(
            HookInput,
            Option<String>,
        ) -> Pin<Box<dyn Future<Output = Result<HookOutput, String>> + Send>>
        + Send
        + Sync,
>;

/// A handler for any other CLI request (`can_use_tool`, `mcp_message`, `elicitation`,
/// `request_user_dialog`): the request, answered with its success payload or an error.
pub type RequestHandler = Arc<
    dyn Fn(CliRequest) -> Pin<Box<dyn Future<Output = Result<Value, String>> + Send>> + Send + Sync,
>;

/// How to start a session.
#[derive(Clone, Default)]
pub struct Options {
    /// How to launch the CLI (argv and environment).
    pub launch: Launch,
    /// The initialize request (hooks are added from [`Options::hook`]).
    pub initialize: InitializeRequest,
    /// Process settings (stderr buffer, shutdown grace).
    pub process: ProcessOptions,
    /// The longest line accepted from the CLI; 64 MiB by default.
    pub max_line: Option<usize>,
    /// Events buffered before reading from the CLI pauses; 256 by default. The stream hands
    /// them over in batches, so up to twice this many wait at once (the queue, and the batch
    /// the consumer took), plus the events of the batch of lines being handed over.
    pub event_buffer: Option<usize>,
    /// Writes a transcript here.
    pub transcript: Option<PathBuf>,
    /// How long `initialize` and other requests may take; 60 s by default.
    pub request_timeout: Option<Duration>,
    hooks: Vec<(HookEvent, Option<String>, HookHandler)>,
    handlers: HashMap<&'static str, RequestHandler>,
    mcp_servers: Vec<String>,
}

impl std::fmt::Debug for Options {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Options")
            .field("launch", &self.launch)
            .field("hooks", &self.hooks.len())
            .field("handlers", &self.handlers.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl Options {
    /// Options with every default.
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers a hook handler for `event`, for tools matching `matcher` (all when `None`).
    /// Callback ids are `hook_0`, `hook_1`, ... in registration order.
    pub fn hook<F, Fut>(mut self, event: HookEvent, matcher: Option<&str>, handler: F) -> Self
    where
        F: Fn(HookInput, Option<String>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<HookOutput, String>> + Send + 'static,
    {
        let handler: HookHandler = Arc::new(move |input, id| Box::pin(handler(input, id)));
        self.hooks
            .push((event, matcher.map(str::to_owned), handler));
        self
    }

    /// Answers `can_use_tool` (and starts the CLI with `--permission-prompt-tool stdio`).
    pub fn can_use_tool<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(byre_proto::CanUseToolRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<byre_proto::PermissionResult, String>> + Send + 'static,
    {
        let handler = Arc::new(handler);
        self.handlers.insert(
            "can_use_tool",
            Arc::new(move |request| {
                let handler = handler.clone();
                Box::pin(async move {
                    let CliRequest::CanUseTool(request) = request else {
                        return Err("not a can_use_tool request".to_owned());
                    };
                    let result = handler(request).await?;
                    serde_json::to_value(result).map_err(|e| e.to_string())
                })
            }),
        );
        self.launch.permission_prompt_tool = Some("stdio".into());
        self
    }

    /// Serves the in-process MCP server `name`: `handler` gets each `mcp_message` request and
    /// returns the `{"mcp_response": ...}` payload. The server is declared in `--mcp-config`
    /// with `alwaysLoad` as given.
    pub fn mcp_server(mut self, name: &str, always_load: bool, handler: RequestHandler) -> Self {
        self.launch.sdk_servers.push(byre_transport::SdkServer {
            name: name.to_owned(),
            always_load,
        });
        self.mcp_servers.push(name.to_owned());
        self.handlers.insert(
            "mcp_message",
            route_mcp(self.handlers.get("mcp_message").cloned(), name, handler),
        );
        self
    }

    /// Answers another CLI request subtype (`elicitation`, `request_user_dialog`).
    pub fn handler(mut self, subtype: &'static str, handler: RequestHandler) -> Self {
        self.handlers.insert(subtype, handler);
        self
    }

    /// Continues session `session_id` (`--resume=`): the same id, the whole conversation.
    /// Resuming works from any working directory, with the same `HOME`.
    pub fn resume(mut self, session_id: impl Into<String>) -> Self {
        self.launch.resume = Some(session_id.into());
        self
    }

    /// Forks session `session_id` at the message with uuid `at` (an `assistant` or `user` line's
    /// `uuid`) into a new session, running in `cwd`: the conversation is kept up to and
    /// including that message, the original session is untouched. Returns the options and the
    /// new session's id.
    pub fn fork(
        mut self,
        session_id: impl Into<String>,
        at: impl Into<String>,
        cwd: impl Into<PathBuf>,
    ) -> (Self, String) {
        let new_id = new_session_id();
        self.launch.resume = Some(session_id.into());
        self.launch.resume_session_at = Some(at.into());
        self.launch.fork_session = true;
        self.launch.session_id = Some(new_id.clone());
        self.launch.cwd = Some(cwd.into());
        (self, new_id)
    }
}

/// A random version-4 UUID for a new session id.
fn new_session_id() -> String {
    use std::hash::{BuildHasher, Hasher};
    // Two independently seeded hashers give 128 random bits without another dependency.
    let mut bytes = [0u8; 16];
    for half in bytes.chunks_mut(8) {
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u128(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or_default(),
        );
        half.copy_from_slice(&hasher.finish().to_le_bytes());
    }
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

/// Routes `mcp_message` requests for `name` to `handler`, others to `rest`.
fn route_mcp(rest: Option<RequestHandler>, name: &str, handler: RequestHandler) -> RequestHandler {
    let name = name.to_owned();
    Arc::new(move |request| match &request {
        CliRequest::McpMessage(m) if m.server_name == name => handler(request),
        _ => match &rest {
            Some(rest) => rest(request),
            None => Box::pin(async { Err("no MCP server of that name".to_owned()) }),
        },
    })
}

/// Why a session call failed, split by fault.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The CLI could not be started or exited before its first line.
    #[error("launch: {0}")]
    Launch(String),
    /// A request failed (refused by the CLI, timed out, cancelled, or the CLI exited).
    #[error("{subtype}: {failure}")]
    Request {
        /// The request subtype.
        subtype: String,
        /// Why.
        failure: RequestFailure,
    },
    /// A success payload did not decode as its typed answer (the CLI changed its shape).
    #[error("{subtype}: the answer does not decode: {message}")]
    BadAnswer {
        /// The request subtype.
        subtype: String,
        /// The decode error.
        message: String,
    },
    /// The session has ended.
    #[error("the session has ended: {0}")]
    Closed(String),
}

enum Command {
    Send(UserMessage),
    Request(
        HostRequest,
        Option<Duration>,
        oneshot::Sender<Result<Option<RawJson>, Error>>,
    ),
    Close(oneshot::Sender<Result<ExitInfo, Error>>),
}

/// The session handle: cheap to clone, usable from any task (`&self` methods): one task can
/// stream events while another interrupts or switches model.
#[derive(Clone, Debug)]
pub struct Claude {
    commands: mpsc::UnboundedSender<Command>,
    shared: Arc<Mutex<Shared>>,
}

#[derive(Debug, Default)]
struct Shared {
    session_id: Option<String>,
    initialized: Option<Arc<InitializeResponse>>,
    ended: Option<String>,
}

/// The events of a session, in order, as a `Stream`. Dropping it does not stop the session;
/// a consumer that stops reading pauses reading from the CLI.
#[derive(Debug)]
pub struct Events {
    rx: queue::Consumer<Event>,
}

impl Stream for Events {
    type Item = Event;
    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Event>> {
        self.rx.poll_next(cx)
    }
}

impl Claude {
    /// Starts the CLI, sends `initialize` and waits for its answer.
    pub async fn start(options: Options) -> Result<(Claude, Events), Error> {
        let mut options = options;
        let mut initialize = options.initialize.clone();
        let mut hooks: std::collections::BTreeMap<HookEvent, Vec<HookMatcher>> = Default::default();
        let mut hook_handlers: HashMap<String, HookHandler> = HashMap::new();
        for (n, (event, matcher, handler)) in options.hooks.iter().enumerate() {
            let id = format!("hook_{n}");
            hooks
                .entry(event.clone())
                .or_default()
                .push(HookMatcher::new(matcher.clone(), vec![id.clone()]));
            hook_handlers.insert(id, handler.clone());
        }
        if !hooks.is_empty() {
            initialize.hooks = Some(hooks);
        }
        let program = find_claude(options.launch.program.as_deref())
            .map_err(|e| Error::Launch(e.to_string()))?;
        let mut process = CliProcess::spawn(&program, &options.launch, options.process.clone())
            .map_err(|e| Error::Launch(e.to_string()))?;
        let mut config = SessionConfig::new(initialize);
        config.mcp_servers.extend(options.mcp_servers.drain(..));
        config.can_use_tool = options.handlers.contains_key("can_use_tool");
        config.elicitation = options.handlers.contains_key("elicitation");
        if let Some(timeout) = options.request_timeout {
            config.initialize_timeout = timeout;
            config.request_timeout = timeout;
        }
        let transcript = match &options.transcript {
            Some(path) => {
                Some(TranscriptWriter::create(path).map_err(|e| Error::Launch(e.to_string()))?)
            }
            None => None,
        };
        let stdout = process
            .take_stdout()
            .ok_or_else(|| Error::Launch("no stdout".into()))?;
        let stdin = process
            .take_stdin()
            .ok_or_else(|| Error::Launch("no stdin".into()))?;
        // With a transcript, each line's bytes are kept so they are recorded as read.
        let max_line = options.max_line.unwrap_or(byre_transport::DEFAULT_MAX_LINE);
        let keep_lines = transcript.is_some();
        let (events_tx, events_rx) = queue::queue(options.event_buffer.unwrap_or(256));
        let (commands, commands_rx) = mpsc::unbounded_channel();
        let shared = Arc::new(Mutex::new(Shared::default()));
        let (ready_tx, ready_rx) = oneshot::channel();
        let driver = Driver {
            session: Session::new(config, Instant::now()),
            process: Some(process),
            reader: reader::Reader::spawn(stdout, max_line, keep_lines),
            writer: Some(FramedWrite::new(stdin, NdjsonCodec::<CliMessage>::new())),
            events: events_tx,
            pending_events: Default::default(),
            commands: commands_rx,
            hooks: hook_handlers,
            handlers: options.handlers.clone(),
            running: JoinSet::new(),
            running_ids: HashMap::new(),
            waiting: HashMap::new(),
            shared: shared.clone(),
            transcript,
            ready: Some(ready_tx),
            lines_read: 0,
        };
        tokio::spawn(driver.run());
        match ready_rx.await {
            Ok(Ok(())) => Ok((Claude { commands, shared }, Events { rx: events_rx })),
            Ok(Err(e)) => Err(e),
            Err(_) => Err(Error::Closed("the driver stopped during start-up".into())),
        }
    }

    /// Sends a prompt.
    pub fn send(&self, prompt: impl Into<String>) -> Result<(), Error> {
        self.send_message(UserMessage::prompt(prompt))
    }

    /// Sends a user message (with images, a uuid, ...).
    pub fn send_message(&self, message: UserMessage) -> Result<(), Error> {
        self.commands
            .send(Command::Send(message))
            .map_err(|_| Error::Closed(self.ended()))
    }

    /// Sends a typed host request and waits for its typed answer.
    pub async fn request<B: ControlRequestBody>(&self, body: B) -> Result<B::Response, Error> {
        self.request_with_timeout(body, None).await
    }

    /// [`Claude::request`] with its own timeout.
    pub async fn request_with_timeout<B: ControlRequestBody>(
        &self,
        body: B,
        timeout: Option<Duration>,
    ) -> Result<B::Response, Error> {
        let payload = self.raw_request(body.into(), timeout).await?;
        let decoded = match &payload {
            Some(raw) => raw.parse::<B::Response>(),
            None => serde_json::from_str("{}"),
        };
        decoded.map_err(|e| Error::BadAnswer {
            subtype: B::SUBTYPE.into(),
            message: e.to_string(),
        })
    }

    /// Sends any host request, also one byre does not model, and returns its raw payload.
    pub async fn raw_request(
        &self,
        request: HostRequest,
        timeout: Option<Duration>,
    ) -> Result<Option<RawJson>, Error> {
        let (tx, rx) = oneshot::channel();
        self.commands
            .send(Command::Request(request, timeout, tx))
            .map_err(|_| Error::Closed(self.ended()))?;
        rx.await.map_err(|_| Error::Closed(self.ended()))?
    }

    /// Interrupts the current turn (answered at once, also when idle).
    pub async fn interrupt(&self) -> Result<byre_proto::InterruptResponse, Error> {
        self.request(byre_proto::InterruptRequest::default()).await
    }

    /// Switches the model for later turns (`None` resets it); returns the resolved model.
    pub async fn set_model(&self, model: Option<&str>) -> Result<Option<String>, Error> {
        let mut body = byre_proto::SetModelRequest::default();
        match model {
            Some(m) => body.model = Some(m.to_owned()),
            None => {
                body.set_null("model", true);
            }
        }
        Ok(self.request(body).await?.model)
    }

    /// The session id, once the CLI has said it (at the first turn).
    pub fn session_id(&self) -> Option<String> {
        self.shared.lock().expect("shared state").session_id.clone()
    }

    /// The `initialize` answer.
    pub fn initialize_response(&self) -> Option<Arc<InitializeResponse>> {
        self.shared
            .lock()
            .expect("shared state")
            .initialized
            .clone()
    }

    /// Closes stdin and shuts the CLI down (grace period, then SIGTERM, then SIGKILL).
    pub async fn close(&self) -> Result<ExitInfo, Error> {
        let (tx, rx) = oneshot::channel();
        self.commands
            .send(Command::Close(tx))
            .map_err(|_| Error::Closed(self.ended()))?;
        rx.await.map_err(|_| Error::Closed(self.ended()))?
    }

    fn ended(&self) -> String {
        self.shared
            .lock()
            .expect("shared state")
            .ended
            .clone()
            .unwrap_or_else(|| "closed".into())
    }
}

/// Runs one prompt to its result: starts a session, sends `prompt`, collects every event until
/// the turn's result, and closes the session.
pub async fn query(prompt: impl Into<String>, options: Options) -> Result<Vec<Event>, Error> {
    let (claude, mut events) = Claude::start(options).await?;
    claude.send(prompt)?;
    let mut collected = Vec::new();
    while let Some(event) = events.next().await {
        let done = matches!(&event, Event::Message(CliMessage::Result(_)));
        collected.push(event);
        if done {
            break;
        }
    }
    claude.close().await?;
    Ok(collected)
}

/// What one turn of the driver loop found (a short-lived value: its size does not matter).
#[allow(clippy::large_enum_variant)]
enum Step {
    Lines(Option<Vec<reader::Line>>),
    Delivered,
    NoListener,
    Command(Option<Command>),
    Handled(Result<(RequestId, Result<Value, String>), tokio::task::JoinError>),
    Timeout,
}

struct Driver {
    session: Session,
    process: Option<CliProcess>,
    reader: reader::Reader,
    writer: Option<FramedWrite<tokio::process::ChildStdin, NdjsonCodec<CliMessage>>>,
    events: queue::Producer<Event>,
    /// Events taken from the core and not yet handed to the stream.
    pending_events: std::collections::VecDeque<Event>,
    commands: mpsc::UnboundedReceiver<Command>,
    hooks: HashMap<String, HookHandler>,
    handlers: HashMap<&'static str, RequestHandler>,
    running: JoinSet<(RequestId, Result<Value, String>)>,
    running_ids: HashMap<RequestId, tokio::task::AbortHandle>,
    waiting: HashMap<RequestId, oneshot::Sender<Result<Option<RawJson>, Error>>>,
    shared: Arc<Mutex<Shared>>,
    transcript: Option<TranscriptWriter>,
    ready: Option<oneshot::Sender<Result<(), Error>>>,
    lines_read: u64,
}

impl Driver {
    async fn run(mut self) {
        let mut stdout_open = true;
        loop {
            self.flush_transmit().await;
            self.take_events();
            // Hand over what fits now; the rest waits for room below.
            if self.events.push_now(&mut self.pending_events).is_err() {
                // Nobody listens: keep running for the handle's sake, drop events.
                self.pending_events.clear();
            }
            let deadline = self.session.poll_timeout();
            let sleep = async {
                match deadline {
                    Some(at) => tokio::time::sleep_until(tokio::time::Instant::from_std(at)).await,
                    None => std::future::pending().await,
                }
            };
            // Read from the CLI only when every event so far has been handed over.
            let can_read = stdout_open && self.pending_events.is_empty();
            let has_event = !self.pending_events.is_empty();
            let (events, pending) = (&self.events, &mut self.pending_events);
            let step = tokio::select! {
                lines = self.reader.next(), if can_read => Step::Lines(lines),
                pushed = std::future::poll_fn(|cx| events.poll_push(pending, cx)), if has_event => {
                    match pushed {
                        Ok(()) => Step::Delivered,
                        Err(_) => Step::NoListener,
                    }
                }
                command = self.commands.recv() => Step::Command(command),
                Some(done) = self.running.join_next(), if !self.running.is_empty() => Step::Handled(done),
                () = sleep => Step::Timeout,
            };
            match step {
                Step::Lines(Some(lines)) => {
                    for line in lines {
                        self.on_line(line);
                    }
                }
                Step::Lines(None) => {
                    stdout_open = false;
                    self.on_exit().await;
                }
                Step::Delivered => {}
                Step::NoListener => self.pending_events.clear(),
                Step::Command(Some(Command::Send(message))) => {
                    // A closed session refuses it; the handle learns why from `ended`.
                    let _ = self.session.send_user(message);
                }
                Step::Command(Some(Command::Request(request, timeout, reply))) => {
                    match self.session.request(Instant::now(), request, timeout) {
                        Ok(id) => {
                            self.waiting.insert(id, reply);
                        }
                        Err(e) => {
                            let _ = reply.send(Err(Error::Closed(e.to_string())));
                        }
                    }
                }
                Step::Command(Some(Command::Close(reply))) => {
                    let _ = reply.send(self.shutdown().await);
                    return;
                }
                Step::Command(None) => {
                    let _ = self.shutdown().await;
                    return;
                }
                Step::Handled(done) => {
                    let (id, answer) = match done {
                        Ok(done) => done,
                        Err(e) => {
                            // A handler that panicked (or was aborted): find its id.
                            let task = e.id();
                            let Some(id) = self
                                .running_ids
                                .iter()
                                .find(|(_, h)| h.id() == task)
                                .map(|(id, _)| id.clone())
                            else {
                                continue;
                            };
                            let why = if e.is_panic() {
                                "the handler panicked"
                            } else {
                                "cancelled"
                            };
                            (id, Err(why.to_owned()))
                        }
                    };
                    if self.running_ids.remove(&id).is_some() {
                        let _ = self.session.answer(&id, answer);
                    }
                }
                Step::Timeout => self.session.handle_timeout(Instant::now()),
            }
            if !stdout_open && self.process.is_none() && self.pending_events.is_empty() {
                // Keep serving commands (they fail with Closed) until the handle goes away.
                self.take_events();
                if self.pending_events.is_empty() && self.commands.is_closed() {
                    return;
                }
            }
        }
    }

    /// Passes one line read from the CLI to the core (and the transcript).
    fn on_line(&mut self, line: reader::Line) {
        match line.frame {
            Frame::Message(message) => {
                self.lines_read += 1;
                if let (Some(t), Some(bytes)) = (&mut self.transcript, &line.bytes) {
                    let _ = t.record_recv(bytes, &message);
                }
                self.session.handle_message(Instant::now(), message);
            }
            Frame::BadLine(bad) => {
                if let Some(t) = &mut self.transcript {
                    let _ = t.record_note(&format!("bad line from the CLI: {bad}"));
                }
            }
        }
    }

    async fn flush_transmit(&mut self) {
        while let Some(line) = self.session.poll_transmit() {
            if let Some(t) = &mut self.transcript {
                if let Ok(bytes) = serde_json::to_vec(&line) {
                    let _ = t.record_send(&bytes);
                }
            }
            if let Some(writer) = &mut self.writer {
                if writer.send(&line).await.is_err() {
                    self.writer = None;
                }
            }
        }
    }

    /// Moves the core's events into the delivery queue, acting on those the driver handles.
    fn take_events(&mut self) {
        while let Some(event) = self.session.poll_event() {
            match &event {
                Event::Initialized(init) => {
                    self.shared.lock().expect("shared state").initialized =
                        Some(Arc::new((**init).clone()));
                    if let Some(ready) = self.ready.take() {
                        let _ = ready.send(Ok(()));
                    }
                }
                Event::Response {
                    id,
                    subtype,
                    result,
                } => {
                    if let Some(reply) = self.waiting.remove(id) {
                        let _ = reply.send(result.clone().map_err(|failure| Error::Request {
                            subtype: subtype.clone(),
                            failure,
                        }));
                    } else if subtype == "initialize" {
                        if let (Err(failure), Some(ready)) = (result, self.ready.take()) {
                            let _ = ready.send(Err(Error::Request {
                                subtype: subtype.clone(),
                                failure: failure.clone(),
                            }));
                        }
                    }
                }
                Event::Request { id, request } => {
                    // Delivered for information; the driver answers it.
                    self.dispatch(id.clone(), request.clone());
                }
                Event::RequestCancelled { id } => {
                    if let Some(handle) = self.running_ids.remove(id) {
                        handle.abort();
                    }
                }
                Event::Turn(crate::turns::TurnEvent::SessionId { session_id, .. }) => {
                    self.shared.lock().expect("shared state").session_id = Some(session_id.clone());
                }
                _ => {}
            }
            self.pending_events.push_back(event);
        }
    }

    /// Starts the handler for a CLI request. A request with no handler is answered with an
    /// error at once, so the CLI never waits.
    fn dispatch(&mut self, id: RequestId, request: CliRequest) {
        let task = match &request {
            CliRequest::HookCallback(hook) => self.hooks.get(&hook.callback_id).map(|handler| {
                let fut = handler(hook.input.clone(), hook.tool_use_id.clone());
                Box::pin(async move {
                    let output = fut.await?;
                    serde_json::to_value(output).map_err(|e| e.to_string())
                }) as Pin<Box<dyn Future<Output = Result<Value, String>> + Send>>
            }),
            other => other
                .tag()
                .and_then(|subtype| self.handlers.get(subtype))
                .map(|handler| handler(request.clone())),
        };
        let Some(task) = task else {
            let subtype = request.tag().unwrap_or("?").to_owned();
            let _ = self
                .session
                .answer(&id, Err(format!("this host has no handler for {subtype}")));
            return;
        };
        let task_id = id.clone();
        let handle = self.running.spawn(async move { (task_id, task.await) });
        self.running_ids.insert(id, handle);
    }

    async fn on_exit(&mut self) {
        let Some(mut process) = self.process.take() else {
            return;
        };
        let why = if self.lines_read == 0 {
            let error: LaunchError = process.exited_early().await;
            error.to_string()
        } else {
            match process.shutdown().await {
                Ok(info) => format!("exit {}; stderr: {}", info.status, info.stderr_tail.trim()),
                Err(e) => e.to_string(),
            }
        };
        self.writer = None;
        self.running.abort_all();
        self.running_ids.clear();
        self.session.handle_exit(why.clone());
        self.shared.lock().expect("shared state").ended = Some(why.clone());
        if let Some(ready) = self.ready.take() {
            let _ = ready.send(Err(Error::Launch(why)));
        }
        self.take_events();
        if let Some(t) = &mut self.transcript {
            let _ = t.flush();
        }
    }

    async fn shutdown(&mut self) -> Result<ExitInfo, Error> {
        self.flush_transmit().await;
        self.writer = None;
        // Deliver what the CLI still writes while it exits.
        let process = self.process.take();
        let result = match process {
            Some(process) => process
                .shutdown()
                .await
                .map_err(|e| Error::Closed(e.to_string())),
            None => Err(Error::Closed(
                self.shared
                    .lock()
                    .expect("shared state")
                    .ended
                    .clone()
                    .unwrap_or_default(),
            )),
        };
        self.session.handle_exit("closed by the host");
        self.shared.lock().expect("shared state").ended = Some("closed by the host".into());
        self.running.abort_all();
        self.take_events();
        let (events, pending) = (&self.events, &mut self.pending_events);
        let _ = std::future::poll_fn(|cx| events.poll_push(pending, cx)).await;
        if let Some(t) = &mut self.transcript {
            let _ = t.flush();
        }
        result
    }
}
