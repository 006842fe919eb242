//! The session core replayed against recorded transcripts: the recorded `recv` lines go in,
//! the host's recorded inputs are given as commands, and every line the core transmits must
//! equal the recorded `send` line.

use std::collections::BTreeSet;
use std::path::Path;
use std::time::{Duration, Instant};

use byre_proto::{CliMessage, CliRequest, HostMessage, HostRequest, InitializeRequest};
use byre_session::{
    CallError, Event, ProtocolViolation, RequestFailure, RequestId, Session, SessionConfig,
};
use byre_testkit::{read_transcript, TranscriptLine};
use serde_json::Value;

use crate::support::transcripts;

/// One recorded CLI process: its transcript lines, each with its file line as a value (its
/// `msg` parsed once).
fn processes(path: &Path) -> Vec<Vec<(TranscriptLine, Value)>> {
    let mut out: Vec<Vec<(TranscriptLine, Value)>> = Vec::new();
    for line in read_transcript(path).unwrap() {
        let is_argv = line.note().is_some_and(|n| n.starts_with("argv"));
        if is_argv || out.is_empty() {
            out.push(Vec::new());
        }
        let value = line.to_value();
        out.last_mut().unwrap().push((line, value));
    }
    out
}

/// Builds the configuration the recording host had: its initialize request, the MCP servers
/// and permission prompts it answered.
fn config_of(entries: &[(TranscriptLine, Value)]) -> Option<SessionConfig> {
    let entries = entries.iter().map(|(_, e)| e);
    let init = entries.clone().find(|e| {
        e["dir"] == "send"
            && e["msg"]["type"] == "control_request"
            && e["msg"]["request"]["subtype"] == "initialize"
    })?;
    let request: InitializeRequest =
        serde_json::from_value(init["msg"]["request"].clone()).expect("a typed initialize");
    let mut config = SessionConfig::new(request);
    let mut servers = BTreeSet::new();
    for e in entries {
        let r = &e["msg"]["request"];
        if e["dir"] == "recv" && r["subtype"] == "mcp_message" {
            servers.insert(r["server_name"].as_str().unwrap().to_owned());
        }
        if e["dir"] == "recv" && r["subtype"] == "can_use_tool" {
            config.answers.insert("can_use_tool".into());
        }
    }
    config.mcp_servers = servers;
    Some(config)
}

struct Replay {
    session: Session,
    now: Instant,
    requests_seen: Vec<(RequestId, CliRequest)>,
    events: Vec<Event>,
    /// Ids of requests the recorder wrote as raw bytes, behind the core's back: their answers
    /// are unknown to the core.
    raw_ids: Vec<String>,
}

impl Replay {
    fn drain(&mut self) -> Vec<HostMessage> {
        let mut sent = Vec::new();
        while let Some(line) = self.session.poll_transmit() {
            sent.push(line);
        }
        while let Some(event) = self.session.poll_event() {
            if let Event::Request { id, request } = &event {
                self.requests_seen.push((id.clone(), (**request).clone()));
            }
            if let Event::Protocol(ProtocolViolation::UnknownResponse(id)) = &event {
                assert!(self.raw_ids.contains(id), "{event:?}");
            } else {
                assert!(!matches!(event, Event::Protocol(_)), "{event:?}");
            }
            self.events.push(event);
        }
        sent
    }
}

fn check(expected: &Value, sent: &[HostMessage], what: &str) {
    assert_eq!(
        sent.len(),
        1,
        "{what}: expected one line, the core wrote {sent:?}"
    );
    assert_eq!(&sent[0].to_value().expect("a value"), expected, "{what}");
}

