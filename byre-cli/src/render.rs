//! Showing a session as it runs.
//!
//! In `text` output the answer is written to stdout as it streams; tool calls (with their
//! elapsed time), subagents, hooks, retries and interrupts go to stderr, with a spinner line
//! only when stderr is a terminal; each turn ends with a closing line (turns, duration, cost,
//! session). In `json` output every message from the CLI is one JSON line on stdout; in
//! `stats` output the messages are only counted, and [`Renderer::finish`] prints the counts.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use byre_proto::{
    AssistantError, CliMessage, CliRequest, ContentBlock, Delta, MessageContent, ResultMessage,
    SystemMessage, ToolResultBlock,
};
use byre_session::{AssemblyEvent, BlockKind, Event, ProtocolViolation, TurnEvent, TurnOrigin};

use crate::answer::Held;
use crate::args::Output;
pub(crate) use crate::labels::{closing_line, elapsed, one_line, preview, tool_label, tool_name};
use crate::visible::{self, Visible};

/// How often the spinner is redrawn.
pub(crate) const TICK: Duration = Duration::from_millis(100);

/// The buffer of one message written as JSON: a message larger than it goes to stdout in
/// pieces as it is encoded.
const JSON_BUFFER: usize = 64 * 1024;

/// The spinner's frames.
const FRAMES: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/// A `result` the renderer saw.
#[derive(Debug)]
pub(crate) struct TurnResult {
    /// The `result` line.
    pub(crate) result: Box<ResultMessage>,
    /// Whether the turn was started by the CLI itself (a background task's notification);
    /// such a result does not end the host's turn.
    pub(crate) background: bool,
    /// Whether the CLI said it is not logged in during the turn.
    pub(crate) not_logged_in: bool,
}

impl TurnResult {
    /// Whether the turn ended in error.
    pub(crate) fn is_error(&self) -> bool {
        self.result.is_error == Some(true) || self.result.subtype.as_str() != "success"
    }
}

/// A tool call in flight.
#[derive(Debug)]
struct Tool {
    label: String,
    depth: usize,
    started: Instant,
}

/// A background task in flight.
#[derive(Debug)]
struct Task {
    description: String,
    started: Instant,
}

/// Shows the events of a session.
#[derive(Debug)]
pub(crate) struct Renderer {
    mode: Output,
    /// stderr is a terminal: draw a spinner.
    spinner: bool,
    stdout_tty: bool,
    /// stdout is at the start of a line.
    at_line_start: bool,
    spinner_drawn: bool,
    frame: usize,
    /// What the session is doing, and since when (for the spinner).
    status: Option<(String, Instant)>,
    counts: BTreeMap<String, u64>,
    messages: u64,
    /// Lines that were not messages, and messages with parts kept as text (`stats` output).
    bad_lines: u64,
    misfit_lines: u64,
    /// Whether the `initialize` answer went by: a `result` before it answers no prompt.
    initialized: bool,
    /// Top-level API messages (not a subagent's), by id.
    top_level: HashSet<String>,
    /// Open text blocks of top-level messages.
    text_blocks: HashSet<(String, u64)>,
    /// Messages whose text was streamed (their `assistant` lines are not printed again).
    streamed: HashSet<String>,
    tools: HashMap<String, Tool>,
    tasks: HashMap<String, Task>,
    /// The uuid of the last top-level `assistant` line: where `/fork` forks.
    last_answer: Option<String>,
    not_logged_in: bool,
    /// The origin of the turn whose `result` comes next.
    ending: Option<TurnOrigin>,
    /// Whether the CLI reports its state (`session_state_changed`), and whether the run is
    /// over since its last report ([`TurnEvent::RunIdle`]: idle, and no background work).
    reports_state: bool,
    idle: bool,
    /// The answer's text goes to stderr (stdout is kept for the structured output).
    answer_on_stderr: bool,
    /// Where the answer goes is not a terminal: its text is held per message.
    held: Option<Held>,
    /// A write to stdout failed (its reader has gone, or its disk is full): why. The run
    /// should stop.
    stdout_error: Option<std::io::Error>,
    /// `json` output: the messages encoded since the last [`Renderer::flush`] (a long one goes
    /// straight through to stdout).
    json: Option<std::io::BufWriter<std::io::Stdout>>,
}

