//! The command line: `byre run`, `byre chat` and `byre replay`, their options, and the session
//! options they turn into.

use std::path::PathBuf;

use byre_session::proto::PermissionMode;
use byre_session::Options;
use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::errors::CliError;

/// How long a turn may hear nothing from the CLI before `run` and `chat` stop it, in seconds.
const DEFAULT_STALL_TIMEOUT: f64 = 300.0;

/// Drive the Claude Code CLI from a terminal: run one prompt, chat, or replay a transcript.
#[derive(Debug, Parser)]
#[command(name = "byre", version, about, long_about = None)]
pub(crate) struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub(crate) command: Command,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Run one prompt and print the answer as it streams (`-` reads the prompt from stdin).
    Run {
        /// The prompt, or `-` to read it from stdin.
        prompt: String,
        /// End at the prompt's result, without waiting for the background tasks it started
        /// (by default `run` waits until the CLI says the run is idle, showing their progress).
        #[arg(long)]
        no_wait: bool,
        /// Session options.
        #[command(flatten)]
        session: SessionArgs,
    },
    /// An interactive session: Ctrl-C interrupts a turn; `/model NAME`, `/fork`, `/quit`.
    Chat {
        /// Session options.
        #[command(flatten)]
        session: SessionArgs,
        /// The file that keeps the line history between sessions (default:
        /// `$XDG_STATE_HOME/byre/chat_history`, else `~/.local/state/byre/chat_history`).
        #[arg(long, value_name = "FILE")]
        history: Option<PathBuf>,
        /// Keep the line history for this session only.
        #[arg(long, conflicts_with = "history")]
        no_history: bool,
    },
    /// List the CLI's own sessions, newest first: id, when, size, title or first prompt.
    /// The sessions of the other worktrees of the project's git repository are listed with
    /// it, as the CLI's picker does.
    Sessions {
        /// The project whose sessions to list (default: the current directory).
        #[arg(long, value_name = "DIR", conflicts_with = "all")]
        cwd: Option<PathBuf>,
        /// Every project's sessions.
        #[arg(long, conflicts_with = "store")]
        all: bool,
        /// At most this many.
        #[arg(long, value_name = "N")]
        limit: Option<usize>,
        /// Leave out the sessions a program started (the SDKs', byre's, a daemon's, those
        /// another session started): the user's own only.
        #[arg(long, conflicts_with = "store")]
        hide_programmatic: bool,
        #[command(flatten)]
        stored: StoredSessions,
    },
    /// Print one of the CLI's sessions as a conversation (as `replay` prints a transcript).
    Show {
        /// The session id.
        session: String,
        #[command(flatten)]
        stored: StoredSessions,
    },
    /// Print a transcript (`--transcript`, or `--output json` saved to a file) as a
    /// conversation.
    Replay {
        /// The transcript file.
        file: PathBuf,
        /// The longest line read, in bytes (64 MiB and a little more for a transcript line's
        /// envelope, by default); a longer line is reported and skipped.
        #[arg(long, value_name = "BYTES")]
        max_line_bytes: Option<usize>,
    },
}

/// What goes to stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Output {
    /// The answer as it streams; tool calls and progress on stderr.
    Text,
    /// Every message from the CLI as one JSON object per line.
    Json,
    /// At the end, one `TYPE=COUNT` line per message type and `messages=N`.
    Stats,
}

/// Sessions read from a store instead of the CLI's own files (`sessions` and `show`).
#[derive(Debug, Args)]
pub(crate) struct StoredSessions {
    /// Read the sessions a store holds for the project instead (`file:///DIR`,
    /// `s3://BUCKET/PREFIX`, ...: as `run --store`).
    #[arg(long, value_name = "URL")]
    pub(crate) store: Option<String>,
    /// With `--store`: the project's key in the store instead of the directory's name.
    #[arg(
        long,
        value_name = "KEY",
        requires = "store",
        allow_hyphen_values = true
    )]
    pub(crate) store_project: Option<String>,
}

