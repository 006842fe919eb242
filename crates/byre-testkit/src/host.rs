//! The scenario host: drives one real CLI process over stdin/stdout with byre-proto types,
//! answers the CLI's control requests as the scenario says, and records a transcript.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use std::time::Duration;
//! use byre_proto::InitializeRequest;
//! use byre_testkit::{claude_bin, ClaudeEnv, Host, HostOptions};
//!
//! let env = ClaudeEnv::new("http://127.0.0.1:9")?;
//! let mut host = Host::spawn(HostOptions::new(claude_bin()?, &env)).await?;
//! host.initialize(InitializeRequest::default(), Duration::from_secs(30)).await?;
//! host.send_user("hello").await?;
//! let turn = host.until_result(Duration::from_secs(60)).await?;
//! let exit = host.wait(Duration::from_secs(30)).await?;
//! # let _ = (turn, exit);
//! # Ok(()) }
//! ```
//!
//! The host records a transcript (see [`crate::transcript`] for its format): what it wrote,
//! what the CLI wrote, and notes (the argv, `stdin closed`, the exit status).

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use byre_proto::{
    CanUseToolRequest, CliControlRequest, CliMessage, CliRequest, ControlRequestBody,
    ControlResponse, ControlResponseBody, ErrorCode, HookInput, HookOutput, HostMessage,
    HostRequest, InitializeRequest, InitializeResponse, JsonRpcMessage, McpMessageResponse,
    PermissionResult, UserMessage,
};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout};
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::env::ClaudeEnv;
use crate::transcript::{write_lines, TranscriptDir, TranscriptKind, TranscriptLine};

/// The arguments every scenario starts the CLI with; append `--model`, `--mcp-config`,
/// `--permission-prompt-tool stdio`, ... as needed.
pub fn base_args() -> Vec<String> {
    [
        "--output-format",
        "stream-json",
        "--input-format",
        "stream-json",
        "--verbose",
        "--include-partial-messages",
        "--permission-mode",
        "bypassPermissions",
        "--allow-dangerously-skip-permissions",
    ]
    .into_iter()
    .map(String::from)
    .collect()
}

/// What went wrong while driving the CLI.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    /// Nothing (or nothing matching) arrived in time.
    #[error("timed out waiting for {what}")]
    Timeout {
        /// What was awaited.
        what: String,
    },
    /// The CLI closed its stdout or stdin: it exited, or is about to.
    #[error("the CLI exited ({status}); the end of its stderr:\n{stderr_tail}")]
    Exited {
        /// Its exit status, or `still running` when it closed stdout without exiting.
        status: String,
        /// The last lines of its stderr.
        stderr_tail: String,
    },
    /// An IO error talking to the process.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The error.
        source: io::Error,
    },
    /// An answer did not have the expected shape.
    #[error("could not decode {what}: {detail}")]
    Decode {
        /// What was decoded.
        what: String,
        /// Why it failed.
        detail: String,
    },
    /// The CLI answered a request with an error.
    #[error("the CLI answered with an error: {message} (error_code {code:?})")]
    ControlError {
        /// The error text.
        message: String,
        /// The `error_code`, if any.
        code: Option<String>,
    },
}

/// A hook callback: the hook's input in, the hook's output out.
pub type HookFn = Arc<dyn Fn(&HookInput) -> HookOutput + Send + Sync>;
/// A `can_use_tool` handler.
pub type PermissionFn = Arc<dyn Fn(&CanUseToolRequest) -> PermissionResult + Send + Sync>;
/// An in-process (sdk) MCP server: a JSON-RPC message in, the response out (`None` for
/// notifications).
pub type McpServerFn = Arc<dyn Fn(&JsonRpcMessage) -> Option<JsonRpcMessage> + Send + Sync>;

/// What the host answers to the CLI's control requests.
///
/// - `hook_callback`: the callback registered under its `callback_id`;
/// - `can_use_tool`: the permission handler;
/// - `mcp_message`: the MCP server registered under `server_name`; a notification is
///   acknowledged with `{"jsonrpc":"2.0","result":{}}`.
///
/// An unknown callback, a `can_use_tool` with no handler, and any other subtype get a control
/// error. An unknown MCP server gets a success envelope holding a JSON-RPC `-32601` error.
#[derive(Clone, Default)]
pub struct Responder {
    hooks: HashMap<String, HookFn>,
    can_use_tool: Option<PermissionFn>,
    mcp_servers: HashMap<String, McpServerFn>,
}