impl Renderer {
    /// A renderer for `mode`, looking at whether stdout and stderr are terminals.
    pub(crate) fn new(mode: Output) -> Self {
        Renderer {
            mode,
            spinner: mode == Output::Text && std::io::stderr().is_terminal(),
            stdout_tty: std::io::stdout().is_terminal(),
            at_line_start: true,
            spinner_drawn: false,
            frame: 0,
            status: None,
            counts: BTreeMap::new(),
            messages: 0,
            bad_lines: 0,
            misfit_lines: 0,
            initialized: false,
            top_level: HashSet::new(),
            text_blocks: HashSet::new(),
            streamed: HashSet::new(),
            tools: HashMap::new(),
            tasks: HashMap::new(),
            last_answer: None,
            not_logged_in: false,
            ending: None,
            reports_state: false,
            idle: false,
            answer_on_stderr: false,
            held: (!std::io::stdout().is_terminal()).then(Held::default),
            stdout_error: None,
            json: (mode == Output::Json)
                .then(|| std::io::BufWriter::with_capacity(JSON_BUFFER, std::io::stdout())),
        }
    }

    /// Shows the answer's text on stderr, so that stdout holds only what the caller prints
    /// there at the end (`run --json-schema`: the structured output).
    pub(crate) fn answer_on_stderr(mut self) -> Self {
        self.answer_on_stderr = true;
        self.stdout_tty = std::io::stderr().is_terminal();
        self.held = (!self.stdout_tty).then(Held::default);
        self
    }

    /// Whether [`Renderer::tick`] should be called every [`TICK`].
    pub(crate) fn wants_ticks(&self) -> bool {
        self.spinner
    }

    /// The uuid of the last answer (top-level `assistant` line) seen.
    pub(crate) fn last_answer(&self) -> Option<&str> {
        self.last_answer.as_deref()
    }

    /// Forgets the last answer (after a fork, whose lines have new uuids).
    pub(crate) fn forget_answer(&mut self) {
        self.last_answer = None;
    }

    /// A prompt was sent: the model is being asked.
    pub(crate) fn prompt_sent(&mut self) {
        self.not_logged_in = false;
        self.set_status("waiting for the model");
    }

    /// Takes one event; returns the turn's result when a `result` line arrives.
    pub(crate) fn event(&mut self, event: &Event) -> Option<TurnResult> {
        match event {
            Event::Message(message) => return self.message(message),
            Event::Initialized(_) => self.initialized = true,
            Event::Turn(TurnEvent::TurnEnded { origin, .. }) => self.ending = Some(origin.clone()),
            Event::Turn(TurnEvent::RunIdle) => self.idle = true,
            Event::Assembly(assembly) if self.mode == Output::Text => self.assembly(assembly),
            Event::Request { request, .. } if self.mode == Output::Text => {
                let CliRequest::HookCallback(hook) = &**request else {
                    return None;
                };
                let event = hook.input.event().unwrap_or("hook");
                let line = match hook.input.tool_name() {
                    Some(tool) => format!("↪ hook {event} ({tool})"),
                    None => format!("↪ hook {event}"),
                };
                self.note(&line);
            }
            Event::Protocol(problem) => {
                match problem {
                    ProtocolViolation::BadLine { .. } => self.bad_lines += 1,
                    ProtocolViolation::Misfit { .. } => self.misfit_lines += 1,
                    _ => {}
                }
                // Bad lines and other protocol problems are shown whatever the output mode:
                // on stderr, so `json` and `stats` output stay clean.
                self.clear_spinner();
                self.end_line();
                let mut err = std::io::stderr().lock();
                let _ = writeln!(err, "byre: warning: {}", Visible(problem));
                let _ = err.flush();
            }
            Event::TranscriptFailed { path, error } => {
                self.clear_spinner();
                self.end_line();
                let mut err = std::io::stderr().lock();
                let _ = writeln!(
                    err,
                    "byre: warning: the transcript {} could not be written ({error}): it ends \
                     here, and the rest of the session is not written to it",
                    path.display()
                );
                let _ = err.flush();
            }
            Event::MirrorFailed { entries, error, .. } => {
                // The CLI's own file keeps the entries; the store lacks them.
                self.clear_spinner();
                self.end_line();
                let mut err = std::io::stderr().lock();
                let _ = writeln!(
                    err,
                    "byre: warning: {entries} session entries did not reach the store: {}",
                    Visible(error)
                );
                let _ = err.flush();
            }
            Event::StoredLinesSkipped { lines } => {
                self.clear_spinner();
                self.end_line();
                let mut err = std::io::stderr().lock();
                for line in lines.iter().take(5) {
                    let _ = writeln!(
                        err,
                        "byre: warning: a stored line does not decode, resumed without it: {}",
                        Visible(line)
                    );
                }
                if lines.len() > 5 {
                    let _ = writeln!(err, "byre: warning: {} more such lines", lines.len() - 5);
                }
                let _ = err.flush();
            }
            _ => {}
        }
        None
    }

