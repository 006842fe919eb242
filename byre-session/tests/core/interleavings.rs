//! Property tests of the session core over arbitrary interleavings: host requests answered out
//! of order, late, twice or never (timeouts); CLI requests arriving mid-turn, withdrawn before
//! or after the host answers, reusing ids; the CLI exiting at any point. A model of what must
//! happen is checked after every step, and the totals at the end: every host request gets
//! exactly one outcome, every CLI request at most one answer (exactly one unless withdrawn),
//! and every message read is passed on.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use byre_proto::{
    CliMessage, HookEvent, HookMatcher, HostMessage, HostRequest, InitializeRequest, UserMessage,
};
use byre_session::{
    CallError, Event, ProtocolViolation, RequestFailure, RequestId, Session, SessionConfig,
};
use proptest::prelude::*;
use serde_json::{json, Value};

/// What the CLI asks.
#[derive(Debug, Clone, Copy)]
enum Ask {
    /// `can_use_tool`: the host answers it.
    Permission,
    /// A registered hook callback: the host answers it.
    Hook,
    /// A hook callback nobody registered: answered with an error at once.
    UnknownHook,
    /// A subtype byre does not know: answered with an error at once.
    UnknownSubtype,
    /// `mcp_message` for a server the host does not serve: answered with -32601 at once.
    UnknownServer,
    /// A request whose body does not decode: answered with an error at once.
    Undecodable,
}

#[derive(Debug, Clone)]
enum Op {
    /// The host sends a request with this timeout in milliseconds.
    HostRequest(u16),
    /// The CLI answers the host request with this index (maybe answered already).
    CliAnswers { pick: usize, ok: bool },
    /// The CLI sends a request.
    CliAsks(Ask),
    /// The CLI sends a request reusing the id of an earlier one.
    CliAsksAgain(usize),
    /// The CLI withdraws one of its requests.
    CliCancels(usize),
    /// The host answers one of the CLI's requests.
    HostAnswers { pick: usize, ok: bool },
    /// The host withdraws one of its requests.
    HostCancels(usize),
    /// A user message.
    User,
    /// A line of the turn (system/init, assistant, result).
    TurnLine(u8),
    /// Time passes (milliseconds); due timeouts fire.
    Wait(u16),
}

fn op() -> impl Strategy<Value = Op> {
    let ask = prop_oneof![
        3 => Just(Ask::Permission),
        3 => Just(Ask::Hook),
        1 => Just(Ask::UnknownHook),
        1 => Just(Ask::UnknownSubtype),
        1 => Just(Ask::UnknownServer),
        1 => Just(Ask::Undecodable),
    ];
    prop_oneof![
        3 => (1u16..3000).prop_map(Op::HostRequest),
        4 => (0usize..64, any::<bool>()).prop_map(|(pick, ok)| Op::CliAnswers { pick, ok }),
        3 => ask.prop_map(Op::CliAsks),
        1 => (0usize..64).prop_map(Op::CliAsksAgain),
        2 => (0usize..64).prop_map(Op::CliCancels),
        4 => (0usize..64, any::<bool>()).prop_map(|(pick, ok)| Op::HostAnswers { pick, ok }),
        1 => (0usize..64).prop_map(Op::HostCancels),
        1 => Just(Op::User),
        2 => (0u8..3).prop_map(Op::TurnLine),
        2 => (0u16..2500).prop_map(Op::Wait),
    ]
}

/// The state of one host request in the model.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Out {
    Pending { deadline: Instant },
    Done,
}

/// The state of one CLI request in the model.
#[derive(Debug, Clone, Copy, PartialEq)]
enum In {
    /// The host must answer it.
    Waiting,
    /// Answered (by the host or at once by the core).
    Answered,
    /// Withdrawn by the CLI before any answer.
    Withdrawn,
}

struct Harness {
    session: Session,
    now: Instant,
    out: Vec<(RequestId, Out)>,
    incoming: Vec<(String, In)>,
    /// Outcomes seen per host request id.
    outcomes: BTreeMap<String, usize>,
    /// Answers transmitted per CLI request id.
    answers: BTreeMap<String, usize>,
    /// Host requests transmitted, by id.
    sent_requests: BTreeSet<String>,
    /// Times each CLI request id was used by a request the core took.
    uses: BTreeMap<String, usize>,
    messages_in: usize,
    messages_out: usize,
    next_cli_id: usize,
}

