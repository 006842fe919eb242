//! One turn at a time: [`Events::turn`] streams the events of a turn and ends at its result,
//! giving a typed [`TurnOutput`] (text, result, cost, usage, session id, structured output)
//! or a typed [`TurnError`].

use std::collections::HashSet;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use byre_proto::{
    AssistantError, CliMessage, ContentBlock, Delta, PermissionDenial, ResultMessage,
    ResultSubtype, TerminalReason, Usage,
};
use futures::{Stream, StreamExt};
use serde::de::DeserializeOwned;

use super::claude::Events;
use super::commands::Answer;
use super::error::Error;
use crate::assembly::AssemblyEvent;
use crate::session::{Event, ProtocolViolation};

/// Why a turn did not succeed. The CLI's `result` is kept where it wrote one.
///
/// A tool call that was denied does not fail a turn: it is in
/// [`TurnOutput::permission_denials`].
///
/// ```no_run
/// use byre_session::{Claude, Options, TurnError};
///
/// # async fn run() -> Result<(), byre_session::Error> {
/// let (claude, mut events) = Claude::start(Options::new().max_turns(3)).await?;
/// claude.send("Fix the failing test.")?;
/// match events.turn().finish().await {
///     Ok(output) => println!("{}", output.text),
///     Err(TurnError::MaxTurns { .. }) => eprintln!("out of turns: ask for less"),
///     Err(TurnError::Api { status: Some(429), .. }) => eprintln!("rate limited: later"),
///     Err(TurnError::Session(error)) => return Err(error), // the session ended
///     Err(other) => {
///         let turns = other.result().and_then(|r| r.num_turns);
///         eprintln!("{other} (after {turns:?} model turns)");
///     }
/// }
/// claude.close().await?;
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum TurnError {
    /// The API failed (after the CLI's retries): its HTTP status and error type when known.
    #[error("the API failed{}{}: {message}",
        status.map(|s| format!(" ({s})")).unwrap_or_default(),
        kind.as_deref().map(|k| format!(" [{k}]")).unwrap_or_default())]
    Api {
        /// The HTTP status.
        status: Option<u16>,
        /// The API's error type (`rate_limit_error`, `overloaded_error`, ...).
        kind: Option<String>,
        /// What the CLI said.
        message: String,
        /// The result.
        result: Box<ResultMessage>,
    },
    /// The CLI has no credentials (its answer was "not logged in").
    #[error("the CLI is not logged in: set ANTHROPIC_API_KEY, or run `claude` and /login")]
    NotLoggedIn {
        /// The result.
        result: Box<ResultMessage>,
    },
    /// The turn reached [`Options::max_turns`](crate::Options::max_turns).
    #[error("the turn reached its limit of model turns")]
    MaxTurns {
        /// The result.
        result: Box<ResultMessage>,
    },
    /// The session reached [`Options::max_budget_usd`](crate::Options::max_budget_usd).
    #[error("the session reached its budget")]
    MaxBudget {
        /// The result.
        result: Box<ResultMessage>,
    },
    /// The model did not give structured output matching the schema, after the CLI's
    /// retries.
    #[error("the model gave no valid structured output after the CLI's retries")]
    StructuredOutputRetries {
        /// The result.
        result: Box<ResultMessage>,
    },
    /// The turn was interrupted.
    #[error("the turn was interrupted")]
    Interrupted {
        /// The result.
        result: Box<ResultMessage>,
    },
    /// The turn ended in another error.
    #[error("the turn failed: {message}")]
    Failed {
        /// What the CLI said.
        message: String,
        /// The result.
        result: Box<ResultMessage>,
    },
    /// The turn heard nothing from the CLI for longer than
    /// [`Options::stall_timeout`](crate::Options::stall_timeout) allows. The CLI was sent
    /// `interrupt`; `result` is its answer when it gave one within a few seconds (a CLI that
    /// still reads), `None` when it did not (a hung CLI: close the session). A result that
    /// comes later still reaches the event stream, and the next `turn()` takes it.
    #[error("the turn heard nothing from the CLI for {} s", silent_for.as_secs())]
    Stalled {
        /// How long it was silent.
        silent_for: std::time::Duration,
        /// The CLI's result after the interrupt, if it came.
        result: Option<Box<ResultMessage>>,
    },
    /// The events ended before the turn's result: the CLI exited or the session was closed.
    #[error("the session ended before the turn's result")]
    Ended,
    /// The session ended with an error before the turn's result: the CLI closed its input
    /// ([`Error::InputClosed`]), so what was sent to it (the prompt, maybe) never arrived.
    #[error("the session ended before the turn's result: {0}")]
    Session(#[source] Error),
    /// The turn succeeded but holds no structured output (was a schema given?).
    #[error("the turn has no structured output")]
    NoStructuredOutput,
    /// The structured output does not decode as the type asked for.
    #[error("the structured output does not decode: {0}")]
    BadStructuredOutput(String),
}

