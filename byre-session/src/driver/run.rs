//! The driver loop: one task that owns the process and the session core, and moves bytes,
//! time and handler calls between them.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use byre_proto::{CliMessage, HostMessage, HostRequest, RawJson};
use byre_transport::{CliProcess, ExitInfo, Frame};
use futures::FutureExt;
use serde_json::Value;
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::JoinSet;

use super::commands::{Command, Direct, Outbox, Ready, Shared};
use super::error::Error;
use super::handlers::{HookHandler, RequestHandler};
use super::phase::{Drain, Phase, StopStep};
use super::unwritten::Transcript;
use super::{queue, reader};
use crate::correlation::RequestId;
use crate::session::{
    Action, CliSupport, Event, MirrorBatch, RequestFailure, Session, StartFailure,
    NEWEST_TESTED_CLI,
};
use crate::turns::TurnEvent;

/// What one turn of the driver loop found (a short-lived value: its size does not matter).
#[allow(clippy::large_enum_variant)]
enum Step {
    Lines(Option<Vec<reader::Line>>),
    Delivered,
    NoListener,
    Command(Option<Command>),
    Handled(Result<(RequestId, Result<Value, String>), tokio::task::JoinError>),
    MirrorFailed(super::store::MirrorFailure),
    /// The CLI exited (its stdout may still be open: a process it started may hold it).
    Exited,
    /// A write to the CLI's stdin failed.
    InputClosed(super::writer::Undelivered),
    /// The stop under way moved on.
    Stop(StopStep),
    /// Prompts that waited for the shared limits may go.
    Admitted(Vec<byre_proto::UserMessage>),
    Timeout,
}

/// A `Close` command: who waits for the end, and whether without the exit grace.
pub(super) type Closing = (oneshot::Sender<Result<ExitInfo, Error>>, bool);

/// What the driver registers with each host request it sends: it comes back with the answer.
#[derive(Debug)]
pub(super) struct Waiter {
    /// Who waits for the answer.
    pub(super) reply: oneshot::Sender<Result<Option<RawJson>, Error>>,
    /// The request's span, and when it was sent.
    pub(super) span: tracing::Span,
    pub(super) sent: Instant,
}

pub(super) struct Driver {
    pub(super) session: Session<Waiter>,
    /// Where the session is on its way to its end.
    pub(super) phase: Phase,
    /// The CLI while it runs (a stop under way holds it in [`Phase::Stopping`]).
    pub(super) process: Option<CliProcess>,
    pub(super) reader: reader::Reader,
    /// The CLI's stdin, while it is open.
    pub(super) writer: Option<super::writer::Writer>,
    /// The task writing it (aborted with the driver), which says when a write failed.
    pub(super) writer_task: super::writer::WriterTask,
    pub(super) events: queue::Producer<Event>,
    /// How many events at the front of the core's queue the driver has looked at already.
    pub(super) seen: usize,
    pub(super) commands: mpsc::UnboundedReceiver<Command>,
    pub(super) hooks: HashMap<String, HookHandler>,
    pub(super) handlers: HashMap<&'static str, RequestHandler>,
    /// The in-process MCP servers, by name.
    pub(super) mcp: HashMap<String, RequestHandler>,
    /// What their handlers send host requests through.
    pub(super) outbox: Outbox,
    pub(super) running: JoinSet<(RequestId, Result<Value, String>)>,
    pub(super) running_ids: HashMap<RequestId, tokio::task::AbortHandle>,
    pub(super) shared: Arc<Mutex<Shared>>,
    pub(super) transcript: Option<Transcript>,
    pub(super) ready: watch::Sender<Ready>,
    pub(super) lines_read: u64,
    /// The session being resumed, to name it when the CLI does not have it.
    pub(super) resume: Option<String>,
    /// How the CLI ended, once it has.
    pub(super) exit: Option<ExitInfo>,
    /// [`Claude::wait`] calls waiting for the exit.
    pub(super) exit_waiters: Vec<oneshot::Sender<Result<ExitInfo, Error>>>,
    /// How long a handler may take ([`Options::handler_timeout`]).
    pub(super) handler_timeout: Option<Duration>,
    /// How long a closed CLI may take to exit by itself ([`Options::exit_grace`]).
    pub(super) exit_grace: Duration,
    /// The span of the running turn: host requests sent during it are its children.
    pub(super) turn_span: Option<tracing::Span>,
    /// The spans of the tool calls in flight.
    pub(super) tool_spans: super::spans::ToolSpans,
    /// The span of `initialize` (which the core sends), and when it went out.
    pub(super) init_span: Option<(tracing::Span, Instant)>,
    /// The session store's mirror task, and the scratch config a stored session was loaded
    /// into, when there is a store.
    pub(super) store: Option<super::store::StoreRun>,
    /// The session's part in shared limits ([`Options::limits`]).
    pub(super) governor: Option<super::governor::Governor>,
}

