//! Partial messages: `stream_event` deltas assembled into text, thinking and tool-input blocks.

use std::collections::{BTreeMap, HashMap};

use byre_proto::{
    AssistantMessage, CliMessage, ContentBlock, Delta, StopReason, StreamEvent, StreamEventMessage,
    Usage,
};
use serde_json::Value;

use self::block::{same_slot, Accumulated, BlockState};

mod block;

/// Assembles `stream_event` deltas into content blocks, per API message and block index.
///
/// Feed it every `stream_event` line in order with [`observe`](Self::observe) (or every line
/// with [`observe_cli`](Self::observe_cli)) and act on the returned events.
///
/// With `--include-partial-messages` the CLI passes the Anthropic streaming events through as
/// `stream_event` lines. An [`Assembler`] turns them back into content blocks, one API message
/// at a time, and reports what happened as [`AssemblyEvent`]s:
///
/// - `message_start` opens a message ([`AssemblyEvent::MessageStarted`]). Its key is the line's
///   `api_message_id`, else the id inside `message_start`. Later events find their message by
///   `api_message_id`, else by the last message opened on the same stream (the same
///   `parent_tool_use_id`), so lines of different messages (a subagent's and its parent's) may
///   interleave.
/// - `content_block_start` opens block `index` ([`AssemblyEvent::BlockStarted`]) with its kind:
///   text, thinking, a tool call with its name and id, or a block that arrives whole.
/// - `content_block_delta` extends it ([`AssemblyEvent::Delta`], which keeps the raw delta):
///   `text_delta` and `citations_delta` a text block, `thinking_delta` and `signature_delta` a
///   thinking block, `input_json_delta` pieces of a tool call's input JSON.
/// - `content_block_stop` closes it: [`AssemblyEvent::BlockFinished`] with the assembled
///   [`ContentBlock`], or [`AssemblyEvent::BlockFailed`] when a tool input is not valid JSON.
/// - `message_delta` records the stop reason and usage; `message_stop` closes the message
///   ([`AssemblyEvent::MessageFinished`]), listing the blocks an interrupt cut off
///   (`abandoned_blocks`) or that were still open.
///
/// Every `BlockStarted` is followed by exactly one `BlockFinished` or `BlockFailed` for the
/// same message and index, or the block is listed in its message's [`Abandoned::blocks`].
///
/// The CLI also writes one complete `assistant` line per block, *before* that block's
/// `content_block_stop`; [`Assembler::check_against`] compares such a line with the block
/// assembled so far.
///
/// Memory is bounded by what is in flight: a message is forgotten when it finishes. A message
/// that never finishes (the stream broke) stays until [`Assembler::abandon_all`], or, for a
/// top-level message, until the `result` that ends its turn is passed to
/// [`Assembler::observe_cli`].
///
/// Nothing here panics on odd input: protocol oddities are reported as
/// [`AssemblyEvent::Problem`] and the assembler carries on.
#[derive(Debug, Default)]
pub struct Assembler {
    /// The messages in flight, by id.
    messages: HashMap<String, MessageState>,
    /// The last message opened on each stream (by `parent_tool_use_id`), for events that carry
    /// no `api_message_id`.
    current: HashMap<Option<String>, String>,
    /// How many messages without any id were named so far.
    unnamed: u64,
}

