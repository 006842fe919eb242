//! The Messages API wire format the fake model speaks: SSE event streams, whole messages and
//! error bodies.
//!
//! Every JSON object is written from small serializable types whose field order is the wire
//! order (`type` first), so the output does not depend on `serde_json` features.

use serde::Serialize;
use serde_json::Value;

use crate::script::{Block, Usage};

/// A fully resolved assistant message, ready to be sent.
#[derive(Clone, Debug, PartialEq)]
pub struct AssistantMessage {
    /// The message id, e.g. `msg_fake...`.
    pub id: String,
    /// The model name reported back.
    pub model: String,
    /// The content blocks; `tool_use` ids should be set (a missing id is sent as `""`).
    pub blocks: Vec<Block>,
    /// The stop reason, e.g. `end_turn` or `tool_use`.
    pub stop_reason: String,
    /// The token usage.
    pub usage: Usage,
}

/// One server-sent event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SseEvent {
    /// The event name (the `event:` line), equal to the data's `type`.
    pub event: &'static str,
    /// The JSON data (the `data:` line).
    pub data: String,
}

impl SseEvent {
    fn new(event: &Event<'_>) -> Self {
        Self {
            event: event.name(),
            data: to_json(event),
        }
    }

    /// The event in SSE framing: `event: NAME\ndata: JSON\n\n`.
    pub fn encode(&self) -> String {
        format!("event: {}\ndata: {}\n\n", self.event, self.data)
    }

    /// Whether this is a `content_block_delta` event.
    pub fn is_delta(&self) -> bool {
        self.event == "content_block_delta"
    }
}

/// The events that stream `message`: `message_start`, `ping`, then for each block
/// `content_block_start`, its deltas (at most `chunk_size` characters each; 0 counts as 1)
/// and `content_block_stop`, then `message_delta` and `message_stop`.
pub fn stream_events(message: &AssistantMessage, chunk_size: usize) -> Vec<SseEvent> {
    let mut events = prelude(message);
    for (index, block) in message.blocks.iter().enumerate() {
        let start = match block {
            Block::Text { .. } => WireBlock::Text { text: "" },
            Block::Thinking { .. } => WireBlock::Thinking {
                thinking: "",
                signature: "",
            },
            Block::ToolUse { id, name, .. } => WireBlock::ToolUse {
                id: id.as_deref().unwrap_or(""),
                name,
                input: EMPTY_INPUT,
            },
        };
        events.push(SseEvent::new(&Event::ContentBlockStart {
            index,
            content_block: start,
        }));
        let mut delta = |delta: Delta<'_>| {
            events.push(SseEvent::new(&Event::ContentBlockDelta { index, delta }));
        };
        match block {
            Block::Text { text } => {
                for piece in chunks(text, chunk_size) {
                    delta(Delta::Text { text: piece });
                }
            }
            Block::Thinking {
                thinking,
                signature,
            } => {
                for piece in chunks(thinking, chunk_size) {
                    delta(Delta::Thinking { thinking: piece });
                }
                delta(Delta::Signature { signature });
            }
            Block::ToolUse { input, .. } => {
                let json = to_json(input);
                for piece in chunks(&json, chunk_size) {
                    delta(Delta::InputJson {
                        partial_json: piece,
                    });
                }
            }
        }
        events.push(SseEvent::new(&Event::ContentBlockStop { index }));
    }
    events.push(SseEvent::new(&Event::MessageDelta {
        delta: StopDelta {
            stop_reason: &message.stop_reason,
            stop_sequence: None,
        },
        usage: OutputUsage {
            output_tokens: message.usage.output_tokens,
        },
    }));
    events.push(SseEvent::new(&Event::MessageStop));
    events
}

/// The first events of every stream: `message_start` (with empty content) and one `ping`.
pub fn prelude(message: &AssistantMessage) -> Vec<SseEvent> {
    vec![
        SseEvent::new(&Event::MessageStart {
            message: WireMessage {
                id: &message.id,
                kind: "message",
                role: "assistant",
                model: &message.model,
                content: Vec::new(),
                stop_reason: None,
                stop_sequence: None,
                usage: WireUsage {
                    output_tokens: 1,
                    ..WireUsage::from(&message.usage)
                },
            },
        }),
        SseEvent::new(&Event::Ping),
    ]
}

/// The whole SSE body for `message` (all of [`stream_events`], encoded and joined).
pub fn encode_stream(message: &AssistantMessage, chunk_size: usize) -> String {
    stream_events(message, chunk_size)
        .iter()
        .map(SseEvent::encode)
        .collect()
}

/// The non-streaming reply: the complete message as JSON.
pub fn message_json(message: &AssistantMessage) -> String {
    let content = message
        .blocks
        .iter()
        .map(|block| match block {
            Block::Text { text } => WireBlock::Text { text },
            Block::Thinking {
                thinking,
                signature,
            } => WireBlock::Thinking {
                thinking,
                signature,
            },
            Block::ToolUse { id, name, input } => WireBlock::ToolUse {
                id: id.as_deref().unwrap_or(""),
                name,
                input: WireInput::Value(input),
            },
        })
        .collect();
    to_json(&WireMessage {
        id: &message.id,
        kind: "message",
        role: "assistant",
        model: &message.model,
        content,
        stop_reason: Some(&message.stop_reason),
        stop_sequence: None,
        usage: WireUsage::from(&message.usage),
    })
}