impl Driver {
    /// Hands the core's batches to the mirror task; one it refuses is reported at once.
    pub(super) fn mirror(&mut self, batches: Vec<MirrorBatch>) {
        for batch in batches {
            let sent = match &self.store {
                Some(run) => run.worker.send(batch),
                None => Err((batch.key, batch.entries.len(), "no session store".into())),
            };
            if let Err((key, entries, why)) = sent {
                self.session.mirror_failed(key, entries, why);
            }
        }
    }

    /// The driver loop: every source the session waits on, in one `select!`, whatever its
    /// phase; the phase says which sources are live and what each step means.
    pub(super) async fn run(mut self) {
        loop {
            if self.phase.is_running() || matches!(self.phase, Phase::Ended) {
                self.settle().await;
            } else {
                // While the CLI stops, its requests are not served: they are failed at the end.
                self.observe_events();
            }
            let pending = self.session.events_mut();
            if self.events.push_now(pending).is_err() {
                // Nobody listens: keep running for the handle's sake, drop events.
                self.events.discard(pending);
            }
            self.seen = self.seen.min(self.session.events_mut().len());
            let has_event = !self.session.events_mut().is_empty();
            let ended = matches!(self.phase, Phase::Ended);
            if ended && !has_event && !self.events.is_closed() {
                // The CLI has exited and every event is handed over: the stream ends after it.
                self.events.close();
            }
            let reading = !self.reader.is_done();
            let can_read = match self.phase {
                // Only when every event so far has been handed over, or while a request awaits
                // its answer (within the byte budget: the reader stops there).
                Phase::Running { .. } => reading && (!has_event || self.session.awaits_answers()),
                // At the consumer's pace: memory stays within the usual bounds, and a consumer
                // that stopped reading holds the CLI up until the grace periods end it.
                Phase::Stopping(_) => reading && !has_event,
                // Within the drain's bounds, whatever the consumer does.
                Phase::Draining { .. } => reading,
                Phase::Ended => false,
            };
            if let Some(drain) = self.phase.drain_mut() {
                drain.reading(can_read || !reading, Instant::now());
            }
            let running = self.phase.is_running();
            // After an end, the handle's commands are carried out until it goes away.
            let commands = running || ended || !self.commands_gone();
            let watch_exit = matches!(self.phase, Phase::Running { exited: None });
            let deadline = [
                running.then(|| self.session.poll_timeout()).flatten(),
                self.phase.deadline(),
            ]
            .into_iter()
            .flatten()
            .min();
            let sleep = async {
                match deadline {
                    Some(at) => tokio::time::sleep_until(tokio::time::Instant::from_std(at)).await,
                    None => std::future::pending().await,
                }
            };
            let (events, pending) = (&mut self.events, self.session.events_mut());
            let step = tokio::select! {
                lines = self.reader.next(), if can_read => Step::Lines(lines),
                pushed = std::future::poll_fn(|cx| events.poll_push(pending, cx)), if has_event => {
                    match pushed {
                        Ok(()) => Step::Delivered,
                        Err(_) => Step::NoListener,
                    }
                }
                command = self.commands.recv(), if commands => Step::Command(command),
                Some(done) = self.running.join_next(), if running && !self.running.is_empty() => {
                    Step::Handled(done)
                }
                Some(failed) = mirror_failure(&mut self.store), if running => {
                    Step::MirrorFailed(failed)
                }
                () = child_exit(&mut self.process), if watch_exit => Step::Exited,
                undelivered = self.writer_task.failed(), if running => {
                    Step::InputClosed(undelivered)
                }
                step = self.phase.stop_step() => Step::Stop(step),
                admitted = admitted(&mut self.governor), if running => Step::Admitted(admitted),
                () = sleep => Step::Timeout,
            };
            // The steps of a busy stream are carried out here; the rarer ones by `step`.
            match step {
                Step::Lines(Some(lines)) => self.on_lines(lines),
                Step::Delivered => self.seen = self.seen.min(self.session.events_mut().len()),
                Step::Handled(done) => self.handled(done),
                step => {
                    if self.step(step).await {
                        return;
                    }
                }
            }
        }
    }

