//! Anthropic API message bodies and their content blocks, as the CLI forwards them.

use std::collections::BTreeMap;

use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;

use crate::text::{json_string, raw_key, sharing_now, RawText, Text, RAW_VALUE};
use crate::values::{CostBasis, ModelProvider, Role, ServiceTier, Speed, StopReason};
use crate::wire::{wire_enum, wire_struct, FindUnknown, Number};

wire_struct! {
    /// An API message as the model produced it (`assistant.message`, `message_start.message`).
    pub struct ApiMessage {
        /// The API's message id (`msg_...`); all `assistant` lines of one message share it.
        "id" id: opt String,
        /// Always `"message"`.
        "type" kind: opt String,
        /// `assistant`.
        "role" role: opt Role,
        /// The model that answered (`<synthetic>` for CLI-made error messages).
        "model" model: opt String,
        /// The content blocks; the CLI sends one `assistant` line per block.
        "content" content: req Vec<ContentBlock>,
        /// Always `null` on `assistant` lines: read it from `message_delta` or the result.
        "stop_reason" stop_reason: opt StopReason,
        /// The stop sequence that matched, if any.
        "stop_sequence" stop_sequence: opt String,
        /// Token usage (on `assistant` lines: the usage at `message_start`).
        "usage" usage: opt Usage,
        /// Container information for code execution.
        "container" container: any Value,
        /// Context management applied by the API.
        "context_management" context_management: any Value,
        /// Diagnostics of a synthetic error message (seen only as `null`).
        "diagnostics" diagnostics: any Value,
        /// Details of why generation stopped (seen only as `null`).
        "stop_details" stop_details: any Value,
    }
}

wire_struct! {
    /// A user (or tool result) API message: `user.message`.
    pub struct UserApiMessage {
        /// `user`.
        "role" role: req Role,
        /// Text, or content blocks (tool results, images, text).
        "content" content: req MessageContent,
    }
}

/// The content of a user message: a plain string or a list of blocks.
#[derive(Debug, Clone, PartialEq)]
pub enum MessageContent {
    /// A plain string.
    Text(Text),
    /// Content blocks.
    Blocks(Vec<ContentBlock>),
}

impl MessageContent {
    /// The text of a plain string, or the concatenated text blocks.
    pub fn text(&self) -> String {
        match self {
            MessageContent::Text(s) => s.to_string(),
            MessageContent::Blocks(blocks) => blocks
                .iter()
                .filter_map(|b| match b {
                    ContentBlock::Text(t) => Some(t.text.as_str()),
                    _ => None,
                })
                .collect(),
        }
    }
}

impl Default for MessageContent {
    fn default() -> Self {
        MessageContent::Text(Text::new())
    }
}

impl Serialize for MessageContent {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            MessageContent::Text(s) => serializer.serialize_str(s),
            MessageContent::Blocks(b) => b.serialize(serializer),
        }
    }
}

impl crate::wire::Direct for MessageContent {
    fn direct(cursor: &mut crate::wire::Cursor<'_>) -> Option<Self> {
        match cursor.peek()? {
            b'"' => crate::wire::Direct::direct(cursor).map(MessageContent::Text),
            b'[' => crate::wire::Direct::direct(cursor).map(MessageContent::Blocks),
            _ => None,
        }
    }
}

impl<'de> Deserialize<'de> for MessageContent {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ContentVisitor;
        impl<'de> Visitor<'de> for ContentVisitor {
            type Value = MessageContent;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a string or a list of content blocks")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(MessageContent::Text(Text::borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(MessageContent::Text(v.into()))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(MessageContent::Text(v.into()))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut blocks = Vec::with_capacity(seq.size_hint().unwrap_or(0));
                while let Some(b) = seq.next_element::<ContentBlock>()? {
                    blocks.push(b);
                }
                Ok(MessageContent::Blocks(blocks))
            }
            fn visit_newtype_struct<D: Deserializer<'de>>(
                self,
                d: D,
            ) -> Result<Self::Value, D::Error> {
                d.deserialize_any(ContentVisitor)
            }
            // The content's JSON text, asked for in a long line (see `Text`): a string is
            // unescaped once into a buffer of its size; blocks are decoded from the text,
            // which is still the line's.
            fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                if !raw_key(&mut map)? {
                    return Err(de::Error::invalid_type(de::Unexpected::Map, &self));
                }
                let raw = map.next_value::<RawText>()?;
                let json = raw.as_str();
                if json.trim_start().starts_with('"') {
                    return json_string(json)
                        .map(MessageContent::Text)
                        .ok_or_else(|| de::Error::invalid_type(de::Unexpected::Map, &self));
                }
                serde_json::from_str(json)
                    .map(MessageContent::Blocks)
                    .map_err(de::Error::custom)
            }
        }
        if sharing_now() {
            deserializer.deserialize_newtype_struct(RAW_VALUE, ContentVisitor)
        } else {
            deserializer.deserialize_any(ContentVisitor)
        }
    }
}

