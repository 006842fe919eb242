//! Tests of hook inputs and outputs, on callbacks seen in transcripts.

use serde_json::{json, Value};

use super::*;
use crate::values::PermissionMode;
use crate::wire::{FindUnknown, Number};

/// Decodes `text`, checks it is fully typed and encodes back to the same value.
fn decode(text: &str) -> HookInput {
    let original: Value = serde_json::from_str(text).unwrap();
    let input: HookInput = serde_json::from_str(text).unwrap();
    assert!(input.is_fully_typed(), "{:?}", input.unknown_paths());
    assert_eq!(serde_json::to_value(&input).unwrap(), original);
    input
}

// From testdata/transcripts/cli-2.1.328/s03a_stop_hook_block.jsonl.
const STOP: &str = concat!(
    r#"{"session_id": "e824eb88-cb51-4cbb-bfbc-a01d2b8d486c", "#,
    r#""transcript_path": "/home/tester/.claude/projects/-srv-work/"#,
    r#"e824eb88-cb51-4cbb-bfbc-a01d2b8d486c.jsonl", "cwd": "/srv/work", "#,
    r#""prompt_id": "2a4e3e80-1b44-4d8e-92dc-7405a3eb1374", "#,
    r#""permission_mode": "bypassPermissions", "effort": {"level": "medium"}, "#,
    r#""hook_event_name": "Stop", "stop_hook_active": true, "#,
    r#""last_assistant_message": "Continuing because the Stop hook asked.", "#,
    r#""background_tasks": [], "session_crons": []}"#,
);

// From testdata/transcripts/cli-2.1.328/s03b_pretooluse_deny.jsonl.
const PRE_TOOL_USE: &str = concat!(
    r#"{"session_id": "ba9b850b-a579-40f4-89fe-4f3b7da28faf", "#,
    r#""transcript_path": "/home/tester/.claude/projects/-srv-work/"#,
    r#"ba9b850b-a579-40f4-89fe-4f3b7da28faf.jsonl", "cwd": "/srv/work", "#,
    r#""prompt_id": "13016d01-72f6-45ad-bdce-dd00982aedec", "#,
    r#""permission_mode": "bypassPermissions", "effort": {"level": "medium"}, "#,
    r#""hook_event_name": "PreToolUse", "tool_name": "Bash", "#,
    r#""tool_input": {"command": "echo hi", "description": "Print hi"}, "#,
    r#""tool_use_id": "toolu_mock0002"}"#,
);

// The transcripts hold no PostToolUse or UserPromptSubmit callback: these two follow the
// key sets observed with CLI 2.1.328, in the same order.
const POST_TOOL_USE: &str = concat!(
    r#"{"session_id": "1e468b64-28e1-4fa4-a661-2d591770151f", "#,
    r#""transcript_path": "/home/tester/.claude/projects/-srv-work/"#,
    r#"1e468b64-28e1-4fa4-a661-2d591770151f.jsonl", "cwd": "/srv/work", "#,
    r#""prompt_id": "5d0f3b1e-0c57-4d43-9a0e-2b8a3e6f7c11", "#,
    r#""permission_mode": "bypassPermissions", "effort": {"level": "medium"}, "#,
    r#""hook_event_name": "PostToolUse", "tool_name": "Bash", "#,
    r#""tool_input": {"command": "echo hi", "description": "Print hi"}, "#,
    r#""tool_response": {"stdout": "hi", "stderr": "", "interrupted": false, "#,
    r#""isImage": false, "noOutputExpected": false}, "tool_use_id": "toolu_mock0001", "#,
    r#""duration_ms": 14}"#,
);

const USER_PROMPT_SUBMIT: &str = concat!(
    r#"{"session_id": "1e468b64-28e1-4fa4-a661-2d591770151f", "#,
    r#""transcript_path": "/home/tester/.claude/projects/-srv-work/"#,
    r#"1e468b64-28e1-4fa4-a661-2d591770151f.jsonl", "cwd": "/srv/work", "#,
    r#""prompt_id": "5d0f3b1e-0c57-4d43-9a0e-2b8a3e6f7c11", "#,
    r#""permission_mode": "bypassPermissions", "hook_event_name": "UserPromptSubmit", "#,
    r#""prompt": "Run echo hi"}"#,
);

