//! More typed setters on [`Options`]: thinking, budgets, persistence, the main-thread agent,
//! file checkpointing, skills, managed settings and the CLI's own diagnostics, each mapped to
//! its flag, variable or `initialize` field.

use std::path::PathBuf;

use byre_transport::Thinking;
use serde_json::{Map, Value};

use super::options::Options;

impl Options {
    /// Starts the CLI with a cleared environment, as the TypeScript SDK's `env` (which replaces
    /// the process environment) does: of this process's variables only those `allow` names
    /// are passed on (names, or prefixes ending in `*`: `LC_*`), then byre's own and those set
    /// with [`Options::env`]. [`Options::clear_env`] allows what the CLI needs to run.
    pub fn env_allow<I, S>(mut self, allow: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.launch.env_allow = Some(allow.into_iter().map(Into::into).collect());
        self
    }

    /// Starts the CLI with a cleared environment holding only what it needs to run
    /// ([`byre_transport::DEFAULT_ENV_ALLOW`]: `PATH`, `HOME`, the locale, proxies and
    /// certificates, `ANTHROPIC_*`, `CLAUDE_*`, ...), and those set with [`Options::env`].
    pub fn clear_env(self) -> Self {
        self.env_allow(byre_transport::DEFAULT_ENV_ALLOW.iter().copied())
    }

    /// Passes the session store's credential variables on to the CLI. By default a session
    /// with a store ([`Options::session_store`]) starts the CLI without the variables the store
    /// may have been configured from
    /// ([`SessionStore::credential_vars`](byre_transport::store::SessionStore::credential_vars):
    /// `AWS_*`, `GOOGLE_*`, `AZURE_*` for object storage), so that a model's `printenv` cannot
    /// put them in the conversation; a variable set with [`Options::env`] is passed all the
    /// same.
    pub fn pass_store_credentials(mut self) -> Self {
        self.pass_store_credentials = true;
        self
    }

    /// How the model thinks: [`Thinking::Adaptive`] (`--thinking=adaptive`),
    /// [`Thinking::Disabled`] (`--thinking=disabled`) or [`Thinking::Budget`]
    /// (`--max-thinking-tokens`).
    pub fn thinking(mut self, thinking: Thinking) -> Self {
        self.launch.thinking = Some(thinking);
        self
    }

    /// How thinking is shown in the output (`--thinking-display`: `summarized`, `omitted`,
    /// ...); ignored with thinking disabled.
    pub fn thinking_display(mut self, display: impl Into<byre_proto::ThinkingDisplay>) -> Self {
        self.launch.thinking_display = Some(display.into().as_str().to_owned());
        self
    }

    /// The total token budget the model is told it has for the task (`--task-budget`).
    pub fn task_budget(mut self, tokens: u64) -> Self {
        self.launch.task_budget = Some(tokens);
        self
    }

    /// Writes nothing of the session to disk (`--no-session-persistence`): no transcript in
    /// `~/.claude/projects`, so it cannot be resumed.
    pub fn no_session_persistence(mut self) -> Self {
        self.launch.no_session_persistence = true;
        self
    }

    /// Runs the main thread as the agent `name` (`--agent`): one of
    /// [`Options::agents`], or one from the settings.
    pub fn agent(mut self, name: impl Into<String>) -> Self {
        self.launch.agent = Some(name.into());
        self
    }

    /// How the CLI asks for permissions (`--permission-prompts`).
    pub fn permission_prompts(mut self, prompts: impl Into<byre_proto::PermissionPrompts>) -> Self {
        self.launch.permission_prompts = Some(prompts.into().as_str().to_owned());
        self
    }

    /// When resuming, drops an unfinished last turn (`--resume-drops-turn`).
    pub fn resume_drops_turn(mut self) -> Self {
        self.launch.resume_drops_turn = true;
        self
    }

