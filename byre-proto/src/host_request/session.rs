//! The host's requests that steer a running session, with their answers: interrupt, mode and
//! model, usage and cost, files, tasks, settings, reloads and lookups.

use serde_json::Value;

use crate::values::PermissionMode;
use crate::wire::{wire_struct, Number};

wire_struct! {
    /// `interrupt`.
    #[derive(Default)]
    pub struct InterruptRequest {
        /// Also drop queued user messages.
        "cancel_queued" cancel_queued: opt bool,
    }
}

wire_struct! {
    /// The answer to `interrupt`.
    #[derive(Default)]
    pub struct InterruptResponse {
        /// Queued messages still waiting.
        "still_queued" still_queued: opt Vec<String>,
        /// Queued messages dropped.
        "cancelled" cancelled: opt Vec<String>,
    }
}

wire_struct! {
    /// `set_permission_mode`.
    pub struct SetPermissionModeRequest {
        /// The new mode.
        "mode" mode: req PermissionMode,
    }
}

wire_struct! {
    /// The answer to `set_permission_mode`.
    #[derive(Default)]
    pub struct SetPermissionModeResponse {
        /// The mode in effect.
        "mode" mode: opt PermissionMode,
    }
}

wire_struct! {
    /// `set_model`.
    #[derive(Default)]
    pub struct SetModelRequest {
        /// The model (an alias or an id); `None` with an explicit null resets it.
        "model" model: opt String,
    }
}

wire_struct! {
    /// The answer to `set_model`.
    #[derive(Default)]
    pub struct SetModelResponse {
        /// The model it resolved to.
        "model" model: opt String,
    }
}

wire_struct! {
    /// `set_max_thinking_tokens`.
    #[derive(Default)]
    pub struct SetMaxThinkingTokensRequest {
        /// The limit (`0` disables thinking).
        "max_thinking_tokens" max_thinking_tokens: opt u64,
        /// How thinking is displayed.
        "thinking_display" thinking_display: opt String,
    }
}

wire_struct! {
    /// `get_context_usage`.
    #[derive(Default)]
    pub struct GetContextUsageRequest {
        /// `full` (the default; calls the API's `count_tokens`) or `summary`.
        "detail" detail: opt String,
    }
}

wire_struct! {
    /// The answer to `get_context_usage`.
    #[derive(Default)]
    pub struct ContextUsageResponse {
        /// Usage by category.
        "categories" categories: opt Vec<Value>,
        /// Tokens used.
        "totalTokens" total_tokens: opt u64,
        /// The usable window.
        "maxTokens" max_tokens: opt u64,
        /// The model's window.
        "rawMaxTokens" raw_max_tokens: opt u64,
        /// Where auto-compaction's limit comes from.
        "autocompactSource" autocompact_source: opt String,
        /// Percent used.
        "percentage" percentage: opt Number,
        /// A grid for display.
        "gridRows" grid_rows: any Value,
        /// The model.
        "model" model: opt String,
        /// Memory files.
        "memoryFiles" memory_files: any Value,
        /// MCP tools.
        "mcpTools" mcp_tools: any Value,
        /// MCP instructions.
        "mcpInstructions" mcp_instructions: any Value,
        /// Agents.
        "agents" agents: any Value,
        /// Slash commands.
        "slashCommands" slash_commands: any Value,
        /// Skills.
        "skills" skills: any Value,
        /// When auto-compaction starts.
        "autoCompactThreshold" auto_compact_threshold: opt Number,
        /// Whether auto-compaction is on.
        "isAutoCompactEnabled" is_auto_compact_enabled: opt bool,
        /// Usage by message kind.
        "messageBreakdown" message_breakdown: any Value,
        /// Usage reported by the API.
        "apiUsage" api_usage: any Value,
        /// Whether the CLI defers tools behind its ToolSearch tool, and why (CLI 2.1.337 and
        /// later).
        "toolSearch" tool_search: opt ToolSearchState,
    }
}

wire_struct! {
    /// Whether the CLI defers tools behind its ToolSearch tool.
    pub struct ToolSearchState {
        /// Whether it does.
        "enabled" enabled: opt bool,
        /// How (`tst`, ...).
        "mode" mode: opt String,
        /// Why (`tst_enabled`, ...).
        "reason" reason: opt String,
    }
}

wire_struct! {
    /// `get_usage`.
    #[derive(Default)]
    pub struct GetUsageRequest {
        /// Behaviours to skip.
        "skip_behaviors" skip_behaviors: any Value,
    }
}

