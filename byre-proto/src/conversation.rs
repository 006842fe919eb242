//! The conversation messages: `assistant`, `user` and `result`.

use serde_json::Value;

use crate::content::{
    ApiMessage, ContentBlock, ImageBlock, MessageContent, ModelUsageMap, TextBlock,
};
use crate::content::{Usage, UserApiMessage};
use crate::text::Text;
use crate::values::{AssistantError, FastModeDisabledReason, FastModeState, Priority};
use crate::values::{ResultSubtype, Role, StopReason, TerminalReason};
use crate::wire::{wire_struct, Number};

wire_struct! {
    /// An `assistant` line: one content block of a model message (the CLI sends one line per
    /// block; the lines of one message share `message.id`).
    pub struct AssistantMessage {
        /// The API message, holding one block.
        "message" message: req ApiMessage,
        /// The Agent call this belongs to, for subagents (`null` at the top level).
        "parent_tool_use_id" parent_tool_use_id: opt String,
        /// The session.
        "session_id" session_id: opt String,
        /// This line's id; `--resume-session-at` takes it.
        "uuid" uuid: opt String,
        /// When it was written.
        "timestamp" timestamp: opt String,
        /// Set on messages the CLI made up for an API error (`model: "<synthetic>"`).
        "error" error: opt AssistantError,
        /// Marks CLI-made API error messages.
        "is_api_error_message" is_api_error_message: opt bool,
        /// The API request id.
        "request_id" request_id: opt String,
        /// The user message that started this turn, when it carried a uuid.
        "user_message_uuid" user_message_uuid: opt String,
        /// Every user message merged into this turn.
        "user_message_uuids" user_message_uuids: opt Vec<String>,
        /// Display names of MCP tools called in this block.
        "tool_use_meta" tool_use_meta: opt Vec<ToolUseMeta>,
        /// How long the model thought.
        "thinking_duration_ms" thinking_duration_ms: opt Number,
        /// How thinking is displayed.
        "thinking_display" thinking_display: opt String,
        /// The subagent that wrote it.
        "agent_id" agent_id: opt String,
        /// The subagent's type.
        "subagent_type" subagent_type: opt String,
        /// The HTTP status of the API error this synthetic message reports.
        "api_error_status" api_error_status: opt Number,
        /// The type of that API error (`invalid_request_error`, ...).
        "api_error_type" api_error_type: opt String,
        /// The kind of the error (`no_credential`, `connection_failed`, `max_output_tokens`,
        /// ...; CLI 2.1.337 and later; an open set).
        "api_error" api_error: opt String,
        /// The subagent's task.
        "task_description" task_description: opt String,
        /// Why a resumed turn resumed.
        "resume_reason" resume_reason: opt String,
        /// Set when resumed from incomplete thinking.
        "resumed_from_incomplete_thinking" resumed_from_incomplete_thinking: opt bool,
        /// Earlier lines this one replaces.
        "supersedes" supersedes: opt Vec<String>,
        /// Set when the message was aborted.
        "aborted" aborted: opt bool,
        /// `/context` output twin.
        "context_usage" context_usage: any Value,
        /// `/usage` output twin.
        "usage_report" usage_report: any Value,
    }
}

wire_struct! {
    /// Display information for an MCP tool call.
    pub struct ToolUseMeta {
        /// The tool call id.
        "id" id: opt String,
        /// The tool's display name.
        "display_name" display_name: opt String,
        /// The server's display name.
        "server_display_name" server_display_name: opt String,
        /// The tool's name on its server.
        "tool_name" tool_name: opt String,
    }
}

