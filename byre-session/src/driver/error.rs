//! The driver's errors, split by fault: [`Error`] for session calls, [`UsageError`] for
//! options that cannot work together, and [`HandlerError`] for what a handler returns.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use byre_transport::{ExitInfo, LaunchError};

use crate::session::{RequestFailure, StoreLoss};

/// Why a session call failed, split by fault.
///
/// [`fault`](Error::fault) says whose fault it is, which is what a caller acts on; the
/// guide's `docs/errors.md` goes through the variants.
///
/// ```no_run
/// use byre_session::{Claude, Error, Fault, Options};
///
/// # async fn run() {
/// match Claude::start(Options::new().resume("0b5e0000-1111-4222-8333-444455556666")).await {
///     Ok((claude, _events)) => drop(claude),
///     Err(Error::UnknownSession { session_id, .. }) => eprintln!("no session {session_id}"),
///     Err(error) if error.fault() == Fault::Launch => {
///         eprintln!("fix the setup: {error}") // not found, not executable, refused options
///     }
///     Err(error) => eprintln!("{error}"),
/// }
/// # }
/// ```
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The CLI could not be started, or exited before its first line: not found, not
    /// executable, refused `bypassPermissions` as root, or exited early with its status and
    /// stderr tail ([`LaunchError`] says which).
    #[error("the CLI could not start: {0}")]
    Launch(#[source] Arc<LaunchError>),
    /// `--resume` named a session the CLI does not have (it wrote an error result saying so
    /// and exited).
    #[error("no session {session_id} to resume: {message}")]
    UnknownSession {
        /// The id given to [`Options::resume`](crate::Options::resume).
        session_id: String,
        /// What the CLI said.
        message: String,
    },
    /// The CLI started, wrote an error result and exited before answering `initialize`.
    #[error("the CLI stopped at start-up: {message}")]
    StartFailed {
        /// What it said (its result's errors, else its stderr tail).
        message: String,
        /// The error result it wrote, when it wrote one.
        result: Option<Box<byre_proto::ResultMessage>>,
    },
    /// The CLI is older than the oldest version byre supports; it was stopped after saying
    /// its version. Upgrade it, or start anyway with
    /// [`Options::any_cli_version`](crate::Options::any_cli_version).
    #[error(
        "the Claude Code CLI is version {found}, but byre needs {oldest} or newer: upgrade it \
         (`claude update`, or `npm install -g @anthropic-ai/claude-code`), or allow it with \
         Options::any_cli_version"
    )]
    UnsupportedCli {
        /// The CLI's version.
        found: byre_proto::CliVersion,
        /// The oldest version byre supports.
        oldest: byre_proto::CliVersionNumber,
    },
    /// The options cannot work as given; nothing was started.
    #[error(transparent)]
    Usage(#[from] UsageError),
    /// The transcript file could not be created.
    #[error("transcript {}: {source}", path.display())]
    Transcript {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: Arc<std::io::Error>,
    },
    /// A request failed (refused by the CLI, timed out, cancelled, or the CLI exited).
    #[error("{subtype}: {failure}")]
    Request {
        /// The request subtype.
        subtype: String,
        /// Why.
        #[source]
        failure: RequestFailure,
    },
    /// A request found no answer in time while the events before its answer lay unread: the
    /// loop that reads the events awaited the request itself. The driver reads on for a
    /// request's answer while events wait, but no further than its byte budget (8 MiB of lines):
    /// await requests on another task, or keep reading the events while one is in flight.
    #[error(
        "{subtype}: no answer within {after:.1?} while {unread} events waited to be read: the \
         answer is most likely behind them; await requests on another task than the one \
         reading the events (or keep reading while a request is in flight)"
    )]
    RequestBehindEvents {
        /// The request subtype.
        subtype: String,
        /// How long it waited.
        after: std::time::Duration,
        /// How many events the driver held, unread, when it gave up.
        unread: usize,
    },
    /// The CLI did not answer `initialize` in time: it started, but is stuck at start-up.
    #[error(
        "the CLI did not answer initialize within {after:.1?}: it may be stuck at start-up (an \
         MCP server that does not start, a network it cannot reach, a question on its \
         terminal); a longer wait is Options::request_timeout (byre run --request-timeout \
         SECS). {}",
        match stderr_tail.trim() {
            "" => "Its stderr was empty.".to_owned(),
            tail => format!("Its stderr ends: {tail}"),
        }
    )]
    InitializeTimeout {
        /// How long byre waited.
        after: Duration,
        /// The end of the CLI's stderr.
        stderr_tail: String,
    },
    /// A success payload did not decode as its typed answer (the CLI changed its shape).
    #[error("{subtype}: the answer does not decode: {message}")]
    BadAnswer {
        /// The request subtype.
        subtype: String,
        /// The decode error.
        message: String,
    },
    /// The session has ended, or its input has (after
    /// [`Claude::end_input`](crate::Claude::end_input)).
    #[error("the session has ended: {0}")]
    Closed(String),
    /// The call was refused before anything was written (a raw line holding a newline).
    #[error("invalid input: {0}")]
    InvalidInput(String),
    /// The session store failed while a session was loaded from it to resume.
    #[error("the session store: {0}")]
    Store(#[source] Arc<byre_transport::store::StoreError>),
    /// The CLI closed its stdin while it ran: a write to it failed (`EPIPE`). What it was not
    /// given can never reach it, so the session was ended and the CLI stopped; the transcript
    /// notes each line not delivered.
    #[error(
        "the CLI closed its input (stdin) while it ran: {} sent to it {} not delivered ({error}); \
         the session was ended and the CLI stopped{}",
        match not_delivered { 1 => "1 line".to_owned(), n => format!("{n} lines") },
        if *not_delivered == 1 { "was" } else { "were" },
        stopped(exit.as_ref())
    )]
    InputClosed {
        /// Why the write failed (`Broken pipe` when the CLI closed its end).
        #[source]
        error: Arc<std::io::Error>,
        /// How many lines (prompts, answers, requests) were not written.
        not_delivered: usize,
        /// How the CLI ended once stopped (`None` when it could not be waited for).
        exit: Option<ExitInfo>,
    },
    /// The budget the sessions share ([`Limits::budget_usd`](crate::Limits::budget_usd)) is
    /// spent: no new prompt, no new session.
    #[error("the shared budget is spent: ${spent:.4} of ${budget:.4}")]
    BudgetSpent {
        /// What the sessions spent together, in US dollars.
        spent: f64,
        /// The budget.
        budget: f64,
    },
    /// The session did not write everything for the user: transcript lines (a full disk) or
    /// entries for the session store (it failed, or was too slow). Given by
    /// [`Claude::close`](crate::Claude::close) and [`Claude::wait`](crate::Claude::wait)
    /// even when the CLI itself ended well; what was lost, and how the CLI ended, are inside.
    #[error("not everything was written: {0}")]
    NotWritten(Arc<NotWritten>),
}