    /// Carries out one step of the loop; returns whether the driver ends.
    async fn step(&mut self, step: Step) -> bool {
        match step {
            Step::Lines(Some(lines)) => self.on_lines(lines),
            Step::Admitted(prompts) => {
                for prompt in prompts {
                    // Not a write: the core queues it. A closed session refuses it, and the
                    // handle learns why from `ended` (send() already checked the input).
                    let _ = self.session.send_user(Instant::now(), prompt);
                }
            }
            Step::Lines(None) => match self.phase {
                Phase::Running { .. } => self.output_ended(false).await,
                Phase::Draining { .. } => return self.drained().await,
                _ => {}
            },
            Step::Exited => {
                self.phase = Phase::Running {
                    exited: Some(Drain::new(Instant::now())),
                };
                self.note("the CLI exited; reading the rest of its output");
            }
            Step::InputClosed(undelivered) => self.input_closed(undelivered).await,
            Step::Timeout => {
                let now = Instant::now();
                let over = self.phase.deadline().is_some_and(|at| now >= at);
                if over && self.phase.drain().is_some() {
                    // Lines that came as the clock ran out are read first.
                    if let Some(Some(lines)) = self.reader.next().now_or_never() {
                        self.on_lines(lines);
                        return false;
                    }
                }
                match self.phase {
                    // The CLI is gone but its stdout is still open: something it started
                    // holds it. What the CLI wrote has been read.
                    Phase::Running { exited: Some(_) } if over => {
                        self.output_ended(!self.reader.is_done()).await
                    }
                    Phase::Running { .. } => self.session.handle_timeout(now),
                    Phase::Stopping(_) if over => self.escalate(),
                    Phase::Draining { .. } if over => return self.drained().await,
                    _ => {}
                }
            }
            Step::Stop(step) => {
                self.on_stop_step(step);
                if matches!(self.phase, Phase::Draining { .. }) && self.reader.is_done() {
                    // Its output was read to the end while it stopped.
                    return self.drained().await;
                }
            }
            Step::Delivered => self.seen = self.seen.min(self.session.events_mut().len()),
            Step::NoListener => self.events.discard(self.session.events_mut()),
            Step::Command(Some(command)) => return self.on_command(command).await,
            Step::Command(None) => match self.phase {
                Phase::Running { .. } => return self.close(None, false).await,
                Phase::Ended => {
                    self.events.push_all(self.session.events_mut());
                    return true;
                }
                // The stop goes on without the handle.
                _ => {}
            },
            Step::Handled(done) => self.handled(done),
            Step::MirrorFailed((key, entries, why)) => {
                self.session.mirror_failed(key, entries, why)
            }
        }
        false
    }