impl FindUnknown for MessageContent {
    fn find_unknown(&self, path: &mut String, out: &mut Vec<String>) {
        if let MessageContent::Blocks(b) = self {
            b.find_unknown(path, out);
        }
    }

    fn find_extra(&self, path: &mut String, out: &mut Vec<String>) {
        if let MessageContent::Blocks(b) = self {
            b.find_extra(path, out);
        }
    }

    fn find_misfits(&self, path: &mut String, out: &mut Vec<String>) {
        if let MessageContent::Blocks(b) = self {
            b.find_misfits(path, out);
        }
    }
}

impl crate::wire::lenient::Absent for MessageContent {
    fn absent() -> Self {
        MessageContent::default()
    }
}

wire_enum! {
    /// One content block of an API message, tagged by `type`.
    pub enum ContentBlock tag "type" {
        /// Text.
        "text" => Text(TextBlock),
        /// The model's visible thinking.
        "thinking" => Thinking(ThinkingBlock),
        /// Thinking the API returned encrypted.
        "redacted_thinking" => RedactedThinking(RedactedThinkingBlock),
        /// A client tool call (`Bash`, `mcp__server__tool`, ...).
        "tool_use" => ToolUse(ToolUseBlock),
        /// A server tool call (web search, code execution, ...).
        "server_tool_use" => ServerToolUse(ToolUseBlock),
        /// An MCP connector tool call made by the API.
        "mcp_tool_use" => McpToolUse(McpToolUseBlock),
        /// A tool's result, in a user message.
        "tool_result" => ToolResult(ToolResultBlock),
        /// An image.
        "image" => Image(ImageBlock),
        /// A document (PDF, plain text, ...).
        "document" => Document(DocumentBlock),
        /// A reference to a deferred tool, in ToolSearch results.
        "tool_reference" => ToolReference(ToolReferenceBlock),
        /// A search result with citations.
        "search_result" => SearchResult(SearchResultBlock),
        /// Results of the server `web_search` tool.
        "web_search_tool_result" => WebSearchToolResult(ServerToolResultBlock),
        /// Results of the server `web_fetch` tool.
        "web_fetch_tool_result" => WebFetchToolResult(ServerToolResultBlock),
        /// Results of the server `code_execution` tool.
        "code_execution_tool_result" => CodeExecutionToolResult(ServerToolResultBlock),
        /// Results of the server `bash_code_execution` tool.
        "bash_code_execution_tool_result" => BashCodeExecutionToolResult(ServerToolResultBlock),
        /// Results of the server `text_editor_code_execution` tool.
        "text_editor_code_execution_tool_result" =>
            TextEditorCodeExecutionToolResult(ServerToolResultBlock),
        /// Results of the server tool-search tools.
        "tool_search_tool_result" => ToolSearchToolResult(ServerToolResultBlock),
        /// Results of the advisor server tool.
        "advisor_tool_result" => AdvisorToolResult(ServerToolResultBlock),
        /// Results of an MCP connector tool call.
        "mcp_tool_result" => McpToolResult(ServerToolResultBlock),
        /// A file uploaded to a code execution container.
        "container_upload" => ContainerUpload(ContainerUploadBlock),
    }
}

wire_struct! {
    /// A text block.
    pub struct TextBlock {
        /// The text.
        "text" text: req Text,
        /// Citations backing the text.
        "citations" citations: opt Vec<Value>,
        /// Prompt-caching marker.
        "cache_control" cache_control: any Value,
    }
}

impl TextBlock {
    /// A text block holding `text`.
    pub fn new(text: impl Into<Text>) -> Self {
        TextBlock {
            text: text.into(),
            citations: None,
            cache_control: None,
            extra: Default::default(),
        }
    }
}

