//! The fake model's replies: a message (text, thinking, tool calls, streamed in chunks), an
//! API error, a hang; with their usage and timing.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::DEFAULT_CHUNK_SIZE;

/// How the fake model answers a request.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Reply {
    /// An assistant message, streamed as SSE or sent whole, as the request asks.
    Message(MessageReply),
    /// An API error: the HTTP status with the API's error body.
    Error(ErrorReply),
    /// Sends the response headers (and for streaming requests `message_start` and `ping`),
    /// then never finishes, until the client disconnects or the server shuts down.
    Hang,
    /// Never sends response headers, until the client disconnects or the server shuts down.
    HangBeforeHeaders,
}

impl Reply {
    /// A message with one text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::message(vec![Block::text(text)])
    }

    /// A message with one `tool_use` block (with a generated id).
    pub fn tool_use(name: impl Into<String>, input: Value) -> Self {
        Self::message(vec![Block::tool_use(name, input)])
    }

    /// A message with the given content blocks.
    pub fn message(blocks: Vec<Block>) -> Self {
        Self::Message(MessageReply {
            blocks,
            ..MessageReply::default()
        })
    }

    /// An API error with the given HTTP status, error type and message.
    pub fn error(status: u16, kind: impl Into<String>, message: impl Into<String>) -> Self {
        Self::Error(ErrorReply {
            status,
            kind: Some(kind.into()),
            message: Some(message.into()),
            retry_after: None,
            delay_ms: 0,
        })
    }

    /// A `529 overloaded_error`.
    pub fn overloaded() -> Self {
        Self::error(529, "overloaded_error", "Overloaded")
    }

    /// A `429 rate_limit_error`.
    pub fn rate_limited() -> Self {
        Self::error(429, "rate_limit_error", "Rate limited")
    }

    /// See [`Reply::Hang`].
    pub fn hang() -> Self {
        Self::Hang
    }

    /// See [`Reply::HangBeforeHeaders`].
    pub fn hang_before_headers() -> Self {
        Self::HangBeforeHeaders
    }

    /// Appends a content block (messages only; other replies are returned unchanged).
    #[must_use]
    pub fn with_block(mut self, block: Block) -> Self {
        if let Self::Message(m) = &mut self {
            m.blocks.push(block);
        }
        self
    }

    /// Waits this long before answering (messages and errors; others unchanged).
    #[must_use]
    pub fn delay_ms(mut self, ms: u64) -> Self {
        match &mut self {
            Self::Message(m) => m.delay_ms = ms,
            Self::Error(e) => e.delay_ms = ms,
            Self::Hang | Self::HangBeforeHeaders => {}
        }
        self
    }

    /// Waits this long between streamed deltas (messages only).
    #[must_use]
    pub fn chunk_delay_ms(mut self, ms: u64) -> Self {
        if let Self::Message(m) = &mut self {
            m.chunk_delay_ms = ms;
        }
        self
    }

    /// Characters per streamed delta (messages only; 0 is treated as 1).
    #[must_use]
    pub fn chunk_size(mut self, chars: usize) -> Self {
        if let Self::Message(m) = &mut self {
            m.chunk_size = chars;
        }
        self
    }

    /// Sets the reported token usage (messages only).
    #[must_use]
    pub fn usage(mut self, input_tokens: u64, output_tokens: u64) -> Self {
        if let Self::Message(m) = &mut self {
            m.usage.input_tokens = input_tokens;
            m.usage.output_tokens = output_tokens;
        }
        self
    }

    /// Sets the stop reason (messages only).
    #[must_use]
    pub fn stop_reason(mut self, reason: impl Into<String>) -> Self {
        if let Self::Message(m) = &mut self {
            m.stop_reason = Some(reason.into());
        }
        self
    }

    /// Sets the message id (messages only); by default a unique id is generated.
    #[must_use]
    pub fn message_id(mut self, id: impl Into<String>) -> Self {
        if let Self::Message(m) = &mut self {
            m.id = Some(id.into());
        }
        self
    }

    /// Sets the reported model (messages only); by default the request's model is echoed.
    #[must_use]
    pub fn reply_model(mut self, model: impl Into<String>) -> Self {
        if let Self::Message(m) = &mut self {
            m.model = Some(model.into());
        }
        self
    }
}

/// An assistant message reply.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MessageReply {
    /// The content blocks, in order.
    #[serde(default)]
    pub blocks: Vec<Block>,
    /// The stop reason; by default `tool_use` when a `tool_use` block is present, else `end_turn`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
    /// Milliseconds to wait before answering.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub delay_ms: u64,
    /// Milliseconds to wait before each streamed delta.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub chunk_delay_ms: u64,
    /// Characters per text/thinking delta and per `input_json_delta` piece.
    #[serde(default = "default_chunk_size")]
    pub chunk_size: usize,
    /// The reported token usage.
    #[serde(default)]
    pub usage: Usage,
    /// The message id; generated when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The reported model; the request's model when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// When streamed: the connection breaks after this many deltas (the body ends without
    /// `message_stop`), as a dropped network connection does mid-answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cut_after_deltas: Option<usize>,
}