impl TurnError {
    /// The CLI's result, where it wrote one.
    pub fn result(&self) -> Option<&ResultMessage> {
        match self {
            TurnError::Api { result, .. }
            | TurnError::NotLoggedIn { result }
            | TurnError::MaxTurns { result }
            | TurnError::MaxBudget { result }
            | TurnError::StructuredOutputRetries { result }
            | TurnError::Interrupted { result }
            | TurnError::Failed { result, .. } => Some(result),
            TurnError::Stalled { result, .. } => result.as_deref(),
            _ => None,
        }
    }
}

/// What a successful turn gave.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct TurnOutput {
    /// The answer's text: what streamed, or the text of whole `assistant` messages when
    /// nothing streamed; blocks separated by a blank line. Subagents' text is left out.
    pub text: String,
    /// The turn's `result`.
    pub result: Box<ResultMessage>,
    /// What in the turn's lines did not fit byre's model and was kept as text where it sits
    /// ([`ProtocolViolation::Misfit`](crate::session::ProtocolViolation::Misfit)): each as the
    /// line's `type`, then the JSON path and why (`result: /num_turns (invalid type: ...)`).
    /// Empty unless the CLI wrote something byre does not expect.
    pub misfits: Vec<String>,
    /// The ids of the `Agent` tool calls the turn made (the subagents it started), in order
    /// ([`TurnOutput::subagent_costs`]).
    pub agent_calls: Vec<String>,
}

impl TurnOutput {
    /// The session's cost so far in US dollars (cumulative across turns, resume and fork).
    pub fn cost_usd(&self) -> Option<f64> {
        self.result.cost_usd()
    }

    /// How many turns (model requests) the CLI counted in this one (`num_turns`).
    pub fn num_turns(&self) -> Option<u64> {
        self.result.num_turns
    }

    /// How long the turn took on the CLI's clock.
    pub fn duration(&self) -> Option<std::time::Duration> {
        self.result.duration()
    }

    /// The tool calls that were denied (by the permission mode, a rule, a handler or a hook):
    /// the turn went on without them, the model told why. Empty when none was.
    pub fn permission_denials(&self) -> &[PermissionDenial] {
        self.result
            .permission_denials
            .as_deref()
            .unwrap_or_default()
    }

    /// The tokens of this turn.
    pub fn usage(&self) -> Option<&Usage> {
        self.result.usage.as_ref()
    }

    /// The session id.
    pub fn session_id(&self) -> Option<&str> {
        self.result.session_id.as_deref()
    }

    /// The structured output ([`Options::output_schema`](crate::Options::output_schema)),
    /// decoded as `T`.
    ///
    /// An output a `Value` cannot hold (nested deeper than 128 levels, a number out of `f64`'s
    /// range) is decoded from the text it came in.
    pub fn structured<T: DeserializeOwned>(&self) -> Result<T, TurnError> {
        let bad = |e: serde_json::Error| TurnError::BadStructuredOutput(e.to_string());
        match &self.result.structured_output {
            Some(value) if !value.is_null() => serde_json::from_value(value.clone()).map_err(bad),
            Some(_) => Err(TurnError::NoStructuredOutput),
            None => match self.result.extra.misfit("structured_output") {
                Some(byre_proto::Misfit { raw: Some(raw), .. }) => raw.parse().map_err(bad),
                _ => Err(TurnError::NoStructuredOutput),
            },
        }
    }
}

/// The events of one turn, as a `Stream` that ends after the turn's `result`
/// ([`Events::turn`]). Every event passes through unchanged; the turn's text is gathered as
/// it goes, and [`Turn::finish`] gives the outcome.
#[derive(Debug)]
pub struct Turn<'a> {
    events: &'a mut Events,
    text: Text,
    result: Option<Box<ResultMessage>>,
    misfits: Vec<String>,
    not_logged_in: bool,
    done: bool,
    stop: Stop<'a>,
    /// The `Agent` tool calls of the turn.
    agent_calls: Vec<String>,
    /// How long the turn was silent when it stalled, and how long more its result is awaited.
    stalled: Option<(std::time::Duration, Pin<Box<tokio::time::Sleep>>)>,
}

/// How long a stalled turn waits for the CLI's answer to the interrupt.
const STALL_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

/// When a turn interrupts itself ([`Turn::interrupt_when`]).
enum Stop<'a> {
    /// Never.
    Never,
    /// When this says so, asked with the answer's text so far.
    When(Box<dyn FnMut(&str) -> bool + Send + 'a>),
    /// The interrupt was sent; its answer comes here (`None`: the session had ended).
    Sent(Option<Answer>),
}

