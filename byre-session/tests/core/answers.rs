//! Answers checked before they are taken: a `read_file` answer for another path than the one
//! sent is set aside, and the request waits for its own.

use std::time::Instant;

use byre_proto::{HostRequest, InitializeRequest, ReadFileRequest};
use byre_session::{Event, ProtocolViolation, SessionConfig};

use crate::session::{cli, ready_session};

fn answer(id: &str, requested: Option<&str>) -> String {
    let requested = requested.map_or(String::new(), |p| format!(r#","requested_path":"{p}""#));
    format!(
        r#"{{"type":"control_response","response":{{"subtype":"success","request_id":"{id}","response":{{"contents":"x","absPath":"/w/x"{requested}}}}}}}"#
    )
}

#[test]
fn a_read_file_answer_for_another_path_is_set_aside_until_its_own_comes() {
    let now = Instant::now();
    let mut session = ready_session(SessionConfig::new(InitializeRequest::default()), now);
    let read = |path: &str| {
        HostRequest::ReadFile(ReadFileRequest {
            path: path.into(),
            ..serde_json::from_str(r#"{"path":""}"#).unwrap()
        })
    };
    let id = session.request(now, read("notes.txt"), None).unwrap();
    while session.poll_transmit().is_some() {}
    session.handle_message(now, cli(&answer(id.as_str(), Some("other.txt"))));
    let events: Vec<_> = std::iter::from_fn(|| session.poll_event()).collect();
    assert!(
        events.iter().any(|e| matches!(e,
            Event::Protocol(ProtocolViolation::StaleAnswer { id: stale, .. }) if stale == id.as_str()
        )),
        "{events:?}"
    );
    assert!(
        !events.iter().any(|e| matches!(e, Event::Response { .. })),
        "{events:?}"
    );
    session.handle_message(now, cli(&answer(id.as_str(), Some("notes.txt"))));
    assert_answered(&mut session);

    // An older CLI says nothing of the path: its answer is the answer.
    let id = session.request(now, read("a.txt"), None).unwrap();
    session.handle_message(now, cli(&answer(id.as_str(), None)));
    assert_answered(&mut session);
}

/// The session's next events hold a successful answer.
fn assert_answered(session: &mut byre_session::Session) {
    let events: Vec<_> = std::iter::from_fn(|| session.poll_event()).collect();
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::Response { result: Ok(_), .. })),
        "{events:?}"
    );
}