/// What the assembler reports about a `stream_event` line.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum AssemblyEvent {
    /// A message started (`message_start`).
    MessageStarted {
        /// The message id (`api_message_id`, else the message's own id, else `unnamed-N`).
        id: String,
        /// The model that answers.
        model: Option<String>,
        /// The Agent call this message belongs to, for subagents.
        parent_tool_use_id: Option<String>,
        /// The usage at `message_start` (input tokens).
        usage: Option<Box<Usage>>,
    },
    /// A block started (`content_block_start`).
    BlockStarted {
        /// The message.
        message_id: String,
        /// The block's index in the message.
        index: u64,
        /// What kind of block it is.
        kind: BlockKind,
    },
    /// A piece of a block arrived (`content_block_delta`).
    Delta {
        /// The message.
        message_id: String,
        /// The block's index in the message.
        index: u64,
        /// The raw delta; [`AssemblyEvent::piece`] gives its text.
        delta: Delta,
    },
    /// A block is complete (`content_block_stop`).
    BlockFinished {
        /// The message.
        message_id: String,
        /// The block's index in the message.
        index: u64,
        /// The assembled block, shaped as in an `assistant` line (boxed: it is large, and
        /// the events of a stream are mostly small).
        block: Box<ContentBlock>,
    },
    /// A block ended but could not be assembled: its tool input is not valid JSON.
    BlockFailed {
        /// The message.
        message_id: String,
        /// The block's index in the message.
        index: u64,
        /// Why.
        error: AssemblyError,
    },
    /// A message ended (`message_stop`, or given up: see [`AbandonCause`]).
    MessageFinished {
        /// The message id.
        id: String,
        /// The Agent call this message belongs to, for subagents.
        parent_tool_use_id: Option<String>,
        /// Why the model stopped (from `message_delta`; `None` after an interrupt).
        stop_reason: Option<StopReason>,
        /// The final usage (from `message_delta`, else from `message_start`).
        usage: Option<Box<Usage>>,
        /// Set when blocks were cut off.
        abandoned: Option<Abandoned>,
    },
    /// The API reported an error inside the stream (`error` event).
    StreamError {
        /// The message it belongs to, if known.
        message_id: Option<String>,
        /// The API error object.
        error: Value,
    },
    /// A line did not fit the stream so far; it was ignored (or applied as far as possible).
    Problem(AssemblyError),
}

/// The kind of a content block, as `content_block_start` announced it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum BlockKind {
    /// Text, extended by `text_delta` and `citations_delta`.
    Text,
    /// Visible thinking, extended by `thinking_delta` and `signature_delta`.
    Thinking,
    /// A client tool call; its input comes as `input_json_delta` pieces.
    ToolUse {
        /// The call id.
        id: String,
        /// The tool's API name.
        name: String,
    },
    /// A server tool call; its input comes as `input_json_delta` pieces.
    ServerToolUse {
        /// The call id.
        id: String,
        /// The tool's name.
        name: String,
    },
    /// An MCP connector tool call; its input comes as `input_json_delta` pieces.
    McpToolUse {
        /// The call id.
        id: String,
        /// The tool's name.
        name: String,
        /// The MCP server.
        server_name: String,
    },
    /// A block that arrives whole in `content_block_start` (redacted thinking, server tool
    /// results, blocks byre does not know): its `type`.
    Whole(Option<String>),
}

/// Blocks cut off before their `content_block_stop`.
#[derive(Debug, Clone, PartialEq)]
pub struct Abandoned {
    /// Why the message ended early.
    pub cause: AbandonCause,
    /// The first abandoned block's index, as `abandoned_blocks.from_block_index` gave it.
    pub from_block_index: Option<u64>,
    /// The blocks that were still open, with what had arrived of them (none when the
    /// interrupt came before the first block).
    pub blocks: Vec<PartialBlock>,
}

/// Why a message ended with blocks cut off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum AbandonCause {
    /// `message_stop` carried `abandoned_blocks`: an interrupt cut the stream.
    Interrupted,
    /// `message_stop` came while blocks were still open, without `abandoned_blocks`.
    OpenAtStop,
    /// The `result` of the turn came while the (top-level) message was still in flight.
    TurnEnded,
    /// [`Assembler::abandon_all`] gave it up.
    GivenUp,
}

/// What had arrived of a block that never finished.
#[derive(Debug, Clone, PartialEq)]
pub struct PartialBlock {
    /// The block's index in the message.
    pub index: u64,
    /// Its kind.
    pub kind: BlockKind,
    /// Its text so far (text, thinking, or partial tool-input JSON; empty for whole blocks).
    pub text: String,
}

/// How one block of an `assistant` line compares with the block assembled from the stream.
#[derive(Debug, Clone, PartialEq)]
pub enum BlockCheck {
    /// The assembled block equals the line's block.
    Matches {
        /// The block's index in the message.
        index: u64,
    },
    /// The message or the block is not in flight (not streamed, or already finished).
    NotStreamed,
    /// The assembled block differs from the line's block.
    Differs {
        /// The block's index in the message.
        index: u64,
        /// What the stream gave (or why it could not be assembled).
        assembled: Box<Result<ContentBlock, AssemblyError>>,
        /// What the `assistant` line holds.
        expected: Box<ContentBlock>,
    },
}

