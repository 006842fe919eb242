//! The sans-IO session: the handshake and the control channel in both directions, composed
//! with turn tracking, partial-message assembly and the task tree.

use std::collections::{BTreeSet, VecDeque};
use std::time::{Duration, Instant};

use byre_proto::{
    CliMessage, ControlResponse, ControlResponseBody, Decoded, HostMessage, HostRequest,
    InitializeResponse, ResultMessage, UserMessage,
};

use crate::assembly::Assembler;
use crate::correlation::{Pending, RequestId, RequestTable};
use crate::tasks::TaskTree;
use crate::turns::{TurnEvent, TurnTracker};

mod answers;
mod config;
mod mirror;
mod outputs;
mod pending;
mod requests;
mod stall;
mod versions;

pub use self::config::SessionConfig;
pub use self::mirror::{MirrorBatch, MirrorConfig, MirrorFlush, StoreLoss, STORE_LOSS_KEYS};
use self::outputs::AsEvents;
pub use self::outputs::{
    Action, Answer, CallError, Event, ProtocolViolation, RequestFailure, StartFailure,
};
pub use self::stall::StallPolicy;
pub use self::versions::{CliSupport, NEWEST_TESTED_CLI, OLDEST_SUPPORTED_CLI};

/// Where a session is.
#[derive(Debug, Clone, PartialEq)]
enum State {
    /// `initialize` is sent; its answer has not come.
    Starting,
    /// The answer came.
    Ready,
    /// It never will: the start failed.
    Failed,
    /// The CLI exited, or the host closed the session (why).
    Closed(String),
}

/// How far the input is from ending.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Input {
    /// Open.
    Open,
    /// The host ended it; stdin closes once the run is idle.
    Ending,
    /// [`Action::CloseStdin`] was given.
    Closed,
}

/// The sans-IO session. See the module documentation for the run-loop contract.
///
/// # The run-loop contract
///
/// A [`Session`] does no IO and reads no clock. Its methods come in three families:
///
/// - **inputs** — [`Session::handle_message`] for every message read from the CLI,
///   [`Session::handle_bad_line`] for a line that is not one,
///   [`Session::handle_timeout`] when the time given by [`Session::poll_timeout`] has come,
///   [`Session::handle_exit`] when the CLI has exited, [`Session::mirror_failed`] and
///   [`Session::transcript_failed`] when a write the driver makes for the user failed;
/// - **commands** — [`Session::send_user`], [`Session::request`], [`Session::answer`],
///   [`Session::cancel`];
/// - **outputs** — [`Session::poll_transmit`] (lines to write on the CLI's stdin, in order),
///   [`Session::poll_action`] (work for the driver: run a handler, stop one, hand a host
///   request's answer to its caller, report ready or failed, close stdin),
///   [`Session::poll_event`] (events for the user), [`Session::poll_timeout`] (the next
///   deadline).
///
/// After any input or command, drain the outputs: call `poll_transmit` until it returns `None`
/// and write each line, `poll_action` until `None` and carry out each action (writing what it
/// transmits first), `poll_event` until `None` and deliver each event, then read
/// `poll_timeout` and arm a timer. Nothing happens between calls.
///
/// The core owns every protocol rule: which CLI requests the host answers
/// ([`SessionConfig::answers`], registered hook callbacks and MCP servers; the rest get their
/// one answer here), when the start has failed ([`StartFailure`]), and when stdin may close
/// after [`Session::end_input`]. A driver only moves bytes, time and handler calls.
///
/// ```
/// use std::time::{Duration, Instant};
/// use byre_proto::{CliMessage, HostMessage, InitializeRequest};
/// use byre_session::{Event, Session, SessionConfig};
///
/// let start = Instant::now();
/// let mut session = Session::new(SessionConfig::new(InitializeRequest::default()), start);
/// // The first line to write is the initialize request.
/// let Some(HostMessage::ControlRequest(init)) = session.poll_transmit() else { unreachable!() };
/// assert_eq!(init.request_id, "req_1");
/// // The CLI answers; the session reports it ready.
/// let answer = concat!(
///     r#"{"type":"control_response","response":{"subtype":"success","#,
///     r#""request_id":"req_1","response":{"pid":1}}}"#
/// );
/// let message = CliMessage::from_slice(answer.as_bytes()).unwrap();
/// session.handle_message(start + Duration::from_millis(300), message);
/// assert!(matches!(session.poll_event(), Some(Event::Initialized(_))));
/// assert!(session.is_initialized());
/// ```
#[derive(Debug)]
pub struct Session<T = ()> {
    config: SessionConfig,
    callback_ids: BTreeSet<String>,
    requests: RequestTable<Option<T>, String>,
    read_paths: answers::ReadPaths,
    stall: stall::StallWatch,
    init_id: Option<RequestId>,
    state: State,
    input: Input,
    /// A `result` written before the `initialize` answer (a start-up failure).
    early_result: Option<Box<ResultMessage>>,
    /// Whether the host serves requests the CLI may still send after a result.
    serves_requests: bool,
    actions: VecDeque<Action<T>>,
    turns: TurnTracker,
    assembler: Assembler,
    tasks: TaskTree,
    transmit: VecDeque<HostMessage>,
    events: VecDeque<Event>,
    /// The ids of the CLI's requests answered most recently (at most [`RECENT_ANSWERS`]): a
    /// request an `initialize` answer lists as pending while its answer is on its way is not
    /// dispatched again.
    answered: VecDeque<RequestId>,
    /// The mirrored entries waiting to go out, when mirroring.
    mirror: Option<mirror::Mirror>,
    /// What did not reach the store, per transcript.
    store_lost: mirror::StoreLosses,
}