impl Default for MessageReply {
    fn default() -> Self {
        Self {
            blocks: Vec::new(),
            stop_reason: None,
            delay_ms: 0,
            chunk_delay_ms: 0,
            chunk_size: DEFAULT_CHUNK_SIZE,
            usage: Usage::default(),
            id: None,
            model: None,
            cut_after_deltas: None,
        }
    }
}

impl MessageReply {
    /// The stop reason to report: the explicit one, else `tool_use` or `end_turn`.
    pub fn effective_stop_reason(&self) -> String {
        if let Some(reason) = &self.stop_reason {
            return reason.clone();
        }
        let has_tool_use = self
            .blocks
            .iter()
            .any(|b| matches!(b, Block::ToolUse { .. }));
        if has_tool_use { "tool_use" } else { "end_turn" }.to_string()
    }
}

/// An API error reply.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ErrorReply {
    /// The HTTP status, e.g. 429, 500, 529.
    pub status: u16,
    /// The error type, e.g. `overloaded_error`; derived from the status when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// The error message; a generic one when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Value of the `retry-after` header in seconds; by default `0` for 429 and 529 and no
    /// header otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after: Option<u64>,
    /// Milliseconds to wait before answering.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub delay_ms: u64,
}

impl ErrorReply {
    /// The error type to report.
    pub fn effective_kind(&self) -> String {
        if let Some(kind) = &self.kind {
            return kind.clone();
        }
        match self.status {
            400 => "invalid_request_error",
            401 => "authentication_error",
            403 => "permission_error",
            404 => "not_found_error",
            413 => "request_too_large",
            429 => "rate_limit_error",
            529 => "overloaded_error",
            _ => "api_error",
        }
        .to_string()
    }

    /// The error message to report.
    pub fn effective_message(&self) -> String {
        self.message
            .clone()
            .unwrap_or_else(|| format!("fake model error {}", self.status))
    }

    /// The `retry-after` header value to send, if any.
    pub fn effective_retry_after(&self) -> Option<u64> {
        self.retry_after
            .or(matches!(self.status, 429 | 529).then_some(0))
    }
}

/// A content block of a message reply.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Block {
    /// A text block.
    Text {
        /// The text.
        text: String,
    },
    /// A thinking block.
    Thinking {
        /// The thinking text.
        thinking: String,
        /// The signature (sent as one `signature_delta`).
        #[serde(default = "default_signature")]
        signature: String,
    },
    /// A tool call.
    ToolUse {
        /// The tool-use id; generated (`toolu_fake0001`, ...) when absent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
        /// The tool name.
        name: String,
        /// The tool input.
        #[serde(default = "empty_object")]
        input: Value,
    },
}

impl Block {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text { text: text.into() }
    }

    /// A thinking block with a placeholder signature.
    pub fn thinking(thinking: impl Into<String>) -> Self {
        Self::Thinking {
            thinking: thinking.into(),
            signature: default_signature(),
        }
    }

    /// A tool call whose id the server generates.
    pub fn tool_use(name: impl Into<String>, input: Value) -> Self {
        Self::ToolUse {
            id: None,
            name: name.into(),
            input,
        }
    }

    /// A tool call with a fixed id.
    pub fn tool_use_with_id(id: impl Into<String>, name: impl Into<String>, input: Value) -> Self {
        Self::ToolUse {
            id: Some(id.into()),
            name: name.into(),
            input,
        }
    }
}

/// Token usage reported for a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Usage {
    /// Input tokens (default 100).
    #[serde(default = "default_input_tokens")]
    pub input_tokens: u64,
    /// Output tokens (default 10).
    #[serde(default = "default_output_tokens")]
    pub output_tokens: u64,
    /// Cache-creation input tokens (default 0).
    #[serde(default)]
    pub cache_creation_input_tokens: u64,
    /// Cache-read input tokens (default 0).
    #[serde(default)]
    pub cache_read_input_tokens: u64,
}

impl Default for Usage {
    fn default() -> Self {
        Self {
            input_tokens: default_input_tokens(),
            output_tokens: default_output_tokens(),
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: 0,
        }
    }
}

fn default_chunk_size() -> usize {
    DEFAULT_CHUNK_SIZE
}

fn default_signature() -> String {
    "fake-signature".to_string()
}

fn empty_object() -> Value {
    Value::Object(serde_json::Map::new())
}

fn default_input_tokens() -> u64 {
    100
}

fn default_output_tokens() -> u64 {
    10
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}