#[test]
fn every_transcript_replays_through_the_core_with_identical_sends() {
    let mut replayed = 0;
    for path in transcripts() {
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        // Snapshots of the first corpus (2.1.328) keep their names; the others are prefixed
        // with their folder.
        let folder = path
            .parent()
            .unwrap()
            .file_name()
            .unwrap()
            .to_string_lossy();
        let name = match folder.as_ref() {
            "cli-2.1.328" => file,
            other => format!("{other}__{file}"),
        };
        for (n, entries) in processes(&path).into_iter().enumerate() {
            let Some(config) = config_of(&entries) else {
                continue;
            };
            let what = format!("{name} process {n}");
            let start = Instant::now();
            let mut r = Replay {
                session: Session::new(config, start),
                now: start,
                requests_seen: Vec::new(),
                events: Vec::new(),
                raw_ids: Vec::new(),
            };
            let mut initialize_checked = false;
            let mut ids: std::collections::HashMap<String, String> = Default::default();
            for (line, entry) in &entries {
                let t = line.t;
                r.now = start + Duration::from_secs_f64(t.max(0.0));
                let msg = &entry["msg"];
                if let Some(raw) = entry["raw"].as_str() {
                    if let Ok(v) = serde_json::from_str::<Value>(raw) {
                        if let Some(id) = v["request_id"].as_str() {
                            r.raw_ids.push(id.to_owned());
                        }
                    }
                }
                match (entry["dir"].as_str(), msg["type"].as_str()) {
                    (Some("send"), Some("control_request")) => {
                        if msg["request"]["subtype"] == "initialize" && !initialize_checked {
                            initialize_checked = true;
                            let sent = r.drain();
                            check(msg, &sent, &format!("{what}: initialize"));
                            continue;
                        }
                        let request: HostRequest =
                            serde_json::from_value(msg["request"].clone()).unwrap();
                        let id = r.session.request(r.now, request, None).unwrap();
                        // Some recorders numbered their requests differently: map the ids.
                        let recorded = msg["request_id"].as_str().unwrap().to_owned();
                        let mut expected = msg.clone();
                        expected["request_id"] = Value::String(id.to_string());
                        ids.insert(recorded, id.to_string());
                        let sent = r.drain();
                        check(&expected, &sent, &format!("{what}: request {id}"));
                    }
                    (Some("send"), Some("user")) => {
                        let HostMessage::User(user) = HostMessage::from_value(msg).unwrap() else {
                            panic!("{what}: not a user line")
                        };
                        r.session
                            .send_user(std::time::Instant::now(), *user)
                            .unwrap();
                        let sent = r.drain();
                        check(msg, &sent, &format!("{what}: user"));
                    }
                    (Some("send"), Some("control_response")) => {
                        let id = RequestId::new(msg["response"]["request_id"].as_str().unwrap());
                        assert!(
                            r.requests_seen.iter().any(|(seen, _)| seen == &id),
                            "{what}: the host answered {id}, which the core never asked it"
                        );
                        let answer = match msg["response"]["subtype"].as_str() {
                            Some("success") => Ok(msg["response"]["response"].clone()),
                            _ => Err(msg["response"]["error"].as_str().unwrap_or("").to_owned()),
                        };
                        r.session
                            .answer(std::time::Instant::now(), &id, answer)
                            .unwrap();
                        let sent = r.drain();
                        check(msg, &sent, &format!("{what}: answer {id}"));
                    }
                    (Some("recv"), Some(_)) => {
                        let recorded = msg["response"]["request_id"].as_str().unwrap_or("");
                        let message = match ids.get(recorded) {
                            // An answer to a request the core numbered differently.
                            Some(id) if msg["type"] == "control_response" => {
                                let mut msg = msg.clone();
                                msg["response"]["request_id"] = Value::String(id.clone());
                                CliMessage::from_value(&msg).unwrap()
                            }
                            // Decoded from the recorded bytes.
                            _ => line.decode_recv().unwrap().unwrap(),
                        };
                        r.session.handle_message(r.now, message);
                        let sent = r.drain();
                        assert!(
                            sent.is_empty(),
                            "{what}: the core answered by itself: {sent:?}"
                        );
                    }
                    _ => {}
                }
            }
            insta::assert_snapshot!(
                format!("trace@{}-{n}", name.trim_end_matches(".jsonl")),
                trace(&r.events)
            );
            let messages = r
                .events
                .iter()
                .filter(|e| matches!(e, Event::Message(_)))
                .count();
            let recv = entries.iter().filter(|(line, _)| line.is_recv()).count();
            assert_eq!(messages, recv, "{what}: every message is passed on");
            replayed += 1;
        }
    }
    assert!(replayed >= 30, "only {replayed} processes replayed");
}