/// How a stopped CLI ended, for a message: its status and its stderr tail.
fn stopped(exit: Option<&ExitInfo>) -> String {
    let Some(exit) = exit else {
        return String::new();
    };
    match exit.stderr_tail.trim() {
        "" => format!(" ({}; its stderr was empty)", exit.status),
        tail => format!(" ({}); its stderr ends: {tail}", exit.status),
    }
}

impl From<LaunchError> for Error {
    fn from(error: LaunchError) -> Self {
        Error::Launch(Arc::new(error))
    }
}

/// Options that would make a registered handler unreachable, or ask the CLI for something it
/// cannot do: [`Claude::start`](crate::Claude::start) refuses them before anything runs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum UsageError {
    /// A session store mirrors the session files the CLI writes, but
    /// [`Options::no_session_persistence`](crate::Options::no_session_persistence) says to
    /// write none.
    #[error(
        "a session store is set, but session persistence is off: the CLI writes no session \
         files, so there is nothing to mirror"
    )]
    StoreWithoutPersistence,
    /// A permission handler is registered but the permission mode would never ask it.
    #[error(
        "a can_use_tool handler is registered, but permission mode {mode} never asks it: \
         leave the mode unset (byre then uses `default`, which asks the handler) or choose \
         `default`, `acceptEdits` or `plan`; or remove the handler"
    )]
    PermissionHandlerShadowed {
        /// The mode chosen.
        mode: String,
    },
    /// A permission handler is registered but `--permission-prompt-tool` names another tool.
    #[error(
        "a can_use_tool handler is registered, but the permission prompt tool is {tool:?}: \
         the CLI asks the host only with `stdio`"
    )]
    PermissionPromptToolShadowed {
        /// The tool named.
        tool: String,
    },
    /// A hook fails closed, but the CLI's `initialize` answer does not say it supports
    /// `onFailure` (older CLIs ignore it, so the hook would fail open).
    #[error(
        "hook {event} fails closed (on_failure block), but this CLI does not support onFailure \
         (no hook_on_failure_supported in its initialize answer): upgrade the CLI"
    )]
    OnFailureUnsupported {
        /// The hook event.
        event: String,
    },
    /// A raw handler was given for a subtype byre serves itself (`hook_callback`,
    /// `mcp_message`).
    #[error(
        "a raw handler was given for {subtype}, which byre routes itself: register hooks with \
         Options::hook and in-process MCP servers with Options::serve_mcp"
    )]
    ReservedSubtype {
        /// The subtype.
        subtype: String,
    },
    /// The CLI said it did not apply the settings or MCP servers sent in `initialize`
    /// (`settings_applied` or `mcp_servers_applied` false): nothing runs without them.
    #[error(
        "the CLI did not apply the {what} sent in initialize; a wrapper may have removed \
         --await-initialize, or use Options::delivery(Delivery::Argv)"
    )]
    NotApplied {
        /// What it did not apply.
        what: &'static str,
    },
    /// The CLI said it did not apply the hooks sent in `initialize`.
    #[error("the CLI did not apply the hooks sent in initialize (hooks_applied: false)")]
    HooksNotApplied,
}