impl std::fmt::Debug for Stop<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Stop::Never => "Never",
            Stop::When(_) => "When(..)",
            Stop::Sent(_) => "Sent",
        })
    }
}

impl Events {
    /// The events of the next turn, up to and including its `result`.
    pub fn turn(&mut self) -> Turn<'_> {
        Turn {
            events: self,
            text: Text::default(),
            result: None,
            misfits: Vec::new(),
            not_logged_in: false,
            done: false,
            stop: Stop::Never,
            agent_calls: Vec::new(),
            stalled: None,
        }
    }
}

impl<'a> Turn<'a> {
    /// Interrupts the turn once `stop` says so. `stop` is asked with the answer's text so far
    /// each time more of it arrives, until it returns `true`; then the CLI is sent one
    /// `interrupt`, and the turn ends as [`TurnError::Interrupted`] (or as it was ending
    /// anyway, when its result was already on its way). For a stop marker, or a cap on how
    /// long an answer may grow:
    ///
    /// ```no_run
    /// # async fn run(claude: byre_session::Claude, mut events: byre_session::Events)
    /// # -> Result<(), byre_session::Error> {
    /// claude.send("List every file, one per line")?;
    /// let turn = events.turn().interrupt_when(|text| text.len() > 10_000);
    /// let outcome = turn.on_text(|text| print!("{text}")).await;
    /// # Ok(())
    /// # }
    /// ```
    pub fn interrupt_when(mut self, stop: impl FnMut(&str) -> bool + Send + 'a) -> Self {
        self.stop = Stop::When(Box::new(stop));
        self
    }

    /// Reads the rest of the turn, calling `on_text` with each piece of the answer's text as
    /// it arrives (blocks separated by a blank line), and gives the outcome.
    pub async fn on_text(mut self, mut on_text: impl FnMut(&str)) -> Result<TurnOutput, TurnError> {
        while let Some(event) = self.next().await {
            if let Some(piece) = self.text.last_piece.take() {
                on_text(&piece);
            }
            drop(event);
        }
        self.finish().await
    }

    /// Reads what is left of the turn and gives its outcome: the output, or why it failed.
    pub async fn finish(mut self) -> Result<TurnOutput, TurnError> {
        while self.next().await.is_some() {}
        if let Stop::Sent(Some(mut answer)) = std::mem::replace(&mut self.stop, Stop::Never) {
            if let Ok(Err(error)) = answer.try_recv() {
                tracing::warn!(%error, "the interrupt that interrupt_when asked for failed");
            }
        }
        if let Some((silent_for, _)) = self.stalled.take() {
            let result = self.result.take();
            return Err(TurnError::Stalled { silent_for, result });
        }
        let Some(result) = self.result.take() else {
            let failure = self
                .events
                .shared
                .lock()
                .expect("shared state")
                .failure
                .clone();
            return Err(failure.map_or(TurnError::Ended, TurnError::Session));
        };
        let output = outcome(
            result,
            self.not_logged_in,
            std::mem::take(&mut self.text.all),
        )?;
        Ok(TurnOutput {
            misfits: std::mem::take(&mut self.misfits),
            agent_calls: std::mem::take(&mut self.agent_calls),
            ..output
        })
    }

    /// The text of the answer so far.
    pub fn text(&self) -> &str {
        &self.text.all
    }

    /// Sends the interrupt [`Turn::interrupt_when`] asks for, once, when its text says so.
    fn check_stop(&mut self) {
        if self.done || self.text.all.len() == self.text.asked {
            return;
        }
        self.text.asked = self.text.all.len();
        if let Stop::When(stop) = &mut self.stop {
            if stop(&self.text.all) {
                let request = byre_proto::InterruptRequest::default().into();
                self.stop = Stop::Sent(self.events.outbox.request(request));
            }
        }
    }

