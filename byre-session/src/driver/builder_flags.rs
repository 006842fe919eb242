//! Setters for the rest of the launch flags and `initialize` fields the official SDKs name:
//! betas, plugins, session ids, hook events in the stream, stderr, extra flags, typed subagent
//! definitions, and the session's title and prompt extras.

use std::path::PathBuf;
use std::sync::Arc;

use byre_proto::AgentDefinition;
use serde_json::Value;

use super::options::Options;

impl Options {
    /// One subagent definition, typed (`Options::agents` takes them all as JSON); sent as
    /// [`Options::agents`] are.
    pub fn agent_definition(mut self, name: impl Into<String>, agent: AgentDefinition) -> Self {
        let value = serde_json::to_value(agent).unwrap_or_default();
        let agents = self
            .launch
            .agents
            .get_or_insert_with(|| Value::Object(Default::default()));
        if !agents.is_object() {
            *agents = Value::Object(Default::default());
        }
        if let Some(map) = agents.as_object_mut() {
            map.insert(name.into(), value);
        }
        self
    }

    /// API beta features (`--betas`).
    pub fn betas<I, S>(mut self, betas: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.launch.betas.extend(betas.into_iter().map(Into::into));
        self
    }

    /// A local plugin directory (`--plugin-dir`); repeat for more.
    pub fn plugin_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.launch.plugin_dirs.push(dir.into());
        self
    }

    /// Uses only the MCP servers given here, none from the settings (`--strict-mcp-config`).
    pub fn strict_mcp_config(mut self) -> Self {
        self.launch.strict_mcp_config = true;
        self
    }

    /// Continues the latest session of the working directory (`--continue`).
    pub fn continue_conversation(mut self) -> Self {
        self.launch.continue_conversation = true;
        self
    }

    /// The new session's id (`--session-id`, a UUID; see
    /// [`new_session_id`](crate::new_session_id)).
    pub fn session_id(mut self, id: impl Into<String>) -> Self {
        self.launch.session_id = Some(id.into());
        self
    }

    /// With [`Options::resume`]: resumes the session as it was at message `uuid`
    /// (`--resume-session-at`).
    pub fn resume_at(mut self, uuid: impl Into<String>) -> Self {
        self.launch.resume_session_at = Some(uuid.into());
        self
    }

    /// With [`Options::resume`]: continues in a new session instead (`--fork-session`).
    pub fn fork_session(mut self) -> Self {
        self.launch.fork_session = true;
        self
    }

    /// Puts hook events in the output stream (`--include-hook-events`).
    pub fn include_hook_events(mut self) -> Self {
        self.launch.include_hook_events = true;
        self
    }

    /// The MCP tool the CLI asks for permissions (`--permission-prompt-tool`), instead of the
    /// host's `can_use_tool` handler.
    pub fn permission_prompt_tool(mut self, tool: impl Into<String>) -> Self {
        self.launch.permission_prompt_tool = Some(tool.into());
        self
    }

    /// A CLI flag byre has no setter for (`--flag` or `--flag value`; `flag` without dashes).
    pub fn extra_arg(mut self, flag: impl Into<String>, value: Option<String>) -> Self {
        self.launch.extra_args.push((flag.into(), value));
        self
    }

    /// Writes the CLI's debug log on its stderr (`--debug-to-stderr`), where
    /// [`Options::on_stderr`] sees it; [`Options::debug_file`] writes it to a file instead.
    pub fn debug_to_stderr(self) -> Self {
        self.extra_arg("debug-to-stderr", None)
    }

    /// Called with every line the CLI writes on stderr, as it arrives.
    pub fn on_stderr(mut self, callback: impl Fn(&str) + Send + Sync + 'static) -> Self {
        self.process.on_stderr_line = Some(Arc::new(callback));
        self
    }

    /// The session's title (`initialize.title`).
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.initialize.title = Some(title.into());
        self
    }

    /// What the model is told in plan mode (`initialize.planModeInstructions`).
    pub fn plan_mode_instructions(mut self, text: impl Into<String>) -> Self {
        self.initialize.plan_mode_instructions = Some(text.into());
        self
    }

    /// Leaves the dynamic sections (working directory, git status, date) out of the CLI's
    /// system prompt, so it stays the same between sessions and caches
    /// (`initialize.excludeDynamicSections`).
    pub fn exclude_dynamic_sections(mut self) -> Self {
        self.initialize.exclude_dynamic_sections = Some(true);
        self
    }

    /// Streams subagents' text too (`initialize.forwardSubagentText`).
    pub fn forward_subagent_text(mut self) -> Self {
        self.initialize.forward_subagent_text = Some(true);
        self
    }

    /// Asks for summaries of subagents' progress (`initialize.agentProgressSummaries`).
    pub fn agent_progress_summaries(mut self) -> Self {
        self.initialize.agent_progress_summaries = Some(true);
        self
    }

    /// Asks for a suggested next prompt after each turn (`initialize.promptSuggestions`).
    pub fn prompt_suggestions(mut self) -> Self {
        self.initialize.prompt_suggestions = Some(true);
        self
    }

    /// Offers a stop per task (`initialize.perTaskStopAffordance`).
    pub fn per_task_stop_affordance(mut self) -> Self {
        self.initialize.per_task_stop_affordance = Some(true);
        self
    }

    /// The dialog kinds the host's [`Options::user_dialog`] handler can show
    /// (`initialize.supportedDialogKinds`).
    pub fn supported_dialog_kinds<I, S>(mut self, kinds: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.initialize.supported_dialog_kinds = Some(kinds.into_iter().map(Into::into).collect());
        self
    }

    /// Other names for tools (`initialize.toolAliases`, `{"alias": "Tool"}`).
    pub fn tool_aliases(mut self, aliases: Value) -> Self {
        self.initialize.tool_aliases = Some(aliases);
        self
    }
}
