//! `system` lines, one type per `subtype`: init, status, tasks, hooks, notifications, ...

use serde_json::Value;

use crate::names::Names;
use crate::system_tasks::{
    BackgroundTasksChangedMessage, TaskNotificationMessage, TaskProgressMessage,
    TaskStartedMessage, TaskUpdatedMessage,
};
use crate::values::ViewMode;
use crate::values::{ApiKeySource, AssistantError, McpServerState, PermissionMode, Priority};
use crate::values::{FastModeDisabledReason, FastModeState, SessionState};
use crate::wire::{wire_enum, wire_struct, Number};

wire_enum! {
    /// A `system` line, tagged by `subtype`.
    pub enum SystemMessage tag "subtype" {
        /// The session's set-up, sent at the start of every turn (not at launch).
        "init" => Init(Box<InitMessage>),
        /// `requesting` before each API call; also sent after `set_permission_mode`.
        "status" => Status(Box<StatusMessage>),
        /// The conversation was compacted.
        "compact_boundary" => CompactBoundary(Box<CompactBoundaryMessage>),
        /// An API call failed and will be retried.
        "api_retry" => ApiRetry(Box<ApiRetryMessage>),
        /// Progress of a long control request.
        "control_request_progress" => ControlRequestProgress(Box<ControlRequestProgressMessage>),
        /// The model refused and another model takes over.
        "model_refusal_fallback" => ModelRefusalFallback(Box<ModelRefusalMessage>),
        /// The model refused and there is no fallback.
        "model_refusal_no_fallback" => ModelRefusalNoFallback(Box<ModelRefusalMessage>),
        /// Output of a local slash command.
        "local_command_output" => LocalCommandOutput(Box<LocalCommandOutputMessage>),
        /// A settings-file hook started (`--include-hook-events`).
        "hook_started" => HookStarted(Box<HookEventMessage>),
        /// A settings-file hook's output so far.
        "hook_progress" => HookProgress(Box<HookEventMessage>),
        /// A settings-file hook finished.
        "hook_response" => HookResponse(Box<HookEventMessage>),
        /// A plugin installation's progress.
        "plugin_install" => PluginInstall(Box<PluginInstallMessage>),
        /// A task (Bash, subagent, workflow) started.
        "task_started" => TaskStarted(Box<TaskStartedMessage>),
        /// A subagent task's progress.
        "task_progress" => TaskProgress(Box<TaskProgressMessage>),
        /// A task's state changed.
        "task_updated" => TaskUpdated(Box<TaskUpdatedMessage>),
        /// A task finished or stopped.
        "task_notification" => TaskNotification(Box<TaskNotificationMessage>),
        /// The set of background tasks changed (the full set, replacing the last one).
        "background_tasks_changed" => BackgroundTasksChanged(Box<BackgroundTasksChangedMessage>),
        /// An estimate of thinking tokens while thinking streams.
        "thinking_tokens" => ThinkingTokens(Box<ThinkingTokensMessage>),
        /// The session went idle, running, or waits for the host.
        "session_state_changed" => SessionStateChanged(Box<SessionStateChangedMessage>),
        /// The worker is shutting down.
        "worker_shutting_down" => WorkerShuttingDown(Box<WorkerShuttingDownMessage>),
        /// The slash commands changed (the full set).
        "commands_changed" => CommandsChanged(Box<CommandsChangedMessage>),
        /// A notification for the user.
        "notification" => Notification(Box<NotificationMessage>),
        /// Files were persisted.
        "files_persisted" => FilesPersisted(Box<FilesPersistedMessage>),
        /// Memories were recalled.
        "memory_recall" => MemoryRecall(Box<MemoryRecallMessage>),
        /// An MCP elicitation completed.
        "elicitation_complete" => ElicitationComplete(Box<ElicitationCompleteMessage>),
        /// A tool call was denied without asking the host.
        "permission_denied" => PermissionDenied(Box<PermissionDeniedMessage>),
        /// An informational message.
        "informational" => Informational(Box<InformationalMessage>),
        /// The session could not be written to disk.
        "session_writes_lost" => SessionWritesLost(Box<SessionWritesLostMessage>),
        /// The session's name changed (a title the CLI made, a rename).
        "session_title_changed" => SessionTitleChanged(Box<SessionTitleChangedMessage>),
    }
}

