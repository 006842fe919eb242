//! `byre replay FILE`: a transcript as a readable conversation — prompts, answers, tool calls
//! and their results, hooks, interrupts, and each turn's closing line with its cost.
//!
//! It reads transcripts as `--transcript` writes them (byre-transport's transcript format:
//! `{"dir":"send"|"recv","t":..,"msg":{...}}` per line; notes and raw lines are skipped) and
//! the NDJSON of `--output json` (one CLI message per line). Each message is decoded once, from
//! its recorded bytes. A line that is neither is an error naming the line.
//!
//! The file is read a line at a time with the NDJSON codec's framing ([`LineReader`]), so its
//! size does not matter: memory is bounded by the line limit. A message is decoded straight
//! from its line's bytes, where a long text shares the line's memory, so a long line is held
//! about once. A line longer than the limit is
//! reported on stderr with its length and first bytes, and the replay goes on at the next line.

use std::collections::HashMap;
use std::fmt;
use std::fs::File;
use std::io::{BufReader, Write};
use std::path::Path;
use std::process::ExitCode;

use byre_proto::{
    AnyMessage, CliMessage, CliRequest, ContentBlock, DecodeErrorKind, Direction, HostMessage,
    HostRequest, MessageContent, SystemMessage, Text,
};
use byre_transport::{LineFrame, LineReader, TranscriptError, TranscriptLine};

use crate::errors::CliError;
use crate::render::{closing_line, one_line, preview, tool_label};
use crate::visible::Visible;

/// Prints the transcript at `path`, reading lines of at most `max_line` bytes.
pub(crate) fn replay(path: &Path, max_line: usize) -> Result<ExitCode, CliError> {
    let error = |message: String| CliError::Replay {
        path: path.to_path_buf(),
        message,
    };
    let file = File::open(path).map_err(|e| error(e.to_string()))?;
    let mut lines = LineReader::new(BufReader::with_capacity(READ_BUFFER, file), max_line);
    let mut view = View::default();
    let mut out = std::io::stdout().lock();
    while let Some(frame) = lines.next() {
        let at = lines.line_number();
        let line = match frame.map_err(|e| error(e.to_string()))? {
            LineFrame::Line(line) => line,
            LineFrame::BadLine(bad) => {
                // What is on stdout so far comes first.
                out.flush().map_err(|e| error(e.to_string()))?;
                eprintln!(
                    "{}",
                    Visible(format_args!(
                        "byre: warning: {}: line {at}: {bad}; it starts {:?}; skipped \
                         (--max-line-bytes raises the limit)",
                        path.display(),
                        bad.head
                    ))
                );
                continue;
            }
        };
        let shown = match TranscriptLine::decode_bytes(&line) {
            Ok(Some((_, Ok(AnyMessage::Send(message))))) => view.sent(&message),
            Ok(Some((_, Ok(AnyMessage::Recv(message))))) => view.received_shown(&message),
            Ok(Some((direction, Err(e)))) => {
                let what = match direction {
                    Direction::Send => "a host message",
                    Direction::Recv => "a CLI message",
                };
                return Err(error(format!("line {at}: not {what}: {e}")));
            }
            // Notes, and deliberately invalid bytes sent in a test: nothing to show.
            Ok(None) => Vec::new(),
            // Not a transcript line: a line of `--output json`, perhaps.
            Err(not_transcript) => match CliMessage::from_bytes(&line) {
                Ok(message) => view.received_shown(&message),
                Err(e) if matches!(e.kind, DecodeErrorKind::NotJson(_)) => {
                    return Err(error(format!("line {at}: {}", e.kind)))
                }
                Err(e) => {
                    let why = match not_transcript {
                        TranscriptError::BadLine { reason, .. } => reason,
                        other => other.to_string(),
                    };
                    return Err(error(format!(
                        "line {at}: neither a transcript line (dir, msg: {why}) nor a CLI \
                         message (type: {})",
                        e.kind
                    )));
                }
            },
        };
        for line in shown {
            writeln!(out, "{}", Visible(&line)).map_err(|e| error(e.to_string()))?;
        }
    }
    if view.messages == 0 {
        return Err(error("no messages".into()));
    }
    out.flush().map_err(|e| error(e.to_string()))?;
    Ok(ExitCode::SUCCESS)
}