    /// Carries out a command from the handle; returns whether the driver ends (a `close`
    /// after the CLI was gone).
    async fn on_command(&mut self, command: Command) -> bool {
        let stopping = matches!(self.phase, Phase::Stopping(_) | Phase::Draining { .. });
        match command {
            Command::Direct(Direct::Wait(reply)) if stopping => self.exit_waiters.push(reply),
            command if stopping => {
                if let Some((reply, now)) = self.command(command).await {
                    if now {
                        self.terminate_now();
                    }
                    self.exit_waiters.push(reply);
                }
                // What it sent cannot be written (stdin is closed): the transcript says so.
                self.flush_transmit().await;
            }
            command => {
                if let Some((reply, now)) = self.command(command).await {
                    return self.close(Some(reply), now).await;
                }
            }
        }
        false
    }

    /// Whether every handle has gone and every command it sent was taken.
    fn commands_gone(&self) -> bool {
        self.commands.is_closed() && self.commands.is_empty()
    }

    /// Carries out a command from the handle, but `Close`, which it gives back: the caller
    /// ends the session, or (while the session already stops) answers it with how it ended.
    pub(super) async fn command(&mut self, command: Command) -> Option<Closing> {
        match command {
            Command::Send(message) => {
                let message = match &mut self.governor {
                    Some(governor) => governor.admit(message),
                    None => Some(message),
                };
                if let Some(message) = message {
                    // Not a write: the core queues it. A closed session refuses it, and the
                    // handle learns why from `ended` (send() already checked the input).
                    let _ = self.session.send_user(Instant::now(), message);
                }
            }
            Command::Request(request, timeout, reply) => self.request(request, timeout, reply),
            Command::Reinitialize(timeout, reply) => {
                let initialize = self.session.config().initialize.clone();
                self.request(HostRequest::Initialize(initialize), timeout, reply)
            }
            Command::Direct(direct) => self.direct(direct).await,
            Command::Close(reply, now) => return Some((reply, now)),
        }
        None
    }

    /// Drains the core's outputs: writes what it transmits, carries out its actions and looks
    /// at the new events (for tracing and the handle's session id).
    pub(super) async fn settle(&mut self) {
        self.report_transcript();
        loop {
            self.flush_transmit().await;
            self.observe_events();
            let Some(action) = self.session.poll_action() else {
                return;
            };
            match action {
                Action::Dispatch { id, request } => self.dispatch(id, *request),
                Action::Abort { id } => {
                    if let Some(handle) = self.running_ids.remove(&id) {
                        handle.abort();
                    }
                }
                Action::Answered {
                    subtype,
                    result,
                    data,
                    ..
                } => {
                    let Some(waiter) = data else {
                        // `initialize`, which the core sent.
                        if let Some((span, sent)) = self.init_span.take() {
                            let elapsed_ms = sent.elapsed().as_secs_f64() * 1000.0;
                            span.in_scope(|| match &result {
                                Ok(_) => tracing::debug!(elapsed_ms, "answered"),
                                Err(failure) => tracing::info!(elapsed_ms, %failure, "failed"),
                            });
                        }
                        continue;
                    };
                    let elapsed_ms = waiter.sent.elapsed().as_secs_f64() * 1000.0;
                    waiter.span.in_scope(|| match &result {
                        Ok(_) => tracing::debug!(elapsed_ms, "answered"),
                        Err(failure) => tracing::info!(elapsed_ms, %failure, "failed"),
                    });
                    let unread = self.session.events_mut().len();
                    let _ = waiter.reply.send(result.map_err(|failure| match failure {
                        RequestFailure::TimedOut(after) if unread > 0 => {
                            Error::RequestBehindEvents {
                                subtype,
                                after,
                                unread,
                            }
                        }
                        failure => Error::Request { subtype, failure },
                    }));
                }
                Action::Ready(Ok(init)) => {
                    if let CliSupport::Untested(version) = CliSupport::of(&init, None) {
                        warn_untested(&version);
                    }
                    self.shared.lock().expect("shared state").initialized = Some(Arc::new(*init));
                    self.set_ready(Ok(()));
                }
                Action::Ready(Err(failure)) => {
                    let error = self.start_error(failure);
                    self.set_ready(Err(error));
                }
                Action::CloseStdin => self.close_stdin().await,
                Action::Mirror(batches) => self.mirror(batches),
            }
        }
    }