/// The event trace of a replay, one line per event (runs of deltas of one block on one line),
/// for snapshots: the order of messages, requests, answers, turns, tasks and blocks
/// (`stream_event` lines appear as the stream lines they give).
fn trace(events: &[Event]) -> String {
    use byre_session::AssemblyEvent;
    let mut out: Vec<String> = Vec::new();
    let mut deltas: Option<(String, u64, usize)> = None;
    for event in events {
        if let Event::Assembly(AssemblyEvent::Delta {
            message_id, index, ..
        }) = event
        {
            match &mut deltas {
                Some((m, i, count)) if m == message_id && i == index => *count += 1,
                _ => {
                    flush_deltas(&mut out, deltas.take());
                    deltas = Some((message_id.clone(), *index, 1));
                }
            }
            continue;
        }
        if matches!(
            event,
            Event::Message(byre_proto::CliMessage::StreamEvent(_))
        ) {
            // Each one is shown by the stream lines it gives.
            continue;
        }
        flush_deltas(&mut out, deltas.take());
        out.push(match event {
            Event::Message(m) => {
                let v = m.to_value().expect("a value");
                match v["subtype"].as_str() {
                    Some(sub) => format!("message {}/{sub}", v["type"].as_str().unwrap_or("?")),
                    None => format!("message {}", v["type"].as_str().unwrap_or("?")),
                }
            }
            Event::Initialized(_) => "initialized".to_owned(),
            Event::Response {
                id,
                subtype,
                result,
            } => match result {
                Ok(_) => format!("response {id} {subtype}: ok"),
                Err(RequestFailure::TimedOut(_)) => format!("response {id} {subtype}: timed out"),
                Err(e) => format!("response {id} {subtype}: {e}"),
            },
            Event::Request { id, request } => {
                format!("request {id} {}", request.tag().unwrap_or("?"))
            }
            Event::RequestCancelled { id } => format!("cancelled {id}"),
            Event::Turn(t) => format!("turn {t:?}"),
            Event::Task(t) => {
                let text = format!("{t:?}");
                let kind = text.split([' ', '(', '{']).next().unwrap_or("?").to_owned();
                let task = match t {
                    byre_session::TaskEvent::Started { task_id, .. }
                    | byre_session::TaskEvent::Progress { task_id, .. }
                    | byre_session::TaskEvent::Updated { task_id, .. }
                    | byre_session::TaskEvent::Finished { task_id, .. } => task_id.clone(),
                    _ => String::new(),
                };
                format!("task {kind} {task}").trim_end().to_owned()
            }
            Event::Assembly(a) => match a {
                AssemblyEvent::MessageStarted { id, .. } => format!("stream message {id}"),
                AssemblyEvent::BlockStarted {
                    message_id,
                    index,
                    kind,
                } => format!("stream block {message_id}#{index} {kind:?}"),
                AssemblyEvent::BlockFinished {
                    message_id, index, ..
                } => format!("stream block {message_id}#{index} finished"),
                other => {
                    let text = format!("{other:?}");
                    format!(
                        "stream {}",
                        text.split([' ', '(', '{']).next().unwrap_or("?")
                    )
                }
            },
            Event::Protocol(p) => format!("protocol violation: {p}"),
            other => format!("{other:?}"),
        });
    }
    flush_deltas(&mut out, deltas);
    out.join("\n")
}

fn flush_deltas(out: &mut Vec<String>, deltas: Option<(String, u64, usize)>) {
    if let Some((message_id, index, count)) = deltas {
        out.push(format!("stream deltas {message_id}#{index} x{count}"));
    }
}

pub(crate) fn ready_session(config: SessionConfig, now: Instant) -> Session {
    let mut session = Session::new(config, now);
    let _ = session.poll_transmit();
    let answer = r#"{"type":"control_response","response":{"subtype":"success","request_id":"req_1","response":{}}}"#;
    session.handle_message(now, answer.parse().unwrap());
    while session.poll_event().is_some() {}
    session
}

