//! The driver loop: one task that owns the process and the session core, and moves bytes,
//! time and handler calls between them.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use byre_proto::{CliRequest, RawJson};
use byre_transport::{CliProcess, ExitInfo, Frame, LaunchError, TranscriptWriter};
use serde_json::Value;
use tokio::io::AsyncWriteExt;
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::JoinSet;

use super::claude::{Command, Direct, Ready, Shared};
use super::error::Error;
use super::options::{HookHandler, Outbox, RequestHandler};
use super::{queue, reader};
use crate::correlation::RequestId;
use crate::session::{Event, Session};

/// What one turn of the driver loop found (a short-lived value: its size does not matter).
#[allow(clippy::large_enum_variant)]
pub(super) enum Step {
    Lines(Option<Vec<reader::Line>>),
    Delivered,
    NoListener,
    Command(Option<Command>),
    Handled(Result<(RequestId, Result<Value, String>), tokio::task::JoinError>),
    Timeout,
}

pub(super) struct Driver {
    pub(super) session: Session,
    pub(super) process: Option<CliProcess>,
    pub(super) reader: reader::Reader,
    /// The CLI's stdin, while it is open.
    pub(super) writer: Option<tokio::process::ChildStdin>,
    pub(super) events: queue::Producer<Event>,
    /// Events taken from the core and not yet handed to the stream.
    pub(super) pending_events: std::collections::VecDeque<Event>,
    pub(super) commands: mpsc::UnboundedReceiver<Command>,
    pub(super) hooks: HashMap<String, HookHandler>,
    pub(super) handlers: HashMap<&'static str, RequestHandler>,
    /// The in-process MCP servers, by name.
    pub(super) mcp: HashMap<String, RequestHandler>,
    /// What their handlers send host requests through.
    pub(super) outbox: Outbox,
    pub(super) running: JoinSet<(RequestId, Result<Value, String>)>,
    pub(super) running_ids: HashMap<RequestId, tokio::task::AbortHandle>,
    pub(super) waiting: HashMap<RequestId, oneshot::Sender<Result<Option<RawJson>, Error>>>,
    pub(super) shared: Arc<Mutex<Shared>>,
    pub(super) transcript: Option<TranscriptWriter>,
    pub(super) ready: watch::Sender<Ready>,
    pub(super) lines_read: u64,
    /// A `result` the CLI wrote before answering `initialize` (a start-up failure).
    pub(super) early_result: Option<Box<byre_proto::ResultMessage>>,
    /// The session being resumed, to name it when the CLI does not have it.
    pub(super) resume: Option<String>,
    /// How the CLI ended, once it has.
    pub(super) exit: Option<ExitInfo>,
    /// [`Claude::wait`] calls waiting for the exit.
    pub(super) exit_waiters: Vec<oneshot::Sender<Result<ExitInfo, Error>>>,
    /// [`Claude::end_input`] was called while the host serves the CLI's requests: stdin closes
    /// once the run is idle and no handler runs.
    pub(super) end_input_when_idle: bool,
    /// How long a handler may take ([`Options::handler_timeout`]).
    pub(super) handler_timeout: Option<Duration>,
    /// The span of the running turn: host requests sent during it are its children.
    pub(super) turn_span: Option<tracing::Span>,
    /// The span of each host request in flight, and when it was sent.
    pub(super) request_spans: HashMap<RequestId, (tracing::Span, Instant)>,
}

impl Driver {
    pub(super) async fn run(mut self) {
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
                if let byre_proto::CliMessage::Result(result) = &message {
                    if !self.session.is_initialized() {
                        self.early_result = Some(result.clone());
                    }
                }
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
            let why = error.to_string();
            self.set_ready(Err(error.into()));
            why
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
        if let Some(result) = self.early_result.take() {
            // The CLI refused to start and said why in an error result.
            let message = result
                .errors
                .as_ref()
                .filter(|e| !e.is_empty())
                .map(|e| e.join("; "))
                .unwrap_or_else(|| why.clone());
            self.set_ready(Err(match &self.resume {
                Some(session_id) if result.is_error == Some(true) => Error::UnknownSession {
                    session_id: session_id.clone(),
                    message,
                },
                _ => Error::StartFailed {
                    message,
                    result: Some(result),
                },
            }));
        }
        self.session.handle_exit(why.clone());
        self.shared.lock().expect("shared state").ended = Some(why.clone());
        // An `initialize` still waiting fails as a request the exit ended.
        self.take_events();
        self.set_ready(Err(Error::StartFailed {
            message: why.clone(),
            result: None,
        }));
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
