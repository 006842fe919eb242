//! Typed setters on [`Options`] for what users set, each mapped to its CLI flag, and the
//! checks that keep a registered handler reachable.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use byre_proto::PermissionMode;
use serde_json::{Map, Value};

use super::error::UsageError;
use super::options::Options;

impl Options {
    /// The system prompt, replacing the CLI's own (sent in `initialize`, or as
    /// `--system-prompt`, see [`Options::delivery`]).
    pub fn system_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.launch.system_prompt = Some(prompt.into());
        self
    }

    /// Text appended to the CLI's own system prompt (sent in `initialize`, or as
    /// `--append-system-prompt`, see [`Options::delivery`]).
    pub fn append_system_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.launch.append_system_prompt = Some(prompt.into());
        self
    }

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

    /// The most model turns a prompt may take (`--max-turns`); a turn that reaches it ends
    /// with [`TurnError::MaxTurns`](crate::TurnError::MaxTurns).
    pub fn max_turns(mut self, turns: u32) -> Self {
        self.launch.max_turns = Some(turns);
        self
    }

    /// The most the session may spend, in US dollars (`--max-budget-usd`).
    pub fn max_budget_usd(mut self, usd: f64) -> Self {
        self.launch.max_budget_usd = Some(usd);
        self
    }

    /// The model (`--model`: an alias such as `sonnet`, or a full name).
    pub fn model(mut self, model: impl Into<String>) -> Self {
        self.launch.model = Some(model.into());
        self
    }

    /// The model used when the main one is overloaded (`--fallback-model`).
    pub fn fallback_model(mut self, model: impl Into<String>) -> Self {
        self.launch.fallback_model = Some(model.into());
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

    /// The working directory of the CLI (the caller's by default).
    pub fn cwd(mut self, dir: impl Into<PathBuf>) -> Self {
        self.launch.cwd = Some(dir.into());
        self
    }

    /// The `claude` binary (found on `PATH` and the usual places by default).
    pub fn program(mut self, path: impl Into<PathBuf>) -> Self {
        self.launch.program = Some(path.into());
        self
    }

    /// Sets an environment variable for the CLI.
    pub fn env(mut self, name: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        self.launch.env.push((name.into(), value.into()));
        self
    }

    /// Removes an inherited environment variable from the CLI's environment.
    pub fn env_remove(mut self, name: impl Into<OsString>) -> Self {
        self.launch.env_remove.push(name.into());
        self
    }

    /// Another directory the CLI may read and edit (`--add-dir`).
    pub fn add_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.launch.add_dirs.push(dir.into());
        self
    }

    /// Settings (a JSON object, as in `settings.json`), sent in `initialize` (or as
    /// `--settings`, see [`Options::delivery`]).
    pub fn settings(mut self, settings: Map<String, Value>) -> Self {
        self.launch.settings.extend(settings);
        self
    }

    /// Which settings files the CLI loads (`--setting-sources`: `user`, `project`, `local`;
    /// an empty list loads none).
    pub fn setting_sources<I, S>(mut self, sources: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.launch.setting_sources = Some(sources.into_iter().map(Into::into).collect());
        self
    }

    /// Subagent definitions (`{"name": {"description": ..., "prompt": ...}}`), sent in
    /// `initialize` (or as `--agents`, see [`Options::delivery`]).
    pub fn agents(mut self, agents: Value) -> Self {
        self.launch.agents = Some(agents);
        self
    }

    /// How hard the model thinks (`--effort`: `low`, `medium`, `high`, ...).
    pub fn effort(mut self, effort: impl Into<byre_proto::Effort>) -> Self {
        self.launch.effort = Some(effort.into().as_str().to_owned());
        self
    }

    /// The thinking budget in tokens (`--max-thinking-tokens`).
    pub fn max_thinking_tokens(mut self, tokens: u32) -> Self {
        self.launch.max_thinking_tokens = Some(tokens);
        self
    }

    /// Asks for structured output matching the JSON schema of `T` (`--json-schema`): the CLI
    /// offers the model a `StructuredOutput` tool and checks its input against the schema;
    /// [`TurnOutput::structured`](crate::TurnOutput::structured) decodes it.
    pub fn output_schema<T: schemars::JsonSchema>(self) -> Self {
        let mut schema = serde_json::to_value(schemars::schema_for!(T)).unwrap_or(Value::Null);
        if let Value::Object(map) = &mut schema {
            // The CLI's validator knows no 2020-12 meta-schema and refuses a schema naming it.
            map.remove("$schema");
        }
        self.json_schema(schema)
    }

    /// Asks for structured output matching this JSON schema (`--json-schema`).
    pub fn json_schema(mut self, schema: Value) -> Self {
        self.launch.json_schema = Some(schema);
        self
    }

    /// Whether the CLI streams partial messages (`stream_event` lines, so text arrives as it
    /// is written); on by default.
    pub fn partial_messages(mut self, on: bool) -> Self {
        self.launch.no_partial_messages = !on;
        self
    }

    /// An MCP server the CLI starts or connects to itself, by name, in the shape of
    /// `.mcp.json` (`{"type": "stdio", "command": ..., "args": [...], "env": {...}}`, or
    /// `http`/`sse` with `url` and `headers`). Sent in `initialize`, so its `env` and
    /// `headers` stay off the command line (see [`Options::delivery`]) and out of transcripts.
    pub fn mcp_config(mut self, name: impl Into<String>, config: Value) -> Self {
        self.launch.mcp_servers.insert(name.into(), config);
        self
    }

    /// Starts a transcript with the CLI's argv and working directory (off by default).
    pub fn transcript_launch(mut self, record: bool) -> Self {
        self.transcript_launch = record;
        self
    }

    /// Writes a transcript of every line exchanged to `path` (see [`crate::driver`]).
    pub fn transcript(mut self, path: impl Into<PathBuf>) -> Self {
        self.transcript = Some(path.into());
        self
    }

    /// Starts even with a CLI older than the oldest version byre supports
    /// ([`OLDEST_SUPPORTED_CLI`](crate::OLDEST_SUPPORTED_CLI)), which otherwise fails the
    /// start with [`Error::UnsupportedCli`](crate::Error::UnsupportedCli). What byre expects
    /// of the protocol may then not hold.
    pub fn any_cli_version(mut self) -> Self {
        self.any_cli_version = true;
        self
    }

    /// How the settings, MCP servers (with their `env` and `headers`), subagents and system
    /// prompts reach the CLI: in the `initialize` request over stdin, with
    /// `--await-initialize` ([`Delivery::Initialize`](byre_transport::Delivery), the
    /// default: nothing secret on the command line), or as flags
    /// ([`Delivery::Argv`](byre_transport::Delivery), visible to every user of the machine in
    /// `ps`).
    pub fn delivery(mut self, delivery: byre_transport::Delivery) -> Self {
        self.launch.delivery = delivery;
        self
    }

    /// How long `initialize` and other requests may take (60 s by default).
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = Some(timeout);
        self
    }

    /// How long any handler may take before the CLI gets an error answer (no limit by
    /// default).
    pub fn handler_timeout(mut self, timeout: Duration) -> Self {
        self.handler_timeout = Some(timeout);
        self
    }

    /// How long [`Claude::close`](crate::Claude::close) lets the CLI exit by itself before
    /// SIGTERM (5 s by default).
    pub fn exit_grace(mut self, grace: Duration) -> Self {
        self.process.exit_grace = grace;
        self
    }

    /// The longest line accepted from the CLI (64 MiB by default).
    pub fn max_line_bytes(mut self, bytes: usize) -> Self {
        self.max_line = Some(bytes);
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
