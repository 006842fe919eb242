//! Requests from the host to the CLI, each with its typed body and its typed success payload.
//!
//! Every body type implements [`ControlRequestBody`], which names its subtype and the payload
//! type of its success answer, so a driver can offer one typed method per request.

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use crate::wire::{wire_enum, wire_struct};

mod initialize;
mod mcp;
mod session;

pub use self::initialize::*;
pub use self::mcp::*;
pub use self::session::*;

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
        /// the paths of any `Unknown` inside and of any field byre does not model (marked
        /// `(unmodelled)`), or why it did not decode or round-trip. A missing payload is
        /// checked as `{}`.
        pub fn check_response_payload(
            subtype: &str,
            payload: Option<&Value>,
        ) -> Option<Result<Vec<String>, String>> {
            match subtype {
                $( $subtype => Some(crate::validate::check_payload::<$resp>(payload)), )*
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
    "set_permission_mode" => SetPermissionMode(SetPermissionModeRequest)
        -> SetPermissionModeResponse,
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
    "cancel_async_message" => CancelAsyncMessage(CancelAsyncMessageRequest)
        -> CancelAsyncMessageResponse,
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
    "reload_output_styles" => ReloadOutputStyles(ReloadOutputStylesRequest)
        -> ReloadOutputStylesResponse,
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
    /// Tightens the permission mode for one MCP server's tools.
    "set_mcp_permission_mode_override" =>
        SetMcpPermissionModeOverride(SetMcpPermissionModeOverrideRequest)
        -> McpPermissionModeOverrideResponse,
}

wire_struct! {
    /// A payload with no fields of its own (`{}`, or no payload at all).
    #[derive(Default)]
    pub struct EmptyResponse {}
}
