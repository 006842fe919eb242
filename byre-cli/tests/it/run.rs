//! `byre run` against the real CLI: live text and tool calls, stdin prompts, `--output json`
//! and `stats`, error results, resume, fork, Ctrl-C as interrupt (and a second one as quit), and
//! the system prompt, tool and MCP flags.

use std::time::Duration;

use byre_proto::CliMessage;
use byre_testkit::{Block, Match, Reply, Rule, Script};
use nix::sys::signal::Signal;
use nix::unistd::Pid;
use serde_json::{json, Value};

use crate::support::{output, Offline, RUN_TIMEOUT};

/// A Bash call, its result, and an answer.
fn bash_script() -> Script {
    Script::new()
        .rule(
            Rule::when(Match::has_tool_result(true).and(Match::tool_result_contains("hi")))
                .reply(Reply::text("The command printed: hi")),
        )
        .rule(
            Rule::when(Match::user_text_contains("run echo")).reply(Reply::message(vec![
                Block::text("I'll run it."),
                Block::tool_use(
                    "Bash",
                    json!({"command": "echo hi", "description": "Say hi"}),
                ),
            ])),
        )
        .rule(Rule::any().reply(Reply::text("Hello from the fake model.")))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_answer_goes_to_stdout_and_the_tool_call_to_stderr() {
    let offline = Offline::start(bash_script()).await;
    let out = output(offline.run(&["please run echo"]), None).await;
    assert!(out.status.success(), "{out:?}");
    assert_eq!(out.stdout, "I'll run it.\nThe command printed: hi\n");
    let stderr: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(stderr[0], "▸ Bash echo hi", "{out:?}");
    assert!(
        stderr[1].starts_with("✓ Bash ") && stderr[1].ends_with("s · hi"),
        "{out:?}"
    );
    assert!(stderr[2].starts_with("── done · 2 turns · "), "{out:?}");
    assert!(stderr[2].contains(" · $0."), "the cost is shown: {out:?}");
    // stderr is not a terminal here: no spinner.
    assert!(!out.stderr.contains('\x1b'), "{out:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dash_reads_the_prompt_from_stdin() {
    let offline = Offline::start(bash_script()).await;
    let out = output(offline.run(&["-"]), Some("say hello\nfrom stdin\n")).await;
    assert!(out.status.success(), "{out:?}");
    assert_eq!(out.stdout, "Hello from the fake model.\n");
    let requests = offline.model.message_requests();
    assert_eq!(
        requests[0].last_user_text().as_deref(),
        Some("say hello\nfrom stdin")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_prints_every_message_the_transcript_holds() {
    let offline = Offline::start(bash_script()).await;
    let transcript = offline.env.home().join("run.jsonl");
    let out = output(
        offline.run(&[
            "--output",
            "json",
            "--transcript",
            transcript.to_str().unwrap(),
            "please run echo",
        ]),
        None,
    )
    .await;
    assert!(out.status.success(), "{out:?}");
    assert!(
        out.stderr.is_empty(),
        "json output keeps stderr quiet: {out:?}"
    );
    let printed: Vec<Value> = out
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("every line is JSON"))
        .collect();
    for line in &printed {
        let bytes = serde_json::to_vec(line).unwrap();
        CliMessage::from_slice(&bytes).expect("every line is a CLI message");
    }
    // `run` waits for the CLI to say the run is idle, which it does after the result.
    let last = printed.last().unwrap();
    assert_eq!(last["subtype"], "session_state_changed", "{last}");
    assert_eq!(last["state"], "idle");
    assert_eq!(printed[printed.len() - 2]["type"], "result");
    assert!(printed.iter().any(|m| m["type"] == "stream_event"));
    // The transcript holds the same messages, in the same order, without the stream events.
    let recorded: Vec<Value> = std::fs::read_to_string(&transcript)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|entry| entry["dir"] == "recv")
        .map(|entry| entry["msg"].clone())
        .collect();
    let without_stream: Vec<Value> = printed
        .into_iter()
        .filter(|m| m["type"] != "stream_event")
        .collect();
    assert_eq!(without_stream, recorded);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stats_count_each_message_type_and_every_message() {
    let offline = Offline::start(bash_script()).await;
    let out = output(offline.run(&["--output", "stats", "please run echo"]), None).await;
    assert!(out.status.success(), "{out:?}");
    let lines: Vec<(&str, u64)> = out
        .stdout
        .lines()
        .map(|l| {
            let (kind, count) = l.split_once('=').expect("TYPE=COUNT");
            (kind, count.parse().expect("a count"))
        })
        .collect();
    let (last, total) = *lines.last().unwrap();
    assert_eq!(last, "messages");
    let types = &lines[..lines.len() - 1];
    assert_eq!(types.iter().map(|(_, n)| n).sum::<u64>(), total);
    let count = |kind: &str| types.iter().find(|(k, _)| *k == kind).map(|(_, n)| *n);
    assert_eq!(count("result"), Some(1));
    assert_eq!(count("assistant"), Some(3), "{out:?}");
    assert_eq!(count("user"), Some(1), "one tool result: {out:?}");
    assert!(count("stream_event").unwrap_or(0) > 0);
    assert!(
        count("control_response").unwrap_or(0) >= 1,
        "the initialize answer"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_error_result_exits_non_zero() {
    let script = Script::new().rule(Rule::any().reply(Reply::error(
        400,
        "invalid_request_error",
        "the fake model refuses",
    )));
    let offline = Offline::start(script).await;
    let out = output(offline.run(&["hello"]), None).await;
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let closing = out.stderr.lines().last().unwrap();
    assert!(closing.starts_with("── error"), "{out:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resume_continues_the_session() {
    let script = Script::new()
        .rule(Rule::when(Match::user_text_contains("second")).reply(Reply::text("Second.")))
        .rule(Rule::any().reply(Reply::text("First.")));
    let offline = Offline::start(script).await;
    let first = output(offline.run(&["first question"]), None).await;
    assert!(first.status.success(), "{first:?}");
    let session = first.session();
    let second = output(
        offline.run(&["--resume", &session, "second question"]),
        None,
    )
    .await;
    assert!(second.status.success(), "{second:?}");
    assert_eq!(second.stdout, "Second.\n");
    assert_eq!(second.session(), session);
    // The model saw the whole conversation.
    let last = offline.model.message_requests().pop().unwrap();
    let sent = serde_json::to_string(last.messages()).unwrap();
    assert!(
        sent.contains("first question") && sent.contains("First."),
        "{sent}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fork_at_an_answer_starts_a_new_session_from_there() {
    let script = Script::new()
        .rule(Rule::when(Match::user_text_contains("fork")).reply(Reply::text("Forked answer.")))
        .rule(Rule::when(Match::user_text_contains("two")).reply(Reply::text("Answer two.")))
        .rule(Rule::any().reply(Reply::text("Answer one.")));
    let offline = Offline::start(script).await;
    let first = output(offline.run(&["--output", "json", "question one"]), None).await;
    assert!(first.status.success(), "{first:?}");
    let answer = first
        .stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|m| m["type"] == "assistant")
        .expect("an answer");
    let session = answer["session_id"].as_str().unwrap().to_owned();
    let at = answer["uuid"].as_str().unwrap().to_owned();
    let second = output(offline.run(&["--resume", &session, "question two"]), None).await;
    assert!(second.status.success(), "{second:?}");

    let new_id = "0b5e0000-1111-4222-8333-444455556666";
    let fork = output(
        offline.run(&[
            "--resume",
            &session,
            "--fork-at",
            &at,
            "--session-id",
            new_id,
            "the fork",
        ]),
        None,
    )
    .await;
    assert!(fork.status.success(), "{fork:?}");
    assert_eq!(fork.stdout, "Forked answer.\n");
    assert_eq!(fork.session(), new_id);
    // The fork kept the conversation up to answer one, and nothing after it.
    let last = offline.model.message_requests().pop().unwrap();
    let sent = serde_json::to_string(last.messages()).unwrap();
    assert!(
        sent.contains("question one") && sent.contains("Answer one."),
        "{sent}"
    );
    assert!(!sent.contains("question two"), "{sent}");
}

/// `byre run` against a model that never answers, once the CLI has asked it: the fake model,
/// the child and its pid.
async fn hanging_run() -> (Offline, tokio::process::Child, u32) {
    let script = Script::new().rule(Rule::any().reply(Reply::hang()));
    let offline = Offline::start(script).await;
    let child = offline
        .run(&["hang please"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id().unwrap();
    offline
        .model
        .wait_for_requests(1, RUN_TIMEOUT)
        .await
        .expect("the CLI asks the model");
    (offline, child, pid)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_interrupts_the_turn() {
    let (_offline, child, pid) = hanging_run().await;
    signal(pid, Signal::SIGINT);
    let out = tokio::time::timeout(RUN_TIMEOUT, child.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("⏹ interrupting"), "{stderr}");
    let closing = stderr.lines().last().unwrap();
    assert!(
        closing.starts_with("── error: error_during_execution (aborted_streaming)"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_ctrl_c_quits_and_stops_the_cli() {
    let (_offline, child, pid) = hanging_run().await;
    // Stop the CLI so that the first interrupt cannot end the turn before the second Ctrl-C.
    let cli = children(pid);
    assert_eq!(cli.len(), 1, "byre runs one CLI: {cli:?}");
    signal(cli[0], Signal::SIGSTOP);
    signal(pid, Signal::SIGINT);
    tokio::time::sleep(Duration::from_millis(500)).await;
    signal(pid, Signal::SIGINT);
    let out = tokio::time::timeout(RUN_TIMEOUT, child.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("⏹ quitting"), "{stderr}");
    // The CLI did not outlive byre.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while is_running(cli[0]) {
        assert!(tokio::time::Instant::now() < deadline, "the CLI still runs");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Sends a signal to one process.
fn signal(pid: u32, signal: Signal) {
    let target = Pid::from_raw(i32::try_from(pid).expect("a pid"));
    nix::sys::signal::kill(target, signal).unwrap_or_else(|e| panic!("kill {signal} {pid}: {e}"));
}

/// The child processes of `pid`.
/// The children of `pid`, but for the CLI's watchdog.
fn children(pid: u32) -> Vec<u32> {
    byre_testkit::descendants(pid)
        .into_iter()
        .filter(|(_, cmd)| cmd.contains("--output-format stream-json"))
        .map(|(pid, _)| pid)
        .collect()
}

/// Whether `pid` still runs (a zombie waiting to be reaped does not).
fn is_running(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X"),
        Err(_) => false,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompt_tool_and_mcp_flags_reach_the_cli() {
    let script = Script::new()
        .rule(
            Rule::when(Match::tool_result_contains("moo"))
                .reply(Reply::text("The server said moo.")),
        )
        .rule(
            Rule::when(Match::user_text_contains("please echo"))
                .reply(Reply::tool_use("mcp__cow__echo", json!({"text": "moo"}))),
        );
    let offline = Offline::start(script).await;
    let server = byre_testkit::mcp_stdio_bin().unwrap();
    let config = json!({"mcpServers": {"cow": {"type": "stdio", "command": server, "args": []}}});
    let out = output(
        offline.run(&[
            "--append-system-prompt",
            "Answer like a cow.",
            "--disallowed-tools",
            "WebFetch,WebSearch",
            "--max-turns",
            "4",
            "--mcp-config",
            &config.to_string(),
            "please echo",
        ]),
        None,
    )
    .await;
    assert!(out.status.success(), "{out:?}");
    assert_eq!(out.stdout, "The server said moo.\n");
    let requests = offline.model.message_requests();
    let system = serde_json::to_string(&requests[0].body["system"]).unwrap();
    assert!(system.contains("Answer like a cow."), "{system}");
    let tools = requests[0].tool_names();
    assert!(
        !tools.iter().any(|t| t == "WebFetch" || t == "WebSearch"),
        "{tools:?}"
    );
    assert_eq!(requests.last().unwrap().tool_results(), ["moo"]);
}

/// The recorded scenario's script: a Bash in the background, then the CLI's own turn that
/// reports it.
fn background_script() -> Script {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/scenarios/bash_background.json");
    Script::from_file(&path).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_waits_for_the_background_task_and_shows_it_end() {
    let offline = Offline::start(background_script()).await;
    let out = output(offline.run(&["please start the background job"]), None).await;
    assert!(out.status.success(), "{out:?}");
    // Both answers: the prompt's, and the one of the turn the CLI started when the job ended.
    assert!(
        out.stdout.contains("Started it in the background."),
        "{out:?}"
    );
    assert!(
        out.stdout.contains("The background job finished."),
        "{out:?}"
    );
    let lines: Vec<&str> = out.stderr.lines().collect();
    let completed = lines
        .iter()
        .position(|l| l.contains("background task completed"))
        .unwrap_or_else(|| panic!("no completion line: {}", out.stderr));
    let last_close = lines
        .iter()
        .rposition(|l| l.starts_with("── "))
        .expect("a closing line");
    assert!(completed < last_close, "{}", out.stderr);

    // With --no-wait it ends at the prompt's result.
    let offline = Offline::start(background_script()).await;
    let out = output(
        offline.run(&["--no-wait", "please start the background job"]),
        None,
    )
    .await;
    assert!(out.status.success(), "{out:?}");
    assert!(out.stdout.contains("Started it in the background."));
    assert!(
        !out.stdout.contains("The background job finished."),
        "{out:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn settings_agents_and_no_persistence_from_the_command_line() {
    let offline = Offline::start(bash_script()).await;
    let out = output(
        offline.run(&[
            "--settings",
            r#"{"permissions": {"deny": ["Write"]}}"#,
            "--agents",
            r#"{"reviewer": {"description": "Reviews", "prompt": "You review."}}"#,
            "--no-session-persistence",
            "--effort",
            "low",
            "--max-budget-usd",
            "5",
            "say hello",
        ]),
        None,
    )
    .await;
    assert!(out.status.success(), "{out:?}");
    let requests = offline.model.message_requests();
    let tools = requests[0].tool_names();
    assert!(!tools.iter().any(|t| t == "Write"), "{tools:?}");
    let projects = offline.env.home().join(".claude/projects");
    let kept = std::fs::read_dir(&projects)
        .into_iter()
        .flatten()
        .flatten()
        .flat_map(|d| std::fs::read_dir(d.path()).into_iter().flatten().flatten())
        .any(|f| f.path().extension().is_some_and(|e| e == "jsonl"));
    assert!(!kept, "a session file was written");
    // A value that is not JSON and not a file says so.
    let out = output(offline.run(&["--agents", "not-a-file", "hi"]), None).await;
    assert!(!out.status.success());
    assert!(out.stderr.contains("--agents not-a-file"), "{out:?}");
}

/// A model that answers with text and the structured output, then (after the CLI's note that
/// it was taken) says nothing more.
fn structured_script() -> Script {
    Script::new()
        .rule(Rule::when(Match::has_tool_result(true)).reply(Reply::text("")))
        .rule(Rule::any().reply(Reply::message(vec![
            Block::text("Counting the files."),
            Block::tool_use(
                "StructuredOutput",
                json!({"files": 3, "names": ["a", "b", "c"]}),
            ),
        ])))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn structured_output_nested_200_deep_ends_the_run_and_is_printed_whole() {
    // The real CLI writes it, in the tool call and in the result, without a nesting limit;
    // serde_json's `Value` holds 128 levels.
    let mut deep = json!(1);
    for _ in 0..200 {
        deep = json!({ "k": deep });
    }
    let script = Script::new()
        .rule(Rule::when(Match::has_tool_result(true)).reply(Reply::text("")))
        .rule(Rule::any().reply(Reply::message(vec![Block::tool_use(
            "StructuredOutput",
            deep.clone(),
        )])));
    let offline = Offline::start(script).await;
    let out = output(
        offline.run(&["--json-schema", r#"{"type":"object"}"#, "nest"]),
        None,
    )
    .await;
    assert!(out.status.success(), "{out:?}");
    let expected = format!("{}1{}", r#"{"k":"#.repeat(200), "}".repeat(200));
    assert_eq!(out.stdout.trim(), expected, "{out:?}");
    assert!(out.stderr.contains("do not fit the model"), "{out:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_schema_prints_the_structured_output_alone_on_stdout() {
    let offline = Offline::start(structured_script()).await;
    let schema = r#"{"type": "object", "properties": {"files": {"type": "integer"}, "names": {"type": "array", "items": {"type": "string"}}}, "required": ["files", "names"]}"#;
    let out = output(
        offline.run(&["--json-schema", schema, "count the files"]),
        None,
    )
    .await;
    assert!(out.status.success(), "{out:?}");
    let printed: Value = serde_json::from_str(out.stdout.trim()).expect("one JSON line");
    assert_eq!(printed, json!({"files": 3, "names": ["a", "b", "c"]}));
    assert_eq!(out.stdout.lines().count(), 1, "{out:?}");
    // The answer's text is still shown, on stderr.
    assert!(out.stderr.contains("Counting the files."), "{out:?}");
    // The schema reached the CLI: it offered the model the structured output tool.
    let tools = offline.model.message_requests()[0].tool_names();
    assert!(tools.iter().any(|t| t == "StructuredOutput"), "{tools:?}");
    // A schema that is not JSON says so.
    let out = output(offline.run(&["--json-schema", "{nope", "hi"]), None).await;
    assert!(!out.status.success());
    assert!(out.stderr.contains("--json-schema"), "{out:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_exports_its_spans_in_the_trace_of_its_traceparent() {
    let receiver = byre_testkit::OtlpReceiver::start().await.unwrap();
    let offline = Offline::start(Script::new().rule(Rule::any().reply(Reply::text("Hi.")))).await;
    let trace = "4bf92f3577b34da6a3ce929d0e0e4736";
    let mut command = offline.run(&["hello"]);
    command
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint())
        .env("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")
        .env("TRACEPARENT", format!("00-{trace}-00f067aa0ba902b7-01"));
    let out = output(command, None).await;
    assert!(out.status.success(), "{out:?}");
    // Exported before byre exits: no wait here.
    let spans = receiver.spans();
    let named = |name: &str| spans.iter().find(|s| s.name == name);
    let turn = named("invoke_agent claude-code").unwrap_or_else(|| panic!("{spans:#?}"));
    assert_eq!(turn.trace_id, trace, "{turn:?}");
    assert_eq!(turn.service, "byre");
    assert_eq!(
        turn.attribute("gen_ai.operation.name"),
        Some("invoke_agent")
    );
    let root = named("byre").expect("the root span");
    assert_eq!(
        root.parent_span_id, "00f067aa0ba902b7",
        "the caller's span is its parent"
    );
    let session = named("byre_session").expect("the session's span");
    assert_eq!(session.parent_span_id, root.span_id);
}