wire_struct! {
    /// A thinking block.
    pub struct ThinkingBlock {
        /// The thinking text (may be empty when the display mode omits it).
        "thinking" thinking: req Text,
        /// The signature that lets the thinking be sent back to the API.
        "signature" signature: opt String,
    }
}

wire_struct! {
    /// An encrypted thinking block.
    pub struct RedactedThinkingBlock {
        /// The encrypted data.
        "data" data: req String,
    }
}

wire_struct! {
    /// A tool call (client or server tool).
    pub struct ToolUseBlock {
        /// The call id (`toolu_...`, `srvtoolu_...`).
        "id" id: req String,
        /// The tool's API name.
        "name" name: req String,
        /// The tool's input.
        "input" input: req Value,
        /// Who made the call (programmatic tool calling).
        "caller" caller: any Value,
        /// Prompt-caching marker.
        "cache_control" cache_control: any Value,
    }
}

wire_struct! {
    /// A tool call the API made to an MCP connector.
    pub struct McpToolUseBlock {
        /// The call id.
        "id" id: req String,
        /// The tool name.
        "name" name: req String,
        /// The MCP server's name.
        "server_name" server_name: req String,
        /// The tool's input.
        "input" input: req Value,
    }
}

wire_struct! {
    /// A tool's result.
    pub struct ToolResultBlock {
        /// The call this answers.
        "tool_use_id" tool_use_id: req String,
        /// The result: a string or content blocks.
        "content" content: opt MessageContent,
        /// Whether the tool failed (or was denied or interrupted).
        "is_error" is_error: opt bool,
        /// Prompt-caching marker.
        "cache_control" cache_control: any Value,
    }
}

wire_struct! {
    /// An image block.
    pub struct ImageBlock {
        /// Where the image comes from.
        "source" source: req MediaSource,
        /// Prompt-caching marker.
        "cache_control" cache_control: any Value,
    }
}

impl ImageBlock {
    /// An image given as base64 data with its media type (`image/png`, ...).
    pub fn base64(media_type: impl Into<String>, data: impl Into<Text>) -> Self {
        ImageBlock {
            source: MediaSource::Base64(Base64Source {
                media_type: media_type.into(),
                data: data.into(),
                extra: Default::default(),
            }),
            cache_control: None,
            extra: Default::default(),
        }
    }
}

wire_struct! {
    /// A document block.
    pub struct DocumentBlock {
        /// Where the document comes from.
        "source" source: req MediaSource,
        /// Its title.
        "title" title: opt String,
        /// Context about it.
        "context" context: opt String,
        /// Citation settings.
        "citations" citations: any Value,
        /// Prompt-caching marker.
        "cache_control" cache_control: any Value,
    }
}

wire_enum! {
    /// The source of an image or document, tagged by `type`.
    pub enum MediaSource tag "type" {
        /// Inline base64 data.
        "base64" => Base64(Base64Source),
        /// A URL.
        "url" => Url(UrlSource),
        /// A file uploaded through the Files API.
        "file" => File(FileSource),
        /// Inline plain text (documents).
        "text" => Text(TextSource),
        /// Content blocks (documents).
        "content" => Content(ContentSource),
    }
}

wire_struct! {
    /// Inline base64 data.
    pub struct Base64Source {
        /// The media type (`image/png`, `application/pdf`, ...).
        "media_type" media_type: req String,
        /// The base64 data.
        "data" data: req Text,
    }
}

wire_struct! {
    /// A URL source.
    pub struct UrlSource {
        /// The URL.
        "url" url: req String,
    }
}

wire_struct! {
    /// A Files API source.
    pub struct FileSource {
        /// The file id.
        "file_id" file_id: req String,
    }
}

wire_struct! {
    /// A plain-text document source.
    pub struct TextSource {
        /// The media type (`text/plain`).
        "media_type" media_type: opt String,
        /// The text.
        "data" data: req Text,
    }
}

wire_struct! {
    /// A document made of content blocks.
    pub struct ContentSource {
        /// The blocks.
        "content" content: req MessageContent,
    }
}

wire_struct! {
    /// A reference to a tool, as ToolSearch returns it.
    pub struct ToolReferenceBlock {
        /// The tool's API name (`mcp__byre__lookup`).
        "tool_name" tool_name: req String,
    }
}

wire_struct! {
    /// A search result block.
    pub struct SearchResultBlock {
        /// Where it came from.
        "source" source: req String,
        /// Its title.
        "title" title: opt String,
        /// Its content.
        "content" content: opt Vec<ContentBlock>,
        /// Citation settings.
        "citations" citations: any Value,
    }
}

