//! What a session gives out: events for the user, actions for the driver, and why things
//! fail.

use std::time::Duration;

use byre_proto::{CliMessage, CliRequest, ErrorCode, InitializeResponse, RawJson, ResultMessage};
use serde_json::Value;

#[cfg(doc)]
use super::Session;
use crate::assembly::AssemblyEvent;
use crate::correlation::RequestId;
use crate::tasks::TaskEvent;
use crate::turns::TurnEvent;

/// Something the user hears about, in order.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Event {
    /// A turn heard nothing from the CLI for longer than the stall policy allows
    /// ([`SessionConfig::stall`](super::SessionConfig::stall)); once per silence. When the
    /// policy interrupts, the core has sent `interrupt`.
    Stalled {
        /// How long it has been silent.
        silent_for: Duration,
    },
    /// A message from the CLI (every one, control lines included, in the order read). A
    /// `result` that comes before [`Event::Initialized`] answers no prompt: no turn runs yet
    /// (it is the CLI's reason for a start that fails; if the `initialize` answer comes after
    /// all, [`ProtocolViolation::ResultBeforeInitialize`] reports it).
    Message(CliMessage),
    /// The answer to `initialize`.
    Initialized(Box<InitializeResponse>),
    /// The answer to a host request.
    Response {
        /// The request.
        id: RequestId,
        /// Its subtype.
        subtype: String,
        /// Its payload, or why it failed.
        result: Result<Option<RawJson>, RequestFailure>,
    },
    /// A CLI request the host must answer with [`Session::answer`].
    Request {
        /// The CLI's request id.
        id: RequestId,
        /// What it asks (boxed: it is large, and most events are small).
        request: Box<CliRequest>,
    },
    /// The CLI withdrew one of its requests: its handler should stop; no answer is sent.
    RequestCancelled {
        /// The request.
        id: RequestId,
    },
    /// A turn started or ended, the session id became known, or the run went idle.
    Turn(TurnEvent),
    /// A task changed.
    Task(TaskEvent),
    /// A piece of a streamed message.
    Assembly(AssemblyEvent),
    /// The CLI broke the protocol; the session goes on.
    Protocol(ProtocolViolation),
    /// Mirrored entries did not reach the store (it failed, or was too slow and its backlog
    /// over the limit), or a mirror line named no session file. The CLI's own file on disk
    /// has them; the session goes on.
    MirrorFailed {
        /// The transcript, when known.
        key: Option<byre_proto::SessionKey>,
        /// How many entries were lost to the store.
        entries: usize,
        /// Why.
        error: String,
    },
    /// The stored session resumed from a store held lines that do not decode: it was loaded
    /// without them (as the CLI loads its own files), and the CLI resumed it.
    StoredLinesSkipped {
        /// Each line left out: its transcript, its number, why.
        lines: Vec<String>,
    },
    /// The transcript could not be written (a full disk, a file system gone read-only):
    /// reported at the first failed write, once. The writer stops there, so the file holds
    /// the session up to its last whole line and nothing after; the session goes on. The
    /// driver's close counts the lines that are not in the file.
    TranscriptFailed {
        /// The transcript file.
        path: std::path::PathBuf,
        /// Why the write failed.
        error: String,
    },
}

impl Event {
    /// The answer's text as it streams: the text of a text delta, else `None`. A message that
    /// arrives whole, without deltas, is not counted here: [`Turn`](crate::Turn) gathers both.
    pub fn text(&self) -> Option<&str> {
        match self {
            Event::Assembly(crate::assembly::AssemblyEvent::Delta {
                delta: byre_proto::Delta::Text(t),
                ..
            }) => Some(&t.text),
            _ => None,
        }
    }
}

/// The session's event queue as the place the assembler adds its events to, each becoming an
/// [`Event::Assembly`] where it is built.
pub(super) struct AsEvents<'a>(pub(super) &'a mut std::collections::VecDeque<Event>);

impl Extend<AssemblyEvent> for AsEvents<'_> {
    fn extend<I: IntoIterator<Item = AssemblyEvent>>(&mut self, events: I) {
        self.0.extend(events.into_iter().map(Event::Assembly));
    }
}

/// Why a host request has no success answer.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum RequestFailure {
    /// The CLI answered with an error.
    #[error(
        "the CLI refused: {message}{}",
        code.as_ref().map(|c| format!(" ({c})")).unwrap_or_default()
    )]
    Refused {
        /// Its message.
        message: String,
        /// Its code (`unsupported_request`, `invalid_mode`, ...).
        code: Option<ErrorCode>,
    },
    /// No answer came in time.
    #[error("no answer within {0:?}")]
    TimedOut(Duration),
    /// The host withdrew it.
    #[error("cancelled by the host")]
    Cancelled,
    /// It was never sent: it does not encode as JSON.
    #[error("not sent: {0}")]
    NotSent(String),
    /// The CLI exited first.
    #[error("the CLI exited: {0}")]
    Exited(String),
}