    /// The error `Claude::start` gives for a start that failed.
    fn start_error(&self, failure: StartFailure) -> Error {
        match failure {
            StartFailure::Request(RequestFailure::TimedOut(after)) => Error::InitializeTimeout {
                after,
                stderr_tail: self
                    .process
                    .as_ref()
                    .map(|p| p.stderr().text())
                    .unwrap_or_default(),
            },
            StartFailure::Request(failure) => Error::Request {
                subtype: "initialize".into(),
                failure,
            },
            StartFailure::BadAnswer(message) => Error::BadAnswer {
                subtype: "initialize".into(),
                message,
            },
            StartFailure::UnsupportedCli { found, oldest } => {
                Error::UnsupportedCli { found, oldest }
            }
            too_long @ StartFailure::LineTooLong { .. } => Error::BadAnswer {
                subtype: "initialize".into(),
                message: too_long.to_string(),
            },
            StartFailure::Exited { why, result } => {
                let message = result
                    .errors
                    .as_ref()
                    .filter(|e| !e.is_empty())
                    .map(|e| e.join("; "))
                    .unwrap_or(why);
                match &self.resume {
                    Some(session_id) if result.is_error == Some(true) => Error::UnknownSession {
                        session_id: session_id.clone(),
                        message,
                    },
                    _ => Error::StartFailed {
                        message,
                        result: Some(result),
                    },
                }
            }
        }
    }

    /// Looks at the events the core produced since the last look (they stay queued).
    pub(super) fn observe_events(&mut self) {
        let events = self.session.events_mut();
        for (at, event) in events.iter().enumerate().skip(self.seen) {
            match event {
                Event::Turn(TurnEvent::SessionId { session_id, .. }) => {
                    tracing::Span::current().record("session_id", session_id.as_str());
                    self.shared.lock().expect("shared state").session_id = Some(session_id.clone());
                }
                Event::Turn(TurnEvent::TurnStarted { turn, origin, .. }) => {
                    let session = self.shared.lock().expect("shared state").session_id.clone();
                    let span = super::spans::turn(turn.get(), origin, session.as_deref());
                    span.in_scope(|| tracing::debug!("started"));
                    self.turn_span = Some(span);
                }
                Event::Message(message) => {
                    self.tool_spans.observe(message, self.turn_span.as_ref());
                }
                Event::Turn(TurnEvent::TurnEnded { turn, outcome, .. }) => {
                    self.tool_spans.clear();
                    let span = self
                        .turn_span
                        .take()
                        .unwrap_or_else(|| super::spans::turn(turn.get(), &"unknown", None));
                    // The result that ended it follows it in the core's queue.
                    let result = events.iter().skip(at + 1).find_map(|e| match e {
                        Event::Message(CliMessage::Result(result)) => Some(result),
                        _ => None,
                    });
                    if let Some(result) = result {
                        super::spans::record_result(&span, result);
                    }
                    span.in_scope(|| {
                        let is_error = outcome.is_error;
                        tracing::info!(subtype = %outcome.subtype, is_error, "ended")
                    });
                }
                Event::Protocol(problem) => tracing::warn!(%problem, "the CLI broke the protocol"),
                _ => {}
            }
        }
        self.seen = events.len();
    }

    /// Takes a batch of lines read together (one clock reading serves them all).
    pub(super) fn on_lines(&mut self, lines: Vec<reader::Line>) {
        let now = Instant::now();
        if let Some(drain) = self.phase.drain_mut() {
            drain.lines(now);
        }
        for line in lines {
            self.on_line(now, line);
        }
    }