wire_struct! {
    /// The answer to `get_usage`.
    #[derive(Default)]
    pub struct UsageResponse {
        /// Session totals.
        "session" session: any Value,
        /// The subscription.
        "subscription_type" subscription_type: opt String,
        /// `false` when plan rate limits do not apply (an API key, Bedrock, Vertex): then
        /// `rate_limits` is null.
        "rate_limits_available" rate_limits_available: opt bool,
        /// Rate limits.
        "rate_limits" rate_limits: any Value,
        /// What the local transcripts of the last seven days show of how the account is used
        /// (null when `skip_behaviors` was asked).
        "behaviors" behaviors: any Value,
    }
}

wire_struct! {
    /// `get_session_cost`.
    #[derive(Default)]
    pub struct GetSessionCostRequest {}
}

wire_struct! {
    /// The answer to `get_session_cost`.
    #[derive(Default)]
    pub struct SessionCostResponse {
        /// The cost as text.
        "text" text: opt String,
    }
}

wire_struct! {
    /// `rewind_files`.
    pub struct RewindFilesRequest {
        /// The user message to rewind to.
        "user_message_id" user_message_id: req String,
        /// Only report what would change.
        "dry_run" dry_run: opt bool,
    }
}

wire_struct! {
    /// The answer to `rewind_files`.
    #[derive(Default)]
    pub struct RewindFilesResponse {
        /// Whether it can rewind.
        "canRewind" can_rewind: opt bool,
        /// Why not.
        "error" error: opt String,
        /// Files changed.
        "filesChanged" files_changed: opt Vec<String>,
        /// Lines inserted.
        "insertions" insertions: opt u64,
        /// Lines deleted.
        "deletions" deletions: opt u64,
        /// Tracked files left as they are because a link or another non-regular file sits
        /// at their path (or above it) now (CLI 2.1.337 and later).
        "skippedLinks" skipped_links: opt u64,
    }
}

wire_struct! {
    /// `stop_task`.
    pub struct StopTaskRequest {
        /// The task.
        "task_id" task_id: req String,
    }
}

wire_struct! {
    /// `background_tasks`.
    #[derive(Default)]
    pub struct BackgroundTasksRequest {
        /// One tool call's task; all when absent.
        "tool_use_id" tool_use_id: opt String,
    }
}

wire_struct! {
    /// The answer to `background_tasks`.
    #[derive(Default)]
    pub struct BackgroundTasksResponse {
        /// Whether anything moved.
        "backgrounded" backgrounded: opt bool,
    }
}

wire_struct! {
    /// `get_task_output`.
    pub struct GetTaskOutputRequest {
        /// The task.
        "task_id" task_id: req String,
    }
}

wire_struct! {
    /// The answer to `get_task_output`.
    #[derive(Default)]
    pub struct TaskOutputResponse {
        /// The last output (up to 8 KiB).
        "output" output: opt String,
        /// The whole output's size.
        "total_bytes" total_bytes: opt u64,
        /// Whether it was cut.
        "truncated" truncated: opt bool,
    }
}

wire_struct! {
    /// `cancel_async_message`.
    pub struct CancelAsyncMessageRequest {
        /// The queued message.
        "message_uuid" message_uuid: req String,
    }
}

wire_struct! {
    /// The answer to `cancel_async_message`.
    #[derive(Default)]
    pub struct CancelAsyncMessageResponse {
        /// Whether it was dropped.
        "cancelled" cancelled: opt bool,
    }
}

wire_struct! {
    /// `rename_session`.
    pub struct RenameSessionRequest {
        /// The new title.
        "title" title: req String,
        /// `remote` or `host`.
        "source" source: opt String,
        /// The session.
        "session_id" session_id: opt String,
    }
}

wire_struct! {
    /// `get_settings`.
    #[derive(Default)]
    pub struct GetSettingsRequest {}
}

wire_struct! {
    /// The answer to `get_settings`.
    #[derive(Default)]
    pub struct SettingsResponse {
        /// The effective settings.
        "effective" effective: any Value,
        /// Settings per source.
        "sources" sources: any Value,
        /// Served settings state.
        "served_settings_state" served_settings_state: any Value,
        /// Applied values (model, effort, ...).
        "applied" applied: any Value,
    }
}

wire_struct! {
    #[debug_redacts("settings")]
    /// `apply_flag_settings`. Its `Debug` shows the settings (which may hold `env`) as
    /// `[redacted]`.
    #[derive(Default)]
    pub struct ApplyFlagSettingsRequest {
        /// Settings to merge.
        "settings" settings: req Value,
    }
}

wire_struct! {
    #[debug_redacts("settings")]
    /// `update_settings`. Its `Debug` shows the settings as `[redacted]`.
    #[derive(Default)]
    pub struct UpdateSettingsRequest {
        /// `localSettings` or `userSettings`.
        "source" source: req String,
        /// Settings to write.
        "settings" settings: req Value,
    }
}

wire_struct! {
    /// `reload_plugins`.
    #[derive(Default)]
    pub struct ReloadPluginsRequest {
        /// Hold if the prompt cache would be lost.
        "hold_on_cache_impact" hold_on_cache_impact: opt bool,
        /// Plugins to add.
        "add_plugins" add_plugins: opt Vec<Value>,
        /// Refuse while busy.
        "refuse_if_busy" refuse_if_busy: opt bool,
    }
}