/// How many answered request ids a session remembers.
const RECENT_ANSWERS: usize = 256;

impl Session<()> {
    /// A session that starts by sending `initialize`.
    pub fn new(config: SessionConfig, now: Instant) -> Self {
        Session::with_data(config, now)
    }

    /// Sends a host request; its answer comes as [`Event::Response`] with the returned id.
    /// `timeout` defaults to the configured request timeout.
    pub fn request(
        &mut self,
        now: Instant,
        request: HostRequest,
        timeout: Option<Duration>,
    ) -> Result<RequestId, CallError> {
        self.request_with(now, request, timeout, ())
    }
}

impl<T> Session<T> {
    /// A session that starts by sending `initialize`, whose host requests carry a `T` of the
    /// driver's ([`Session::request_with`], [`Action::Answered`]).
    pub fn with_data(config: SessionConfig, now: Instant) -> Self {
        let callback_ids = config.callback_ids();
        let stall = stall::StallWatch::new(config.stall);
        let mut session = Session {
            config,
            callback_ids,
            requests: RequestTable::new(),
            read_paths: answers::ReadPaths::default(),
            stall,
            init_id: None,
            state: State::Starting,
            input: Input::Open,
            early_result: None,
            serves_requests: false,
            actions: VecDeque::new(),
            turns: TurnTracker::new(),
            assembler: Assembler::new(),
            tasks: TaskTree::new(),
            transmit: VecDeque::new(),
            events: VecDeque::new(),
            answered: VecDeque::new(),
            mirror: None,
            store_lost: mirror::StoreLosses::default(),
        };
        session.mirror = session.config.mirror.clone().map(mirror::Mirror::new);
        let init = HostRequest::Initialize(session.config.initialize.clone());
        let timeout = session.config.initialize_timeout;
        session.init_id = Some(session.send_request(now, init, Some(timeout), None));
        session
    }

    /// Whether the `initialize` answer has arrived.
    pub fn is_initialized(&self) -> bool {
        self.state == State::Ready
    }