impl SystemMessage {
    /// The session id the line carries, if any.
    pub fn session_id(&self) -> Option<&str> {
        match self {
            SystemMessage::Init(m) => m.session_id.as_deref(),
            SystemMessage::Status(m) => m.session_id.as_deref(),
            SystemMessage::CompactBoundary(m) => m.session_id.as_deref(),
            SystemMessage::ApiRetry(m) => m.session_id.as_deref(),
            SystemMessage::ControlRequestProgress(m) => m.session_id.as_deref(),
            SystemMessage::ModelRefusalFallback(m) => m.session_id.as_deref(),
            SystemMessage::ModelRefusalNoFallback(m) => m.session_id.as_deref(),
            SystemMessage::LocalCommandOutput(m) => m.session_id.as_deref(),
            SystemMessage::HookStarted(m) => m.session_id.as_deref(),
            SystemMessage::HookProgress(m) => m.session_id.as_deref(),
            SystemMessage::HookResponse(m) => m.session_id.as_deref(),
            SystemMessage::PluginInstall(m) => m.session_id.as_deref(),
            SystemMessage::TaskStarted(m) => m.session_id.as_deref(),
            SystemMessage::TaskProgress(m) => m.session_id.as_deref(),
            SystemMessage::TaskUpdated(m) => m.session_id.as_deref(),
            SystemMessage::TaskNotification(m) => m.session_id.as_deref(),
            SystemMessage::BackgroundTasksChanged(m) => m.session_id.as_deref(),
            SystemMessage::ThinkingTokens(m) => m.session_id.as_deref(),
            SystemMessage::SessionStateChanged(m) => m.session_id.as_deref(),
            SystemMessage::WorkerShuttingDown(m) => m.session_id.as_deref(),
            SystemMessage::CommandsChanged(m) => m.session_id.as_deref(),
            SystemMessage::Notification(m) => m.session_id.as_deref(),
            SystemMessage::FilesPersisted(m) => m.session_id.as_deref(),
            SystemMessage::MemoryRecall(m) => m.session_id.as_deref(),
            SystemMessage::ElicitationComplete(m) => m.session_id.as_deref(),
            SystemMessage::PermissionDenied(m) => m.session_id.as_deref(),
            SystemMessage::Informational(m) => m.session_id.as_deref(),
            SystemMessage::SessionWritesLost(m) => m.session_id.as_deref(),
            SystemMessage::SessionTitleChanged(m) => m.session_id.as_deref(),
            SystemMessage::Unknown(u) => u.get_str("session_id"),
        }
    }

    /// This line's uuid, if any.
    pub fn uuid(&self) -> Option<&str> {
        match self {
            SystemMessage::Init(m) => m.uuid.as_deref(),
            SystemMessage::Status(m) => m.uuid.as_deref(),
            SystemMessage::CompactBoundary(m) => m.uuid.as_deref(),
            SystemMessage::ApiRetry(m) => m.uuid.as_deref(),
            SystemMessage::ControlRequestProgress(m) => m.uuid.as_deref(),
            SystemMessage::ModelRefusalFallback(m) => m.uuid.as_deref(),
            SystemMessage::ModelRefusalNoFallback(m) => m.uuid.as_deref(),
            SystemMessage::LocalCommandOutput(m) => m.uuid.as_deref(),
            SystemMessage::HookStarted(m) => m.uuid.as_deref(),
            SystemMessage::HookProgress(m) => m.uuid.as_deref(),
            SystemMessage::HookResponse(m) => m.uuid.as_deref(),
            SystemMessage::PluginInstall(m) => m.uuid.as_deref(),
            SystemMessage::TaskStarted(m) => m.uuid.as_deref(),
            SystemMessage::TaskProgress(m) => m.uuid.as_deref(),
            SystemMessage::TaskUpdated(m) => m.uuid.as_deref(),
            SystemMessage::TaskNotification(m) => m.uuid.as_deref(),
            SystemMessage::BackgroundTasksChanged(m) => m.uuid.as_deref(),
            SystemMessage::ThinkingTokens(m) => m.uuid.as_deref(),
            SystemMessage::SessionStateChanged(m) => m.uuid.as_deref(),
            SystemMessage::WorkerShuttingDown(m) => m.uuid.as_deref(),
            SystemMessage::CommandsChanged(m) => m.uuid.as_deref(),
            SystemMessage::Notification(m) => m.uuid.as_deref(),
            SystemMessage::FilesPersisted(m) => m.uuid.as_deref(),
            SystemMessage::MemoryRecall(m) => m.uuid.as_deref(),
            SystemMessage::ElicitationComplete(m) => m.uuid.as_deref(),
            SystemMessage::PermissionDenied(m) => m.uuid.as_deref(),
            SystemMessage::Informational(m) => m.uuid.as_deref(),
            SystemMessage::SessionWritesLost(m) => m.uuid.as_deref(),
            SystemMessage::SessionTitleChanged(m) => m.uuid.as_deref(),
            SystemMessage::Unknown(u) => u.get_str("uuid"),
        }
    }
}