    /// Whether the run is over: the CLI said it is idle, or it does not say (then the result
    /// is taken as the end).
    pub(crate) fn run_idle(&self) -> bool {
        !self.reports_state || self.idle
    }

    /// Writes a line on stderr (in text output), keeping stdout's text and the spinner tidy;
    /// control characters in it are shown, not obeyed.
    pub(crate) fn note(&mut self, line: &str) {
        if self.mode != Output::Text {
            return;
        }
        self.clear_spinner();
        self.end_line();
        let mut err = std::io::stderr().lock();
        let _ = writeln!(err, "{}", Visible(line));
        let _ = err.flush();
    }

    /// Redraws the spinner (when stderr is a terminal).
    pub(crate) fn tick(&mut self) {
        if !self.spinner || (self.stdout_tty && !self.at_line_start) {
            return;
        }
        let (label, since) = match self.tools.values().max_by_key(|t| t.started) {
            Some(tool) if self.tools.len() == 1 => (tool.label.clone(), tool.started),
            Some(tool) => (format!("{} tools running", self.tools.len()), tool.started),
            None => match &self.status {
                Some((label, since)) => (label.clone(), *since),
                None => return,
            },
        };
        self.frame = (self.frame + 1) % FRAMES.len();
        let mut err = std::io::stderr().lock();
        let _ = write!(
            err,
            "\r\x1b[2K{} {} · {}",
            FRAMES[self.frame],
            Visible(label),
            elapsed(since.elapsed())
        );
        let _ = err.flush();
        self.spinner_drawn = true;
    }

    /// Ends the output: clears the spinner, ends the text line, and in `stats` output prints
    /// the counts.
    pub(crate) fn finish(&mut self) {
        self.clear_spinner();
        self.end_line();
        self.status = None;
        if self.mode == Output::Stats {
            let mut stats = String::new();
            for (kind, count) in &self.counts {
                stats.push_str(&format!("{kind}={count}\n"));
            }
            stats.push_str(&format!("messages={}\n", self.messages));
            // Lines the CLI wrote that byre could not read whole, when there were any.
            if self.bad_lines > 0 {
                stats.push_str(&format!("bad_lines={}\n", self.bad_lines));
            }
            if self.misfit_lines > 0 {
                stats.push_str(&format!("misfit_lines={}\n", self.misfit_lines));
            }
            let mut out = std::io::stdout().lock();
            let written = out.write_all(stats.as_bytes()).and_then(|()| out.flush());
            drop(out);
            self.stdout_written(written);
        }
    }

