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
//!
//! A session ends in one of two ways. [`Claude::close`] stops the CLI: it closes stdin, waits
//! a grace period, then sends SIGTERM and SIGKILL. [`Claude::end_input`] only closes stdin:
//! the CLI finishes what it was given (the running turn, queued prompts, a turn started by a
//! background task) and exits by itself; [`Claude::wait`] returns how it ended. Either way the
//! [`Events`] stream ends once every event before the exit has been delivered.
//!
//! With [`Options::transcript`], every line in both directions is written to a file in the
//! format of [`TranscriptWriter`] (`{"dir":"send"|"recv","t":..,"msg":..}`), with notes of
//! what happened to the process (`stdin closed`, `stdout closed`, `exited: exit status: 0`)
//! and of the host's own ([`Claude::note`]).

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
    find_claude, CliProcess, ExitInfo, Frame, Launch, LaunchError, ProcessOptions, TranscriptWriter,
};
use futures::{Stream, StreamExt};
use serde_json::{Map, Value};
use tokio::io::AsyncWriteExt;
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::JoinSet;

use crate::correlation::RequestId;
use crate::session::{Event, RequestFailure, Session, SessionConfig};

mod pool;
mod queue;
mod reader;

pub use pool::Pool;

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
    /// Writes a transcript here (see the module documentation).
    pub transcript: Option<PathBuf>,
    /// Keeps `stream_event` lines in the transcript (left out by default: they are most of its
    /// size).
    pub transcript_stream_events: bool,
    /// Starts the transcript with two notes: the CLI's argv and its working directory. Off by
    /// default, as the argv holds `--settings` and `--mcp-config`, which may carry secrets.
    pub transcript_launch: bool,
    /// How long `initialize` and other requests may take; 60 s by default.
    pub request_timeout: Option<Duration>,
    /// How long a handler may take to answer one of the CLI's requests (hook, permission
    /// prompt, MCP message, ...) before the CLI gets an error answer and the handler is
    /// stopped. No limit by default: a permission prompt may wait for a person.
    pub handler_timeout: Option<Duration>,
    hooks: Vec<(HookEvent, Option<String>, HookHandler)>,
    handlers: HashMap<&'static str, RequestHandler>,
    mcp_servers: Vec<String>,
    questions: Option<RequestHandler>,
    /// In-process MCP servers started afresh for each session: the handler of `mcp_message`
    /// for that server is built at start, given the session's [`Outbox`].
    mcp_factories: Vec<(String, McpHandlerFactory)>,
}

/// Builds the `mcp_message` handler of one in-process MCP server for a new session.
#[cfg_attr(not(feature = "mcp"), allow(dead_code))]
pub(crate) type McpHandlerFactory = Arc<dyn Fn(Outbox) -> RequestHandler + Send + Sync>;

/// Sends host requests from the session's own handlers (an in-process MCP server's own
/// messages). It does not keep the session alive: once every [`Claude`] handle is gone and the
/// driver has stopped, sending fails.
#[derive(Clone, Debug)]
#[cfg_attr(not(feature = "mcp"), allow(dead_code))]
pub(crate) struct Outbox {
    commands: mpsc::WeakUnboundedSender<Command>,
}

#[cfg_attr(not(feature = "mcp"), allow(dead_code))]
impl Outbox {
    /// Sends `request`; the receiver gets its answer. `None` when the session has ended.
    pub(crate) fn request(
        &self,
        request: HostRequest,
    ) -> Option<oneshot::Receiver<Result<Option<RawJson>, Error>>> {
        let commands = self.commands.upgrade()?;
        let (tx, rx) = oneshot::channel();
        commands.send(Command::Request(request, None, tx)).ok()?;
        Some(rx)
    }
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

    /// Answers the model's `AskUserQuestion` calls: `handler` gets the questions and returns
    /// the answers (question text → answer; several choices as their labels joined with
    /// `", "`), which the model reads as the tool's result; an error denies the call with that
    /// message. Permission prompts for other tools go to the [`Options::can_use_tool`]
    /// handler, and are denied when there is none. Starts the CLI with
    /// `--permission-prompt-tool stdio`, which is what makes the CLI offer the tool.
    pub fn ask_user_question<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(byre_proto::AskUserQuestionInput) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<(String, String)>, String>> + Send + 'static,
    {
        let handler = Arc::new(handler);
        self.questions = Some(Arc::new(move |request| {
            let handler = handler.clone();
            Box::pin(async move {
                let CliRequest::CanUseTool(request) = request else {
                    return Err("not a can_use_tool request".to_owned());
                };
                let input = match byre_proto::AskUserQuestionInput::from_request(&request) {
                    Some(Ok(input)) => input,
                    Some(Err(e)) => return Err(format!("the questions do not decode: {e}")),
                    None => return Err("not an AskUserQuestion call".to_owned()),
                };
                let result = match handler(input.clone()).await {
                    Ok(answers) => input.answered(answers),
                    Err(message) => byre_proto::PermissionResult::deny(message),
                };
                serde_json::to_value(result).map_err(|e| e.to_string())
            })
        }));
        self.launch.permission_prompt_tool = Some("stdio".into());
        self
    }