/// What a handler (hook, permission prompt, question, elicitation, dialog) fails with: any
/// error type, or a message. The CLI gets its text as the error answer.
///
/// Handlers return `Result<T, HandlerError>`, and every error type converts into it, so `?`
/// works on `std::io::Error`, `serde_json::Error`, `Box<dyn Error>`, ...; a message is
/// `Err("why".into())` (from a `String` or `&str`).
#[derive(Debug)]
pub struct HandlerError(Box<dyn std::error::Error + Send + Sync>);

impl HandlerError {
    /// A handler error with this message.
    pub fn new(message: impl Into<String>) -> Self {
        HandlerError(message.into().into())
    }

    /// The underlying error.
    pub fn into_inner(self) -> Box<dyn std::error::Error + Send + Sync> {
        self.0
    }
}

impl std::fmt::Display for HandlerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(&self.0, f)
    }
}

impl<E: Into<Box<dyn std::error::Error + Send + Sync>>> From<E> for HandlerError {
    fn from(error: E) -> Self {
        HandlerError(error.into())
    }
}

/// Whose fault an [`Error`] is: what a caller can do about it differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Fault {
    /// The CLI could not be started: the program, its arguments or the machine (not found,
    /// not executable, refused its options, an unknown session to resume). Fix the setup.
    Launch,
    /// The API was misused (options that cannot work together, a raw line with a newline in
    /// it).
    Usage,
    /// The CLI broke the protocol: an answer that does not decode as its type.
    Protocol,
    /// The CLI refused the request (an error answer, with its `error_code` when it gave one).
    Refused,
    /// No answer in time, or the host withdrew the request.
    Timeout,
    /// The CLI exited, closed its input, or the session was closed: the session is over.
    Exited,
    /// A write byre makes for the user failed (the transcript on a full disk, the session
    /// store): the session itself may have gone well.
    NotWritten,
    /// A limit the sessions share refused it (the budget is spent).
    Limit,
}

impl Error {
    /// Whose fault this error is.
    pub fn fault(&self) -> Fault {
        match self {
            Error::Launch(_)
            | Error::UnsupportedCli { .. }
            | Error::UnknownSession { .. }
            | Error::StartFailed { .. }
            | Error::Transcript { .. }
            | Error::Store(_) => Fault::Launch,
            Error::InvalidInput(_) | Error::Usage(_) => Fault::Usage,
            Error::BadAnswer { .. } => Fault::Protocol,
            Error::InitializeTimeout { .. } | Error::RequestBehindEvents { .. } => Fault::Timeout,
            Error::Request { failure, .. } => match failure {
                RequestFailure::Refused { .. } => Fault::Refused,
                RequestFailure::TimedOut(_) | RequestFailure::Cancelled => Fault::Timeout,
                RequestFailure::Exited(_) => Fault::Exited,
                RequestFailure::NotSent(_) => Fault::Usage,
            },
            Error::Closed(_) | Error::InputClosed { .. } => Fault::Exited,
            Error::NotWritten(_) => Fault::NotWritten,
            Error::BudgetSpent { .. } => Fault::Limit,
        }
    }