wire_struct! {
    /// A `user` line, in either direction.
    ///
    /// Written by the host, it is a prompt (string or blocks). Written by the CLI, it is a
    /// tool result, a synthetic message ("[Request interrupted by user]", Stop hook feedback),
    /// a subagent's prompt, or an echo (`isReplay`).
    pub struct UserMessage {
        /// The API message.
        "message" message: req UserApiMessage,
        /// The Agent call this belongs to (`null` at the top level).
        "parent_tool_use_id" parent_tool_use_id: opt String,
        /// The session (`""` from a host that does not know it yet).
        "session_id" session_id: opt String,
        /// The message id: from a host it turns on `command_lifecycle` and
        /// `user_message_uuid(s)` correlation.
        "uuid" uuid: opt String,
        /// When it was written.
        "timestamp" timestamp: opt String,
        /// Made by the CLI, not the user.
        "isSynthetic" is_synthetic: opt bool,
        /// An echo of input (`--replay-user-messages`, or after `set_model`).
        "isReplay" is_replay: opt bool,
        /// The tool's structured output (its shape depends on the tool; errors are a string).
        "tool_use_result" tool_use_result: any Value,
        /// Permission decisions behind each tool result.
        "tool_result_meta" tool_result_meta: opt Vec<ToolResultMeta>,
        /// The slash command whose output this message carries (CLI 2.1.337 and later).
        "local_command_run" local_command_run: opt LocalCommandRun,
        /// Queue priority of a host message.
        "priority" priority: opt Priority,
        /// Who produced it.
        "origin" origin: opt Origin,
        /// `false` appends the message without starting a turn.
        "shouldQuery" should_query: opt bool,
        /// No `@path` expansion or slash-command dispatch.
        "client_composed" client_composed: opt bool,
        /// The subagent that wrote it.
        "agent_id" agent_id: opt String,
        /// The subagent's type.
        "subagent_type" subagent_type: opt String,
        /// The subagent's task.
        "task_description" task_description: opt String,
        /// Files attached to an echoed message.
        "file_attachments" file_attachments: any Value,
        /// The assistant message a safety classifier stopped, on the synthetic message that
        /// tells the model so.
        "refused_message_id" refused_message_id: opt String,
        /// `true` on each synthetic message the CLI writes to ask the same model again after
        /// a refusal: the re-ask itself, and the `tool_result` of each call the refused
        /// answer left unfinished. Since CLI 2.1.332.
        "refusal_retry" refusal_retry: opt bool,
    }
}

impl UserMessage {
    /// A prompt as the host sends it: text content, `parent_tool_use_id: null`, `session_id: ""`.
    pub fn prompt(text: impl Into<Text>) -> Self {
        Self::with_content(MessageContent::Text(text.into()))
    }

    /// A prompt with images (base64 `(media_type, data)` pairs) followed by text, the order
    /// the CLI expects.
    pub fn with_images<M: Into<String>, D: Into<Text>>(
        images: impl IntoIterator<Item = (M, D)>,
        text: impl Into<Text>,
    ) -> Self {
        let mut blocks: Vec<ContentBlock> = images
            .into_iter()
            .map(|(media_type, data)| ContentBlock::Image(ImageBlock::base64(media_type, data)))
            .collect();
        blocks.push(ContentBlock::Text(TextBlock::new(text)));
        Self::with_content(MessageContent::Blocks(blocks))
    }

    /// A prompt with the given content, shaped as the host sends it.
    pub fn with_content(content: MessageContent) -> Self {
        let mut message = UserMessage {
            message: UserApiMessage {
                role: Role::USER,
                content,
                extra: Default::default(),
            },
            parent_tool_use_id: None,
            session_id: Some(String::new()),
            uuid: None,
            timestamp: None,
            is_synthetic: None,
            is_replay: None,
            tool_use_result: None,
            tool_result_meta: None,
            local_command_run: None,
            priority: None,
            origin: None,
            should_query: None,
            client_composed: None,
            agent_id: None,
            subagent_type: None,
            task_description: None,
            file_attachments: None,
            refused_message_id: None,
            refusal_retry: None,
            extra: Default::default(),
        };
        message.set_null("parent_tool_use_id", true);
        message
    }

    /// Sets the message uuid.
    pub fn uuid(mut self, uuid: impl Into<String>) -> Self {
        self.uuid = Some(uuid.into());
        self
    }
}

wire_struct! {
    /// The permission decision behind one tool result.
    pub struct ToolResultMeta {
        /// The tool call id.
        "id" id: opt String,
        /// How the call was allowed or rejected.
        "permission_decision" permission_decision: opt PermissionDecision,
        /// Why the tool did not run (`user-rejected`, ...).
        "non_execution_kind" non_execution_kind: opt String,
        /// Who refused the call (`hook`; CLI 2.1.337 and later).
        "refused_by" refused_by: opt String,
    }
}

wire_struct! {
    /// A slash command the CLI ran locally.
    pub struct LocalCommandRun {
        /// The command, without the slash (`model`).
        "command" command: opt String,
        /// Its arguments as typed.
        "args" args: opt String,
    }
}

wire_struct! {
    /// How a tool call was allowed or rejected.
    pub struct PermissionDecision {
        /// `accept` or `reject`.
        "decision" decision: opt String,
        /// Who decided (`config`, `hook`, `user_temporary`, `user_reject`, ...).
        "source" source: opt String,
        /// The kind of reason (`mode`, `rule`, ...).
        "reason_type" reason_type: opt String,
    }
}