    fn message(&mut self, message: &CliMessage) -> Option<TurnResult> {
        self.messages += 1;
        if let CliMessage::System(SystemMessage::SessionStateChanged(_)) = message {
            self.reports_state = true;
            self.idle = false;
        }
        // Counted without an allocation per message: a kind's name is copied once.
        let kind = message.tag().unwrap_or("unknown");
        match self.counts.get_mut(kind) {
            Some(count) => *count += 1,
            None => {
                self.counts.insert(kind.to_owned(), 1);
            }
        }
        if let CliMessage::Assistant(a) = message {
            if a.parent_tool_use_id.is_none() {
                if a.uuid.is_some() {
                    self.last_answer = a.uuid.clone();
                }
                if a.error.as_ref() == Some(&AssistantError::AUTHENTICATION_FAILED) {
                    self.not_logged_in = true;
                }
            }
        }
        match self.mode {
            Output::Json => {
                // Encoded into the buffer, which goes to stdout at the next flush (when no
                // other event is ready): a batch of messages is one write. A long text goes
                // straight from the message to stdout, without a copy of the line in between.
                if let Some(out) = &mut self.json {
                    let written = serde_json::to_writer(&mut *out, message)
                        .map_err(std::io::Error::from)
                        .and_then(|()| out.write_all(b"\n"));
                    self.stdout_written(written);
                }
            }
            Output::Stats => {}
            Output::Text => self.show(message),
        }
        let CliMessage::Result(result) = message else {
            return None;
        };
        if !self.initialized {
            // Written before the `initialize` answer: no prompt's answer (reported).
            return None;
        }
        if let Some(held) = &mut self.held {
            let text = held.end_turn();
            self.write_text(&text);
            self.end_line();
        }
        let origin = self.ending.take();
        let not_logged_in = self.not_logged_in;
        Some(TurnResult {
            result: result.clone(),
            background: matches!(origin, Some(TurnOrigin::TaskNotification { .. })),
            not_logged_in,
        })
    }

    /// Text output of one message.
    fn show(&mut self, message: &CliMessage) {
        match message {
            CliMessage::Assistant(a) => {
                let depth = self.depth(a.parent_tool_use_id.as_deref());
                let id = a.message.id.clone().unwrap_or_default();
                for block in &a.message.content {
                    match block {
                        ContentBlock::Text(t) if depth == 0 && !self.streamed.contains(&id) => {
                            self.replace_broken();
                            self.write_text(&t.text);
                            self.end_line();
                        }
                        ContentBlock::ToolUse(call) => {
                            let label = tool_label(&call.name, &call.input);
                            self.note(&format!("{}▸ {label}", indent(depth)));
                            self.tools.insert(
                                call.id.clone(),
                                Tool {
                                    label,
                                    depth,
                                    started: Instant::now(),
                                },
                            );
                        }
                        _ => {}
                    }
                }
            }
            CliMessage::User(u) => {
                let MessageContent::Blocks(blocks) = &u.message.content else {
                    return;
                };
                for block in blocks {
                    match block {
                        ContentBlock::ToolResult(result) => self.tool_done(result),
                        ContentBlock::Text(t)
                            if u.parent_tool_use_id.is_none()
                                && t.text.starts_with("[Request interrupted") =>
                        {
                            self.note("⏹ interrupted");
                        }
                        _ => {}
                    }
                }
                if self.tools.is_empty() {
                    self.set_status("waiting for the model");
                }
            }
            CliMessage::System(system) => self.system(system),
            CliMessage::ToolProgress(p) if !self.spinner => {
                let tool = p.tool_name.as_deref().unwrap_or("tool");
                let secs = p.elapsed_time_seconds.as_ref().and_then(|n| n.as_f64());
                let secs = secs.map(|s| format!(" ({})", elapsed(Duration::from_secs_f64(s))));
                self.note(&format!(
                    "  … {tool} still running{}",
                    secs.unwrap_or_default()
                ));
            }
            CliMessage::Result(result) => {
                self.tools.clear();
                self.status = None;
                let line = closing_line(result);
                self.note(&line);
            }
            _ => {}
        }
    }

