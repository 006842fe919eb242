//! The launcher: finds the `claude` binary and builds its argv and environment.
//!
//! The argv always starts with the stream-json flags, in this order:
//!
//! ```text
//! claude --output-format stream-json --input-format stream-json --verbose
//!   --include-partial-messages
//!   [--permission-mode M] [--allow-dangerously-skip-permissions, with bypassPermissions]
//!   --await-initialize --initialize-fields=settings[,disallowedTools]
//!   [...,additionalDirectories]
//!   [--model M] [--session-id=ID] [--resume=SESSION_ID] [--resume-session-at=UUID]
//!   [--fork-session] [every other option]
//! ```
//!
//! The settings, the MCP servers (their `env` and `headers` may hold secrets), the subagent
//! definitions, the system prompts, the disallowed tools and the plugins (and, asked for, the
//! extra directories) go in the `initialize` request over stdin ([`Delivery::Initialize`],
//! the default: [`Launch::fill_initialize`] puts them there), where `ps` cannot show them and
//! no command-line limit cuts them; with [`Delivery::Argv`] they are flags instead (`--settings`,
//! `--mcp-config`, `--agents`, `--system-prompt`, `--append-system-prompt` in this order after
//! the permission flags; `--disallowedTools`, `--add-dir`, `--plugin-dir` where each goes).
//!
//! A user-supplied value that starts with `-` is always passed in `--flag=value` form, so it can
//! never be read as another flag; session ids are always in that form.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

pub use byre_proto::CliVersion;
use serde_json::{json, Map, Value};

mod find;
mod initialize;
pub use find::{cli_version, find_claude, search_locations};

/// The environment variable naming the `claude` binary to use.
pub const CLAUDE_BIN_VAR: &str = "BYRE_CLAUDE_BIN";

/// The variables a CLI started with a cleared environment ([`Launch::env_allow`]) gets by
/// default: where to find programs and its home (`PATH`, `HOME`, `USER`, `LOGNAME`, `SHELL`,
/// `TMPDIR`, `XDG_*`), the locale and terminal (`LANG`, `LANGUAGE`, `LC_*`, `TZ`, `TERM`),
/// proxies and certificates (`HTTP_PROXY`, `HTTPS_PROXY`, `NO_PROXY` in either case,
/// `NODE_EXTRA_CA_CERTS`, `SSL_CERT_FILE`, `SSL_CERT_DIR`), and its own configuration and
/// credentials (`ANTHROPIC_*`, `CLAUDE_*`). Nothing else: no cloud credentials (`AWS_*`,
/// `GOOGLE_*`, `AZURE_*`), no tokens of other services.
pub const DEFAULT_ENV_ALLOW: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "TMPDIR",
    "XDG_*",
    "LANG",
    "LANGUAGE",
    "LC_*",
    "TZ",
    "TERM",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "NODE_EXTRA_CA_CERTS",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "ANTHROPIC_*",
    "CLAUDE_*",
];

/// The value of `CLAUDE_CODE_ENTRYPOINT` byre sets, so the CLI knows who drives it.
pub const ENTRYPOINT: &str = "sdk-byre";

/// An in-process (sdk) MCP server, declared to the CLI in `--mcp-config`.
#[derive(Debug, Clone, PartialEq)]
pub struct SdkServer {
    /// Its name; its tools are `mcp__<name>__<tool>` to the model.
    pub name: String,
    /// Put its tools in the prompt from the first turn instead of behind ToolSearch.
    pub always_load: bool,
}

impl SdkServer {
    /// Its entry in `--mcp-config` (and in `mcp_set_servers`):
    /// `{"type":"sdk","name":...,"alwaysLoad":true}`.
    pub fn config(&self) -> Value {
        let mut entry = json!({"type": "sdk", "name": self.name});
        if self.always_load {
            entry["alwaysLoad"] = Value::Bool(true);
        }
        entry
    }
}