    /// The configuration it runs with.
    pub fn config(&self) -> &SessionConfig {
        &self.config
    }

    /// Whether the session is closed (the CLI exited or the host closed it), and why.
    pub fn closed(&self) -> Option<&str> {
        match &self.state {
            State::Closed(why) => Some(why),
            _ => None,
        }
    }

    /// The session id, once the CLI has said it (at the first turn).
    pub fn session_id(&self) -> Option<&str> {
        self.turns.session_id()
    }

    /// Turn tracking.
    pub fn turns(&self) -> &TurnTracker {
        &self.turns
    }

    /// The task tree: the tasks of the current (or last) turn and every task still running;
    /// tasks that had finished when a turn ended are forgotten as the next one starts.
    pub fn tasks(&self) -> &TaskTree {
        &self.tasks
    }

    /// Partial-message assembly.
    pub fn assembler(&self) -> &Assembler {
        &self.assembler
    }

    // ----- inputs -------------------------------------------------------------------------

    /// Takes one message read from the CLI, in which everything fit the model.
    pub fn handle_message(&mut self, now: Instant, message: CliMessage) {
        self.handle_decoded(
            now,
            Decoded {
                message,
                misfits: Vec::new(),
            },
        );
    }

    /// Takes one message read from the CLI with the parts of it that did not fit the model
    /// ([`CliMessage::decode`]): they are reported ([`ProtocolViolation::Misfit`]) and the
    /// message is handled as its type says, except that a CLI request with a misfit is not
    /// handed to the host: it is answered with an error at once
    /// ([`ProtocolViolation::UndecodableRequest`]), as the host could not see all it asks.
    pub fn handle_decoded(&mut self, now: Instant, decoded: Decoded<CliMessage>) {
        self.stall.alive(now);
        let Decoded { message, misfits } = decoded;
        if !misfits.is_empty() {
            self.events
                .push_back(Event::Protocol(ProtocolViolation::Misfit {
                    kind: message.kind().to_owned(),
                    misfits: misfits.clone(),
                }));
        }
        if self.observe_mirror(&message) {
            return;
        }
        if let (CliMessage::Result(result), State::Starting) = (&message, &self.state) {
            // No turn runs before the `initialize` answer: this answers no prompt. It is the
            // reason of a start that fails (the CLI exits next), and is reported if the answer
            // comes after all. Delivered, as every line is, but to no turn.
            self.early_result = Some(result.clone());
            self.events.push_back(Event::Message(message));
            return;
        }
        match &message {
            CliMessage::ControlResponse(response) => self.on_response(response),
            CliMessage::ControlRequest(request) => {
                // Asked of the request itself (small, and rare), so that a message decoded
                // without its list of misfits cannot slip a request past this check.
                let misfits = byre_proto::FindUnknown::misfit_paths(request.as_ref());
                match misfits.is_empty() {
                    true => self.on_request(request),
                    false => self.on_misfit_request(request, &misfits),
                }
            }
            CliMessage::ControlCancelRequest(cancel) => {
                let id = RequestId::new(cancel.request_id.clone());
                if self.requests.incoming.cancel(&id).is_some() {
                    self.actions.push_back(Action::Abort { id: id.clone() });
                    self.events.push_back(Event::RequestCancelled { id });
                }
            }
            _ => {}
        }
        // The run's end follows the line that ended it, so a consumer that stops at it has
        // seen that line.
        let (idle, turns): (Vec<TurnEvent>, Vec<TurnEvent>) = self
            .turns
            .observe(&message)
            .into_iter()
            .partition(|e| matches!(e, TurnEvent::RunIdle));
        for event in &turns {
            self.tasks.on_turn(event);
        }
        for event in turns {
            self.events.push_back(Event::Turn(event));
        }
        for event in self.tasks.observe(&message) {
            self.events.push_back(Event::Task(event));
        }
        self.assembler
            .observe_cli_into(&message, &mut AsEvents(&mut self.events));
        self.events.push_back(Event::Message(message));
        for event in idle {
            self.events.push_back(Event::Turn(event));
        }
        self.check_input_end();
    }