    fn system(&mut self, system: &SystemMessage) {
        match system {
            SystemMessage::TaskStarted(t) if t.is_backgrounded == Some(true) => {
                let description = t.description.clone().unwrap_or_else(|| t.task_id.clone());
                self.note(&format!("▸ background task: {description}"));
                self.tasks.insert(
                    t.task_id.clone(),
                    Task {
                        description,
                        started: Instant::now(),
                    },
                );
            }
            SystemMessage::TaskProgress(p) => {
                let what = p.description.as_deref().unwrap_or("subagent");
                let mut line = format!("  … {what}");
                if let Some(tool) = &p.last_tool_name {
                    line.push_str(&format!(": {tool}"));
                }
                if let Some(usage) = &p.usage {
                    if let Some(n) = usage.tool_uses {
                        let s = if n == 1 { "" } else { "s" };
                        line.push_str(&format!(", {n} tool use{s}"));
                    }
                    if let Some(ms) = usage.duration_ms.as_ref().and_then(|n| n.as_f64()) {
                        line.push_str(&format!(", {}", elapsed(Duration::from_millis(ms as u64))));
                    }
                }
                self.note(&line);
            }
            SystemMessage::TaskNotification(n) => {
                if let Some(task) = self.tasks.remove(&n.task_id) {
                    let status = n.status.as_ref().map(|s| s.as_str()).unwrap_or("ended");
                    let mark = if status == "completed" { "✓" } else { "✗" };
                    self.note(&format!(
                        "{mark} background task {status}: {} · {}",
                        task.description,
                        elapsed(task.started.elapsed())
                    ));
                }
            }
            SystemMessage::ApiRetry(r) => {
                let status = r
                    .error_status
                    .as_ref()
                    .map(|s| format!(" after HTTP {s}"))
                    .unwrap_or_default();
                let attempt = r
                    .attempt
                    .map(|a| format!(" (attempt {a})"))
                    .unwrap_or_default();
                self.note(&format!("↻ retrying the API{status}{attempt}"));
            }
            SystemMessage::PermissionDenied(p) => {
                let tool = p.tool_name.as_deref().unwrap_or("tool");
                let why = p.message.as_deref().unwrap_or("denied");
                self.note(&format!(
                    "✗ permission denied for {tool}: {}",
                    one_line(why)
                ));
            }
            SystemMessage::Notification(n) => {
                if let Some(text) = &n.text {
                    self.note(&format!("• {}", one_line(text)));
                }
            }
            SystemMessage::Status(_) if self.tools.is_empty() => {
                self.set_status("waiting for the model");
            }
            _ => {}
        }
    }

    fn assembly(&mut self, event: &AssemblyEvent) {
        match event {
            AssemblyEvent::MessageStarted {
                id,
                parent_tool_use_id: None,
                ..
            } => {
                self.top_level.insert(id.clone());
            }
            AssemblyEvent::BlockStarted {
                message_id,
                index,
                kind,
            } if self.top_level.contains(message_id) => match kind {
                BlockKind::Text => {
                    self.status = None;
                    self.clear_spinner();
                    self.text_blocks.insert((message_id.clone(), *index));
                }
                BlockKind::Thinking => self.set_status("thinking"),
                BlockKind::ToolUse { name, .. } => {
                    let name = tool_name(name);
                    self.set_status(&format!("preparing {name}"));
                }
                _ => {}
            },
            AssemblyEvent::Delta {
                message_id,
                index,
                delta: Delta::Text(d),
            } if self.text_blocks.contains(&(message_id.clone(), *index)) => {
                self.streamed.insert(message_id.clone());
                self.replace_broken();
                match &mut self.held {
                    Some(held) => held.push(&d.text),
                    None => self.write_text(&d.text),
                }
            }
            AssemblyEvent::BlockFinished {
                message_id, index, ..
            }
            | AssemblyEvent::BlockFailed {
                message_id, index, ..
            } if self.text_blocks.remove(&(message_id.clone(), *index)) => match &mut self.held {
                Some(held) => held.end_block(),
                None => self.end_line(),
            },
            AssemblyEvent::MessageFinished { id, abandoned, .. } => {
                self.text_blocks.retain(|(m, _)| m != id);
                let top_level = self.top_level.remove(id);
                let stands = match &mut self.held {
                    Some(held) if top_level => held.finish(abandoned.is_some()),
                    _ => None,
                };
                if let Some(text) = stands {
                    self.write_text(&text);
                }
                self.end_line();
            }
            _ => {}
        }
    }

    fn tool_done(&mut self, result: &ToolResultBlock) {
        let failed = result.is_error == Some(true);
        let text = result
            .content
            .as_ref()
            .map(|c| c.text())
            .unwrap_or_default();
        let preview = preview(&text);
        let (label, depth, took) = match self.tools.remove(&result.tool_use_id) {
            Some(tool) => (tool.label, tool.depth, Some(tool.started.elapsed())),
            None => ("tool".to_owned(), 0, None),
        };
        let name = label.split_whitespace().next().unwrap_or("tool").to_owned();
        let mark = if failed { "✗" } else { "✓" };
        let mut line = format!("{}{mark} {name}", indent(depth));
        if let Some(took) = took {
            line.push_str(&format!(" {}", elapsed(took)));
        }
        if !preview.is_empty() {
            line.push_str(&format!(" · {preview}"));
        }
        self.note(&line);
    }

