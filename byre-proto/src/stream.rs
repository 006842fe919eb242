//! `stream_event` lines: the raw Anthropic streaming events the CLI passes through with
//! `--include-partial-messages`.

use serde_json::Value;

use crate::content::{ApiMessage, ContentBlock, Usage};
use crate::values::StopReason;
use crate::wire::{wire_enum, wire_struct, Number};

wire_struct! {
    /// A `stream_event` line: one API streaming event and where it belongs.
    pub struct StreamEventMessage {
        /// The API event.
        "event" event: req StreamEvent,
        /// The session.
        "session_id" session_id: opt String,
        /// The Agent call this belongs to, for subagents (`null` at the top level).
        "parent_tool_use_id" parent_tool_use_id: opt String,
        /// This line's id.
        "uuid" uuid: opt String,
        /// The API message id the event belongs to.
        "api_message_id" api_message_id: opt String,
        /// Time to first token (on `message_start`).
        "ttft_ms" ttft_ms: opt Number,
        /// How thinking is displayed (`updates`, ...).
        "thinking_display" thinking_display: opt String,
        /// The user message that started this turn, when it carried a uuid.
        "user_message_uuid" user_message_uuid: opt String,
        /// Every user message merged into this turn.
        "user_message_uuids" user_message_uuids: opt Vec<String>,
        /// Blocks dropped by an interrupt (on `message_stop`).
        "abandoned_blocks" abandoned_blocks: opt AbandonedBlocks,
        /// Why a resumed stream resumed.
        "resume_reason" resume_reason: opt String,
        /// Rows owed to the host (on `message_start`; seen only empty).
        "owed_rows" owed_rows: opt Vec<Value>,
    }
}

wire_struct! {
    /// The blocks an interrupted stream dropped.
    pub struct AbandonedBlocks {
        /// The API message.
        "api_message_id" api_message_id: opt String,
        /// The first dropped block's index.
        "from_block_index" from_block_index: opt u64,
    }
}

wire_enum! {
    /// An Anthropic streaming event, tagged by `type`.
    pub enum StreamEvent tag "type" {
        /// A message starts.
        "message_start" => MessageStart(Box<MessageStartEvent>),
        /// A content block starts.
        "content_block_start" => ContentBlockStart(Box<ContentBlockStartEvent>),
        /// A piece of a content block.
        "content_block_delta" => ContentBlockDelta(ContentBlockDeltaEvent),
        /// A content block ends.
        "content_block_stop" => ContentBlockStop(ContentBlockStopEvent),
        /// The stop reason and final usage.
        "message_delta" => MessageDelta(Box<MessageDeltaEvent>),
        /// The message ends.
        "message_stop" => MessageStop(MessageStopEvent),
        /// A keep-alive.
        "ping" => Ping(PingEvent),
        /// A stream error.
        "error" => Error(StreamErrorEvent),
    }
}

wire_struct! {
    /// `message_start`.
    pub struct MessageStartEvent {
        /// The message, with empty content.
        "message" message: req ApiMessage,
    }
}

wire_struct! {
    /// `content_block_start`.
    pub struct ContentBlockStartEvent {
        /// The block's index in the message.
        "index" index: req u64,
        /// The block, with empty text or input.
        "content_block" content_block: req ContentBlock,
    }
}

wire_struct! {
    /// `content_block_delta`.
    pub struct ContentBlockDeltaEvent {
        /// The block's index in the message.
        "index" index: req u64,
        /// The piece.
        "delta" delta: req Delta,
    }
}

wire_struct! {
    /// `content_block_stop`.
    pub struct ContentBlockStopEvent {
        /// The block's index in the message.
        "index" index: req u64,
    }
}

wire_struct! {
    /// `message_delta`.
    pub struct MessageDeltaEvent {
        /// The stop reason and sequence.
        "delta" delta: req MessageDeltaBody,
        /// Final output usage.
        "usage" usage: opt Usage,
        /// Context management applied.
        "context_management" context_management: any Value,
    }
}

wire_struct! {
    /// The body of `message_delta`.
    pub struct MessageDeltaBody {
        /// Why the model stopped (`null` after an interrupt).
        "stop_reason" stop_reason: opt StopReason,
        /// The stop sequence that matched.
        "stop_sequence" stop_sequence: opt String,
        /// Container information.
        "container" container: any Value,
        /// Details about the stop.
        "stop_details" stop_details: any Value,
    }
}

wire_struct! {
    /// `message_stop`.
    pub struct MessageStopEvent {}
}

wire_struct! {
    /// `ping`.
    pub struct PingEvent {}
}

wire_struct! {
    /// `error` inside a stream.
    pub struct StreamErrorEvent {
        /// The API error object.
        "error" error: req Value,
    }
}

wire_enum! {
    /// A piece of a content block, tagged by `type`.
    pub enum Delta tag "type" {
        /// Text.
        "text_delta" => Text(TextDelta),
        /// Partial JSON of a tool input.
        "input_json_delta" => InputJson(InputJsonDelta),
        /// Thinking text.
        "thinking_delta" => Thinking(ThinkingDelta),
        /// The thinking block's signature.
        "signature_delta" => Signature(SignatureDelta),
        /// A citation for the text block.
        "citations_delta" => Citations(CitationsDelta),
    }
}

wire_struct! {
    /// `text_delta`.
    pub struct TextDelta {
        /// The text to append.
        "text" text: req String,
    }
}

wire_struct! {
    /// `input_json_delta`.
    pub struct InputJsonDelta {
        /// A piece of the tool input's JSON text.
        "partial_json" partial_json: req String,
    }
}

wire_struct! {
    /// `thinking_delta`.
    pub struct ThinkingDelta {
        /// The thinking text to append.
        "thinking" thinking: req String,
    }
}

wire_struct! {
    /// `signature_delta`.
    pub struct SignatureDelta {
        /// The signature.
        "signature" signature: req String,
    }
}

wire_struct! {
    /// `citations_delta`.
    pub struct CitationsDelta {
        /// The citation.
        "citation" citation: req Value,
    }
}
