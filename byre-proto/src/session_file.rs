//! The entries of the CLI's own session files (`<config>/projects/<project>/<session>.jsonl`):
//! one typed struct for every kind, with the fields the kinds share and the rest kept in
//! `extra`, so a kind or field a newer CLI adds is kept as it came.

use serde_json::Value;

use crate::wire::{open_enum, wire_struct};

open_enum! {
    /// What a session file entry is (its `type`).
    pub struct EntryKind {
        /// A user message: a prompt, a tool result, a compaction summary.
        USER = "user",
        /// One content block of an assistant message (the CLI writes one entry per block).
        ASSISTANT = "assistant",
        /// A system entry (`compact_boundary`, notes).
        SYSTEM = "system",
        /// Context the CLI attached (environment, skill listings, snapshots).
        ATTACHMENT = "attachment",
        /// Progress of a tool or subagent.
        PROGRESS = "progress",
        /// A title the user gave (`customTitle`).
        CUSTOM_TITLE = "custom-title",
        /// A title the CLI made (`aiTitle`).
        AI_TITLE = "ai-title",
        /// A tag (`tag`; empty clears it).
        TAG = "tag",
        /// A summary (`summary`, `leafUuid`).
        SUMMARY = "summary",
        /// The last prompt of the session (`lastPrompt`, `leafUuid`).
        LAST_PROMPT = "last-prompt",
    }
}

impl EntryKind {
    /// Whether entries of this kind are links of the conversation chain (`uuid`,
    /// `parentUuid`).
    pub fn is_chain(&self) -> bool {
        [
            EntryKind::USER,
            EntryKind::ASSISTANT,
            EntryKind::SYSTEM,
            EntryKind::ATTACHMENT,
            EntryKind::PROGRESS,
        ]
        .contains(self)
    }
}

wire_struct! {
    /// One line of a session file.
    pub struct SessionEntry {
        /// What it is.
        "type" kind: req EntryKind,
        /// Its id (chain entries).
        "uuid" uuid: opt String,
        /// The entry before it in the conversation (`null` at a root).
        "parentUuid" parent_uuid: opt String,
        /// At a compaction boundary: the last entry before it.
        "logicalParentUuid" logical_parent_uuid: opt String,
        /// Whether it belongs to a subagent's side chain.
        "isSidechain" is_sidechain: opt bool,
        /// The session it belongs to.
        "sessionId" session_id: opt String,
        /// When it was written (ISO 8601).
        "timestamp" timestamp: opt String,
        /// The working directory.
        "cwd" cwd: opt String,
        /// The git branch (`HEAD` outside a branch).
        "gitBranch" git_branch: opt String,
        /// The CLI's version.
        "version" version: opt String,
        /// How the CLI was started (`cli`, `sdk-cli`, ...).
        "entrypoint" entrypoint: opt String,
        /// The subagent that wrote it.
        "agentId" agent_id: opt String,
        /// Not part of what the user said (caveats, notes).
        "isMeta" is_meta: opt bool,
        /// The summary that follows a compaction boundary.
        "isCompactSummary" is_compact_summary: opt bool,
        /// A system entry's kind (`compact_boundary`, ...).
        "subtype" subtype: opt String,
        /// The message (`{role, content, ...}`; an assistant's is the API message).
        "message" message: any Value,
        /// A `custom-title` entry's title.
        "customTitle" custom_title: opt String,
        /// An `ai-title` entry's title.
        "aiTitle" ai_title: opt String,
        /// A `tag` entry's tag.
        "tag" tag: opt String,
        /// A `summary` entry's text.
        "summary" summary: opt String,
        /// A `last-prompt` entry's prompt.
        "lastPrompt" last_prompt: opt String,
        /// The chain leaf a `summary` or `last-prompt` entry belongs to.
        "leafUuid" leaf_uuid: opt String,
        /// Where a forked session came from (`{sessionId, messageUuid}`).
        "forkedFrom" forked_from: any Value,
    }
}

impl SessionEntry {
    /// Decodes one line of a session file. A lone surrogate escape (a string the CLI cut
    /// inside a surrogate pair) decodes as U+FFFD, as in
    /// [`CliMessage::from_slice`](crate::CliMessage::from_slice).
    pub fn from_line(line: &str) -> Result<SessionEntry, serde_json::Error> {
        serde_json::from_str(line).or_else(|e| {
            match crate::surrogates::well_formed(line.as_bytes()) {
                Some(fixed) => serde_json::from_slice(&fixed).map_err(|_| e),
                None => Err(e),
            }
        })
    }

    /// The message's text: a string content, or its text blocks joined by newlines.
    pub fn text(&self) -> Option<String> {
        let content = self.message.as_ref()?.get("content")?;
        match content {
            Value::String(text) => Some(text.clone()),
            Value::Array(blocks) => {
                let texts: Vec<&str> = blocks
                    .iter()
                    .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
                    .filter_map(|b| b.get("text").and_then(Value::as_str))
                    .collect();
                (!texts.is_empty()).then(|| texts.join("\n"))
            }
            _ => None,
        }
    }

    /// Whether it is a user message carrying tool results (not something the user typed).
    pub fn is_tool_result(&self) -> bool {
        let blocks = self
            .message
            .as_ref()
            .and_then(|m| m.get("content"))
            .and_then(Value::as_array);
        blocks.is_some_and(|blocks| {
            blocks
                .iter()
                .any(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
        })
    }
}
