//! `byre chat`: an interactive session with line editing and a line history kept in a file.
//! Ctrl-C interrupts the running turn (a second one quits); `/model NAME` switches model,
//! `/fork` forks the session at the last answer, `/quit` (or Ctrl-D) ends.
//!
//! The line editor runs on its own thread and reads only while no turn runs; meanwhile the
//! terminal is in its normal mode, so Ctrl-C reaches byre as a signal and becomes an interrupt.
//! Events the CLI sends between turns wait in the session's event stream until the next turn.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use byre_session::{Claude, Events};
use rustyline::error::ReadlineError;
use tokio::sync::mpsc;

use crate::args::SessionArgs;
use crate::errors::CliError;
use crate::render::Renderer;
use crate::run::{
    close, drive_turn, ended, find, start, Interrupts, TurnEnd, NOT_WRITTEN_STATUS, QUIT_STATUS,
};
use crate::visible::Visible;
use crate::Setup;

/// The prompt shown before each line.
const PROMPT: &str = "> ";

const HELP: &str = "\
commands:
  /model NAME   switch the model for the next turns (/model default resets it)
  /fork         fork the session at the last answer and go on in the fork
  /quit         end the session (also Ctrl-D)
Ctrl-C interrupts the running turn; a second Ctrl-C quits.";

/// Where the line history is kept by default: `$XDG_STATE_HOME/byre/chat_history`, else
/// `~/.local/state/byre/chat_history`; `None` without either variable.
pub(crate) fn default_history() -> Option<PathBuf> {
    let state = std::env::var_os("XDG_STATE_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|d| !d.is_empty())
                .map(|home| PathBuf::from(home).join(".local").join("state"))
        })?;
    Some(state.join("byre").join("chat_history"))
}

/// Runs the interactive session; the line history is loaded from and appended to `history`.
pub(crate) async fn chat(
    args: SessionArgs,
    history: Option<PathBuf>,
    setup: &Setup,
) -> Result<ExitCode, CliError> {
    let program = find(&args)?;
    let options = setup.apply(args.options(program.clone())?);
    let mut interrupts = Interrupts::listen();
    let mut renderer = Renderer::new(args.output);
    let Some((mut claude, mut events)) = start(options, &mut interrupts).await? else {
        return Ok(ExitCode::from(QUIT_STATUS));
    };
    let mut editor = Editor::spawn(history)?;
    let mut model = args.model.clone();
    let mut forks = 0u32;
    // Whether a session of the chat did not write everything (a fork closes the one before).
    let mut lost = false;
    eprintln!("byre chat · /help for commands · Ctrl-C interrupts a turn · /quit or Ctrl-D ends");
    loop {
        let line = match editor.read(PROMPT).await {
            ReadLine::Line(line) => line,
            ReadLine::Interrupted => continue,
            ReadLine::Eof => break,
            ReadLine::Failed(why) => {
                close(&claude, &mut renderer).await;
                return Err(CliError::Editor(why));
            }
        };
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        if let Some(command) = line.strip_prefix('/') {
            let mut words = command.split_whitespace();
            match (words.next().unwrap_or(""), words.next()) {
                ("quit" | "exit", _) => break,
                ("help", _) => eprintln!("{HELP}"),
                ("model", None) => eprintln!("usage: /model NAME (or /model default)"),
                ("model", Some(name)) => {
                    let wanted = (name != "default").then_some(name);
                    match claude.set_model(wanted).await {
                        Ok(resolved) => {
                            model = wanted.map(str::to_owned);
                            let shown = resolved.unwrap_or_else(|| "the default".to_owned());
                            eprintln!("model: {}", Visible(shown));
                        }
                        Err(error) => eprintln!("byre: /model failed: {}", Visible(error)),
                    }
                }
                ("fork", _) => {
                    let (Some(session), Some(at)) = (
                        claude.session_id(),
                        renderer.last_answer().map(str::to_owned),
                    ) else {
                        eprintln!("nothing to fork yet: ask something first");
                        continue;
                    };
                    lost |= close(&claude, &mut renderer).await;
                    let mut base = args.base_options(program.clone(), model.as_deref())?;
                    if let Some(path) = &args.transcript {
                        forks += 1;
                        base = base.transcript(fork_transcript(path, forks));
                    }
                    let (options, new_id) = base.fork(&session, &at, args.working_dir()?);
                    match start(setup.apply(options), &mut interrupts).await? {
                        Some((fork, fork_events)) => {
                            claude = fork;
                            events = fork_events;
                            renderer.forget_answer();
                            eprintln!(
                                "{}",
                                Visible(format_args!(
                                    "forked session {session} at {at}: now in session {new_id}"
                                ))
                            );
                        }
                        None => return Ok(ExitCode::from(QUIT_STATUS)),
                    }
                }
                (other, _) => eprintln!("unknown command /{other}; /help lists the commands"),
            }
            continue;
        }
        match turn(&claude, &mut events, &mut renderer, &mut interrupts, line).await? {
            Some(code) => return Ok(code),
            None => continue,
        }
    }
    renderer.finish();
    lost |= close(&claude, &mut renderer).await;
    Ok(match lost {
        true => ExitCode::from(NOT_WRITTEN_STATUS),
        false => ExitCode::SUCCESS,
    })
}