    /// Answers `elicitation` requests (an MCP server asks the user to fill in a form or open
    /// a URL). Without a handler they are declined.
    pub fn elicitation<F, Fut>(self, handler: F) -> Self
    where
        F: Fn(byre_proto::ElicitationRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<byre_proto::ElicitationResponse, String>> + Send + 'static,
    {
        let handler = Arc::new(handler);
        self.handler(
            "elicitation",
            Arc::new(move |request| {
                let handler = handler.clone();
                Box::pin(async move {
                    let CliRequest::Elicitation(request) = request else {
                        return Err("not an elicitation request".to_owned());
                    };
                    let answer = handler(request).await?;
                    serde_json::to_value(answer).map_err(|e| e.to_string())
                })
            }),
        )
    }

    /// Answers `request_user_dialog` requests (a dialog of a kind declared in
    /// `initialize.supportedDialogKinds`). Without a handler they get an error.
    pub fn user_dialog<F, Fut>(self, handler: F) -> Self
    where
        F: Fn(byre_proto::UserDialogRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<byre_proto::UserDialogResponse, String>> + Send + 'static,
    {
        let handler = Arc::new(handler);
        self.handler(
            "request_user_dialog",
            Arc::new(move |request| {
                let handler = handler.clone();
                Box::pin(async move {
                    let CliRequest::RequestUserDialog(request) = request else {
                        return Err("not a request_user_dialog request".to_owned());
                    };
                    let answer = handler(request).await?;
                    serde_json::to_value(answer).map_err(|e| e.to_string())
                })
            }),
        )
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

    /// Declares the in-process MCP server `name` (in `--mcp-config`, with `alwaysLoad` as given)
    /// whose `mcp_message` handler `factory` builds afresh for each session; it replaces an
    /// earlier one of the same name declared this way.
    #[cfg_attr(not(feature = "mcp"), allow(dead_code))]
    pub(crate) fn mcp_server_per_session(
        mut self,
        name: &str,
        always_load: bool,
        factory: McpHandlerFactory,
    ) -> Self {
        self.launch.sdk_servers.retain(|s| s.name != name);
        self.mcp_factories.retain(|(n, _)| n != name);
        self.launch.sdk_servers.push(byre_transport::SdkServer {
            name: name.to_owned(),
            always_load,
        });
        self.mcp_servers.push(name.to_owned());
        self.mcp_factories.push((name.to_owned(), factory));
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

/// The transcript note of the argv: `argv: ["/path/to/claude","--output-format",...]`.
fn launch_note(program: &std::path::Path, launch: &Launch) -> String {
    let mut argv = vec![program.to_string_lossy().into_owned()];
    argv.extend(
        launch
            .args()
            .iter()
            .map(|a| a.to_string_lossy().into_owned()),
    );
    format!("argv: {}", Value::from(argv))
}

/// A random version-4 UUID, for a new session id (`Launch::session_id`, `--session-id`).
pub fn new_session_id() -> String {
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

/// Routes `AskUserQuestion` permission prompts to `questions`, others to `permissions` (denied
/// when there is none).
fn route_questions(
    questions: RequestHandler,
    permissions: Option<RequestHandler>,
) -> RequestHandler {
    Arc::new(move |request| match &request {
        CliRequest::CanUseTool(r) if r.tool_name == byre_proto::ASK_USER_QUESTION => {
            questions(request)
        }
        _ => match &permissions {
            Some(permissions) => permissions(request),
            None => Box::pin(async {
                serde_json::to_value(byre_proto::PermissionResult::deny(
                    "this host answers only AskUserQuestion",
                ))
                .map_err(|e| e.to_string())
            }),
        },
    })
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
    /// The session has ended, or its input has (after [`Claude::end_input`]).
    #[error("the session has ended: {0}")]
    Closed(String),
    /// The call was refused before anything was written (a raw line holding a newline).
    #[error("invalid input: {0}")]
    InvalidInput(String),
}

/// Whose fault an [`Error`] is: what a caller can do about it differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Fault {
    /// The CLI could not be started: the program, its arguments or the machine (not found,
    /// not executable, refused its options, not logged in). Fix the setup.
    Launch,
    /// The API was misused (for example a raw line with a newline in it).
    Usage,
    /// The CLI broke the protocol: an answer that does not decode as its type.
    Protocol,
    /// The CLI refused the request (an error answer, with its `error_code` when it gave one).
    Refused,
    /// No answer in time, or the host withdrew the request.
    Timeout,
    /// The CLI exited, or the session was closed: the session is over.
    Exited,
}

impl Error {
    /// Whose fault this error is.
    pub fn fault(&self) -> Fault {
        match self {
            Error::Launch(_) => Fault::Launch,
            Error::InvalidInput(_) => Fault::Usage,
            Error::BadAnswer { .. } => Fault::Protocol,
            Error::Request { failure, .. } => match failure {
                RequestFailure::Refused { .. } => Fault::Refused,
                RequestFailure::TimedOut(_) | RequestFailure::Cancelled => Fault::Timeout,
                RequestFailure::Exited(_) => Fault::Exited,
            },
            Error::Closed(_) => Fault::Exited,
        }
    }

    /// The CLI's `error_code` when it refused the request.
    pub fn error_code(&self) -> Option<&byre_proto::ErrorCode> {
        match self {
            Error::Request {
                failure: RequestFailure::Refused { code, .. },
                ..
            } => code.as_ref(),
            _ => None,
        }
    }
}

enum Command {
    Send(UserMessage),
    Request(
        HostRequest,
        Option<Duration>,
        oneshot::Sender<Result<Option<RawJson>, Error>>,
    ),
    Close(oneshot::Sender<Result<ExitInfo, Error>>),
    Direct(Direct),
}

/// Commands the driver carries out itself, without the session core.
enum Direct {
    /// Write these bytes and a newline as they are.
    SendRaw(Vec<u8>),
    /// Add a note to the transcript.
    Note(String),
    /// Close stdin once everything sent so far is written.
    EndInput,
    /// Answer when the CLI has exited.
    Wait(oneshot::Sender<Result<ExitInfo, Error>>),
    /// Serve the in-process MCP server of this name with a handler the factory builds.
    ServeMcp(String, McpHandlerFactory),
    /// Stop serving the in-process MCP server of this name.
    ForgetMcp(String),
}

/// Whether `initialize` was answered: `None` while waiting.
type Ready = Option<Result<(), Error>>;

/// The session handle: cheap to clone, usable from any task (`&self` methods): one task can
/// stream events while another interrupts or switches model.
#[derive(Clone, Debug)]
pub struct Claude {
    commands: mpsc::UnboundedSender<Command>,
    shared: Arc<Mutex<Shared>>,
    ready: watch::Receiver<Ready>,
    /// The MCP servers of the session that `mcp_set_servers` replaces, as last declared to the
    /// CLI (`--mcp-config`, then each change); the lock makes changes one at a time.
    mcp_set: Arc<tokio::sync::Mutex<Map<String, Value>>>,
}

/// A change to the session's MCP servers.
pub(crate) enum McpChange {
    /// Add a server with this configuration, served in process when a factory is given.
    Add {
        name: String,
        config: Value,
        factory: Option<McpHandlerFactory>,
    },
    /// Remove a server.
    Remove(String),
}

#[derive(Debug, Default)]
struct Shared {
    session_id: Option<String>,
    initialized: Option<Arc<InitializeResponse>>,
    ended: Option<String>,
    /// Set by [`Claude::end_input`]: nothing more may be sent.
    input_ended: bool,
}

/// The events of a session, in order, as a `Stream`. Dropping it does not stop the session;
/// a consumer that stops reading pauses reading from the CLI. The stream ends when the CLI has
/// exited and every event before its exit has been delivered, or after [`Claude::close`].
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
        let (claude, events) = Claude::spawn(options).await?;
        claude.initialized().await?;
        Ok((claude, events))
    }

    /// Starts the CLI and sends `initialize` without waiting for its answer:
    /// [`Claude::initialized`] waits for it. Prompts and requests may be sent at once; they
    /// are written after `initialize`. When the CLI fails at start-up (a `--resume` of an
    /// unknown session writes an error `result` and exits), the events still hold what it
    /// wrote and [`Claude::wait`] says how it exited.
    pub async fn spawn(options: Options) -> Result<(Claude, Events), Error> {
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
        // Created first, so that its times count from the start of the process.
        let mut transcript = match &options.transcript {
            Some(path) => Some(
                TranscriptWriter::create(path)
                    .map_err(|e| Error::Launch(format!("{}: {e}", path.display())))?
                    .keep_stream_events(options.transcript_stream_events),
            ),
            None => None,
        };
        if let (Some(t), true) = (&mut transcript, options.transcript_launch) {
            let _ = t.record_note(&launch_note(&program, &options.launch));
            let cwd = match &options.launch.cwd {
                Some(cwd) => cwd.clone(),
                None => std::env::current_dir().unwrap_or_default(),
            };
            let _ = t.record_note(&format!("cwd: {}", cwd.display()));
        }
        let mcp_set = match options.launch.mcp_config() {
            Some(Value::Object(mut config)) => match config.remove("mcpServers") {
                Some(Value::Object(servers)) => servers,
                _ => Map::new(),
            },
            _ => Map::new(),
        };
        let mut process = CliProcess::spawn(&program, &options.launch, options.process.clone())
            .map_err(|e| Error::Launch(e.to_string()))?;
        if let Some(questions) = options.questions.take() {
            let permissions = options.handlers.remove("can_use_tool");
            options
                .handlers
                .insert("can_use_tool", route_questions(questions, permissions));
        }
        let mut config = SessionConfig::new(initialize);
        config.mcp_servers.extend(options.mcp_servers.drain(..));
        config.can_use_tool = options.handlers.contains_key("can_use_tool");
        config.elicitation = options.handlers.contains_key("elicitation");
        if let Some(timeout) = options.request_timeout {
            config.initialize_timeout = timeout;
            config.request_timeout = timeout;
        }
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
        let handlers = options.handlers.clone();
        let outbox = Outbox {
            commands: commands.downgrade(),
        };
        let mcp = options
            .mcp_factories
            .iter()
            .map(|(name, factory)| (name.clone(), factory(outbox.clone())))
            .collect();
        let shared = Arc::new(Mutex::new(Shared::default()));
        let (ready_tx, ready_rx) = watch::channel(None);
        let driver = Driver {
            session: Session::new(config, Instant::now()),
            process: Some(process),
            reader: reader::Reader::spawn(stdout, max_line, keep_lines),
            writer: Some(stdin),
            events: events_tx,
            pending_events: Default::default(),
            commands: commands_rx,
            hooks: hook_handlers,
            handlers,
            mcp,
            outbox,
            running: JoinSet::new(),
            running_ids: HashMap::new(),
            waiting: HashMap::new(),
            shared: shared.clone(),
            transcript,
            ready: ready_tx,
            lines_read: 0,
            exit: None,
            exit_waiters: Vec::new(),
            end_input_when_idle: false,
            handler_timeout: options.handler_timeout,
            turn_span: None,
            request_spans: HashMap::new(),
        };
        // Everything the driver does happens inside the session's span: its turns, control
        // requests both ways, the exit.
        let span = tracing::info_span!(
            "byre_session",
            pid = driver.process.as_ref().map(CliProcess::pid),
            session_id = tracing::field::Empty,
        );
        tokio::spawn(tracing::Instrument::instrument(driver.run(), span));
        let claude = Claude {
            commands,
            shared,
            ready: ready_rx,
            mcp_set: Arc::new(tokio::sync::Mutex::new(mcp_set)),
        };
        Ok((claude, Events { rx: events_rx }))
    }

    /// Waits for the answer to `initialize` (at once when it has come): fails when the CLI
    /// refused it, did not answer in time, or exited first.
    pub async fn initialized(&self) -> Result<Arc<InitializeResponse>, Error> {
        let mut ready = self.ready.clone();
        let state = match ready.wait_for(Option::is_some).await {
            Ok(state) => state.clone(),
            Err(_) => return Err(Error::Closed(self.ended())),
        };
        match state {
            Some(Ok(())) => self
                .initialize_response()
                .ok_or_else(|| Error::Closed(self.ended())),
            Some(Err(e)) => Err(e),
            None => Err(Error::Closed(self.ended())),
        }
    }

    /// Sends a prompt.
    pub fn send(&self, prompt: impl Into<String>) -> Result<(), Error> {
        self.send_message(UserMessage::prompt(prompt))
    }

    /// Sends a user message (with images, a uuid, ...).
    pub fn send_message(&self, message: UserMessage) -> Result<(), Error> {
        self.check_input()?;
        self.commands
            .send(Command::Send(message))
            .map_err(|_| Error::Closed(self.ended()))
    }

    /// Writes `line` and a newline on the CLI's stdin as they are, in order with everything
    /// else sent, for protocol experiments: invalid JSON, a request subtype byre does not
    /// model, a message of a future protocol. The session core does not see it: an answer to
    /// a raw `control_request` comes as [`Event::Message`] (with an
    /// [`Event::Protocol`] saying no request of that id was in flight). The transcript keeps
    /// it as a `raw` string. A line holding a newline is refused.
    pub fn send_raw(&self, line: impl Into<Vec<u8>>) -> Result<(), Error> {
        let line = line.into();
        if line.contains(&b'\n') {
            return Err(Error::InvalidInput(
                "a raw line must not hold a newline".into(),
            ));
        }
        self.check_input()?;
        self.direct(Direct::SendRaw(line))
    }

    /// Adds a note to the transcript, in order with the lines sent (nothing happens without a
    /// transcript). Notes are flushed to the file at once.
    pub fn note(&self, text: impl Into<String>) -> Result<(), Error> {
        self.direct(Direct::Note(text.into()))
    }

    /// Ends the input: once everything sent so far is written, closes the CLI's stdin. The CLI
    /// finishes what it was given (the running turn, queued prompts, a turn a background task
    /// starts) and exits by itself; events go on until then, and [`Claude::wait`] says how it
    /// exited. Nothing more can be sent: prompts and requests fail with [`Error::Closed`], and
    /// the CLI's own requests can no longer be answered (the transcript notes each answer not
    /// sent). When the host serves hooks, permission prompts or MCP servers, stdin stays open
    /// until the run is idle (no turn running or queued, no background work, no handler
    /// running), so the CLI can still ask them while it finishes. Ending the input of a CLI
    /// that has exited does nothing.
    pub fn end_input(&self) -> Result<(), Error> {
        self.shared.lock().expect("shared state").input_ended = true;
        self.direct(Direct::EndInput)
    }

    /// Waits for the CLI to exit by itself, and returns how it ended (at once when it has).
    /// Does not stop it: call [`Claude::end_input`] first to let it finish, or
    /// [`Claude::close`] to stop it; wrap it in a timeout to bound the wait. Keep reading the
    /// [`Events`] meanwhile (or drop them): a full event queue pauses reading from the CLI, and
    /// a CLI that cannot write does not finish.
    pub async fn wait(&self) -> Result<ExitInfo, Error> {
        let (tx, rx) = oneshot::channel();
        self.direct(Direct::Wait(tx))?;
        rx.await.map_err(|_| Error::Closed(self.ended()))?
    }

    /// Adds the MCP server `name` to the live session, configured as in `--mcp-config`
    /// (`{"type":"stdio","command":...,"args":[...]}`, `{"type":"http","url":...}`, ...). The
    /// CLI takes the session's whole set of such servers at once (`mcp_set_servers`), so byre
    /// sends the servers declared at launch ([`Launch::mcp_servers`], in-process ones included)
    /// and those added since, with this one. The CLI's answer says what it added and which
    /// servers failed to start (`errors`; such a server stays in the set, with status
    /// `failed`, until removed); on the first change it also counts as added the stdio and
    /// http servers of the launch, without restarting them. A name already in the set is
    /// refused, and so is an in-process (`sdk`) server: those are added with `add_mcp_server`
    /// (feature `mcp`), which serves them too. Tools of a server added live are deferred: the
    /// CLI announces them to the model as available (alwaysLoad is not honoured here).
    pub async fn add_mcp_config(
        &self,
        name: &str,
        config: Value,
    ) -> Result<byre_proto::McpSetServersResponse, Error> {
        if config.get("type").and_then(Value::as_str) == Some("sdk") {
            return Err(Error::InvalidInput(format!(
                "{name:?} is an in-process server: add it with add_mcp_server, which serves it"
            )));
        }
        self.change_mcp(McpChange::Add {
            name: name.to_owned(),
            config,
            factory: None,
        })
        .await
    }

    /// Removes the MCP server `name`, one declared at launch (in-process ones included) or
    /// added since, from the live session: the CLI disconnects it and its tools go. Servers of
    /// the user's or project's settings are not in that set and cannot be removed here (see
    /// `mcp_toggle` for those).
    pub async fn remove_mcp_server(
        &self,
        name: &str,
    ) -> Result<byre_proto::McpSetServersResponse, Error> {
        self.change_mcp(McpChange::Remove(name.to_owned())).await
    }

    /// Carries out `change` with one `mcp_set_servers` request, on a task of its own, so that
    /// the record of the set stays right when the caller stops waiting. Changes are made one
    /// at a time.
    pub(crate) async fn change_mcp(
        &self,
        change: McpChange,
    ) -> Result<byre_proto::McpSetServersResponse, Error> {
        let claude = self.clone();
        tokio::spawn(async move { claude.apply_mcp_change(change).await })
            .await
            .unwrap_or_else(|e| Err(Error::Closed(format!("the MCP change stopped: {e}"))))
    }

    /// An in-process server is served before the request goes out (the CLI starts its
    /// handshake at once). When the request fails (it timed out, say), the CLI may or may not
    /// have made the change: the record is set from what `mcp_status` then lists, and an
    /// in-process server is served for as long as it is in it.
    async fn apply_mcp_change(
        &self,
        change: McpChange,
    ) -> Result<byre_proto::McpSetServersResponse, Error> {
        let mut set = self.mcp_set.lock().await;
        let mut wanted = set.clone();
        let name = match change {
            McpChange::Add {
                name,
                config,
                factory,
            } => {
                if wanted.contains_key(&name) {
                    return Err(Error::InvalidInput(format!(
                        "the session already has an MCP server named {name:?}"
                    )));
                }
                self.check_input()?;
                if let Some(factory) = factory {
                    self.direct(Direct::ServeMcp(name.clone(), factory))?;
                }
                wanted.insert(name.clone(), config);
                name
            }
            McpChange::Remove(name) => {
                if wanted.remove(&name).is_none() {
                    return Err(Error::InvalidInput(format!(
                        "the session has no MCP server named {name:?} declared at launch or added since"
                    )));
                }
                name
            }
        };
        let answer = self
            .request(byre_proto::McpSetServersRequest {
                servers: wanted.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
                ..Default::default()
            })
            .await;
        if answer.is_ok() {
            *set = wanted;
        } else if let Ok(status) = self.request(byre_proto::McpStatusRequest::default()).await {
            let listed: std::collections::HashSet<String> = status
                .mcp_servers
                .unwrap_or_default()
                .into_iter()
                .map(|s| s.name)
                .collect();
            let mut known = std::mem::take(&mut *set);
            known.extend(wanted);
            *set = known
                .into_iter()
                .filter(|(name, _)| listed.contains(name))
                .collect();
        }
        if !set.contains_key(&name) {
            // Forgetting a server that was never served does nothing.
            let _ = self.direct(Direct::ForgetMcp(name));
        }
        answer
    }

    fn direct(&self, command: Direct) -> Result<(), Error> {
        self.commands
            .send(Command::Direct(command))
            .map_err(|_| Error::Closed(self.ended()))
    }

    /// Fails once the input has ended or the CLI has exited (a prompt sent then would go
    /// nowhere).
    fn check_input(&self) -> Result<(), Error> {
        let shared = self.shared.lock().expect("shared state");
        if let Some(ended) = &shared.ended {
            return Err(Error::Closed(ended.clone()));
        }
        if shared.input_ended {
            return Err(Error::Closed("the input has ended".into()));
        }
        Ok(())
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
        self.check_input()?;
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

    /// Switches the permission mode (`default`, `acceptEdits`, `plan`, `bypassPermissions`,
    /// ...); a mode the CLI does not take is refused with its error code.
    pub async fn set_permission_mode(
        &self,
        mode: impl Into<byre_proto::PermissionMode>,
    ) -> Result<byre_proto::SetPermissionModeResponse, Error> {
        self.request(byre_proto::SetPermissionModeRequest {
            mode: mode.into(),
            extra: Default::default(),
        })
        .await
    }

    /// The MCP servers and their state (connected, failed, ...), with their tools.
    pub async fn mcp_status(&self) -> Result<byre_proto::McpStatusResponse, Error> {
        self.request(byre_proto::McpStatusRequest::default()).await
    }

    /// How the context window is used. `summary` skips the API's token count (`full` calls
    /// it).
    pub async fn context_usage(
        &self,
        summary: bool,
    ) -> Result<byre_proto::ContextUsageResponse, Error> {
        let mut body = byre_proto::GetContextUsageRequest::default();
        if summary {
            body.detail = Some("summary".to_owned());
        }
        self.request(body).await
    }

    /// Stops a task (a background Bash command or a subagent) by its id.
    pub async fn stop_task(&self, task_id: impl Into<String>) -> Result<(), Error> {
        self.request(byre_proto::StopTaskRequest {
            task_id: task_id.into(),
            extra: Default::default(),
        })
        .await
        .map(|_| ())
    }

    /// The session id, once the CLI has said it (at the first turn).
    pub fn session_id(&self) -> Option<String> {
        self.shared.lock().expect("shared state").session_id.clone()
    }

    /// Whether `other` is a handle of the same session.
    pub(crate) fn same_session(&self, other: &Claude) -> bool {
        Arc::ptr_eq(&self.shared, &other.shared)
    }

    /// Whether the session has ended: the CLI exited, or the session was closed.
    pub fn has_ended(&self) -> bool {
        self.shared.lock().expect("shared state").ended.is_some()
    }

    /// The `initialize` answer.
    pub fn initialize_response(&self) -> Option<Arc<InitializeResponse>> {
        self.shared
            .lock()
            .expect("shared state")
            .initialized
            .clone()
    }

    /// Closes stdin and shuts the CLI down (grace period, then SIGTERM, then SIGKILL), and
    /// returns how it ended; when it has already exited by itself, just how it ended.
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
    /// The CLI's stdin, while it is open.
    writer: Option<tokio::process::ChildStdin>,
    events: queue::Producer<Event>,
    /// Events taken from the core and not yet handed to the stream.
    pending_events: std::collections::VecDeque<Event>,
    commands: mpsc::UnboundedReceiver<Command>,
    hooks: HashMap<String, HookHandler>,
    handlers: HashMap<&'static str, RequestHandler>,
    /// The in-process MCP servers, by name.
    mcp: HashMap<String, RequestHandler>,
    /// What their handlers send host requests through.
    outbox: Outbox,
    running: JoinSet<(RequestId, Result<Value, String>)>,
    running_ids: HashMap<RequestId, tokio::task::AbortHandle>,
    waiting: HashMap<RequestId, oneshot::Sender<Result<Option<RawJson>, Error>>>,
    shared: Arc<Mutex<Shared>>,
    transcript: Option<TranscriptWriter>,
    ready: watch::Sender<Ready>,
    lines_read: u64,
    /// How the CLI ended, once it has.
    exit: Option<ExitInfo>,
    /// [`Claude::wait`] calls waiting for the exit.
    exit_waiters: Vec<oneshot::Sender<Result<ExitInfo, Error>>>,
    /// [`Claude::end_input`] was called while the host serves the CLI's requests: stdin closes
    /// once the run is idle and no handler runs.
    end_input_when_idle: bool,
    /// How long a handler may take ([`Options::handler_timeout`]).
    handler_timeout: Option<Duration>,
    /// The span of the running turn: host requests sent during it are its children.
    turn_span: Option<tracing::Span>,
    /// The span of each host request in flight, and when it was sent.
    request_spans: HashMap<RequestId, (tracing::Span, Instant)>,
}

impl Driver {
    async fn run(mut self) {
        let mut stdout_open = true;
        loop {
            self.flush_transmit().await;
            self.take_events();
            if self.end_input_when_idle
                && self.running_ids.is_empty()
                && self.session.turns().may_close_stdin(true)
            {
                self.end_input_when_idle = false;
                self.close_stdin().await;
            }
            // Hand over what fits now; the rest waits for room below.
            if self.events.push_now(&mut self.pending_events).is_err() {
                // Nobody listens: keep running for the handle's sake, drop events.
                self.pending_events.clear();
            }
            if !stdout_open
                && self.process.is_none()
                && self.pending_events.is_empty()
                && !self.events.is_closed()
            {
                // The CLI has exited and every event is handed over: the stream ends after it.
                self.events.close();
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
                Step::Lines(Some(lines)) => self.on_lines(lines),
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
                Step::Command(Some(Command::Direct(direct))) => self.direct(direct).await,
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
                                tracing::warn!(id = %id, "a handler panicked; answered with an error");
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
    /// Takes a batch of lines read together (one clock reading serves them all).
    fn on_lines(&mut self, lines: Vec<reader::Line>) {
        let now = Instant::now();
        for line in lines {
            self.on_line(now, line);
        }
    }

    fn on_line(&mut self, now: Instant, line: reader::Line) {
        match line.frame {
            Frame::Message(message) => {
                self.lines_read += 1;
                if let (Some(t), Some(bytes)) = (&mut self.transcript, &line.bytes) {
                    let _ = t.record_recv(bytes, &message);
                }
                self.session.handle_message(now, message);
            }
            Frame::BadLine(bad) => {
                if let Some(t) = &mut self.transcript {
                    let _ = t.record_note(&format!("bad line from the CLI: {bad}"));
                }
                let why = if bad.head.is_empty() {
                    bad.reason.to_string()
                } else {
                    format!("{}; it starts {:?}", bad.reason, bad.head)
                };
                if matches!(bad.reason, byre_transport::BadLineReason::TooLong { .. })
                    && !self.session.is_initialized()
                {
                    // The longest early line is the initialize answer: waiting for it would
                    // only end in the initialize timeout.
                    self.set_ready(Err(Error::BadAnswer {
                        subtype: "initialize".into(),
                        message: format!(
                            "a {}-byte line came before the answer and was skipped ({});                              raise the line limit",
                            bad.len, bad.reason
                        ),
                    }));
                }
                self.session.handle_bad_line(now, bad.len, why);
            }
        }
    }

    async fn flush_transmit(&mut self) {
        // The lines waiting now go out in one write; `ends` marks where each one ends.
        let mut out = Vec::new();
        let mut ends = Vec::new();
        while let Some(line) = self.session.poll_transmit() {
            if let byre_proto::HostMessage::ControlRequest(request) = &line {
                let subtype = request.request.tag().unwrap_or("?");
                let span = match &self.turn_span {
                    Some(turn) => tracing::debug_span!(
                        parent: turn,
                        "control_request",
                        id = %request.request_id,
                        subtype,
                        from = "host"
                    ),
                    None => tracing::debug_span!(
                        "control_request",
                        id = %request.request_id,
                        subtype,
                        from = "host"
                    ),
                };
                span.in_scope(|| tracing::debug!("sent"));
                self.request_spans.insert(
                    RequestId::new(request.request_id.clone()),
                    (span, Instant::now()),
                );
            }
            // Encoded once: the same bytes go to the CLI and to the transcript.
            let Ok(bytes) = byre_transport::encode_line(&line) else {
                continue;
            };
            out.extend_from_slice(&bytes);
            ends.push(out.len());
        }
        if out.is_empty() {
            return;
        }
        self.write_line(&out).await;
        // Recorded once written, as sent or not.
        if let Some(t) = &mut self.transcript {
            let starts = std::iter::once(0).chain(ends.iter().copied());
            for (start, end) in starts.zip(ends.iter().copied()) {
                let text = &out[start..end - 1];
                let _ = match self.writer {
                    Some(_) => t.record_send_message(text),
                    None => t.record_note(&format!(
                        "stdin is closed, not sent: {}",
                        String::from_utf8_lossy(text)
                    )),
                };
            }
        }
    }

    /// Writes whole lines (each with its newline) on the CLI's stdin, if it is open.
    async fn write_line(&mut self, bytes: &[u8]) {
        if let Some(stdin) = &mut self.writer {
            if stdin.write_all(bytes).await.is_err() || stdin.flush().await.is_err() {
                // The CLI is gone; the reader sees its exit.
                self.writer = None;
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
                    self.set_ready(Ok(()));
                }
                Event::Response {
                    id,
                    subtype,
                    result,
                } => {
                    if let Some((span, sent)) = self.request_spans.remove(id) {
                        let elapsed_ms = sent.elapsed().as_secs_f64() * 1000.0;
                        span.in_scope(|| match result {
                            Ok(_) => tracing::debug!(elapsed_ms, "answered"),
                            Err(failure) => tracing::info!(elapsed_ms, %failure, "failed"),
                        });
                    }
                    if let Some(reply) = self.waiting.remove(id) {
                        let _ = reply.send(result.clone().map_err(|failure| Error::Request {
                            subtype: subtype.clone(),
                            failure,
                        }));
                    } else if subtype == "initialize" {
                        if let Err(failure) = result {
                            self.set_ready(Err(Error::Request {
                                subtype: subtype.clone(),
                                failure: failure.clone(),
                            }));
                        }
                    }
                }
                Event::Request { id, request } => {
                    // Delivered for information; the driver answers it.
                    self.dispatch(id.clone(), CliRequest::clone(request));
                }
                Event::RequestCancelled { id } => {
                    if let Some(handle) = self.running_ids.remove(id) {
                        handle.abort();
                    }
                }
                Event::Turn(crate::turns::TurnEvent::SessionId { session_id, .. }) => {
                    tracing::Span::current().record("session_id", session_id.as_str());
                    self.shared.lock().expect("shared state").session_id = Some(session_id.clone());
                }
                Event::Turn(crate::turns::TurnEvent::TurnStarted { turn, origin, .. }) => {
                    let span = tracing::info_span!("turn", turn = turn.get(), origin = ?origin);
                    span.in_scope(|| tracing::debug!("started"));
                    self.turn_span = Some(span);
                }
                Event::Turn(crate::turns::TurnEvent::TurnEnded { turn, outcome, .. }) => {
                    let span = self
                        .turn_span
                        .take()
                        .unwrap_or_else(|| tracing::info_span!("turn", turn = turn.get()));
                    span.in_scope(|| {
                        tracing::info!(
                            subtype = %outcome.subtype,
                            is_error = outcome.is_error,
                            "ended"
                        )
                    });
                }
                Event::Protocol(problem) => tracing::warn!(%problem, "the CLI broke the protocol"),
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
            CliRequest::McpMessage(mcp) if self.mcp.contains_key(&mcp.server_name) => self
                .mcp
                .get(&mcp.server_name)
                .map(|handler| handler(request.clone())),
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
        let subtype = request.tag().unwrap_or("?");
        let span = match &self.turn_span {
            Some(turn) => tracing::debug_span!(
                parent: turn,
                "control_request",
                id = %id,
                subtype,
                from = "cli"
            ),
            None => tracing::debug_span!("control_request", id = %id, subtype, from = "cli"),
        };
        let task: Pin<Box<dyn Future<Output = Result<Value, String>> + Send>> =
            match self.handler_timeout {
                Some(limit) => Box::pin(async move {
                    match tokio::time::timeout(limit, task).await {
                        Ok(answer) => answer,
                        Err(_) => Err(format!("the handler did not answer within {limit:?}")),
                    }
                }),
                None => task,
            };
        let task_id = id.clone();
        let started = Instant::now();
        let handle = self.running.spawn(tracing::Instrument::instrument(
            async move {
                tracing::debug!("handling");
                let answer = task.await;
                let elapsed_ms = started.elapsed().as_secs_f64() * 1000.0;
                match &answer {
                    Ok(_) => tracing::debug!(elapsed_ms, "answered"),
                    Err(error) => tracing::info!(elapsed_ms, %error, "answered with an error"),
                }
                (task_id, answer)
            },
            span,
        ));
        self.running_ids.insert(id, handle);
    }

    async fn on_exit(&mut self) {
        let Some(mut process) = self.process.take() else {
            return;
        };
        self.note("stdout closed");
        let why = if self.lines_read == 0 {
            let error: LaunchError = process.exited_early().await;
            if let LaunchError::ExitedEarly {
                status,
                stderr_tail,
                ..
            } = &error
            {
                self.exited(Ok(ExitInfo {
                    status: *status,
                    stopped: byre_transport::Stopped::AlreadyExited,
                    stderr_tail: stderr_tail.clone(),
                }));
            }
            // Nothing was read, so `initialize` cannot have been answered.
            self.set_ready(Err(Error::Launch(error.to_string())));
            error.to_string()
        } else {
            let exit = process.shutdown().await;
            let why = match &exit {
                Ok(info) => format!("{}; stderr: {}", info.status, info.stderr_tail.trim()),
                Err(e) => e.to_string(),
            };
            self.exited(exit.map_err(|e| e.to_string()));
            why
        };
        self.writer = None;
        self.running.abort_all();
        self.running_ids.clear();
        self.session.handle_exit(why.clone());
        self.shared.lock().expect("shared state").ended = Some(why.clone());
        // An `initialize` still waiting fails as a request the exit ended.
        self.take_events();
        self.set_ready(Err(Error::Launch(why.clone())));
        let waiters = std::mem::take(&mut self.exit_waiters);
        for waiter in waiters {
            let _ = waiter.send(self.exit.clone().ok_or_else(|| Error::Closed(why.clone())));
        }
        if let Some(t) = &mut self.transcript {
            let _ = t.flush();
        }
    }

    /// Records how the CLI ended: in the transcript, and for [`Claude::wait`].
    fn exited(&mut self, exit: Result<ExitInfo, String>) {
        match exit {
            Ok(info) => {
                let how = match info.stopped {
                    byre_transport::Stopped::Terminated => " (after SIGTERM)",
                    byre_transport::Stopped::Killed => " (after SIGKILL)",
                    _ => "",
                };
                self.note(&format!("exited: {}{how}", info.status));
                tracing::info!(status = %info.status, stopped = ?info.stopped, "the CLI exited");
                self.exit = Some(info);
            }
            Err(why) => {
                tracing::warn!(%why, "could not wait for the CLI");
                self.note(&format!("could not wait for the CLI: {why}"));
            }
        }
    }

    /// Answers `initialize`'s waiters, the first time only.
    fn set_ready(&self, result: Result<(), Error>) {
        self.ready.send_if_modified(|ready| {
            if ready.is_some() {
                return false;
            }
            *ready = Some(result);
            true
        });
    }

    fn note(&mut self, text: &str) {
        if let Some(t) = &mut self.transcript {
            let _ = t.record_note(text);
        }
    }

    /// Carries out a command that does not involve the session core.
    async fn direct(&mut self, command: Direct) {
        match command {
            Direct::SendRaw(line) => {
                // Everything sent before it is written first.
                self.flush_transmit().await;
                if let Some(t) = &mut self.transcript {
                    let _ = t.record_raw(&line);
                }
                if self.writer.is_none() {
                    self.note("stdin is closed: the raw line was not written");
                    return;
                }
                let mut bytes = line;
                bytes.push(b'\n');
                self.write_line(&bytes).await;
            }
            Direct::Note(text) => self.note(&text),
            Direct::EndInput => {
                if self.hooks.is_empty() && self.handlers.is_empty() && self.mcp.is_empty() {
                    self.close_stdin().await;
                } else {
                    // The CLI may still ask a hook, a permission or an MCP tool: keep stdin
                    // open until the run is idle (checked at the top of the loop).
                    self.end_input_when_idle = true;
                }
            }
            Direct::Wait(reply) => {
                if let Some(exit) = &self.exit {
                    let _ = reply.send(Ok(exit.clone()));
                } else if self.process.is_none() {
                    let ended = self.shared.lock().expect("shared state").ended.clone();
                    let _ = reply.send(Err(Error::Closed(ended.unwrap_or_default())));
                } else {
                    self.exit_waiters.push(reply);
                }
            }
            Direct::ServeMcp(name, factory) => {
                self.session.serve_mcp_server(&name);
                self.mcp.insert(name, factory(self.outbox.clone()));
            }
            Direct::ForgetMcp(name) => {
                self.session.forget_mcp_server(&name);
                self.mcp.remove(&name);
            }
        }
    }

    /// Writes what is still to be sent, then closes stdin.
    async fn close_stdin(&mut self) {
        self.flush_transmit().await;
        if let Some(mut stdin) = self.writer.take() {
            let _ = stdin.shutdown().await;
            drop(stdin);
            self.note("stdin closed");
        }
    }

    async fn shutdown(&mut self) -> Result<ExitInfo, Error> {
        self.close_stdin().await;
        let process = self.process.take();
        let result = match process {
            Some(process) => {
                // Read what the CLI still writes while it exits (so it never blocks on a full
                // pipe), and deliver it: every line up to the exit reaches the stream.
                let shutdown = process.shutdown();
                tokio::pin!(shutdown);
                let mut reading = true;
                let exit = loop {
                    tokio::select! {
                        exit = &mut shutdown => break exit,
                        lines = self.reader.next(), if reading => match lines {
                            Some(lines) => self.on_lines(lines),
                            None => reading = false,
                        },
                    }
                };
                while reading {
                    match self.reader.next().await {
                        Some(lines) => self.on_lines(lines),
                        None => reading = false,
                    }
                }
                self.exited(exit.as_ref().cloned().map_err(|e| e.to_string()));
                exit.map_err(|e| Error::Closed(e.to_string()))
            }
            None if self.exit.is_some() => Ok(self.exit.clone().expect("checked")),
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
        for waiter in std::mem::take(&mut self.exit_waiters) {
            let _ = waiter.send(result.clone());
        }
        self.take_events();
        // A consumer that stopped reading must not make `close` wait forever: the last events
        // go in over the queue's capacity.
        self.events.push_all(&mut self.pending_events);
        if let Some(t) = &mut self.transcript {
            let _ = t.flush();
        }
        result
    }
}