/// Options shared by `run` and `chat`.
#[derive(Debug, Clone, Args)]
pub(crate) struct SessionArgs {
    /// The `claude` binary (default: `BYRE_CLAUDE_BIN`, then `PATH` and the usual install
    /// places).
    #[arg(long, value_name = "PATH")]
    pub(crate) claude: Option<PathBuf>,
    /// The model (`--model` of the CLI).
    #[arg(long, value_name = "NAME")]
    pub(crate) model: Option<String>,
    /// The permission mode (`default`, `acceptEdits`, `plan`, `bypassPermissions`, ...);
    /// `bypassPermissions` when not given.
    #[arg(long, value_name = "MODE")]
    pub(crate) permission_mode: Option<String>,
    /// The working directory of the CLI.
    #[arg(long, value_name = "DIR")]
    pub(crate) cwd: Option<PathBuf>,
    /// Continue this session.
    #[arg(long, value_name = "ID")]
    pub(crate) resume: Option<String>,
    /// Continue the latest session of the working directory.
    #[arg(long = "continue", conflicts_with = "resume")]
    pub(crate) continue_latest: bool,
    /// Mirror the session to a store as it runs, and load `--resume` and `--continue`
    /// sessions from it: `file:///DIR`, `s3://BUCKET/PREFIX` (with the usual `AWS_*`
    /// environment variables; `AWS_ENDPOINT` for an S3-compatible server), `gs://…`, `az://…`.
    #[arg(long, value_name = "URL")]
    pub(crate) store: Option<String>,
    /// With `--store`: the key sessions are stored under instead of the working directory's
    /// name (for a repository checked out in different places on different hosts). The
    /// CLI's own names start with a dash (`-home-me-repo`): they are taken as the value.
    #[arg(
        long,
        value_name = "KEY",
        requires = "store",
        allow_hyphen_values = true
    )]
    pub(crate) store_project: Option<String>,
    /// With `--store` and `--resume`/`--continue`: how long to wait for the stored session
    /// when another process holds it (runs it now), instead of failing at once.
    #[arg(long, value_name = "SECS", requires = "store")]
    pub(crate) store_wait: Option<f64>,
    /// With `--store`: pass the store's credential variables (`AWS_*`, `GOOGLE_*`, `AZURE_*`)
    /// on to the CLI, which does not get them otherwise.
    #[arg(long, requires = "store")]
    pub(crate) pass_store_credentials: bool,
    /// Start the CLI with a cleared environment: only what it needs to run (`PATH`, `HOME`,
    /// the locale, proxies and certificates, `ANTHROPIC_*`, `CLAUDE_*`, ...) and the variables
    /// `--env-allow` names are passed on.
    #[arg(long)]
    pub(crate) clear_env: bool,
    /// With `--clear-env`: more variables to pass on (names, or prefixes ending in `*`); repeat
    /// the flag or separate with commas.
    #[arg(
        long,
        value_name = "NAME",
        value_delimiter = ',',
        requires = "clear_env"
    )]
    pub(crate) env_allow: Vec<String>,
    /// With `--resume`: fork the session at this message (an answer's uuid) into a new one.
    #[arg(long, value_name = "UUID", requires = "resume")]
    pub(crate) fork_at: Option<String>,
    /// The id of the new session (a UUID).
    #[arg(long, value_name = "ID")]
    pub(crate) session_id: Option<String>,
    /// Write every line exchanged with the CLI to this file (`byre replay` reads it).
    #[arg(long, value_name = "FILE")]
    pub(crate) transcript: Option<PathBuf>,
    /// The longest line accepted from the CLI, in bytes (64 MiB by default).
    #[arg(long, value_name = "BYTES")]
    pub(crate) max_line_bytes: Option<usize>,
    /// How long the CLI may take to answer `initialize` and byre's other requests, in seconds
    /// (60 by default).
    #[arg(long, value_name = "SECS")]
    pub(crate) request_timeout: Option<f64>,
    /// End a turn that hears nothing from the CLI for this many seconds (300 by default; 0
    /// waits for ever): the CLI is stopped and byre exits 75. A running tool's heartbeat
    /// (every 30 s) and time spent waiting for an answer from you count as life.
    #[arg(long, value_name = "SECS")]
    pub(crate) stall_timeout: Option<f64>,
    /// Replace the CLI's system prompt.
    #[arg(long, value_name = "TEXT")]
    pub(crate) system_prompt: Option<String>,
    /// Add to the CLI's system prompt.
    #[arg(long, value_name = "TEXT")]
    pub(crate) append_system_prompt: Option<String>,
    /// Tools allowed without asking (`Bash`, `Bash(git:*)`, `Read`, ...); repeat the flag or
    /// separate with commas.
    #[arg(long, value_name = "TOOL", value_delimiter = ',')]
    pub(crate) allowed_tools: Vec<String>,
    /// Tools the model may not use; repeat the flag or separate with commas.
    #[arg(long, value_name = "TOOL", value_delimiter = ',')]
    pub(crate) disallowed_tools: Vec<String>,
    /// Stop a prompt's run after this many turns of the model.
    #[arg(long, value_name = "N")]
    pub(crate) max_turns: Option<u32>,
    /// Another directory the CLI may work in; repeat for more.
    #[arg(long, value_name = "DIR")]
    pub(crate) add_dir: Vec<PathBuf>,
    /// MCP servers: a file or inline JSON of the form `{"mcpServers": {NAME: CONFIG, ...}}`;
    /// repeat for more.
    #[arg(long, value_name = "FILE|JSON")]
    pub(crate) mcp_config: Vec<String>,
    /// The most the session may spend, in US dollars.
    #[arg(long, value_name = "USD")]
    pub(crate) max_budget_usd: Option<f64>,
    /// The model used when the main one is overloaded.
    #[arg(long, value_name = "NAME")]
    pub(crate) fallback_model: Option<String>,
    /// How hard the model thinks (`low`, `medium`, `high`, `xhigh`, `max`).
    #[arg(long, value_name = "LEVEL")]
    pub(crate) effort: Option<String>,
    /// Subagent definitions: a file or inline JSON `{NAME: {"description": ..., "prompt":
    /// ...}}`.
    #[arg(long, value_name = "FILE|JSON")]
    pub(crate) agents: Option<String>,
    /// Settings: a file or inline JSON, as in `settings.json`.
    #[arg(long, value_name = "FILE|JSON")]
    pub(crate) settings: Option<String>,
    /// Write nothing of the session to disk (it cannot be resumed).
    #[arg(long)]
    pub(crate) no_session_persistence: bool,
    /// A JSON Schema the answer must follow (a file or inline JSON): `run` prints the
    /// structured output as one JSON line on stdout and the answer's text on stderr; `chat`
    /// prints it after each answer.
    #[arg(long, value_name = "FILE|JSON")]
    pub(crate) json_schema: Option<String>,
    /// What to print on stdout.
    #[arg(long, value_enum, default_value_t = Output::Text)]
    pub(crate) output: Output,
}

