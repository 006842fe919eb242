//! Hook callbacks against the real CLI: one session with a handler for many events, a turn
//! that runs a Bash call, a failing one, a refused Write and an MCP tool that asks an
//! elicitation form, then a model switch; and `/compact`, with its hooks and its boundary line.
//! Every input the CLI sent decodes to its typed event with no field byre does not model.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use byre_proto::{
    CliMessage, ElicitationRequest, ElicitationResponse, HookEvent, HookInput, HookOutput,
    PermissionResult, SystemMessage,
};
use byre_session::{Claude, Event};
use byre_testkit::{FakeModel, Match, Reply, Rule, Script};
use serde_json::json;

use crate::support::{options, turn};

/// The events registered. In this run the CLI (2.1.328) calls all but `SessionStart`,
/// `InstructionsLoaded`, `PermissionDenied` (a refusal by the permission handler does not
/// count) and `SessionEnd` (the session is closed by the host).
const EVENTS: [HookEvent; 16] = [
    HookEvent::SESSION_START,
    HookEvent::USER_PROMPT_SUBMIT,
    HookEvent::PRE_TOOL_USE,
    HookEvent::POST_TOOL_USE,
    HookEvent::POST_TOOL_USE_FAILURE,
    HookEvent::POST_TOOL_BATCH,
    HookEvent::PERMISSION_REQUEST,
    HookEvent::PERMISSION_DENIED,
    HookEvent::ELICITATION,
    HookEvent::ELICITATION_RESULT,
    HookEvent::STOP,
    HookEvent::INSTRUCTIONS_LOADED,
    HookEvent::NOTIFICATION,
    HookEvent::PRE_MODEL_SWITCH,
    HookEvent::POST_MODEL_SWITCH,
    HookEvent::SESSION_END,
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hook_inputs_from_the_real_cli_are_fully_typed() {
    let note = std::env::temp_dir().join(format!("byre-hooks-{}.txt", std::process::id()));
    let script = Script::new()
        // The probe the CLI sends to a model it switches to.
        .rule(Rule::when(Match::stream(false)).reply(Reply::text("Hi")))
        .rule(
            Rule::when(Match::tool_result_contains("elicitation:")).reply(Reply::text("All done.")),
        )
        .rule(
            Rule::when(Match::tool_result_contains("Writing is refused")).reply(Reply::tool_use(
                "mcp__asker__ask",
                json!({"question": "Which colour?"}),
            )),
        )
        .rule(
            Rule::when(Match::tool_result_contains("Exit code 3")).reply(Reply::tool_use(
                "Write",
                json!({"file_path": note, "content": "x"}),
            )),
        )
        .rule(
            Rule::when(Match::tool_result_contains("first-step")).reply(Reply::tool_use(
                "Bash",
                json!({"command": "echo second && exit 3", "description": "Fail"}),
            )),
        )
        .rule(
            Rule::when(Match::user_text_contains("run the tools")).reply(Reply::tool_use(
                "Bash",
                json!({"command": "echo first-step", "description": "Step"}),
            )),
        );
    let model = FakeModel::start(script).await.unwrap();
    let (mut options, _env) = options(&model);
    options = options.permission_mode("default");
    let server = byre_testkit::mcp_stdio_bin().unwrap();
    options = options.mcp_config(
        "asker",
        json!({"type": "stdio", "command": server, "args": []}),
    );
    let seen: Arc<Mutex<Vec<HookInput>>> = Arc::default();
    for event in EVENTS {
        let seen = seen.clone();
        options = options.hook(event, move |input, _| {
            seen.lock().unwrap().push(input);
            async { Ok(HookOutput::default()) }
        });
    }
    let options = options
        .can_use_tool(|request| async move {
            Ok(if request.tool_name == "Write" {
                PermissionResult::deny("Writing is refused.")
            } else {
                PermissionResult::allow(request.input.clone())
            })
        })
        .on_request(|_: ElicitationRequest| async {
            Ok(ElicitationResponse::accept(json!({"answer": "Blue"})))
        });
    let (claude, mut events) = Claude::start(options).await.unwrap();
    let result = turn(&claude, &mut events, "please run the tools").await;
    assert_eq!(result.result.as_deref(), Some("All done."));
    let model_now = claude.set_model(Some("haiku")).await.unwrap();
    assert!(model_now.is_some_and(|m| m.starts_with("claude-haiku")));
    let session = claude.session_id().unwrap();
    claude.close().await.unwrap();
    assert!(!note.exists(), "the refused Write did not run");

    let seen = seen.lock().unwrap().clone();
    let fired: BTreeSet<&str> = seen.iter().filter_map(HookInput::event).collect();
    let expected = [
        "UserPromptSubmit",
        "PreToolUse",
        "PostToolUse",
        "PostToolUseFailure",
        "PostToolBatch",
        "PermissionRequest",
        "Elicitation",
        "ElicitationResult",
        "Notification",
        "Stop",
        "PreModelSwitch",
        "PostModelSwitch",
    ];
    for event in expected {
        assert!(fired.contains(event), "{event} did not fire: {fired:?}");
    }
    for input in &seen {
        byre_testkit::check_modelled("a hook input", input);
        assert_eq!(input.session_id(), Some(session.as_str()), "{input:?}");
    }

    // What the typed inputs say.
    let first = |event: &str| seen.iter().find(|i| i.event() == Some(event)).unwrap();
    let HookInput::UserPromptSubmit(prompt) = first("UserPromptSubmit") else {
        unreachable!()
    };
    assert_eq!(prompt.prompt.as_deref(), Some("please run the tools"));
    let HookInput::PostToolUseFailure(failure) = first("PostToolUseFailure") else {
        unreachable!()
    };
    assert!(
        failure.error.as_deref().is_some_and(|e| e.contains('3')),
        "{failure:?}"
    );
    let asked_write = seen.iter().any(|i| {
        matches!(i, HookInput::PermissionRequest(r) if r.tool_name == "Write"
            && r.permission_suggestions.as_ref().is_some_and(|s| !s.is_empty()))
    });
    assert!(
        asked_write,
        "a PermissionRequest for Write, with suggestions"
    );
    let HookInput::Elicitation(form) = first("Elicitation") else {
        unreachable!()
    };
    assert_eq!(form.mcp_server_name.as_deref(), Some("asker"));
    assert_eq!(form.message.as_deref(), Some("Which colour?"));
    let HookInput::ElicitationResult(answer) = first("ElicitationResult") else {
        unreachable!()
    };
    assert_eq!(answer.action.as_deref(), Some("accept"));
    assert_eq!(answer.content, Some(json!({"answer": "Blue"})));
    let HookInput::Stop(stop) = first("Stop") else {
        unreachable!()
    };
    assert_eq!(stop.last_assistant_message.as_deref(), Some("All done."));
    let HookInput::PostModelSwitch(switch) = first("PostModelSwitch") else {
        unreachable!()
    };
    assert_eq!(switch.requested_model.as_deref(), Some("haiku"));
    assert!(switch
        .to_model
        .as_deref()
        .is_some_and(|m| m.starts_with("claude-haiku")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compact_calls_its_hooks_and_marks_the_boundary() {
    let script = Script::new()
        // The summary request is not streamed.
        .rule(Rule::when(Match::stream(false)).reply(Reply::text("Summary: we said hello.")))
        .rule(Rule::any().reply(Reply::text("Hello there.")));
    let model = FakeModel::start(script).await.unwrap();
    let (mut options, _env) = options(&model);
    let seen: Arc<Mutex<Vec<HookInput>>> = Arc::default();
    for event in [
        HookEvent::PRE_COMPACT,
        HookEvent::POST_COMPACT,
        HookEvent::SESSION_START,
    ] {
        let seen = seen.clone();
        options = options.hook(event, move |input, _| {
            seen.lock().unwrap().push(input);
            async { Ok(HookOutput::default()) }
        });
    }
    let (claude, mut events) = Claude::start(options).await.unwrap();
    turn(&claude, &mut events, "hello").await;
    claude.send("/compact").unwrap();
    let (lines, result) = crate::support::until_result(&mut events).await;
    claude.close().await.unwrap();
    assert_eq!(result.is_error, Some(false), "{result:?}");

    // The boundary, typed, pointing back at the conversation before it.
    let boundary = lines.iter().find_map(|e| match e {
        Event::Message(CliMessage::System(SystemMessage::CompactBoundary(b))) => Some(b),
        _ => None,
    });
    let boundary = boundary.expect("a compact_boundary line");
    assert!(boundary.logical_parent_uuid.is_some(), "{boundary:?}");
    assert_eq!(
        boundary.compact_metadata.as_ref().unwrap()["trigger"],
        "manual"
    );
    for event in &lines {
        if let Event::Message(message) = event {
            byre_testkit::check_modelled("a compacting session", message);
        }
    }

    // PreCompact, then SessionStart (source `compact`), then PostCompact, all fully typed.
    let seen = seen.lock().unwrap().clone();
    let order: Vec<&str> = seen.iter().filter_map(HookInput::event).collect();
    assert_eq!(order, ["PreCompact", "SessionStart", "PostCompact"]);
    for input in &seen {
        byre_testkit::check_modelled("a compaction hook input", input);
    }
    let HookInput::SessionStart(start) = &seen[1] else {
        unreachable!()
    };
    assert_eq!(start.source.as_deref(), Some("compact"));
}