wire_struct! {
    /// Who produced a message or started a turn (`origin`).
    pub struct Origin {
        /// `human`, `task-notification`, `channel`, `peer`, `coordinator`, ...
        "kind" kind: req String,
        /// What produced it (`session-task`).
        "producer" producer: opt String,
        /// The task run that finished.
        "runId" run_id: opt String,
        /// A finer kind.
        "subkind" subkind: opt String,
    }
}

wire_struct! {
    /// A `result` line: the end of a turn.
    ///
    /// On a normal turn `type` is about the 19th key; on a start-up failure it is first.
    pub struct ResultMessage {
        /// `success` or an `error_*` subtype.
        "subtype" subtype: req ResultSubtype,
        /// Whether the turn ended in error (an API error can give `success` with `true`).
        "is_error" is_error: opt bool,
        /// Wall time of the turn.
        "duration_ms" duration_ms: opt Number,
        /// Time spent in API calls.
        "duration_api_ms" duration_api_ms: opt Number,
        /// Model turns in this turn (a Stop-hook block adds one).
        "num_turns" num_turns: opt u64,
        /// The final text.
        "result" result: opt String,
        /// Why the last model call stopped.
        "stop_reason" stop_reason: opt StopReason,
        /// The session.
        "session_id" session_id: opt String,
        /// Cost so far, cumulative for the session (carries across resume and fork).
        "total_cost_usd" total_cost_usd: opt Number,
        /// Usage of this turn only.
        "usage" usage: opt Usage,
        /// Usage per model, cumulative for the session.
        "modelUsage" model_usage: opt ModelUsageMap,
        /// Usage per model for this turn.
        "model_usage_since_last_result" model_usage_since_last_result: opt ModelUsageMap,
        /// Tool calls that were denied.
        "permission_denials" permission_denials: opt Vec<PermissionDenial>,
        /// Why the run ended.
        "terminal_reason" terminal_reason: opt TerminalReason,
        /// Error lines (error subtypes).
        "errors" errors: opt Vec<String>,
        /// The HTTP status of an API error.
        "api_error_status" api_error_status: opt Number,
        /// The type of that API error (`invalid_request_error`, `rate_limit_error`, ...).
        "api_error_type" api_error_type: opt String,
        /// The kind of the API error that ended the turn (`no_credential`,
        /// `connection_failed`, ...; CLI 2.1.337 and later; an open set).
        "api_error" api_error: opt String,
        /// Set on turns the CLI started by itself (`kind: "task-notification"`).
        "origin" origin: opt Origin,
        /// This line's id.
        "uuid" uuid: opt String,
        /// When the CLI wrote this line (RFC 3339, UTC; CLI 2.1.337 and later).
        "written_at" written_at: opt String,
        /// Results so far in this process, from 0.
        "result_index" result_index: opt u64,
        /// Queued turns.
        "queued_turn_count" queued_turn_count: opt u64,
        /// The user message that started this turn.
        "user_message_uuid" user_message_uuid: opt String,
        /// Every user message merged into this turn.
        "user_message_uuids" user_message_uuids: opt Vec<String>,
        /// With partial messages on: the API message ids (`msg_...`) of the main
        /// conversation's responses that began to stream in this turn, in the order they
        /// began; one with no `assistant` message was cut off or empty. Empty where none
        /// began; absent where the turn called no model, without partial messages, and
        /// before CLI 2.1.332.
        "begun_message_ids" begun_message_ids: opt Vec<String>,
        /// Structured output (`--json-schema`).
        "structured_output" structured_output: any Value,
        /// A tool call deferred by a hook.
        "deferred_tool_use" deferred_tool_use: any Value,
        /// Fast mode state.
        "fast_mode_state" fast_mode_state: opt FastModeState,
        /// Why fast mode is off.
        "fast_mode_disabled_reason" fast_mode_disabled_reason: opt FastModeDisabledReason,
        /// Subagent counters.
        "subagent_stats" subagent_stats: opt SubagentStats,
        /// Safety stops.
        "safety_stops" safety_stops: opt Number,
        /// Time to first token.
        "ttft_ms" ttft_ms: opt Number,
        /// Time to first streamed token.
        "ttft_stream_ms" ttft_stream_ms: opt Number,
        /// Time until the request was sent.
        "time_to_request_ms" time_to_request_ms: opt Number,
        /// Time to the first content frame.
        "first_content_frame_ms" first_content_frame_ms: opt Number,
        /// Wall-clock time the first request was sent.
        "request_sent_wall_ms" request_sent_wall_ms: opt Number,
        /// Input tokens of the first request.
        "first_request_input_tokens" first_request_input_tokens: opt u64,
        /// Cache reads of the first request.
        "first_request_cache_read_input_tokens" first_request_cache_read_input_tokens: opt u64,
        /// Why start-up failed.
        "startup_failure_reason" startup_failure_reason: opt String,
        /// The invalid config file behind a start-up failure.
        "invalid_config_file" invalid_config_file: any Value,
        /// When the credential expires.
        "credential_expires_at" credential_expires_at: opt Number,
        /// A local slash command's result.
        "local_command" local_command: any Value,
        /// Why a resumed turn resumed.
        "resume_reason" resume_reason: opt String,
    }
}

