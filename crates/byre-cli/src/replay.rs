//! `byre replay FILE`: a transcript as a readable conversation — prompts, answers, tool calls
//! and their results, hooks, interrupts, and each turn's closing line with its cost.
//!
//! It reads transcripts as `--transcript` writes them (byre-transport's transcript format:
//! `{"dir":"send"|"recv","t":..,"msg":{...}}` per line; notes and raw lines are skipped) and
//! the NDJSON of `--output json` (one CLI message per line). Each message is decoded once, from
//! its recorded bytes. A line that is neither is an error naming the line.

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use byre_proto::{
    AnyMessage, CliMessage, CliRequest, ContentBlock, DecodeErrorKind, HostMessage, HostRequest,
    MessageContent, SystemMessage,
};
use byre_transport::{TranscriptDir, TranscriptError, TranscriptLine};

use crate::errors::CliError;
use crate::render::{closing_line, one_line, preview, tool_label};

/// Prints the transcript at `path`.
pub(crate) fn replay(path: &Path) -> Result<ExitCode, CliError> {
    let error = |message: String| CliError::Replay {
        path: path.to_path_buf(),
        message,
    };
    let text = std::fs::read(path).map_err(|e| error(e.to_string()))?;
    let mut view = View::default();
    let mut out = std::io::stdout().lock();
    for (index, line) in text.split(|&b| b == b'\n').enumerate() {
        let line = line.trim_ascii();
        if line.is_empty() {
            continue;
        }
        let at = index + 1;
        let shown = match TranscriptLine::from_slice(line) {
            Ok(entry) => match entry.decode() {
                Some(Ok(AnyMessage::Send(message))) => view.sent(&message),
                Some(Ok(AnyMessage::Recv(message))) => view.received(&message),
                Some(Err(e)) => {
                    let what = match entry.dir {
                        TranscriptDir::Send => "a host message",
                        _ => "a CLI message",
                    };
                    return Err(error(format!("line {at}: not {what}: {e}")));
                }
                // Notes, and deliberately invalid bytes sent in a test: nothing to show.
                None => Vec::new(),
            },
            // Not a transcript line: a line of `--output json`, perhaps.
            Err(not_transcript) => match CliMessage::from_slice(line) {
                Ok(message) => view.received(&message),
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
            writeln!(out, "{line}").map_err(|e| error(e.to_string()))?;
        }
    }
    if view.messages == 0 {
        return Err(error("no messages".into()));
    }
    out.flush().map_err(|e| error(e.to_string()))?;
    Ok(ExitCode::SUCCESS)
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
    fn sent(&mut self, message: &HostMessage) -> Vec<String> {
        self.messages += 1;
        match message {
            HostMessage::User(user) => {
                let text = content_text(&user.message.content);
                vec![String::new(), format!("you: {text}")]
            }
            HostMessage::ControlRequest(request) => match &request.request {
                HostRequest::Initialize(_) => Vec::new(),
                HostRequest::Interrupt(_) => vec!["  [interrupt]".into()],
                HostRequest::SetModel(m) => vec![format!(
                    "  [set_model {}]",
                    m.model.as_deref().unwrap_or("default")
                )],
                other => vec![format!("  [{}]", other.tag().unwrap_or("request"))],
            },
            _ => Vec::new(),
        }
    }

    pub(crate) fn received(&mut self, message: &CliMessage) -> Vec<String> {
        self.messages += 1;
        let mut lines = Vec::new();
        match message {
            CliMessage::System(SystemMessage::Init(init))
                if init.session_id.is_some() && init.session_id != self.session =>
            {
                self.session = init.session_id.clone();
                lines.push(format!(
                    "session {} · model {} · {}",
                    init.session_id.as_deref().unwrap_or("?"),
                    init.model.as_deref().unwrap_or("?"),
                    init.cwd.as_deref().unwrap_or("?")
                ));
            }
            CliMessage::Assistant(a) => {
                let depth = self.depth(a.parent_tool_use_id.as_deref());
                for block in &a.message.content {
                    match block {
                        ContentBlock::Text(t) if depth == 0 => {
                            lines.push(format!("claude: {}", t.text.trim_end()));
                        }
                        ContentBlock::Text(t) => {
                            lines.push(format!("{}↳ {}", indent(depth), preview(&t.text)));
                        }
                        ContentBlock::ToolUse(call) => {
                            let label = tool_label(&call.name, &call.input);
                            lines.push(format!("{}▸ {label}", indent(depth)));
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
                                lines.push(format!("{}{mark} {name}{sep}{text}", indent(depth)));
                            }
                            ContentBlock::Text(t) if t.text.starts_with("[Request interrupted") => {
                                lines.push("  ⏹ interrupted".into());
                            }
                            _ => {}
                        }
                    }
                }
            }
            CliMessage::ControlRequest(request) => match &request.request {
                CliRequest::HookCallback(hook) => {
                    let event = hook.input.event().unwrap_or("hook");
                    lines.push(match hook.input.tool_name() {
                        Some(tool) => format!("  ↪ hook {event} ({tool})"),
                        None => format!("  ↪ hook {event}"),
                    });
                }
                CliRequest::CanUseTool(ask) => {
                    lines.push(format!("  ? may {} run?", ask.tool_name));
                }
                _ => {}
            },
            CliMessage::System(SystemMessage::TaskStarted(t))
                if t.is_backgrounded == Some(true) =>
            {
                let what = t.description.as_deref().unwrap_or(&t.task_id);
                lines.push(format!("  ▸ background task: {what}"));
            }
            CliMessage::System(SystemMessage::TaskNotification(n)) => {
                let status = n.status.as_ref().map(|s| s.as_str()).unwrap_or("ended");
                let summary = n.summary.as_deref().map(one_line).unwrap_or_default();
                lines.push(format!("  • task {status}: {summary}"));
            }
            CliMessage::System(SystemMessage::ApiRetry(r)) => {
                let attempt = r
                    .attempt
                    .map(|a| format!(" (attempt {a})"))
                    .unwrap_or_default();
                lines.push(format!("  ↻ API retry{attempt}"));
            }
            CliMessage::Result(result) => {
                if let Some(errors) = &result.errors {
                    for error in errors {
                        lines.push(format!("  error: {}", one_line(error)));
                    }
                }
                lines.push(closing_line(result));
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

fn indent(depth: usize) -> String {
    "  ".repeat(depth + 1)
}