impl fmt::Debug for Responder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut hooks: Vec<&String> = self.hooks.keys().collect();
        hooks.sort();
        let mut servers: Vec<&String> = self.mcp_servers.keys().collect();
        servers.sort();
        f.debug_struct("Responder")
            .field("hooks", &hooks)
            .field("can_use_tool", &self.can_use_tool.is_some())
            .field("mcp_servers", &servers)
            .finish()
    }
}

impl Responder {
    /// A responder that answers every request with an error.
    pub fn new() -> Self {
        Self::default()
    }

    /// Answers `hook_callback` for `callback_id` (the id given in `initialize`'s hooks).
    pub fn hook(
        mut self,
        callback_id: impl Into<String>,
        callback: impl Fn(&HookInput) -> HookOutput + Send + Sync + 'static,
    ) -> Self {
        self.hooks.insert(callback_id.into(), Arc::new(callback));
        self
    }

    /// Answers `can_use_tool`.
    pub fn can_use_tool(
        mut self,
        handler: impl Fn(&CanUseToolRequest) -> PermissionResult + Send + Sync + 'static,
    ) -> Self {
        self.can_use_tool = Some(Arc::new(handler));
        self
    }

    /// Serves the sdk MCP server `name` (see [`simple_mcp_server`]).
    pub fn mcp_server(
        mut self,
        name: impl Into<String>,
        server: impl Fn(&JsonRpcMessage) -> Option<JsonRpcMessage> + Send + Sync + 'static,
    ) -> Self {
        self.mcp_servers.insert(name.into(), Arc::new(server));
        self
    }

    /// The answer to one CLI request.
    pub fn answer(&self, request: &CliControlRequest) -> ControlResponse {
        let id = request.request_id.as_str();
        let success = |payload: Value| ControlResponse::success(id, Some(payload));
        match &request.request {
            CliRequest::HookCallback(call) => match self.hooks.get(&call.callback_id) {
                Some(callback) => success(to_value(&callback(&call.input))),
                None => ControlResponse::error(
                    id,
                    format!("no hook callback registered as {:?}", call.callback_id),
                    None,
                ),
            },
            CliRequest::CanUseTool(ask) => match &self.can_use_tool {
                Some(handler) => success(to_value(&handler(ask))),
                None => ControlResponse::error(id, "the host has no can_use_tool handler", None),
            },
            CliRequest::McpMessage(mcp) => {
                let reply = match self.mcp_servers.get(&mcp.server_name) {
                    Some(server) => {
                        server(&mcp.message).unwrap_or_else(JsonRpcMessage::notification_ack)
                    }
                    None => JsonRpcMessage::error(
                        mcp.message.id.clone(),
                        JsonRpcMessage::METHOD_NOT_FOUND,
                        format!("no MCP server named {:?}", mcp.server_name),
                    ),
                };
                success(to_value(&McpMessageResponse::new(reply)))
            }
            other => ControlResponse::error(
                id,
                format!(
                    "the scenario host does not handle {:?} requests",
                    other.tag().unwrap_or("")
                ),
                Some(ErrorCode::UNSUPPORTED_REQUEST),
            ),
        }
    }
}

fn to_value<T: serde::Serialize>(value: &T) -> Value {
    serde_json::to_value(value).expect("wire types always serialize")
}

/// One tool of a [`simple_mcp_server`].
#[derive(Clone)]
pub struct McpTool {
    /// The tool's name (the model sees `mcp__<server>__<name>`).
    pub name: String,
    /// Its description.
    pub description: String,
    /// The JSON schema of its input.
    pub input_schema: Value,
    /// Runs it: the arguments in, the text result out (`Err` gives an `isError` result).
    pub handler: Arc<dyn Fn(Value) -> Result<String, String> + Send + Sync>,
}

impl McpTool {
    /// A tool.
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        input_schema: Value,
        handler: impl Fn(Value) -> Result<String, String> + Send + Sync + 'static,
    ) -> Self {
        McpTool {
            name: name.into(),
            description: description.into(),
            input_schema,
            handler: Arc::new(handler),
        }
    }
}

impl fmt::Debug for McpTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpTool")
            .field("name", &self.name)
            .field("description", &self.description)
            .field("input_schema", &self.input_schema)
            .finish_non_exhaustive()
    }
}