impl Harness {
    fn new() -> Self {
        let now = Instant::now();
        let init = InitializeRequest {
            hooks: Some(BTreeMap::from([(
                HookEvent::PRE_TOOL_USE,
                vec![HookMatcher::new(None, vec!["hook_0".into()])],
            )])),
            ..InitializeRequest::default()
        };
        let mut config = SessionConfig::new(init);
        config.answers.insert("can_use_tool".into());
        let mut h = Harness {
            session: Session::new(config, now),
            now,
            out: Vec::new(),
            incoming: Vec::new(),
            outcomes: BTreeMap::new(),
            answers: BTreeMap::new(),
            sent_requests: BTreeSet::new(),
            uses: BTreeMap::new(),
            messages_in: 0,
            messages_out: 0,
            next_cli_id: 0,
        };
        h.drain();
        h.feed(json!({"type":"control_response","response":{"subtype":"success","request_id":"req_1","response":{}}}));
        let events = h.drain();
        assert!(events.iter().any(|e| matches!(e, Event::Initialized(_))));
        h
    }

    fn feed(&mut self, line: Value) {
        self.messages_in += 1;
        let message = CliMessage::from_value(&line).expect("a valid line");
        self.session.handle_message(self.now, message);
    }

    /// Drains every output, counting answers and outcomes, and returns the events.
    fn drain(&mut self) -> Vec<Event> {
        while let Some(line) = self.session.poll_transmit() {
            match &line {
                HostMessage::ControlResponse(r) => {
                    let id = r.request_id().expect("an answer has an id").to_owned();
                    *self.answers.entry(id).or_default() += 1;
                }
                HostMessage::ControlRequest(r) => {
                    assert!(
                        self.sent_requests.insert(r.request_id.clone()),
                        "request id {} sent twice",
                        r.request_id
                    );
                }
                _ => {}
            }
        }
        let mut events = Vec::new();
        while let Some(event) = self.session.poll_event() {
            match &event {
                Event::Response { id, .. } => {
                    *self.outcomes.entry(id.to_string()).or_default() += 1;
                }
                Event::Message(_) => self.messages_out += 1,
                _ => {}
            }
            events.push(event);
        }
        events
    }

    fn fire_timeouts(&mut self) -> Vec<Event> {
        let mut events = Vec::new();
        while let Some(at) = self.session.poll_timeout() {
            if at > self.now {
                break;
            }
            self.session.handle_timeout(self.now);
            events.extend(self.drain());
        }
        events
    }

    fn expire_model(&mut self) -> BTreeSet<String> {
        let mut expired = BTreeSet::new();
        for (id, state) in &mut self.out {
            if let Out::Pending { deadline } = *state {
                if deadline <= self.now {
                    *state = Out::Done;
                    expired.insert(id.to_string());
                }
            }
        }
        expired
    }

