//! The smaller top-level lines: tool progress, command lifecycle, rate limits, auth status,
//! summaries, suggestions, resets, goals, keep-alives and transcript mirrors.

use serde_json::Value;

use crate::values::CommandState;
use crate::wire::{wire_struct, Number};

wire_struct! {
    /// `tool_progress`: a heartbeat while a tool runs (every 30 s).
    ///
    /// `tool_use_id` is `<real id>-heartbeat-N` and `parent_tool_use_id` is the running tool's
    /// own id: it does not mean a subagent.
    pub struct ToolProgressMessage {
        /// `<tool id>-heartbeat-N`.
        "tool_use_id" tool_use_id: req String,
        /// The tool.
        "tool_name" tool_name: opt String,
        /// The running tool's id.
        "parent_tool_use_id" parent_tool_use_id: opt String,
        /// Seconds since the tool started.
        "elapsed_time_seconds" elapsed_time_seconds: opt Number,
        /// The task it belongs to.
        "task_id" task_id: opt String,
        /// Whether this is a heartbeat.
        "heartbeat" heartbeat: opt bool,
        /// The subagent's type.
        "subagent_type" subagent_type: opt String,
        /// A subagent's API retry.
        "subagent_retry" subagent_retry: any Value,
        /// What the tool is doing.
        "description" description: opt String,
        /// The session.
        "session_id" session_id: opt String,
        /// This line's id.
        "uuid" uuid: opt String,
        /// When the CLI wrote this line (RFC 3339, UTC; CLI 2.1.337 and later).
        "written_at" written_at: opt String,
    }
}

impl ToolProgressMessage {
    /// The id of the running tool call (`tool_use_id` without its `-heartbeat-N` suffix).
    pub fn tool_call_id(&self) -> &str {
        if let Some(parent) = self.parent_tool_use_id.as_deref() {
            if self.tool_use_id.starts_with(parent) {
                return parent;
            }
        }
        match self.tool_use_id.rfind("-heartbeat-") {
            Some(at) => &self.tool_use_id[..at],
            None => &self.tool_use_id,
        }
    }
}

wire_struct! {
    /// `command_lifecycle`: what became of a host user message that carried a `uuid`.
    pub struct CommandLifecycleMessage {
        /// The user message's uuid.
        "command_uuid" command_uuid: req String,
        /// `queued`, `started`, `completed` or `cancelled`.
        "state" state: req CommandState,
        /// This line's id.
        "uuid" uuid: opt String,
        /// When the CLI wrote this line (RFC 3339, UTC; CLI 2.1.337 and later).
        "written_at" written_at: opt String,
        /// The session.
        "session_id" session_id: opt String,
    }
}

wire_struct! {
    /// `rate_limit_event`: the account's rate-limit status (a heartbeat on subscriptions).
    pub struct RateLimitEventMessage {
        /// The status and limits.
        "rate_limit_info" rate_limit_info: req RateLimitInfo,
        /// The session.
        "session_id" session_id: opt String,
        /// This line's id.
        "uuid" uuid: opt String,
        /// When the CLI wrote this line (RFC 3339, UTC; CLI 2.1.337 and later).
        "written_at" written_at: opt String,
    }
}

wire_struct! {
    /// Rate-limit status.
    pub struct RateLimitInfo {
        /// `allowed`, `allowed_warning` or `rejected`.
        "status" status: opt String,
        /// When the limit resets (seconds since the epoch).
        "resetsAt" resets_at: opt Number,
        /// Which limit (`five_hour`, `seven_day`, ...).
        "rateLimitType" rate_limit_type: opt String,
        /// How much of it is used, from 0 to 1.
        "utilization" utilization: opt Number,
        /// Overage status.
        "overageStatus" overage_status: opt String,
        /// When overage resets.
        "overageResetsAt" overage_resets_at: opt Number,
        /// Why overage is off.
        "overageDisabledReason" overage_disabled_reason: opt String,
        /// Whether overage is used.
        "isUsingOverage" is_using_overage: opt bool,
        /// The threshold passed.
        "surpassedThreshold" surpassed_threshold: opt Number,
    }
}

wire_struct! {
    /// `auth_status`.
    pub struct AuthStatusMessage {
        /// Whether authentication runs.
        "isAuthenticating" is_authenticating: opt bool,
        /// Output lines.
        "output" output: opt Vec<String>,
        /// The error.
        "error" error: opt String,
        /// The session.
        "session_id" session_id: opt String,
        /// This line's id.
        "uuid" uuid: opt String,
        /// When the CLI wrote this line (RFC 3339, UTC; CLI 2.1.337 and later).
        "written_at" written_at: opt String,
    }
}

wire_struct! {
    /// `tool_use_summary`.
    pub struct ToolUseSummaryMessage {
        /// The summary.
        "summary" summary: req String,
        /// The tool calls it covers.
        "preceding_tool_use_ids" preceding_tool_use_ids: opt Vec<String>,
        /// The session.
        "session_id" session_id: opt String,
        /// This line's id.
        "uuid" uuid: opt String,
        /// When the CLI wrote this line (RFC 3339, UTC; CLI 2.1.337 and later).
        "written_at" written_at: opt String,
    }
}

wire_struct! {
    /// `prompt_suggestion`: a suggested next prompt, after a result.
    pub struct PromptSuggestionMessage {
        /// The suggestion.
        "suggestion" suggestion: req String,
        /// The session.
        "session_id" session_id: opt String,
        /// This line's id.
        "uuid" uuid: opt String,
        /// When the CLI wrote this line (RFC 3339, UTC; CLI 2.1.337 and later).
        "written_at" written_at: opt String,
    }
}

wire_struct! {
    /// `conversation_reset`: the conversation restarted (after `/clear`); totals reset.
    pub struct ConversationResetMessage {
        /// The new conversation id.
        "new_conversation_id" new_conversation_id: opt String,
        /// `clear`, `plan_mode_exit`, `fresh_session` or `onboarding`.
        "trigger" trigger: opt String,
        /// The user message that caused it.
        "user_message_uuid" user_message_uuid: opt String,
        /// When.
        "timestamp" timestamp: opt String,
        /// The session.
        "session_id" session_id: opt String,
        /// This line's id.
        "uuid" uuid: opt String,
        /// When the CLI wrote this line (RFC 3339, UTC; CLI 2.1.337 and later).
        "written_at" written_at: opt String,
    }
}

wire_struct! {
    /// `active_goal`: the goal the agent works towards, or `null` when cleared.
    pub struct ActiveGoalMessage {
        /// The goal.
        "value" value: any Value,
        /// The session.
        "session_id" session_id: opt String,
        /// This line's id.
        "uuid" uuid: opt String,
        /// When the CLI wrote this line (RFC 3339, UTC; CLI 2.1.337 and later).
        "written_at" written_at: opt String,
    }
}

wire_struct! {
    /// `keep_alive`: liveness, sent by either side; receivers ignore it.
    pub struct KeepAliveMessage {
        /// A start-up mark, when asked for.
        "startup_mark" startup_mark: any Value,
    }
}

wire_struct! {
    /// `transcript_mirror`: session file entries (only with `--session-mirror`).
    pub struct TranscriptMirrorMessage {
        /// The session file.
        "filePath" file_path: opt String,
        /// The entries.
        "entries" entries: opt Vec<Value>,
    }
}