    /// How deep a line sits: 0 at the top level, 1 inside a subagent, ...
    fn depth(&self, parent: Option<&str>) -> usize {
        match parent {
            None => 0,
            Some(parent) => self.tools.get(parent).map_or(1, |t| t.depth + 1),
        }
    }

    fn set_status(&mut self, label: &str) {
        if self.status.as_ref().is_none_or(|(l, _)| l != label) {
            self.status = Some((label.to_owned(), Instant::now()));
        }
    }

    /// Writes answer text, its control characters shown, not obeyed (newlines and tabs kept).
    fn write_text(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        self.clear_spinner();
        self.write_answer(text);
        self.at_line_start = text.ends_with('\n');
    }

    /// New answer text is coming: an attempt that broke off before it is dropped from the
    /// answer, with a note.
    fn replace_broken(&mut self) {
        if let Some(broken) = self.held.as_mut().and_then(Held::replaced) {
            let line = format!(
                "byre: the answer broke off after {} bytes and the CLI retried it; the broken \
                 attempt is left out of the answer: {}",
                broken.trim_end().len(),
                preview(&broken)
            );
            self.note(&line);
        }
    }

    /// Writes answer text where the answer goes (stdout, unless told otherwise), its control
    /// characters made visible.
    fn write_answer(&mut self, text: &str) {
        // A failed write of the answer is kept, wherever it goes: the run stops.
        let written = if self.answer_on_stderr {
            let mut out = std::io::stderr().lock();
            visible::write(&mut out, text).and_then(|()| out.flush())
        } else {
            let mut out = std::io::stdout().lock();
            visible::write(&mut out, text).and_then(|()| out.flush())
        };
        self.stdout_written(written);
    }

    /// Writes out what [`Renderer::event`] left in the buffer (`json` output): called when no
    /// other event is ready, and before the events' loop ends.
    pub(crate) fn flush(&mut self) {
        if let Some(out) = &mut self.json {
            let written = out.flush();
            self.stdout_written(written);
        }
    }

    /// Keeps the first failed write to stdout.
    fn stdout_written(&mut self, written: std::io::Result<()>) {
        if let (Err(error), None) = (written, &self.stdout_error) {
            self.stdout_error = Some(error);
        }
    }

    /// Whether a write to stdout failed (its reader has gone, or its disk is full): there is
    /// nobody to show the rest to, or nowhere.
    pub(crate) fn stdout_gone(&self) -> bool {
        self.stdout_error.is_some()
    }

    /// Why a write to stdout failed, if one did.
    pub(crate) fn stdout_error(&self) -> Option<&std::io::Error> {
        self.stdout_error.as_ref()
    }

    /// Writes a line on stderr whatever the output mode (Ctrl-C, stopping).
    pub(crate) fn say(&mut self, line: &str) {
        if self.mode == Output::Text {
            return self.note(line);
        }
        let mut err = std::io::stderr().lock();
        let _ = writeln!(err, "{}", Visible(line));
        let _ = err.flush();
    }

    /// Prints `line` on stdout on a line of its own (in text output): the structured output
    /// after an answer in `chat`.
    pub(crate) fn print_line(&mut self, line: &str) {
        if self.mode != Output::Text {
            return;
        }
        self.clear_spinner();
        self.end_line();
        let mut out = std::io::stdout().lock();
        let written = writeln!(out, "{}", Visible(line)).and_then(|()| out.flush());
        drop(out);
        self.stdout_written(written);
    }

    /// Ends the answer's current line, if text is pending on it.
    fn end_line(&mut self) {
        if !self.at_line_start {
            self.write_answer("\n");
            self.at_line_start = true;
        }
    }

    fn clear_spinner(&mut self) {
        if self.spinner_drawn {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[2K");
            let _ = err.flush();
            self.spinner_drawn = false;
        }
    }
}

fn indent(depth: usize) -> String {
    "  ".repeat(depth)
}
