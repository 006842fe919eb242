//! What the CLI must say it applied from `initialize` before anything runs: the hooks (and
//! `onFailure` for a hook that fails closed), and every field sent there instead of on the
//! command line. A CLI that dropped one would run without the user's settings, servers,
//! denied tools or directories, so the start fails instead; plugins it did not load are
//! reported as a warning, as the official SDKs do.

use byre_proto::{InitializeRequest, InitializeResponse};

use super::error::{Error, UsageError};

/// What `initialize` carried that the CLI must confirm.
#[derive(Debug, Clone, Default)]
pub(super) struct Sent {
    /// The event of a hook that fails closed: the CLI must support `onFailure`.
    fail_closed_hook: Option<String>,
    hooks: bool,
    settings: bool,
    mcp_servers: bool,
    disallowed_tools: bool,
    additional_directories: bool,
    plugins: usize,
}

impl Sent {
    /// What `initialize` carries, and the event of a hook that fails closed.
    pub(super) fn of(initialize: &InitializeRequest, fail_closed_hook: Option<String>) -> Sent {
        Sent {
            fail_closed_hook,
            hooks: initialize.hooks.as_ref().is_some_and(|h| !h.is_empty()),
            settings: initialize.settings.is_some(),
            mcp_servers: initialize.mcp_servers.is_some(),
            disallowed_tools: initialize.disallowed_tools.is_some(),
            additional_directories: initialize.additional_directories.is_some(),
            plugins: initialize
                .plugins
                .as_ref()
                .and_then(|p| p.as_array())
                .map_or(0, Vec::len),
        }
    }

    /// Fails when the CLI did not apply what it was sent; warns when it did not load the
    /// plugins.
    pub(super) fn check(&self, response: &InitializeResponse) -> Result<(), Error> {
        if let Some(event) = &self.fail_closed_hook {
            if response.hook_on_failure_supported != Some(true) {
                return Err(UsageError::OnFailureUnsupported {
                    event: event.clone(),
                }
                .into());
            }
        }
        if self.hooks && response.hooks_applied == Some(false) {
            return Err(UsageError::HooksNotApplied.into());
        }
        let fields = [
            (self.settings, response.settings_applied, "settings"),
            (
                self.mcp_servers,
                response.mcp_servers_applied,
                "MCP servers",
            ),
            (
                self.disallowed_tools,
                response.disallowed_tools_applied,
                "disallowed tools",
            ),
            (
                self.additional_directories,
                response.additional_directories_applied,
                "additional directories",
            ),
        ];
        for (sent, applied, what) in fields {
            if sent && applied == Some(false) {
                return Err(UsageError::NotApplied { what }.into());
            }
        }
        if self.plugins > 0 && response.plugins_applied == Some(false) {
            tracing::warn!(
                plugins = self.plugins,
                "the CLI did not load every plugin sent in initialize (plugins_applied: false)"
            );
        }
        Ok(())
    }
}