    /// Takes a line read from the CLI that is not a message (the framing layer says why): it
    /// is reported as [`ProtocolViolation::BadLine`] and nothing else changes.
    pub fn handle_bad_line(&mut self, now: Instant, len: usize, why: impl Into<String>) {
        self.stall.alive(now);
        self.events
            .push_back(Event::Protocol(ProtocolViolation::BadLine {
                len,
                why: why.into(),
            }));
    }

    /// The transcript at `path` could not be written (`error` says why): reported as
    /// [`Event::TranscriptFailed`]. The driver calls it once, at the first failed write.
    pub fn transcript_failed(
        &mut self,
        path: impl Into<std::path::PathBuf>,
        error: impl Into<String>,
    ) {
        self.events.push_back(Event::TranscriptFailed {
            path: path.into(),
            error: error.into(),
        });
    }

    /// Takes a line over the length limit (skipped by the framing layer): reported like any
    /// bad line; before the `initialize` answer it fails the start at once
    /// ([`StartFailure::LineTooLong`]), as that answer is the longest early line.
    pub fn handle_long_line(&mut self, now: Instant, len: usize, why: impl Into<String>) {
        let why = why.into();
        if self.state == State::Starting {
            self.state = State::Failed;
            self.actions
                .push_back(Action::Ready(Err(StartFailure::LineTooLong {
                    len,
                    why: why.clone(),
                })));
        }
        self.handle_bad_line(now, len, why);
    }

    /// Fails the host requests whose deadline has passed, and reports a turn that has heard
    /// nothing from the CLI for longer than the stall policy allows (interrupting it, when
    /// the policy says so).
    pub fn handle_timeout(&mut self, now: Instant) {
        for (id, pending) in self.requests.outgoing.expired(now) {
            let waited = now.saturating_duration_since(pending.sent_at);
            self.fail(id, pending, RequestFailure::TimedOut(waited));
        }
        let waiting = self.waits_on_cli();
        if let Some((silent_for, interrupt)) = self.stall.check(now, waiting) {
            self.events.push_back(Event::Stalled { silent_for });
            if interrupt && self.state == State::Ready {
                let request = HostRequest::Interrupt(Default::default());
                let _id = self.send_request(now, request, None, None);
            }
        }
    }

    /// Whether a turn runs or waits to start, and the CLI is not waiting for the host.
    fn waits_on_cli(&self) -> bool {
        (self.turns.turn_running() || self.turns.queued_user_messages() > 0)
            && self.requests.incoming.is_empty()
    }

    /// The CLI has exited (`why`: its status and stderr tail): every request in flight fails
    /// at once, and the session is closed.
    pub fn handle_exit(&mut self, why: impl Into<String>) {
        let why = why.into();
        if self.state == State::Starting {
            if let Some(result) = self.early_result.take() {
                // The CLI said why it stopped: that is the start's failure.
                self.state = State::Failed;
                self.actions
                    .push_back(Action::Ready(Err(StartFailure::Exited {
                        why: why.clone(),
                        result,
                    })));
            }
        }
        for (id, pending) in self.requests.outgoing.fail_all() {
            self.fail(id, pending, RequestFailure::Exited(why.clone()));
        }
        // The CLI's own requests can no longer be answered: their handlers should stop.
        for (id, _) in self.requests.incoming.drain() {
            self.actions.push_back(Action::Abort { id: id.clone() });
            self.events.push_back(Event::RequestCancelled { id });
        }
        self.transmit.clear();
        self.flush_mirror();
        if !matches!(self.state, State::Closed(_)) {
            self.state = State::Closed(why);
        }
    }

    // ----- commands -----------------------------------------------------------------------