wire_struct! {
    /// `system/init`.
    pub struct InitMessage {
        /// The working directory.
        "cwd" cwd: opt String,
        /// The session id (the first place a new session's id is seen).
        "session_id" session_id: opt String,
        /// Tool names (the Agent tool is listed as `Task`).
        "tools" tools: opt Names,
        /// MCP servers and their status.
        "mcp_servers" mcp_servers: opt Vec<McpServerBrief>,
        /// The model.
        "model" model: opt String,
        /// The permission mode.
        "permissionMode" permission_mode: opt PermissionMode,
        /// Slash commands.
        "slash_commands" slash_commands: opt Names,
        /// Slash commands that only work in a terminal.
        "terminal_slash_commands" terminal_slash_commands: opt Names,
        /// Where the API key came from.
        "apiKeySource" api_key_source: opt ApiKeySource,
        /// Beta flags.
        "betas" betas: opt Names,
        /// The CLI's version.
        "claude_code_version" claude_code_version: opt String,
        /// The output style.
        "output_style" output_style: opt String,
        /// Agent names.
        "agents" agents: opt Names,
        /// Skill names.
        "skills" skills: opt Names,
        /// Plugins.
        "plugins" plugins: opt Vec<PluginBrief>,
        /// Plugin load errors.
        "plugin_errors" plugin_errors: opt Vec<Value>,
        /// Feature flags for feature detection (`msg_lifecycle_v1`, ...).
        "capabilities" capabilities: opt Names,
        /// Whether analytics are off.
        "analytics_disabled" analytics_disabled: opt bool,
        /// Whether product feedback is off.
        "product_feedback_disabled" product_feedback_disabled: opt bool,
        /// Whether the session's model requests go to Anthropic's own API (the first-party
        /// provider, no other base URL, no other provider for the organization). Absent
        /// where the CLI cannot tell; it says where requests are routed, nothing about
        /// retention. Since CLI 2.1.332 (absent offline, with a loopback base URL, in byre's
        /// tests).
        "served_by_anthropic" served_by_anthropic: opt bool,
        /// This line's id.
        "uuid" uuid: opt String,
        /// When the CLI wrote this line (RFC 3339, UTC; CLI 2.1.337 and later).
        "written_at" written_at: opt String,
        /// Memory file paths.
        "memory_paths" memory_paths: opt MemoryPaths,
        /// The directory the CLI started in.
        "original_cwd" original_cwd: opt String,
        /// Extra directories (`--add-dir`).
        "additional_directories" additional_directories: opt Names,
        /// The messaging socket.
        "messaging_socket_path" messaging_socket_path: opt String,
        /// Fast mode state.
        "fast_mode_state" fast_mode_state: opt FastModeState,
        /// Why fast mode is off.
        "fast_mode_disabled_reason" fast_mode_disabled_reason: opt FastModeDisabledReason,
        /// The effort level.
        "effort" effort: any Value,
        /// Whether per-turn effort is active.
        "per_turn_effort_active" per_turn_effort_active: opt bool,
        /// Whether ultrathink is available.
        "ultrathink_available" ultrathink_available: opt bool,
        /// Whether typing ultrathink raises effort.
        "ultrathink_typed_raises" ultrathink_typed_raises: opt bool,
        /// The view mode.
        "view_mode" view_mode: opt ViewMode,
        /// Whether the sandbox is on.
        "sandbox_enabled" sandbox_enabled: opt bool,
        /// The user messages of this turn, when they carried uuids.
        "user_message_uuids" user_message_uuids: opt Vec<String>,
    }
}

wire_struct! {
    /// An MCP server as `system/init` lists it.
    pub struct McpServerBrief {
        /// Its name.
        "name" name: req String,
        /// Its status.
        "status" status: opt McpServerState,
        /// Where it was configured (`sdk`, ...).
        "source" source: opt String,
    }
}

wire_struct! {
    /// A plugin as `system/init` lists it.
    pub struct PluginBrief {
        /// Its name.
        "name" name: req String,
        /// Where it was loaded from (`builtin` or a folder).
        "path" path: opt String,
        /// `name@marketplace`.
        "source" source: opt String,
        /// Its version, from its manifest (CLI 2.1.337 and later).
        "version" version: opt String,
    }
}