/// A stream line that does not fit what came before. All of these are the CLI's doing (or a
/// transcript that starts mid-stream); none stops the assembler.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum AssemblyError {
    /// The concatenated `input_json_delta` pieces of a tool call are not valid JSON.
    #[error("the tool input of block {index} of message {message_id} is not valid JSON: {error}")]
    InvalidToolInput {
        /// The message.
        message_id: String,
        /// The block's index.
        index: u64,
        /// The tool call id.
        tool_use_id: String,
        /// The parser's message.
        error: String,
        /// The JSON text as assembled.
        partial_json: String,
    },
    /// An event carries no `api_message_id` and no message is open on its stream.
    #[error("a {event} event belongs to no message in flight")]
    NoMessage {
        /// The event type.
        event: &'static str,
    },
    /// An event names a message that is not in flight.
    #[error("a {event} event names message {message_id}, which is not in flight")]
    UnknownMessage {
        /// The message id named.
        message_id: String,
        /// The event type.
        event: &'static str,
    },
    /// `message_start` for a message already in flight.
    #[error("message {message_id} started again while in flight")]
    DuplicateMessage {
        /// The message id.
        message_id: String,
    },
    /// `content_block_start` for a block already open.
    #[error("block {index} of message {message_id} started again while open")]
    DuplicateBlock {
        /// The message.
        message_id: String,
        /// The block's index.
        index: u64,
    },
    /// A delta or stop for a block that is not open.
    #[error("a {event} event names block {index} of message {message_id}, which is not open")]
    UnknownBlock {
        /// The message.
        message_id: String,
        /// The block's index.
        index: u64,
        /// The event type.
        event: &'static str,
    },
    /// A delta that cannot extend the block it names (a text delta for a tool call, ...).
    #[error("a {delta} cannot extend block {index} ({block}) of message {message_id}")]
    DeltaMismatch {
        /// The message.
        message_id: String,
        /// The block's index.
        index: u64,
        /// The block's type.
        block: String,
        /// The delta's type.
        delta: String,
    },
}

impl Assembler {
    /// An assembler with nothing in flight.
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes one `stream_event` line and reports what it did.
    #[must_use = "the events say what was assembled"]
    pub fn observe(&mut self, line: &StreamEventMessage) -> Vec<AssemblyEvent> {
        let mut out = Vec::new();
        self.observe_into(line, &mut out);
        out
    }

    /// [`observe`](Self::observe), adding the events to `out` (the session's event queue, with
    /// no list of its own per line).
    pub(crate) fn observe_into(
        &mut self,
        line: &StreamEventMessage,
        out: &mut impl Extend<AssemblyEvent>,
    ) {
        match &line.event {
            StreamEvent::MessageStart(start) => self.message_start(line, &start.message, out),
            StreamEvent::ContentBlockStart(start) => {
                if let Some(id) = self.route(line, "content_block_start", out) {
                    self.block_start(id, start.index, &start.content_block, out);
                }
            }
            StreamEvent::ContentBlockDelta(delta) => {
                if let Some(id) = self.route(line, "content_block_delta", out) {
                    self.block_delta(id, delta.index, &delta.delta, out);
                }
            }
            StreamEvent::ContentBlockStop(stop) => {
                if let Some(id) = self.route(line, "content_block_stop", out) {
                    self.block_stop(id, stop.index, out);
                }
            }
            StreamEvent::MessageDelta(delta) => {
                if let Some(id) = self.route(line, "message_delta", out) {
                    let message = self
                        .messages
                        .get_mut(&id)
                        .expect("routed to a live message");
                    message.stop_reason = delta.delta.stop_reason.clone();
                    if let Some(usage) = &delta.usage {
                        message.final_usage = Some(Box::new(usage.clone()));
                    }
                }
            }
            StreamEvent::MessageStop(_) => {
                if let Some(id) = self.route(line, "message_stop", out) {
                    let from = line.abandoned_blocks.as_ref().map(|a| a.from_block_index);
                    let cause = match from {
                        Some(_) => AbandonCause::Interrupted,
                        None => AbandonCause::OpenAtStop,
                    };
                    out.extend(Some(self.finish_message(&id, cause, from.flatten())));
                }
            }
            StreamEvent::Error(error) => out.extend(Some(AssemblyEvent::StreamError {
                message_id: self.lookup(line),
                error: error.error.clone(),
            })),
            // A ping, an unknown event, and what a newer byre-proto adds: nothing to assemble.
            _ => {}
        }
    }