    /// Sends a user message at `now` (when the stall watch's clock starts, if nothing runs).
    pub fn send_user(&mut self, now: Instant, message: UserMessage) -> Result<(), CallError> {
        self.check_open()?;
        if !self.waits_on_cli() {
            self.stall.alive(now);
        }
        self.turns.sent_user(message.uuid.as_deref());
        self.transmit
            .push_back(HostMessage::User(Box::new(message)));
        Ok(())
    }

    /// Sends a host request carrying `data`; its answer comes as [`Event::Response`] for the
    /// user and as [`Action::Answered`] (with `data`) for the driver. `timeout` defaults to the
    /// configured request timeout.
    pub fn request_with(
        &mut self,
        now: Instant,
        request: HostRequest,
        timeout: Option<Duration>,
        data: T,
    ) -> Result<RequestId, CallError> {
        self.check_open()?;
        let timeout = Some(timeout.unwrap_or(self.config.request_timeout));
        Ok(self.send_request(now, request, timeout, Some(data)))
    }

    /// Sends the `initialize` request again on the live session (the same request: hooks and
    /// in-process servers are registered again). Its answer comes as [`Event::Response`] and
    /// [`Action::Answered`]; the CLI's requests it lists as still waiting (permission prompts,
    /// user dialogs, elicitations) that this session has not seen or has not answered are
    /// dispatched as if they had just come, and those in flight are not dispatched twice.
    pub fn reinitialize(
        &mut self,
        now: Instant,
        timeout: Option<Duration>,
        data: T,
    ) -> Result<RequestId, CallError> {
        let request = HostRequest::Initialize(self.config.initialize.clone());
        self.request_with(now, request, timeout, data)
    }

    /// Fails a host request that could not be sent (it does not encode): its caller gets
    /// `failure` at once. Returns whether it was in flight.
    pub fn abandon(&mut self, id: &RequestId, failure: RequestFailure) -> bool {
        match self.requests.outgoing.complete(id) {
            Some(pending) => {
                self.fail(id.clone(), pending, failure);
                true
            }
            None => false,
        }
    }

    /// Ends the input: nothing more will be sent but answers to the CLI's requests. Once no
    /// turn runs or waits, no background work is left and no CLI request waits for the host,
    /// [`Action::CloseStdin`] asks the driver to close stdin; when the host serves nothing the
    /// CLI could ask (`serves_requests` false), once no turn runs or waits.
    pub fn end_input(&mut self, serves_requests: bool) {
        if self.input == Input::Open {
            self.input = Input::Ending;
            self.serves_requests = serves_requests;
            self.check_input_end();
        }
    }

    /// Withdraws a host request: it fails with [`RequestFailure::Cancelled`] and the CLI is
    /// told with `control_cancel_request`. Returns whether it was in flight.
    pub fn cancel(&mut self, id: &RequestId) -> bool {
        let Some(pending) = self.requests.outgoing.cancel(id) else {
            return false;
        };
        self.transmit.push_back(HostMessage::ControlCancelRequest(
            byre_proto::ControlCancelRequest {
                request_id: id.to_string(),
                extra: Default::default(),
            },
        ));
        self.fail(id.clone(), pending, RequestFailure::Cancelled);
        true
    }

    /// Answers a CLI request that came as [`Event::Request`]: exactly one answer is sent; a
    /// request the CLI withdrew, or one already answered, is refused.
    pub fn answer(
        &mut self,
        now: Instant,
        id: &RequestId,
        answer: Answer,
    ) -> Result<(), CallError> {
        self.check_open()?;
        if self.requests.incoming.finish(id).is_none() {
            return Err(CallError::NotWaiting(id.to_string()));
        }
        self.stall.alive(now);
        self.reply(id.as_str(), answer);
        self.check_input_end();
        Ok(())
    }

    /// Starts answering `mcp_message` requests for the in-process server `name` through the
    /// host (a server added to the live session); `false` when it was served already.
    pub fn serve_mcp_server(&mut self, name: &str) -> bool {
        self.config.mcp_servers.insert(name.to_owned())
    }

