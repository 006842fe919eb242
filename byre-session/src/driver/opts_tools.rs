//! Options for tools and permissions: which tools the model has, the permission mode and
//! prompts, subagents, skills, the sandbox, plugins, extra directories, what the stream
//! reports of tools and tasks, and the checks that keep a registered handler reachable.

use super::error::UsageError;
use super::options::Options;
use byre_proto::AgentDefinition;
use byre_proto::PermissionMode;
use serde_json::Value;
use std::path::PathBuf;

impl Options {
    /// Tools that run without asking (`--allowedTools`; rules such as `Bash(git diff:*)` too).
    /// A tool allowed here is never sent to the [`Options::can_use_tool`] handler.
    pub fn allowed_tools<I, S>(mut self, tools: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.launch.allowed_tools = tools.into_iter().map(Into::into).collect();
        self
    }

    /// Tools the model may not use (`--disallowedTools`).
    pub fn disallowed_tools<I, S>(mut self, tools: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.launch.disallowed_tools = tools.into_iter().map(Into::into).collect();
        self
    }

    /// The built-in tools offered at all (`--tools`; an empty list offers none).
    pub fn tools<I, S>(mut self, tools: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.launch.tools = Some(tools.into_iter().map(Into::into).collect());
        self
    }

    /// The permission mode (`--permission-mode`). Unset, the CLI's own default applies
    /// (`default`, unless the settings choose another): a tool that needs approval is denied
    /// and listed in the result's `permission_denials`, unless a permission handler is
    /// registered, in which case byre starts the CLI in `default` so that the handler is asked.
    /// `bypassPermissions` runs every tool unasked.
    pub fn permission_mode(mut self, mode: impl Into<PermissionMode>) -> Self {
        self.launch.permission_mode = Some(mode.into().as_str().to_owned());
        self
    }

    /// The MCP tool the CLI asks for permissions (`--permission-prompt-tool`), instead of the
    /// host's `can_use_tool` handler.
    pub fn permission_prompt_tool(mut self, tool: impl Into<String>) -> Self {
        self.launch.permission_prompt_tool = Some(tool.into());
        self
    }

    /// How the CLI asks for permissions (`--permission-prompts`).
    pub fn permission_prompts(mut self, prompts: impl Into<byre_proto::PermissionPrompts>) -> Self {
        self.launch.permission_prompts = Some(prompts.into().as_str().to_owned());
        self
    }

    /// Subagents the session may use, by name, sent in `initialize` (or as `--agents`, see
    /// [`Options::delivery`]); added to those given before.
    ///
    /// ```
    /// # use byre_session::{Options, proto::AgentDefinition};
    /// let reviewer = AgentDefinition::new("Reviews a change", "You review code.")
    ///     .tools(["Read", "Grep"])
    ///     .model("sonnet");
    /// let options = Options::new().agents([("reviewer", reviewer)]);
    /// # drop(options);
    /// ```
    pub fn agents<S: Into<String>>(
        mut self,
        agents: impl IntoIterator<Item = (S, AgentDefinition)>,
    ) -> Self {
        for (name, agent) in agents {
            let value = serde_json::to_value(agent).unwrap_or_default();
            self = self.add_agent_json(name.into(), value);
        }
        self
    }

    /// Subagent definitions as JSON (`{"name": {"description": ..., "prompt": ...}}`), for a
    /// field byre does not model; added to those given before, as [`Options::agents`] are.
    pub fn agents_json(mut self, agents: Value) -> Self {
        match agents {
            Value::Object(map) => {
                for (name, value) in map {
                    self = self.add_agent_json(name, value);
                }
            }
            other => self.launch.agents = Some(other),
        }
        self
    }

    fn add_agent_json(mut self, name: String, value: Value) -> Self {
        let agents = self
            .launch
            .agents
            .get_or_insert_with(|| Value::Object(Default::default()));
        if !agents.is_object() {
            *agents = Value::Object(Default::default());
        }
        if let Some(map) = agents.as_object_mut() {
            map.insert(name, value);
        }
        self
    }

    /// Runs the main thread as the agent `name` (`--agent`): one of
    /// [`Options::agents`], or one from the settings.
    pub fn agent(mut self, name: impl Into<String>) -> Self {
        self.launch.agent = Some(name.into());
        self
    }

    /// The skills the session may use: [`Skills::All`](crate::Skills::All) allows the `Skill`
    /// tool; a list (`["pdf", "docs:review"]`) is sent in `initialize` as the session's skill
    /// filter and each is allowed as a `Skill(name)` rule. A name no rule can match fails
    /// `start`.
    pub fn skills(mut self, skills: impl Into<crate::Skills>) -> Self {
        self.skills = Some(skills.into());
        self
    }

    /// The sandbox for Bash commands (the `sandbox` key of the settings), merged into
    /// [`Options::settings`].
    pub fn sandbox(mut self, sandbox: crate::Sandbox) -> Self {
        let value = serde_json::to_value(sandbox).unwrap_or_default();
        self.launch.settings.insert("sandbox".into(), value);
        self
    }

    /// Other names for tools (`initialize.toolAliases`, `{"alias": "Tool"}`).
    pub fn tool_aliases(mut self, aliases: Value) -> Self {
        self.initialize.tool_aliases = Some(aliases);
        self
    }

