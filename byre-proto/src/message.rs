//! The two top-level unions: [`CliMessage`] (what the CLI writes on stdout) and
//! [`HostMessage`] (what a host writes on the CLI's stdin).

use crate::control::{
    CliControlRequest, ControlCancelRequest, ControlResponse, HostControlRequest,
};
use crate::conversation::{AssistantMessage, ResultMessage, UserMessage};
use crate::events::{
    ActiveGoalMessage, AuthStatusMessage, CommandLifecycleMessage, ConversationResetMessage,
    KeepAliveMessage, PromptSuggestionMessage, RateLimitEventMessage, ToolProgressMessage,
    ToolUseSummaryMessage, TranscriptMirrorMessage,
};
use crate::stream::StreamEventMessage;
use crate::system::SystemMessage;
use crate::wire::wire_enum;

wire_enum! {
    /// A line the CLI writes on stdout, tagged by `type`.
    pub enum CliMessage tag "type" {
        /// One content block of a model message.
        "assistant" => Assistant(Box<AssistantMessage>),
        /// A tool result, a synthetic message, a subagent prompt, or an echo.
        "user" => User(Box<UserMessage>),
        /// The end of a turn.
        "result" => Result(Box<ResultMessage>),
        /// A `system` line (init, status, tasks, ...), tagged by `subtype`.
        "system" => System(SystemMessage),
        /// A raw API streaming event (`--include-partial-messages`).
        "stream_event" => StreamEvent(Box<StreamEventMessage>),
        /// A heartbeat while a tool runs.
        "tool_progress" => ToolProgress(Box<ToolProgressMessage>),
        /// What became of a host user message that carried a `uuid`.
        "command_lifecycle" => CommandLifecycle(Box<CommandLifecycleMessage>),
        /// Rate-limit status.
        "rate_limit_event" => RateLimitEvent(Box<RateLimitEventMessage>),
        /// Authentication status.
        "auth_status" => AuthStatus(Box<AuthStatusMessage>),
        /// A summary of tool calls.
        "tool_use_summary" => ToolUseSummary(Box<ToolUseSummaryMessage>),
        /// A suggested next prompt.
        "prompt_suggestion" => PromptSuggestion(Box<PromptSuggestionMessage>),
        /// The conversation restarted.
        "conversation_reset" => ConversationReset(Box<ConversationResetMessage>),
        /// The agent's goal.
        "active_goal" => ActiveGoal(Box<ActiveGoalMessage>),
        /// Liveness.
        "keep_alive" => KeepAlive(Box<KeepAliveMessage>),
        /// Session file entries (`--session-mirror`).
        "transcript_mirror" => TranscriptMirror(Box<TranscriptMirrorMessage>),
        /// A request from the CLI (hooks, permissions, MCP, ...).
        "control_request" => ControlRequest(Box<CliControlRequest>),
        /// The CLI's answer to a host request.
        "control_response" => ControlResponse(Box<ControlResponse>),
        /// The CLI withdraws one of its requests.
        "control_cancel_request" => ControlCancelRequest(Box<ControlCancelRequest>),
    }
}

wire_enum! {
    /// A line a host writes on the CLI's stdin, tagged by `type`.
    pub enum HostMessage tag "type" {
        /// A prompt.
        "user" => User(Box<UserMessage>),
        /// A request to the CLI.
        "control_request" => ControlRequest(Box<HostControlRequest>),
        /// The host's answer to a CLI request.
        "control_response" => ControlResponse(ControlResponse),
        /// The host withdraws one of its requests.
        "control_cancel_request" => ControlCancelRequest(ControlCancelRequest),
        /// Liveness.
        "keep_alive" => KeepAlive(KeepAliveMessage),
    }
}

impl CliMessage {
    /// The session id the line carries, if any.
    pub fn session_id(&self) -> Option<&str> {
        match self {
            CliMessage::Assistant(m) => m.session_id.as_deref(),
            CliMessage::User(m) => m.session_id.as_deref(),
            CliMessage::Result(m) => m.session_id.as_deref(),
            CliMessage::StreamEvent(m) => m.session_id.as_deref(),
            CliMessage::ToolProgress(m) => m.session_id.as_deref(),
            CliMessage::CommandLifecycle(m) => m.session_id.as_deref(),
            CliMessage::RateLimitEvent(m) => m.session_id.as_deref(),
            CliMessage::System(m) => m.session_id(),
            CliMessage::AuthStatus(m) => m.session_id.as_deref(),
            CliMessage::ToolUseSummary(m) => m.session_id.as_deref(),
            CliMessage::PromptSuggestion(m) => m.session_id.as_deref(),
            CliMessage::ConversationReset(m) => m.session_id.as_deref(),
            CliMessage::ActiveGoal(m) => m.session_id.as_deref(),
            CliMessage::Unknown(u) => u.get_str("session_id"),
            CliMessage::KeepAlive(_)
            | CliMessage::TranscriptMirror(_)
            | CliMessage::ControlRequest(_)
            | CliMessage::ControlResponse(_)
            | CliMessage::ControlCancelRequest(_) => None,
        }
    }

    /// The Agent call a subagent's line belongs to (`parent_tool_use_id`), if any.
    ///
    /// `tool_progress` is left out: its `parent_tool_use_id` names the running tool itself.
    pub fn parent_tool_use_id(&self) -> Option<&str> {
        match self {
            CliMessage::Assistant(m) => m.parent_tool_use_id.as_deref(),
            CliMessage::User(m) => m.parent_tool_use_id.as_deref(),
            CliMessage::StreamEvent(m) => m.parent_tool_use_id.as_deref(),
            _ => None,
        }
    }
}