    /// Stops serving the in-process server `name`: later `mcp_message` requests for it are
    /// answered with JSON-RPC `-32601`, as for any unknown server; `false` when it was not
    /// served.
    pub fn forget_mcp_server(&mut self, name: &str) -> bool {
        self.config.mcp_servers.remove(name)
    }

    // ----- outputs ------------------------------------------------------------------------

    /// The next line to write on the CLI's stdin.
    #[must_use]
    pub fn poll_transmit(&mut self) -> Option<HostMessage> {
        self.transmit.pop_front()
    }

    /// The next event for the user.
    #[must_use]
    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    /// The user's events not polled yet, for a driver that hands them over in bulk (moving
    /// them out of this queue is the same as polling them one by one).
    pub fn events_mut(&mut self) -> &mut VecDeque<Event> {
        &mut self.events
    }

    /// The next piece of work for the driver (apart from the user's events).
    #[must_use]
    pub fn poll_action(&mut self) -> Option<Action<T>> {
        self.actions.pop_front()
    }

    /// Whether host requests await the CLI's answers: a driver then reads on even while the
    /// user's events wait to be taken (within its memory bounds), so an answer behind them is
    /// not missed by a user who awaits the request in the loop that reads the events.
    #[must_use]
    pub fn awaits_answers(&self) -> bool {
        !self.requests.outgoing.is_empty()
    }

    /// When [`Session::handle_timeout`] must next be called.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        let stall = self.stall.deadline(self.waits_on_cli());
        match (self.requests.outgoing.next_deadline(), stall) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    // ----- helpers ------------------------------------------------------------------------

    /// Fails when the session is closed.
    pub fn check_open(&self) -> Result<(), CallError> {
        match self.state {
            State::Closed(_) => Err(CallError::Closed),
            _ => Ok(()),
        }
    }

    /// Gives [`Action::CloseStdin`] once the input has ended and the run is idle.
    fn check_input_end(&mut self) {
        if self.input != Input::Ending || matches!(self.state, State::Closed(_)) {
            return;
        }
        // Without anything the CLI could ask, stdin closes at once: the CLI finishes what it
        // was given by itself.
        let idle = !self.serves_requests
            || self.requests.incoming.is_empty() && self.turns.may_close_stdin(true);
        if idle {
            self.input = Input::Closed;
            self.actions.push_back(Action::CloseStdin);
        }
    }

    /// A host request failed: the user hears of it, and the driver gets its data back.
    fn fail(&mut self, id: RequestId, pending: Pending<Option<T>>, failure: RequestFailure) {
        if self.init_id.as_ref() == Some(&id) && self.state == State::Starting {
            self.state = State::Failed;
            self.actions
                .push_back(Action::Ready(Err(StartFailure::Request(failure.clone()))));
        }
        self.actions.push_back(Action::Answered {
            id: id.clone(),
            subtype: pending.subtype.clone(),
            result: Err(failure.clone()),
            data: pending.data,
        });
        self.events.push_back(Event::Response {
            id,
            subtype: pending.subtype,
            result: Err(failure),
        });
    }

    fn send_request(
        &mut self,
        now: Instant,
        request: HostRequest,
        timeout: Option<Duration>,
        data: Option<T>,
    ) -> RequestId {
        let subtype = request.tag().unwrap_or_default().to_owned();
        let id = self.requests.outgoing.register(subtype, data, now, timeout);
        let outgoing = &self.requests.outgoing;
        self.read_paths
            .sent(&id, &request, |id| outgoing.contains(id));
        self.transmit
            .push_back(HostMessage::ControlRequest(Box::new(
                request.with_id(id.as_str()),
            )));
        id
    }