/// One line of the conversation as shown. A prompt's or an answer's text stays the message's
/// own [`Text`], which a long line's message shares with the line, instead of being copied
/// into a line of its own.
pub(crate) enum Shown {
    /// A line as it is.
    Line(String),
    /// `you: ` and the prompt.
    Prompt(Text),
    /// `claude: ` and the answer, without its trailing whitespace.
    Answer(Text),
}

impl From<String> for Shown {
    fn from(line: String) -> Self {
        Shown::Line(line)
    }
}

impl From<&str> for Shown {
    fn from(line: &str) -> Self {
        Shown::Line(line.to_owned())
    }
}

impl fmt::Display for Shown {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Shown::Line(line) => f.write_str(line),
            Shown::Prompt(text) => write!(f, "you: {text}"),
            Shown::Answer(text) => write!(f, "claude: {}", text.trim_end()),
        }
    }
}

/// What the conversation so far needs to show the next line.
#[derive(Default)]
pub(crate) struct View {
    messages: usize,
    session: Option<String>,
    /// Tool calls by id: their label and depth.
    tools: HashMap<String, (String, usize)>,
}

impl View {
    fn sent(&mut self, message: &HostMessage) -> Vec<Shown> {
        self.messages += 1;
        match message {
            HostMessage::User(user) => {
                let prompt = match &user.message.content {
                    MessageContent::Text(text) => Shown::Prompt(text.clone()),
                    blocks => Shown::Line(format!("you: {}", content_text(blocks))),
                };
                vec![Shown::Line(String::new()), prompt]
            }
            HostMessage::ControlRequest(request) => match &request.request {
                HostRequest::Initialize(_) => Vec::new(),
                HostRequest::Interrupt(_) => vec!["  [interrupt]".into()],
                HostRequest::SetModel(m) => {
                    vec![
                        format!("  [set_model {}]", m.model.as_deref().unwrap_or("default")).into(),
                    ]
                }
                other => vec![format!("  [{}]", other.tag().unwrap_or("request")).into()],
            },
            _ => Vec::new(),
        }
    }

    /// The lines a message from the CLI shows, as text.
    pub(crate) fn received(&mut self, message: &CliMessage) -> Vec<String> {
        let shown = self.received_shown(message);
        shown.into_iter().map(|line| line.to_string()).collect()
    }