/// How the CLI gets the settings, MCP servers, subagents, system prompts, disallowed tools
/// and plugins (and the extra directories, with [`Launch::add_dirs_in_initialize`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Delivery {
    /// In the `initialize` request, over stdin, with `--await-initialize` (the CLI reads
    /// them before it starts anything): nothing on the command line, which every user of the
    /// machine can read and whose length some platforms limit. The caller copies them into its
    /// request with [`Launch::fill_initialize`]. Needs CLI 2.1.326 or newer.
    #[default]
    Initialize,
    /// As flags on the command line (`--settings`, `--mcp-config`, `--agents`,
    /// `--system-prompt`, `--append-system-prompt`, `--disallowedTools`, `--add-dir`,
    /// `--plugin-dir`), for a host that sends no `initialize`
    /// or an older CLI. MCP servers' `env` and `headers` are then visible in `ps`.
    Argv,
}

/// How the model thinks (`--thinking`, `--max-thinking-tokens`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Thinking {
    /// The model decides how much to think (`--thinking=adaptive`).
    Adaptive,
    /// No thinking (`--thinking=disabled`).
    Disabled,
    /// Thinking with a token budget (`--max-thinking-tokens N`).
    Budget(u32),
}

/// A commit identity for the CLI's git commits (`GIT_AUTHOR_*`, `GIT_COMMITTER_*`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitIdentity {
    /// The name.
    pub name: String,
    /// The email.
    pub email: String,
}