#[test]
fn stop_input() {
    let input = decode(STOP);
    assert_eq!(input.event(), Some("Stop"));
    assert_eq!(input.hook_event(), Some(HookEvent::STOP));
    assert_eq!(
        input.session_id(),
        Some("e824eb88-cb51-4cbb-bfbc-a01d2b8d486c")
    );
    assert_eq!(input.cwd(), Some("/srv/work"));
    assert_eq!(input.tool_name(), None);
    let HookInput::Stop(stop) = input else {
        panic!("not Stop")
    };
    assert_eq!(stop.stop_hook_active, Some(true));
    assert_eq!(
        stop.permission_mode,
        Some(PermissionMode::BYPASS_PERMISSIONS)
    );
    assert_eq!(stop.effort, Some(json!({"level": "medium"})));
    assert_eq!(stop.background_tasks, Some(vec![]));
    assert_eq!(stop.session_crons, Some(vec![]));
    assert!(stop.extra.is_empty());
}

#[test]
fn pre_tool_use_input() {
    let input = decode(PRE_TOOL_USE);
    assert_eq!(input.tool_name(), Some("Bash"));
    assert_eq!(
        input.tool_input(),
        Some(&json!({"command": "echo hi", "description": "Print hi"}))
    );
    let HookInput::PreToolUse(pre) = input else {
        panic!("not PreToolUse")
    };
    assert_eq!(pre.tool_use_id.as_deref(), Some("toolu_mock0002"));
    assert_eq!(
        pre.prompt_id.as_deref(),
        Some("13016d01-72f6-45ad-bdce-dd00982aedec")
    );
    assert!(pre.extra.is_empty());
}

