//! `byre run`: one prompt to its result, shown live. Also the pieces `chat` shares: finding
//! the CLI, starting a session, and driving one turn with Ctrl-C as interrupt.

use std::io::Read;
use std::io::Write;
use std::process::ExitCode;

use std::time::Duration;

use byre_session::{Claude, Error as SessionError, Event, Events, Options};
use byre_transport::ExitInfo;
use futures::{FutureExt, StreamExt};
use tokio::sync::mpsc;

use crate::args::{Output, SessionArgs};
use crate::errors::CliError;
use crate::render::{Renderer, TurnResult, TICK};
use crate::Setup;

/// The exit status after the user quit with a second Ctrl-C (128 + SIGINT, as shells do).
pub(crate) const QUIT_STATUS: u8 = 130;

/// The exit status after a write to stdout failed: its reader went away (128 + SIGPIPE, as a
/// process killed by the broken pipe would end), or its disk is full.
pub(crate) const STDOUT_GONE_STATUS: u8 = 141;

/// The exit status when the answer was fine but byre did not write everything for the user:
/// transcript lines (a full disk) or session entries for the store (it failed, or was too
/// slow). `EX_IOERR` of `sysexits.h`.
pub(crate) const NOT_WRITTEN_STATUS: u8 = 74;

/// The exit status after a turn heard nothing from the CLI for `--stall-timeout`: the CLI was
/// stopped. `EX_TEMPFAIL` of `sysexits.h`: a retry may work.
pub(crate) const STALLED_STATUS: u8 = 75;

/// How often, at most, a close that waits for the session store says how much still waits.
const BACKLOG_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

/// Runs `prompt` (`-` reads it from stdin) to its result, and then, unless `no_wait`, until
/// the CLI says the run is idle: the background tasks the prompt started, and the turns the
/// CLI starts to report them, are shown too.
pub(crate) async fn run(
    prompt: String,
    no_wait: bool,
    args: SessionArgs,
    setup: &Setup,
) -> Result<ExitCode, CliError> {
    let prompt = read_prompt(prompt)?;
    let program = find(&args)?;
    let options = setup.apply(args.options(program)?);
    let mut interrupts = Interrupts::listen();
    // With a schema, stdout is for the structured output alone.
    let structured = args.json_schema.is_some() && args.output == Output::Text;
    let mut renderer = Renderer::new(args.output);
    if structured {
        renderer = renderer.answer_on_stderr();
    }
    let Some((claude, mut events)) = start(options, &mut interrupts).await? else {
        return Ok(ExitCode::from(QUIT_STATUS));
    };
    claude.send(prompt).map_err(CliError::Session)?;
    renderer.prompt_sent();
    let end = drive_turn(&claude, &mut events, &mut renderer, &mut interrupts).await;
    if let (TurnEnd::Done(_), false) = (&end, no_wait) {
        // The prompt's result decides the exit status; what follows is the rest of the run.
        drive_until_idle(&mut events, &mut renderer, &mut interrupts).await;
    }
    renderer.finish();
    // The counts of `stats` output are written last: their reader may be gone too.
    let end = match end {
        TurnEnd::Done(_) if renderer.stdout_gone() => stdout_gone(&claude, &mut renderer).await,
        end => end,
    };
    match end {
        TurnEnd::Quit => Ok(ExitCode::from(QUIT_STATUS)),
        TurnEnd::StdoutGone => Ok(ExitCode::from(STDOUT_GONE_STATUS)),
        TurnEnd::Stalled => Ok(ExitCode::from(STALLED_STATUS)),
        TurnEnd::Ended => Err(ended(&claude, &mut renderer).await),
        TurnEnd::Done(result) => {
            let lost = close(&claude, &mut renderer).await;
            if result.not_logged_in {
                return Err(CliError::NotLoggedIn);
            }
            if structured && !result.is_error() {
                match print_structured(&result) {
                    Ok(()) => {}
                    Err(CliError::Stdout(error)) => {
                        renderer.say(&format!("byre: cannot write to stdout: {error}"));
                        return Ok(ExitCode::from(STDOUT_GONE_STATUS));
                    }
                    Err(other) => return Err(other),
                }
            }
            Ok(if result.is_error() {
                ExitCode::FAILURE
            } else if lost {
                ExitCode::from(NOT_WRITTEN_STATUS)
            } else {
                ExitCode::SUCCESS
            })
        }
    }
}

/// Closes the session (`now`: terminates it). While the close waits for the session store,
/// what still waits is shown on stderr, at most once a second. What was not written
/// (transcript lines, store entries) is shown too; whether anything was lost.
pub(crate) async fn close(claude: &Claude, renderer: &mut Renderer) -> bool {
    closed(claude.close(), claude, renderer).await
}

/// [`close`] for a close under way (`closing`).
async fn closed(
    closing: impl std::future::Future<Output = Result<ExitInfo, SessionError>>,
    claude: &Claude,
    renderer: &mut Renderer,
) -> bool {
    match with_backlog(closing, claude, renderer).await {
        Err(SessionError::NotWritten(lost)) => {
            renderer.say(&format!("byre: not everything was written: {lost}"));
            true
        }
        // The CLI's own end after a result adds nothing (it exits 1 after an error result,
        // which said why already).
        Ok(_) | Err(_) => false,
    }
}