    /// Takes any CLI line: `stream_event` lines are assembled, a `result` gives up the
    /// top-level messages still in flight (their turn is over), and other lines are ignored.
    #[must_use = "the events say what was assembled"]
    pub fn observe_cli(&mut self, line: &CliMessage) -> Vec<AssemblyEvent> {
        let mut out = Vec::new();
        self.observe_cli_into(line, &mut out);
        out
    }

    /// [`observe_cli`](Self::observe_cli), adding the events to `out`.
    pub(crate) fn observe_cli_into(
        &mut self,
        line: &CliMessage,
        out: &mut impl Extend<AssemblyEvent>,
    ) {
        match line {
            CliMessage::StreamEvent(line) => self.observe_into(line, out),
            CliMessage::Result(_) => out
                .extend(self.give_up(AbandonCause::TurnEnded, |m| m.parent_tool_use_id.is_none())),
            _ => {}
        }
    }

    /// Gives up every message in flight (for example when the CLI exited), reporting each as
    /// finished with [`AbandonCause::GivenUp`].
    #[must_use = "the events say which messages were given up"]
    pub fn abandon_all(&mut self) -> Vec<AssemblyEvent> {
        self.give_up(AbandonCause::GivenUp, |_| true)
    }

    /// The text of block `index` of message `message_id` so far: the text of a text block,
    /// the thinking of a thinking block, the partial input JSON of a tool call. `None` when
    /// the block is not open or arrives whole.
    pub fn text_so_far(&self, message_id: &str, index: u64) -> Option<&str> {
        let block = self.messages.get(message_id)?.blocks.get(&index)?;
        match &block.acc {
            Accumulated::Text { text, .. } => Some(text),
            Accumulated::Thinking { thinking, .. } => Some(thinking),
            Accumulated::Json(json) => Some(json),
            Accumulated::Whole => None,
        }
    }

    /// Block `index` of message `message_id` as assembled so far (a tool input must already
    /// be complete JSON), or `None` when the block is not open.
    pub fn block_so_far(
        &self,
        message_id: &str,
        index: u64,
    ) -> Option<Result<ContentBlock, AssemblyError>> {
        let block = self.messages.get(message_id)?.blocks.get(&index)?;
        Some(block.clone().build(message_id, index))
    }

    /// The kind of open block `index` of message `message_id`.
    pub fn block_kind(&self, message_id: &str, index: u64) -> Option<&BlockKind> {
        Some(&self.messages.get(message_id)?.blocks.get(&index)?.kind)
    }

    /// The indexes of the open blocks of message `message_id`, in order.
    pub fn open_blocks(&self, message_id: &str) -> Vec<u64> {
        self.messages
            .get(message_id)
            .map(|m| m.blocks.keys().copied().collect())
            .unwrap_or_default()
    }

    /// The ids of the messages in flight (in no particular order).
    pub fn in_flight(&self) -> impl Iterator<Item = &str> {
        self.messages.keys().map(String::as_str)
    }

    /// Whether no message is in flight.
    pub fn is_idle(&self) -> bool {
        self.messages.is_empty()
    }

    /// Compares each block of an `assistant` line with the block assembled so far.
    ///
    /// The CLI writes the `assistant` line of a block just before its `content_block_stop`,
    /// so the block is still open when the line arrives. A block of the line is matched with
    /// the open block of the same message (`message.id`) that has the same type (and, for tool
    /// calls, the same id), taking the lowest index first. The result has one entry per block
    /// of the line.
    pub fn check_against(&self, line: &AssistantMessage) -> Vec<BlockCheck> {
        let message = line
            .message
            .id
            .as_deref()
            .and_then(|id| self.messages.get(id).map(|m| (id, m)));
        let mut claimed = Vec::new();
        line.message
            .content
            .iter()
            .map(|expected| {
                let Some((id, message)) = message else {
                    return BlockCheck::NotStreamed;
                };
                let found = message.blocks.iter().find(|(index, block)| {
                    !claimed.contains(*index) && same_slot(&block.start, expected)
                });
                let Some((&index, block)) = found else {
                    return BlockCheck::NotStreamed;
                };
                claimed.push(index);
                let assembled = block.clone().build(id, index);
                if assembled.as_ref() == Ok(expected) {
                    BlockCheck::Matches { index }
                } else {
                    BlockCheck::Differs {
                        index,
                        assembled: Box::new(assembled),
                        expected: Box::new(expected.clone()),
                    }
                }
            })
            .collect()
    }
}

