//! The stall watch: a turn silent past its limit is reported once and interrupted; the time
//! the CLI waits for the host is not silence, and its clock starts again at the answer.

use std::time::{Duration, Instant};

use byre_proto::{HostMessage, InitializeRequest, UserMessage};
use byre_session::{Event, SessionConfig, StallPolicy};

use crate::session::{cli, ready_session};

fn config() -> SessionConfig {
    let mut config = SessionConfig::new(InitializeRequest::default()).answer("can_use_tool");
    config.stall = Some(StallPolicy::new(Duration::from_secs(10)));
    config
}

fn stalls(session: &mut byre_session::Session) -> usize {
    std::iter::from_fn(|| session.poll_event())
        .filter(|e| matches!(e, Event::Stalled { .. }))
        .count()
}

#[test]
fn a_silent_turn_is_reported_once_and_interrupted() {
    let t0 = Instant::now();
    let mut session = ready_session(config(), t0);
    assert_eq!(session.poll_timeout(), None, "no turn, no watch");
    session.send_user(t0, UserMessage::prompt("go")).unwrap();
    while session.poll_transmit().is_some() {}
    assert_eq!(session.poll_timeout(), Some(t0 + Duration::from_secs(10)));
    session.handle_timeout(t0 + Duration::from_secs(9));
    assert_eq!(stalls(&mut session), 0);
    session.handle_timeout(t0 + Duration::from_secs(10));
    assert_eq!(stalls(&mut session), 1);
    let sent: Vec<_> = std::iter::from_fn(|| session.poll_transmit()).collect();
    assert!(
        sent.iter()
            .any(|m| matches!(m, HostMessage::ControlRequest(r)
            if r.request.tag() == Some("interrupt"))),
        "{sent:?}"
    );
    session.handle_timeout(t0 + Duration::from_secs(30));
    assert_eq!(stalls(&mut session), 0, "once per silence");
    // A line ends the silence; the clock runs again from it.
    let t1 = t0 + Duration::from_secs(31);
    session.handle_message(
        t1,
        cli(r#"{"type":"system","subtype":"status","status":null}"#),
    );
    session.handle_timeout(t1 + Duration::from_secs(10));
    assert_eq!(stalls(&mut session), 1);
}

#[test]
fn the_cli_waiting_for_the_host_is_not_silence() {
    let t0 = Instant::now();
    let mut session = ready_session(config(), t0);
    session.send_user(t0, UserMessage::prompt("go")).unwrap();
    let t1 = t0 + Duration::from_secs(1);
    let ask = r#"{"type":"control_request","request_id":"p1","request":{"subtype":"can_use_tool","tool_name":"Bash","input":{}}}"#;
    session.handle_message(t1, cli(ask));
    assert_eq!(session.poll_timeout(), None, "the CLI waits for the host");
    session.handle_timeout(t0 + Duration::from_secs(600));
    assert_eq!(stalls(&mut session), 0);
    let answered = t0 + Duration::from_secs(600);
    let id = byre_session::RequestId::new("p1");
    let allow = serde_json::json!({"behavior": "allow", "updatedInput": {}});
    session.answer(answered, &id, Ok(allow)).unwrap();
    assert_eq!(
        session.poll_timeout(),
        Some(answered + Duration::from_secs(10))
    );
}