/// Waits for `closing`, saying what still waits for the session store every
/// [`BACKLOG_EVERY`] while it does.
async fn with_backlog<T>(
    closing: impl std::future::Future<Output = T>,
    claude: &Claude,
    renderer: &mut Renderer,
) -> T {
    let mut closing = std::pin::pin!(closing);
    let mut ticks =
        tokio::time::interval_at(tokio::time::Instant::now() + BACKLOG_EVERY, BACKLOG_EVERY);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    loop {
        tokio::select! {
            done = &mut closing => return done,
            _ = ticks.tick() => {
                if let Some(backlog) = claude.store_backlog().filter(|b| b.entries > 0) {
                    renderer.say(&format!(
                        "byre: waiting for the session store: {} still to store ({})",
                        match backlog.entries {
                            1 => "1 entry".to_owned(),
                            n => format!("{n} entries"),
                        },
                        size(backlog.bytes)
                    ));
                }
            }
        }
    }
}

/// A size in bytes, for people: `812 B`, `4.2 KiB`, `31.0 MiB`.
fn size(bytes: usize) -> String {
    match bytes {
        n if n < 1024 => format!("{n} B"),
        n if n < 1024 * 1024 => format!("{:.1} KiB", n as f64 / 1024.0),
        n => format!("{:.1} MiB", n as f64 / (1024.0 * 1024.0)),
    }
}

/// Prints a result's structured output as one JSON line on stdout.
pub(crate) fn print_structured(result: &TurnResult) -> Result<(), CliError> {
    // An output a `Value` cannot hold (nested past 128 levels, a number out of range) was
    // kept as the text it came in.
    let text = match &result.result.structured_output {
        Some(value) if !value.is_null() => value.to_string(),
        Some(_) => return Err(CliError::NoStructuredOutput),
        None => match result.result.extra.misfit("structured_output") {
            Some(byre_proto::Misfit { raw: Some(raw), .. }) => raw.get().to_owned(),
            _ => return Err(CliError::NoStructuredOutput),
        },
    };
    let mut out = std::io::stdout().lock();
    writeln!(out, "{text}")
        .and_then(|()| out.flush())
        .map_err(CliError::Stdout)
}

/// The `claude` binary: `--claude`, else found the usual way.
pub(crate) fn find(args: &SessionArgs) -> Result<std::path::PathBuf, CliError> {
    byre_transport::find_claude(args.claude.as_deref()).map_err(CliError::from_find)
}

/// Starts a session; `None` when the user pressed Ctrl-C meanwhile.
pub(crate) async fn start(
    options: Options,
    interrupts: &mut Interrupts,
) -> Result<Option<(Claude, Events)>, CliError> {
    tokio::select! {
        started = Claude::start(options) => match started {
            Ok(session) => {
                crate::signals::register(&session.0);
                Ok(Some(session))
            }
            Err(error) => Err(CliError::from_start(error)),
        },
        () = interrupts.next() => Ok(None),
    }
}

/// How a turn ended.
#[derive(Debug)]
pub(crate) enum TurnEnd {
    /// Its result arrived.
    Done(TurnResult),
    /// The user pressed Ctrl-C a second time.
    Quit,
    /// The CLI exited before the result.
    Ended,
    /// stdout's reader went away (a write to it failed): the CLI was stopped.
    StdoutGone,
    /// The turn heard nothing from the CLI for `--stall-timeout`: the CLI was stopped.
    Stalled,
}

/// Shows the events of the running turn until its result. The first Ctrl-C interrupts the
/// turn; a second one quits.
pub(crate) async fn drive_turn(
    claude: &Claude,
    events: &mut Events,
    renderer: &mut Renderer,
    interrupts: &mut Interrupts,
) -> TurnEnd {
    let mut ticker = tokio::time::interval(TICK);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut interrupting = false;
    loop {
        tokio::select! {
            event = events.next() => {
                // The events already delivered are taken one after the other, with no wait
                // for Ctrl-C or the ticker in between (a stream moves in batches).
                // What is shown is written out when no other event is ready (one write for
                // a batch), and before the turn ends.
                let mut next = Some(event);
                while let Some(event) = next {
                    let Some(event) = event else {
                        renderer.flush();
                        return TurnEnd::Ended;
                    };
                    if let Event::Stalled { silent_for } = &event {
                        renderer.flush();
                        return stalled(claude, renderer, *silent_for).await;
                    }
                    let result = renderer.event(&event).filter(|result| !result.background);
                    next = match result {
                        Some(_) => None,
                        None => events.next().now_or_never(),
                    };
                    if next.is_none() {
                        renderer.flush();
                    }
                    if renderer.stdout_gone() {
                        return stdout_gone(claude, renderer).await;
                    }
                    if let Some(result) = result {
                        return TurnEnd::Done(result);
                    }
                }
            },
            () = interrupts.next() => {
                if interrupting {
                    renderer.say("⏹ quitting");
                    return TurnEnd::Quit;
                }
                interrupting = true;
                renderer.say("⏹ interrupting (Ctrl-C again to quit)");
                let claude = claude.clone();
                tokio::spawn(async move {
                    // If the CLI is gone, the event stream ends and says so.
                    let _ = claude.interrupt().await;
                });
            }
            _ = ticker.tick(), if renderer.wants_ticks() => renderer.tick(),
        }
    }
}