/// One turn; `Some` exit status when the chat must end.
async fn turn(
    claude: &Claude,
    events: &mut Events,
    renderer: &mut Renderer,
    interrupts: &mut Interrupts,
    prompt: &str,
) -> Result<Option<ExitCode>, CliError> {
    interrupts.forget();
    claude.send(prompt).map_err(CliError::Session)?;
    renderer.prompt_sent();
    match drive_turn(claude, events, renderer, interrupts).await {
        TurnEnd::Done(result) => {
            if result.not_logged_in {
                renderer.finish();
                close(claude, renderer).await;
                return Err(CliError::NotLoggedIn);
            }
            if let Some(value) = result.result.structured_output.as_ref() {
                if !value.is_null() {
                    renderer.print_line(&value.to_string());
                }
            }
            if renderer.stdout_gone() {
                crate::run::stdout_gone(claude, renderer).await;
                return Ok(Some(ExitCode::from(crate::run::STDOUT_GONE_STATUS)));
            }
            Ok(None)
        }
        TurnEnd::Quit => {
            renderer.finish();
            Ok(Some(ExitCode::from(QUIT_STATUS)))
        }
        TurnEnd::StdoutGone => Ok(Some(ExitCode::from(crate::run::STDOUT_GONE_STATUS))),
        TurnEnd::Stalled => {
            renderer.finish();
            Ok(Some(ExitCode::from(crate::run::STALLED_STATUS)))
        }
        TurnEnd::Ended => {
            renderer.finish();
            Err(ended(claude, renderer).await)
        }
    }
}

/// The transcript of the `n`-th fork: `chat.jsonl` becomes `chat.fork-1.jsonl`.
fn fork_transcript(path: &Path, n: u32) -> PathBuf {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = match path.extension() {
        Some(ext) => format!("{stem}.fork-{n}.{}", ext.to_string_lossy()),
        None => format!("{stem}.fork-{n}"),
    };
    path.with_file_name(name)
}

/// What the line editor read.
enum ReadLine {
    Line(String),
    /// Ctrl-C at the prompt: the line is dropped.
    Interrupted,
    /// Ctrl-D, or the end of stdin.
    Eof,
    Failed(String),
}

/// The line editor, on its own thread (it blocks while it reads).
struct Editor {
    ask: std::sync::mpsc::Sender<String>,
    lines: mpsc::UnboundedReceiver<ReadLine>,
}

impl Editor {
    /// Starts the editor thread, with the history of the file `history` (created when
    /// missing; a file that cannot be read or written is reported once and then left alone).
    fn spawn(history: Option<PathBuf>) -> Result<Editor, CliError> {
        let (ask, questions) = std::sync::mpsc::channel::<String>();
        let (tx, lines) = mpsc::unbounded_channel();
        std::thread::Builder::new()
            .name("byre-line-editor".into())
            .spawn(move || {
                let mut editor = match rustyline::DefaultEditor::new() {
                    Ok(editor) => editor,
                    Err(error) => {
                        let _ = tx.send(ReadLine::Failed(error.to_string()));
                        return;
                    }
                };
                let mut history = history;
                if let Some(path) = &history {
                    if let Err(why) = load_history(&mut editor, path) {
                        eprintln!("byre: no history file: {}: {why}", path.display());
                        history = None;
                    }
                }
                while let Ok(prompt) = questions.recv() {
                    let read = match editor.readline(&prompt) {
                        Ok(line) => {
                            if !line.trim().is_empty() {
                                let _ = editor.add_history_entry(line.as_str());
                                if let Some(path) = &history {
                                    // Appended at once: a session that is killed keeps it.
                                    if let Err(why) = editor.append_history(path) {
                                        eprintln!(
                                            "byre: history not saved: {}: {why}",
                                            path.display()
                                        );
                                        history = None;
                                    }
                                }
                            }
                            ReadLine::Line(line)
                        }
                        Err(ReadlineError::Interrupted) => ReadLine::Interrupted,
                        Err(ReadlineError::Eof) => ReadLine::Eof,
                        Err(error) => ReadLine::Failed(error.to_string()),
                    };
                    if tx.send(read).is_err() {
                        break;
                    }
                }
            })
            .map_err(|e| CliError::Editor(e.to_string()))?;
        Ok(Editor { ask, lines })
    }

    async fn read(&mut self, prompt: &str) -> ReadLine {
        if self.ask.send(prompt.to_owned()).is_err() {
            return ReadLine::Failed("the line editor stopped".into());
        }
        self.lines
            .recv()
            .await
            .unwrap_or_else(|| ReadLine::Failed("the line editor stopped".into()))
    }
}

/// Loads the history file at `path`, creating it (and its folder) when missing, readable by
/// its owner only (the prompts may hold anything).
fn load_history(editor: &mut rustyline::DefaultEditor, path: &Path) -> Result<(), String> {
    if !path.exists() {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            let mut builder = std::fs::DirBuilder::new();
            builder.recursive(true);
            #[cfg(unix)]
            std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
            builder.create(dir).map_err(|e| e.to_string())?;
        }
        let mut open = std::fs::OpenOptions::new();
        open.create(true).append(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut open, 0o600);
        open.open(path).map_err(|e| e.to_string())?;
    }
    editor.load_history(path).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fork_transcripts_sit_beside_the_first() {
        assert_eq!(
            fork_transcript(Path::new("/tmp/chat.jsonl"), 2),
            PathBuf::from("/tmp/chat.fork-2.jsonl")
        );
        assert_eq!(
            fork_transcript(Path::new("log"), 1),
            PathBuf::from("log.fork-1")
        );
    }
}
