//! The tokio driver against the real CLI, offline: prompts, hooks, interrupts from another
//! task, a panicking handler, a slow consumer, requests failing when the CLI exits, ending the
//! input and waiting for the exit, raw lines, start-up failures, and the transcript.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use byre_proto::{CliMessage, HookEvent, HookOutput, ResultSubtype, TerminalReason};
use byre_session::{query, Claude, Error, Event, Fault, Hook, Options, RequestFailure};
use byre_testkit::{
    read_transcript, FakeModel, Match, Reply, Rule, Script, TranscriptDir, TranscriptKind,
    TranscriptLine,
};
use futures::StreamExt;

use crate::support::{options, until_result};

const STEP: Duration = Duration::from_secs(30);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn query_runs_one_prompt_to_its_result() {
    let script = Script::new().rule(
        Rule::when(Match::user_text_contains("hello"))
            .reply(Reply::text("Hi from the fake model.")),
    );
    let model = FakeModel::start(script).await.unwrap();
    let (options, _env) = options(&model);
    let mut query_events = query("hello there", options.clone()).await.unwrap();
    let mut events = Vec::new();
    while let Some(event) = query_events.next().await {
        events.push(event);
    }
    assert!(query_events.claude().has_ended(), "the session is closed");
    // Its outcome is gone with the result the stream gave.
    assert!(matches!(
        query_events.finish().await,
        Err(byre_session::TurnError::Ended)
    ));
    let Some(Event::Message(CliMessage::Result(result))) = events.last() else {
        panic!("{events:?}")
    };
    assert_eq!(result.result.as_deref(), Some("Hi from the fake model."));
    assert!(events
        .iter()
        .any(|e| matches!(e, Event::Turn(byre_session::TurnEvent::SessionId { .. }))));
    assert!(
        events.iter().any(|e| matches!(e, Event::Assembly(_))),
        "stream events are assembled"
    );

    // Or the typed outcome, the text as it streams.
    let mut pieces = String::new();
    let answer = query("hello again", options)
        .await
        .unwrap()
        .on_text(|piece| pieces.push_str(piece))
        .await
        .unwrap();
    assert_eq!(answer.text, "Hi from the fake model.");
    assert_eq!(pieces, answer.text);
    assert_eq!(answer.num_turns(), Some(1));
}

