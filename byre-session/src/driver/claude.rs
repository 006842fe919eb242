//! The public handle ([`Claude`]) and the [`Events`] stream.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use byre_proto::{
    ControlRequestBody, HookEvent, HookMatcher, HostRequest, InitializeResponse, RawJson,
    UserMessage,
};
use byre_transport::{CliProcess, ExitInfo, TranscriptWriter};
use futures::Stream;
use serde_json::{Map, Value};
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::JoinSet;

use super::applied::Sent;
use super::commands::{Command, Direct, McpHandlerFactory, Outbox, Ready, Shared};
use super::error::Error;
use super::handlers::HookHandler;
use super::limits::Limits;
use super::options::{launch_note, route_questions, Options};
use super::phase::Phase;
use super::run::Driver;
use super::unwritten::{Backlog, StoreBacklog, Transcript};
use super::{queue, reader};
use crate::session::{Event, Session, SessionConfig};

/// The session handle: cheap to clone, usable from any task (`&self` methods): one task can
/// stream events while another interrupts or switches model.
///
/// [`Claude::start`] starts the CLI and gives the handle with its [`Events`]; the session
/// ends with [`close`](Claude::close), or when every handle and the events are dropped.
///
/// ```no_run
/// use std::time::Duration;
/// use byre_session::{Claude, Options, TurnError};
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let (claude, mut events) = Claude::start(Options::new()).await?;
/// claude.send("Count to a thousand, one number a line.")?;
/// // Another task interrupts the turn after a second.
/// let handle = claude.clone();
/// tokio::spawn(async move {
///     tokio::time::sleep(Duration::from_secs(1)).await;
///     handle.interrupt().await
/// });
/// match events.turn().finish().await {
///     Err(TurnError::Interrupted { .. }) => println!("interrupted"),
///     other => println!("{:?}", other.map(|output| output.text)),
/// }
/// claude.set_model(Some("claude-haiku-4-5")).await?; // the session goes on
/// claude.close().await?;
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct Claude {
    pub(super) commands: mpsc::UnboundedSender<Command>,
    pub(super) shared: Arc<Mutex<Shared>>,
    pub(super) ready: watch::Receiver<Ready>,
    /// The MCP servers of the session that `mcp_set_servers` replaces, as last declared to the
    /// CLI (`--mcp-config`, then each change); the lock makes changes one at a time.
    pub(super) mcp_set: Arc<tokio::sync::Mutex<Map<String, Value>>>,
    /// What `initialize` carried that the CLI must say it applied.
    pub(super) sent: Arc<Sent>,
    /// The session's transcript file, if it keeps one.
    pub(super) transcript_path: Option<Arc<std::path::PathBuf>>,
    /// The limits it shares with other sessions.
    pub(super) limits: Option<Limits>,
    /// Every prompt is sent as written ([`Options::verbatim_prompts`]).
    pub(super) verbatim: bool,
    /// What waits for the session store, when there is one.
    pub(super) store_backlog: Option<Arc<Backlog>>,
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

/// The events of a session, in order, as a `Stream`. Dropping it does not stop the session;
/// a consumer that stops reading pauses reading from the CLI. The stream ends when the CLI has
/// exited and every event before its exit has been delivered, or after [`Claude::close`].
#[derive(Debug)]
pub struct Events {
    pub(super) rx: queue::Consumer<Event>,
    /// The session's state, for why the stream ended.
    pub(super) shared: Arc<Mutex<Shared>>,
    /// Whether [`Event::Initialized`] went by: a `result` before it answers no prompt.
    pub(super) initialized: bool,
    /// For [`Turn::interrupt_when`](super::Turn::interrupt_when); keeps no session alive.
    pub(super) outbox: Outbox,
}

impl Events {
    /// Whether `event` is a turn's `result`: a `result` line after the `initialize` answer
    /// (one before it answers no prompt; see [`Event::Message`]).
    pub(super) fn ends_turn(&self, event: &Event) -> bool {
        self.initialized && matches!(event, Event::Message(byre_proto::CliMessage::Result(_)))
    }
}

impl Stream for Events {
    type Item = Event;
    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Event>> {
        let next = self.rx.poll_next(cx);
        if !self.initialized {
            self.initialized = matches!(&next, Poll::Ready(Some(Event::Initialized(_))));
        }
        next
    }
}

impl Claude {
    /// Starts the CLI, sends `initialize` and waits for its answer.
    pub async fn start(options: Options) -> Result<(Claude, Events), Error> {
        let (claude, events) = Claude::spawn(options).await?;
        if let Err(e) = claude.initialized().await {
            // Nothing may run on options the CLI cannot honour.
            let _ = claude.close().await;
            return Err(e);
        }
        Ok((claude, events))
    }

    /// Starts the CLI and sends `initialize` without waiting for its answer:
    /// [`Claude::initialized`] waits for it. Prompts and requests may be sent at once; they
    /// are written after `initialize`. When the CLI fails at start-up (a `--resume` of an
    /// unknown session writes an error `result` and exits), the events still hold what it
    /// wrote and [`Claude::wait`] says how it exited.
    pub async fn spawn(options: Options) -> Result<(Claude, Events), Error> {
        let mut options = options;
        options.settle_permissions()?;
        let limits = options.limits.clone();
        if let Some(limits) = &limits {
            if let Some((spent, budget)) = limits.spent_budget() {
                return Err(Error::BudgetSpent { spent, budget });
            }
            // What is left of the shared budget is the most this CLI may spend.
            if let Some(left) = limits.remaining_usd() {
                let own = options.launch.max_budget_usd.unwrap_or(f64::INFINITY);
                options.launch.max_budget_usd = Some(own.min(left));
            }
        }
        options.read_files().map_err(Error::InvalidInput)?;
        let fail_closed_hook = options.has_fail_closed_hook();
        let mut initialize = options.initialize.clone();
        // Settings, MCP servers, subagents and system prompts go over stdin, not on argv.
        options
            .launch
            .fill_initialize(&mut initialize)
            .map_err(|e| Error::InvalidInput(format!("the subagent definitions: {e}")))?;
        let mut hooks: std::collections::BTreeMap<HookEvent, Vec<HookMatcher>> = Default::default();
        let mut hook_handlers: HashMap<String, HookHandler> = HashMap::new();
        for (n, (hook, handler)) in options.hooks.iter().enumerate() {
            let id = format!("hook_{n}");
            hooks
                .entry(hook.event.clone())
                .or_default()
                .push(hook.registration(id.clone()));
            hook_handlers.insert(id, handler.clone());
        }
        if !hooks.is_empty() {
            initialize.hooks = Some(hooks);
        }
        // Created first, so that its times count from the start of the process.
        let transcript_path = options.transcript_path();
        let mut transcript = match &transcript_path {
            Some(path) => Some(Transcript::new(
                TranscriptWriter::create(path)
                    .map_err(|e| Error::Transcript {
                        path: path.clone(),
                        source: Arc::new(e),
                    })?
                    .keep_stream_events(options.transcript_stream_events),
                path,
            )),
            None => None,
        };
        let mcp_set = match options.launch.mcp_config() {
            Some(Value::Object(mut config)) => match config.remove("mcpServers") {
                Some(Value::Object(servers)) => servers,
                _ => Map::new(),
            },
            _ => Map::new(),
        };
        // Before the CLI starts: a resume from a store loads the session first.
        let store = super::store::prepare(&mut options).await?;
        if let (Some(store), false) = (&options.store, options.pass_store_credentials) {
            let held_back = store.credential_vars();
            options.launch.env_remove.extend(held_back);
        }
        if let Some(t) = &mut transcript {
            for secret in options.secrets() {
                t.secret(&secret);
            }
        }
        let spawner = options
            .spawn
            .clone()
            .unwrap_or_else(|| Arc::new(byre_transport::Local));
        let mut process_options = options.process.clone();
        // A scratch config holds a copy of the sign-in: the watchdog removes it if this
        // process dies without removing it itself.
        if let Some(scratch) = store.as_ref().and_then(|run| run.scratch.as_ref()) {
            (process_options.watchdog_removes).push(scratch.config_dir().to_path_buf());
        }
        // Everything the driver does happens inside the session's span: its turns, control
        // requests both ways, the exit. The CLI's own trace, with `otel`, is its child.
        let span = tracing::info_span!(
            "byre_session",
            pid = tracing::field::Empty,
            session_id = tracing::field::Empty,
        );
        #[cfg(feature = "otel")]
        super::trace::propagate(&span, &mut options.launch);
        let mut process = CliProcess::start(&*spawner, &options.launch, process_options)
            .await
            .map_err(Error::from)?;
        if let (Some(t), true) = (&mut transcript, options.transcript_launch) {
            t.note(&launch_note(process.argv()));
            let cwd = match &options.launch.cwd {
                Some(cwd) => cwd.clone(),
                None => std::env::current_dir().unwrap_or_default(),
            };
            t.note(&format!("cwd: {}", cwd.display()));
        }
        if let Some(questions) = options.questions.take() {
            let permissions = options.handlers.remove("can_use_tool");
            options
                .handlers
                .insert("can_use_tool", route_questions(questions, permissions));
        }
        let sent = Arc::new(Sent::of(&initialize, fail_closed_hook));
        let mut config = SessionConfig::new(initialize);
        config.mcp_servers.extend(options.mcp_servers.drain(..));
        config
            .answers
            .extend(options.handlers.keys().map(|subtype| subtype.to_string()));
        if options.any_cli_version {
            config.oldest_cli = None;
        }
        config.mirror = store.as_ref().map(|run| run.config.clone());
        config.stall = options.stall;
        if let Some(timeout) = options.request_timeout {
            config.initialize_timeout = timeout;
            config.request_timeout = timeout;
        }
        let stdout = process
            .take_stdout()
            .ok_or_else(|| Error::Closed("the CLI's stdout is not piped".into()))?;
        let stdin = process
            .take_stdin()
            .ok_or_else(|| Error::Closed("the CLI's stdin is not piped".into()))?;
        // With a transcript, each line's bytes are kept so they are recorded as read.
        let max_line = options.max_line.unwrap_or(byre_transport::DEFAULT_MAX_LINE);
        let keep_lines = transcript.is_some();
        let budget = Arc::new(queue::Budget::default());
        let capacity = options.event_buffer.unwrap_or(256);
        let (events_tx, events_rx) = queue::queue(capacity, budget.clone());
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
        let store_backlog = store.as_ref().map(|run| run.worker.progress());
        let (ready_tx, ready_rx) = watch::channel(None);
        let (writer, writer_task) = super::writer::Writer::spawn(stdin);
        let mut session = Session::with_data(config, Instant::now());
        if let Some(found) = store.as_ref().and_then(|run| run.scratch.as_ref()) {
            session.stored_lines_skipped(found.skipped().iter().map(|l| l.to_string()).collect());
        }
        let driver = Driver {
            session,
            phase: Phase::Running { exited: None },
            process: Some(process),
            reader: reader::Reader::spawn(stdout, max_line, keep_lines, budget),
            writer: Some(writer),
            writer_task,
            events: events_tx,
            seen: 0,
            commands: commands_rx,
            hooks: hook_handlers,
            handlers,
            mcp,
            outbox: outbox.clone(),
            running: JoinSet::new(),
            running_ids: HashMap::new(),
            shared: shared.clone(),
            transcript,
            ready: ready_tx,
            lines_read: 0,
            resume: options.launch.resume.clone(),
            exit: None,
            exit_waiters: Vec::new(),
            handler_timeout: options.handler_timeout,
            exit_grace: options.process.exit_grace,
            turn_span: None,
            tool_spans: Default::default(),
            init_span: None,
            store,
            governor: limits.clone().map(super::governor::Governor::new),
        };
        span.record("pid", driver.process.as_ref().map(CliProcess::pid));
        tokio::spawn(tracing::Instrument::instrument(driver.run(), span));
        let claude = Claude {
            commands,
            shared,
            ready: ready_rx,
            mcp_set: Arc::new(tokio::sync::Mutex::new(mcp_set)),
            sent,
            transcript_path: transcript_path.map(Arc::new),
            limits: limits.clone(),
            verbatim: options.verbatim_prompts,
            store_backlog,
        };
        let events = Events {
            rx: events_rx,
            shared: claude.shared.clone(),
            initialized: false,
            outbox,
        };
        Ok((claude, events))
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
            Some(Ok(())) => {
                let response = self
                    .initialize_response()
                    .ok_or_else(|| Error::Closed(self.ended()))?;
                self.sent.check(&response)?;
                Ok(response)
            }
            Some(Err(e)) => Err(e),
            None => Err(Error::Closed(self.ended())),
        }
    }

    /// Sends a prompt.
    pub fn send(&self, prompt: impl Into<String>) -> Result<(), Error> {
        self.send_message(UserMessage::prompt(prompt.into()))
    }

    /// Sends a user message (with images, a uuid, ...).
    pub fn send_message(&self, mut message: UserMessage) -> Result<(), Error> {
        self.check_input()?;
        if let Some((spent, budget)) = self.limits.as_ref().and_then(Limits::spent_budget) {
            return Err(Error::BudgetSpent { spent, budget });
        }
        if self.verbatim && message.client_composed.is_none() {
            message.client_composed = Some(true);
        }
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

    /// Waits for the CLI to exit by itself, and returns how it ended (at once when it has;
    /// [`Error::InputClosed`] when it closed its stdin while it ran and was stopped for it).
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
    /// sends the servers declared at launch
    /// ([`Launch::mcp_servers`](byre_transport::Launch::mcp_servers), in-process ones
    /// included) and those added since, with this one. The CLI's answer says what it added and
    /// which servers failed to start (`errors`; such a server stays in the set, with status
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
                        "the session has no MCP server named {name:?} declared at launch or \
                         added since"
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
        if let Some(failure) = &shared.failure {
            return Err(failure.clone());
        }
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

    /// Sends the session's `initialize` request again (hooks and in-process MCP servers are
    /// registered again) and returns the fresh answer, which [`Claude::initialize_response`]
    /// then gives. The CLI's requests still waiting that the answer lists (permission prompts,
    /// user dialogs, elicitations) reach their handlers unless they are in flight already or
    /// were answered: after a gap in the transport (a spawner that re-attaches to a running
    /// CLI), nothing the CLI waits for is lost. A handler should be idempotent per request id.
    pub async fn reinitialize(&self) -> Result<Arc<InitializeResponse>, Error> {
        self.check_input()?;
        let (tx, rx) = oneshot::channel();
        self.commands
            .send(Command::Reinitialize(None, tx))
            .map_err(|_| Error::Closed(self.ended()))?;
        let payload = rx.await.map_err(|_| Error::Closed(self.ended()))??;
        let decoded = match &payload {
            Some(raw) => raw.parse::<InitializeResponse>(),
            None => serde_json::from_str("{}"),
        };
        let response = Arc::new(decoded.map_err(|e| Error::BadAnswer {
            subtype: "initialize".into(),
            message: e.to_string(),
        })?);
        self.shared.lock().expect("shared state").initialized = Some(response.clone());
        Ok(response)
    }

    /// The file the session's transcript is written to, if it keeps one
    /// ([`Options::transcript`], [`Options::transcripts_in`]).
    pub fn transcript_path(&self) -> Option<&std::path::Path> {
        self.transcript_path.as_deref().map(|p| p.as_path())
    }

    /// The `initialize` answer (the latest, after [`Claude::reinitialize`]).
    pub fn initialize_response(&self) -> Option<Arc<InitializeResponse>> {
        self.shared
            .lock()
            .expect("shared state")
            .initialized
            .clone()
    }

    /// Closes stdin and shuts the CLI down (grace period, then SIGTERM, then SIGKILL), and
    /// returns how it ended; when it has already exited by itself, just how it ended; when it
    /// closed its stdin while it ran (it was stopped then), [`Error::InputClosed`]. A
    /// [`Claude::terminate`] while the grace runs ends it at once.
    pub async fn close(&self) -> Result<ExitInfo, Error> {
        let (tx, rx) = oneshot::channel();
        self.commands
            .send(Command::Close(tx, false))
            .map_err(|_| Error::Closed(self.ended()))?;
        rx.await.map_err(|_| Error::Closed(self.ended()))?
    }

    /// Stops the CLI now: closes stdin and sends SIGTERM to its process group without waiting
    /// for it to finish its turn, then SIGKILL after the term grace; returns how it ended. For
    /// a host that is itself being stopped (SIGTERM, SIGHUP): [`Claude::close`] lets the CLI
    /// finish its turn and flush its session file first. A close already waiting out its
    /// grace is cut short: both return the same end.
    pub async fn terminate(&self) -> Result<ExitInfo, Error> {
        let (tx, rx) = oneshot::channel();
        self.commands
            .send(Command::Close(tx, true))
            .map_err(|_| Error::Closed(self.ended()))?;
        rx.await.map_err(|_| Error::Closed(self.ended()))?
    }

    /// What waits for the session store: entries handed to it and not yet stored or failed
    /// (`None` without a store). A close waits for them (at most 120 s, then reports what
    /// did not get there); a program can show this meanwhile, as `byre run` does.
    pub fn store_backlog(&self) -> Option<StoreBacklog> {
        self.store_backlog.as_ref().map(|b| b.now())
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