    /// Passes one line read from the CLI to the core (and the transcript).
    fn on_line(&mut self, now: Instant, line: reader::Line) {
        match line.frame {
            Frame::Message { message, misfits } => {
                self.lines_read += 1;
                if let (Some(t), Some(bytes)) = (&mut self.transcript, &line.bytes) {
                    t.recv(bytes, &message);
                }
                if !misfits.is_empty() {
                    tracing::warn!(
                        kind = message.kind(),
                        misfits = %misfits.join("; "),
                        "parts of a line do not fit the model: kept as text"
                    );
                }
                if let Some(governor) = &mut self.governor {
                    governor.observe(&message);
                }
                let decoded = byre_proto::Decoded { message, misfits };
                self.session.handle_decoded(now, decoded);
                if let Some(governor) = &mut self.governor {
                    governor.release_if_idle(self.session.turns());
                }
                self.events.weigh(self.session.events_mut().len(), line.len);
            }
            Frame::BadLine(bad) => {
                if let Some(t) = &mut self.transcript {
                    t.note(&format!("bad line from the CLI: {bad}"));
                }
                let why = if bad.head.is_empty() {
                    bad.reason.to_string()
                } else {
                    format!("{}; it starts {:?}", bad.reason, bad.head)
                };
                if matches!(bad.reason, byre_transport::BadLineReason::TooLong { .. }) {
                    self.session.handle_long_line(now, bad.len, why);
                } else {
                    self.session.handle_bad_line(now, bad.len, why);
                }
            }
        }
    }

    pub(super) async fn flush_transmit(&mut self) {
        // The lines waiting now go out in one write; `ends` marks where each one ends.
        let mut out = Vec::new();
        let mut ends = Vec::new();
        while let Some(line) = self.session.poll_transmit() {
            if let HostMessage::ControlRequest(request) = &line {
                if request.request.tag() == Some("initialize") && self.init_span.is_none() {
                    let span = tracing::debug_span!(
                        "control_request",
                        id = %request.request_id,
                        subtype = "initialize",
                        from = "host"
                    );
                    span.in_scope(|| tracing::debug!("sent"));
                    self.init_span = Some((span, Instant::now()));
                }
            }
            // Encoded once: the same bytes go to the CLI and to the transcript.
            let bytes = match byre_transport::encode_line(&line) {
                Ok(bytes) => bytes,
                Err(e) => match self.unencodable(&line, &e.to_string()) {
                    Some(bytes) => bytes,
                    None => continue,
                },
            };
            out.extend_from_slice(&bytes);
            ends.push(out.len());
        }
        if out.is_empty() {
            return;
        }
        // Recorded as queued for the CLI, or as not sent; a write that fails later notes the
        // lines it did not write (`note_undelivered`).
        let transcript = self.transcript.is_some().then(|| out.clone());
        self.write_line(out);
        if let (Some(t), Some(out)) = (&mut self.transcript, transcript) {
            let starts = std::iter::once(0).chain(ends.iter().copied());
            for (start, end) in starts.zip(ends.iter().copied()) {
                let text = &out[start..end - 1];
                match self.writer {
                    Some(_) => t.send(text),
                    None => t.note(&format!(
                        "stdin is closed, not sent: {}",
                        String::from_utf8_lossy(text)
                    )),
                }
            }
        }
    }

    /// A line that does not encode. An answer to the CLI becomes an error answer (the request
    /// still gets its one answer); a host request fails for its caller; anything else is
    /// reported. Returns the bytes to send instead, if any.
    fn unencodable(&mut self, line: &HostMessage, why: &str) -> Option<Vec<u8>> {
        let kind = line.tag().unwrap_or("?");
        tracing::error!(%why, kind, "a line to the CLI does not encode");
        self.note(&format!("a line to the CLI does not encode: {why}"));
        match line {
            HostMessage::ControlResponse(response) => {
                let id = response.request_id()?.to_owned();
                let fallback = HostMessage::ControlResponse(byre_proto::ControlResponse::error(
                    &id,
                    format!("the host's answer does not encode: {why}"),
                    None,
                ));
                byre_transport::encode_line(&fallback).ok()
            }
            HostMessage::ControlRequest(request) => {
                let id = RequestId::new(request.request_id.clone());
                self.session
                    .abandon(&id, RequestFailure::NotSent(why.to_owned()));
                None
            }
            _ => None,
        }
    }