wire_struct! {
    /// The answer to `reload_plugins`.
    #[derive(Default)]
    pub struct ReloadPluginsResponse {
        /// Slash commands.
        "commands" commands: opt Vec<Value>,
        /// Agents.
        "agents" agents: opt Vec<Value>,
        /// Plugins.
        "plugins" plugins: opt Vec<Value>,
        /// MCP servers.
        "mcpServers" mcp_servers: opt Vec<Value>,
        /// Errors.
        "error_count" error_count: opt u64,
        /// Whether it was held.
        "held" held: opt bool,
        /// The cache impact.
        "cache_impact" cache_impact: any Value,
    }
}

wire_struct! {
    /// `reload_skills`.
    #[derive(Default)]
    pub struct ReloadSkillsRequest {}
}

wire_struct! {
    /// The answer to `reload_skills`.
    #[derive(Default)]
    pub struct ReloadSkillsResponse {
        /// Every skill.
        "skills" skills: opt Vec<Value>,
    }
}

wire_struct! {
    /// `reload_output_styles`.
    #[derive(Default)]
    pub struct ReloadOutputStylesRequest {}
}

wire_struct! {
    /// The answer to `reload_output_styles`.
    #[derive(Default)]
    pub struct ReloadOutputStylesResponse {
        /// Every output style.
        "available_output_styles" available_output_styles: opt Vec<String>,
    }
}

wire_struct! {
    /// `get_hooks_listing`.
    #[derive(Default)]
    pub struct GetHooksListingRequest {}
}

wire_struct! {
    /// `list_permission_rules`.
    #[derive(Default)]
    pub struct ListPermissionRulesRequest {}
}

wire_struct! {
    /// `read_file`.
    pub struct ReadFileRequest {
        /// The path.
        "path" path: req String,
        /// Read at most this much.
        "max_bytes" max_bytes: opt u64,
        /// `utf-8` or `base64`.
        "encoding" encoding: opt String,
    }
}

wire_struct! {
    /// The answer to `read_file`.
    #[derive(Default)]
    pub struct ReadFileResponse {
        /// The contents.
        "contents" contents: opt String,
        /// The absolute path.
        "absPath" abs_path: opt String,
        /// Whether it was cut.
        "truncated" truncated: opt bool,
        /// The encoding.
        "encoding" encoding: opt String,
        /// Whether decoding lost bytes.
        "lossy" lossy: opt bool,
        /// The request's `path` as sent (CLI 2.1.337 and later): an answer whose
        /// `requested_path` is not the path sent answers another request under the same id,
        /// and byre keeps waiting for the right one.
        "requested_path" requested_path: opt String,
    }
}

wire_struct! {
    /// `seed_read_state`.
    pub struct SeedReadStateRequest {
        /// The path.
        "path" path: req String,
        /// Its modification time.
        "mtime" mtime: req Number,
    }
}

wire_struct! {
    /// `register_repo_root`.
    pub struct RegisterRepoRootRequest {
        /// The directory.
        "directory" directory: req String,
        /// Reload CLAUDE.md.
        "reload_claude_md" reload_claude_md: opt bool,
        /// Reload plugins.
        "reload_plugins" reload_plugins: opt bool,
        /// Reload skills.
        "reload_skills" reload_skills: opt bool,
    }
}

wire_struct! {
    /// `set_has_subscribers`.
    #[derive(Default)]
    pub struct SetHasSubscribersRequest {
        /// Whether anyone watches.
        "has_subscribers" has_subscribers: opt bool,
    }
}

wire_struct! {
    /// `list_models`.
    #[derive(Default)]
    pub struct ListModelsRequest {}
}

wire_struct! {
    /// `get_binary_version`.
    #[derive(Default)]
    pub struct GetBinaryVersionRequest {}
}

wire_struct! {
    /// `set_mcp_permission_mode_override`: how the tools of one MCP server are let through,
    /// whatever the session's mode. Only tightens: it applies where the session's mode would
    /// allow a call without asking (`bypassPermissions`, `auto`).
    pub struct SetMcpPermissionModeOverrideRequest {
        /// The server, by the name it was registered under.
        "serverName" server_name: req String,
        /// `default` (ask for each call), `auto` (the auto-mode classifier), or `null` to clear
        /// the override.
        "mode" mode: opt String,
    }
}

wire_struct! {
    /// The answer to `set_mcp_permission_mode_override`.
    #[derive(Default)]
    pub struct McpPermissionModeOverrideResponse {
        /// Set when no MCP server of that name is known now (the override is stored anyway,
        /// and applies once one connects).
        "warning" warning: opt String,
    }
}