/// A way the CLI broke the protocol. Reported, never fatal.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ProtocolViolation {
    /// A control answer for no request in flight (late, stray or repeated).
    #[error("a control_response for unknown request {0}")]
    UnknownResponse(String),
    /// An answer under the id of a request in flight that says it answers another request (a
    /// `read_file` answer for another path): set aside, and the request still waits.
    #[error("an answer under request id {id} set aside: {why}")]
    StaleAnswer {
        /// The request id.
        id: String,
        /// What it answers instead.
        why: String,
    },
    /// A request id that is already in flight.
    #[error("the CLI reused request id {0} while it was in flight")]
    DuplicateRequestId(String),
    /// A `control_request` without a (string) `request_id`: it cannot be answered, so nothing
    /// was dispatched; the CLI, if it waits, waits in vain.
    #[error("the CLI sent a control_request without a request_id ({subtype}): not answerable")]
    RequestWithoutId {
        /// The request's subtype, or `unknown`.
        subtype: String,
    },
    /// A `control_request` whose body did not decode (a field of the wrong type, or missing):
    /// it was answered with an error at once, so the CLI does not wait.
    #[error("the CLI's request {id} does not decode: {why}")]
    UndecodableRequest {
        /// The CLI's request id.
        id: String,
        /// Why the decode failed.
        why: String,
    },
    /// A line from the CLI that is not a message (not JSON, not an object, no `type`, or over
    /// the line limit): skipped, and the stream goes on.
    #[error("a bad line from the CLI ({len} bytes): {why}")]
    BadLine {
        /// The line's length in bytes.
        len: usize,
        /// Why it is not a message, with its first bytes when it has them.
        why: String,
    },
    /// The `initialize` answer did not decode.
    #[error("the initialize answer does not decode: {0}")]
    BadInitializeAnswer(String),
    /// A line of a known type in which parts did not fit the model (a value nested deeper than
    /// 128 levels, a number out of `f64`'s range, a field of another type, a required field
    /// missing): kept as their JSON text where they sit ([`byre_proto::Misfit`]); the message
    /// is delivered as its type says all the same (a CLI request is answered with an error).
    #[error(
        "parts of a line of type {kind} do not fit the model, kept as text: {}",
        misfits.join("; ")
    )]
    Misfit {
        /// The line's `type`.
        kind: String,
        /// Each part as its JSON path and why it does not fit.
        misfits: Vec<String>,
    },
    /// A `result` written before the `initialize` answer, which then came: it answered no
    /// prompt (no turn runs before the answer), and ended no turn.
    #[error("a result before the initialize answer ({}): not a turn's end", .0.subtype)]
    ResultBeforeInitialize(Box<byre_proto::ResultMessage>),
}

/// The host's answer to a CLI request: a success payload, or an error message.
pub type Answer = Result<Value, String>;

/// A call on the core that cannot be done now: answering a request that is not waiting, or
/// anything on a closed session. (The driver's option errors are
/// [`UsageError`](crate::UsageError).)
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CallError {
    /// [`Session::answer`] for a request that is not in flight (never sent, answered, or
    /// cancelled by the CLI).
    #[error("no CLI request {0} is waiting for an answer")]
    NotWaiting(String),
    /// The session is closed.
    #[error("the session is closed")]
    Closed,
}

/// Work for the driver, kept apart from the user's events ([`Session::poll_action`]).
///
/// `T` is what the driver registered with a host request ([`Session::request_with`]): it comes
/// back with the answer, so the driver keeps no table of its own.
#[derive(Debug)]
#[non_exhaustive]
pub enum Action<T> {
    /// Run the host's handler for this CLI request and give its result to
    /// [`Session::answer`]; exactly one answer is sent.
    Dispatch {
        /// The CLI's request id.
        id: RequestId,
        /// What it asks.
        request: Box<CliRequest>,
    },
    /// Stop the handler of this request: the CLI withdrew it, or exited. No answer is sent.
    Abort {
        /// The request.
        id: RequestId,
    },
    /// A host request was answered, failed, timed out or was cancelled.
    Answered {
        /// The request.
        id: RequestId,
        /// Its subtype.
        subtype: String,
        /// Its payload, or why it failed.
        result: Result<Option<RawJson>, RequestFailure>,
        /// What the driver registered with it (`None` for `initialize`, which the core sends).
        data: Option<T>,
    },
    /// The session is ready (the `initialize` answer), or will never be.
    Ready(Result<Box<InitializeResponse>, StartFailure>),
    /// Close the CLI's stdin, once every line polled so far is written: the input has ended
    /// ([`Session::end_input`]) and nothing the host serves can be asked any more.
    CloseStdin,
    /// Append these batches to the session store, in order, each to its transcript; report
    /// a failure with [`Session::mirror_failed`].
    Mirror(Vec<super::MirrorBatch>),
}

/// Why a session never became ready.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum StartFailure {
    /// `initialize` failed: refused, timed out, or the CLI exited first.
    #[error("initialize: {0}")]
    Request(RequestFailure),
    /// The `initialize` answer did not decode.
    #[error("the initialize answer does not decode: {0}")]
    BadAnswer(String),
    /// A line over the length limit came before the answer and was skipped: the answer is
    /// the longest early line, so waiting would only end in the timeout.
    #[error(
        "a {len}-byte line came before the initialize answer and was skipped ({why}); \
         raise the line limit"
    )]
    LineTooLong {
        /// The line's length.
        len: usize,
        /// What the framing layer said.
        why: String,
    },
    /// The CLI is older than the oldest version byre supports (its `initialize` answer says
    /// which it is).
    #[error(
        "the Claude Code CLI is version {found}, but byre needs {oldest} or newer: upgrade it \
         (`claude update`, or `npm install -g @anthropic-ai/claude-code`)"
    )]
    UnsupportedCli {
        /// The CLI's version.
        found: byre_proto::CliVersion,
        /// The oldest version supported.
        oldest: byre_proto::CliVersionNumber,
    },
    /// The CLI wrote an error `result` and exited before answering (an unknown session to
    /// resume, an invalid setting, ...).
    #[error("the CLI stopped at start-up: {}", result.error_text().unwrap_or_else(|| why.clone()))]
    Exited {
        /// Its exit status and stderr tail.
        why: String,
        /// The result it wrote.
        result: Box<ResultMessage>,
    },
}
