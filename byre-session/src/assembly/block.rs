//! One block in assembly: what its deltas added up to, and the block they build.

use byre_proto::{ContentBlock, Delta};
use serde_json::Value;

use super::{AssemblyError, BlockKind};

impl BlockKind {
    /// The kind of a block as `content_block_start` gives it.
    pub fn of(block: &ContentBlock) -> Self {
        match block {
            ContentBlock::Text(_) => BlockKind::Text,
            ContentBlock::Thinking(_) => BlockKind::Thinking,
            ContentBlock::ToolUse(b) => BlockKind::ToolUse {
                id: b.id.clone(),
                name: b.name.clone(),
            },
            ContentBlock::ServerToolUse(b) => BlockKind::ServerToolUse {
                id: b.id.clone(),
                name: b.name.clone(),
            },
            ContentBlock::McpToolUse(b) => BlockKind::McpToolUse {
                id: b.id.clone(),
                name: b.name.clone(),
                server_name: b.server_name.clone(),
            },
            other => BlockKind::Whole(other.tag().map(str::to_owned)),
        }
    }

    /// The tool call id, for tool calls.
    pub fn tool_use_id(&self) -> Option<&str> {
        match self {
            BlockKind::ToolUse { id, .. }
            | BlockKind::ServerToolUse { id, .. }
            | BlockKind::McpToolUse { id, .. } => Some(id),
            _ => None,
        }
    }
}

/// One open block.
#[derive(Debug, Clone)]
pub(super) struct BlockState {
    /// The block as `content_block_start` gave it (empty text or input).
    pub(super) start: ContentBlock,
    pub(super) kind: BlockKind,
    pub(super) acc: Accumulated,
}

/// What the deltas of a block added up to so far.
#[derive(Debug, Clone)]
pub(super) enum Accumulated {
    Text {
        text: String,
        citations: Option<Vec<Value>>,
    },
    Thinking {
        thinking: String,
        signature: Option<String>,
    },
    Json(String),
    Whole,
}

impl BlockState {
    pub(super) fn new(start: ContentBlock) -> Self {
        let acc = match &start {
            ContentBlock::Text(b) => Accumulated::Text {
                text: b.text.to_string(),
                citations: b.citations.clone(),
            },
            ContentBlock::Thinking(b) => Accumulated::Thinking {
                thinking: b.thinking.to_string(),
                signature: b.signature.clone(),
            },
            ContentBlock::ToolUse(_)
            | ContentBlock::ServerToolUse(_)
            | ContentBlock::McpToolUse(_) => Accumulated::Json(String::new()),
            _ => Accumulated::Whole,
        };
        BlockState {
            kind: BlockKind::of(&start),
            start,
            acc,
        }
    }

    /// Adds a delta; `false` when the delta does not fit the block (it is then ignored).
    pub(super) fn apply(&mut self, delta: &Delta) -> bool {
        match (&mut self.acc, delta) {
            (Accumulated::Text { text, .. }, Delta::Text(d)) => text.push_str(&d.text),
            (Accumulated::Text { citations, .. }, Delta::Citations(d)) => {
                citations
                    .get_or_insert_with(Vec::new)
                    .push(d.citation.clone());
            }
            (Accumulated::Thinking { thinking, .. }, Delta::Thinking(d)) => {
                thinking.push_str(&d.thinking);
            }
            (Accumulated::Thinking { signature, .. }, Delta::Signature(d)) => {
                signature
                    .get_or_insert_with(String::new)
                    .push_str(&d.signature);
            }
            (Accumulated::Json(json), Delta::InputJson(d)) => json.push_str(&d.partial_json),
            // A delta byre does not know extends nothing, but it is not the CLI's mistake.
            (_, Delta::Unknown(_)) => {}
            _ => return false,
        }
        true
    }

    /// The block as assembled: the start block with its text, thinking or input filled in.
    pub(super) fn build(self, message_id: &str, index: u64) -> Result<ContentBlock, AssemblyError> {
        let mut block = self.start;
        match (&mut block, self.acc) {
            (ContentBlock::Text(b), Accumulated::Text { text, citations }) => {
                b.text = text.into();
                b.citations = citations;
            }
            (
                ContentBlock::Thinking(b),
                Accumulated::Thinking {
                    thinking,
                    signature,
                },
            ) => {
                b.thinking = thinking.into();
                b.signature = signature;
            }
            (ContentBlock::ToolUse(b), Accumulated::Json(json))
            | (ContentBlock::ServerToolUse(b), Accumulated::Json(json)) => {
                if let Some(input) = parse_input(json, message_id, index, &b.id)? {
                    b.input = input;
                }
            }
            (ContentBlock::McpToolUse(b), Accumulated::Json(json)) => {
                if let Some(input) = parse_input(json, message_id, index, &b.id)? {
                    b.input = input;
                }
            }
            _ => {}
        }
        Ok(block)
    }
}

/// Parses the assembled input JSON of a tool call; `None` when no piece came (the input of
/// the start block, `{}`, stands).
fn parse_input(
    json: String,
    message_id: &str,
    index: u64,
    tool_use_id: &str,
) -> Result<Option<Value>, AssemblyError> {
    if json.trim().is_empty() {
        return Ok(None);
    }
    serde_json::from_str(&json)
        .map(Some)
        .map_err(|e| AssemblyError::InvalidToolInput {
            message_id: message_id.to_owned(),
            index,
            tool_use_id: tool_use_id.to_owned(),
            error: e.to_string(),
            partial_json: json,
        })
}

/// Whether an open block (its start) and a block of an `assistant` line are the same slot:
/// the same type and, for tool calls, the same id.
pub(super) fn same_slot(start: &ContentBlock, line: &ContentBlock) -> bool {
    if start.tag() != line.tag() {
        return false;
    }
    match (start, line) {
        (ContentBlock::ToolUse(a), ContentBlock::ToolUse(b))
        | (ContentBlock::ServerToolUse(a), ContentBlock::ServerToolUse(b)) => a.id == b.id,
        (ContentBlock::McpToolUse(a), ContentBlock::McpToolUse(b)) => a.id == b.id,
        _ => true,
    }
}