/// How to start the CLI. Every field has the CLI's default when left alone.
///
/// Its `Debug` shows no secret: the values of [`Launch::env`], of the settings' `env` and of
/// the MCP servers' `env` and `headers` are `[redacted]`.
#[derive(Clone, Default)]
pub struct Launch {
    /// The binary; found by [`find_claude`] when `None`.
    pub program: Option<PathBuf>,
    /// The working directory; the caller's when `None`.
    pub cwd: Option<PathBuf>,
    /// Leave out `--include-partial-messages` (no `stream_event` lines).
    pub no_partial_messages: bool,
    /// `--permission-mode` (`bypassPermissions` adds `--allow-dangerously-skip-permissions`).
    /// `None` passes no mode: the CLI's own default applies, `default` unless the settings
    /// say otherwise, in which a tool that needs approval and has no one to ask is denied
    /// (the model is told, and the `result` lists it in `permission_denials`).
    pub permission_mode: Option<String>,
    /// How the settings, MCP servers, subagents and system prompts reach the CLI.
    pub delivery: Delivery,
    /// Settings (byre always sets empty commit and PR attribution).
    pub settings: Map<String, Value>,
    /// In-process MCP servers.
    pub sdk_servers: Vec<SdkServer>,
    /// Other MCP servers for `--mcp-config`, by name.
    pub mcp_servers: Map<String, Value>,
    /// `--model`.
    pub model: Option<String>,
    /// `--session-id=`: the id of a new session (or of a fork).
    pub session_id: Option<String>,
    /// `--resume=`: the session to continue.
    pub resume: Option<String>,
    /// `--resume-session-at=`: keep the resumed conversation up to this message uuid.
    pub resume_session_at: Option<String>,
    /// `--fork-session`: resume into a new session.
    pub fork_session: bool,
    /// `--continue`: continue the most recent session in the directory.
    pub continue_conversation: bool,
    /// `--session-mirror`: the CLI writes each session file entry on stdout too
    /// (`transcript_mirror` lines), for a session store.
    pub session_mirror: bool,
    /// The system prompt, replacing the CLI's own.
    pub system_prompt: Option<String>,
    /// Text appended to the system prompt.
    pub append_system_prompt: Option<String>,
    /// `--tools` (`Some(vec![])` means no tools).
    pub tools: Option<Vec<String>>,
    /// `--allowedTools`.
    pub allowed_tools: Vec<String>,
    /// `--disallowedTools`.
    pub disallowed_tools: Vec<String>,
    /// `--max-turns`.
    pub max_turns: Option<u32>,
    /// `--max-budget-usd`.
    pub max_budget_usd: Option<f64>,
    /// `--fallback-model`.
    pub fallback_model: Option<String>,
    /// `--add-dir`, one per directory.
    pub add_dirs: Vec<PathBuf>,
    /// With [`Delivery::Initialize`], send [`add_dirs`](Launch::add_dirs) in `initialize`
    /// (`additionalDirectories`) instead of on the command line: CLI 2.1.337 and newer take
    /// them there, older ones refuse to start. Off by default (directories are not secret).
    pub add_dirs_in_initialize: bool,
    /// Subagent definitions by name, as JSON (`{"name": {"description", "prompt", ...}}`).
    pub agents: Option<Value>,
    /// `--permission-prompt-tool` (`stdio` sends `can_use_tool` requests to the host).
    pub permission_prompt_tool: Option<String>,
    /// `--include-hook-events`.
    pub include_hook_events: bool,
    /// `--replay-user-messages`.
    pub replay_user_messages: bool,
    /// `--strict-mcp-config`.
    pub strict_mcp_config: bool,
    /// `--setting-sources=` (`Some(vec![])` loads none).
    pub setting_sources: Option<Vec<String>>,
    /// `--plugin-dir`, one per directory.
    pub plugin_dirs: Vec<PathBuf>,
    /// `--betas`.
    pub betas: Vec<String>,
    /// `--effort`.
    pub effort: Option<String>,
    /// `--max-thinking-tokens`.
    pub max_thinking_tokens: Option<u32>,
    /// `--thinking` (a budget is `--max-thinking-tokens`, over [`Launch::max_thinking_tokens`]).
    pub thinking: Option<Thinking>,
    /// `--thinking-display` (`summarized`, `omitted`, ...; not with thinking disabled).
    pub thinking_display: Option<String>,
    /// `--task-budget`: the total token budget the model is told it has for the task.
    pub task_budget: Option<u64>,
    /// `--no-session-persistence`: nothing of the session is written to disk (it cannot be
    /// resumed).
    pub no_session_persistence: bool,
    /// `--agent`: the main thread runs as this agent.
    pub agent: Option<String>,
    /// `--permission-prompts` (how the CLI asks for permission, e.g. `none`).
    pub permission_prompts: Option<String>,
    /// `--resume-drops-turn=`: with `resume_session_at`, the uuid of the prompt whose turn
    /// the truncated resume discards; the CLI refuses the resume when anything else lies past
    /// the resume point.
    pub resume_drops_turn: Option<String>,
    /// `--project-config-root`: where the project's `.claude` folder is looked for.
    pub project_config_root: Option<PathBuf>,
    /// `--debug-file`: the CLI's debug log goes to this file.
    pub debug_file: Option<PathBuf>,
    /// Sets `CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING=1`: the CLI keeps checkpoints of the
    /// files it edits, which `rewind_files` restores.
    pub file_checkpointing: bool,
    /// Sets `CLAUDE_AGENT_SDK_CLIENT_APP`: the program's name, in the CLI's user agent.
    pub client_app: Option<String>,
    /// `--json-schema`: structured output.
    pub json_schema: Option<Value>,
    /// Flags byre has no field for: `(flag without dashes, value)`; a `None` value passes the
    /// flag alone.
    pub extra_args: Vec<(String, Option<String>)>,
    /// The commit identity.
    pub identity: Option<GitIdentity>,
    /// Variables to set, after byre's own.
    pub env: Vec<(OsString, OsString)>,
    /// Variables to remove from the inherited environment.
    pub env_remove: Vec<OsString>,
    /// Starts the CLI with a cleared environment: of this process's variables only those named
    /// here are passed on (a name, or a prefix ending in `*`: `LC_*`), then byre's own and
    /// [`Launch::env`] are set. `None` (the default) passes every variable on but those in
    /// [`Launch::env_remove`]. [`DEFAULT_ENV_ALLOW`] is what the CLI needs to run.
    pub env_allow: Option<Vec<String>>,
}