impl ResultMessage {
    /// The session's cost so far in US dollars (`total_cost_usd`: cumulative across turns,
    /// resume and fork).
    pub fn cost_usd(&self) -> Option<f64> {
        self.total_cost_usd.as_ref().and_then(|n| n.as_f64())
    }

    /// How long the turn took on the CLI's clock (`duration_ms`).
    pub fn duration(&self) -> Option<std::time::Duration> {
        let ms = self.duration_ms.as_ref()?;
        ms.as_u64()
            .map(std::time::Duration::from_millis)
            .or_else(|| {
                ms.as_f64()
                    .filter(|ms| ms.is_finite() && *ms >= 0.0)
                    .map(|ms| std::time::Duration::from_secs_f64(ms / 1000.0))
            })
    }

    /// The text that best explains an error result: the `errors` joined by `; `, else the
    /// result text, else the subtype, else the API status.
    pub fn error_text(&self) -> Option<String> {
        if !self.is_error.unwrap_or(false) && self.subtype == ResultSubtype::SUCCESS {
            return None;
        }
        if let Some(errors) = self.errors.as_ref().filter(|e| !e.is_empty()) {
            return Some(errors.join("; "));
        }
        if let Some(text) = self.result.as_ref().filter(|t| !t.is_empty()) {
            return Some(text.clone());
        }
        if self.subtype != ResultSubtype::SUCCESS {
            return Some(self.subtype.to_string());
        }
        Some(match &self.api_error_status {
            Some(status) => format!("API error (HTTP {status})"),
            None => "API error".to_owned(),
        })
    }
}

wire_struct! {
    /// What subagents did in a turn (`subagent_stats` of a result).
    pub struct SubagentStats {
        /// Subagents started.
        "spawned" spawned: opt u64,
        /// Subagents asked for, by how they were to run.
        "requested" requested: opt SubagentRequests,
        /// Started in the background.
        "started_in_background" started_in_background: opt u64,
        /// The deepest nesting of subagents.
        "max_depth" max_depth: opt u64,
        /// Started by other subagents.
        "spawned_by_subagents" spawned_by_subagents: opt u64,
        /// Finished.
        "completed" completed: opt u64,
        /// Failed.
        "failed" failed: opt u64,
        /// Stopped, by who stopped them.
        "killed" killed: opt SubagentKills,
        /// Refused, by the limit that refused them.
        "refused" refused: opt SubagentRefusals,
        /// Counters by agent type (seen only empty).
        "by_type" by_type: any Value,
    }
}

wire_struct! {
    /// Subagents asked for, by how they were to run (`subagent_stats.requested`).
    pub struct SubagentRequests {
        /// In the background.
        "background" background: opt u64,
        /// In the foreground.
        "foreground" foreground: opt u64,
        /// Without saying.
        "unset" unset: opt u64,
    }
}

wire_struct! {
    /// Subagents stopped, by who stopped them (`subagent_stats.killed`).
    pub struct SubagentKills {
        /// The agent that started them.
        "parent" parent: opt u64,
        /// The user.
        "user" user: opt u64,
        /// The CLI.
        "system" system: opt u64,
    }
}

wire_struct! {
    /// Subagents refused, by the limit that refused them (`subagent_stats.refused`).
    pub struct SubagentRefusals {
        /// Nested too deep.
        "depth_limit" depth_limit: opt u64,
        /// Too many at once.
        "concurrency_limit" concurrency_limit: opt u64,
        /// Over budget.
        "budget" budget: opt u64,
    }
}

wire_struct! {
    /// A denied tool call, listed in a result.
    pub struct PermissionDenial {
        /// The tool.
        "tool_name" tool_name: req String,
        /// The call id.
        "tool_use_id" tool_use_id: opt String,
        /// The input it was called with.
        "tool_input" tool_input: any Value,
        /// Set when auto mode refused the call without a safety check (it was not judged
        /// unsafe): `no_check_in_session` or `no_verdict`.
        "auto_mode_unchecked" auto_mode_unchecked: opt String,
    }
}
