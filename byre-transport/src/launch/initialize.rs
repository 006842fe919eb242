//! What goes in the `initialize` request instead of on the command line, with
//! [`Delivery::Initialize`]: the settings, the MCP servers, the subagents, the system
//! prompts, the disallowed tools, the plugins and (asked for) the extra directories.

use serde_json::{json, Value};

use super::{Delivery, Launch};

impl Launch {
    /// With [`Delivery::Initialize`], copies the settings, the MCP servers, the subagents and
    /// the system prompts into `initialize` (over what it holds of them); with
    /// [`Delivery::Argv`] leaves it alone. Fails when [`Launch::agents`] does not decode as
    /// subagent definitions.
    pub fn fill_initialize(
        &self,
        initialize: &mut byre_proto::InitializeRequest,
    ) -> Result<(), serde_json::Error> {
        if self.delivery == Delivery::Argv {
            return Ok(());
        }
        initialize.settings = Some(self.settings_json());
        if let Some(Value::Object(mut config)) = self.mcp_config() {
            initialize.mcp_servers = config.remove("mcpServers");
        }
        if let Some(agents) = &self.agents {
            initialize.agents = Some(serde_json::from_value(agents.clone())?);
        }
        if let Some(prompt) = &self.system_prompt {
            initialize.system_prompt = Some(json!([prompt]));
        }
        if let Some(prompt) = &self.append_system_prompt {
            initialize.append_system_prompt = Some(prompt.clone());
        }
        if !self.disallowed_tools.is_empty() {
            initialize.disallowed_tools = Some(self.disallowed_tools.clone());
        }
        if self.dirs_in_initialize() {
            let dirs = self
                .add_dirs
                .iter()
                .map(|d| d.to_string_lossy().into_owned());
            initialize.additional_directories = Some(dirs.collect());
        }
        if !self.plugin_dirs.is_empty() {
            let plugins = self
                .plugin_dirs
                .iter()
                .map(|d| json!({"type": "local", "path": d.to_string_lossy()}));
            initialize.plugins = Some(Value::Array(plugins.collect()));
        }
        Ok(())
    }

    /// The fields of `initialize` the CLI must be told to read (`--initialize-fields`), with
    /// [`Delivery::Initialize`]: the settings always, the disallowed tools when there are
    /// any, the extra directories when there are any and
    /// [`add_dirs_in_initialize`](Launch::add_dirs_in_initialize) is set.
    pub fn initialize_fields(&self) -> Vec<&'static str> {
        let mut fields = vec!["settings"];
        if !self.disallowed_tools.is_empty() {
            fields.push("disallowedTools");
        }
        if self.dirs_in_initialize() {
            fields.push("additionalDirectories");
        }
        fields
    }

    /// Whether the extra directories go in `initialize`.
    pub(super) fn dirs_in_initialize(&self) -> bool {
        self.delivery == Delivery::Initialize
            && self.add_dirs_in_initialize
            && !self.add_dirs.is_empty()
    }

    /// The settings: the user's with empty commit and PR attribution, which removes the
    /// co-author trailer from the CLI's commits.
    pub fn settings_json(&self) -> Value {
        let mut settings = self.settings.clone();
        settings
            .entry("attribution")
            .or_insert_with(|| json!({"commit": "", "pr": ""}));
        Value::Object(settings)
    }

    /// `--mcp-config`, or `None` when there are no servers.
    pub fn mcp_config(&self) -> Option<Value> {
        if self.sdk_servers.is_empty() && self.mcp_servers.is_empty() {
            return None;
        }
        let mut servers = self.mcp_servers.clone();
        for server in &self.sdk_servers {
            servers.insert(server.name.clone(), server.config());
        }
        Some(json!({ "mcpServers": servers }))
    }
}