impl std::fmt::Debug for Launch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Every field by name: a new one fails to compile until it is shown here.
        let Launch {
            program,
            cwd,
            no_partial_messages,
            permission_mode,
            delivery,
            settings,
            sdk_servers,
            mcp_servers,
            model,
            session_id,
            resume,
            resume_session_at,
            fork_session,
            continue_conversation,
            session_mirror,
            system_prompt,
            append_system_prompt,
            tools,
            allowed_tools,
            disallowed_tools,
            max_turns,
            max_budget_usd,
            fallback_model,
            add_dirs,
            add_dirs_in_initialize,
            agents,
            permission_prompt_tool,
            include_hook_events,
            replay_user_messages,
            strict_mcp_config,
            setting_sources,
            plugin_dirs,
            betas,
            effort,
            max_thinking_tokens,
            thinking,
            thinking_display,
            task_budget,
            no_session_persistence,
            agent,
            permission_prompts,
            resume_drops_turn,
            project_config_root,
            debug_file,
            file_checkpointing,
            client_app,
            json_schema,
            extra_args,
            identity,
            env,
            env_remove,
            env_allow,
        } = self;
        f.debug_struct("Launch")
            .field("program", program)
            .field("cwd", cwd)
            .field("no_partial_messages", no_partial_messages)
            .field("permission_mode", permission_mode)
            .field("delivery", delivery)
            .field("settings", &redacted_settings(settings))
            .field("sdk_servers", sdk_servers)
            .field("mcp_servers", &redacted_servers(mcp_servers))
            .field("model", model)
            .field("session_id", session_id)
            .field("resume", resume)
            .field("resume_session_at", resume_session_at)
            .field("fork_session", fork_session)
            .field("continue_conversation", continue_conversation)
            .field("session_mirror", session_mirror)
            .field("system_prompt", system_prompt)
            .field("append_system_prompt", append_system_prompt)
            .field("tools", tools)
            .field("allowed_tools", allowed_tools)
            .field("disallowed_tools", disallowed_tools)
            .field("max_turns", max_turns)
            .field("max_budget_usd", max_budget_usd)
            .field("fallback_model", fallback_model)
            .field("add_dirs", add_dirs)
            .field("add_dirs_in_initialize", add_dirs_in_initialize)
            .field("agents", agents)
            .field("permission_prompt_tool", permission_prompt_tool)
            .field("include_hook_events", include_hook_events)
            .field("replay_user_messages", replay_user_messages)
            .field("strict_mcp_config", strict_mcp_config)
            .field("setting_sources", setting_sources)
            .field("plugin_dirs", plugin_dirs)
            .field("betas", betas)
            .field("effort", effort)
            .field("max_thinking_tokens", max_thinking_tokens)
            .field("thinking", thinking)
            .field("thinking_display", thinking_display)
            .field("task_budget", task_budget)
            .field("no_session_persistence", no_session_persistence)
            .field("agent", agent)
            .field("permission_prompts", permission_prompts)
            .field("resume_drops_turn", resume_drops_turn)
            .field("project_config_root", project_config_root)
            .field("debug_file", debug_file)
            .field("file_checkpointing", file_checkpointing)
            .field("client_app", client_app)
            .field("json_schema", json_schema)
            .field("extra_args", extra_args)
            .field("identity", identity)
            .field("env", &redacted_env(env))
            .field("env_remove", env_remove)
            .field("env_allow", env_allow)
            .finish()
    }
}

impl Launch {
    /// A launch with every default.
    pub fn new() -> Self {
        Self::default()
    }