impl AssemblyEvent {
    /// The text a [`AssemblyEvent::Delta`] adds: text, thinking, a signature, or a piece of
    /// tool-input JSON. `None` for other events and for citation or unknown deltas.
    pub fn piece(&self) -> Option<&str> {
        match self {
            AssemblyEvent::Delta { delta, .. } => match delta {
                Delta::Text(d) => Some(&d.text),
                Delta::Thinking(d) => Some(&d.thinking),
                Delta::Signature(d) => Some(&d.signature),
                Delta::InputJson(d) => Some(&d.partial_json),
                // Citations, unknown deltas, and what a newer byre-proto adds.
                _ => None,
            },
            _ => None,
        }
    }

    /// The message the event belongs to, if known.
    pub fn message_id(&self) -> Option<&str> {
        match self {
            AssemblyEvent::MessageStarted { id, .. }
            | AssemblyEvent::MessageFinished { id, .. } => Some(id),
            AssemblyEvent::BlockStarted { message_id, .. }
            | AssemblyEvent::Delta { message_id, .. }
            | AssemblyEvent::BlockFinished { message_id, .. }
            | AssemblyEvent::BlockFailed { message_id, .. } => Some(message_id),
            AssemblyEvent::StreamError { message_id, .. } => message_id.as_deref(),
            AssemblyEvent::Problem(_) => None,
        }
    }
}

/// One message in flight.
#[derive(Debug)]
struct MessageState {
    parent_tool_use_id: Option<String>,
    start_usage: Option<Box<Usage>>,
    final_usage: Option<Box<Usage>>,
    stop_reason: Option<StopReason>,
    blocks: BTreeMap<u64, BlockState>,
}

impl Assembler {
    fn message_start(
        &mut self,
        line: &StreamEventMessage,
        message: &byre_proto::ApiMessage,
        out: &mut impl Extend<AssemblyEvent>,
    ) {
        let id = match line.api_message_id.as_ref().or(message.id.as_ref()) {
            Some(id) => id.clone(),
            None => {
                self.unnamed += 1;
                format!("unnamed-{}", self.unnamed)
            }
        };
        if self.messages.contains_key(&id) {
            out.extend(Some(AssemblyEvent::Problem(
                AssemblyError::DuplicateMessage { message_id: id },
            )));
            return;
        }
        let parent = line.parent_tool_use_id.clone();
        let usage = message.usage.clone().map(Box::new);
        self.current.insert(parent.clone(), id.clone());
        self.messages.insert(
            id.clone(),
            MessageState {
                parent_tool_use_id: parent.clone(),
                start_usage: usage.clone(),
                final_usage: None,
                stop_reason: None,
                blocks: BTreeMap::new(),
            },
        );
        out.extend(Some(AssemblyEvent::MessageStarted {
            id,
            model: message.model.clone(),
            parent_tool_use_id: parent,
            usage,
        }));
    }

    fn block_start(
        &mut self,
        id: String,
        index: u64,
        block: &ContentBlock,
        out: &mut impl Extend<AssemblyEvent>,
    ) {
        let message = self
            .messages
            .get_mut(&id)
            .expect("routed to a live message");
        if message.blocks.contains_key(&index) {
            out.extend(Some(AssemblyEvent::Problem(
                AssemblyError::DuplicateBlock {
                    message_id: id,
                    index,
                },
            )));
            return;
        }
        let state = BlockState::new(block.clone());
        let kind = state.kind.clone();
        message.blocks.insert(index, state);
        out.extend(Some(AssemblyEvent::BlockStarted {
            message_id: id,
            index,
            kind,
        }));
    }

