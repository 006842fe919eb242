//! The `initialize` handshake: what the host registers at start-up (hooks, agents, MCP servers,
//! prompts) and what the CLI answers about itself (commands, agents, models, account).

use std::collections::BTreeMap;

use serde_json::Value;

use crate::hooks::{HookEvent, HookMatcher};
use crate::values::{FastModeDisabledReason, FastModeState, PermissionMode};
use crate::wire::wire_struct;

wire_struct! {
    #[debug_redacts("settings", "managedSettings", "mcpServers", "sdkMcpServerConfigs")]
    /// `initialize`: the first request, carrying everything the CLI takes at start-up. Its
    /// `Debug` shows the settings and the MCP servers (which hold `env` and `headers`) as
    /// `[redacted]`.
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
        /// Settings, as `--settings` takes them (read only with `--await-initialize`).
        "settings" settings: any Value,
        /// Managed (policy) settings (read only with `--await-initialize`).
        "managedSettings" managed_settings: any Value,
        /// Tools the model may not use, as `--disallowedTools` takes them (read only with
        /// `--await-initialize`).
        "disallowedTools" disallowed_tools: opt Vec<String>,
        /// More directories the tools may reach, as `--add-dir` takes them (read only with
        /// `--await-initialize --initialize-fields=additionalDirectories`).
        "additionalDirectories" additional_directories: opt Vec<String>,
        /// MCP servers by name, as `--mcp-config` takes them, in-process (`sdk`) ones included
        /// (read only with `--await-initialize`).
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
        /// Effort level (`Effort::HIGH.into()`; a JSON value, as the CLI takes more than names).
        "effort" effort: any Value,
        /// Its permission mode.
        "permissionMode" permission_mode: opt PermissionMode,
    }
}

impl AgentDefinition {
    /// A subagent described by `description` (when the model should use it), with `prompt` as
    /// its system prompt; the setters below add the rest.
    pub fn new(description: impl Into<String>, prompt: impl Into<String>) -> Self {
        AgentDefinition {
            description: description.into(),
            prompt: prompt.into(),
            ..Self::default()
        }
    }

    /// The only tools it may use.
    pub fn tools<S: Into<String>>(mut self, tools: impl IntoIterator<Item = S>) -> Self {
        self.tools = Some(tools.into_iter().map(Into::into).collect());
        self
    }

    /// Tools it may not use.
    pub fn disallowed_tools<S: Into<String>>(mut self, tools: impl IntoIterator<Item = S>) -> Self {
        self.disallowed_tools = Some(tools.into_iter().map(Into::into).collect());
        self
    }

    /// Its model: `inherit`, an alias (`sonnet`) or a model id.
    pub fn model(mut self, model: impl Into<String>) -> Self {
        self.model = Some(model.into());
        self
    }

    /// The most model turns it may take.
    pub fn max_turns(mut self, turns: u64) -> Self {
        self.max_turns = Some(turns);
        self
    }

    /// Its permission mode.
    pub fn permission_mode(mut self, mode: PermissionMode) -> Self {
        self.permission_mode = Some(mode);
        self
    }

    /// Runs in the background by default.
    pub fn background(mut self, background: bool) -> Self {
        self.background = Some(background);
        self
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
        /// How many of the host's hook matchers had a `whenUnanswered` that the CLI kept
        /// (0 where none was sent or each was ignored).
        "hooks_when_unanswered_kept" hooks_when_unanswered_kept: opt u64,
        /// Whether another PreToolUse hook's `ask` outranks the host's own: where a hook the
        /// host registered asks and another hook asks on the same call, `can_use_tool` carries
        /// the other hook's reason.
        "other_hook_ask_outranks_host" other_hook_ask_outranks_host: opt bool,
        /// How the session handles a `submit_feedback` report (`{"kind": "disabled"}`, ...).
        "feedback_mode" feedback_mode: any Value,
        /// Whether the CLI runs its shell commands in its command sandbox (`true`, `false`,
        /// or `"unknown"` when it could not tell), as `system/init` says at each turn. Absent
        /// means no claim. Since CLI 2.1.332.
        "sandbox_enabled" sandbox_enabled: any Value,
        /// Whether Remote Control should switch itself on at session start.
        "remote_control_auto_enable" remote_control_auto_enable: opt bool,
        /// The organisation's auto-connect default for Remote Control alone, settings left out.
        "remote_control_auto_connect_default" remote_control_auto_connect_default: opt bool,
        /// Whether Remote Control can be offered at all in this deployment (absent: yes).
        "remote_control_available" remote_control_available: opt bool,
        /// Whether `remote_control_auto_enable` comes from a default rather than a setting.
        "remote_control_auto_on_by_default" remote_control_auto_on_by_default: opt bool,
        /// The IDE-side rollout switch for Remote Control's auto-enable.
        "ide_rc_auto_enable_gate" ide_rc_auto_enable_gate: opt bool,
        /// Whether MCP servers sent here were applied.
        "mcp_servers_applied" mcp_servers_applied: opt bool,
        /// Whether the settings sent here are the ones the CLI took at launch (with
        /// `--initialize-fields=settings`).
        "settings_applied" settings_applied: opt bool,
        /// Whether the managed settings sent here are the ones the CLI stored at launch.
        "managed_settings_applied" managed_settings_applied: opt bool,
        /// Whether the disallowed tools sent here are the ones the CLI took at launch (with
        /// `--initialize-fields=disallowedTools`).
        "disallowed_tools_applied" disallowed_tools_applied: opt bool,
        /// Whether the extra directories sent here are the ones the CLI took at launch (with
        /// `--initialize-fields=additionalDirectories`).
        "additional_directories_applied" additional_directories_applied: opt bool,
        /// Whether plugins sent here were applied.
        "plugins_applied" plugins_applied: opt bool,
        /// What became of pre-run MCP handshakes.
        "sdk_mcp_manifests_parked" sdk_mcp_manifests_parked: any Value,
        /// Fast mode state.
        "fast_mode_state" fast_mode_state: opt FastModeState,
        /// Why fast mode is off.
        "fast_mode_disabled_reason" fast_mode_disabled_reason: opt FastModeDisabledReason,
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
        /// A shorter description for a menu (CLI 2.1.337 and later).
        "menuDescription" menu_description: opt String,
        /// What the CLI adds after the description (` (dynamic workflow)`).
        "descriptionEnding" description_ending: opt String,
        /// Whether the host runs the command line itself.
        "hostLineRunsOwn" host_line_runs_own: opt bool,
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
        /// Whether thinking can be turned off for it.
        "supportsThinkingOff" supports_thinking_off: opt bool,
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