    /// The arguments after the program name.
    pub fn args(&self) -> Vec<OsString> {
        let mut a = Args::default();
        a.flag("--output-format");
        a.flag("stream-json");
        a.flag("--input-format");
        a.flag("stream-json");
        a.flag("--verbose");
        if !self.no_partial_messages {
            a.flag("--include-partial-messages");
        }
        match self.permission_mode.as_deref() {
            None => {}
            Some("bypassPermissions") => {
                a.flag("--permission-mode");
                a.flag("bypassPermissions");
                a.flag("--allow-dangerously-skip-permissions");
            }
            Some(mode) => a.value("--permission-mode", mode),
        }
        match self.delivery {
            Delivery::Initialize => {
                a.flag("--await-initialize");
                // The CLI reads these fields from initialize only when told to (plugins and
                // MCP servers it reads there whenever it awaits initialize).
                a.equals("--initialize-fields", &self.initialize_fields().join(","));
            }
            Delivery::Argv => {
                a.value("--settings", &self.settings_json().to_string());
                if let Some(config) = self.mcp_config() {
                    a.value("--mcp-config", &config.to_string());
                }
                if let Some(agents) = &self.agents {
                    a.value("--agents", &agents.to_string());
                }
                if let Some(prompt) = &self.system_prompt {
                    a.value("--system-prompt", prompt);
                }
                if let Some(prompt) = &self.append_system_prompt {
                    a.value("--append-system-prompt", prompt);
                }
            }
        }
        if let Some(model) = &self.model {
            a.value("--model", model);
        }
        if let Some(id) = &self.session_id {
            a.equals("--session-id", id);
        }
        if let Some(id) = &self.resume {
            a.equals("--resume", id);
        }
        if let Some(uuid) = &self.resume_session_at {
            a.equals("--resume-session-at", uuid);
        }
        if self.fork_session {
            a.flag("--fork-session");
        }
        if self.continue_conversation {
            a.flag("--continue");
        }
        if self.session_mirror {
            a.flag("--session-mirror");
        }
        if let Some(tools) = &self.tools {
            a.value("--tools", &tools.join(","));
        }
        if !self.allowed_tools.is_empty() {
            a.value("--allowedTools", &self.allowed_tools.join(","));
        }
        if !self.disallowed_tools.is_empty() && self.delivery == Delivery::Argv {
            a.value("--disallowedTools", &self.disallowed_tools.join(","));
        }
        if let Some(n) = self.max_turns {
            a.value("--max-turns", &n.to_string());
        }
        if let Some(usd) = self.max_budget_usd {
            a.value("--max-budget-usd", &usd.to_string());
        }
        if let Some(model) = &self.fallback_model {
            a.value("--fallback-model", model);
        }
        if !self.dirs_in_initialize() {
            for dir in &self.add_dirs {
                a.path("--add-dir", dir);
            }
        }
        if let Some(tool) = &self.permission_prompt_tool {
            a.value("--permission-prompt-tool", tool);
        }
        if self.include_hook_events {
            a.flag("--include-hook-events");
        }
        if self.replay_user_messages {
            a.flag("--replay-user-messages");
        }
        if self.strict_mcp_config {
            a.flag("--strict-mcp-config");
        }
        if let Some(sources) = &self.setting_sources {
            a.equals("--setting-sources", &sources.join(","));
        }
        if self.delivery == Delivery::Argv {
            for dir in &self.plugin_dirs {
                a.path("--plugin-dir", dir);
            }
        }
        if !self.betas.is_empty() {
            a.value("--betas", &self.betas.join(","));
        }
        if let Some(effort) = &self.effort {
            a.value("--effort", effort);
        }
        // A budget is the one `--max-thinking-tokens`, whichever field gives it.
        let budget = match self.thinking {
            Some(Thinking::Budget(n)) => Some(n),
            _ => self.max_thinking_tokens,
        };
        if let Some(n) = budget {
            a.value("--max-thinking-tokens", &n.to_string());
        }
        if let Some(schema) = &self.json_schema {
            a.value("--json-schema", &schema.to_string());
        }
        match self.thinking {
            Some(Thinking::Adaptive) => a.equals("--thinking", "adaptive"),
            Some(Thinking::Disabled) => a.equals("--thinking", "disabled"),
            Some(Thinking::Budget(_)) | None => {}
        }
        if let (Some(display), false) = (
            &self.thinking_display,
            self.thinking == Some(Thinking::Disabled),
        ) {
            a.value("--thinking-display", display);
        }
        if let Some(n) = self.task_budget {
            a.value("--task-budget", &n.to_string());
        }
        if self.no_session_persistence {
            a.flag("--no-session-persistence");
        }
        if let Some(agent) = &self.agent {
            a.value("--agent", agent);
        }
        if let Some(prompts) = &self.permission_prompts {
            a.value("--permission-prompts", prompts);
        }
        if let Some(uuid) = &self.resume_drops_turn {
            a.equals("--resume-drops-turn", uuid);
        }
        if let Some(dir) = &self.project_config_root {
            a.path("--project-config-root", dir);
        }
        if let Some(file) = &self.debug_file {
            a.path("--debug-file", file);
        }
        for (flag, value) in &self.extra_args {
            let flag = format!("--{}", flag.trim_start_matches('-'));
            match value {
                Some(value) => a.value(&flag, value),
                None => a.flag(&flag),
            }
        }
        a.0
    }