    fn on_response(&mut self, response: &ControlResponse) {
        let Some(raw_id) = response.request_id() else {
            return;
        };
        let id = RequestId::new(raw_id);
        match &response.response {
            ControlResponseBody::Success(ok) => {
                if let Some(why) = self.read_paths.stale(&id, ok.response.as_ref()) {
                    let id = id.to_string();
                    let stale = ProtocolViolation::StaleAnswer { id, why };
                    self.events.push_back(Event::Protocol(stale));
                    return;
                }
            }
            _ => self.read_paths.forget(&id),
        }
        let Some(pending) = self.requests.outgoing.complete(&id) else {
            self.events
                .push_back(Event::Protocol(ProtocolViolation::UnknownResponse(
                    id.to_string(),
                )));
            return;
        };
        let result = match &response.response {
            ControlResponseBody::Success(ok) => Ok(ok.response.clone()),
            ControlResponseBody::Error(e) => Err(RequestFailure::Refused {
                message: e.error.clone().unwrap_or_default(),
                code: e.error_code.clone(),
            }),
            other => Err(RequestFailure::Refused {
                message: format!("an answer of unknown subtype {:?}", other.tag()),
                code: None,
            }),
        };
        if self.init_id.as_ref() == Some(&id) && self.state == State::Starting {
            let ready = match &result {
                Ok(payload) => {
                    let decoded = match payload {
                        Some(raw) => raw.parse::<InitializeResponse>(),
                        None => serde_json::from_str("{}"),
                    };
                    match decoded {
                        Ok(init) => match self.refuses(&init) {
                            Some(failure) => {
                                self.state = State::Failed;
                                Err(failure)
                            }
                            None => {
                                self.state = State::Ready;
                                if let Some(early) = self.early_result.take() {
                                    self.events.push_back(Event::Protocol(
                                        ProtocolViolation::ResultBeforeInitialize(early),
                                    ));
                                }
                                self.events
                                    .push_back(Event::Initialized(Box::new(init.clone())));
                                Ok(Box::new(init))
                            }
                        },
                        Err(e) => {
                            self.state = State::Failed;
                            self.events.push_back(Event::Protocol(
                                ProtocolViolation::BadInitializeAnswer(e.to_string()),
                            ));
                            Err(StartFailure::BadAnswer(e.to_string()))
                        }
                    }
                }
                Err(failure) => {
                    self.state = State::Failed;
                    Err(StartFailure::Request(failure.clone()))
                }
            };
            self.actions.push_back(Action::Ready(ready));
        }
        let redeliver = match (&response.response, pending.subtype.as_str()) {
            (ControlResponseBody::Success(ok), "initialize") if self.state == State::Ready => {
                Self::pending_requests(ok)
            }
            _ => Vec::new(),
        };
        self.actions.push_back(Action::Answered {
            id: id.clone(),
            subtype: pending.subtype.clone(),
            result: result.clone(),
            data: pending.data,
        });
        self.events.push_back(Event::Response {
            id,
            subtype: pending.subtype,
            result,
        });
        for envelope in redeliver {
            self.redeliver(envelope);
        }
    }

    /// Why the CLI that sent `init` is refused: a version older than the configured minimum.
    fn refuses(&self, init: &InitializeResponse) -> Option<StartFailure> {
        match CliSupport::of(init, self.config.oldest_cli) {
            CliSupport::TooOld(found) => Some(StartFailure::UnsupportedCli {
                found,
                oldest: self.config.oldest_cli?,
            }),
            _ => None,
        }
    }

    pub(super) fn reply(&mut self, id: &str, answer: Answer) {
        if self.answered.len() == RECENT_ANSWERS {
            self.answered.pop_front();
        }
        self.answered.push_back(RequestId::new(id));
        let response = match answer {
            Ok(payload) => ControlResponse::success(id, Some(payload)),
            Err(message) => ControlResponse::error(id, message, None),
        };
        self.transmit
            .push_back(HostMessage::ControlResponse(response));
    }
}