    fn block_delta(
        &mut self,
        id: String,
        index: u64,
        delta: &Delta,
        out: &mut impl Extend<AssemblyEvent>,
    ) {
        let message = self
            .messages
            .get_mut(&id)
            .expect("routed to a live message");
        let Some(block) = message.blocks.get_mut(&index) else {
            out.extend(Some(AssemblyEvent::Problem(AssemblyError::UnknownBlock {
                message_id: id,
                index,
                event: "content_block_delta",
            })));
            return;
        };
        if !block.apply(delta) {
            out.extend(Some(AssemblyEvent::Problem(AssemblyError::DeltaMismatch {
                message_id: id.clone(),
                index,
                block: block.start.tag().unwrap_or("unknown").to_owned(),
                delta: delta.tag().unwrap_or("unknown").to_owned(),
            })));
        }
        out.extend(Some(AssemblyEvent::Delta {
            message_id: id,
            index,
            delta: delta.clone(),
        }));
    }

    fn block_stop(&mut self, id: String, index: u64, out: &mut impl Extend<AssemblyEvent>) {
        let message = self
            .messages
            .get_mut(&id)
            .expect("routed to a live message");
        let Some(block) = message.blocks.remove(&index) else {
            out.extend(Some(AssemblyEvent::Problem(AssemblyError::UnknownBlock {
                message_id: id,
                index,
                event: "content_block_stop",
            })));
            return;
        };
        out.extend(Some(match block.build(&id, index) {
            Ok(block) => AssemblyEvent::BlockFinished {
                message_id: id,
                index,
                block: Box::new(block),
            },
            Err(error) => AssemblyEvent::BlockFailed {
                message_id: id,
                index,
                error,
            },
        }));
    }

    /// Removes message `id` and reports it finished.
    fn finish_message(
        &mut self,
        id: &str,
        cause: AbandonCause,
        from_block_index: Option<u64>,
    ) -> AssemblyEvent {
        let message = self.messages.remove(id).expect("finishing a live message");
        if self
            .current
            .get(&message.parent_tool_use_id)
            .map(String::as_str)
            == Some(id)
        {
            self.current.remove(&message.parent_tool_use_id);
        }
        let blocks: Vec<PartialBlock> = message
            .blocks
            .into_iter()
            .map(|(index, block)| PartialBlock {
                index,
                kind: block.kind,
                text: match block.acc {
                    Accumulated::Text { text, .. } => text,
                    Accumulated::Thinking { thinking, .. } => thinking,
                    Accumulated::Json(json) => json,
                    Accumulated::Whole => String::new(),
                },
            })
            .collect();
        let abandoned =
            (cause != AbandonCause::OpenAtStop || !blocks.is_empty()).then_some(Abandoned {
                cause,
                from_block_index,
                blocks,
            });
        AssemblyEvent::MessageFinished {
            id: id.to_owned(),
            parent_tool_use_id: message.parent_tool_use_id,
            stop_reason: message.stop_reason,
            usage: message.final_usage.or(message.start_usage),
            abandoned,
        }
    }

    /// Gives up the messages `which` selects, in id order (so the events are deterministic).
    fn give_up(
        &mut self,
        cause: AbandonCause,
        which: impl Fn(&MessageState) -> bool,
    ) -> Vec<AssemblyEvent> {
        let mut ids: Vec<String> = self
            .messages
            .iter()
            .filter(|(_, m)| which(m))
            .map(|(id, _)| id.clone())
            .collect();
        ids.sort();
        ids.iter()
            .map(|id| self.finish_message(id, cause, None))
            .collect()
    }

    /// The message an event (other than `message_start`) belongs to, if in flight.
    fn lookup(&self, line: &StreamEventMessage) -> Option<String> {
        match &line.api_message_id {
            Some(id) => self.messages.contains_key(id).then(|| id.clone()),
            None => self.current.get(&line.parent_tool_use_id).cloned(),
        }
    }

    /// Like [`lookup`](Self::lookup), reporting a problem when there is no such message.
    fn route(
        &self,
        line: &StreamEventMessage,
        event: &'static str,
        out: &mut impl Extend<AssemblyEvent>,
    ) -> Option<String> {
        let found = self.lookup(line);
        if found.is_none() {
            out.extend(Some(AssemblyEvent::Problem(match &line.api_message_id {
                Some(id) => AssemblyError::UnknownMessage {
                    message_id: id.clone(),
                    event,
                },
                None => AssemblyError::NoMessage { event },
            })));
        }
        found
    }
}
