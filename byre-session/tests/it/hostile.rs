//! The driver against CLIs that misbehave on purpose (byre-testkit's `byre-hostile`): a crash
//! mid-turn while a process it started holds stdout, a CLI that closes its stdout or its stdin,
//! one that does not exit when its stdin ends (a terminate cuts the close's grace short), one
//! that stops reading stdin while its stdout is full, a lone surrogate in a result, and what an
//! exited CLI left in its pipe while the program was slow to read.

use std::time::{Duration, Instant};

use byre_session::{Claude, Error, Event, Events, Options, TurnError};
use futures::StreamExt;

/// Options that start `byre-hostile` with `args` (`--mode` and its flags).
fn hostile(args: &[(&str, &str)]) -> Options {
    let mut options = Options::new();
    options = options.program(byre_testkit::hostile_bin().expect("byre-hostile builds"));
    for (flag, value) in args {
        options = options.extra_arg(*flag, Some((*value).into()));
    }
    options = options.exit_grace(Duration::from_secs(2));
    options = options.term_grace(Duration::from_secs(2));
    options
}

/// Every event until the stream ends, within `limit`.
async fn all_events(events: &mut Events, limit: Duration) -> Vec<Event> {
    let mut all = Vec::new();
    tokio::time::timeout(limit, async {
        while let Some(event) = events.next().await {
            all.push(event);
        }
    })
    .await
    .unwrap_or_else(|_| panic!("the stream did not end within {limit:?}: {all:?}"));
    all
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_is_seen_while_a_started_process_holds_stdout() {
    let (claude, mut events) = Claude::start(hostile(&[("mode", "crash"), ("hold", "")]))
        .await
        .expect("it starts");
    claude.send("crash now").unwrap();
    let started = Instant::now();
    let all = all_events(&mut events, Duration::from_secs(10)).await;
    let elapsed = started.elapsed();
    assert!(elapsed < Duration::from_secs(3), "seen after {elapsed:?}");
    assert!(
        all.iter().any(|e| matches!(e, Event::Message(_))),
        "what it wrote before crashing is delivered: {all:?}"
    );
    let exit = claude.wait().await.expect("how it ended");
    assert_eq!(exit.status.code(), Some(3));
    assert!(claude.has_ended());
    let closed = Instant::now();
    let _ = claude.close().await;
    assert!(closed.elapsed() < Duration::from_secs(2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn close_returns_within_its_grace_while_a_started_process_holds_stdout() {
    let (claude, mut events) = Claude::start(hostile(&[("mode", "crash"), ("hold", "")]))
        .await
        .expect("it starts");
    claude.send("crash now").unwrap();
    // Close at once, before the stream has been read.
    let started = Instant::now();
    let closed = tokio::time::timeout(Duration::from_secs(8), claude.close()).await;
    assert!(
        closed.is_ok(),
        "close did not return: {:?}",
        started.elapsed()
    );
    let all = all_events(&mut events, Duration::from_secs(5)).await;
    assert!(
        all.iter().any(|e| matches!(e, Event::Message(_))),
        "{all:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cli_that_closes_its_stdout_is_ended_at_once_and_named_so() {
    let (claude, mut events) = Claude::start(hostile(&[("mode", "close-stdout")]))
        .await
        .expect("it starts");
    claude.send("close your output").unwrap();
    let started = Instant::now();
    all_events(&mut events, Duration::from_secs(10)).await;
    let exit = claude.wait().await.expect("how it ended");
    // Its stdin closed with its output, so it exited by itself: no SIGTERM after a grace.
    assert!(exit.status.success(), "{exit:?}");
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    match claude.send("more") {
        Err(Error::Closed(why)) => assert!(why.contains("closed its output"), "{why}"),
        other => panic!("{other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cli_that_closes_its_stdin_ends_the_session_with_input_closed() {
    // It closes its stdin, answers `initialize` and runs on: the prompt cannot be written.
    let dir = tempfile::tempdir().unwrap();
    let transcript = dir.path().join("transcript.jsonl");
    let mut options = hostile(&[("mode", "close-stdin")]);
    options = options.transcript(transcript.clone());
    let (claude, mut events) = Claude::start(options).await.expect("it starts");
    claude.send("are you there").unwrap();
    // Its stand-in runs for 10 minutes: an end within the limit is byre's doing.
    let outcome = tokio::time::timeout(Duration::from_secs(30), events.turn().finish())
        .await
        .expect("the turn ends while the CLI would still run");
    match outcome {
        Err(TurnError::Session(Error::InputClosed {
            not_delivered,
            exit,
            error,
        })) => {
            assert_eq!(not_delivered, 1);
            assert_eq!(error.kind(), std::io::ErrorKind::BrokenPipe, "{error}");
            let exit = exit.expect("it was stopped");
            assert!(exit.status.code().is_none(), "ended by a signal: {exit:?}");
            assert!(exit.stderr_tail.contains("stdin closed"), "{exit:?}");
        }
        other => panic!("{other:?}"),
    }
    assert!(claude.has_ended());
    fn said<T: std::fmt::Debug>(result: Result<T, Error>) {
        match result {
            Err(error @ Error::InputClosed { .. }) => {
                assert!(error.to_string().contains("closed its input"), "{error}");
                assert_eq!(error.fault(), byre_session::Fault::Exited);
            }
            other => panic!("{other:?}"),
        }
    }
    said(claude.wait().await);
    said(claude.send("more"));
    said(claude.close().await);
    // The transcript keeps the prompt as handed over, then says it was not delivered.
    let text = std::fs::read_to_string(&transcript).unwrap();
    let sent = text
        .lines()
        .position(|l| l.contains(r#""dir":"send""#) && l.contains("are you there"))
        .unwrap_or_else(|| panic!("{text}"));
    let noted = text
        .lines()
        .position(|l| l.contains("not delivered") && l.contains("are you there"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(sent < noted, "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_terminate_during_close_ends_the_grace_at_once() {
    // The CLI does not exit when its stdin ends: `close` would wait out its exit grace.
    let mut options = hostile(&[("mode", "linger")]);
    options = options.exit_grace(Duration::from_secs(60));
    let (claude, mut events) = Claude::start(options).await.expect("it starts");
    claude.send("hi").unwrap();
    events.turn().finish().await.expect("a result");
    let mut closing = std::pin::pin!(claude.close());
    // Its first poll sends the close: the terminate comes while the close's grace runs.
    assert!(futures::poll!(&mut closing).is_pending());
    let both = futures::future::join(closing, claude.terminate());
    let (closed, terminated) = tokio::time::timeout(Duration::from_secs(30), both)
        .await
        .expect("terminate does not wait out the 60 s grace");
    for ended in [closed, terminated] {
        let exit = ended.expect("how it ended");
        assert_eq!(
            exit.stopped,
            byre_transport::Stopped::Terminated,
            "{exit:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cli_that_stops_reading_stdin_while_its_stdout_is_full_does_not_stall_the_driver() {
    // 2 MB of output before it reads a byte; a 4 MB prompt that cannot be written meanwhile.
    let options = hostile(&[("mode", "stall"), ("lines", "2000"), ("size", "1000")]);
    let (claude, mut events) = Claude::start(options).await.expect("it starts");
    claude.send("y".repeat(4 << 20)).unwrap();
    let mut messages = 0;
    let result = tokio::time::timeout(Duration::from_secs(20), async {
        while let Some(event) = events.next().await {
            match event {
                Event::Message(byre_proto::CliMessage::Result(result)) => return Some(result),
                Event::Message(_) => messages += 1,
                _ => {}
            }
        }
        None
    })
    .await
    .expect("no deadlock: the turn ends");
    assert!(result.is_some(), "a result after the big prompt");
    assert!(messages >= 2000, "every message delivered: {messages}");
    tokio::time::timeout(Duration::from_secs(8), claude.close())
        .await
        .expect("close returns")
        .expect("it exits");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_an_exited_cli_left_unread_reaches_a_slow_consumer() {
    // When its stdin ends it writes 300 messages and exits; they wait in byre's pipeline and
    // the pipe while the program does not read, for longer than byre reads an exited CLI's
    // pipe (2 s): that time is the program's, not the pipe's, and no line is left behind.
    let options = hostile(&[("mode", "flood-on-eof"), ("lines", "300"), ("size", "1000")]);
    let (claude, mut events) = Claude::start(options).await.expect("it starts");
    claude.send("hello").unwrap();
    claude.end_input().unwrap();
    tokio::time::sleep(Duration::from_secs(4)).await;
    let all = all_events(&mut events, Duration::from_secs(20)).await;
    let messages = all
        .iter()
        .filter(|e| matches!(e, Event::Message(byre_proto::CliMessage::Assistant(_))))
        .count();
    assert_eq!(
        messages, 300,
        "every message the CLI wrote before it exited"
    );
    let exit = claude.wait().await.expect("how it ended");
    assert_eq!(exit.status.code(), Some(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_awaited_while_events_lie_unread_is_answered() {
    // The real CLI streams 600 deltas into a 4-event queue that nobody reads; the host then
    // awaits `set_model` in the same loop: the driver reads on for the answer (within its byte
    // budget), so it comes, and every event is still delivered in order afterwards.
    use byre_testkit::{Block, FakeModel, MessageReply, Reply, Rule, Script};
    let long = MessageReply {
        blocks: vec![Block::text("x".repeat(600))],
        chunk_size: 1,
        ..MessageReply::default()
    };
    let model = FakeModel::start(Script::new().rule(Rule::any().reply(Reply::Message(long))))
        .await
        .unwrap();
    let (mut options, _env) = crate::support::options(&model);
    options = options.event_buffer(4);
    options = options.request_timeout(Duration::from_secs(8));
    let (claude, mut events) = Claude::start(options).await.unwrap();
    claude.send("go").unwrap();
    // Until the stream is well under way (the queue is full long before), read nothing.
    let started = Instant::now();
    while model.message_requests().is_empty() && started.elapsed() < Duration::from_secs(30) {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let switched = claude.set_model(Some("claude-other")).await;
    assert!(switched.is_ok(), "{switched:?}");
    let mut text = String::new();
    let mut ended = false;
    while let Ok(Some(event)) = tokio::time::timeout(Duration::from_secs(30), events.next()).await {
        if let Some(piece) = event.text() {
            text.push_str(piece);
        }
        if let Event::Message(byre_session::proto::CliMessage::Result(_)) = event {
            ended = true;
            break;
        }
    }
    assert!(ended, "the turn ends");
    assert_eq!(text, "x".repeat(600), "every delta, in order");
    claude.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_that_goes_silent_ends_stalled_within_its_timeout() {
    let options = hostile(&[("mode", "silent")]).stall_timeout(Duration::from_secs(2));
    let (claude, mut events) = Claude::start(options).await.unwrap();
    let started = Instant::now();
    claude.send("hang, please").unwrap();
    let outcome = tokio::time::timeout(Duration::from_secs(30), events.turn().finish())
        .await
        .expect("a stalled turn ends");
    let took = started.elapsed();
    match outcome {
        Err(TurnError::Stalled { silent_for, result }) => {
            assert!(silent_for >= Duration::from_secs(2), "{silent_for:?}");
            // The stand-in does not answer the interrupt: no result.
            assert!(result.is_none(), "{result:?}");
        }
        other => panic!("not a stall: {other:?}"),
    }
    // The timeout, then the grace for the interrupt's answer: well under 30 s.
    assert!(took < Duration::from_secs(15), "{took:?}");
    claude.terminate().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_tool_that_sends_heartbeats_is_not_a_stall() {
    // Six heartbeats 700 ms apart (4.2 s) against a 2 s stall timeout.
    let options = hostile(&[("mode", "heartbeat"), ("lines", "6"), ("every", "700")])
        .stall_timeout(Duration::from_secs(2));
    let (claude, mut events) = Claude::start(options).await.unwrap();
    let started = Instant::now();
    claude.send("run the long tool").unwrap();
    let output = events
        .turn()
        .finish()
        .await
        .expect("the turn ends with its result");
    assert_eq!(output.result.result.as_deref(), Some("done"));
    assert!(
        started.elapsed() > Duration::from_secs(4),
        "{:?}",
        started.elapsed()
    );
    claude.close().await.unwrap();
}