    fn observe(&mut self, event: &Event) {
        match event {
            Event::Assembly(AssemblyEvent::MessageStarted {
                id,
                parent_tool_use_id: None,
                ..
            }) => {
                self.text.streamed.insert(id.clone());
            }
            Event::Assembly(AssemblyEvent::Delta {
                message_id,
                index,
                delta: Delta::Text(t),
            }) if self.text.streamed.contains(message_id) => {
                self.text.push(message_id, *index, &t.text);
            }
            Event::Message(CliMessage::Assistant(m)) if m.parent_tool_use_id.is_none() => {
                if m.error.as_ref() == Some(&AssistantError::AUTHENTICATION_FAILED) {
                    self.not_logged_in = true;
                }
                for block in &m.message.content {
                    if let ContentBlock::ToolUse(call) = block {
                        let agent = call.name == "Agent" || call.name == "Task";
                        // At most a thousand: a turn's list stays small whatever the CLI sends.
                        let room = self.agent_calls.len() < 1000;
                        if agent && room && !self.agent_calls.contains(&call.id) {
                            self.agent_calls.push(call.id.clone());
                        }
                    }
                }
                let id = m.message.id.clone().unwrap_or_default();
                if !self.text.streamed.contains(&id) {
                    for (index, block) in m.message.content.iter().enumerate() {
                        if let ContentBlock::Text(t) = block {
                            // A whole message line holds one block; keep them apart.
                            let key = format!("{id}#{}", self.text.whole);
                            self.text.whole += 1;
                            self.text.push(&key, index as u64, &t.text);
                        }
                    }
                }
            }
            Event::Message(CliMessage::Result(r)) if self.events.ends_turn(event) => {
                self.result = Some(r.clone());
                self.done = true;
            }
            Event::Protocol(ProtocolViolation::Misfit { kind, misfits }) => {
                self.misfits
                    .extend(misfits.iter().map(|misfit| format!("{kind}: {misfit}")));
            }
            Event::Stalled { silent_for } if self.stalled.is_none() => {
                let grace = Box::pin(tokio::time::sleep(STALL_GRACE));
                self.stalled = Some((*silent_for, grace));
            }
            _ => {}
        }
    }
}

impl Stream for Turn<'_> {
    type Item = Event;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Event>> {
        if self.done {
            return Poll::Ready(None);
        }
        match self.events.poll_next_unpin(cx) {
            Poll::Ready(Some(event)) => {
                self.observe(&event);
                self.check_stop();
                Poll::Ready(Some(event))
            }
            Poll::Ready(None) => {
                self.done = true;
                Poll::Ready(None)
            }
            Poll::Pending => {
                // A stalled turn ends when its grace for the interrupt's answer is over.
                if let Some((_, grace)) = &mut self.stalled {
                    if grace.as_mut().poll(cx).is_ready() {
                        self.done = true;
                        return Poll::Ready(None);
                    }
                }
                Poll::Pending
            }
        }
    }
}

/// The turn's text as it is gathered.
#[derive(Debug, Default)]
struct Text {
    all: String,
    /// The block the last piece belonged to.
    block: Option<(String, u64)>,
    /// Messages whose text streams (their whole `assistant` lines are not counted again).
    streamed: HashSet<String>,
    /// Whole text blocks seen so far.
    whole: usize,
    /// The last piece, with its separator, for [`Turn::on_text`].
    last_piece: Option<String>,
    /// How long the text was when [`Turn::interrupt_when`]'s test was last asked.
    asked: usize,
}

impl Text {
    fn push(&mut self, message: &str, index: u64, text: &str) {
        let mut piece = String::new();
        let same = matches!(&self.block, Some((m, i)) if m == message && *i == index);
        if !same {
            if !self.all.is_empty() {
                piece.push_str("\n\n");
            }
            self.block = Some((message.to_owned(), index));
        }
        piece.push_str(text);
        self.all.push_str(&piece);
        match &mut self.last_piece {
            Some(last) => last.push_str(&piece),
            None => self.last_piece = Some(piece),
        }
    }
}

/// The outcome of a turn from its result.
fn outcome(
    result: Box<ResultMessage>,
    not_logged_in: bool,
    text: String,
) -> Result<TurnOutput, TurnError> {
    let failed = result.is_error == Some(true) || result.subtype != ResultSubtype::SUCCESS;
    if !failed {
        return Ok(TurnOutput {
            text,
            result,
            misfits: Vec::new(),
            agent_calls: Vec::new(),
        });
    }
    if not_logged_in {
        return Err(TurnError::NotLoggedIn { result });
    }
    let subtype = result.subtype.clone();
    if subtype == ResultSubtype::ERROR_MAX_TURNS {
        return Err(TurnError::MaxTurns { result });
    }
    if subtype == ResultSubtype::ERROR_MAX_BUDGET_USD {
        return Err(TurnError::MaxBudget { result });
    }
    if subtype == ResultSubtype::ERROR_MAX_STRUCTURED_OUTPUT_RETRIES {
        return Err(TurnError::StructuredOutputRetries { result });
    }
    let reason = result.terminal_reason.clone();
    if reason == Some(TerminalReason::ABORTED_STREAMING)
        || reason == Some(TerminalReason::ABORTED_TOOLS)
    {
        return Err(TurnError::Interrupted { result });
    }
    let message = result.error_text().unwrap_or_else(|| subtype.to_string());
    if reason == Some(TerminalReason::API_ERROR) || result.api_error_status.is_some() {
        return Err(TurnError::Api {
            status: result
                .api_error_status
                .as_ref()
                .and_then(|n| n.as_u64())
                .and_then(|n| u16::try_from(n).ok()),
            kind: result.api_error_type.clone(),
            message,
            result,
        });
    }
    Err(TurnError::Failed { message, result })
}
