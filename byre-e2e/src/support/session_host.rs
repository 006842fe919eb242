//! The scenarios' view of one CLI process, driven through byre-session's public driver
//! ([`Claude`] and [`Events`]): waiting for messages with timeouts, requests that take in
//! events while they wait, the end of input and the exit, and the transcript read back.
//!
//! Each process gets [`cli_options`] options: the pinned CLI in the scenario's offline
//! environment, requests bounded by [`STEP`], and a transcript in a scratch folder that keeps
//! `stream_event` lines and starts with the argv and working directory. Hooks, permission
//! prompts and in-process MCP servers (`Options::serve_mcp`) are byre-session's own, registered
//! on those options.

use std::collections::{HashSet, VecDeque};
use std::future::Future;
use std::path::PathBuf;
use std::process::ExitStatus;
use std::sync::Arc;
use std::time::Duration;

use byre_proto::{
    CliMessage, ControlRequestBody, HostRequest, InitializeResponse, RawJson, UserMessage,
};
use byre_session::{Claude, Error, Event, Events, Options};
use byre_testkit::{read_transcript, ClaudeEnv, TranscriptLine};
use futures::StreamExt;
use tokio::time::Instant;

use crate::{Ctx, Failure};

/// How long one step of a scenario may take: an answer, a turn, an exit.
pub(crate) const STEP: Duration = Duration::from_secs(30);

/// What [`SessionHost::next`] found.
#[derive(Debug)]
pub(crate) enum Next {
    /// A message from the CLI.
    Message(CliMessage),
    /// The CLI has exited and every message before its exit was taken.
    Ended,
    /// Nothing came in time.
    TimedOut,
}

/// How a process ended, from [`SessionHost::wait`].
#[derive(Debug)]
pub(crate) struct SessionExit {
    /// Its exit status.
    pub(crate) status: ExitStatus,
    /// The end of its stderr (the last 64 KiB).
    pub(crate) stderr: String,
    /// Messages not taken by [`SessionHost::next`] before the wait, and those written after
    /// the input ended, in order.
    pub(crate) messages: Vec<CliMessage>,
    /// The whole transcript.
    pub(crate) transcript: Vec<TranscriptLine>,
}

/// Options that run the pinned CLI in `env` (its variables, scratch `HOME` and working
/// directory), with `initialize` and every request bounded by [`STEP`]. [`SessionHost`] adds
/// the transcript.
pub(crate) fn cli_options(ctx: &Ctx, env: &ClaudeEnv) -> Options {
    let mut options = Options::new();
    options = options.program(ctx.bin.clone());
    options = options.cwd(env.cwd().to_path_buf());
    // The environment removes inherited `CLAUDE_*` variables; byre sets its own entry point
    // first, which must stay.
    for name in env.removed() {
        if name != "CLAUDE_CODE_ENTRYPOINT" {
            options = options.env_remove(name);
        }
    }
    for (name, value) in env.vars() {
        options = options.env(name, value);
    }
    options = options.request_timeout(STEP);
    // The scenarios run the CLI as the seed protocol launches it, every tool unasked (their
    // recordings and the drift check's comparisons assume it); a scenario that asks a
    // permission handler chooses its own mode.
    options = options.permission_mode("bypassPermissions");
    options
}

/// One CLI process of a scenario, driven through [`Claude`] and [`Events`].
///
/// Messages come from the event stream in order. The answer to a request made through the
/// driver (`initialize`, [`SessionHost::call`], [`SessionHost::raw_request`]) is returned by
/// that call and not again as a message; an answer to a raw request is a message. While a call
/// waits, events are taken in and kept for [`SessionHost::next`], so the CLI is never paused
/// by a full event buffer.
pub(crate) struct SessionHost {
    claude: Claude,
    events: Events,
    /// Messages taken in and not yet returned.
    queue: VecDeque<CliMessage>,
    /// Ids of the driver's requests whose answer came, to leave their answer lines out.
    answered: HashSet<String>,
    /// The messages that came before the answer to `initialize`, once it has come.
    before_initialize: Vec<CliMessage>,
    initialize_seen: bool,
    /// The event stream has ended.
    ended: bool,
    transcript: PathBuf,
    /// Holds the transcript file.
    _scratch: tempfile::TempDir,
    /// Keeps the environment's directories alive while the process runs.
    _env: ClaudeEnv,
}

impl std::fmt::Debug for SessionHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionHost")
            .field("queued", &self.queue.len())
            .field("ended", &self.ended)
            .field("transcript", &self.transcript)
            .finish_non_exhaustive()
    }
}

impl SessionHost {
    /// Starts the CLI with `options` (from [`cli_options`]) and waits for the answer to
    /// `initialize`.
    pub(crate) async fn start(options: Options, env: &ClaudeEnv) -> Result<SessionHost, Failure> {
        let mut host = SessionHost::spawn(options, env).await?;
        host.initialize().await.map_err(Failure::from_error)?;
        Ok(host)
    }