impl SessionArgs {
    /// The working directory the CLI runs in: `--cwd`, else the current one.
    pub(crate) fn working_dir(&self) -> Result<PathBuf, CliError> {
        match &self.cwd {
            Some(dir) if dir.is_dir() => Ok(dir.clone()),
            Some(dir) => Err(CliError::NoSuchDir(dir.clone())),
            None => std::env::current_dir().map_err(CliError::CurrentDir),
        }
    }

    /// Session options for the first session: every flag, resume and fork included. `program`
    /// is the `claude` binary, already found.
    pub(crate) fn options(&self, program: PathBuf) -> Result<Options, CliError> {
        let mut options = self.base_options(program, self.model.as_deref())?;
        match (&self.resume, &self.fork_at) {
            (Some(session), Some(at)) => {
                options = options.fork(session, at, self.working_dir()?).0;
            }
            (Some(session), None) => options = options.resume(session),
            (None, _) if self.continue_latest => options = options.continue_conversation(),
            (None, _) => {}
        }
        if let Some(id) = &self.session_id {
            options = options.session_id(id);
        }
        Ok(options)
    }

    /// Session options without resume, fork or session id, with `model` (the CLI's default
    /// when `None`): for sessions started later, such as a fork in `chat`.
    pub(crate) fn base_options(
        &self,
        program: PathBuf,
        model: Option<&str>,
    ) -> Result<Options, CliError> {
        // A terminal has no one to ask: `byre run` runs every tool unless told otherwise.
        let mode = self.permission_mode.clone();
        // A terminal tool, like the CLI's own `-p`: Claude Code's system prompt unless replaced.
        let mut options = Options::new()
            .cli_system_prompt()
            .program(program)
            .permission_mode(mode.unwrap_or_else(|| PermissionMode::BYPASS_PERMISSIONS.to_string()))
            .cwd(self.working_dir()?)
            .allowed_tools(&self.allowed_tools)
            .disallowed_tools(&self.disallowed_tools);
        if let Some(model) = model {
            options = options.model(model);
        }
        if let Some(path) = &self.transcript {
            options = options.transcript(path);
        }
        if let Some(bytes) = self.max_line_bytes {
            if bytes == 0 {
                return Err(CliError::ZeroLineLimit);
            }
            options = options.max_line_bytes(bytes);
        }
        if let Some(secs) = self.request_timeout {
            let timeout = std::time::Duration::try_from_secs_f64(secs)
                .map_err(|_| CliError::BadTimeout(secs))?;
            options = options.request_timeout(timeout);
        }
        let stall = self.stall_timeout.unwrap_or(DEFAULT_STALL_TIMEOUT);
        if stall > 0.0 {
            let after = std::time::Duration::try_from_secs_f64(stall)
                .map_err(|_| CliError::BadTimeout(stall))?;
            options = options.stall_timeout(after);
        }
        if let Some(prompt) = &self.system_prompt {
            options = options.system_prompt(prompt);
        }
        if let Some(prompt) = &self.append_system_prompt {
            options = options.append_system_prompt(prompt);
        }
        if let Some(turns) = self.max_turns {
            options = options.max_turns(turns);
        }
        for dir in &self.add_dir {
            options = options.add_dir(dir);
        }
        for given in &self.mcp_config {
            for (name, config) in mcp_servers(given)? {
                options = options.mcp_config(name, config);
            }
        }
        if let Some(usd) = self.max_budget_usd {
            options = options.max_budget_usd(usd);
        }
        if let Some(model) = &self.fallback_model {
            options = options.fallback_model(model);
        }
        if let Some(effort) = &self.effort {
            options = options.effort(effort.clone());
        }
        if let Some(given) = &self.agents {
            options =
                options.agents_json(serde_json::Value::Object(json_object("--agents", given)?));
        }
        if let Some(given) = &self.settings {
            options = options.settings(json_object("--settings", given)?);
        }
        if self.no_session_persistence {
            options = options.no_session_persistence();
        }
        if let Some(url) = &self.store {
            let store = byre_transport::store::open_store(url)
                .map_err(|e| CliError::Store(e.to_string()))?;
            options = options.session_store(store);
            if let Some(key) = &self.store_project {
                options = options.store_project(key);
            }
            if let Some(secs) = self.store_wait {
                let wait = std::time::Duration::try_from_secs_f64(secs)
                    .map_err(|_| CliError::BadStoreWait(secs))?;
                options = options.store_lease_wait(wait);
            }
            if self.pass_store_credentials {
                options = options.pass_store_credentials();
            }
        }
        if self.clear_env {
            let defaults = byre_transport::DEFAULT_ENV_ALLOW
                .iter()
                .map(|n| n.to_string());
            options = options.env_allow(defaults.chain(self.env_allow.iter().cloned()));
        }
        if let Some(given) = &self.json_schema {
            let schema = json_object("--json-schema", given)?;
            options = options.json_schema(serde_json::Value::Object(schema));
        }
        Ok(options)
    }
}