wire_struct! {
    /// Where the session's memory files live (`memory_paths` of `system/init`).
    pub struct MemoryPaths {
        /// The folder of automatic memory.
        "auto" auto: opt String,
    }
}

wire_struct! {
    /// `system/status`.
    pub struct StatusMessage {
        /// `requesting`, `compacting`, or `null`.
        "status" status: opt String,
        /// The new mode, after `set_permission_mode`.
        "permissionMode" permission_mode: opt PermissionMode,
        /// How a compaction went.
        "compact_result" compact_result: opt String,
        /// A compaction error.
        "compact_error" compact_error: opt String,
        /// Characters of compaction output so far (while `compacting`).
        "compact_output_chars" compact_output_chars: opt u64,
        /// The session.
        "session_id" session_id: opt String,
        /// This line's id.
        "uuid" uuid: opt String,
        /// When the CLI wrote this line (RFC 3339, UTC; CLI 2.1.337 and later).
        "written_at" written_at: opt String,
        /// The user messages of this turn.
        "user_message_uuids" user_message_uuids: opt Vec<String>,
    }
}

wire_struct! {
    /// `system/compact_boundary`.
    pub struct CompactBoundaryMessage {
        /// What was compacted and why.
        "compact_metadata" compact_metadata: any Value,
        /// The session.
        "session_id" session_id: opt String,
        /// This line's id.
        "uuid" uuid: opt String,
        /// When the CLI wrote this line (RFC 3339, UTC; CLI 2.1.337 and later).
        "written_at" written_at: opt String,
        /// The message the conversation continues from across the boundary.
        "logical_parent_uuid" logical_parent_uuid: opt String,
    }
}

wire_struct! {
    /// `system/api_retry`.
    pub struct ApiRetryMessage {
        /// This attempt.
        "attempt" attempt: opt u64,
        /// The most attempts.
        "max_retries" max_retries: opt u64,
        /// The wait before the next attempt.
        "retry_delay_ms" retry_delay_ms: opt Number,
        /// The HTTP status, if any.
        "error_status" error_status: opt Number,
        /// The error kind.
        "error" error: opt AssistantError,
        /// Set when no response came at all.
        "no_response" no_response: any Value,
        /// The session.
        "session_id" session_id: opt String,
        /// This line's id.
        "uuid" uuid: opt String,
        /// When the CLI wrote this line (RFC 3339, UTC; CLI 2.1.337 and later).
        "written_at" written_at: opt String,
    }
}

wire_struct! {
    /// `system/control_request_progress`.
    pub struct ControlRequestProgressMessage {
        /// The host request it reports on.
        "request_id" request_id: opt String,
        /// `started` or `api_retry`.
        "status" status: opt String,
        /// The attempt.
        "attempt" attempt: opt u64,
        /// The most attempts.
        "max_retries" max_retries: opt u64,
        /// The wait before the next attempt.
        "retry_delay_ms" retry_delay_ms: opt Number,
        /// The HTTP status.
        "error_status" error_status: opt Number,
        /// The session.
        "session_id" session_id: opt String,
        /// This line's id.
        "uuid" uuid: opt String,
        /// When the CLI wrote this line (RFC 3339, UTC; CLI 2.1.337 and later).
        "written_at" written_at: opt String,
    }
}

wire_struct! {
    /// `system/model_refusal_fallback` and `system/model_refusal_no_fallback`.
    pub struct ModelRefusalMessage {
        /// What triggered it.
        "trigger" trigger: opt String,
        /// `retry`, `revert` or `sticky`.
        "direction" direction: opt String,
        /// `session` or `local`.
        "scope" scope: opt String,
        /// The model that refused.
        "original_model" original_model: opt String,
        /// The model that takes over.
        "fallback_model" fallback_model: opt String,
        /// The API request.
        "request_id" request_id: opt String,
        /// The refusal category.
        "api_refusal_category" api_refusal_category: opt String,
        /// The refusal explanation.
        "api_refusal_explanation" api_refusal_explanation: opt String,
        /// Messages withdrawn.
        "retracted_message_uuids" retracted_message_uuids: opt Vec<String>,
        /// The user message refused.
        "refused_user_message_uuid" refused_user_message_uuid: opt String,
        /// Text for the user.
        "content" content: opt String,
        /// The session.
        "session_id" session_id: opt String,
        /// This line's id.
        "uuid" uuid: opt String,
        /// When the CLI wrote this line (RFC 3339, UTC; CLI 2.1.337 and later).
        "written_at" written_at: opt String,
    }
}

