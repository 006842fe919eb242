//! Options for the model and its prompt: the system prompt, the model and its fallback,
//! effort and thinking, structured output, limits on turns, budget and tokens, betas, and the
//! `initialize` fields that shape the prompt.

use super::options::Options;
use byre_transport::Thinking;
use serde_json::Value;
use std::path::PathBuf;

impl Options {
    /// The system prompt, replacing the CLI's own (sent in `initialize`, or as
    /// `--system-prompt`, see [`Options::delivery`]). Without it, a session starts with an
    /// empty system prompt, as with the official SDKs, unless [`Options::cli_system_prompt`]
    /// keeps the CLI's own.
    pub fn system_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.launch.system_prompt = Some(prompt.into());
        self
    }

    /// Keeps the CLI's own system prompt (Claude Code's: its tools' conventions, the working
    /// directory, git status, the date), where a session otherwise starts with an empty one, as
    /// with the official SDKs (their `preset: claude_code`). [`Options::system_prompt`] still
    /// replaces it. `byre run` and `byre chat` keep it.
    pub fn cli_system_prompt(mut self) -> Self {
        self.cli_system_prompt = true;
        self
    }

    /// Text appended to the system prompt (sent in `initialize`, or as
    /// `--append-system-prompt`, see [`Options::delivery`]): to the one given with
    /// [`Options::system_prompt`], else to the CLI's own (this keeps it, as
    /// [`Options::cli_system_prompt`] does).
    pub fn append_system_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.launch.append_system_prompt = Some(prompt.into());
        self.cli_system_prompt = true;
        self
    }

    /// The system prompt, read from a file when the session starts.
    pub fn system_prompt_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.system_prompt_file = Some(path.into());
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

    /// The total token budget the model is told it has for the task (`--task-budget`).
    pub fn task_budget(mut self, tokens: u64) -> Self {
        self.launch.task_budget = Some(tokens);
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
    /// (`initialize.excludeDynamicSections`). This keeps the CLI's own system prompt, as
    /// [`Options::cli_system_prompt`] does.
    pub fn exclude_dynamic_sections(mut self) -> Self {
        self.initialize.exclude_dynamic_sections = Some(true);
        self.cli_system_prompt = true;
        self
    }

    /// Asks for a suggested next prompt after each turn (`initialize.promptSuggestions`).
    pub fn prompt_suggestions(mut self) -> Self {
        self.initialize.prompt_suggestions = Some(true);
        self
    }

    /// Sends every prompt as written (`client_composed` on each user message): no `@path`
    /// expansion, no slash command, and none of the context the CLI attaches to a prompt
    /// (`CLAUDE.md` files, skill and tool listings, reminders); that context comes after the
    /// turn's first tool call instead. A message that sets `client_composed` itself keeps it.
    pub fn verbatim_prompts(mut self) -> Self {
        self.verbatim_prompts = true;
        self
    }
}
