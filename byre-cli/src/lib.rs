//! The `byre` command-line tool: `byre run` and `byre chat` drive the Claude Code CLI with the
//! answer streamed live, tool calls, subagents and hooks shown with their elapsed time, Ctrl-C
//! as interrupt, resume and fork, and transcripts; `byre replay` reads a transcript back as a
//! conversation.
//!
//! The guide's [`byre` command page][byre-command] has every command, flag and exit code; its
//! [index][guide] covers the library by task. `cargo xtask demo` runs `byre run` offline against
//! byre-testkit's fake model.
//!
//! The binary is a thin `main` around [`main_with`]. A program can run the same command line
//! in-process and add its own hooks or in-process MCP servers to every session it starts with
//! a [`Setup`]; `cargo xtask demo` does that to serve a small MCP tool and a hook.
//!
//! ```no_run
//! # async fn demo() -> std::process::ExitCode {
//! let setup = byre_cli::Setup::new(|options| options);
//! byre_cli::main_with(["run", "Say hello"].map(Into::into), setup).await
//! # }
//! ```
//!
//! [byre-command]: https://github.com/byre-rs/byre/blob/main/docs/byre-command.md
//! [guide]: https://github.com/byre-rs/byre/blob/main/docs/README.md

use std::ffi::OsString;
use std::fmt;
use std::process::ExitCode;
use std::sync::Arc;

use byre_session::Options;
use clap::Parser;

mod answer;
mod args;
mod chat;
mod errors;
mod history;
mod labels;
mod render;
mod replay;
mod run;
mod signals;
pub mod traces;
mod visible;

/// Changes a program makes to the options of every session byre starts (the first one, and
/// each fork in `chat`): hooks, in-process MCP servers, environment. Applied after the
/// command-line flags.
#[derive(Clone, Default)]
pub struct Setup(Option<Arc<dyn Fn(Options) -> Options + Send + Sync>>);

impl Setup {
    /// A setup that applies `change` to every session's options.
    pub fn new(change: impl Fn(Options) -> Options + Send + Sync + 'static) -> Setup {
        Setup(Some(Arc::new(change)))
    }

    pub(crate) fn apply(&self, options: Options) -> Options {
        match &self.0 {
            Some(change) => change(options),
            None => options,
        }
    }
}

impl fmt::Debug for Setup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Setup").field(&self.0.is_some()).finish()
    }
}

/// Runs the `byre` command line `args` (without the program name) and returns its exit
/// status: 0 on success, 1 on an error (an error result, or a failure explained on stderr),
/// 2 on bad usage, 74 when the answer was fine but transcript lines or store entries were not
/// written (said on stderr), 130 after a second Ctrl-C, 141 when a write to stdout failed,
/// 128 + the signal after SIGTERM or SIGHUP. Call it inside a tokio runtime.
pub async fn main_with(args: impl IntoIterator<Item = OsString>, setup: Setup) -> ExitCode {
    let argv = std::iter::once(OsString::from("byre")).chain(args);
    let cli = match args::Cli::try_parse_from(argv) {
        Ok(cli) => cli,
        Err(error) => {
            let _ = error.print();
            return ExitCode::from(u8::try_from(error.exit_code()).unwrap_or(2));
        }
    };
    let outcome = match cli.command {
        args::Command::Run {
            prompt,
            no_wait,
            session,
        } => signals::until_stopped(run::run(prompt, no_wait, session, &setup)).await,
        args::Command::Chat {
            session,
            history,
            no_history,
        } => {
            let history = if no_history {
                None
            } else {
                history.or_else(chat::default_history)
            };
            signals::until_stopped(chat::chat(session, history, &setup)).await
        }
        args::Command::Replay {
            file,
            max_line_bytes,
        } => match max_line_bytes {
            Some(0) => Err(errors::CliError::ZeroLineLimit),
            limit => replay::replay(&file, limit.unwrap_or(byre_transport::TRANSCRIPT_MAX_LINE)),
        },
        args::Command::Sessions {
            cwd,
            all,
            limit,
            hide_programmatic,
            stored,
        } => match stored.store {
            Some(url) => history::stored_sessions(&url, stored.store_project, cwd, limit).await,
            None => history::sessions(cwd, all, limit, hide_programmatic),
        },
        args::Command::Show { session, stored } => match stored.store {
            Some(url) => history::show_stored(&session, &url, stored.store_project).await,
            None => history::show(&session),
        },
    };
    match outcome {
        Ok(code) => code,
        Err(error) => {
            // An error may quote the CLI (its stderr, its messages): shown, not obeyed.
            eprintln!("byre: {}", visible::Visible(&error));
            ExitCode::FAILURE
        }
    }
}