/// The API's error body: `{"type":"error","error":{"type":KIND,"message":MESSAGE}}`.
pub fn error_json(kind: &str, message: &str) -> String {
    to_json(&ErrorBody {
        kind: "error",
        error: ErrorDetail { kind, message },
    })
}

/// The `count_tokens` reply: `{"input_tokens":N}`.
pub fn count_tokens_json(input_tokens: u64) -> String {
    to_json(&CountTokens { input_tokens })
}

/// Splits `text` into pieces of at most `size` characters (never inside a character).
fn chunks(text: &str, size: usize) -> Vec<&str> {
    let size = size.max(1);
    let mut pieces = Vec::new();
    let mut start = 0;
    let mut count = 0;
    for (at, _) in text.char_indices() {
        if count == size {
            pieces.push(&text[start..at]);
            start = at;
            count = 0;
        }
        count += 1;
    }
    if start < text.len() {
        pieces.push(&text[start..]);
    }
    pieces
}

fn to_json<T: Serialize + ?Sized>(value: &T) -> String {
    // These types hold only strings, numbers and JSON values: serializing cannot fail.
    serde_json::to_string(value).unwrap_or_default()
}

const EMPTY_INPUT: WireInput<'static> = WireInput::Empty {};

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Event<'a> {
    MessageStart {
        message: WireMessage<'a>,
    },
    ContentBlockStart {
        index: usize,
        content_block: WireBlock<'a>,
    },
    Ping,
    ContentBlockDelta {
        index: usize,
        delta: Delta<'a>,
    },
    ContentBlockStop {
        index: usize,
    },
    MessageDelta {
        delta: StopDelta<'a>,
        usage: OutputUsage,
    },
    MessageStop,
}

impl Event<'_> {
    fn name(&self) -> &'static str {
        match self {
            Event::MessageStart { .. } => "message_start",
            Event::ContentBlockStart { .. } => "content_block_start",
            Event::Ping => "ping",
            Event::ContentBlockDelta { .. } => "content_block_delta",
            Event::ContentBlockStop { .. } => "content_block_stop",
            Event::MessageDelta { .. } => "message_delta",
            Event::MessageStop => "message_stop",
        }
    }
}

#[derive(Serialize)]
struct WireMessage<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    role: &'static str,
    model: &'a str,
    content: Vec<WireBlock<'a>>,
    stop_reason: Option<&'a str>,
    stop_sequence: Option<&'a str>,
    usage: WireUsage,
}

#[derive(Serialize)]
struct WireUsage {
    input_tokens: u64,
    output_tokens: u64,
    cache_creation_input_tokens: u64,
    cache_read_input_tokens: u64,
}

impl From<&Usage> for WireUsage {
    fn from(u: &Usage) -> Self {
        Self {
            input_tokens: u.input_tokens,
            output_tokens: u.output_tokens,
            cache_creation_input_tokens: u.cache_creation_input_tokens,
            cache_read_input_tokens: u.cache_read_input_tokens,
        }
    }
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum WireBlock<'a> {
    Text {
        text: &'a str,
    },
    Thinking {
        thinking: &'a str,
        signature: &'a str,
    },
    ToolUse {
        id: &'a str,
        name: &'a str,
        input: WireInput<'a>,
    },
}

#[derive(Serialize)]
#[serde(untagged)]
enum WireInput<'a> {
    Empty {},
    Value(&'a Value),
}

#[derive(Serialize)]
#[serde(tag = "type")]
enum Delta<'a> {
    #[serde(rename = "text_delta")]
    Text { text: &'a str },
    #[serde(rename = "input_json_delta")]
    InputJson { partial_json: &'a str },
    #[serde(rename = "thinking_delta")]
    Thinking { thinking: &'a str },
    #[serde(rename = "signature_delta")]
    Signature { signature: &'a str },
}

#[derive(Serialize)]
struct StopDelta<'a> {
    stop_reason: &'a str,
    stop_sequence: Option<&'a str>,
}

#[derive(Serialize)]
struct OutputUsage {
    output_tokens: u64,
}

#[derive(Serialize)]
struct ErrorBody<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    error: ErrorDetail<'a>,
}

#[derive(Serialize)]
struct ErrorDetail<'a> {
    #[serde(rename = "type")]
    kind: &'a str,
    message: &'a str,
}

#[derive(Serialize)]
struct CountTokens {
    input_tokens: u64,
}

#[cfg(test)]
mod tests {
    use super::chunks;

    #[test]
    fn chunks_split_on_characters() {
        assert_eq!(chunks("abcde", 2), ["ab", "cd", "e"]);
        assert_eq!(chunks("héllo", 3), ["hél", "lo"]);
        assert_eq!(chunks("", 3), Vec::<&str>::new());
        assert_eq!(chunks("ab", 0), ["a", "b"]);
    }
}