pub(crate) fn cli(line: &str) -> CliMessage {
    line.parse().unwrap()
}

#[test]
fn requests_time_out_and_fail_at_exit() {
    let now = Instant::now();
    let mut session = ready_session(SessionConfig::new(InitializeRequest::default()), now);
    let slow = session
        .request(
            now,
            HostRequest::Interrupt(Default::default()),
            Some(Duration::from_secs(5)),
        )
        .unwrap();
    let other = session
        .request(now, HostRequest::McpStatus(Default::default()), None)
        .unwrap();
    assert_eq!(session.poll_timeout(), Some(now + Duration::from_secs(5)));
    session.handle_timeout(now + Duration::from_secs(6));
    let events: Vec<_> = std::iter::from_fn(|| session.poll_event()).collect();
    assert!(matches!(
        &events[..],
        [Event::Response { id, result: Err(RequestFailure::TimedOut(_)), .. }] if id == &slow
    ));
    session.handle_exit("exit status 1; stderr: boom");
    let events: Vec<_> = std::iter::from_fn(|| session.poll_event()).collect();
    assert!(matches!(
        &events[..],
        [Event::Response { id, result: Err(RequestFailure::Exited(why)), .. }] if id == &other && why.contains("boom")
    ));
    assert_eq!(
        session.send_user(
            std::time::Instant::now(),
            byre_proto::UserMessage::prompt("x")
        ),
        Err(CallError::Closed)
    );
}

