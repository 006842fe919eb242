//! Requests from the host to the CLI, each with its typed body and its typed success payload.
//!
//! Every body type implements [`ControlRequestBody`], which names its subtype and the payload
//! type of its success answer, so a driver can offer one typed method per request.

use std::collections::BTreeMap;

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use crate::hooks::{HookEvent, HookMatcher};
use crate::values::PermissionMode;
use crate::wire::{wire_enum, wire_struct, Number};

/// A request body: its subtype and the payload its success answer carries.
pub trait ControlRequestBody: Serialize + DeserializeOwned + Into<HostRequest> {
    /// The wire `subtype`.
    const SUBTYPE: &'static str;
    /// The success payload.
    type Response: Serialize + DeserializeOwned;
}

macro_rules! host_requests {
    ($(
        $(#[$vmeta:meta])*
        $subtype:literal => $var:ident($body:ident) -> $resp:ty
    ),* $(,)?) => {
        wire_enum! {
            /// A request from the host to the CLI, tagged by `subtype`.
            pub enum HostRequest tag "subtype" {
                $( $(#[$vmeta])* $subtype => $var($body), )*
            }
        }

        /// Decodes `payload` as the success payload of a host request of this `subtype`,
        /// re-encodes it and compares. Returns `None` for a subtype byre does not know, else
        /// the paths of any `Unknown` inside, or why it did not decode or round-trip. A
        /// missing payload is checked as `{}`.
        pub fn check_response_payload(
            subtype: &str,
            payload: Option<&Value>,
        ) -> Option<Result<Vec<String>, String>> {
            match subtype {
                $( $subtype => Some(crate::decode::check_payload::<$resp>(payload)), )*
                _ => None,
            }
        }

        $(
            impl ControlRequestBody for $body {
                const SUBTYPE: &'static str = $subtype;
                type Response = $resp;
            }

            impl From<$body> for HostRequest {
                fn from(body: $body) -> Self {
                    HostRequest::$var(body)
                }
            }
        )*
    };
}

host_requests! {
    /// Must come first; registers hooks, in-process MCP servers, agents and more.
    "initialize" => Initialize(InitializeRequest) -> InitializeResponse,
    /// Ends the current turn; answered at once, even when idle.
    "interrupt" => Interrupt(InterruptRequest) -> InterruptResponse,
    /// Changes the permission mode.
    "set_permission_mode" => SetPermissionMode(SetPermissionModeRequest) -> SetPermissionModeResponse,
    /// Switches the model for later turns (`null` resets to the default).
    "set_model" => SetModel(SetModelRequest) -> SetModelResponse,
    /// Limits thinking tokens (answered with no payload).
    "set_max_thinking_tokens" => SetMaxThinkingTokens(SetMaxThinkingTokensRequest) -> EmptyResponse,
    /// Lists MCP servers and their tools.
    "mcp_status" => McpStatus(McpStatusRequest) -> McpStatusResponse,
    /// Reconnects an MCP server.
    "mcp_reconnect" => McpReconnect(McpReconnectRequest) -> EmptyResponse,
    /// Enables or disables an MCP server.
    "mcp_toggle" => McpToggle(McpToggleRequest) -> EmptyResponse,
    /// Replaces the dynamic set of MCP servers.
    "mcp_set_servers" => McpSetServers(McpSetServersRequest) -> McpSetServersResponse,
    /// A JSON-RPC message the host's in-process MCP server starts (a notification, ...).
    "mcp_message" => McpMessage(HostMcpMessageRequest) -> EmptyResponse,
    /// Calls an MCP tool without a model turn.
    "mcp_call" => McpCall(McpCallRequest) -> Value,
    /// Reads an MCP resource.
    "mcp_read_resource" => McpReadResource(McpReadResourceRequest) -> McpReadResourceResponse,
    /// How the context window is used.
    "get_context_usage" => GetContextUsage(GetContextUsageRequest) -> ContextUsageResponse,
    /// Session usage and limits.
    "get_usage" => GetUsage(GetUsageRequest) -> UsageResponse,
    /// The session's cost as text.
    "get_session_cost" => GetSessionCost(GetSessionCostRequest) -> SessionCostResponse,
    /// Undoes file changes since a user message (needs file checkpointing).
    "rewind_files" => RewindFiles(RewindFilesRequest) -> RewindFilesResponse,
    /// Stops a task.
    "stop_task" => StopTask(StopTaskRequest) -> EmptyResponse,
    /// Moves running tasks to the background.
    "background_tasks" => BackgroundTasks(BackgroundTasksRequest) -> BackgroundTasksResponse,
    /// The last output of a task.
    "get_task_output" => GetTaskOutput(GetTaskOutputRequest) -> TaskOutputResponse,
    /// Withdraws a queued user message.
    "cancel_async_message" => CancelAsyncMessage(CancelAsyncMessageRequest) -> CancelAsyncMessageResponse,
    /// Renames the session.
    "rename_session" => RenameSession(RenameSessionRequest) -> EmptyResponse,
    /// The effective settings and where they come from.
    "get_settings" => GetSettings(GetSettingsRequest) -> SettingsResponse,
    /// Merges settings into the flag layer.
    "apply_flag_settings" => ApplyFlagSettings(ApplyFlagSettingsRequest) -> EmptyResponse,
    /// Writes settings to a settings file.
    "update_settings" => UpdateSettings(UpdateSettingsRequest) -> EmptyResponse,
    /// Reloads plugins.
    "reload_plugins" => ReloadPlugins(ReloadPluginsRequest) -> ReloadPluginsResponse,
    /// Reloads skills.
    "reload_skills" => ReloadSkills(ReloadSkillsRequest) -> ReloadSkillsResponse,
    /// Reloads output styles.
    "reload_output_styles" => ReloadOutputStyles(ReloadOutputStylesRequest) -> ReloadOutputStylesResponse,
    /// Lists hooks.
    "get_hooks_listing" => GetHooksListing(GetHooksListingRequest) -> Value,
    /// Lists permission rules.
    "list_permission_rules" => ListPermissionRules(ListPermissionRulesRequest) -> Value,
    /// Reads a file through the CLI.
    "read_file" => ReadFile(ReadFileRequest) -> ReadFileResponse,
    /// Tells the CLI a file was read, for edit safety checks.
    "seed_read_state" => SeedReadState(SeedReadStateRequest) -> EmptyResponse,
    /// Registers a repository root.
    "register_repo_root" => RegisterRepoRoot(RegisterRepoRootRequest) -> EmptyResponse,
    /// Tells the CLI whether anyone watches the session.
    "set_has_subscribers" => SetHasSubscribers(SetHasSubscribersRequest) -> EmptyResponse,
    /// The model catalogue.
    "list_models" => ListModels(ListModelsRequest) -> Value,
    /// The CLI's version.
    "get_binary_version" => GetBinaryVersion(GetBinaryVersionRequest) -> Value,
}

wire_struct! {
    /// A payload with no fields of its own (`{}`, or no payload at all).
    #[derive(Default)]
    pub struct EmptyResponse {}
}

wire_struct! {
    /// `initialize`: the first request, carrying everything the CLI takes at start-up.
    #[derive(Default)]
    pub struct InitializeRequest {
        /// Hook registrations per event (`null` when there are none).
        "hooks" hooks: opt BTreeMap<HookEvent, Vec<HookMatcher>>,
        /// Names of in-process (sdk) MCP servers.
        "sdkMcpServers" sdk_mcp_servers: opt Vec<String>,
        /// Per-server settings of in-process MCP servers.
        "sdkMcpServerConfigs" sdk_mcp_server_configs: any Value,
        /// Pre-run MCP handshakes of in-process servers.
        "sdkMcpServerManifests" sdk_mcp_server_manifests: any Value,
        /// Structured output schema.
        "jsonSchema" json_schema: any Value,
        /// The system prompt, as blocks.
        "systemPrompt" system_prompt: any Value,
        /// Text appended to the system prompt.
        "appendSystemPrompt" append_system_prompt: opt String,
        /// A system prompt snapshot.
        "systemPromptSnapshot" system_prompt_snapshot: any Value,
        /// Leave dynamic sections out of the system prompt.
        "excludeDynamicSections" exclude_dynamic_sections: opt bool,
        /// Plan mode instructions.
        "planModeInstructions" plan_mode_instructions: opt String,
        /// Tool aliases.
        "toolAliases" tool_aliases: any Value,
        /// Subagent definitions by name.
        "agents" agents: opt BTreeMap<String, AgentDefinition>,
        /// The session title.
        "title" title: opt String,
        /// Skills to enable.
        "skills" skills: opt Vec<String>,
        /// Whether to send prompt suggestions.
        "promptSuggestions" prompt_suggestions: opt bool,
        /// Whether to summarise agent progress.
        "agentProgressSummaries" agent_progress_summaries: opt bool,
        /// Forward subagents' text.
        "forwardSubagentText" forward_subagent_text: opt bool,
        /// Dialog kinds the host can show (`request_user_dialog`).
        "supportedDialogKinds" supported_dialog_kinds: opt Vec<String>,
        /// Offer a stop button per task.
        "perTaskStopAffordance" per_task_stop_affordance: opt bool,
        /// Plugins.
        "plugins" plugins: any Value,
        /// MCP servers (read only with `--await-initialize`).
        "mcpServers" mcp_servers: any Value,
    }
}

wire_struct! {
    /// A subagent definition.
    #[derive(Default)]
    pub struct AgentDefinition {
        /// When to use it.
        "description" description: req String,
        /// Its system prompt.
        "prompt" prompt: req String,
        /// Allowed tools.
        "tools" tools: opt Vec<String>,
        /// Denied tools.
        "disallowedTools" disallowed_tools: opt Vec<String>,
        /// Its model (`inherit`, an alias, or an id).
        "model" model: opt String,
        /// MCP servers (names or inline configs).
        "mcpServers" mcp_servers: any Value,
        /// Skills.
        "skills" skills: opt Vec<String>,
        /// A first prompt.
        "initialPrompt" initial_prompt: opt String,
        /// Its turn limit.
        "maxTurns" max_turns: opt u64,
        /// Run in the background by default.
        "background" background: opt bool,
        /// Memory scope (`user`, `project`, `local`).
        "memory" memory: opt String,
        /// Effort level.
        "effort" effort: any Value,
        /// Its permission mode.
        "permissionMode" permission_mode: opt PermissionMode,
    }
}

wire_struct! {
    /// The answer to `initialize`.
    pub struct InitializeResponse {
        /// Slash commands.
        "commands" commands: opt Vec<SlashCommand>,
        /// Agents.
        "agents" agents: opt Vec<AgentInfo>,
        /// The output style.
        "output_style" output_style: opt String,
        /// Available output styles.
        "available_output_styles" available_output_styles: opt Vec<String>,
        /// Where user output styles live.
        "user_output_styles_dir" user_output_styles_dir: opt String,
        /// The model catalogue.
        "models" models: opt Vec<ModelInfo>,
        /// The account.
        "account" account: opt AccountInfo,
        /// The CLI's process id.
        "pid" pid: opt u64,
        /// The CLI's version.
        "claude_code_version" claude_code_version: opt String,
        /// The permission mode in effect.
        "current_permission_mode" current_permission_mode: opt PermissionMode,
        /// Present (true) when hooks were given and applied.
        "hooks_applied" hooks_applied: opt bool,
        /// Whether `onFailure` on hooks is supported.
        "hook_on_failure_supported" hook_on_failure_supported: opt bool,
        /// Whether MCP servers sent here were applied.
        "mcp_servers_applied" mcp_servers_applied: opt bool,
        /// Whether plugins sent here were applied.
        "plugins_applied" plugins_applied: opt bool,
        /// What became of pre-run MCP handshakes.
        "sdk_mcp_manifests_parked" sdk_mcp_manifests_parked: any Value,
        /// Fast mode state.
        "fast_mode_state" fast_mode_state: opt String,
        /// Why fast mode is off.
        "fast_mode_disabled_reason" fast_mode_disabled_reason: opt String,
        /// The session state (`idle`, ...).
        "session_state" session_state: opt String,
        /// Feature flags.
        "capabilities" capabilities: opt Vec<String>,
        /// Whether analytics are off.
        "analytics_disabled" analytics_disabled: opt bool,
    }
}

wire_struct! {
    /// A slash command.
    pub struct SlashCommand {
        /// Its name, without the slash.
        "name" name: req String,
        /// What it does.
        "description" description: opt String,
        /// A hint for its arguments.
        "argumentHint" argument_hint: opt String,
        /// Other names.
        "aliases" aliases: opt Vec<String>,
        /// Whether it is built in.
        "builtin" builtin: opt bool,
    }
}

wire_struct! {
    /// An agent the CLI knows.
    pub struct AgentInfo {
        /// Its name.
        "name" name: req String,
        /// When to use it.
        "description" description: opt String,
        /// Its model.
        "model" model: opt String,
    }
}

wire_struct! {
    /// A model in the catalogue.
    pub struct ModelInfo {
        /// The value to pass to `set_model`.
        "value" value: req String,
        /// The model it resolves to.
        "resolvedModel" resolved_model: opt String,
        /// Its display name.
        "displayName" display_name: opt String,
        /// A description.
        "description" description: opt String,
        /// Whether it takes an effort level.
        "supportsEffort" supports_effort: opt bool,
        /// The effort levels it takes.
        "supportedEffortLevels" supported_effort_levels: opt Vec<String>,
        /// Whether it supports adaptive thinking.
        "supportsAdaptiveThinking" supports_adaptive_thinking: opt bool,
        /// Whether it supports fast mode.
        "supportsFastMode" supports_fast_mode: opt bool,
        /// Whether it supports auto mode.
        "supportsAutoMode" supports_auto_mode: opt bool,
    }
}

wire_struct! {
    /// The account the CLI uses. Transcripts replace `email` with `[redacted]`.
    pub struct AccountInfo {
        /// The account's email.
        "email" email: opt String,
        /// The organisation.
        "organization" organization: opt String,
        /// The subscription.
        "subscriptionType" subscription_type: opt String,
        /// Where the token comes from.
        "tokenSource" token_source: opt String,
        /// Where the API key comes from.
        "apiKeySource" api_key_source: opt String,
        /// The API provider.
        "apiProvider" api_provider: opt String,
    }
}

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
    /// `mcp_status`.
    #[derive(Default)]
    pub struct McpStatusRequest {
        /// Ask the servers live.
        "liveReply" live_reply: opt bool,
    }
}

wire_struct! {
    /// The answer to `mcp_status`.
    #[derive(Default)]
    pub struct McpStatusResponse {
        /// Every server.
        "mcpServers" mcp_servers: opt Vec<McpServerStatus>,
    }
}

wire_struct! {
    /// An MCP server's status.
    pub struct McpServerStatus {
        /// Its name.
        "name" name: req String,
        /// `connected`, `failed`, `needs-auth`, `pending` or `disabled`.
        "status" status: opt crate::values::McpServerState,
        /// What the server said about itself.
        "serverInfo" server_info: any Value,
        /// Its error.
        "error" error: opt String,
        /// Its configuration.
        "config" config: any Value,
        /// Its scope (`dynamic`, ...).
        "scope" scope: opt String,
        /// Where it was configured (`sdk`, ...).
        "source" source: opt String,
        /// Its transport (`sdk`, `stdio`, ...).
        "transport" transport: opt String,
        /// Its tools.
        "tools" tools: opt Vec<McpToolStatus>,
    }
}

wire_struct! {
    /// An MCP tool, as `mcp_status` lists it.
    pub struct McpToolStatus {
        /// Its name on its server.
        "name" name: req String,
        /// What it does.
        "description" description: opt String,
        /// Its annotations.
        "annotations" annotations: any Value,
        /// Its metadata.
        "_meta" meta: any Value,
    }
}

wire_struct! {
    /// `mcp_reconnect`.
    pub struct McpReconnectRequest {
        /// The server.
        "serverName" server_name: req String,
    }
}

wire_struct! {
    /// `mcp_toggle`.
    pub struct McpToggleRequest {
        /// The server.
        "serverName" server_name: req String,
        /// Enable or disable.
        "enabled" enabled: req bool,
    }
}

wire_struct! {
    /// `mcp_set_servers`.
    #[derive(Default)]
    pub struct McpSetServersRequest {
        /// Server configurations by name (`{"type":"sdk","name":...}` for in-process ones).
        "servers" servers: req BTreeMap<String, Value>,
    }
}

wire_struct! {
    /// The answer to `mcp_set_servers`.
    #[derive(Default)]
    pub struct McpSetServersResponse {
        /// Servers added.
        "added" added: opt Vec<String>,
        /// Servers removed.
        "removed" removed: opt Vec<String>,
        /// Errors by server.
        "errors" errors: opt BTreeMap<String, String>,
    }
}

wire_struct! {
    /// `mcp_message` from the host: a JSON-RPC message an in-process server starts.
    pub struct HostMcpMessageRequest {
        /// The server.
        "server_name" server_name: req String,
        /// The JSON-RPC message.
        "message" message: req crate::mcp::JsonRpcMessage,
    }
}

wire_struct! {
    /// `mcp_call`.
    pub struct McpCallRequest {
        /// The tool (`mcp__server__tool`).
        "tool" tool: req String,
        /// Its arguments.
        "arguments" arguments: any Value,
        /// Turn errors into a soft result.
        "soft_error_result" soft_error_result: opt bool,
        /// A deadline.
        "expires_at" expires_at: opt Number,
        /// A timeout.
        "timeout_ms" timeout_ms: opt Number,
    }
}

wire_struct! {
    /// `mcp_read_resource`.
    pub struct McpReadResourceRequest {
        /// The server.
        "serverName" server_name: req String,
        /// The resource.
        "uri" uri: req String,
    }
}

wire_struct! {
    /// The answer to `mcp_read_resource`.
    #[derive(Default)]
    pub struct McpReadResourceResponse {
        /// The contents.
        "contents" contents: opt Vec<Value>,
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
        /// Rate limits.
        "rate_limits" rate_limits: any Value,
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
    /// `apply_flag_settings`.
    #[derive(Default)]
    pub struct ApplyFlagSettingsRequest {
        /// Settings to merge.
        "settings" settings: req Value,
    }
}

wire_struct! {
    /// `update_settings`.
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

impl HostRequest {
    /// Wraps the request in its envelope with `request_id`.
    pub fn with_id(self, request_id: impl Into<String>) -> crate::control::HostControlRequest {
        crate::control::HostControlRequest {
            request_id: request_id.into(),
            request: self,
            extra: Default::default(),
        }
    }
}