    /// Starts the CLI with `options` (from [`cli_options`]) without waiting for the answer to
    /// `initialize`: see [`SessionHost::initialize`].
    pub(crate) async fn spawn(
        mut options: Options,
        env: &ClaudeEnv,
    ) -> Result<SessionHost, Failure> {
        let scratch = tempfile::Builder::new()
            .prefix("byre-e2e-")
            .tempdir()
            .map_err(Failure::from_error)?;
        let transcript = scratch.path().join("transcript.jsonl");
        options = options.transcript(transcript.clone());
        options = options.transcript_stream_events(true);
        options = options.transcript_launch(true);
        let (claude, events) = Claude::spawn(options).await.map_err(Failure::from_error)?;
        Ok(SessionHost {
            claude,
            events,
            queue: VecDeque::new(),
            answered: HashSet::new(),
            before_initialize: Vec::new(),
            initialize_seen: false,
            ended: false,
            transcript,
            _scratch: scratch,
            _env: env.clone(),
        })
    }

    /// Waits for the answer to `initialize`, taking in the messages that come before it (the
    /// CLI asks its MCP servers first).
    pub(crate) async fn initialize(&mut self) -> Result<Arc<InitializeResponse>, Error> {
        let claude = self.claude.clone();
        let answer = self
            .taking_events(async move { claude.initialized().await })
            .await?;
        // The answer is known once the driver has it; take in the events up to it.
        let deadline = Instant::now() + STEP;
        while !self.initialize_seen && !self.ended {
            match tokio::time::timeout_at(deadline, self.events.next()).await {
                Ok(event) => self.take(event),
                Err(_) => {
                    return Err(Error::Closed(
                        "the initialize answer did not come through the events".into(),
                    ))
                }
            }
        }
        Ok(answer)
    }

    /// The messages the CLI wrote before its answer to `initialize`.
    pub(crate) fn before_initialize(&self) -> &[CliMessage] {
        &self.before_initialize
    }

    /// Sends a prompt.
    pub(crate) fn send_user(&self, text: &str) -> Result<(), Failure> {
        self.claude.send(text).map_err(Failure::from_error)
    }

    /// Sends a user message.
    pub(crate) fn send(&self, message: UserMessage) -> Result<(), Failure> {
        self.claude
            .send_message(message)
            .map_err(Failure::from_error)
    }

    /// Writes a line as it is.
    pub(crate) fn send_raw(&self, line: &[u8]) -> Result<(), Failure> {
        self.claude.send_raw(line).map_err(Failure::from_error)
    }

    /// Adds a note to the transcript.
    pub(crate) fn note(&self, text: impl Into<String>) -> Result<(), Failure> {
        self.claude.note(text).map_err(Failure::from_error)
    }

    /// Ends the input: the CLI finishes what it was given and exits.
    pub(crate) fn close_stdin(&self) -> Result<(), Failure> {
        self.claude.end_input().map_err(Failure::from_error)
    }

    /// Sends a typed request and waits at most [`STEP`] for its typed answer.
    pub(crate) async fn call<B: ControlRequestBody>(
        &mut self,
        body: B,
    ) -> Result<B::Response, Error> {
        let claude = self.claude.clone();
        self.taking_events(async move { claude.request_with_timeout(body, Some(STEP)).await })
            .await
    }

    /// Sends any request and waits at most [`STEP`] for its raw success payload.
    pub(crate) async fn raw_request(
        &mut self,
        request: HostRequest,
    ) -> Result<Option<RawJson>, Error> {
        let claude = self.claude.clone();
        self.taking_events(async move { claude.raw_request(request, Some(STEP)).await })
            .await
    }