wire_struct! {
    /// `system/local_command_output`.
    pub struct LocalCommandOutputMessage {
        /// The output.
        "content" content: opt String,
        /// The session.
        "session_id" session_id: opt String,
        /// This line's id.
        "uuid" uuid: opt String,
        /// When the CLI wrote this line (RFC 3339, UTC; CLI 2.1.337 and later).
        "written_at" written_at: opt String,
    }
}

wire_struct! {
    /// `system/hook_started`, `hook_progress` and `hook_response` (settings-file hooks).
    pub struct HookEventMessage {
        /// The hook run's id.
        "hook_id" hook_id: opt String,
        /// The hook's name.
        "hook_name" hook_name: opt String,
        /// The hook event.
        "hook_event" hook_event: opt String,
        /// Its output.
        "output" output: opt String,
        /// Its standard output.
        "stdout" stdout: opt String,
        /// Its standard error.
        "stderr" stderr: opt String,
        /// Its exit code.
        "exit_code" exit_code: opt Number,
        /// `success`, `error` or `cancelled`.
        "outcome" outcome: opt String,
        /// The session.
        "session_id" session_id: opt String,
        /// This line's id.
        "uuid" uuid: opt String,
        /// When the CLI wrote this line (RFC 3339, UTC; CLI 2.1.337 and later).
        "written_at" written_at: opt String,
    }
}