/// A JSON value given inline (when it starts with `{`) or as a file; `fail` words the error.
fn inline_or_file<E>(
    given: &str,
    fail: impl Fn(String) -> E,
) -> Result<serde_json::Map<String, serde_json::Value>, E> {
    let text = if given.trim_start().starts_with('{') {
        given.to_owned()
    } else {
        std::fs::read_to_string(given).map_err(|e| fail(e.to_string()))?
    };
    serde_json::from_str(&text).map_err(|e| fail(format!("not a JSON object: {e}")))
}

/// A JSON object given to `flag`, inline or as a file.
fn json_object(
    flag: &'static str,
    given: &str,
) -> Result<serde_json::Map<String, serde_json::Value>, CliError> {
    inline_or_file(given, |why| CliError::JsonArg {
        flag,
        given: given.to_owned(),
        why,
    })
}

/// The servers of one `--mcp-config`: inline JSON when it starts with `{`, else a file.
fn mcp_servers(given: &str) -> Result<serde_json::Map<String, serde_json::Value>, CliError> {
    let fail = |why: String| CliError::McpConfig {
        given: given.to_owned(),
        why,
    };
    match inline_or_file(given, fail)?.remove("mcpServers") {
        Some(serde_json::Value::Object(servers)) => Ok(servers),
        _ => Err(fail("no \"mcpServers\" object".into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> SessionArgs {
        let argv = ["byre", "chat"].iter().chain(args);
        match Cli::try_parse_from(argv).expect("valid arguments").command {
            Command::Chat { session, .. } => session,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn flags_become_launch_options() {
        let dir = std::env::temp_dir();
        let dir_text = dir.to_str().unwrap();
        let args = parse(&[
            "--model",
            "haiku",
            "--permission-mode",
            "plan",
            "--cwd",
            dir_text,
            "--max-line-bytes",
            "4096",
            "--transcript",
            "/tmp/t.jsonl",
            "--session-id",
            "11111111-2222-4333-8444-555555555555",
        ]);
        let options = args.options(PathBuf::from("/bin/claude")).unwrap();
        assert_eq!(options.launch().program, Some(PathBuf::from("/bin/claude")));
        assert_eq!(options.launch().model.as_deref(), Some("haiku"));
        assert_eq!(options.launch().permission_mode.as_deref(), Some("plan"));
        // Unlike the library's, `byre run`'s default mode runs every tool unasked.
        let plain = parse(&[]).options(PathBuf::from("/bin/claude")).unwrap();
        assert_eq!(
            plain.launch().permission_mode.as_deref(),
            Some("bypassPermissions")
        );
        assert_eq!(options.launch().cwd, Some(dir.clone()));
        assert!(format!("{options:?}").contains("max_line: Some(4096)"));
        assert!(format!("{options:?}").contains(r#"transcript: Some("/tmp/t.jsonl")"#));
        assert_eq!(
            options.launch().session_id.as_deref(),
            Some("11111111-2222-4333-8444-555555555555")
        );
        assert_eq!(options.launch().resume, None);
    }

    #[test]
    fn prompt_tool_and_mcp_flags_become_launch_options() {
        let file = std::env::temp_dir().join(format!("byre-mcp-{}.json", std::process::id()));
        std::fs::write(
            &file,
            r#"{"mcpServers":{"files":{"type":"stdio","command":"fs"}}}"#,
        )
        .unwrap();
        let args = parse(&[
            "--append-system-prompt",
            "Be brief.",
            "--system-prompt",
            "You are terse.",
            "--allowed-tools",
            "Read,Bash(git:*)",
            "--allowed-tools",
            "Grep",
            "--disallowed-tools",
            "WebFetch",
            "--max-turns",
            "3",
            "--add-dir",
            "/tmp",
            "--mcp-config",
            file.to_str().unwrap(),
            "--mcp-config",
            r#"{"mcpServers":{"web":{"type":"http","url":"http://127.0.0.1:9/mcp"}}}"#,
        ]);
        let options = args.options(PathBuf::from("claude")).unwrap();
        std::fs::remove_file(&file).unwrap();
        let launch = options.launch();
        assert_eq!(launch.append_system_prompt.as_deref(), Some("Be brief."));
        assert_eq!(launch.system_prompt.as_deref(), Some("You are terse."));
        assert_eq!(launch.allowed_tools, ["Read", "Bash(git:*)", "Grep"]);
        assert_eq!(launch.disallowed_tools, ["WebFetch"]);
        assert_eq!(launch.max_turns, Some(3));
        assert_eq!(launch.add_dirs, [PathBuf::from("/tmp")]);
        assert_eq!(launch.mcp_servers["files"]["command"], "fs");
        assert_eq!(launch.mcp_servers["web"]["type"], "http");
    }

    #[test]
    fn a_bad_mcp_config_is_refused() {
        for given in ["/nonexistent/byre.json", "{not json", r#"{"servers":{}}"#] {
            let args = parse(&["--mcp-config", given]);
            let error = args.options(PathBuf::from("claude")).unwrap_err();
            assert!(
                matches!(&error, CliError::McpConfig { given: g, .. } if g == given),
                "{error}"
            );
        }
    }

    #[test]
    fn resume_and_fork_at_fork_the_session() {
        let args = parse(&["--resume", "abc", "--fork-at", "uuid-1"]);
        let options = args.options(PathBuf::from("claude")).unwrap();
        assert_eq!(options.launch().resume.as_deref(), Some("abc"));
        assert_eq!(
            options.launch().resume_session_at.as_deref(),
            Some("uuid-1")
        );
        assert!(options.launch().fork_session);
        let new_id = options
            .launch()
            .session_id
            .clone()
            .expect("a new session id");
        assert_ne!(new_id, "abc");

        let args = parse(&["--resume", "abc"]);
        let options = args.options(PathBuf::from("claude")).unwrap();
        assert_eq!(options.launch().resume.as_deref(), Some("abc"));
        assert!(!options.launch().fork_session);
        assert_eq!(options.launch().session_id, None);
    }

    #[test]
    fn bad_values_are_refused() {
        let args = parse(&["--max-line-bytes", "0"]);
        assert!(matches!(
            args.options(PathBuf::from("claude")),
            Err(CliError::ZeroLineLimit)
        ));
        let args = parse(&["--cwd", "/nonexistent/dir"]);
        assert!(matches!(
            args.options(PathBuf::from("claude")),
            Err(CliError::NoSuchDir(_))
        ));
        let argv = ["byre", "run", "--fork-at", "x", "hi"];
        assert!(
            Cli::try_parse_from(argv).is_err(),
            "--fork-at needs --resume"
        );
        for argv in [
            &["byre", "run", "--store-project", "k", "hi"][..],
            &["byre", "run", "--continue", "--resume", "abc", "hi"],
        ] {
            assert!(Cli::try_parse_from(argv).is_err(), "{argv:?}");
        }
    }

    #[test]
    fn store_flags_set_the_store_and_its_project() {
        let args = parse(&["--store", "memory:", "--store-project", "-home-me-repo"]);
        assert_eq!(args.store_project.as_deref(), Some("-home-me-repo"));
        assert!(args.options(PathBuf::from("claude")).is_ok());
        let args = parse(&["--continue"]);
        let options = args.options(PathBuf::from("claude")).unwrap();
        assert!(options.launch().continue_conversation);
        let args = parse(&["--store", "ftp://nowhere/x"]);
        let error = args.options(PathBuf::from("claude")).unwrap_err();
        assert!(matches!(&error, CliError::Store(_)), "{error}");
    }
}