/// The turn heard nothing from the CLI for `silent_for`: it is stopped (a CLI that still
/// reads was sent `interrupt` already; a hung one would not hear it).
async fn stalled(claude: &Claude, renderer: &mut Renderer, silent_for: Duration) -> TurnEnd {
    renderer.say(&format!(
        "byre: the turn heard nothing from the CLI for {} s (--stall-timeout); stopping the CLI",
        silent_for.as_secs()
    ));
    closed(claude.terminate(), claude, renderer).await;
    TurnEnd::Stalled
}

/// A write to stdout failed (its reader has gone, or its disk is full): nobody sees the rest
/// of the answer, so the CLI is stopped at once (it would otherwise work, and spend, to the
/// end of the turn). What was not written besides is shown.
pub(crate) async fn stdout_gone(claude: &Claude, renderer: &mut Renderer) -> TurnEnd {
    let why = match renderer.stdout_error() {
        Some(error) if error.kind() == std::io::ErrorKind::BrokenPipe => {
            "stdout was closed".to_owned()
        }
        Some(error) => format!("cannot write to stdout ({error})"),
        None => "stdout is gone".to_owned(),
    };
    renderer.say(&format!("byre: {why}; stopping the CLI"));
    closed(claude.terminate(), claude, renderer).await;
    TurnEnd::StdoutGone
}

/// After a result: shows what comes until the CLI reports the run idle (background tasks, the
/// turns it starts to report them). Ends at once when it is already idle or does not report
/// its state (an older CLI), when the CLI exits, or at Ctrl-C.
pub(crate) async fn drive_until_idle(
    events: &mut Events,
    renderer: &mut Renderer,
    interrupts: &mut Interrupts,
) {
    let mut ticker = tokio::time::interval(TICK);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    while !renderer.run_idle() {
        tokio::select! {
            event = events.next() => {
                let mut next = Some(event);
                while let Some(event) = next {
                    let Some(event) = event else {
                        renderer.flush();
                        return;
                    };
                    renderer.event(&event);
                    next = match renderer.run_idle() {
                        true => None,
                        false => events.next().now_or_never(),
                    };
                    if next.is_none() {
                        renderer.flush();
                    }
                    if renderer.stdout_gone() || renderer.run_idle() {
                        return;
                    }
                }
            },
            () = interrupts.next() => {
                renderer.say("⏹ not waiting for the background tasks");
                return;
            }
            _ = ticker.tick(), if renderer.wants_ticks() => renderer.tick(),
        }
    }
}

/// The error for a CLI that exited in the middle of a turn (what was not written besides is
/// shown).
pub(crate) async fn ended(claude: &Claude, renderer: &mut Renderer) -> CliError {
    let end = match with_backlog(claude.close(), claude, renderer).await {
        Err(SessionError::NotWritten(lost)) => {
            renderer.say(&format!("byre: not everything was written: {lost}"));
            match (&lost.failure, &lost.exit) {
                (Some(failure), _) => Err(failure.clone()),
                (None, Some(exit)) => Ok(exit.clone()),
                (None, None) => Err(SessionError::NotWritten(lost.clone())),
            }
        }
        end => end,
    };
    match end {
        Err(error) => CliError::Session(error),
        Ok(exit) => CliError::Exited(format!(
            "the CLI exited ({}) in the middle of the turn; stderr: {}",
            exit.status,
            match exit.stderr_tail.trim() {
                "" => "(empty)",
                tail => tail,
            }
        )),
    }
}

/// Ctrl-C presses, as a queue: while byre runs, Ctrl-C does not end the process.
#[derive(Debug)]
pub(crate) struct Interrupts {
    presses: mpsc::UnboundedReceiver<()>,
}

impl Interrupts {
    /// Starts listening for Ctrl-C.
    pub(crate) fn listen() -> Interrupts {
        let (tx, presses) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            while tokio::signal::ctrl_c().await.is_ok() {
                if tx.send(()).is_err() {
                    break;
                }
            }
        });
        Interrupts { presses }
    }

    /// The next press (never, if listening failed).
    pub(crate) async fn next(&mut self) {
        if self.presses.recv().await.is_none() {
            std::future::pending::<()>().await;
        }
    }

    /// Forgets presses made while nothing was running.
    pub(crate) fn forget(&mut self) {
        while self.presses.try_recv().is_ok() {}
    }
}

/// The prompt: the argument, or stdin for `-`.
fn read_prompt(prompt: String) -> Result<String, CliError> {
    let prompt = if prompt == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(CliError::Stdin)?;
        text
    } else {
        prompt
    };
    let prompt = prompt.trim_end_matches(['\n', '\r']).to_owned();
    if prompt.trim().is_empty() {
        return Err(CliError::EmptyPrompt);
    }
    Ok(prompt)
}
