//! What can go wrong, each with a message that says what to do: the CLI not found, refused as
//! root, not logged in, an unknown session to resume, bad arguments or input.

use std::path::PathBuf;

use byre_session::Error as SessionError;
use byre_transport::LaunchError;

/// The command that installs the Claude Code CLI.
pub(crate) const INSTALL: &str = "npm install -g @anthropic-ai/claude-code";

/// Why a command failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CliError {
    /// No `claude` binary was found.
    #[error(
        "the claude CLI was not found (looked in: {}).\n  Install it with `{INSTALL}`, \
         or give its path with --claude PATH or BYRE_CLAUDE_BIN.",
        looked.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
    )]
    NotFound {
        /// Every place searched.
        looked: Vec<PathBuf>,
    },
    /// The binary given cannot be run.
    #[error("{0}")]
    NotRunnable(LaunchError),
    /// The CLI refuses `bypassPermissions` when run as root.
    #[error(
        "the CLI refuses the bypassPermissions mode (byre's default) when run as root.\n  \
         Inside a sandbox or container, set IS_SANDBOX=1 in the environment; otherwise choose \
         another mode, e.g. --permission-mode default or --permission-mode acceptEdits."
    )]
    RootBypass,
    /// The CLI has no credentials.
    #[error(
        "the CLI is not logged in.\n  Set ANTHROPIC_API_KEY in the environment, or run \
         `claude` once and log in with /login."
    )]
    NotLoggedIn,
    /// `--resume` named a session the CLI does not have.
    #[error(
        "no session {id} to resume: the CLI found no conversation with that id.\n  Sessions \
         are kept per user (in ~/.claude); check the id, and that HOME is the same as when it \
         ran (or, from a store, the --store URL and --store-project)."
    )]
    UnknownSession {
        /// The id given.
        id: String,
    },
    /// The CLI could not be started or stopped at start-up for another reason.
    #[error("the CLI could not start: {0}")]
    Launch(String),
    /// The session failed after it started.
    #[error("{0}")]
    Session(SessionError),
    /// `--cwd` is not a directory.
    #[error("--cwd {}: no such directory", .0.display())]
    NoSuchDir(PathBuf),
    /// The current directory cannot be read.
    #[error("cannot read the current directory: {0}")]
    CurrentDir(std::io::Error),
    /// `--request-timeout` is negative or not a number.
    #[error("--request-timeout {0}: not a number of seconds")]
    BadTimeout(f64),
    /// `--store-wait` is negative or not a number.
    #[error("--store-wait {0}: not a number of seconds")]
    BadStoreWait(f64),
    /// The CLI exited in the middle of a turn (it had started and answered).
    #[error("{0}")]
    Exited(String),
    /// `--max-line-bytes 0`.
    #[error("--max-line-bytes must be at least 1")]
    ZeroLineLimit,
    /// `--mcp-config` is neither a readable file nor JSON of the right shape.
    #[error("--mcp-config {given}: {why}")]
    McpConfig {
        /// What was given.
        given: String,
        /// What is wrong with it.
        why: String,
    },
    /// `--agents`, `--settings` or `--json-schema` is neither a readable file nor a JSON
    /// object.
    #[error("{flag} {given}: {why}")]
    JsonArg {
        /// The flag.
        flag: &'static str,
        /// What was given.
        given: String,
        /// What is wrong with it.
        why: String,
    },
    /// `--store` names no store byre can open.
    #[error("--store: {0}")]
    Store(String),
    /// The prompt could not be read from stdin.
    #[error("cannot read the prompt from stdin: {0}")]
    Stdin(std::io::Error),
    /// The session history could not be read.
    #[error("{0}")]
    History(String),
    /// The prompt is empty.
    #[error("the prompt is empty")]
    EmptyPrompt,
    /// `--json-schema` was given, the turn succeeded, and its result holds no structured
    /// output.
    #[error("the result holds no structured output (is the schema one the model can follow?)")]
    NoStructuredOutput,
    /// stdout could not be written (the structured output, or what `show` and `sessions`
    /// print).
    #[error("cannot write to stdout: {0}")]
    Stdout(std::io::Error),
    /// The line editor failed.
    #[error("the line editor failed: {0}")]
    Editor(String),
    /// A transcript could not be read.
    #[error("{}: {message}", path.display())]
    Replay {
        /// The file.
        path: PathBuf,
        /// What is wrong, with the line number when it is about one line.
        message: String,
    },
}

impl CliError {
    /// The error for a `claude` binary that could not be found or run.
    pub(crate) fn from_find(error: LaunchError) -> CliError {
        match error {
            LaunchError::NotFound { looked } => CliError::NotFound { looked },
            other => CliError::NotRunnable(other),
        }
    }

    /// The error for a session that did not start, from the session's typed error.
    pub(crate) fn from_start(error: SessionError) -> CliError {
        match error {
            SessionError::Launch(launch) => match &*launch {
                LaunchError::NotFound { looked } => CliError::NotFound {
                    looked: looked.clone(),
                },
                LaunchError::RootBypass { .. } => CliError::RootBypass,
                other => CliError::Launch(other.to_string()),
            },
            SessionError::UnknownSession { session_id, .. } => {
                CliError::UnknownSession { id: session_id }
            }
            other => CliError::Session(other),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_up_failures_are_told_apart_by_variant() {
        let unknown = CliError::from_start(SessionError::UnknownSession {
            session_id: "1234".into(),
            message: "No conversation found".into(),
        });
        assert!(matches!(unknown, CliError::UnknownSession { id } if id == "1234"));
        let not_found = CliError::from_start(
            LaunchError::NotFound {
                looked: vec![PathBuf::from("/nowhere/claude")],
            }
            .into(),
        );
        assert!(matches!(not_found, CliError::NotFound { .. }));
        let other = CliError::from_start(SessionError::StartFailed {
            message: "boom".into(),
            result: None,
        });
        assert!(matches!(other, CliError::Session(e) if e.to_string().contains("boom")));
    }

    #[test]
    fn the_not_found_message_names_the_install_command() {
        let error = CliError::from_find(LaunchError::NotFound {
            looked: vec![PathBuf::from("/nowhere/claude")],
        });
        let text = error.to_string();
        assert!(text.contains(INSTALL), "{text}");
        assert!(text.contains("/nowhere/claude"), "{text}");
    }
}