wire_struct! {
    /// The result of a server tool call; its content's shape depends on the tool.
    pub struct ServerToolResultBlock {
        /// The call this answers.
        "tool_use_id" tool_use_id: req String,
        /// The tool's result.
        "content" content: any Value,
        /// Whether the tool failed (MCP connector results).
        "is_error" is_error: opt bool,
    }
}

wire_struct! {
    /// A file uploaded to a container.
    pub struct ContainerUploadBlock {
        /// The file id.
        "file_id" file_id: req String,
    }
}

wire_struct! {
    /// Token usage of an API call or a turn.
    pub struct Usage {
        /// Input tokens not read from or written to the cache.
        "input_tokens" input_tokens: opt u64,
        /// Output tokens.
        "output_tokens" output_tokens: opt u64,
        /// Input tokens written to the cache.
        "cache_creation_input_tokens" cache_creation_input_tokens: opt u64,
        /// Input tokens read from the cache.
        "cache_read_input_tokens" cache_read_input_tokens: opt u64,
        /// Output token breakdown (thinking tokens).
        "output_tokens_details" output_tokens_details: opt OutputTokensDetails,
        /// Server tool requests.
        "server_tool_use" server_tool_use: opt ServerToolUsage,
        /// The service tier.
        "service_tier" service_tier: opt ServiceTier,
        /// Cache writes by lifetime.
        "cache_creation" cache_creation: opt CacheCreation,
        /// Where inference ran.
        "inference_geo" inference_geo: opt String,
        /// Per-iteration usage.
        "iterations" iterations: opt Vec<Value>,
        /// The speed mode.
        "speed" speed: opt Speed,
        /// Credit for a fallback (seen only as `null`).
        "fallback_credit" fallback_credit: any Value,
    }
}

wire_struct! {
    /// The breakdown of a call's output tokens (`usage.output_tokens_details`).
    pub struct OutputTokensDetails {
        /// Output tokens spent thinking.
        "thinking_tokens" thinking_tokens: opt u64,
    }
}

wire_struct! {
    /// Requests made by server-side tools in a call (`usage.server_tool_use`).
    pub struct ServerToolUsage {
        /// Web searches.
        "web_search_requests" web_search_requests: opt u64,
        /// Web fetches.
        "web_fetch_requests" web_fetch_requests: opt u64,
    }
}

wire_struct! {
    /// Input tokens written to the cache, by the entry's lifetime (`usage.cache_creation`).
    pub struct CacheCreation {
        /// Written with a one-hour lifetime.
        "ephemeral_1h_input_tokens" ephemeral_1h_input_tokens: opt u64,
        /// Written with a five-minute lifetime.
        "ephemeral_5m_input_tokens" ephemeral_5m_input_tokens: opt u64,
    }
}

wire_struct! {
    /// Cumulative usage and cost of one model in a session (`modelUsage` values).
    pub struct ModelUsage {
        /// Input tokens.
        "inputTokens" input_tokens: opt u64,
        /// Output tokens.
        "outputTokens" output_tokens: opt u64,
        /// Cache reads.
        "cacheReadInputTokens" cache_read_input_tokens: opt u64,
        /// Cache writes.
        "cacheCreationInputTokens" cache_creation_input_tokens: opt u64,
        /// Web searches.
        "webSearchRequests" web_search_requests: opt u64,
        /// Cost in US dollars.
        "costUSD" cost_usd: opt Number,
        /// The model's context window.
        "contextWindow" context_window: opt u64,
        /// The model's output limit.
        "maxOutputTokens" max_output_tokens: opt u64,
        /// Thinking tokens.
        "thinkingTokens" thinking_tokens: opt u64,
        /// Cache writes with a 5-minute lifetime.
        "cacheCreationEphemeral5mInputTokens" cache_creation_ephemeral_5m_input_tokens: opt u64,
        /// Cache writes with a 1-hour lifetime.
        "cacheCreationEphemeral1hInputTokens" cache_creation_ephemeral_1h_input_tokens: opt u64,
        /// The canonical model name.
        "canonicalModel" canonical_model: opt String,
        /// The API provider.
        "provider" provider: opt ModelProvider,
        /// How the cost was computed.
        "costBasis" cost_basis: opt CostBasis,
    }
}

/// `modelUsage`: usage per model name.
pub type ModelUsageMap = BTreeMap<String, ModelUsage>;
