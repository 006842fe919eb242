//! Named methods on [`Claude`] for the live requests the official SDKs name (file rewind, MCP
//! reconnect / toggle / resources, background tasks, thinking, cost and usage), and what the
//! `initialize` answer says the session offers (models, commands, agents, account).

use byre_proto::{
    AccountInfo, AgentInfo, BackgroundTasksRequest, BackgroundTasksResponse, GetSessionCostRequest,
    GetTaskOutputRequest, GetUsageRequest, McpReadResourceRequest, McpReadResourceResponse,
    McpReconnectRequest, McpToggleRequest, ModelInfo, RewindFilesRequest, RewindFilesResponse,
    SessionCostResponse, SetMaxThinkingTokensRequest, SlashCommand, TaskOutputResponse,
    UsageResponse,
};

use super::claude::Claude;
use super::error::Error;

impl Claude {
    /// Restores the files the session changed to how they were at user message
    /// `user_message_id` (a `user` line's `uuid`); with `dry_run`, only says what would
    /// change. Needs file checkpointing
    /// ([`Options::file_checkpointing`](crate::Options::file_checkpointing)).
    pub async fn rewind_files(
        &self,
        user_message_id: impl Into<String>,
        dry_run: bool,
    ) -> Result<RewindFilesResponse, Error> {
        self.request(RewindFilesRequest {
            user_message_id: user_message_id.into(),
            dry_run: Some(dry_run),
            extra: Default::default(),
        })
        .await
    }

    /// Reconnects the MCP server `name` (one the CLI starts itself).
    pub async fn mcp_reconnect(&self, name: impl Into<String>) -> Result<(), Error> {
        self.request(McpReconnectRequest {
            server_name: name.into(),
            extra: Default::default(),
        })
        .await
        .map(|_| ())
    }

    /// Turns the MCP server `name` on or off for the session.
    pub async fn mcp_toggle(&self, name: impl Into<String>, enabled: bool) -> Result<(), Error> {
        self.request(McpToggleRequest {
            server_name: name.into(),
            enabled,
            extra: Default::default(),
        })
        .await
        .map(|_| ())
    }

    /// Reads the resource `uri` of the MCP server `server`.
    pub async fn mcp_read_resource(
        &self,
        server: impl Into<String>,
        uri: impl Into<String>,
    ) -> Result<McpReadResourceResponse, Error> {
        self.request(McpReadResourceRequest {
            server_name: server.into(),
            uri: uri.into(),
            extra: Default::default(),
        })
        .await
    }

    /// Moves running tool calls to the background (only `tool_use_id`'s when given), so the
    /// turn can end while they go on.
    pub async fn background_tasks(
        &self,
        tool_use_id: Option<&str>,
    ) -> Result<BackgroundTasksResponse, Error> {
        self.request(BackgroundTasksRequest {
            tool_use_id: tool_use_id.map(str::to_owned),
            extra: Default::default(),
        })
        .await
    }

    /// The last output of a task (a background Bash or subagent), up to 8 KiB of it.
    pub async fn task_output(
        &self,
        task_id: impl Into<String>,
    ) -> Result<TaskOutputResponse, Error> {
        self.request(GetTaskOutputRequest {
            task_id: task_id.into(),
            extra: Default::default(),
        })
        .await
    }

    /// Sets the thinking budget for later turns (`Some(0)` turns thinking off on models that
    /// take a budget; `None` resets it).
    pub async fn set_max_thinking_tokens(&self, tokens: Option<u64>) -> Result<(), Error> {
        let mut body = SetMaxThinkingTokensRequest::default();
        match tokens {
            Some(n) => body.max_thinking_tokens = Some(n),
            None => {
                body.set_null("max_thinking_tokens", true);
            }
        }
        self.request(body).await.map(|_| ())
    }

    /// What the session has cost so far.
    pub async fn session_cost(&self) -> Result<SessionCostResponse, Error> {
        self.request(GetSessionCostRequest::default()).await
    }

    /// The account's usage and limits.
    pub async fn usage(&self) -> Result<UsageResponse, Error> {
        self.request(GetUsageRequest::default()).await
    }

    /// The models the session can switch to ([`Claude::set_model`] takes their `value`), from
    /// the `initialize` answer; empty before it.
    pub fn supported_models(&self) -> Vec<ModelInfo> {
        self.initialize_response()
            .and_then(|r| r.models.clone())
            .unwrap_or_default()
    }

    /// The slash commands and skills the session offers, from the `initialize` answer.
    pub fn supported_commands(&self) -> Vec<SlashCommand> {
        self.initialize_response()
            .and_then(|r| r.commands.clone())
            .unwrap_or_default()
    }

    /// The subagents the session offers (built in, from settings, and the host's), from the
    /// `initialize` answer.
    pub fn supported_agents(&self) -> Vec<AgentInfo> {
        self.initialize_response()
            .and_then(|r| r.agents.clone())
            .unwrap_or_default()
    }

    /// The account the CLI runs as (email, organisation, API key source), from the
    /// `initialize` answer.
    pub fn account_info(&self) -> Option<AccountInfo> {
        self.initialize_response().and_then(|r| r.account.clone())
    }
}