    /// The environment changes: `(name, Some(value))` to set, `(name, None)` to remove, in
    /// order. The rest is inherited. With [`Launch::env_allow`], every variable of this
    /// process's environment that the list does not name is removed first.
    pub fn env_changes(&self) -> Vec<(OsString, Option<OsString>)> {
        let mut changes: Vec<(OsString, Option<OsString>)> = Vec::new();
        if let Some(allow) = &self.env_allow {
            for (name, _) in std::env::vars_os() {
                if !env_allowed(allow, &name) {
                    changes.push((name, None));
                }
            }
        }
        changes.extend([
            // The CLI refuses to start when it thinks it is nested in another session.
            ("CLAUDECODE".into(), None),
            ("CLAUDE_CODE_ENTRYPOINT".into(), Some(ENTRYPOINT.into())),
            // The CLI then reports `session_state_changed` (`running`, `requires_action`,
            // `idle`): the host knows when the run is really over instead of guessing.
            (
                "CLAUDE_CODE_SDK_READS_SESSION_STATE".into(),
                Some("1".into()),
            ),
        ]);
        if let Some(id) = &self.identity {
            for (name, value) in [
                ("GIT_AUTHOR_NAME", &id.name),
                ("GIT_AUTHOR_EMAIL", &id.email),
                ("GIT_COMMITTER_NAME", &id.name),
                ("GIT_COMMITTER_EMAIL", &id.email),
            ] {
                changes.push((name.into(), Some(value.into())));
            }
        }
        if self.file_checkpointing {
            changes.push((
                "CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING".into(),
                Some("1".into()),
            ));
        }
        if let Some(app) = &self.client_app {
            changes.push(("CLAUDE_AGENT_SDK_CLIENT_APP".into(), Some(app.into())));
        }
        for name in &self.env_remove {
            changes.push((name.clone(), None));
        }
        for (name, value) in &self.env {
            changes.push((name.clone(), Some(value.clone())));
        }
        changes
    }
}

/// A JSON value with every string value of its object `env` replaced by `[redacted]`.
fn redacted_env_of(value: &Value) -> Value {
    let mut value = value.clone();
    for key in ["env", "headers"] {
        if let Some(Value::Object(vars)) = value.get_mut(key) {
            for v in vars.values_mut() {
                *v = Value::from(crate::REDACTED);
            }
        }
    }
    value
}