/// A minimal MCP server for [`Responder::mcp_server`]: answers `initialize` (echoing the
/// client's `protocolVersion`), `ping`, `tools/list` and `tools/call` (a tool's `Err`, or an
/// unknown tool, is a result with `isError: true`); other methods get JSON-RPC `-32601`;
/// notifications get no response.
pub fn simple_mcp_server(
    name: impl Into<String>,
    tools: Vec<McpTool>,
) -> impl Fn(&JsonRpcMessage) -> Option<JsonRpcMessage> + Send + Sync + 'static {
    let name = name.into();
    move |message: &JsonRpcMessage| {
        let method = message.method.as_deref()?;
        let id = message.id.clone()?;
        let id = Some(id);
        let params = message.params.clone().unwrap_or(Value::Null);
        let text_result = |text: String, is_error: bool| {
            let mut result = json!({ "content": [{ "type": "text", "text": text }] });
            if is_error {
                result["isError"] = Value::Bool(true);
            }
            result
        };
        Some(match method {
            "initialize" => {
                let version = params
                    .get("protocolVersion")
                    .cloned()
                    .unwrap_or_else(|| json!("2025-06-18"));
                JsonRpcMessage::result(
                    id,
                    json!({
                        "protocolVersion": version,
                        "capabilities": { "tools": {} },
                        "serverInfo": { "name": name, "version": "0.1.0" },
                    }),
                )
            }
            "ping" => JsonRpcMessage::result(id, json!({})),
            "tools/list" => {
                let list: Vec<Value> = tools
                    .iter()
                    .map(|t| {
                        json!({
                            "name": t.name,
                            "description": t.description,
                            "inputSchema": t.input_schema,
                        })
                    })
                    .collect();
                JsonRpcMessage::result(id, json!({ "tools": list }))
            }
            "tools/call" => {
                let tool_name = params.get("name").and_then(Value::as_str).unwrap_or("");
                let arguments = params.get("arguments").cloned().unwrap_or(json!({}));
                let result = match tools.iter().find(|t| t.name == tool_name) {
                    Some(tool) => match (tool.handler)(arguments) {
                        Ok(text) => text_result(text, false),
                        Err(text) => text_result(text, true),
                    },
                    None => text_result(format!("unknown tool {tool_name:?}"), true),
                };
                JsonRpcMessage::result(id, result)
            }
            other => JsonRpcMessage::error(
                id,
                JsonRpcMessage::METHOD_NOT_FOUND,
                format!("method not found: {other}"),
            ),
        })
    }
}

/// How to start the CLI.
#[derive(Debug, Clone)]
pub struct HostOptions {
    /// The `claude` binary (see [`claude_bin`](crate::claude_bin)).
    pub bin: PathBuf,
    /// Its arguments; [`base_args`] by default.
    pub args: Vec<String>,
    /// Its environment and working directory. The host keeps it (and so its directories)
    /// alive as long as the process runs.
    pub env: ClaudeEnv,
    /// What to answer to the CLI's requests.
    pub responder: Responder,
    /// Where to write the transcript when the host ends (on [`Host::wait`] or drop).
    pub transcript_path: Option<PathBuf>,
}

impl HostOptions {
    /// `bin` with [`base_args`], in `env`, answering every CLI request with an error.
    pub fn new(bin: impl Into<PathBuf>, env: &ClaudeEnv) -> Self {
        HostOptions {
            bin: bin.into(),
            args: base_args(),
            env: env.clone(),
            responder: Responder::new(),
            transcript_path: None,
        }
    }

    /// Appends arguments.
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Sets the responder.
    pub fn responder(mut self, responder: Responder) -> Self {
        self.responder = responder;
        self
    }

    /// Writes the transcript to `path` when the host ends.
    pub fn transcript(mut self, path: impl Into<PathBuf>) -> Self {
        self.transcript_path = Some(path.into());
        self
    }
}

/// How the process ended, from [`Host::wait`].
#[derive(Debug)]
pub struct HostExit {
    /// Its exit status.
    pub status: ExitStatus,
    /// Everything it wrote on stderr.
    pub stderr: String,
    /// Messages that arrived but were never returned by [`Host::next`] (queued, or written
    /// after stdin was closed), in order.
    pub messages: Vec<CliMessage>,
    /// The whole transcript.
    pub transcript: Vec<TranscriptLine>,
}