    /// Keeps checkpoints of the files the CLI edits
    /// (`CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING=1`), so that
    /// [`Claude::rewind_files`](crate::Claude::rewind_files) can restore them.
    pub fn file_checkpointing(mut self) -> Self {
        self.launch.file_checkpointing = true;
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

    /// Where the project's `.claude` folder is looked for (`--project-config-root`).
    pub fn project_config_root(mut self, dir: impl Into<PathBuf>) -> Self {
        self.launch.project_config_root = Some(dir.into());
        self
    }

    /// Writes the CLI's debug log to `file` (`--debug-file`).
    pub fn debug_file(mut self, file: impl Into<PathBuf>) -> Self {
        self.launch.debug_file = Some(file.into());
        self
    }

    /// The program's name, which the CLI puts in its user agent
    /// (`CLAUDE_AGENT_SDK_CLIENT_APP`).
    pub fn client_app(mut self, name: impl Into<String>) -> Self {
        self.launch.client_app = Some(name.into());
        self
    }

    /// The sandbox for Bash commands (the `sandbox` key of the settings), merged into
    /// [`Options::settings`].
    pub fn sandbox(mut self, sandbox: crate::Sandbox) -> Self {
        let value = serde_json::to_value(sandbox).unwrap_or_default();
        self.launch.settings.insert("sandbox".into(), value);
        self
    }

    /// Settings read from a JSON file (as `settings.json`) when the session starts; keys
    /// given with [`Options::settings`] win over the file's.
    pub fn settings_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.settings_file = Some(path.into());
        self
    }

    /// The system prompt, read from a file when the session starts.
    pub fn system_prompt_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.system_prompt_file = Some(path.into());
        self
    }

    /// Managed (policy) settings for the session, sent in `initialize` with
    /// `--managed-settings-in-initialize`: they rank above every other settings source.
    pub fn managed_settings(mut self, settings: Map<String, Value>) -> Self {
        self.initialize.managed_settings = Some(Value::Object(settings));
        self.launch
            .extra_args
            .retain(|(flag, _)| flag != "managed-settings-in-initialize");
        self.launch
            .extra_args
            .push(("managed-settings-in-initialize".into(), None));
        self
    }

    /// Reads the files named with [`Options::settings_file`] and
    /// [`Options::system_prompt_file`] into the options, and turns [`Options::skills`] into
    /// rules.
    pub(super) fn read_files(&mut self) -> Result<(), String> {
        if let Some(path) = self.settings_file.take() {
            let text = std::fs::read_to_string(&path)
                .map_err(|e| format!("settings file {}: {e}", path.display()))?;
            let mut settings: Map<String, Value> = serde_json::from_str(&text)
                .map_err(|e| format!("settings file {}: {e}", path.display()))?;
            settings.extend(std::mem::take(&mut self.launch.settings));
            self.launch.settings = settings;
        }
        if let Some(path) = self.system_prompt_file.take() {
            let text = std::fs::read_to_string(&path)
                .map_err(|e| format!("system prompt file {}: {e}", path.display()))?;
            self.launch.system_prompt = Some(text);
        }
        if let Some(skills) = self.skills.take() {
            for rule in skills.rules()? {
                if !self.launch.allowed_tools.contains(&rule) {
                    self.launch.allowed_tools.push(rule);
                }
            }
            if let crate::Skills::Only(names) = skills {
                self.initialize.skills = Some(names);
            }
        }
        Ok(())
    }

    /// Sends every prompt as written (`client_composed` on each user message): no `@path`
    /// expansion, no slash command, and none of the context the CLI attaches to a prompt
    /// (`CLAUDE.md` files, skill and tool listings, reminders); that context comes after the
    /// turn's first tool call instead. A message that sets `client_composed` itself keeps it.
    pub fn verbatim_prompts(mut self) -> Self {
        self.verbatim_prompts = true;
        self
    }

    /// How the `AskUserQuestion` tool's option previews are written
    /// (`CLAUDE_CODE_QUESTION_PREVIEW_FORMAT`: `markdown`, the CLI's default, or `html` for a
    /// host that shows them in a browser).
    pub fn question_preview_format(self, format: impl Into<String>) -> Self {
        self.env("CLAUDE_CODE_QUESTION_PREVIEW_FORMAT", format.into())
    }

    /// Starts the CLI with `spawner` instead of as a local child process: through a wrapper
    /// command ([`Wrapper`](byre_transport::Wrapper): `sudo -u`, `nice`, `docker exec`,
    /// `ssh`) or any [`Spawn`](byre_transport::Spawn) implementation. Each spawner documents
    /// how it is stopped.
    pub fn spawn(mut self, spawner: impl byre_transport::Spawn + 'static) -> Self {
        self.spawn = Some(std::sync::Arc::new(spawner));
        self
    }
}