#[test]
fn unknown_requests_are_answered_once_without_the_host() {
    let now = Instant::now();
    let mut session = ready_session(SessionConfig::new(InitializeRequest::default()), now);
    session.handle_message(now, cli(r#"{"type":"control_request","request_id":"a","request":{"subtype":"from_the_future"}}"#));
    session.handle_message(now, cli(r#"{"type":"control_request","request_id":"b","request":{"subtype":"hook_callback","callback_id":"hook_9","input":{"hook_event_name":"Stop"}}}"#));
    session.handle_message(now, cli(r#"{"type":"control_request","request_id":"c","request":{"subtype":"mcp_message","server_name":"nope","message":{"jsonrpc":"2.0","id":4,"method":"tools/list"}}}"#));
    session.handle_message(now, cli(r#"{"type":"control_request","request_id":"d","request":{"subtype":"can_use_tool","tool_name":"Bash","input":{}}}"#));
    let sent: Vec<Value> = std::iter::from_fn(|| session.poll_transmit())
        .map(|m| m.to_value().expect("a value"))
        .collect();
    assert_eq!(sent.len(), 4);
    assert_eq!(
        sent[0]["response"]["error"],
        "Unsupported control request subtype: from_the_future"
    );
    assert_eq!(sent[1]["response"]["subtype"], "error");
    assert_eq!(sent[2]["response"]["subtype"], "success");
    assert_eq!(
        sent[2]["response"]["response"]["mcp_response"]["error"]["code"],
        -32601
    );
    assert_eq!(sent[2]["response"]["response"]["mcp_response"]["id"], 4);
    assert_eq!(sent[3]["response"]["subtype"], "error");
    let asked = std::iter::from_fn(|| session.poll_event())
        .filter(|e| matches!(e, Event::Request { .. }))
        .count();
    assert_eq!(asked, 0);
}

#[test]
fn an_mcp_server_served_and_forgotten_on_a_live_session() {
    let now = Instant::now();
    let mut session = ready_session(SessionConfig::new(InitializeRequest::default()), now);
    let ask = |id: &str| {
        cli(&format!(
            r#"{{"type":"control_request","request_id":"{id}","request":{{"subtype":"mcp_message","server_name":"live","message":{{"jsonrpc":"2.0","id":1,"method":"tools/list"}}}}}}"#
        ))
    };
    let asked = |session: &mut Session| {
        std::iter::from_fn(|| session.poll_event())
            .filter(|e| matches!(e, Event::Request { .. }))
            .count()
    };
    // Served: the host is asked, nothing is answered for it.
    assert!(session.serve_mcp_server("live"));
    assert!(!session.serve_mcp_server("live"));
    session.handle_message(now, ask("a"));
    assert_eq!(asked(&mut session), 1);
    assert!(session.poll_transmit().is_none());
    // Forgotten: answered with -32601 without the host.
    assert!(session.forget_mcp_server("live"));
    assert!(!session.forget_mcp_server("live"));
    session.handle_message(now, ask("b"));
    assert_eq!(asked(&mut session), 0);
    let sent = session
        .poll_transmit()
        .expect("an answer")
        .to_value()
        .expect("a value");
    assert_eq!(sent["response"]["request_id"], "b");
    assert_eq!(
        sent["response"]["response"]["mcp_response"]["error"]["code"],
        -32601
    );
}

#[test]
fn a_cancelled_cli_request_gets_no_answer() {
    let now = Instant::now();
    let mut config = SessionConfig::new(InitializeRequest::default());
    config.answers.insert("can_use_tool".into());
    let mut session = ready_session(config, now);
    session.handle_message(now, cli(r#"{"type":"control_request","request_id":"p1","request":{"subtype":"can_use_tool","tool_name":"Bash","input":{}}}"#));
    session.handle_message(
        now,
        cli(r#"{"type":"control_cancel_request","request_id":"p1"}"#),
    );
    let events: Vec<_> = std::iter::from_fn(|| session.poll_event()).collect();
    assert!(events
        .iter()
        .any(|e| matches!(e, Event::Request { id, .. } if id.as_str() == "p1")));
    assert!(events
        .iter()
        .any(|e| matches!(e, Event::RequestCancelled { id } if id.as_str() == "p1")));
    let id = RequestId::new("p1");
    assert_eq!(
        session.answer(
            std::time::Instant::now(),
            &id,
            Ok(serde_json::json!({"behavior": "allow"}))
        ),
        Err(CallError::NotWaiting("p1".into()))
    );
    assert!(session.poll_transmit().is_none());
}

#[test]
fn cli_requests_before_the_initialize_answer_are_served() {
    let now = Instant::now();
    let mut config = SessionConfig::new(InitializeRequest::default());
    config.mcp_servers.insert("byre".into());
    let mut session = Session::new(config, now);
    let _ = session.poll_transmit();
    session.handle_message(now, cli(r#"{"type":"control_request","request_id":"m0","request":{"subtype":"mcp_message","server_name":"byre","message":{"jsonrpc":"2.0","id":0,"method":"initialize"}}}"#));
    assert!(!session.is_initialized());
    let request = std::iter::from_fn(|| session.poll_event()).find_map(|e| match e {
        Event::Request { id, .. } => Some(id),
        _ => None,
    });
    let id = request.expect("the MCP request reaches the host before initialize is answered");
    session
        .answer(
            std::time::Instant::now(),
            &id,
            Ok(serde_json::json!({"mcp_response": {"jsonrpc": "2.0", "id": 0, "result": {}}})),
        )
        .unwrap();
    assert!(matches!(
        session.poll_transmit(),
        Some(HostMessage::ControlResponse(_))
    ));
}

#[test]
fn a_stray_answer_is_a_protocol_violation_not_a_crash() {
    let now = Instant::now();
    let mut session = ready_session(SessionConfig::new(InitializeRequest::default()), now);
    session.handle_message(now, cli(r#"{"type":"control_response","response":{"subtype":"success","request_id":"req_99","response":{}}}"#));
    assert!(std::iter::from_fn(|| session.poll_event()).any(|e| matches!(e, Event::Protocol(_))));
}

#[test]
fn a_request_without_an_id_is_reported_not_dropped_silently() {
    let now = Instant::now();
    let mut session = ready_session(SessionConfig::new(InitializeRequest::default()), now);
    let line = r#"{"type":"control_request","request":{"subtype":"can_use_tool","tool_name":"Bash","input":{}}}"#;
    session.handle_message(now, cli(line));
    let events: Vec<_> = std::iter::from_fn(|| session.poll_event()).collect();
    assert!(events.iter().any(|e| matches!(e,
        Event::Protocol(ProtocolViolation::RequestWithoutId { subtype }) if subtype == "can_use_tool"
    )), "{events:?}");
    assert!(session.poll_transmit().is_none(), "nothing can be answered");
}

#[test]
fn a_bad_line_is_reported_and_the_session_goes_on() {
    let now = Instant::now();
    let mut session = ready_session(SessionConfig::new(InitializeRequest::default()), now);
    session.handle_bad_line(now, 70_000_000, "longer than the 67108864-byte limit");
    let events: Vec<_> = std::iter::from_fn(|| session.poll_event()).collect();
    assert!(matches!(
        &events[..],
        [Event::Protocol(ProtocolViolation::BadLine { len: 70_000_000, why })] if why.contains("limit")
    ));
    session.handle_message(
        now,
        cli(r#"{"type":"system","subtype":"status","status":null}"#),
    );
    assert!(matches!(session.poll_event(), Some(Event::Message(_))));
}

/// A `can_use_tool` envelope for `id`, as the CLI sends it and lists it when pending.
fn permission(id: &str) -> String {
    format!(
        r#"{{"type":"control_request","request_id":"{id}","request":{{"subtype":"can_use_tool","tool_name":"Bash","input":{{"command":"ls"}}}}}}"#
    )
}

#[test]
fn a_reinitialize_answer_redelivers_only_the_requests_not_in_flight_nor_answered() {
    let now = Instant::now();
    let mut config = SessionConfig::new(InitializeRequest::default());
    config.answers.insert("can_use_tool".into());
    config.answers.insert("request_user_dialog".into());
    let mut session = ready_session(config, now);
    // One prompt in flight, one answered (its answer may still be on its way).
    session.handle_message(now, cli(&permission("in-flight")));
    session.handle_message(now, cli(&permission("answered")));
    let answered = RequestId::new("answered");
    session
        .answer(
            std::time::Instant::now(),
            &answered,
            Ok(serde_json::json!({"behavior": "allow"})),
        )
        .unwrap();
    while session.poll_event().is_some() {}
    while session.poll_transmit().is_some() {}

    let id = session.reinitialize(now, None, ()).unwrap();
    let sent = session
        .poll_transmit()
        .expect("initialize again")
        .to_value()
        .expect("a value");
    assert_eq!(sent["request"]["subtype"], "initialize");
    assert_eq!(sent["request_id"], id.as_str());
    let answer = format!(
        r#"{{"type":"control_response","response":{{"subtype":"success","request_id":"{id}","response":{{}},"pending_permission_requests":[{},{},{}],"pending_user_dialog_requests":[{}],"pending_elicitation_requests":[{}]}}}}"#,
        permission("in-flight"),
        permission("answered"),
        permission("lost"),
        r#"{"type":"control_request","request_id":"dialog","request":{"subtype":"request_user_dialog","dialog_kind":"x","payload":{}}}"#,
        r#"{"type":"control_request","request_id":"bad","request":{"subtype":"elicitation","mcp_server_name":7}}"#,
    );
    session.handle_message(now, cli(&answer));
    let events: Vec<_> = std::iter::from_fn(|| session.poll_event()).collect();
    let asked: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            Event::Request { id, .. } => Some(id.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(asked, ["lost", "dialog"], "{events:#?}");
    assert!(events.iter().any(|e| matches!(
        e,
        Event::Protocol(ProtocolViolation::UndecodableRequest { id, .. }) if id == "bad"
    )));
    assert!(!events
        .iter()
        .any(|e| matches!(e, Event::Protocol(ProtocolViolation::DuplicateRequestId(_)))));
    // The undecodable one is answered with an error at once; the others wait for the host.
    let sent: Vec<Value> = std::iter::from_fn(|| session.poll_transmit())
        .map(|m| m.to_value().expect("a value"))
        .collect();
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(sent[0]["response"]["request_id"], "bad");
    assert_eq!(sent[0]["response"]["subtype"], "error");
    // A later answer to the redelivered one is taken once.
    let lost = RequestId::new("lost");
    session
        .answer(
            std::time::Instant::now(),
            &lost,
            Ok(serde_json::json!({"behavior": "allow"})),
        )
        .unwrap();
    assert!(session
        .answer(
            std::time::Instant::now(),
            &lost,
            Ok(serde_json::json!({"behavior": "allow"}))
        )
        .is_err());
}

#[test]
fn the_first_initialize_answer_delivers_the_requests_a_running_cli_waits_on() {
    // A spawner that re-attaches to a CLI started earlier gets its waiting prompts this way.
    let now = Instant::now();
    let mut config = SessionConfig::new(InitializeRequest::default());
    config.answers.insert("can_use_tool".into());
    let mut session = Session::new(config, now);
    let _ = session.poll_transmit();
    let answer = format!(
        r#"{{"type":"control_response","response":{{"subtype":"success","request_id":"req_1","response":{{}},"pending_permission_requests":[{}]}}}}"#,
        permission("waiting")
    );
    session.handle_message(now, cli(&answer));
    assert!(session.is_initialized());
    let events: Vec<_> = std::iter::from_fn(|| session.poll_event()).collect();
    let initialized = events
        .iter()
        .position(|e| matches!(e, Event::Initialized(_)))
        .expect("initialized");
    let asked = events
        .iter()
        .position(|e| matches!(e, Event::Request { id, .. } if id.as_str() == "waiting"))
        .expect("the waiting prompt is asked");
    assert!(initialized < asked);
}

#[test]
fn finished_tasks_of_earlier_turns_are_forgotten() {
    // 2,000 turns with a background task each (started and finished), and one task that runs
    // throughout: the tree holds the running task and the last turn's, not every task.
    let now = Instant::now();
    let mut session = ready_session(SessionConfig::new(InitializeRequest::default()), now);
    let started = |id: &str| {
        cli(&format!(
            r#"{{"type":"system","subtype":"task_started","task_id":"{id}","tool_use_id":"tu_{id}","description":"d","task_type":"local_bash","session_id":"s"}}"#
        ))
    };
    let finished = |id: &str| {
        cli(&format!(
            r#"{{"type":"system","subtype":"task_notification","task_id":"{id}","tool_use_id":"tu_{id}","status":"completed","output_file":"/dev/null","summary":"done","session_id":"s"}}"#
        ))
    };
    let result = r#"{"type":"result","subtype":"success","is_error":false,"num_turns":1,"result":"ok","session_id":"s"}"#;
    for turn in 0..2_000 {
        session
            .send_user(
                std::time::Instant::now(),
                byre_proto::UserMessage::prompt("go"),
            )
            .unwrap();
        while session.poll_transmit().is_some() {}
        if turn == 0 {
            session.handle_message(now, started("long"));
        }
        let id = format!("t{turn}");
        session.handle_message(now, started(&id));
        session.handle_message(now, finished(&id));
        session.handle_message(now, cli(result));
        while session.poll_event().is_some() {}
        assert!(
            session.tasks().get(&id).is_some(),
            "the last turn's task is kept: turn {turn}, {:?}",
            session
                .tasks()
                .tasks()
                .map(|t| t.task_id.clone())
                .collect::<Vec<_>>()
        );
    }
    assert!(
        session.tasks().len() <= 3,
        "{} tasks kept",
        session.tasks().len()
    );
    assert!(session.tasks().get("long").is_some_and(|t| t.is_running()));
}

#[test]
fn a_result_before_the_initialize_answer_is_reported_and_ends_no_turn() {
    let now = Instant::now();
    let mut session = Session::new(SessionConfig::new(InitializeRequest::default()), now);
    let _ = session.poll_transmit();
    let early = r#"{"type":"result","subtype":"success","is_error":false,"result":"early","session_id":"s"}"#;
    session.handle_message(now, cli(early));
    // Delivered as every line is, but to no turn.
    let events: Vec<_> = std::iter::from_fn(|| session.poll_event()).collect();
    assert!(
        matches!(&events[..], [Event::Message(CliMessage::Result(_))]),
        "{events:?}"
    );
    let answer = r#"{"type":"control_response","response":{"subtype":"success","request_id":"req_1","response":{}}}"#;
    session.handle_message(now, cli(answer));
    assert!(session.is_initialized());
    let events: Vec<_> = std::iter::from_fn(|| session.poll_event()).collect();
    assert!(
        matches!(&events[..], [
            Event::Protocol(ProtocolViolation::ResultBeforeInitialize(r)),
            Event::Initialized(_),
            ..
        ] if r.result.as_deref() == Some("early")),
        "{events:?}"
    );
    assert!(
        !events.iter().any(|e| matches!(e, Event::Turn(_))),
        "{events:?}"
    );
    session
        .send_user(
            std::time::Instant::now(),
            byre_proto::UserMessage::prompt("hi"),
        )
        .unwrap();
    let real = r#"{"type":"result","subtype":"success","is_error":false,"result":"real","session_id":"s"}"#;
    session.handle_message(now, cli(real));
    let events: Vec<_> = std::iter::from_fn(|| session.poll_event()).collect();
    let ended: Vec<_> = events
        .iter()
        .filter(|e| matches!(e, Event::Turn(byre_session::TurnEvent::TurnEnded { .. })))
        .collect();
    assert_eq!(ended.len(), 1, "{events:?}");
}

#[test]
fn an_early_result_is_still_the_reason_of_a_failed_start() {
    let now = Instant::now();
    let mut session = Session::new(SessionConfig::new(InitializeRequest::default()), now);
    let _ = session.poll_transmit();
    let early = r#"{"type":"result","subtype":"error_during_execution","is_error":true,"errors":["no auth"],"session_id":"s"}"#;
    session.handle_message(now, cli(early));
    session.handle_exit("exit status: 1");
    let ready = std::iter::from_fn(|| session.poll_action()).find_map(|a| match a {
        byre_session::Action::Ready(r) => Some(r),
        _ => None,
    });
    assert!(
        matches!(ready, Some(Err(byre_session::StartFailure::Exited { .. }))),
        "{ready:?}"
    );
}

#[test]
fn a_cli_request_with_a_misfit_is_answered_with_an_error_and_not_dispatched() {
    let now = Instant::now();
    let mut config = SessionConfig::new(InitializeRequest::default());
    config.answers.insert("can_use_tool".into());
    let mut session = ready_session(config, now);
    // The input nested past what a `Value` holds: the handler could not see it whole.
    let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
    let line = format!(
        r#"{{"type":"control_request","request_id":"deep","request":{{"subtype":"can_use_tool","tool_name":"Bash","input":{{"command":{deep}}}}}}}"#
    );
    let decoded = CliMessage::decode(line.as_bytes()).unwrap();
    assert_eq!(decoded.misfits.len(), 1, "{:?}", decoded.misfits);
    session.handle_decoded(now, decoded);
    let events: Vec<_> = std::iter::from_fn(|| session.poll_event()).collect();
    assert!(
        events.iter().any(|e| matches!(e,
            Event::Protocol(ProtocolViolation::Misfit { kind, .. }) if kind == "control_request")),
        "{events:?}"
    );
    assert!(
        events.iter().any(|e| matches!(e,
            Event::Protocol(ProtocolViolation::UndecodableRequest { id, .. }) if id == "deep")),
        "{events:?}"
    );
    assert!(
        !events.iter().any(|e| matches!(e, Event::Request { .. })),
        "{events:?}"
    );
    let sent = session
        .poll_transmit()
        .expect("an answer")
        .to_value()
        .unwrap();
    assert_eq!(sent["response"]["request_id"], "deep");
    assert_eq!(sent["response"]["subtype"], "error");
    // Also when the message comes without its list of misfits.
    let retyped = r#"{"type":"control_request","request_id":"retyped","request":{"subtype":"can_use_tool","tool_name":5,"input":{}}}"#;
    session.handle_message(now, cli(retyped));
    let sent = session
        .poll_transmit()
        .expect("an answer")
        .to_value()
        .unwrap();
    assert_eq!(sent["response"]["request_id"], "retyped");
    assert_eq!(sent["response"]["subtype"], "error");
}