    fn step(&mut self, op: &Op) {
        match op {
            Op::HostRequest(ms) => {
                let timeout = Duration::from_millis(u64::from(*ms));
                let id = self
                    .session
                    .request(
                        self.now,
                        HostRequest::McpStatus(Default::default()),
                        Some(timeout),
                    )
                    .expect("an open session takes requests");
                let events = self.drain();
                assert!(events.is_empty(), "{events:?}");
                assert!(self.sent_requests.contains(id.as_str()));
                self.out.push((
                    id,
                    Out::Pending {
                        deadline: self.now + timeout,
                    },
                ));
            }
            Op::CliAnswers { pick, ok } => {
                let Some((id, state)) = pick_from(&self.out, *pick) else {
                    return;
                };
                let body = if *ok {
                    json!({"subtype":"success","request_id":id.as_str(),"response":{"mcpServers":[]}})
                } else {
                    json!({"subtype":"error","request_id":id.as_str(),"error":"no","error_code":"internal"})
                };
                self.feed(json!({"type":"control_response","response":body}));
                let events = self.drain();
                match state {
                    Out::Pending { .. } => {
                        let outcome = events.iter().find_map(|e| match e {
                            Event::Response { id: got, result, .. } if got == &id => Some(result),
                            _ => None,
                        });
                        match outcome {
                            Some(Ok(_)) => assert!(*ok),
                            Some(Err(RequestFailure::Refused { message, .. })) => {
                                assert!(!*ok);
                                assert_eq!(message, "no");
                            }
                            other => panic!("{id}: expected its answer, got {other:?}"),
                        }
                        self.set_out(&id, Out::Done);
                    }
                    Out::Done => assert!(
                        events.iter().any(|e| matches!(e,
                            Event::Protocol(ProtocolViolation::UnknownResponse(got)) if got == id.as_str())),
                        "a late answer to {id} is reported: {events:?}"
                    ),
                }
            }
            Op::CliAsks(ask) => {
                let id = format!("cli_{}", self.next_cli_id);
                self.next_cli_id += 1;
                self.ask(id, *ask);
            }
            Op::CliAsksAgain(pick) => {
                let Some((id, state)) = pick_from(&self.incoming, *pick) else {
                    return;
                };
                if state == In::Waiting {
                    self.feed(request_line(&id, Ask::Permission));
                    let events = self.drain();
                    assert!(
                        events.iter().any(|e| matches!(e,
                            Event::Protocol(ProtocolViolation::DuplicateRequestId(got)) if got == &id)),
                        "{events:?}"
                    );
                    assert!(!events.iter().any(|e| matches!(e, Event::Request { .. })));
                } else {
                    // A finished id may be used again: it is a new request.
                    self.ask(id, Ask::Permission);
                }
            }
            Op::CliCancels(pick) => {
                let Some((id, state)) = pick_from(&self.incoming, *pick) else {
                    return;
                };
                self.feed(json!({"type":"control_cancel_request","request_id":id}));
                let events = self.drain();
                let cancelled = events.iter().any(
                    |e| matches!(e, Event::RequestCancelled { id: got } if got.as_str() == id),
                );
                assert_eq!(
                    cancelled,
                    state == In::Waiting,
                    "{id} {state:?}: {events:?}"
                );
                if state == In::Waiting {
                    self.set_in(&id, In::Withdrawn);
                }
            }
            Op::HostAnswers { pick, ok } => {
                let Some((id, state)) = pick_from(&self.incoming, *pick) else {
                    return;
                };
                let answer = if *ok {
                    Ok(json!({"behavior":"allow","updatedInput":{}}))
                } else {
                    Err("refused by the host".to_owned())
                };
                let before = self.answers.get(&id).copied().unwrap_or(0);
                let result = self.session.answer(
                    std::time::Instant::now(),
                    &RequestId::new(id.clone()),
                    answer,
                );
                self.drain();
                let after = self.answers.get(&id).copied().unwrap_or(0);
                if state == In::Waiting {
                    assert_eq!(result, Ok(()));
                    assert_eq!(after, before + 1);
                    self.set_in(&id, In::Answered);
                } else {
                    assert_eq!(result, Err(CallError::NotWaiting(id.clone())));
                    assert_eq!(after, before);
                }
            }
            Op::HostCancels(pick) => {
                let Some((id, state)) = pick_from(&self.out, *pick) else {
                    return;
                };
                let was = self.session.cancel(&id);
                let events = self.drain();
                assert_eq!(was, matches!(state, Out::Pending { .. }));
                if was {
                    assert!(events.iter().any(|e| matches!(e,
                        Event::Response { id: got, result: Err(RequestFailure::Cancelled), .. } if got == &id)));
                    self.set_out(&id, Out::Done);
                }
            }
            Op::User => {
                self.session
                    .send_user(std::time::Instant::now(), UserMessage::prompt("more"))
                    .expect("an open session takes messages");
                self.drain();
            }
            Op::TurnLine(kind) => {
                let line = match kind {
                    0 => json!({"type":"system","subtype":"init","session_id":"s1","tools":[]}),
                    1 => {
                        json!({"type":"assistant","session_id":"s1","message":{"role":"assistant","content":[{"type":"text","text":"hi"}]}})
                    }
                    _ => {
                        json!({"type":"result","subtype":"success","is_error":false,"session_id":"s1","result":"ok"})
                    }
                };
                self.feed(line);
                let events = self.drain();
                assert!(!events.iter().any(|e| matches!(e, Event::Protocol(_))));
            }
            Op::Wait(ms) => {
                self.now += Duration::from_millis(u64::from(*ms));
                let expired = self.expire_model();
                let events = self.fire_timeouts();
                let timed_out: BTreeSet<String> = events
                    .iter()
                    .filter_map(|e| match e {
                        Event::Response {
                            id,
                            result: Err(RequestFailure::TimedOut(_)),
                            ..
                        } => Some(id.to_string()),
                        _ => None,
                    })
                    .collect();
                assert_eq!(timed_out, expired);
            }
        }
    }