    /// The CLI's `error_code` when it refused the request.
    pub fn error_code(&self) -> Option<&byre_proto::ErrorCode> {
        match self {
            Error::Request {
                failure: RequestFailure::Refused { code, .. },
                ..
            } => code.as_ref(),
            _ => None,
        }
    }
}

/// Lines a transcript is missing: its writer stopped at a failed write (see
/// [`TranscriptWriter`](crate::transport::TranscriptWriter)), the file holds the session up to
/// its last whole line.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct TranscriptLoss {
    /// The transcript file.
    pub path: PathBuf,
    /// The write that failed.
    pub error: Arc<std::io::Error>,
    /// How many lines are not in the file.
    pub lines: u64,
}

/// What a session did not write for the user: transcript lines, entries for the session
/// store, or both. [`Claude::close`](crate::Claude::close) (and [`Claude::wait`]) give it as
/// [`Error::NotWritten`] even when the CLI itself ended well: its end is in `exit`.
///
/// [`Claude::wait`]: crate::Claude::wait
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct NotWritten {
    /// How the CLI ended, when it was waited for.
    pub exit: Option<ExitInfo>,
    /// The error the session ended with besides, when there was one (the CLI closed its
    /// input while it ran, ...).
    pub failure: Option<Error>,
    /// The transcript's loss, when it lost lines.
    pub transcript: Option<TranscriptLoss>,
    /// The entries that did not reach the store, per transcript (at most
    /// [`STORE_LOSS_KEYS`](crate::session::STORE_LOSS_KEYS) keys, the rest under `None`).
    pub store: Vec<StoreLoss>,
}

impl NotWritten {
    /// How many entries did not reach the store, in all.
    pub fn store_entries(&self) -> u64 {
        self.store.iter().map(|l| l.entries).sum()
    }
}

impl fmt::Display for NotWritten {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        if let Some(t) = &self.transcript {
            parts.push(format!(
                "{} not written to the transcript {} ({}); it ends at its last whole line \
                 before that",
                count(t.lines, "line"),
                t.path.display(),
                t.error
            ));
        }
        if !self.store.is_empty() {
            let keys = self
                .store
                .iter()
                .map(|loss| {
                    let key = match &loss.key {
                        Some(key) => key.to_string(),
                        None => "other transcripts".to_owned(),
                    };
                    format!("{} of {key}: {}", loss.entries, one_line(&loss.error))
                })
                .collect::<Vec<_>>()
                .join("; ");
            parts.push(format!(
                "{} not stored in the session store ({keys}); the CLI's own session files \
                 have them",
                count(self.store_entries(), "session entry"),
            ));
        }
        if parts.is_empty() {
            parts.push("nothing was lost".to_owned());
        }
        f.write_str(&parts.join("; "))?;
        if let Some(failure) = &self.failure {
            write!(f, "; the session ended with an error too: {failure}")?;
        }
        Ok(())
    }
}

/// A store's error on one line, and at most [`ERROR_CHARS`] characters of it (a backend's
/// may hold a whole XML document).
fn one_line(error: &str) -> String {
    let mut line = error.split_whitespace().collect::<Vec<_>>().join(" ");
    if let Some((cut, _)) = line.char_indices().nth(ERROR_CHARS) {
        line.truncate(cut);
        line.push('…');
    }
    line
}

/// The most characters of a store's error [`NotWritten`]'s message shows.
const ERROR_CHARS: usize = 300;

/// `1 line`, `3 lines`, `1 session entry`, `2 session entries`.
fn count(n: u64, noun: &str) -> String {
    match (n, noun.strip_suffix('y')) {
        (1, _) => format!("1 {noun}"),
        (n, Some(stem)) => format!("{n} {stem}ies"),
        (n, None) => format!("{n} {noun}s"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_store_error_is_shown_on_one_short_line() {
        assert_eq!(
            one_line("404 Not Found:\n<?xml?>\n  <Error/>"),
            "404 Not Found: <?xml?> <Error/>"
        );
        let long = one_line(&"é".repeat(1000));
        assert_eq!(long.chars().count(), ERROR_CHARS + 1);
        assert!(long.ends_with('…'));
    }

    #[test]
    fn counts_read_as_english() {
        assert_eq!(count(1, "line"), "1 line");
        assert_eq!(count(0, "line"), "0 lines");
        assert_eq!(count(2229, "line"), "2229 lines");
        assert_eq!(count(1, "session entry"), "1 session entry");
        assert_eq!(count(501, "session entry"), "501 session entries");
    }
}
