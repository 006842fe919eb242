//! The command line: `byre run`, `byre chat` and `byre replay`, their options, and the session
//! options they turn into.

use std::path::PathBuf;

use byre_session::driver::Options;
use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::errors::CliError;

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
    /// Print a transcript (`--transcript`, or `--output json` saved to a file) as a
    /// conversation.
    Replay {
        /// The transcript file.
        file: PathBuf,
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
        let mut options = self.base_options(program)?;
        match (&self.resume, &self.fork_at) {
            (Some(session), Some(at)) => {
                let (forked, _new_id) = options.fork(session, at, self.working_dir()?);
                options = forked;
                if let Some(id) = &self.session_id {
                    options.launch.session_id = Some(id.clone());
                }
            }
            (Some(session), None) => {
                options = options.resume(session);
                options.launch.session_id = self.session_id.clone();
            }
            (None, _) => options.launch.session_id = self.session_id.clone(),
        }
        Ok(options)
    }

    /// Session options without resume, fork or session id: for sessions started later, such
    /// as a fork in `chat`.
    pub(crate) fn base_options(&self, program: PathBuf) -> Result<Options, CliError> {
        let mut options = Options::new();
        options.launch.program = Some(program);
        options.launch.model = self.model.clone();
        options.launch.permission_mode = self.permission_mode.clone();
        options.launch.cwd = Some(self.working_dir()?);
        options.transcript = self.transcript.clone();
        if let Some(bytes) = self.max_line_bytes {
            if bytes == 0 {
                return Err(CliError::ZeroLineLimit);
            }
            options.max_line = Some(bytes);
        }
        Ok(options)
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
        assert_eq!(options.launch.program, Some(PathBuf::from("/bin/claude")));
        assert_eq!(options.launch.model.as_deref(), Some("haiku"));
        assert_eq!(options.launch.permission_mode.as_deref(), Some("plan"));
        assert_eq!(options.launch.cwd, Some(dir.clone()));
        assert_eq!(options.max_line, Some(4096));
        assert_eq!(options.transcript, Some(PathBuf::from("/tmp/t.jsonl")));
        assert_eq!(
            options.launch.session_id.as_deref(),
            Some("11111111-2222-4333-8444-555555555555")
        );
        assert_eq!(options.launch.resume, None);
    }

    #[test]
    fn resume_and_fork_at_fork_the_session() {
        let args = parse(&["--resume", "abc", "--fork-at", "uuid-1"]);
        let options = args.options(PathBuf::from("claude")).unwrap();
        assert_eq!(options.launch.resume.as_deref(), Some("abc"));
        assert_eq!(options.launch.resume_session_at.as_deref(), Some("uuid-1"));
        assert!(options.launch.fork_session);
        let new_id = options.launch.session_id.expect("a new session id");
        assert_ne!(new_id, "abc");

        let args = parse(&["--resume", "abc"]);
        let options = args.options(PathBuf::from("claude")).unwrap();
        assert_eq!(options.launch.resume.as_deref(), Some("abc"));
        assert!(!options.launch.fork_session);
        assert_eq!(options.launch.session_id, None);
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
    }
}