#[test]
fn bash_command_of_tool_events() {
    assert_eq!(decode(PRE_TOOL_USE).bash_command(), Some("echo hi"));
    assert_eq!(decode(POST_TOOL_USE).bash_command(), Some("echo hi"));
    assert_eq!(decode(STOP).bash_command(), None);
    let read = PRE_TOOL_USE
        .replace(r#""tool_name": "Bash""#, r#""tool_name": "Read""#)
        .replace(r#""command": "echo hi""#, r#""file_path": "/etc/hosts""#);
    assert_eq!(decode(&read).tool_name(), Some("Read"));
    assert_eq!(decode(&read).bash_command(), None);
    let request: crate::CanUseToolRequest = serde_json::from_value(json!({
        "subtype": "can_use_tool", "tool_name": "Bash",
        "input": {"command": "rm -rf target"}, "tool_use_id": "toolu_1"
    }))
    .unwrap();
    assert_eq!(request.bash_command(), Some("rm -rf target"));
}

#[test]
fn post_tool_use_input() {
    let HookInput::PostToolUse(post) = decode(POST_TOOL_USE) else {
        panic!("not PostToolUse")
    };
    assert_eq!(post.tool_name, "Bash");
    assert_eq!(post.duration_ms, Some(Number::from(14)));
    assert_eq!(post.tool_response.as_ref().unwrap()["stdout"], "hi");
    assert!(post.extra.is_empty());
}

#[test]
fn user_prompt_submit_input() {
    let HookInput::UserPromptSubmit(p) = decode(USER_PROMPT_SUBMIT) else {
        panic!("not UserPromptSubmit")
    };
    assert_eq!(p.prompt.as_deref(), Some("Run echo hi"));
    assert_eq!(p.effort, None);
    assert!(p.extra.is_empty());
}

#[test]
fn unknown_event_is_kept() {
    let text = r#"{"session_id":"s","hook_event_name":"SomethingNew","x":1}"#;
    let input: HookInput = serde_json::from_str(text).unwrap();
    let HookInput::Unknown(u) = &input else {
        panic!("not Unknown")
    };
    assert_eq!(u.get_str("hook_event_name"), Some("SomethingNew"));
    assert_eq!(input.event(), Some("SomethingNew"));
    assert_eq!(input.session_id(), Some("s"));
    assert_eq!(
        serde_json::to_value(&input).unwrap(),
        serde_json::from_str::<Value>(text).unwrap()
    );
}

#[test]
fn outputs_are_built_by_chained_setters() {
    let output = HookOutput::none()
        .reason("checked")
        .continue_(false)
        .suppress_output()
        .system_message("stopping here");
    assert_eq!(
        serde_json::to_value(&output).unwrap(),
        json!({
            "continue": false,
            "suppressOutput": true,
            "systemMessage": "stopping here",
            "reason": "checked",
        })
    );
}

#[test]
fn an_interrupt_input_is_typed() {
    let input: HookInput = serde_json::from_value(json!({
        "session_id": "s",
        "hook_event_name": "Interrupt",
        "source": "user",
        "reason": "stop",
        "via": "client",
    }))
    .unwrap();
    let HookInput::Interrupt(interrupt) = &input else {
        panic!("not Interrupt: {input:?}")
    };
    assert_eq!(interrupt.source.as_deref(), Some("user"));
    assert_eq!(interrupt.reason.as_deref(), Some("stop"));
    assert_eq!(interrupt.via.as_deref(), Some("client"));
    assert!(interrupt.extra.is_empty());
    assert_eq!(input.event(), Some("Interrupt"));
}

#[test]
fn all_events_named() {
    assert_eq!(HookEvent::KNOWN.len(), 35);
    for name in HookEvent::KNOWN {
        let input: HookInput =
            serde_json::from_value(json!({"hook_event_name": name, "tool_name": "T"})).unwrap();
        assert!(
            !matches!(input, HookInput::Unknown(_)),
            "{name} has no HookInput variant"
        );
    }
}

#[test]
fn matcher_writes_null() {
    let m = HookMatcher::new(None, vec!["hook_post".into()]);
    assert_eq!(
        serde_json::to_value(&m).unwrap(),
        json!({"matcher": null, "hookCallbackIds": ["hook_post"]})
    );
    let m = HookMatcher::new(Some("Bash".into()), vec!["hook_pre".into()]);
    assert_eq!(
        serde_json::to_string(&m).unwrap(),
        r#"{"matcher":"Bash","hookCallbackIds":["hook_pre"]}"#
    );
}

#[test]
fn output_constructors() {
    let s = |o: &HookOutput| serde_json::to_string(o).unwrap();
    assert_eq!(s(&HookOutput::none()), "{}");
    assert_eq!(
        s(&HookOutput::block("x")),
        r#"{"decision":"block","reason":"x"}"#
    );
    assert_eq!(
        s(&HookOutput::deny_tool("r")),
        concat!(
            r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","#,
            r#""permissionDecision":"deny","permissionDecisionReason":"r"}}"#,
        )
    );
    assert_eq!(
        s(&HookOutput::allow_tool(None)),
        r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}"#
    );
    assert_eq!(
        s(&HookOutput::stop("done")),
        r#"{"continue":false,"stopReason":"done"}"#
    );
    assert_eq!(
        s(&HookOutput::async_(Some(5000))),
        r#"{"async":true,"asyncTimeout":5000}"#
    );
    assert_eq!(
        s(&HookOutput::with_context(HookEvent::SESSION_START, "ctx")),
        r#"{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"ctx"}}"#
    );
    assert_eq!(
        s(&HookOutput::with_context("Stop", "more")),
        r#"{"hookSpecificOutput":{"hookEventName":"Stop","additionalContext":"more"}}"#
    );
    let denied = HookSpecificOutput::context(HookEvent::PERMISSION_DENIED, "c");
    assert!(matches!(
        &denied,
        HookSpecificOutput::PermissionDenied(d) if d.extra["additionalContext"] == "c"
    ));
    let other = HookOutput::with_context("NewEvent", "c");
    assert_eq!(
        serde_json::to_value(&other).unwrap(),
        json!({"hookSpecificOutput": {"hookEventName": "NewEvent", "additionalContext": "c"}})
    );
}

#[test]
fn outputs_from_transcripts_round_trip() {
    for text in [
        r#"{}"#,
        r#"{"decision": "block", "reason": "keep going"}"#,
        concat!(
            r#"{"hookSpecificOutput": {"hookEventName": "PreToolUse", "#,
            r#""permissionDecision": "deny", "#,
            r#""permissionDecisionReason": "Bash is blocked by the host"}}"#,
        ),
        concat!(
            r#"{"continue": false, "async": true, "#,
            r#""hookSpecificOutput": {"hookEventName": "PermissionRequest", "#,
            r#""decision": {"behavior": "allow", "updatedInput": {}}}}"#,
        ),
    ] {
        let out: HookOutput = serde_json::from_str(text).unwrap();
        assert!(out.is_fully_typed(), "{text}");
        assert_eq!(
            serde_json::to_value(&out).unwrap(),
            serde_json::from_str::<Value>(text).unwrap()
        );
    }
    let out: HookOutput = serde_json::from_str(r#"{"continue": false, "async": true}"#).unwrap();
    assert_eq!((out.continue_, out.async_), (Some(false), Some(true)));
}