    /// The next message, waiting at most `timeout`.
    pub(crate) async fn next(&mut self, timeout: Duration) -> Next {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(message) = self.queue.pop_front() {
                return Next::Message(message);
            }
            if self.ended {
                return Next::Ended;
            }
            match tokio::time::timeout_at(deadline, self.events.next()).await {
                Ok(event) => self.take(event),
                Err(_) => return Next::TimedOut,
            }
        }
    }

    /// Collects messages until one matches `done` (included), within `timeout` in all.
    pub(crate) async fn until(
        &mut self,
        timeout: Duration,
        mut done: impl FnMut(&CliMessage) -> bool,
    ) -> Result<Vec<CliMessage>, Failure> {
        let deadline = Instant::now() + timeout;
        let mut seen = Vec::new();
        loop {
            match self
                .next(deadline.saturating_duration_since(Instant::now()))
                .await
            {
                Next::Message(message) => {
                    let matched = done(&message);
                    seen.push(message);
                    if matched {
                        return Ok(seen);
                    }
                }
                Next::Ended => {
                    return Err(Failure::new(format!(
                        "the CLI exited while a matching message was awaited ({}); got {} \
                         others: {}",
                        self.exit_report().await,
                        seen.len(),
                        message_kinds(&seen)
                    )))
                }
                Next::TimedOut => {
                    return Err(Failure::new(format!(
                        "timed out waiting for a matching message ({timeout:?}); got {} \
                         others: {}",
                        seen.len(),
                        message_kinds(&seen)
                    )))
                }
            }
        }
    }

    /// Collects messages up to and including the next `result`.
    pub(crate) async fn until_result(
        &mut self,
        timeout: Duration,
    ) -> Result<Vec<CliMessage>, Failure> {
        self.until(timeout, |m| matches!(m, CliMessage::Result(_)))
            .await
    }

    /// Ends the input, takes the messages written until the CLI exits, and returns how it
    /// ended with its transcript, within `timeout` in all. When it does not exit in time it
    /// is stopped (SIGTERM, then SIGKILL) and the wait fails.
    pub(crate) async fn wait(mut self, timeout: Duration) -> Result<SessionExit, Failure> {
        let deadline = Instant::now() + timeout;
        self.claude.end_input().map_err(Failure::from_error)?;
        let mut messages: Vec<CliMessage> = self.queue.drain(..).collect();
        while !self.ended {
            match tokio::time::timeout_at(deadline, self.events.next()).await {
                Ok(event) => {
                    self.take(event);
                    messages.extend(self.queue.drain(..));
                }
                Err(_) => return Err(self.stop(timeout).await),
            }
        }
        let exit = match tokio::time::timeout_at(deadline, self.claude.wait()).await {
            Ok(Ok(exit)) => exit,
            Ok(Err(e)) => return Err(Failure::from_error(e)),
            Err(_) => return Err(self.stop(timeout).await),
        };
        // Every line was written before the event stream ended: the file is complete.
        let transcript = read_transcript(&self.transcript).map_err(Failure::from_error)?;
        Ok(SessionExit {
            status: exit.status,
            stderr: exit.stderr_tail,
            messages,
            transcript,
        })
    }

    /// Stops a CLI that did not exit in time, and says so.
    async fn stop(&self, timeout: Duration) -> Failure {
        let how = match self.claude.close().await {
            Ok(exit) => format!("{} ({:?})", exit.status, exit.stopped),
            Err(e) => e.to_string(),
        };
        Failure::new(format!(
            "the CLI did not exit within {timeout:?} after its input ended; stopped it: {how}"
        ))
    }

    /// How the CLI exited, for failure messages: its status and the end of its stderr.
    async fn exit_report(&self) -> String {
        match tokio::time::timeout(Duration::from_secs(5), self.claude.wait()).await {
            Ok(Ok(exit)) => {
                let lines: Vec<&str> = exit.stderr_tail.trim_end().lines().collect();
                format!(
                    "{}; the end of its stderr:\n{}",
                    exit.status,
                    lines[lines.len().saturating_sub(20)..].join("\n")
                )
            }
            Ok(Err(e)) => e.to_string(),
            Err(_) => "its exit status did not come".to_owned(),
        }
    }

    /// Runs `call` while taking in events, until it is done.
    async fn taking_events<T>(&mut self, call: impl Future<Output = T>) -> T {
        tokio::pin!(call);
        loop {
            tokio::select! {
                out = &mut call => return out,
                event = self.events.next(), if !self.ended => self.take(event),
            }
        }
    }

    /// Takes one event in: messages are queued, except the answers to the driver's own
    /// requests.
    fn take(&mut self, event: Option<Event>) {
        match event {
            None => self.ended = true,
            Some(Event::Response { id, subtype, .. }) => {
                if subtype == "initialize" {
                    self.initialize_seen = true;
                }
                self.answered.insert(id.as_str().to_owned());
            }
            Some(Event::Message(CliMessage::ControlResponse(response)))
                if response
                    .request_id()
                    .is_some_and(|id| self.answered.remove(id)) => {}
            Some(Event::Message(message)) => {
                if !self.initialize_seen {
                    self.before_initialize.push(message.clone());
                }
                self.queue.push_back(message);
            }
            Some(_) => {}
        }
    }
}

/// The kinds of the last twelve messages (`system/<subtype>` for system lines), for failure
/// messages.
fn message_kinds(messages: &[CliMessage]) -> String {
    let start = messages.len().saturating_sub(12);
    messages[start..]
        .iter()
        .map(|m| match m {
            CliMessage::System(s) => format!("system/{}", s.tag().unwrap_or("?")),
            other => other.kind().to_owned(),
        })
        .collect::<Vec<_>>()
        .join(", ")
}