    fn ask(&mut self, id: String, ask: Ask) {
        self.feed(request_line(&id, ask));
        let events = self.drain();
        let asked = events
            .iter()
            .any(|e| matches!(e, Event::Request { id: got, .. } if got.as_str() == id));
        let at_once = matches!(
            ask,
            Ask::UnknownHook | Ask::UnknownSubtype | Ask::UnknownServer | Ask::Undecodable
        );
        assert_eq!(asked, !at_once, "{ask:?}: {events:?}");
        *self.uses.entry(id.clone()).or_default() += 1;
        let state = if at_once { In::Answered } else { In::Waiting };
        match self.incoming.iter_mut().find(|(known, _)| known == &id) {
            Some((_, s)) => *s = state,
            None => self.incoming.push((id, state)),
        }
    }

    fn set_out(&mut self, id: &RequestId, state: Out) {
        if let Some((_, s)) = self.out.iter_mut().find(|(known, _)| known == id) {
            *s = state;
        }
    }

    fn set_in(&mut self, id: &str, state: In) {
        if let Some((_, s)) = self.incoming.iter_mut().find(|(known, _)| known == id) {
            *s = state;
        }
    }

    /// The CLI exits: whatever is pending fails or is withdrawn, then the totals are checked.
    fn finish(mut self, exit: bool) {
        if exit {
            self.session.handle_exit("exit status 1");
            let events = self.drain();
            for (id, state) in &self.out {
                if let Out::Pending { .. } = state {
                    assert!(events.iter().any(|e| matches!(e,
                        Event::Response { id: got, result: Err(RequestFailure::Exited(_)), .. } if got == id)));
                }
            }
            for (id, state) in &self.incoming {
                if *state == In::Waiting {
                    assert!(events.iter().any(
                        |e| matches!(e, Event::RequestCancelled { id: got } if got.as_str() == id)
                    ));
                }
            }
            assert_eq!(
                self.session
                    .send_user(std::time::Instant::now(), UserMessage::prompt("late")),
                Err(CallError::Closed)
            );
            for (id, _) in &self.out {
                let n = self.outcomes.get(id.as_str()).copied().unwrap_or(0);
                assert_eq!(n, 1, "host request {id} had {n} outcomes");
            }
        } else {
            for (id, state) in &self.out {
                let n = self.outcomes.get(id.as_str()).copied().unwrap_or(0);
                let expected = usize::from(*state == Out::Done);
                assert_eq!(n, expected, "host request {id}: {n} outcomes, {state:?}");
            }
        }
        for (id, n) in &self.answers {
            // An id used again after its request finished is answered once per use.
            let uses = self.uses.get(id).copied().unwrap_or(0);
            assert!(*n <= uses, "{id}: {n} answers for {uses} requests");
        }
        for (id, state) in &self.incoming {
            let n = self.answers.get(id).copied().unwrap_or(0);
            if *state == In::Answered {
                assert!(n >= 1, "{id} answered but nothing was sent");
            }
        }
        assert_eq!(
            self.messages_in, self.messages_out,
            "every message is passed on"
        );
    }
}

fn pick_from<K: Clone, S: Copy>(list: &[(K, S)], pick: usize) -> Option<(K, S)> {
    if list.is_empty() {
        return None;
    }
    let (k, s) = &list[pick % list.len()];
    Some((k.clone(), *s))
}

fn request_line(id: &str, ask: Ask) -> Value {
    let request = match ask {
        Ask::Permission => {
            json!({"subtype":"can_use_tool","tool_name":"Bash","input":{"command":"ls"}})
        }
        Ask::Hook => {
            json!({"subtype":"hook_callback","callback_id":"hook_0","input":{"hook_event_name":"Stop"}})
        }
        Ask::UnknownHook => {
            json!({"subtype":"hook_callback","callback_id":"hook_7","input":{"hook_event_name":"Stop"}})
        }
        // `tool_name` must be a string.
        Ask::Undecodable => json!({"subtype":"can_use_tool","tool_name":7,"input":{}}),
        Ask::UnknownSubtype => json!({"subtype":"from_a_newer_cli","x":1}),
        Ask::UnknownServer => {
            json!({"subtype":"mcp_message","server_name":"elsewhere","message":{"jsonrpc":"2.0","id":3,"method":"tools/list"}})
        }
    };
    json!({"type":"control_request","request_id":id,"request":request})
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn any_interleaving_keeps_one_outcome_per_request(
        ops in prop::collection::vec(op(), 1..80),
        exit in any::<bool>(),
    ) {
        let mut h = Harness::new();
        for op in &ops {
            h.step(op);
        }
        h.finish(exit);
    }
}
