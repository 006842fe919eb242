//! The host's requests about MCP servers (status, reconnect, toggle, the dynamic set, messages,
//! tool calls and resources) and their answers.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::wire::{wire_struct, Number};

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
    #[debug_redacts("servers")]
    /// `mcp_set_servers`. Its `Debug` shows the servers (their `env` and `headers`) as
    /// `[redacted]`.
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
