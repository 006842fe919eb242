//! Named methods on [`Claude`] for the live requests about the session's settings, files and
//! reloads that the official SDKs name: flag and file settings, reading a file through the
//! CLI's permission rules, telling it of a file the host read, reloading plugins, skills and
//! output styles, and an MCP server's permission-mode override.

use std::path::Path;

use byre_proto::{
    ApplyFlagSettingsRequest, McpPermissionModeOverrideResponse, Number, ReadFileRequest,
    ReadFileResponse, ReloadOutputStylesRequest, ReloadOutputStylesResponse, ReloadPluginsRequest,
    ReloadPluginsResponse, ReloadSkillsRequest, ReloadSkillsResponse, SeedReadStateRequest,
    SetMcpPermissionModeOverrideRequest, UpdateSettingsRequest,
};
use serde_json::Value;

use super::claude::Claude;
use super::error::Error;

impl Claude {
    /// Merges `settings` (a partial settings object; a key set to `null` is removed) into the
    /// session's flag settings, the layer `--settings` sets, and applies them at once.
    pub async fn apply_flag_settings(&self, settings: Value) -> Result<(), Error> {
        self.request(ApplyFlagSettingsRequest {
            settings,
            extra: Default::default(),
        })
        .await
        .map(|_| ())
    }

    /// Writes `settings` into a settings file through the CLI's own writer (`source`:
    /// `localSettings` or `userSettings`) and applies them. The CLI takes only a few keys per
    /// file (`outputStyle` for `localSettings`, `effortLevel` for `userSettings`) and refuses
    /// the rest.
    pub async fn update_settings(
        &self,
        source: impl Into<String>,
        settings: Value,
    ) -> Result<(), Error> {
        self.request(UpdateSettingsRequest {
            source: source.into(),
            settings,
            extra: Default::default(),
        })
        .await
        .map(|_| ())
    }

    /// Reads the file `path` (relative to the session's directory, or absolute) through the
    /// CLI, under the same permission rules as its Read tool; `max_bytes` caps it (the CLI's
    /// default is 1 MiB) and `encoding` is `utf-8` (the default) or `base64`.
    pub async fn read_file(
        &self,
        path: impl AsRef<Path>,
        max_bytes: Option<u64>,
        encoding: Option<&str>,
    ) -> Result<ReadFileResponse, Error> {
        self.request(ReadFileRequest {
            path: path.as_ref().to_string_lossy().into_owned(),
            max_bytes,
            encoding: encoding.map(str::to_owned),
            extra: Default::default(),
        })
        .await
    }

    /// Tells the CLI that the host read `path` as it was at `mtime_ms` (milliseconds since the
    /// Unix epoch), so that its edit tools take the file as read.
    pub async fn seed_read_state(
        &self,
        path: impl AsRef<Path>,
        mtime_ms: u64,
    ) -> Result<(), Error> {
        self.request(SeedReadStateRequest {
            path: path.as_ref().to_string_lossy().into_owned(),
            mtime: Number::from(mtime_ms),
            extra: Default::default(),
        })
        .await
        .map(|_| ())
    }

    /// Reloads plugins from disk (`request`: what to add, and whether to hold or refuse while
    /// the session is busy); the answer holds the refreshed commands, agents, plugins and MCP
    /// servers.
    pub async fn reload_plugins(
        &self,
        request: ReloadPluginsRequest,
    ) -> Result<ReloadPluginsResponse, Error> {
        self.request(request).await
    }

    /// Reloads skills from disk; the answer lists them.
    pub async fn reload_skills(&self) -> Result<ReloadSkillsResponse, Error> {
        self.request(ReloadSkillsRequest::default()).await
    }

    /// Re-reads the output-style folders; the answer names every style.
    pub async fn reload_output_styles(&self) -> Result<ReloadOutputStylesResponse, Error> {
        self.request(ReloadOutputStylesRequest::default()).await
    }

    /// Tightens how the tools of the MCP server `server` are let through: `Some("default")`
    /// asks for each call, `Some("auto")` routes calls through the auto-mode classifier, and
    /// `None` clears the override. It applies only where the session's mode would allow a call
    /// without asking. The answer's `warning` says when no server of that name is known yet.
    pub async fn set_mcp_permission_mode_override(
        &self,
        server: impl Into<String>,
        mode: Option<&str>,
    ) -> Result<McpPermissionModeOverrideResponse, Error> {
        let mut request = SetMcpPermissionModeOverrideRequest {
            server_name: server.into(),
            mode: mode.map(str::to_owned),
            extra: Default::default(),
        };
        // Clearing is an explicit `"mode": null`.
        request.set_null("mode", mode.is_none());
        self.request(request).await
    }
}