    /// The lines a message from the CLI shows.
    fn received_shown(&mut self, message: &CliMessage) -> Vec<Shown> {
        self.messages += 1;
        let mut lines = Vec::new();
        match message {
            CliMessage::System(SystemMessage::Init(init))
                if init.session_id.is_some() && init.session_id != self.session =>
            {
                self.session = init.session_id.clone();
                push(
                    &mut lines,
                    format!(
                        "session {} · model {} · {}",
                        init.session_id.as_deref().unwrap_or("?"),
                        init.model.as_deref().unwrap_or("?"),
                        init.cwd.as_deref().unwrap_or("?")
                    ),
                );
            }
            CliMessage::Assistant(a) => {
                let depth = self.depth(a.parent_tool_use_id.as_deref());
                for block in &a.message.content {
                    match block {
                        ContentBlock::Text(t) if depth == 0 => {
                            push(&mut lines, Shown::Answer(t.text.clone()));
                        }
                        ContentBlock::Text(t) => {
                            push(
                                &mut lines,
                                format!("{}↳ {}", indent(depth), preview(&t.text)),
                            );
                        }
                        ContentBlock::ToolUse(call) => {
                            let label = tool_label(&call.name, &call.input);
                            push(&mut lines, format!("{}▸ {label}", indent(depth)));
                            self.tools.insert(call.id.clone(), (label, depth));
                        }
                        _ => {}
                    }
                }
            }
            CliMessage::User(u) => {
                if let MessageContent::Blocks(blocks) = &u.message.content {
                    for block in blocks {
                        match block {
                            ContentBlock::ToolResult(r) => {
                                let (label, depth) = self
                                    .tools
                                    .remove(&r.tool_use_id)
                                    .unwrap_or_else(|| ("tool".into(), 0));
                                let name = label.split_whitespace().next().unwrap_or("tool");
                                let mark = if r.is_error == Some(true) {
                                    "✗"
                                } else {
                                    "✓"
                                };
                                let text = r.content.as_ref().map(|c| c.text()).unwrap_or_default();
                                let text = preview(&text);
                                let sep = if text.is_empty() { "" } else { " · " };
                                push(
                                    &mut lines,
                                    format!("{}{mark} {name}{sep}{text}", indent(depth)),
                                );
                            }
                            ContentBlock::Text(t) if t.text.starts_with("[Request interrupted") => {
                                push(&mut lines, "  ⏹ interrupted");
                            }
                            _ => {}
                        }
                    }
                }
            }
            CliMessage::ControlRequest(request) => match &request.request {
                CliRequest::HookCallback(hook) => {
                    let event = hook.input.event().unwrap_or("hook");
                    push(
                        &mut lines,
                        match hook.input.tool_name() {
                            Some(tool) => format!("  ↪ hook {event} ({tool})"),
                            None => format!("  ↪ hook {event}"),
                        },
                    );
                }
                CliRequest::CanUseTool(ask) => {
                    push(&mut lines, format!("  ? may {} run?", ask.tool_name));
                }
                _ => {}
            },
            CliMessage::System(SystemMessage::TaskStarted(t))
                if t.is_backgrounded == Some(true) =>
            {
                let what = t.description.as_deref().unwrap_or(&t.task_id);
                push(&mut lines, format!("  ▸ background task: {what}"));
            }
            CliMessage::System(SystemMessage::TaskNotification(n)) => {
                let status = n.status.as_ref().map(|s| s.as_str()).unwrap_or("ended");
                let summary = n.summary.as_deref().map(one_line).unwrap_or_default();
                push(&mut lines, format!("  • task {status}: {summary}"));
            }
            CliMessage::System(SystemMessage::ApiRetry(r)) => {
                let attempt = r
                    .attempt
                    .map(|a| format!(" (attempt {a})"))
                    .unwrap_or_default();
                push(&mut lines, format!("  ↻ API retry{attempt}"));
            }
            CliMessage::Result(result) => {
                if let Some(errors) = &result.errors {
                    for error in errors {
                        push(&mut lines, format!("  error: {}", one_line(error)));
                    }
                }
                push(&mut lines, closing_line(result));
            }
            _ => {}
        }
        lines
    }

    fn depth(&self, parent: Option<&str>) -> usize {
        match parent {
            None => 0,
            Some(parent) => self.tools.get(parent).map_or(1, |(_, d)| d + 1),
        }
    }
}

/// A prompt's text; images and other blocks are named.
fn content_text(content: &MessageContent) -> String {
    match content {
        MessageContent::Text(text) => text.to_string(),
        MessageContent::Blocks(blocks) => blocks
            .iter()
            .map(|b| match b {
                ContentBlock::Text(t) => t.text.to_string(),
                other => format!("[{}]", other.tag().unwrap_or("block")),
            })
            .collect::<Vec<_>>()
            .join(" "),
    }
}

fn push(lines: &mut Vec<Shown>, line: impl Into<Shown>) {
    lines.push(line.into());
}

fn indent(depth: usize) -> String {
    "  ".repeat(depth + 1)
}

/// The capacity of the file's read buffer.
const READ_BUFFER: usize = 64 * 1024;