    /// Another directory the CLI may read and edit (`--add-dir`).
    pub fn add_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.launch.add_dirs.push(dir.into());
        self
    }

    /// Sends the [`add_dir`](Options::add_dir) directories in `initialize` rather than on the
    /// command line (with the default `Delivery::Initialize`), where no command-line limit
    /// cuts a long list. Needs CLI 2.1.337 or newer: an older one refuses to start, saying so.
    pub fn add_dirs_in_initialize(mut self) -> Self {
        self.launch.add_dirs_in_initialize = true;
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

    /// Offers a stop per task (`initialize.perTaskStopAffordance`).
    pub fn per_task_stop_affordance(mut self) -> Self {
        self.initialize.per_task_stop_affordance = Some(true);
        self
    }

    /// The dialog kinds the host's [`UserDialogRequest`](byre_proto::UserDialogRequest) handler
    /// ([`Options::on_request`]) can show (`initialize.supportedDialogKinds`).
    pub fn supported_dialog_kinds<I, S>(mut self, kinds: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.initialize.supported_dialog_kinds = Some(kinds.into_iter().map(Into::into).collect());
        self
    }

    /// How the `AskUserQuestion` tool's option previews are written
    /// (`CLAUDE_CODE_QUESTION_PREVIEW_FORMAT`: `markdown`, the CLI's default, or `html` for a
    /// host that shows them in a browser).
    pub fn question_preview_format(self, format: impl Into<String>) -> Self {
        self.env("CLAUDE_CODE_QUESTION_PREVIEW_FORMAT", format.into())
    }

    /// Keeps checkpoints of the files the CLI edits
    /// (`CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING=1`), so that
    /// [`Claude::rewind_files`](crate::Claude::rewind_files) can restore them.
    pub fn file_checkpointing(mut self) -> Self {
        self.launch.file_checkpointing = true;
        self
    }

    /// A local plugin directory (`--plugin-dir`); repeat for more.
    pub fn plugin_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.launch.plugin_dirs.push(dir.into());
        self
    }

    /// Puts hook events in the output stream (`--include-hook-events`).
    pub fn include_hook_events(mut self) -> Self {
        self.launch.include_hook_events = true;
        self
    }

    /// Whether a permission handler ([`Options::can_use_tool`] or
    /// [`Options::ask_user_question`]) is registered.
    pub(super) fn has_permission_handler(&self) -> bool {
        self.handlers.contains_key("can_use_tool") || self.questions.is_some()
    }

    /// Makes every registered handler reachable, or says why it cannot be: with a
    /// `can_use_tool` handler and no mode chosen, the mode becomes `default` (so that settings
    /// that choose a mode that never asks do not shadow it); a mode that never asks, or another
    /// permission prompt tool, is refused, and so is a raw handler for a subtype byre routes
    /// itself. Without a `can_use_tool` handler, the tools of the program's own in-process
    /// servers are allowed (`mcp__<server>` in `--allowedTools`): it serves them, so it has
    /// approved them; with one, the handler is asked about them as about any tool.
    pub(super) fn settle_permissions(&mut self) -> Result<(), UsageError> {
        for subtype in ["hook_callback", "mcp_message"] {
            if self.handlers.contains_key(subtype) {
                return Err(UsageError::ReservedSubtype {
                    subtype: subtype.to_owned(),
                });
            }
        }
        if !self.handlers.contains_key("can_use_tool") {
            for server in &self.launch.sdk_servers {
                let rule = format!("mcp__{}", server.name);
                if !self.launch.allowed_tools.contains(&rule) {
                    self.launch.allowed_tools.push(rule);
                }
            }
        }
        if !self.has_permission_handler() {
            return Ok(());
        }
        // The CLI asks `AskUserQuestion` in every mode; other tools only where the mode asks.
        let asks_tools = self.handlers.contains_key("can_use_tool");
        match self.launch.permission_mode.as_deref() {
            _ if !asks_tools => {}
            None => self.launch.permission_mode = Some(PermissionMode::DEFAULT.to_string()),
            Some(mode)
                if mode == PermissionMode::BYPASS_PERMISSIONS.as_str()
                    || mode == PermissionMode::DONT_ASK.as_str() =>
            {
                return Err(UsageError::PermissionHandlerShadowed {
                    mode: mode.to_owned(),
                });
            }
            Some(_) => {}
        }
        match self.launch.permission_prompt_tool.as_deref() {
            Some("stdio") => {}
            Some(tool) => {
                return Err(UsageError::PermissionPromptToolShadowed {
                    tool: tool.to_owned(),
                })
            }
            None => self.launch.permission_prompt_tool = Some("stdio".into()),
        }
        let whole_tools: Vec<&String> = self
            .launch
            .allowed_tools
            .iter()
            .filter(|t| !t.contains('('))
            .collect();
        if !whole_tools.is_empty() {
            tracing::warn!(
                tools = ?whole_tools,
                "these allowed tools run without asking the can_use_tool handler"
            );
        }
        Ok(())
    }

    /// Whether some hook fails closed.
    pub(super) fn has_fail_closed_hook(&self) -> Option<String> {
        self.hooks
            .iter()
            .find(|(hook, _)| hook.fail_closed)
            .map(|(hook, _)| hook.event.to_string())
    }
}