/// The README's example, with the text collected instead of printed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_readme_example_streams_the_answer() {
    use byre_proto::Delta;
    use byre_session::AssemblyEvent;
    let script = Script::new().rule(Rule::any().reply(Reply::text("Hello, from a stream.")));
    let model = FakeModel::start(script).await.unwrap();
    let (options, _env) = options(&model);
    let mut printed = String::new();
    let mut result = None;

    let (claude, mut events) = Claude::start(options).await.unwrap();
    claude.send("Say hello").unwrap();
    while let Some(event) = events.next().await {
        match event {
            Event::Assembly(AssemblyEvent::Delta {
                delta: Delta::Text(t),
                ..
            }) => printed.push_str(&t.text),
            Event::Message(CliMessage::Result(r)) => {
                result = r.result;
                break;
            }
            _ => {}
        }
    }
    claude.close().await.unwrap();

    assert_eq!(printed, "Hello, from a stream.");
    assert_eq!(result.as_deref(), Some(printed.as_str()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_hook_blocks_once_and_the_turn_goes_on() {
    let script = Script::new()
        .rule(
            // The hook's own reason: the CLI's wording around it differs between versions.
            Rule::when(Match::any_user_text_contains("keep going"))
                .reply(Reply::text("Second answer.")),
        )
        .rule(Rule::any().reply(Reply::text("First answer.")));
    let model = FakeModel::start(script).await.unwrap();
    let (options, _env) = options(&model);
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = calls.clone();
    let options = options.hook(HookEvent::STOP, move |_input, _id| {
        let n = counter.fetch_add(1, Ordering::SeqCst);
        async move {
            Ok(if n == 0 {
                HookOutput::block("keep going")
            } else {
                HookOutput::none()
            })
        }
    });
    let (claude, mut events) = Claude::start(options).await.unwrap();
    assert!(claude
        .initialize_response()
        .unwrap()
        .hooks_applied
        .unwrap_or(false));
    claude.send("answer please").unwrap();
    let (_, result) = until_result(&mut events).await;
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    assert_eq!(result.num_turns, Some(2));
    assert_eq!(result.result.as_deref(), Some("Second answer."));
    assert!(claude.session_id().is_some());
    let exit = claude.close().await.unwrap();
    assert!(exit.status.success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_task_interrupts_a_hanging_stream() {
    let script = Script::new()
        .rule(Rule::when(Match::user_text_contains("after")).reply(Reply::text("Still here.")))
        .rule(Rule::any().reply(Reply::hang()));
    let model = FakeModel::start(script).await.unwrap();
    let (options, _env) = options(&model);
    let (claude, mut events) = Claude::start(options).await.unwrap();
    claude.send("hang please").unwrap();
    // Wait until the stream started, then interrupt from another task.
    until_streaming(&mut events).await;
    let other = claude.clone();
    let interrupt = tokio::spawn(async move { other.interrupt().await });
    let (_, result) = until_result(&mut events).await;
    interrupt.await.unwrap().unwrap();
    assert_eq!(result.subtype, ResultSubtype::ERROR_DURING_EXECUTION);
    assert_eq!(
        result.terminal_reason,
        Some(TerminalReason::ABORTED_STREAMING)
    );
    claude.send("after the interrupt").unwrap();
    let (_, result) = until_result(&mut events).await;
    assert_eq!(result.result.as_deref(), Some("Still here."));
    claude.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interrupt_calls_the_interrupt_hook_on_a_cli_that_has_it() {
    let script = Script::new().rule(Rule::any().reply(Reply::hang()));
    let model = FakeModel::start(script).await.unwrap();
    let (options, _env) = options(&model);
    let inputs = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = inputs.clone();
    let options = options.hook(HookEvent::INTERRUPT, move |input, _id| {
        seen.lock().unwrap().push(input);
        async { Ok(HookOutput::none()) }
    });
    let (claude, mut events) = Claude::start(options).await.unwrap();
    let version = claude
        .initialize_response()
        .unwrap()
        .claude_code_version
        .clone();
    claude.send("hang please").unwrap();
    until_streaming(&mut events).await;
    claude.interrupt().await.unwrap();
    let (_, result) = until_result(&mut events).await;
    assert_eq!(result.subtype, ResultSubtype::ERROR_DURING_EXECUTION);
    claude.close().await.unwrap();
    let inputs = inputs.lock().unwrap();
    let version = byre_proto::CliVersion::parse(version.as_deref().unwrap_or("")).unwrap();
    if version.parts < (2, 1, 337) {
        assert!(
            inputs.is_empty(),
            "CLI {version} has no Interrupt hook: {inputs:?}"
        );
        return;
    }
    let [byre_proto::HookInput::Interrupt(interrupt)] = inputs.as_slice() else {
        panic!("one Interrupt hook input from CLI {version}: {inputs:?}");
    };
    assert_eq!(interrupt.source.as_deref(), Some("user"), "{interrupt:?}");
    assert_eq!(interrupt.reason.as_deref(), Some("stop"), "{interrupt:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_handler_is_answered_with_an_error_and_the_session_goes_on() {
    let script = Script::new()
        .rule(Rule::when(Match::has_tool_result(true)).reply(Reply::text("Done.")))
        .rule(Rule::any().reply(Reply::tool_use(
            "Bash",
            serde_json::json!({"command": "echo hi"}),
        )));
    let model = FakeModel::start(script).await.unwrap();
    let (mut options, env) = options(&model);
    let transcript = env.home().join("transcript.jsonl");
    options = options.transcript(transcript.clone());
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = calls.clone();
    let options = options.hook(
        Hook::new(HookEvent::PRE_TOOL_USE).matcher("Bash"),
        move |_input, _id| {
            counter.fetch_add(1, Ordering::SeqCst);
            async move {
                if true {
                    panic!("a bug in the host's hook");
                }
                Ok(HookOutput::none())
            }
        },
    );
    let (claude, mut events) = Claude::start(options).await.unwrap();
    claude.send("run it").unwrap();
    let (_, result) = until_result(&mut events).await;
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert_eq!(result.result.as_deref(), Some("Done."), "{result:?}");
    claude.close().await.unwrap();
    // The panic became exactly one error answer to the hook's request.
    let text = std::fs::read_to_string(&transcript).unwrap();
    let errors: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("\"dir\":\"send\"") && l.contains("\"subtype\":\"error\""))
        .collect();
    assert_eq!(errors.len(), 1, "{text}");
    assert!(errors[0].contains("panicked"), "{}", errors[0]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_consumer_loses_nothing() {
    let text = "word ".repeat(400);
    let script = Script::new().rule(Rule::any().reply(Reply::text(text.trim_end()).chunk_size(5)));
    let model = FakeModel::start(script).await.unwrap();
    let (mut options, _env) = options(&model);
    options = options.event_buffer(1);
    let (claude, mut events) = Claude::start(options).await.unwrap();
    claude.send("talk a lot").unwrap();
    // Do not read for a while: the driver must wait, not drop.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let (seen, result) = until_result(&mut events).await;
    let deltas = seen
        .iter()
        .filter(|e| matches!(e, Event::Message(CliMessage::StreamEvent(s)) if matches!(s.event, byre_proto::StreamEvent::ContentBlockDelta(_))))
        .count();
    assert_eq!(
        deltas,
        text.trim_end().len().div_ceil(5),
        "every delta arrives"
    );
    assert_eq!(result.result.as_deref(), Some(text.trim_end()));
    claude.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pending_requests_fail_when_the_cli_exits() {
    let model = FakeModel::start(Script::new().rule(Rule::any().reply(Reply::hang())))
        .await
        .unwrap();
    let (options, _env) = options(&model);
    let (claude, _events) = Claude::start(options).await.unwrap();

    // A refusal carries the CLI's message and is the CLI's answer, not a broken session.
    claude
        .set_permission_mode(byre_proto::PermissionMode::PLAN)
        .await
        .unwrap();
    assert!(claude.mcp_status().await.is_ok());
    assert!(claude.context_usage(true).await.is_ok());
    let err = claude
        .set_permission_mode(byre_proto::PermissionMode::new("byre-no-such-mode"))
        .await
        .unwrap_err();
    assert_eq!(err.fault(), Fault::Refused, "{err}");
    assert!(matches!(
        &err,
        Error::Request {
            failure: RequestFailure::Refused { .. },
            ..
        }
    ));

    // Stop the CLI so a request stays unanswered, then kill it: the request fails at once
    // with the exit.
    let pid = claude
        .initialize_response()
        .and_then(|init| init.pid)
        .expect("the CLI says its pid");
    signal(pid, "STOP");
    let pending = tokio::spawn({
        let claude = claude.clone();
        async move {
            claude
                .request(byre_proto::GetContextUsageRequest::default())
                .await
        }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!pending.is_finished(), "a stopped CLI does not answer");
    signal(pid, "KILL");
    let err = tokio::time::timeout(STEP, pending)
        .await
        .expect("the request fails when the CLI exits")
        .unwrap()
        .unwrap_err();
    assert_eq!(err.fault(), Fault::Exited, "{err}");
    assert!(
        matches!(
            &err,
            Error::Request {
                failure: RequestFailure::Exited(_),
                ..
            }
        ),
        "{err}"
    );
    let err = claude.interrupt().await.unwrap_err();
    assert_eq!(err.fault(), Fault::Exited, "{err}");
    // A prompt after the exit is refused, not lost.
    let err = claude.send("anyone there?").unwrap_err();
    assert_eq!(err.fault(), Fault::Exited, "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_line_limit_below_the_initialize_answer_fails_the_start_at_once() {
    let model = FakeModel::start(Script::new()).await.unwrap();
    let (mut options, _env) = options(&model);
    // The initialize answer is several KiB long.
    options = options.max_line_bytes(1024);
    let err = tokio::time::timeout(Duration::from_secs(20), Claude::start(options))
        .await
        .expect("no wait for the initialize timeout")
        .unwrap_err();
    assert_eq!(err.fault(), Fault::Protocol, "{err}");
    assert!(err.to_string().contains("raise the line limit"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn close_does_not_wait_for_a_consumer_that_stopped_reading() {
    let text = "word ".repeat(200);
    let script = Script::new().rule(Rule::any().reply(Reply::text(text.trim_end())));
    let model = FakeModel::start(script).await.unwrap();
    let (mut options, _env) = options(&model);
    options = options.event_buffer(1);
    let (claude, mut events) = Claude::start(options).await.unwrap();
    claude.send("talk").unwrap();
    model
        .wait_for_requests(1, STEP)
        .await
        .expect("the CLI asks the model");
    // Nobody reads: the queue fills and reading from the CLI pauses. Closing still ends.
    tokio::time::sleep(Duration::from_millis(500)).await;
    tokio::time::timeout(STEP, claude.close())
        .await
        .expect("close returns though nobody reads")
        .unwrap();
    // What was read is all still there, and the stream ends.
    let seen = until_the_end(&mut events).await;
    assert!(
        seen.iter()
            .any(|e| matches!(e, Event::Message(CliMessage::System(_)))),
        "{seen:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_handler_that_never_answers_times_out_and_the_turn_goes_on() {
    let script = Script::new().rule(Rule::any().reply(Reply::text("Done.")));
    let model = FakeModel::start(script).await.unwrap();
    let (mut options, _env) = options(&model);
    options = options.handler_timeout(Duration::from_millis(500));
    let started = Arc::new(AtomicUsize::new(0));
    let counter = started.clone();
    let options = options.hook(HookEvent::STOP, move |_input, _id| {
        counter.fetch_add(1, Ordering::SeqCst);
        std::future::pending::<Result<HookOutput, byre_session::HandlerError>>()
    });
    let (claude, mut events) = Claude::start(options).await.unwrap();
    claude.send("finish").unwrap();
    let (_, result) = until_result(&mut events).await;
    assert_eq!(result.result.as_deref(), Some("Done."));
    assert_eq!(started.load(Ordering::SeqCst), 1, "the hook was asked");
    claude.close().await.unwrap();
}

/// Sends a signal to the CLI this test started.
fn signal(pid: u64, name: &str) {
    let status = std::process::Command::new("kill")
        .arg(format!("-{name}"))
        .arg(pid.to_string())
        .status()
        .unwrap();
    assert!(status.success(), "kill -{name} {pid}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resume_and_fork_into_another_directory() {
    let script = Script::new()
        .rule(Rule::when(Match::user_text_contains("apple")).reply(Reply::text("Noted: apple.")))
        .rule(Rule::when(Match::user_text_contains("banana")).reply(Reply::text("Noted: banana.")))
        .rule(Rule::any().reply(Reply::text("Carrying on.")));
    let model = FakeModel::start(script).await.unwrap();
    let (first, env) = options(&model);
    let base = first.clone();

    // A: two turns; remember the first answer's uuid.
    let (claude, mut events) = Claude::start(first).await.unwrap();
    claude.send("remember apple").unwrap();
    let (seen, _) = until_result(&mut events).await;
    let at = first_assistant_uuid(&seen);
    claude.send("remember banana").unwrap();
    until_result(&mut events).await;
    let original = claude.session_id().expect("a session id");
    claude.close().await.unwrap();

    // Resume: the same id, the whole conversation.
    let (claude, mut events) = Claude::start(base.clone().resume(&original)).await.unwrap();
    claude.send("go on").unwrap();
    until_result(&mut events).await;
    assert_eq!(claude.session_id().as_deref(), Some(original.as_str()));
    let history = last_history(&model);
    assert!(
        history.contains("banana"),
        "the resumed request holds the earlier turns"
    );
    claude.close().await.unwrap();

    // Fork at the first answer, in another directory: a new id, the conversation cut there.
    let elsewhere = env.home().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let (forked, new_id) = base.fork(&original, &at, &elsewhere);
    assert_ne!(new_id, original);
    let (claude, mut events) = Claude::start(forked).await.unwrap();
    claude.send("and now?").unwrap();
    until_result(&mut events).await;
    assert_eq!(claude.session_id().as_deref(), Some(new_id.as_str()));
    let history = last_history(&model);
    assert!(
        history.contains("apple") && !history.contains("banana"),
        "{history}"
    );
    claude.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_truncated_resume_drops_the_turn_it_names_and_refuses_another() {
    let script = Script::new().rule(Rule::any().reply(Reply::text("Noted.")));
    let model = FakeModel::start(script).await.unwrap();
    let (base, _env) = options(&model);

    // Two turns: the first answer's uuid, and the uuid of the second turn's prompt.
    let (claude, mut events) = Claude::start(base.clone()).await.unwrap();
    claude.send("remember apple").unwrap();
    let (seen, _) = until_result(&mut events).await;
    let at = first_assistant_uuid(&seen);
    let dropped = "6b0e7c1a-2f4d-4c3b-9a1e-0d5f8b7c6a52".to_owned();
    let prompt = byre_proto::UserMessage::prompt("remember banana").uuid(&dropped);
    claude.send_message(prompt).unwrap();
    let (_, second) = until_result(&mut events).await;
    assert_eq!(second.user_message_uuid.as_deref(), Some(dropped.as_str()));
    let original = claude.session_id().expect("a session id");
    claude.close().await.unwrap();

    // Resumed at the first answer, dropping the second turn: banana is gone.
    let options = base
        .clone()
        .resume(&original)
        .resume_at(&at)
        .resume_drops_turn(&dropped);
    let flag = format!("--resume-drops-turn={dropped}");
    assert!(options.launch().args().iter().any(|a| *a == *flag));
    let (claude, mut events) = Claude::start(options).await.unwrap();
    claude.send("go on").unwrap();
    until_result(&mut events).await;
    let history = last_history(&model);
    assert!(
        history.contains("apple") && !history.contains("banana"),
        "{history}"
    );
    claude.close().await.unwrap();

    // Naming a prompt that is not the one past the resume point: the CLI refuses the resume.
    let refused = base
        .resume(&original)
        .resume_at(&at)
        .resume_drops_turn("00000000-0000-4000-8000-000000000000");
    let error = match Claude::start(refused).await {
        Ok((claude, mut events)) => {
            claude.send("go on").unwrap();
            let rest = until_the_end(&mut events).await;
            format!("{rest:?}")
        }
        Err(e) => e.to_string(),
    };
    assert!(
        error.contains("Resume rejected by --resume-drops-turn"),
        "{error}"
    );
}

/// The conversation the model was last sent, as JSON text.
fn last_history(model: &FakeModel) -> String {
    serde_json::to_string(model.message_requests().last().unwrap().messages()).unwrap()
}

/// The uuid of the first assistant line among `seen`.
fn first_assistant_uuid(seen: &[Event]) -> String {
    seen.iter()
        .find_map(|e| match e {
            Event::Message(CliMessage::Assistant(a)) => a.uuid.clone(),
            _ => None,
        })
        .expect("an assistant line")
}

/// Waits (within `STEP` an event) until the model's reply has started to stream.
async fn until_streaming(events: &mut byre_session::Events) {
    loop {
        let event = tokio::time::timeout(STEP, events.next())
            .await
            .unwrap()
            .unwrap();
        if matches!(event, Event::Message(CliMessage::StreamEvent(_))) {
            return;
        }
    }
}

/// Every event until the stream ends (it must, within `STEP`).
async fn until_the_end(events: &mut byre_session::Events) -> Vec<Event> {
    let mut seen = Vec::new();
    loop {
        match tokio::time::timeout(STEP, events.next()).await {
            Ok(Some(event)) => seen.push(event),
            Ok(None) => return seen,
            Err(_) => panic!("the event stream did not end; last events: {seen:?}"),
        }
    }
}

fn results(events: &[Event]) -> Vec<&byre_proto::ResultMessage> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Message(CliMessage::Result(r)) => Some(&**r),
            _ => None,
        })
        .collect()
}

fn notes(lines: &[TranscriptLine]) -> Vec<&str> {
    lines.iter().filter_map(TranscriptLine::note).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ending_the_input_lets_the_turn_finish_and_the_cli_exit_by_itself() {
    let script = Script::new().rule(
        Rule::when(Match::user_text_contains("slowly"))
            .reply(Reply::text("Slow answer.").delay_ms(1500)),
    );
    let model = FakeModel::start(script).await.unwrap();
    let (mut options, env) = options(&model);
    let transcript = env.home().join("transcript.jsonl");
    options = options.transcript(transcript.clone());
    options = options.transcript_stream_events(true);
    options = options.transcript_launch(true);
    let (claude, mut events) = Claude::start(options).await.unwrap();
    claude.note("the prompt comes next").unwrap();
    claude.send("answer slowly please").unwrap();
    claude.end_input().unwrap();
    // Nothing more can be sent.
    assert!(matches!(claude.send("too late"), Err(Error::Closed(_))));
    assert!(matches!(claude.interrupt().await, Err(Error::Closed(_))));
    // The turn still runs to its result, then the CLI exits and the stream ends.
    let seen = until_the_end(&mut events).await;
    let results = results(&seen);
    assert_eq!(results.len(), 1, "{seen:?}");
    assert_eq!(results[0].result.as_deref(), Some("Slow answer."));
    let exit = tokio::time::timeout(STEP, claude.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(exit.status.success(), "{exit:?}");
    assert!(
        !matches!(
            exit.stopped,
            byre_transport::Stopped::Terminated | byre_transport::Stopped::Killed
        ),
        "{exit:?}"
    );
    // Asked again, and closing an exited CLI, give the same end.
    assert_eq!(claude.wait().await.unwrap().status, exit.status);
    assert_eq!(claude.close().await.unwrap().status, exit.status);

    let lines = read_transcript(&transcript).unwrap();
    let notes = notes(&lines);
    assert!(
        notes[0].starts_with("argv: [") && notes[0].contains("--input-format"),
        "{notes:?}"
    );
    assert_eq!(notes[1], format!("cwd: {}", env.cwd().display()));
    let at = |pred: &dyn Fn(&TranscriptLine) -> bool| lines.iter().position(pred);
    let prompt = at(&|l| l.is_send() && l.raw.contains("answer slowly")).unwrap();
    let noted = at(&|l| l.note() == Some("the prompt comes next")).unwrap();
    let closed = at(&|l| l.note() == Some("stdin closed")).unwrap();
    let result = at(&|l| l.is_recv() && l.raw.contains("\"type\":\"result\"")).unwrap();
    let stdout = at(&|l| l.note() == Some("stdout closed")).unwrap();
    assert!(
        noted < prompt && prompt < closed && closed < result && result < stdout,
        "{notes:?}"
    );
    assert_eq!(notes.last(), Some(&"exited: exit status: 0"), "{notes:?}");
    assert!(lines
        .iter()
        .any(|l| l.is_recv() && l.raw.contains("\"stream_event\"")));
    let times: Vec<f64> = lines.iter().map(|l| l.t).collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "{times:?}");
    assert!(times[result] >= 1.5, "the reply took 1.5 s: {times:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_a_hook_registered_the_input_ends_only_when_the_run_is_idle() {
    let script = Script::new()
        .rule(Rule::when(Match::has_tool_result(true)).reply(Reply::text("Listed.")))
        .rule(Rule::any().reply(Reply::tool_use(
            "Bash",
            serde_json::json!({"command": "echo x && sleep 1", "description": "Wait a second"}),
        )));
    let model = FakeModel::start(script).await.unwrap();
    let (mut options, env) = options(&model);
    let transcript = env.home().join("transcript.jsonl");
    options = options.transcript(transcript.clone());
    let hooked = Arc::new(AtomicUsize::new(0));
    let counter = hooked.clone();
    let options = options.hook(HookEvent::POST_TOOL_USE, move |_input, _id| {
        counter.fetch_add(1, Ordering::SeqCst);
        async { Ok(HookOutput::default()) }
    });
    let (claude, mut events) = Claude::start(options).await.unwrap();
    claude.send("run it").unwrap();
    claude.end_input().unwrap();
    assert!(matches!(claude.send("too late"), Err(Error::Closed(_))));
    let seen = until_the_end(&mut events).await;
    let results = results(&seen);
    assert_eq!(results.len(), 1, "{seen:?}");
    assert_eq!(results[0].result.as_deref(), Some("Listed."));
    assert_eq!(
        hooked.load(Ordering::SeqCst),
        1,
        "the hook the CLI asked after end_input was answered"
    );
    let exit = tokio::time::timeout(STEP, claude.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(exit.status.success(), "{exit:?}");
    let lines = read_transcript(&transcript).unwrap();
    let at = |pred: &dyn Fn(&TranscriptLine) -> bool| lines.iter().position(pred);
    let answer = at(&|l| l.is_send() && l.raw.contains("\"control_response\"")).unwrap();
    let result = at(&|l| l.is_recv() && l.raw.contains("\"type\":\"result\"")).unwrap();
    let closed = at(&|l| l.note() == Some("stdin closed")).unwrap();
    assert!(
        answer < result && result < closed,
        "stdin closes after the result: {:?}",
        notes(&lines)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn raw_lines_are_written_as_they_are() {
    let script = Script::new().rule(Rule::any().reply(Reply::text("pong")));
    let model = FakeModel::start(script).await.unwrap();
    let (mut options, env) = options(&model);
    let transcript = env.home().join("transcript.jsonl");
    options = options.transcript(transcript.clone());
    let (claude, mut events) = Claude::start(options).await.unwrap();
    assert!(matches!(
        claude.send_raw("{}\n{}"),
        Err(Error::InvalidInput(_))
    ));
    // A request subtype the CLI does not know: its answer is a message, and no request of
    // that id was in flight.
    const BOGUS: &str = r#"{"type":"control_request","request_id":"raw_1","request":{"subtype":"byre_no_such_request"}}"#;
    claude.send_raw(BOGUS).unwrap();
    let mut seen = Vec::new();
    let answer = loop {
        let event = tokio::time::timeout(STEP, events.next())
            .await
            .unwrap()
            .unwrap();
        if let Event::Message(CliMessage::ControlResponse(r)) = &event {
            if r.request_id() == Some("raw_1") {
                break r.clone();
            }
        }
        seen.push(event);
    };
    match &answer.response {
        byre_proto::ControlResponseBody::Error(e) => assert_eq!(
            e.error_code.as_ref().map(|c| c.as_str()),
            Some("unsupported_request")
        ),
        other => panic!("{other:?}"),
    }
    assert!(
        seen.iter().any(|e| matches!(
            e,
            Event::Protocol(byre_session::ProtocolViolation::UnknownResponse(id)) if id == "raw_1"
        )),
        "{seen:?}"
    );
    // A line that is not JSON: the CLI gives up with exit status 1.
    claude.send_raw(&b"{\"type\":\"user\""[..]).unwrap();
    let rest = until_the_end(&mut events).await;
    assert!(results(&rest).is_empty(), "{rest:?}");
    let exit = claude.wait().await.unwrap();
    assert_eq!(exit.status.code(), Some(1), "{exit:?}");
    // It says why on stderr, in its own words.
    assert!(!exit.stderr_tail.trim().is_empty(), "{exit:?}");
    let lines = read_transcript(&transcript).unwrap();
    let raw: Vec<&TranscriptLine> = lines
        .iter()
        .filter(|l| l.kind == TranscriptKind::Raw)
        .collect();
    assert_eq!(raw.len(), 2, "{lines:?}");
    assert!(raw.iter().all(|l| l.dir == TranscriptDir::Send));
    assert_eq!(raw[0].raw, BOGUS);
    assert_eq!(notes(&lines).last(), Some(&"exited: exit status: 1"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_start_up_failure_keeps_what_the_cli_wrote_and_how_it_exited() {
    let model = FakeModel::start(Script::new()).await.unwrap();
    let (options, _env) = options(&model);
    let missing = "7c3f0f52-0c1e-4b39-9b7e-00000000dead";
    // `start` fails: the CLI exited instead of answering `initialize`.
    let err = Claude::start(options.clone().resume(missing))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::UnknownSession { session_id, message } if session_id == missing && message.contains(missing)),
        "{err}"
    );
    // `spawn` gives the same failure, and keeps the events and the exit.
    let (claude, mut events) = Claude::spawn(options.resume(missing)).await.unwrap();
    let err = claude.initialized().await.unwrap_err();
    assert!(matches!(&err, Error::UnknownSession { .. }), "{err}");
    let seen = until_the_end(&mut events).await;
    let results = results(&seen);
    assert_eq!(results.len(), 1, "{seen:?}");
    assert_eq!(results[0].is_error, Some(true));
    assert_eq!(results[0].session_id.as_deref(), Some(missing));
    let exit = claude.wait().await.unwrap();
    assert_eq!(exit.status.code(), Some(1));
    assert!(
        exit.stderr_tail
            .contains(&format!("No conversation found with session ID: {missing}")),
        "{}",
        exit.stderr_tail
    );
    assert!(model.requests().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refusal_is_noted_and_the_turn_goes_on() {
    let script = Script::new()
        .rule(
            Rule::when(Match::user_text_contains("refuse this"))
                .reply(Reply::text("I cannot.").stop_reason("refusal")),
        )
        .rule(Rule::any().reply(Reply::text("Carrying on.")));
    let model = FakeModel::start(script).await.unwrap();
    let (options, _env) = options(&model);
    let (claude, mut events) = Claude::start(options).await.unwrap();
    claude.send("please refuse this").unwrap();
    let (seen, result) = until_result(&mut events).await;
    claude.close().await.unwrap();

    // The CLI says so in a typed `informational` line, tells the model in a user message, and
    // asks again; the turn ends well.
    let noted = seen.iter().any(|e| {
        matches!(e, Event::Message(CliMessage::System(s))
            if matches!(s, byre_proto::SystemMessage::Informational(i) if i.content.is_some()))
    });
    assert!(noted, "an informational line about the refusal: {seen:?}");
    // The message that asks again names the refused answer (its words are the CLI's).
    let asked_again = seen.iter().any(|e| {
        matches!(e, Event::Message(CliMessage::User(u))
            if u.refused_message_id.is_some() && u.is_synthetic == Some(true))
    });
    assert!(
        asked_again,
        "a synthetic user line naming the refusal: {seen:?}"
    );
    assert_eq!(result.subtype, ResultSubtype::SUCCESS);
    assert_eq!(result.result.as_deref(), Some("Carrying on."));
    assert_eq!(model.message_requests().len(), 2);
    for event in &seen {
        if let Event::Message(message) = event {
            byre_testkit::check_modelled("a refused turn", message);
        }
    }
}

/// Runs one prompt in a fresh session against `script`; returns what came and the result.
async fn one_turn(script: Script, prompt: &str) -> (Vec<Event>, byre_proto::ResultMessage) {
    one_turn_with(script, prompt, |options| options).await
}

/// [`one_turn`] with `adjust` applied to the options.
async fn one_turn_with(
    script: Script,
    prompt: &str,
    adjust: impl FnOnce(Options) -> Options,
) -> (Vec<Event>, byre_proto::ResultMessage) {
    let model = FakeModel::start(script).await.unwrap();
    let (options, _env) = options(&model);
    let (claude, mut events) = Claude::start(adjust(options)).await.unwrap();
    claude.send(prompt).unwrap();
    let outcome = until_result(&mut events).await;
    claude.close().await.unwrap();
    for event in &outcome.0 {
        if let Event::Message(message) = event {
            byre_testkit::check_modelled(format!("one turn of {prompt:?}"), message);
        }
    }
    outcome
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_api_error_ends_the_turn_with_its_status_and_type() {
    let script = Script::new().rule(Rule::any().reply(Reply::error(
        400,
        "invalid_request_error",
        "prompt is too long: 300000 tokens > 200000 maximum",
    )));
    let (seen, result) = one_turn(script, "hello").await;
    assert_eq!(result.is_error, Some(true), "{result:?}");
    assert_eq!(
        result.api_error_status.as_ref().and_then(|n| n.as_u64()),
        Some(400)
    );
    assert_eq!(
        result.api_error_type.as_deref(),
        Some("invalid_request_error")
    );
    // The status and type say what went wrong; the text is the CLI's.
    assert!(result.result.as_deref().is_some_and(|r| !r.is_empty()));
    // The CLI also writes a synthetic assistant line carrying the error.
    let synthetic = seen.iter().any(|e| {
        matches!(e, Event::Message(CliMessage::Assistant(a))
            if a.api_error_type.as_deref() == Some("invalid_request_error"))
    });
    assert!(synthetic, "{seen:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rate_limited_request_is_retried_and_each_retry_reported() {
    let script = Script::new()
        .rule(Rule::any().times(2).reply(Reply::error(
            429,
            "rate_limit_error",
            "Number of request tokens has exceeded your per-minute rate limit",
        )))
        .rule(Rule::any().reply(Reply::text("After the limit.")));
    // The test environment turns the CLI's retries off; this test wants them.
    let (seen, result) = one_turn_with(script, "hello", |options| {
        options.env("CLAUDE_CODE_MAX_RETRIES", "10")
    })
    .await;
    assert_eq!(result.is_error, Some(false), "{result:?}");
    assert_eq!(result.result.as_deref(), Some("After the limit."));
    let retries: Vec<u64> = seen
        .iter()
        .filter_map(|e| match e {
            Event::Message(CliMessage::System(byre_proto::SystemMessage::ApiRetry(r))) => {
                assert_eq!(r.error_status.as_ref().and_then(|n| n.as_u64()), Some(429));
                r.attempt
            }
            _ => None,
        })
        .collect();
    assert_eq!(retries, [1, 2]);
}
