//! The recorded corpus: every transcript decodes, renders to a reviewed snapshot, and
//! re-encodes to the value it came from.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

use byre_proto::{
    check_answer_payload, check_response_payload, first_difference, AnyMessage, CliMessage,
    CliRequest, ContentBlock, ControlResponse, ControlResponseBody, DecodeError, DecodeErrorKind,
    Delta, Direction, FindUnknown, HostMessage, HostRequest, InitializeResponse, JsonRpcMessage,
    McpMessageResponse, MediaSource, MessageContent, StreamEvent, SystemMessage, Unknown,
};
use serde_json::Value;

use crate::support::{
    corpus_files, corpus_messages, corpus_root, direction, read_transcript, Body,
};

/// How many characters of a string the rendering keeps.
const TEXT_LEN: usize = 40;

#[test]
fn transcripts_render_to_snapshots() {
    let root = corpus_root().canonicalize().expect("the corpus exists");
    insta::glob!("../../../testdata/transcripts", "**/*.jsonl", |path| {
        // Name each snapshot by its path under the corpus root (`cli-2.1.328__s01_...`), so
        // the names stay put when transcripts of another CLI version are added.
        let rel = path
            .strip_prefix(&root)
            .expect("a transcript under the corpus root");
        let suffix = rel.to_string_lossy().replace(['/', '\\'], "__");
        insta::with_settings!({ snapshot_suffix => suffix }, {
            insta::assert_snapshot!(render_transcript(path));
        });
    });
}