/// One running CLI process, driven over stdin/stdout.
///
/// The process runs in its own process group and is killed (with its whole group) when the
/// host is dropped without [`Host::wait`], or when `wait` times out.
pub struct Host {
    child: Child,
    pid: Option<u32>,
    status: Option<ExitStatus>,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    /// The stdout line being read; kept across timeouts so no bytes are lost.
    line: Vec<u8>,
    stdout_closed: bool,
    stderr: Arc<Mutex<Vec<u8>>>,
    stderr_task: Option<JoinHandle<()>>,
    start: Instant,
    transcript: Vec<TranscriptLine>,
    transcript_path: Option<PathBuf>,
    queue: VecDeque<CliMessage>,
    responder: Responder,
    next_request: u64,
    env: ClaudeEnv,
}

impl fmt::Debug for Host {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Host")
            .field("pid", &self.pid)
            .field("status", &self.status)
            .field("queued", &self.queue.len())
            .field("transcript_lines", &self.transcript.len())
            .finish_non_exhaustive()
    }
}

impl Host {
    /// Starts the CLI with piped stdio in its own process group, and records its argv.
    pub async fn spawn(options: HostOptions) -> Result<Host, HostError> {
        let HostOptions {
            bin,
            args,
            env,
            responder,
            transcript_path,
        } = options;
        let mut cmd = tokio::process::Command::new(&bin);
        cmd.args(&args);
        env.apply(&mut cmd);
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        #[cfg(unix)]
        cmd.process_group(0);
        let start = Instant::now();
        let mut child = cmd.spawn().map_err(|source| HostError::Io {
            what: format!("could not start {}", bin.display()),
            source,
        })?;
        let pid = child.id();
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("stdout is piped");
        let mut stderr_pipe = child.stderr.take().expect("stderr is piped");
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&stderr);
        let stderr_task = tokio::spawn(async move {
            let mut chunk = vec![0u8; 8192];
            loop {
                match stderr_pipe.read(&mut chunk).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => sink
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .extend_from_slice(&chunk[..n]),
                }
            }
        });
        let mut host = Host {
            child,
            pid,
            status: None,
            stdin,
            stdout: BufReader::with_capacity(1 << 16, stdout),
            line: Vec::new(),
            stdout_closed: false,
            stderr,
            stderr_task: Some(stderr_task),
            start,
            transcript: Vec::new(),
            transcript_path,
            queue: VecDeque::new(),
            responder,
            next_request: 0,
            env,
        };
        let mut argv = vec![bin.to_string_lossy().into_owned()];
        argv.extend(args);
        host.note(format!("argv: {}", Value::from(argv)));
        host.note(format!("cwd: {}", host.env.cwd().display()));
        Ok(host)
    }

    /// The process id.
    pub fn pid(&self) -> Option<u32> {
        self.pid
    }

    /// The environment the process runs in.
    pub fn env(&self) -> &ClaudeEnv {
        &self.env
    }

    /// The responder, to change answers between steps.
    pub fn responder_mut(&mut self) -> &mut Responder {
        &mut self.responder
    }

    /// The transcript so far.
    pub fn transcript(&self) -> &[TranscriptLine] {
        &self.transcript
    }

    /// Writes the transcript so far to `path`, one JSON object per line.
    pub fn write_transcript(&self, path: impl AsRef<Path>) -> io::Result<()> {
        write_lines(path.as_ref(), &self.transcript)
    }

    /// What the process wrote on stderr so far.
    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.stderr.lock().unwrap_or_else(|e| e.into_inner())).into_owned()
    }

    /// Records a remark in the transcript.
    pub fn note(&mut self, text: impl Into<String>) {
        self.record(TranscriptDir::Note, TranscriptKind::Note, text.into());
    }

    /// Writes one message on the CLI's stdin.
    pub async fn send(&mut self, message: &HostMessage) -> Result<(), HostError> {
        let bytes = message.to_vec();
        let text = String::from_utf8_lossy(&bytes).into_owned();
        self.record(TranscriptDir::Send, TranscriptKind::Msg, text);
        self.write_line(&bytes).await
    }

    /// Sends a user prompt ([`UserMessage::prompt`]).
    pub async fn send_user(&mut self, text: impl Into<String>) -> Result<(), HostError> {
        self.send(&HostMessage::User(Box::new(UserMessage::prompt(text))))
            .await
    }

    /// Writes `bytes` and a newline as they are (for invalid input), recorded as a `raw` line.
    pub async fn send_raw(&mut self, bytes: &[u8]) -> Result<(), HostError> {
        let raw = String::from_utf8_lossy(bytes).into_owned();
        self.record(TranscriptDir::Send, TranscriptKind::Raw, raw);
        self.write_line(bytes).await
    }

    /// Closes the CLI's stdin: it finishes the current turn and exits.
    pub fn close_stdin(&mut self) {
        if self.stdin.take().is_some() {
            self.note("stdin closed");
        }
    }

    /// The next message from the CLI, waiting at most `timeout`; `None` once stdout is closed.
    ///
    /// A CLI `control_request` is answered through the [`Responder`] before it is returned.
    /// Lines that are not JSON objects are recorded as notes and skipped.
    pub async fn next(&mut self, timeout: Duration) -> Result<Option<CliMessage>, HostError> {
        if let Some(message) = self.queue.pop_front() {
            return Ok(Some(message));
        }
        match self.read_message(Instant::now() + timeout).await {
            Err(HostError::Timeout { .. }) => Err(HostError::Timeout {
                what: format!("a message from the CLI ({timeout:?})"),
            }),
            other => other,
        }
    }

    /// Collects messages until one matches `done` (included), within `timeout` in all.
    pub async fn until(
        &mut self,
        timeout: Duration,
        mut done: impl FnMut(&CliMessage) -> bool,
    ) -> Result<Vec<CliMessage>, HostError> {
        let deadline = Instant::now() + timeout;
        let mut seen = Vec::new();
        loop {
            let next = match self.queue.pop_front() {
                Some(message) => Ok(Some(message)),
                None => self.read_message(deadline).await,
            };
            match next {
                Ok(Some(message)) => {
                    let matched = done(&message);
                    seen.push(message);
                    if matched {
                        return Ok(seen);
                    }
                }
                Ok(None) => return Err(self.exited_error().await),
                Err(HostError::Timeout { .. }) => {
                    return Err(HostError::Timeout {
                        what: format!(
                            "a matching message ({timeout:?}); got {} others: {}",
                            seen.len(),
                            message_kinds(&seen)
                        ),
                    })
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Collects messages up to and including the next `result`.
    pub async fn until_result(&mut self, timeout: Duration) -> Result<Vec<CliMessage>, HostError> {
        self.until(timeout, |m| matches!(m, CliMessage::Result(_)))
            .await
    }

    /// Sends a control request with a fresh `req_N` id and waits for its answer, answering the
    /// CLI's own requests meanwhile. Other messages are queued for [`Host::next`].
    pub async fn request(
        &mut self,
        request: impl Into<HostRequest>,
        timeout: Duration,
    ) -> Result<ControlResponse, HostError> {
        let request: HostRequest = request.into();
        let subtype = request.tag().unwrap_or("").to_owned();
        self.next_request += 1;
        let id = format!("req_{}", self.next_request);
        let envelope = HostMessage::ControlRequest(Box::new(request.with_id(id.clone())));
        self.send(&envelope).await?;
        let deadline = Instant::now() + timeout;
        loop {
            match self.read_message(deadline).await {
                Ok(Some(CliMessage::ControlResponse(response)))
                    if response.request_id() == Some(id.as_str()) =>
                {
                    return Ok(response)
                }
                Ok(Some(message)) => self.queue.push_back(message),
                Ok(None) => return Err(self.exited_error().await),
                Err(HostError::Timeout { .. }) => {
                    return Err(HostError::Timeout {
                        what: format!("the answer to {subtype} ({id}, {timeout:?})"),
                    })
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Sends a typed request and decodes its success payload; an error answer is
    /// [`HostError::ControlError`].
    pub async fn call<B: ControlRequestBody>(
        &mut self,
        body: B,
        timeout: Duration,
    ) -> Result<B::Response, HostError> {
        let response = self.request(body, timeout).await?;
        let what = || format!("the answer to {}", B::SUBTYPE);
        match response.response {
            ControlResponseBody::Success(success) => {
                success.payload().map_err(|e| HostError::Decode {
                    what: what(),
                    detail: e.to_string(),
                })
            }
            ControlResponseBody::Error(error) => Err(HostError::ControlError {
                message: error.error.unwrap_or_default(),
                code: error.error_code.map(|c| c.as_str().to_owned()),
            }),
            ControlResponseBody::Unknown(unknown) => Err(HostError::Decode {
                what: what(),
                detail: format!("unknown response subtype {:?}", unknown.get_str("subtype")),
            }),
        }
    }

    /// Sends `initialize` and waits for its answer (serving `mcp_message` requests, which the
    /// CLI sends before it answers when sdk MCP servers are configured).
    pub async fn initialize(
        &mut self,
        request: InitializeRequest,
        timeout: Duration,
    ) -> Result<InitializeResponse, HostError> {
        self.call(request, timeout).await
    }

    /// Closes stdin, reads what is left on stdout, and waits for the process to exit, within
    /// `timeout` in all. On timeout the whole process group is killed.
    pub async fn wait(mut self, timeout: Duration) -> Result<HostExit, HostError> {
        self.close_stdin();
        let deadline = Instant::now() + timeout;
        let mut messages: Vec<CliMessage> = self.queue.drain(..).collect();
        loop {
            match self.read_message(deadline).await {
                Ok(Some(message)) => messages.push(message),
                Ok(None) => break,
                Err(e) => {
                    self.kill_group();
                    return Err(match e {
                        HostError::Timeout { .. } => HostError::Timeout {
                            what: format!("the CLI to exit ({timeout:?}); killed it"),
                        },
                        e => e,
                    });
                }
            }
        }
        let status = match self.status {
            Some(status) => status,
            None => match tokio::time::timeout_at(deadline, self.child.wait()).await {
                Ok(Ok(status)) => status,
                Ok(Err(source)) => {
                    self.kill_group();
                    return Err(HostError::Io {
                        what: "could not wait for the CLI".into(),
                        source,
                    });
                }
                Err(_) => {
                    self.kill_group();
                    return Err(HostError::Timeout {
                        what: format!(
                            "the CLI to exit after closing stdout ({timeout:?}); killed it"
                        ),
                    });
                }
            },
        };
        self.reaped(status);
        self.finish_stderr(deadline).await;
        let stderr = self.stderr();
        let transcript = self.transcript.clone();
        Ok(HostExit {
            status,
            stderr,
            messages,
            transcript,
        })
    }

    fn record(&mut self, dir: TranscriptDir, kind: TranscriptKind, raw: String) {
        let t = self.t();
        self.transcript.push(TranscriptLine { dir, t, kind, raw });
    }

    fn t(&self) -> f64 {
        (self.start.elapsed().as_secs_f64() * 1000.0).round() / 1000.0
    }

    async fn write_line(&mut self, bytes: &[u8]) -> Result<(), HostError> {
        let Some(stdin) = self.stdin.as_mut() else {
            return Err(HostError::Io {
                what: "cannot write to the CLI".into(),
                source: io::Error::new(io::ErrorKind::BrokenPipe, "stdin is closed"),
            });
        };
        let mut line = Vec::with_capacity(bytes.len() + 1);
        line.extend_from_slice(bytes);
        line.push(b'\n');
        let written = async {
            stdin.write_all(&line).await?;
            stdin.flush().await
        }
        .await;
        match written {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
                self.note("stdin: broken pipe");
                Err(self.exited_error().await)
            }
            Err(source) => Err(HostError::Io {
                what: "could not write to the CLI".into(),
                source,
            }),
        }
    }

    /// Reads stdout lines until one decodes as a message (answering a CLI request before
    /// returning it); `None` at EOF.
    async fn read_message(&mut self, deadline: Instant) -> Result<Option<CliMessage>, HostError> {
        loop {
            if self.stdout_closed {
                return Ok(None);
            }
            let read =
                tokio::time::timeout_at(deadline, self.stdout.read_until(b'\n', &mut self.line))
                    .await;
            let n = match read {
                Err(_) => {
                    return Err(HostError::Timeout {
                        what: "a line on stdout".into(),
                    })
                }
                Ok(Err(source)) => {
                    return Err(HostError::Io {
                        what: "could not read the CLI's stdout".into(),
                        source,
                    })
                }
                Ok(Ok(n)) => n,
            };
            if n == 0 {
                self.stdout_closed = true;
                self.note("stdout closed");
                if self.line.is_empty() {
                    return Ok(None);
                }
            }
            let line = std::mem::take(&mut self.line);
            let Some(message) = self.decode_line(&line) else {
                continue;
            };
            if let CliMessage::ControlRequest(request) = &message {
                let answer = self.responder.answer(request);
                if self.stdin.is_none() {
                    self.note(format!(
                        "cannot answer {}: stdin is closed",
                        request.request_id
                    ));
                } else if let Err(e) = self.send(&HostMessage::ControlResponse(answer)).await {
                    self.note(format!("could not answer {}: {e}", request.request_id));
                }
            }
            return Ok(Some(message));
        }
    }

    /// Records one stdout line and decodes it; `None` (with a note) for a line that is not a
    /// message.
    fn decode_line(&mut self, line: &[u8]) -> Option<CliMessage> {
        let line = line.strip_suffix(b"\n").unwrap_or(line);
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.trim_ascii().is_empty() {
            return None;
        }
        // Checked as JSON (which also checks UTF-8), then kept as the exact text.
        let text = match serde_json::from_slice::<Value>(line) {
            Ok(Value::Object(_)) => String::from_utf8_lossy(line).into_owned(),
            Ok(_) | Err(_) => {
                self.note(format!(
                    "stdout line that is not a JSON object ({} bytes): {}",
                    line.len(),
                    preview(line)
                ));
                return None;
            }
        };
        self.record(TranscriptDir::Recv, TranscriptKind::Msg, text);
        match CliMessage::from_slice(line) {
            Ok(message) => Some(message),
            Err(e) => {
                self.note(format!("not a message, skipped: {e}"));
                None
            }
        }
    }

    /// The error for a CLI that closed its pipes: waits a little for its exit status.
    async fn exited_error(&mut self) -> HostError {
        let status = match self.status {
            Some(status) => status.to_string(),
            None => match tokio::time::timeout(Duration::from_secs(5), self.child.wait()).await {
                Ok(Ok(status)) => {
                    self.reaped(status);
                    status.to_string()
                }
                _ => "still running".to_owned(),
            },
        };
        self.finish_stderr(Instant::now() + Duration::from_secs(1))
            .await;
        let stderr = self.stderr();
        let lines: Vec<&str> = stderr.trim_end().lines().collect();
        let stderr_tail = lines[lines.len().saturating_sub(20)..].join("\n");
        HostError::Exited {
            status,
            stderr_tail,
        }
    }

    /// Records the exit and kills what is left of the process group.
    fn reaped(&mut self, status: ExitStatus) {
        if self.status.is_none() {
            self.status = Some(status);
            self.note(format!("exited: {status}"));
            // Right after reaping, the group id cannot have been reused: anything still in it
            // is a descendant of the CLI.
            self.kill_group();
        }
    }

    async fn finish_stderr(&mut self, deadline: Instant) {
        if let Some(task) = self.stderr_task.as_mut() {
            let deadline = deadline.max(Instant::now() + Duration::from_millis(200));
            if tokio::time::timeout_at(deadline, task).await.is_ok() {
                self.stderr_task = None;
            }
        }
    }

    /// `kill -KILL -- -PGID`: the CLI and everything it started.
    fn kill_group(&self) {
        #[cfg(unix)]
        if let Some(pid) = self.pid {
            let _ = std::process::Command::new("kill")
                .args(["-KILL", "--", &format!("-{pid}")])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        }
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        if self.status.is_none() {
            // Still running, or exited and not yet reaped: either way the group is ours.
            self.kill_group();
            let _ = self.child.start_kill();
            if let Ok(Some(status)) = self.child.try_wait() {
                self.status = Some(status);
            }
        }
        if let Some(task) = self.stderr_task.take() {
            task.abort();
        }
        if let Some(path) = self.transcript_path.take() {
            if let Err(e) = write_lines(&path, &self.transcript) {
                eprintln!(
                    "byre-testkit: could not write the transcript {}: {e}",
                    path.display()
                );
            }
        }
    }
}

/// The first bytes of a line, for notes.
fn preview(line: &[u8]) -> String {
    const MAX: usize = 200;
    let text = String::from_utf8_lossy(&line[..line.len().min(MAX)]).into_owned();
    if line.len() > MAX {
        format!("{text}…")
    } else {
        text
    }
}

/// The kinds of the last few messages (`system/init, assistant, ...`), for timeout errors.
pub fn message_kinds(messages: &[CliMessage]) -> String {
    let start = messages.len().saturating_sub(12);
    messages[start..]
        .iter()
        .map(|m| match m {
            CliMessage::System(s) => format!("system/{}", s.tag().unwrap_or("?")),
            other => other.kind().to_owned(),
        })
        .collect::<Vec<_>>()
        .join(", ")
}