wire_struct! {
    /// `system/plugin_install`.
    pub struct PluginInstallMessage {
        /// `started`, `installed`, `failed` or `completed`.
        "status" status: opt String,
        /// The plugin.
        "name" name: opt String,
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
    /// `system/thinking_tokens`.
    pub struct ThinkingTokensMessage {
        /// Tokens so far.
        "estimated_tokens" estimated_tokens: opt u64,
        /// Tokens since the last estimate.
        "estimated_tokens_delta" estimated_tokens_delta: opt u64,
        /// The user message of this turn.
        "user_message_uuid" user_message_uuid: opt String,
        /// The session.
        "session_id" session_id: opt String,
        /// This line's id.
        "uuid" uuid: opt String,
        /// When the CLI wrote this line (RFC 3339, UTC; CLI 2.1.337 and later).
        "written_at" written_at: opt String,
    }
}

wire_struct! {
    /// `system/session_state_changed`: `idle` ends a run.
    pub struct SessionStateChangedMessage {
        /// The new state.
        "state" state: req SessionState,
        /// Sent only because the host asked for session state.
        "sdk_host_only" sdk_host_only: opt bool,
        /// The session.
        "session_id" session_id: opt String,
        /// This line's id.
        "uuid" uuid: opt String,
        /// When the CLI wrote this line (RFC 3339, UTC; CLI 2.1.337 and later).
        "written_at" written_at: opt String,
    }
}

wire_struct! {
    /// `system/worker_shutting_down`.
    pub struct WorkerShuttingDownMessage {
        /// Why.
        "reason" reason: opt String,
        /// The session.
        "session_id" session_id: opt String,
        /// This line's id.
        "uuid" uuid: opt String,
        /// When the CLI wrote this line (RFC 3339, UTC; CLI 2.1.337 and later).
        "written_at" written_at: opt String,
    }
}

wire_struct! {
    /// `system/commands_changed`.
    pub struct CommandsChangedMessage {
        /// Every slash command now.
        "commands" commands: opt Vec<Value>,
        /// The session.
        "session_id" session_id: opt String,
        /// This line's id.
        "uuid" uuid: opt String,
        /// When the CLI wrote this line (RFC 3339, UTC; CLI 2.1.337 and later).
        "written_at" written_at: opt String,
    }
}

wire_struct! {
    /// `system/notification`.
    pub struct NotificationMessage {
        /// What it is about (`stop-hook-error`, ...).
        "key" key: opt String,
        /// The text.
        "text" text: opt String,
        /// `low`, `medium`, `high` or `immediate`.
        "priority" priority: opt Priority,
        /// A colour.
        "color" color: opt String,
        /// How long to show it.
        "timeout_ms" timeout_ms: opt Number,
        /// The session.
        "session_id" session_id: opt String,
        /// This line's id.
        "uuid" uuid: opt String,
        /// When the CLI wrote this line (RFC 3339, UTC; CLI 2.1.337 and later).
        "written_at" written_at: opt String,
    }
}

wire_struct! {
    /// `system/files_persisted`.
    pub struct FilesPersistedMessage {
        /// Files saved (`filename`, `file_id`).
        "files" files: opt Vec<Value>,
        /// Files that failed (`filename`, `error`).
        "failed" failed: opt Vec<Value>,
        /// When.
        "processed_at" processed_at: opt String,
        /// The session.
        "session_id" session_id: opt String,
        /// This line's id.
        "uuid" uuid: opt String,
        /// When the CLI wrote this line (RFC 3339, UTC; CLI 2.1.337 and later).
        "written_at" written_at: opt String,
    }
}

wire_struct! {
    /// `system/memory_recall`.
    pub struct MemoryRecallMessage {
        /// `select` or `synthesize`.
        "mode" mode: opt String,
        /// The memories.
        "memories" memories: opt Vec<Value>,
        /// The session.
        "session_id" session_id: opt String,
        /// This line's id.
        "uuid" uuid: opt String,
        /// When the CLI wrote this line (RFC 3339, UTC; CLI 2.1.337 and later).
        "written_at" written_at: opt String,
    }
}

wire_struct! {
    /// `system/elicitation_complete`.
    pub struct ElicitationCompleteMessage {
        /// The MCP server.
        "mcp_server_name" mcp_server_name: opt String,
        /// The elicitation.
        "elicitation_id" elicitation_id: opt String,
        /// The session.
        "session_id" session_id: opt String,
        /// This line's id.
        "uuid" uuid: opt String,
        /// When the CLI wrote this line (RFC 3339, UTC; CLI 2.1.337 and later).
        "written_at" written_at: opt String,
    }
}

wire_struct! {
    /// `system/permission_denied`: a tool call denied without a prompt.
    pub struct PermissionDeniedMessage {
        /// The tool.
        "tool_name" tool_name: opt String,
        /// The call.
        "tool_use_id" tool_use_id: opt String,
        /// The subagent.
        "agent_id" agent_id: opt String,
        /// The kind of reason.
        "decision_reason_type" decision_reason_type: opt String,
        /// The reason.
        "decision_reason" decision_reason: opt String,
        /// The message the model sees.
        "message" message: opt String,
        /// This line's id.
        "uuid" uuid: opt String,
        /// When the CLI wrote this line (RFC 3339, UTC; CLI 2.1.337 and later).
        "written_at" written_at: opt String,
        /// The session.
        "session_id" session_id: opt String,
    }
}

wire_struct! {
    /// `system/informational`.
    pub struct InformationalMessage {
        /// The text.
        "content" content: opt String,
        /// `info`, `notice`, `suggestion` or `warning`.
        "level" level: opt String,
        /// The tool call it is about.
        "tool_use_id" tool_use_id: opt String,
        /// Whether it stops the agent.
        "prevent_continuation" prevent_continuation: opt bool,
        /// A tag.
        "tag" tag: opt String,
        /// The session.
        "session_id" session_id: opt String,
        /// This line's id.
        "uuid" uuid: opt String,
        /// When the CLI wrote this line (RFC 3339, UTC; CLI 2.1.337 and later).
        "written_at" written_at: opt String,
    }
}

wire_struct! {
    /// `system/session_writes_lost`.
    pub struct SessionWritesLostMessage {
        /// `ENOSPC` or `EDQUOT`.
        "error_code" error_code: opt String,
        /// What was lost (`transcript`, `global_config`).
        "lost" lost: opt Vec<String>,
        /// The sessions whose transcripts were lost.
        "transcript_session_ids" transcript_session_ids: opt Vec<String>,
        /// The session.
        "session_id" session_id: opt String,
        /// This line's id.
        "uuid" uuid: opt String,
        /// When the CLI wrote this line (RFC 3339, UTC; CLI 2.1.337 and later).
        "written_at" written_at: opt String,
    }
}

wire_struct! {
    /// `system/session_title_changed` (CLI 2.1.337 and later): the session's current name.
    pub struct SessionTitleChangedMessage {
        /// The name: control, direction and zero-width characters made spaces, trimmed, at
        /// most 200 characters, with a suffix when another session has it already.
        "title" title: req String,
        /// The session.
        "session_id" session_id: opt String,
        /// This line's id.
        "uuid" uuid: opt String,
        /// When the CLI wrote this line (RFC 3339, UTC).
        "written_at" written_at: opt String,
    }
}