    /// Queues whole lines (each with its newline) for the CLI's stdin, if it is open. The
    /// writing task writes them in order; the driver does not wait for the CLI to take them.
    fn write_line(&mut self, bytes: Vec<u8>) {
        if let Some(writer) = &self.writer {
            if !writer.send(bytes) {
                // A write failed: the writing task tells the loop what it left unwritten.
                self.writer = None;
            }
        }
    }

    /// Answers `initialize`'s waiters, the first time only.
    pub(super) fn set_ready(&self, result: Result<(), Error>) {
        self.ready.send_if_modified(|ready| {
            if ready.is_some() {
                return false;
            }
            *ready = Some(result);
            true
        });
    }

    pub(super) fn note(&mut self, text: &str) {
        if let Some(t) = &mut self.transcript {
            t.note(text);
        }
    }

    /// Hands the transcript's first failed write to the core, which reports it
    /// ([`Event::TranscriptFailed`]), once.
    pub(super) fn report_transcript(&mut self) {
        if let Some((path, error)) = self.transcript.as_mut().and_then(Transcript::take_failure) {
            tracing::warn!(path = %path.display(), %error, "the transcript could not be written");
            self.session.transcript_failed(path, error);
        }
    }

    /// Writes what the transcript holds buffered, and reports a failure.
    pub(super) fn flush_transcript(&mut self) {
        if let Some(t) = &mut self.transcript {
            t.flush();
        }
        self.report_transcript();
    }

    /// Carries out a command that does not involve the session core.
    async fn direct(&mut self, command: Direct) {
        match command {
            Direct::SendRaw(line) => {
                // Everything sent before it is written first.
                self.flush_transmit().await;
                if let Some(t) = &mut self.transcript {
                    t.raw(&line);
                }
                if self.writer.is_none() {
                    self.note("stdin is closed: the raw line was not written");
                    return;
                }
                let mut bytes = line;
                bytes.push(b'\n');
                self.write_line(bytes);
            }
            Direct::Note(text) => self.note(&text),
            Direct::EndInput => {
                // The CLI may still ask a hook, a permission or an MCP tool: the core closes
                // stdin once the run is idle.
                let serves =
                    !(self.hooks.is_empty() && self.handlers.is_empty() && self.mcp.is_empty());
                self.session.end_input(serves);
            }
            Direct::Wait(reply) => {
                if self.exit.is_some() || self.process.is_none() {
                    let _ = reply.send(self.ended_result());
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
}

/// The next failure of the mirror task, if there is one (else never).
async fn mirror_failure(
    store: &mut Option<super::store::StoreRun>,
) -> Option<super::store::MirrorFailure> {
    match store {
        Some(run) => run.worker.failure().await,
        None => std::future::pending().await,
    }
}

/// Warns, once per version in this process, that the CLI is newer than byre was tested with.
fn warn_untested(version: &byre_proto::CliVersion) {
    static WARNED: Mutex<Vec<(u32, u32, u32)>> = Mutex::new(Vec::new());
    let mut warned = WARNED.lock().unwrap_or_else(|e| e.into_inner());
    if warned.contains(&version.parts) {
        return;
    }
    warned.push(version.parts);
    tracing::warn!(
        cli = %version,
        newest_tested = %NEWEST_TESTED_CLI,
        "the Claude Code CLI is newer than the newest version this byre was tested with: what \
         it adds is kept as received, but its behaviour may differ"
    );
}

/// Waits for the CLI to exit (never, once it is gone or when it cannot be waited for).
pub(super) async fn child_exit(process: &mut Option<CliProcess>) {
    if let Some(process) = process {
        if process.wait().await.is_ok() {
            return;
        }
    }
    std::future::pending().await
}

/// The prompts the shared limits admit, when some wait; pending for ever otherwise.
async fn admitted(
    governor: &mut Option<super::governor::Governor>,
) -> Vec<byre_proto::UserMessage> {
    match governor {
        Some(governor) if governor.waits() => {
            std::future::poll_fn(|cx| governor.poll_admitted(cx)).await
        }
        _ => std::future::pending().await,
    }
}