/// The settings with the values of their `env` redacted.
fn redacted_settings(settings: &Map<String, Value>) -> Value {
    redacted_env_of(&Value::Object(settings.clone()))
}

/// The MCP servers with the values of their `env` and `headers` redacted.
fn redacted_servers(servers: &Map<String, Value>) -> Map<String, Value> {
    servers
        .iter()
        .map(|(name, config)| (name.clone(), redacted_env_of(config)))
        .collect()
}

/// The variables' names, each with `[redacted]` for its value.
fn redacted_env(env: &[(OsString, OsString)]) -> Vec<(&OsString, &'static str)> {
    env.iter()
        .map(|(name, _)| (name, crate::REDACTED))
        .collect()
}

/// Whether `allow` (names, and prefixes ending in `*`) names the variable `name`.
pub fn env_allowed(allow: &[impl AsRef<str>], name: &std::ffi::OsStr) -> bool {
    let Some(name) = name.to_str() else {
        return false;
    };
    allow
        .iter()
        .any(|allowed| match allowed.as_ref().strip_suffix('*') {
            Some(prefix) => name.starts_with(prefix),
            None => name == allowed.as_ref(),
        })
}

/// Builds the argument list.
#[derive(Default)]
struct Args(Vec<OsString>);

impl Args {
    fn flag(&mut self, flag: &str) {
        self.0.push(flag.into());
    }

    /// `--flag value`, or `--flag=value` when the value starts with `-`.
    fn value(&mut self, flag: &str, value: &str) {
        if value.starts_with('-') {
            self.equals(flag, value);
        } else {
            self.0.push(flag.into());
            self.0.push(value.into());
        }
    }

    /// Always `--flag=value`.
    fn equals(&mut self, flag: &str, value: &str) {
        self.0.push(format!("{flag}={value}").into());
    }

    fn path(&mut self, flag: &str, path: &Path) {
        let mut joined = OsString::from(format!("{flag}="));
        joined.push(path.as_os_str());
        if path.as_os_str().to_string_lossy().starts_with('-') {
            self.0.push(joined);
        } else {
            self.0.push(flag.into());
            self.0.push(path.as_os_str().to_owned());
        }
    }
}

/// Why the CLI could not be started.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LaunchError {
    /// No `claude` binary was found.
    #[error(
        "the claude CLI was not found (looked in: {}); install it with \
         `npm install -g @anthropic-ai/claude-code`, or set {CLAUDE_BIN_VAR}",
        looked.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
    )]
    NotFound {
        /// Every place searched.
        looked: Vec<PathBuf>,
    },
    /// The file exists but cannot be run.
    #[error("{path} is not an executable file")]
    NotExecutable {
        /// The file.
        path: PathBuf,
    },
    /// Starting the process failed.
    #[error("could not start {path}: {source}")]
    Spawn {
        /// The binary.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// The CLI exited before writing its first line.
    #[error(
        "the CLI exited ({status}) before its first line{}; stderr: {stderr_tail}",
        hint.map(|h| format!(" ({h})")).unwrap_or_default()
    )]
    ExitedEarly {
        /// Its exit status.
        status: std::process::ExitStatus,
        /// The end of its stderr.
        stderr_tail: String,
        /// What it most likely means, when byre recognises the message.
        hint: Option<&'static str>,
    },
    /// The CLI refused `--permission-mode bypassPermissions` because it runs as root outside a
    /// sandbox.
    #[error(
        "the CLI refuses bypassPermissions as root ({status}): set IS_SANDBOX=1 in its \
         environment (inside a sandbox or container) or choose another permission mode"
    )]
    RootBypass {
        /// Its exit status.
        status: std::process::ExitStatus,
        /// The end of its stderr.
        stderr_tail: String,
    },
    /// `claude --version` failed or printed something unexpected.
    #[error("`{path} --version` failed: {reason}")]
    Version {
        /// The binary.
        path: PathBuf,
        /// What went wrong.
        reason: String,
    },
}