#[test]
fn every_corpus_message_round_trips() {
    let messages = corpus_messages();
    assert!(
        messages.len() > 300,
        "the corpus should hold a few hundred messages, found {}",
        messages.len()
    );
    let mut failures = Vec::new();
    for (dir, bytes) in messages {
        let original: Value = serde_json::from_slice(bytes).expect("corpus msg is JSON");
        match AnyMessage::from_slice(*dir, bytes) {
            Ok(message) => {
                let again = message.to_value().expect("a value");
                if again != original {
                    failures.push(format!(
                        "{} {}: differs at {:?}",
                        dir.as_str(),
                        head(bytes),
                        first_difference(&original, &again)
                    ));
                }
            }
            Err(e) => failures.push(format!("{} {}: {e}", dir.as_str(), head(bytes))),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_corpus_message_is_fully_typed() {
    // The deliberately unknown lines of the corpus are `raw` lines, not `msg`s: every `msg`
    // must decode with no `Unknown` anywhere in its tree.
    let mut failures = Vec::new();
    for (dir, bytes) in corpus_messages() {
        let message = AnyMessage::from_slice(*dir, bytes).expect("corpus msg decodes");
        let paths = message.unknown_paths();
        if !paths.is_empty() {
            failures.push(format!("{} {}: {paths:?}", dir.as_str(), head(bytes)));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn corpus_files_are_found_from_both_paths() {
    // The glob in `transcripts_render_to_snapshots` and `support::corpus_root` must agree.
    let files = corpus_files();
    assert!(files.len() >= 10, "found {} transcripts", files.len());
    let from_test_dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/it/../../../testdata/transcripts")
        .canonicalize()
        .expect("the glob base exists");
    for f in &files {
        let f = f.canonicalize().expect("transcript exists");
        assert!(f.starts_with(&from_test_dir), "{}", f.display());
    }
}

/// The first bytes of a line, for failure messages.
fn head(bytes: &[u8]) -> String {
    String::from_utf8_lossy(&bytes[..bytes.len().min(100)]).into_owned()
}

/// Renders a transcript: one line per `send`/`recv` line, notes left out.
fn render_transcript(path: &Path) -> String {
    let mut r = Renderer::default();
    let mut out = String::new();
    for entry in read_transcript(path) {
        let line = match (&entry.body, direction(&entry)) {
            (Body::Msg(bytes), Some(dir)) => {
                format!("{} {}", dir.as_str(), r.render_line(dir, bytes))
            }
            (Body::Raw(raw), Some(dir)) => {
                let outcome = r.render_line(dir, raw.as_bytes());
                format!("{} raw {} -> {outcome}", dir.as_str(), text(raw))
            }
            (Body::Msg(_) | Body::Raw(_), None) => {
                format!("{} (unexpected dir with a message)", entry.dir)
            }
            (Body::Other, _) => continue,
        };
        writeln!(out, "{:>3} {line}", entry.line_no).expect("writing to a String");
    }
    alias_ids(&out)
}

/// Replaces each shortened id (`5162fdbd..`, `msg_mockd1..`) by a stable alias (`#1..`) given
/// in order of first appearance, so that re-recording a transcript (new session, message and
/// request ids) does not change its snapshot.
fn alias_ids(text: &str) -> String {
    let mut aliases: HashMap<String, usize> = HashMap::new();
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let mut first = true;
        for token in line.split(' ') {
            if !first {
                out.push(' ');
            }
            first = false;
            let (core, tail) = match token.strip_suffix('\n') {
                Some(core) => (core, "\n"),
                None => (token, ""),
            };
            let (prefix, value) = match core.rfind('=') {
                Some(at) => core.split_at(at + 1),
                None => ("", core),
            };
            let is_id = value.len() > 2
                && value.ends_with("..")
                && value[..value.len() - 2]
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
            out.push_str(prefix);
            if is_id {
                let next = aliases.len() + 1;
                let n = *aliases.entry(value.to_owned()).or_insert(next);
                out.push_str(&format!("#{n}.."));
            } else {
                out.push_str(value);
            }
            out.push_str(tail);
        }
    }
    out
}

/// Renders messages, remembering the subtype of each control request so that its answer can
/// be checked against the payload type of that subtype.
#[derive(Default)]
struct Renderer {
    requests: HashMap<String, (Direction, String)>,
}

impl Renderer {
    fn render_line(&mut self, dir: Direction, bytes: &[u8]) -> String {
        let message = match AnyMessage::from_slice(dir, bytes) {
            Ok(m) => m,
            Err(e) => return error(&e),
        };
        let mut line = match &message {
            AnyMessage::Send(m) => self.host(m),
            AnyMessage::Recv(m) => self.cli(m),
        };
        let paths = message.unknown_paths();
        if !paths.is_empty() && !matches!(paths.as_slice(), [p] if p.starts_with("/ ")) {
            write!(line, " UNKNOWN-AT {}", paths.join(", ")).expect("writing to a String");
        }
        let misfits = message.misfit_paths();
        if !misfits.is_empty() {
            write!(line, " MISFIT-AT {}", misfits.join(", ")).expect("writing to a String");
        }
        if let Ok(original) = serde_json::from_slice::<Value>(bytes) {
            if let Some(at) = first_difference(&original, &message.to_value().expect("a value")) {
                write!(line, " NO-ROUND-TRIP at {at}").expect("writing to a String");
            }
        }
        line
    }

    fn cli(&mut self, m: &CliMessage) -> String {
        match m {
            CliMessage::Assistant(a) => {
                let mut s = format!("assistant {}", id(a.message.id.as_deref(), 14));
                for b in &a.message.content {
                    write!(s, " {}", block(b)).expect("writing to a String");
                }
                push_opt(&mut s, "parent", a.parent_tool_use_id.as_deref());
                push_opt(&mut s, "error", a.error.as_ref().map(|e| e.as_str()));
                s
            }
            CliMessage::User(u) => {
                let mut s = format!("user {}", content(&u.message.content));
                push_opt(&mut s, "parent", u.parent_tool_use_id.as_deref());
                if u.is_synthetic == Some(true) {
                    s.push_str(" synthetic");
                }
                if u.is_replay == Some(true) {
                    s.push_str(" replay");
                }
                if u.tool_use_result.is_some() {
                    s.push_str(" +tool_use_result");
                }
                s
            }
            CliMessage::Result(r) => {
                let mut s = format!("result {}", r.subtype);
                push_opt(
                    &mut s,
                    "is_error",
                    r.is_error.map(|b| b.to_string()).as_deref(),
                );
                push_opt(
                    &mut s,
                    "turns",
                    r.num_turns.map(|n| n.to_string()).as_deref(),
                );
                push_opt(&mut s, "stop", r.stop_reason.as_ref().map(|x| x.as_str()));
                push_opt(
                    &mut s,
                    "terminal",
                    r.terminal_reason.as_ref().map(|x| x.as_str()),
                );
                push_opt(
                    &mut s,
                    "cost",
                    r.total_cost_usd.as_ref().map(|c| c.to_string()).as_deref(),
                );
                if let Some(text) = &r.result {
                    write!(s, " result={}", self::text(text)).expect("writing to a String");
                }
                if let Some(errors) = r.errors.as_ref().filter(|e| !e.is_empty()) {
                    let errors: Vec<String> = errors.iter().map(|e| self::text(e)).collect();
                    write!(s, " errors=[{}]", errors.join(", ")).expect("writing to a String");
                }
                s
            }
            CliMessage::System(sys) => system(sys),
            CliMessage::StreamEvent(e) => {
                let mut s = format!("stream_event {}", stream_event(&e.event));
                push_opt(&mut s, "parent", e.parent_tool_use_id.as_deref());
                s
            }
            CliMessage::ToolProgress(p) => format!(
                "tool_progress {} call={} elapsed={}",
                p.tool_name.as_deref().unwrap_or("?"),
                p.tool_call_id(),
                p.elapsed_time_seconds
                    .as_ref()
                    .map_or("?".to_owned(), |n| n.to_string())
            ),
            CliMessage::CommandLifecycle(c) => {
                format!(
                    "command_lifecycle {} {}",
                    id(Some(&c.command_uuid), 8),
                    c.state
                )
            }
            CliMessage::RateLimitEvent(r) => format!(
                "rate_limit_event {}",
                r.rate_limit_info.status.as_deref().unwrap_or("?")
            ),
            CliMessage::ControlRequest(c) => {
                let subtype = c.request.tag().unwrap_or("?").to_owned();
                self.requests
                    .insert(c.request_id.clone(), (Direction::Recv, subtype));
                format!(
                    "control_request {} {}",
                    id(Some(&c.request_id), 8),
                    cli_request(&c.request)
                )
            }
            CliMessage::ControlResponse(c) => self.response(Direction::Recv, c),
            CliMessage::ControlCancelRequest(c) => {
                format!("control_cancel_request {}", id(Some(&c.request_id), 8))
            }
            CliMessage::Unknown(u) => unknown(u),
            other => other.kind().to_owned(),
        }
    }

    fn host(&mut self, m: &HostMessage) -> String {
        match m {
            HostMessage::User(u) => {
                let mut s = format!("user {}", content(&u.message.content));
                push_opt(
                    &mut s,
                    "session",
                    u.session_id.as_deref().map(|x| id(Some(x), 8)).as_deref(),
                );
                push_opt(&mut s, "uuid", u.uuid.as_deref());
                s
            }
            HostMessage::ControlRequest(c) => {
                let subtype = c.request.tag().unwrap_or("?").to_owned();
                self.requests
                    .insert(c.request_id.clone(), (Direction::Send, subtype));
                format!(
                    "control_request {} {}",
                    id(Some(&c.request_id), 8),
                    host_request(&c.request)
                )
            }
            HostMessage::ControlResponse(c) => self.response(Direction::Send, c),
            HostMessage::ControlCancelRequest(c) => {
                format!("control_cancel_request {}", id(Some(&c.request_id), 8))
            }
            HostMessage::KeepAlive(_) => "keep_alive".to_owned(),
            HostMessage::Unknown(u) => unknown(u),
            other => format!("new variant {:?}", other.tag()),
        }
    }

    /// A control response, with the request it answers and whether its payload is typed.
    fn response(&mut self, dir: Direction, c: &ControlResponse) -> String {
        let request_id = c.request_id().unwrap_or("?");
        let answered = self.requests.remove(request_id);
        let mut s = match &c.response {
            ControlResponseBody::Success(_) => "control_response success".to_owned(),
            ControlResponseBody::Error(e) => format!(
                "control_response error code={} {}",
                e.error_code.as_ref().map_or("-", |c| c.as_str()),
                text(e.error.as_deref().unwrap_or(""))
            ),
            ControlResponseBody::Unknown(u) => format!("control_response {}", unknown(u)),
            other => format!("control_response new variant {:?}", other.tag()),
        };
        write!(s, " {}", id(Some(request_id), 8)).expect("writing to a String");
        let Some((asked_by, subtype)) = answered else {
            s.push_str(" (answers no request seen)");
            return s;
        };
        write!(s, " ({subtype})").expect("writing to a String");
        if asked_by == dir {
            s.push_str(" ANSWERS-OWN-REQUEST");
        }
        let ControlResponseBody::Success(ok) = &c.response else {
            return s;
        };
        let payload = ok.payload_value();
        let check = match asked_by {
            Direction::Send => check_response_payload(&subtype, payload.as_ref()),
            Direction::Recv => check_answer_payload(&subtype, payload.as_ref()),
        };
        match check {
            None => s.push_str(" payload=untyped"),
            Some(Ok(paths)) if paths.is_empty() => s.push_str(" payload=typed"),
            Some(Ok(paths)) => {
                write!(s, " payload=unknown-at {}", paths.join(", ")).expect("writing to a String")
            }
            Some(Err(why)) => write!(s, " payload-error={why}").expect("writing to a String"),
        }
        if subtype == "initialize" {
            if let Ok(init) = ok.payload::<InitializeResponse>() {
                write!(
                    s,
                    " commands={} models={} version={}",
                    init.commands.as_ref().map_or(0, Vec::len),
                    init.models.as_ref().map_or(0, Vec::len),
                    init.claude_code_version.as_deref().unwrap_or("?")
                )
                .expect("writing to a String");
            }
        } else if subtype == "mcp_message" {
            if let Ok(answer) = ok.payload::<McpMessageResponse>() {
                s.push_str(&json_rpc(&answer.mcp_response));
            }
        } else if let Some(payload) = &payload {
            write!(s, " {}", keys(payload)).expect("writing to a String");
        } else {
            s.push_str(" (no payload)");
        }
        s
    }
}

/// A JSON-RPC message: its id, then its method, result keys or error.
fn json_rpc(m: &JsonRpcMessage) -> String {
    let mut s = String::new();
    if let Some(rpc_id) = &m.id {
        write!(s, " id={rpc_id}").expect("writing to a String");
    }
    if let Some(method) = &m.method {
        write!(s, " {method}").expect("writing to a String");
    }
    if let Some(result) = &m.result {
        write!(s, " result={}", keys(result)).expect("writing to a String");
    }
    if let Some(e) = &m.error {
        write!(s, " error={} {}", e.code, text(&e.message)).expect("writing to a String");
    }
    s
}

fn host_request(r: &HostRequest) -> String {
    match r {
        HostRequest::Initialize(i) => {
            let hooks = match &i.hooks {
                Some(map) => map
                    .iter()
                    .map(|(event, matchers)| format!("{}:{}", event.as_str(), matchers.len()))
                    .collect::<Vec<_>>()
                    .join(","),
                None if i.is_null("hooks") => "null".to_owned(),
                None => "-".to_owned(),
            };
            let mut s = format!("initialize hooks={hooks}");
            if let Some(servers) = &i.sdk_mcp_servers {
                write!(s, " sdkMcpServers={}", servers.join(",")).expect("writing to a String");
            }
            s
        }
        HostRequest::SetModel(m) => {
            format!("set_model {}", m.model.as_deref().unwrap_or("null"))
        }
        HostRequest::SetPermissionMode(m) => format!("set_permission_mode {}", m.mode),
        HostRequest::Unknown(u) => unknown_tagged(u, "subtype"),
        other => other.tag().unwrap_or("?").to_owned(),
    }
}

fn cli_request(r: &CliRequest) -> String {
    match r {
        CliRequest::CanUseTool(c) => format!("can_use_tool {}", c.tool_name),
        CliRequest::HookCallback(h) => format!(
            "hook_callback {} {}",
            h.callback_id,
            h.input.tag().unwrap_or("?")
        ),
        CliRequest::McpMessage(m) => {
            format!("mcp_message {}{}", m.server_name, json_rpc(&m.message))
        }
        CliRequest::Elicitation(e) => {
            format!("elicitation {} {}", e.mcp_server_name, text(&e.message))
        }
        CliRequest::RequestUserDialog(d) => format!("request_user_dialog {}", d.dialog_kind),
        CliRequest::Unknown(u) => unknown_tagged(u, "subtype"),
        other => format!("new variant {:?}", other.tag()),
    }
}

fn system(sys: &SystemMessage) -> String {
    match sys {
        SystemMessage::Init(i) => {
            let mut s = format!(
                "system/init session={} model={} tools={} mode={}",
                id(i.session_id.as_deref(), 8),
                i.model.as_deref().unwrap_or("?"),
                i.tools.as_ref().map_or(0, byre_proto::Names::len),
                i.permission_mode.as_ref().map_or("?", |m| m.as_str()),
            );
            for server in i.mcp_servers.iter().flatten() {
                let status = server.status.as_ref().map_or("?", |x| x.as_str());
                write!(s, " mcp={}:{status}", server.name).expect("writing to a String");
            }
            s
        }
        SystemMessage::Status(s) => {
            format!("system/status {}", s.status.as_deref().unwrap_or("null"))
        }
        SystemMessage::ThinkingTokens(t) => format!(
            "system/thinking_tokens estimated={}",
            t.estimated_tokens.map_or("?".to_owned(), |n| n.to_string())
        ),
        SystemMessage::Notification(n) => format!(
            "system/notification {} {}",
            n.key.as_deref().unwrap_or("?"),
            text(n.text.as_deref().unwrap_or(""))
        ),
        SystemMessage::TaskStarted(t) => format!(
            "system/task_started {} type={} call={} {}",
            t.task_id,
            t.task_type.as_ref().map_or("?", |x| x.as_str()),
            t.tool_use_id.as_deref().unwrap_or("?"),
            text(t.description.as_deref().unwrap_or(""))
        ),
        SystemMessage::TaskProgress(t) => format!(
            "system/task_progress {} last_tool={} tokens={}",
            t.task_id,
            t.last_tool_name.as_deref().unwrap_or("?"),
            t.usage
                .as_ref()
                .and_then(|u| u.total_tokens)
                .map_or("?".to_owned(), |n| n.to_string())
        ),
        SystemMessage::TaskUpdated(t) => format!(
            "system/task_updated {} status={}",
            t.task_id,
            t.patch
                .as_ref()
                .and_then(|p| p.status.as_ref())
                .map_or("?", |s| s.as_str())
        ),
        SystemMessage::TaskNotification(t) => format!(
            "system/task_notification {} status={} {}",
            t.task_id,
            t.status.as_ref().map_or("?", |s| s.as_str()),
            text(t.summary.as_deref().unwrap_or(""))
        ),
        SystemMessage::SessionStateChanged(s) => {
            format!("system/session_state_changed {}", s.state)
        }
        SystemMessage::Unknown(u) => format!("system {}", unknown_tagged(u, "subtype")),
        other => format!("system/{}", other.tag().unwrap_or("?")),
    }
}

fn stream_event(e: &StreamEvent) -> String {
    match e {
        StreamEvent::MessageStart(m) => format!(
            "message_start {} model={}",
            id(m.message.id.as_deref(), 14),
            m.message.model.as_deref().unwrap_or("?")
        ),
        StreamEvent::ContentBlockStart(b) => {
            format!(
                "content_block_start[{}] {}",
                b.index,
                block(&b.content_block)
            )
        }
        StreamEvent::ContentBlockDelta(d) => {
            let delta = match &d.delta {
                Delta::Text(t) => format!("text_delta {}", text(&t.text)),
                Delta::InputJson(j) => format!("input_json_delta {}", text(&j.partial_json)),
                Delta::Thinking(t) => format!("thinking_delta {}", text(&t.thinking)),
                Delta::Signature(s) => format!("signature_delta {}", text(&s.signature)),
                Delta::Citations(_) => "citations_delta".to_owned(),
                Delta::Unknown(u) => unknown(u),
                other => format!("new variant {:?}", other.tag()),
            };
            format!("content_block_delta[{}] {delta}", d.index)
        }
        StreamEvent::ContentBlockStop(b) => format!("content_block_stop[{}]", b.index),
        StreamEvent::MessageDelta(d) => format!(
            "message_delta stop={} out={}",
            d.delta.stop_reason.as_ref().map_or("null", |s| s.as_str()),
            d.usage
                .as_ref()
                .and_then(|u| u.output_tokens)
                .map_or("?".to_owned(), |n| n.to_string())
        ),
        StreamEvent::MessageStop(_) => "message_stop".to_owned(),
        StreamEvent::Ping(_) => "ping".to_owned(),
        StreamEvent::Error(err) => format!("error {}", err.error),
        StreamEvent::Unknown(u) => unknown(u),
        other => format!("new variant {:?}", other.tag()),
    }
}

/// One content block, bracketed.
fn block(b: &ContentBlock) -> String {
    let inner = match b {
        ContentBlock::Text(t) => format!("text {}", text(&t.text)),
        ContentBlock::Thinking(t) => format!("thinking {}", text(&t.thinking)),
        ContentBlock::RedactedThinking(_) => "redacted_thinking".to_owned(),
        ContentBlock::ToolUse(t) => format!("tool_use {} {} {}", t.name, t.id, keys(&t.input)),
        ContentBlock::ToolResult(t) => {
            let mut s = format!("tool_result {}", t.tool_use_id);
            if t.is_error == Some(true) {
                s.push_str(" error");
            }
            if let Some(c) = &t.content {
                write!(s, " {}", content(c)).expect("writing to a String");
            }
            s
        }
        ContentBlock::Image(i) => match &i.source {
            MediaSource::Base64(b) => format!("image base64 {} {}B", b.media_type, b.data.len()),
            other => format!("image {}", other.tag().unwrap_or("?")),
        },
        ContentBlock::Unknown(u) => unknown(u),
        other => other.tag().unwrap_or("?").to_owned(),
    };
    format!("[{inner}]")
}

fn content(c: &MessageContent) -> String {
    match c {
        MessageContent::Text(t) => text(t),
        MessageContent::Blocks(blocks) => {
            let blocks: Vec<String> = blocks.iter().map(block).collect();
            if blocks.is_empty() {
                "[]".to_owned()
            } else {
                blocks.join(" ")
            }
        }
    }
}

fn unknown(u: &Unknown) -> String {
    unknown_tagged(u, "type")
}

fn unknown_tagged(u: &Unknown, tag: &str) -> String {
    match u.get(tag) {
        Some(Value::String(t)) => format!("UNKNOWN ({tag} {t:?})"),
        Some(other) => format!("UNKNOWN ({tag} {other})"),
        None => format!("UNKNOWN (no {tag})"),
    }
}

fn error(e: &DecodeError) -> String {
    let kind = match &e.kind {
        DecodeErrorKind::NotJson(why) => format!("NotJson({why})"),
        DecodeErrorKind::NotObject => "NotObject".to_owned(),
        DecodeErrorKind::NoType => "NoType".to_owned(),
        other => format!("{other:?}"),
    };
    format!("error: {kind} len={} head={}", e.len, text(&e.head))
}

/// The keys of an object, or the kind of any other value.
fn keys(v: &Value) -> String {
    match v {
        Value::Object(map) if map.is_empty() => "{}".to_owned(),
        Value::Object(map) => {
            let keys: Vec<&str> = map.keys().map(String::as_str).collect();
            format!("{{{}}}", keys.join(","))
        }
        other => text(&other.to_string()),
    }
}

/// A string, cut to [`TEXT_LEN`] characters and quoted with escapes (newlines stay on the line).
fn text(s: &str) -> String {
    text_cut(s, TEXT_LEN)
}

/// A string cut to `n` characters, quoted with escapes.
fn text_cut(s: &str, n: usize) -> String {
    let mut cut: String = s.chars().take(n).collect();
    let long = cut.len() < s.len();
    cut = format!("{cut:?}");
    if long {
        write!(cut, "..({} chars)", s.chars().count()).expect("writing to a String");
    }
    cut
}

/// An id cut to `n` characters.
fn id(s: Option<&str>, n: usize) -> String {
    match s {
        None => "-".to_owned(),
        Some("") => "\"\"".to_owned(),
        Some(s) if s.chars().count() <= n + 2 => s.to_owned(),
        Some(s) => format!("{}..", s.chars().take(n).collect::<String>()),
    }
}

fn push_opt(s: &mut String, name: &str, value: Option<&str>) {
    if let Some(v) = value {
        write!(s, " {name}={v}").expect("writing to a String");
    }
}

#[test]
fn renderer_cuts_and_escapes_text() {
    assert_eq!(text("a\nb"), r#""a\nb""#);
    let long = "x".repeat(50);
    assert_eq!(text(&long), format!("\"{}\"..(50 chars)", "x".repeat(40)));
    assert_eq!(id(Some("5162fdbd-5b49-4d6f"), 8), "5162fdbd..");
    assert_eq!(id(Some("req_1"), 8), "req_1");
}
