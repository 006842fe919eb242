//! Hand-written edge cases: nulls, numbers, unicode, key order, unknown tags and bad lines.

use byre_proto::{
    AnyMessage, CliMessage, CliRequest, ContentBlock, ControlRequestBody, ControlResponse,
    ControlResponseBody, DecodeError, DecodeErrorKind, Delta, Direction, EmptyResponse,
    FindUnknown, HookInput, HostMessage, HostRequest, InitializeResponse, JsonRpcMessage,
    MessageContent, PermissionMode, ResultSubtype, SetMaxThinkingTokensRequest, StopReason,
    StreamEvent, SystemMessage, TerminalReason,
};
use serde_json::{json, Value};

use crate::support::{corpus_root, read_transcript, Body};

/// Decodes a CLI line, checks it re-encodes to the same value, and returns it.
fn cli(line: &str) -> CliMessage {
    let message = CliMessage::from_slice(line.as_bytes()).unwrap_or_else(|e| panic!("{line}: {e}"));
    let original: Value = serde_json::from_str(line).expect("test line is JSON");
    assert_eq!(
        message.to_value().expect("a value"),
        original,
        "{line} does not round-trip"
    );
    message
}

/// Decodes a host line, checks it re-encodes to the same value, and returns it.
fn host(line: &str) -> HostMessage {
    let message =
        HostMessage::from_slice(line.as_bytes()).unwrap_or_else(|e| panic!("{line}: {e}"));
    let original: Value = serde_json::from_str(line).expect("test line is JSON");
    assert_eq!(
        message.to_value().expect("a value"),
        original,
        "{line} does not round-trip"
    );
    message
}

/// The `msg` of transcript line `line_no` of `file` (under `cli-2.1.328`).
fn corpus_line(file: &str, line_no: usize) -> Vec<u8> {
    let path = corpus_root().join("cli-2.1.328").join(file);
    let entry = read_transcript(&path)
        .into_iter()
        .find(|e| e.line_no == line_no)
        .unwrap_or_else(|| panic!("{file} has no line {line_no}"));
    match entry.body {
        Body::Msg(bytes) => bytes,
        other => panic!("{file}:{line_no} holds {other:?}, not a msg"),
    }
}

// ---------------------------------------------------------------------------------------------
// null and missing

#[test]
fn null_and_missing_optional_fields_stay_distinct() {
    let with_null = r#"{"type":"user","message":{"role":"user","content":"hi"},"parent_tool_use_id":null,"session_id":""}"#;
    let missing = r#"{"type":"user","message":{"role":"user","content":"hi"},"session_id":""}"#;

    let HostMessage::User(a) = host(with_null) else {
        panic!("not a user message")
    };
    let HostMessage::User(b) = host(missing) else {
        panic!("not a user message")
    };
    assert_eq!(a.parent_tool_use_id, None);
    assert_eq!(b.parent_tool_use_id, None);
    assert!(a.is_null("parent_tool_use_id"));
    assert!(!b.is_null("parent_tool_use_id"));
    assert_ne!(a, b, "null and missing must decode differently");

    let a_out = HostMessage::User(a).to_value().expect("a value");
    let b_out = HostMessage::User(b).to_value().expect("a value");
    assert_eq!(a_out["parent_tool_use_id"], Value::Null);
    assert!(a_out
        .as_object()
        .unwrap()
        .contains_key("parent_tool_use_id"));
    assert!(!b_out
        .as_object()
        .unwrap()
        .contains_key("parent_tool_use_id"));
}

#[test]
fn parent_tool_use_id_null_stays_null_on_cli_lines() {
    let line = r#"{"type":"assistant","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"x"}],"stop_reason":null,"stop_sequence":null},"parent_tool_use_id":null,"session_id":"s","uuid":"u"}"#;
    let message = cli(line);
    assert_eq!(message.parent_tool_use_id(), None);
    let CliMessage::Assistant(a) = &message else {
        panic!("not assistant: {message:?}")
    };
    assert_eq!(a.message.stop_reason, None);
    assert!(a.message.is_null("stop_reason"));
    assert!(!a.message.is_null("usage"));
    let out = message.to_value().expect("a value");
    assert_eq!(out["parent_tool_use_id"], Value::Null);
    assert_eq!(out["message"]["stop_reason"], Value::Null);
    assert_eq!(out["message"]["stop_sequence"], Value::Null);

    let in_subagent = line.replace(
        r#""parent_tool_use_id":null"#,
        r#""parent_tool_use_id":"toolu_9""#,
    );
    assert_eq!(cli(&in_subagent).parent_tool_use_id(), Some("toolu_9"));
}

#[test]
fn empty_content_round_trips() {
    let HostMessage::User(u) = host(r#"{"type":"user","message":{"role":"user","content":[]}}"#)
    else {
        panic!("not a user message")
    };
    assert_eq!(u.message.content, MessageContent::Blocks(vec![]));

    let HostMessage::User(u) = host(r#"{"type":"user","message":{"role":"user","content":""}}"#)
    else {
        panic!("not a user message")
    };
    assert_eq!(u.message.content, MessageContent::Text(Default::default()));
    assert_eq!(u.message.content.text(), "");

    let CliMessage::Assistant(a) = cli(r#"{"type":"assistant","message":{"content":[]}}"#) else {
        panic!("not assistant")
    };
    assert!(a.message.content.is_empty());

    let CliMessage::User(u) = cli(
        r#"{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[]}]}}"#,
    ) else {
        panic!("not a user message")
    };
    let MessageContent::Blocks(blocks) = &u.message.content else {
        panic!("not blocks")
    };
    let ContentBlock::ToolResult(r) = &blocks[0] else {
        panic!("not a tool result")
    };
    assert_eq!(r.content, Some(MessageContent::Blocks(vec![])));
}

// ---------------------------------------------------------------------------------------------
// numbers

#[test]
fn integer_cost_stays_an_integer() {
    let message = cli(r#"{"type":"result","subtype":"success","total_cost_usd":0}"#);
    let CliMessage::Result(r) = &message else {
        panic!("not a result")
    };
    let cost = r.total_cost_usd.as_ref().expect("cost");
    assert!(cost.is_u64(), "0 must stay an integer, got {cost:?}");
    let text = String::from_utf8(message.to_vec()).unwrap();
    assert!(text.contains(r#""total_cost_usd":0"#), "{text}");
    assert!(!text.contains(r#""total_cost_usd":0.0"#), "{text}");
}

#[test]
fn small_and_long_floats_round_trip() {
    for cost in [
        "1e-7",
        "0.30000000000000004",
        "0.0009000000000000001",
        "1.5e300",
        "5e-324",
    ] {
        let line = format!(r#"{{"type":"result","subtype":"success","total_cost_usd":{cost}}}"#);
        let message = cli(&line);
        let CliMessage::Result(r) = &message else {
            panic!("not a result")
        };
        let expected: f64 = cost.parse().unwrap();
        let got = r.total_cost_usd.as_ref().and_then(|n| n.as_f64()).unwrap();
        assert_eq!(got.to_bits(), expected.to_bits(), "{cost}");
        let again = CliMessage::from_slice(&message.to_vec()).unwrap();
        assert_eq!(again, message, "{cost} changes across encode/decode");
    }
}

#[test]
fn a_real_corpus_cost_is_stable_across_re_encoding() {
    // s01's first result says 0.00045000000000000004. Whatever f64 the decoder picks for it,
    // decoding the re-encoded line must give the same message again.
    let line = r#"{"type":"result","subtype":"success","total_cost_usd":0.00045000000000000004}"#;
    let first = cli(line);
    let second = CliMessage::from_slice(&first.to_vec()).unwrap();
    assert_eq!(second, first);
    assert_eq!(second.to_vec(), first.to_vec());
}

/// serde_json's default float parser can be one ULP off (its `float_roundtrip` feature fixes
/// that), so the CLI's `0.00045000000000000004` comes back as `0.00045`: equal as a
/// `serde_json::Value` parsed the same way, but not the number the CLI sent.
#[test]

fn floats_decode_to_the_nearest_f64() {
    for cost in ["0.00045000000000000004", "0.0012000000000000001"] {
        let line = format!(r#"{{"type":"result","subtype":"success","total_cost_usd":{cost}}}"#);
        let CliMessage::Result(r) = cli(&line) else {
            panic!("not a result")
        };
        let got = r.total_cost_usd.as_ref().and_then(|n| n.as_f64()).unwrap();
        assert_eq!(
            got.to_bits(),
            cost.parse::<f64>().unwrap().to_bits(),
            "{cost}"
        );
        assert_eq!(r.total_cost_usd.unwrap().to_string(), cost);
    }
}

#[test]
fn u64_max_token_counts_decode_typed() {
    let max = u64::MAX;
    let line = format!(
        r#"{{"type":"result","subtype":"success","num_turns":{max},"usage":{{"input_tokens":{max},"output_tokens":0}},"modelUsage":{{"m":{{"inputTokens":{max}}}}}}}"#
    );
    let message = cli(&line);
    let CliMessage::Result(r) = &message else {
        panic!("not a result: {message:?}")
    };
    assert_eq!(r.num_turns, Some(u64::MAX));
    assert_eq!(r.usage.as_ref().unwrap().input_tokens, Some(u64::MAX));
    assert_eq!(
        r.model_usage.as_ref().unwrap()["m"].input_tokens,
        Some(u64::MAX)
    );
    assert!(message.is_fully_typed());
}

#[test]
fn a_field_of_another_type_is_a_misfit_and_the_line_keeps_its_type() {
    for (line, path) in [
        (
            r#"{"type":"result","subtype":"success","num_turns":-1,"session_id":"s"}"#,
            "/num_turns",
        ),
        (
            r#"{"type":"result","subtype":"success","usage":{"input_tokens":-5}}"#,
            "/usage/input_tokens",
        ),
        (
            r#"{"type":"stream_event","event":{"type":"content_block_stop","index":-1}}"#,
            "/event/index",
        ),
        (
            r#"{"type":"result","subtype":"success","num_turns":1.5}"#,
            "/num_turns",
        ),
        (
            r#"{"type":"result","subtype":"success","num_turns":"3"}"#,
            "/num_turns",
        ),
    ] {
        let decoded = CliMessage::decode(line.as_bytes()).expect("a message");
        let original: Value = serde_json::from_str(line).unwrap();
        assert!(
            !matches!(decoded.message, CliMessage::Unknown(_)),
            "{line} keeps its type: {:?}",
            decoded.message
        );
        assert_eq!(decoded.message.kind(), original["type"].as_str().unwrap());
        assert!(decoded.message.is_fully_typed(), "{line}");
        assert_eq!(decoded.misfits.len(), 1, "{:?}", decoded.misfits);
        assert!(
            decoded.misfits[0].starts_with(&format!("{path} (")),
            "{:?}",
            decoded.misfits
        );
        assert_eq!(decoded.message.misfit_paths(), decoded.misfits);
        assert_eq!(decoded.message.to_value().unwrap(), original, "{line}");
    }
    // What fits is still typed around the misfit.
    let message = cli(r#"{"type":"result","subtype":"success","num_turns":-1,"session_id":"s"}"#);
    assert_eq!(message.session_id(), Some("s"));
    let CliMessage::Result(r) = &message else {
        panic!("{message:?}")
    };
    assert_eq!(r.num_turns, None);
    let misfit = r.extra.misfit("num_turns").expect("kept");
    assert_eq!(misfit.raw.as_ref().map(|r| r.get()), Some("-1"));
}

#[test]
fn integer_edges_in_untyped_values_round_trip() {
    let line = format!(
        r#"{{"type":"user","message":{{"role":"user","content":"x"}},"tool_use_result":{{"min":{},"max":{},"neg_zero":-0.0,"big":1e308}}}}"#,
        i64::MIN,
        u64::MAX
    );
    let CliMessage::User(u) = cli(&line) else {
        panic!("not a user message")
    };
    let result = u.tool_use_result.as_ref().unwrap();
    assert_eq!(result["min"].as_i64(), Some(i64::MIN));
    assert_eq!(result["max"].as_u64(), Some(u64::MAX));
}

#[test]
fn deeply_nested_values_decode() {
    let depth = 100;
    let line = format!(
        r#"{{"type":"user","message":{{"role":"user","content":"x"}},"tool_use_result":{}{}}}"#,
        "[".repeat(depth),
        "]".repeat(depth)
    );
    let CliMessage::User(u) = cli(&line) else {
        panic!("not a user message")
    };
    let mut v = u.tool_use_result.as_ref().unwrap();
    let mut seen = 0;
    while let Some(inner) = v.as_array().and_then(|a| a.first()) {
        v = inner;
        seen += 1;
    }
    assert_eq!(seen, depth - 1);
}

// ---------------------------------------------------------------------------------------------
// unicode

#[test]
fn unicode_escapes_round_trip() {
    let line = r#"{"type":"user","message":{"role":"user","content":"caf\u00e9 \ud83d\ude00 nul:\u0000 tab:\t quote:\" back:\\ ls:\u2028"},"session_id":"\u00e9"}"#;
    let message = host(line);
    let HostMessage::User(u) = &message else {
        panic!("not a user message")
    };
    assert_eq!(
        u.message.content.text(),
        "café 😀 nul:\0 tab:\t quote:\" back:\\ ls:\u{2028}"
    );
    assert_eq!(u.session_id.as_deref(), Some("é"));
    let again = HostMessage::from_slice(&message.to_vec()).unwrap();
    assert_eq!(again, message);
}

#[test]
fn escaped_keys_and_tags_are_recognised() {
    // `\u0074ype` is `type`, `\u0075ser` is `user`: the decoder must unescape keys and tags.
    let message = host(r#"{"\u0074ype":"\u0075ser","message":{"role":"user","content":"x"}}"#);
    assert!(matches!(message, HostMessage::User(_)), "{message:?}");
}

#[test]
fn a_lone_surrogate_decodes_as_the_replacement_character() {
    // What `JSON.stringify` writes for a string cut inside a surrogate pair: valid JSON.
    let line = r#"{"type":"user","message":{"role":"user","content":"cut \ud83d"}}"#;
    let message = HostMessage::from_slice(line.as_bytes()).unwrap();
    let HostMessage::User(user) = &message else {
        panic!("{message:?}");
    };
    assert_eq!(user.message.content.text(), "cut \u{fffd}");
    // A result whose text ends in one is still the turn's result.
    let result = r#"{"type":"result","subtype":"success","is_error":false,"result":"a \udc00b"}"#;
    let CliMessage::Result(r) = CliMessage::from_slice(result.as_bytes()).unwrap() else {
        panic!("a result");
    };
    assert_eq!(r.result.as_deref(), Some("a \u{fffd}b"));
    // A well-formed pair is kept.
    let pair = r#"{"type":"result","subtype":"success","is_error":false,"result":"\ud83d\ude00"}"#;
    let CliMessage::Result(r) = cli(pair) else {
        panic!("a result");
    };
    assert_eq!(r.result.as_deref(), Some("\u{1f600}"));
}

// ---------------------------------------------------------------------------------------------
// key order

/// The start-up failure of s09b_resume_bad_id.jsonl, `type` first.
const STARTUP_FAILURE: &str = r#"{"type": "result", "subtype": "error_during_execution", "duration_ms": 0, "duration_api_ms": 0, "is_error": true, "num_turns": 0, "stop_reason": null, "session_id": "99999999-9999-4999-8999-999999999999", "total_cost_usd": 0, "usage": {"output_tokens_details": {"thinking_tokens": 0}, "input_tokens": 0, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 0, "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0}, "service_tier": "standard", "cache_creation": {"ephemeral_1h_input_tokens": 0, "ephemeral_5m_input_tokens": 0}, "inference_geo": "", "iterations": [], "speed": "standard", "fallback_credit": null}, "modelUsage": {}, "permission_denials": [], "uuid": "b8ff0bb0-f7cd-4a7d-9c69-9609e5fa01db", "errors": ["No conversation found with session ID: 99999999-9999-4999-8999-999999999999"], "result_index": 0}"#;

#[test]
fn startup_failure_result_with_type_first_decodes() {
    let message = cli(STARTUP_FAILURE);
    let CliMessage::Result(r) = &message else {
        panic!("not a result: {message:?}")
    };
    assert_eq!(r.subtype, ResultSubtype::ERROR_DURING_EXECUTION);
    assert_eq!(r.is_error, Some(true));
    assert_eq!(r.stop_reason, None);
    assert!(r.is_null("stop_reason"));
    assert_eq!(r.terminal_reason, None);
    assert_eq!(
        r.error_text().as_deref(),
        Some("No conversation found with session ID: 99999999-9999-4999-8999-999999999999")
    );
    let usage = r.usage.as_ref().unwrap();
    assert_eq!(usage.fallback_credit, Some(Value::Null));
    assert!(message.is_fully_typed());
    assert!(message.extra_paths().is_empty());
    // And the corpus line is this very line.
    assert_eq!(
        corpus_line("s09b_resume_bad_id.jsonl", 3),
        STARTUP_FAILURE.as_bytes()
    );
}

#[test]
fn normal_result_with_type_late_decodes() {
    let bytes = corpus_line("s01_text_two_turns.jsonl", 20);
    let keys: Vec<String> = top_level_fields(&bytes)
        .unwrap()
        .into_iter()
        .map(|(k, _)| k)
        .collect();
    let at = keys.iter().position(|k| k == "type").unwrap();
    assert!(at >= 15, "`type` is key {at} of {keys:?}");

    let message = CliMessage::from_slice(&bytes).unwrap();
    let CliMessage::Result(r) = &message else {
        panic!("not a result: {message:?}")
    };
    assert_eq!(r.subtype, ResultSubtype::SUCCESS);
    assert_eq!(r.num_turns, Some(1));
    assert_eq!(r.duration_ms.as_ref().and_then(|n| n.as_u64()), Some(111));
    assert_eq!(r.duration(), Some(std::time::Duration::from_millis(111)));
    assert!(
        r.cost_usd().is_some_and(|c| c > 0.0),
        "{:?}",
        r.total_cost_usd
    );
    assert_eq!(r.stop_reason, Some(StopReason::END_TURN));
    assert_eq!(r.terminal_reason, Some(TerminalReason::COMPLETED));
    assert_eq!(r.result.as_deref(), Some("Answer one."));
    assert_eq!(r.error_text(), None);
    assert!(message.is_fully_typed());
    let original: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(message.to_value().expect("a value"), original);
}

#[test]
fn type_after_thirty_other_keys() {
    let mut line = String::from(r#"{"subtype":"success","num_turns":2,"usage":{"input_tokens":7}"#);
    for i in 0..28 {
        line.push_str(&format!(r#","x_{i}":{{"n":{i}}}"#));
    }
    line.push_str(r#","type":"result","result":"after"}"#);
    let message = cli(&line);
    let CliMessage::Result(r) = &message else {
        panic!("not a result: {message:?}")
    };
    assert_eq!(r.num_turns, Some(2));
    assert_eq!(r.usage.as_ref().unwrap().input_tokens, Some(7));
    assert_eq!(r.result.as_deref(), Some("after"));
    assert_eq!(r.extra.len(), 28);
    assert_eq!(r.extra["x_27"], json!({"n": 27}));

    // The same with a union inside a union: `subtype` and `type` both late.
    let mut line = String::from(r#"{"session_id":"s""#);
    for i in 0..30 {
        line.push_str(&format!(r#","k{i}":[{i}]"#));
    }
    line.push_str(r#","subtype":"status","status":"requesting","type":"system"}"#);
    let message = cli(&line);
    let CliMessage::System(SystemMessage::Status(s)) = &message else {
        panic!("not system/status: {message:?}")
    };
    assert_eq!(s.status.as_deref(), Some("requesting"));
    assert_eq!(s.session_id.as_deref(), Some("s"));
    assert_eq!(s.extra.len(), 30);
}

#[test]
fn a_late_type_is_found_past_nested_type_keys() {
    // A nested `type` comes first in the text: the top-level one still decides.
    let line = r#"{"usage":{"type":"assistant","input_tokens":7},"type":"result","subtype":"success","result":"r"}"#;
    let message = cli(line);
    let CliMessage::Result(r) = &message else {
        panic!("not a result: {message:?}")
    };
    assert_eq!(r.result.as_deref(), Some("r"));
    assert_eq!(r.usage.as_ref().unwrap().extra["type"], json!("assistant"));
    assert_eq!(
        message.to_value().expect("a value"),
        serde_json::from_str::<Value>(line).unwrap()
    );

    // Only a nested `type`: the line has none of its own.
    let e = CliMessage::from_slice(br#"{"message":{"type":"result"},"x":1}"#).unwrap_err();
    assert_eq!(e.kind, DecodeErrorKind::NoType);

    // Two late `type` keys: the first one counts, as when `type` comes first.
    let decode = |line: &str| CliMessage::from_slice(line.as_bytes()).unwrap();
    let late = decode(r#"{"subtype":"success","type":"result","type":"assistant","result":"r"}"#);
    let first = decode(r#"{"type":"result","subtype":"success","type":"assistant","result":"r"}"#);
    assert!(matches!(late, CliMessage::Result(_)), "{late:?}");
    assert_eq!(late, first);

    // An escaped late tag, and spaces around the first key's tokens.
    let escaped = cli(r#"{"subtype":"success","type":"res\u0075lt","result":"r"}"#);
    assert!(matches!(escaped, CliMessage::Result(_)), "{escaped:?}");
    let spaced = cli(r#" { "type" : "result" , "subtype" : "success" , "result" : "r" }"#);
    assert!(matches!(spaced, CliMessage::Result(_)), "{spaced:?}");

    // A late tag that is not a string.
    let e = CliMessage::from_slice(br#"{"subtype":"success","type":7}"#).unwrap_err();
    assert_eq!(e.kind, DecodeErrorKind::NoType);
}

// ---------------------------------------------------------------------------------------------
// unknown tags

#[test]
fn unknown_type() {
    let line = r#"{"type":"hologram_event","x":1,"session_id":"s"}"#;
    let message = cli(line);
    let CliMessage::Unknown(u) = &message else {
        panic!("not unknown: {message:?}")
    };
    assert_eq!(u.get_str("type"), Some("hologram_event"));
    assert_eq!(u.get("x"), Some(&json!(1)));
    assert_eq!(message.kind(), "hologram_event");
    assert_eq!(message.session_id(), Some("s"));
    assert_eq!(message.unknown_paths(), [r#"/ (type "hologram_event")"#]);

    let host_line = host(line);
    assert_eq!(host_line.unknown_paths(), [r#"/ (type "hologram_event")"#]);
}

#[test]
fn cli_only_type_is_unknown_to_the_host_side() {
    let line = r#"{"type":"result","subtype":"success"}"#;
    assert!(matches!(cli(line), CliMessage::Result(_)));
    let message = host(line);
    assert!(matches!(message, HostMessage::Unknown(_)), "{message:?}");
    assert_eq!(message.unknown_paths(), [r#"/ (type "result")"#]);
    assert_eq!(message.kind(), "result");
}

#[test]
fn unknown_system_subtype() {
    let message =
        cli(r#"{"type":"system","subtype":"quantum_flux","session_id":"s","uuid":"u","level":9}"#);
    let CliMessage::System(SystemMessage::Unknown(u)) = &message else {
        panic!("not an unknown system line: {message:?}")
    };
    // The matched `type` tag is not kept in the Unknown; the unknown `subtype` is.
    assert_eq!(u.get("type"), None);
    assert_eq!(u.get_str("subtype"), Some("quantum_flux"));
    assert_eq!(message.session_id(), Some("s"));
    let CliMessage::System(sys) = &message else {
        unreachable!()
    };
    assert_eq!(sys.uuid(), Some("u"));
    assert_eq!(message.unknown_paths(), [r#"/ (subtype "quantum_flux")"#]);
}

#[test]
fn unknown_content_block_leaves_the_message_typed() {
    let message = cli(
        r#"{"type":"assistant","message":{"id":"msg_1","role":"assistant","content":[{"type":"text","text":"look"},{"type":"hologram","beam":{"r":1}}]},"session_id":"s"}"#,
    );
    let CliMessage::Assistant(a) = &message else {
        panic!("the message must stay Assistant: {message:?}")
    };
    assert!(matches!(&a.message.content[0], ContentBlock::Text(t) if t.text == "look"));
    let ContentBlock::Unknown(u) = &a.message.content[1] else {
        panic!("block 1 should be Unknown: {:?}", a.message.content[1])
    };
    assert_eq!(u.get_str("type"), Some("hologram"));
    assert_eq!(u.get("beam"), Some(&json!({"r": 1})));
    assert_eq!(
        message.unknown_paths(),
        [r#"/message/content/1 (type "hologram")"#]
    );
    assert!(!message.is_fully_typed());
}

#[test]
fn unknown_block_inside_a_tool_result() {
    let message = cli(
        r#"{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"a"},{"type":"sound","hz":440}]}]}}"#,
    );
    assert!(matches!(message, CliMessage::User(_)));
    assert_eq!(
        message.unknown_paths(),
        [r#"/message/content/0/content/1 (type "sound")"#]
    );
}

#[test]
fn unknown_stream_event() {
    let message = cli(
        r#"{"type":"stream_event","event":{"type":"message_teleport","to":"mars"},"session_id":"s","parent_tool_use_id":null}"#,
    );
    let CliMessage::StreamEvent(e) = &message else {
        panic!("not a stream event: {message:?}")
    };
    assert!(matches!(&e.event, StreamEvent::Unknown(u) if u.get_str("to") == Some("mars")));
    assert_eq!(
        message.unknown_paths(),
        [r#"/event (type "message_teleport")"#]
    );
}

#[test]
fn unknown_delta() {
    let message = cli(
        r#"{"type":"stream_event","event":{"type":"content_block_delta","index":2,"delta":{"type":"hologram_delta","beam":"x"}}}"#,
    );
    let CliMessage::StreamEvent(e) = &message else {
        panic!("not a stream event: {message:?}")
    };
    let StreamEvent::ContentBlockDelta(d) = &e.event else {
        panic!("not a delta event: {:?}", e.event)
    };
    assert_eq!(d.index, 2);
    assert!(matches!(&d.delta, Delta::Unknown(u) if u.get_str("type") == Some("hologram_delta")));
    assert_eq!(
        message.unknown_paths(),
        [r#"/event/delta (type "hologram_delta")"#]
    );
}

#[test]
fn unknown_control_subtypes() {
    // A CLI -> host request of a subtype byre does not know.
    let message = cli(
        r#"{"type":"control_request","request_id":"r1","request":{"subtype":"summon_familiar","name":"cat"}}"#,
    );
    let CliMessage::ControlRequest(c) = &message else {
        panic!("not a control request: {message:?}")
    };
    assert_eq!(c.request_id, "r1");
    assert!(matches!(&c.request, CliRequest::Unknown(u) if u.get_str("name") == Some("cat")));
    assert_eq!(c.request.tag(), Some("summon_familiar"));
    assert_eq!(
        message.unknown_paths(),
        [r#"/request (subtype "summon_familiar")"#]
    );

    // A host -> CLI request of an unknown subtype.
    let message =
        host(r#"{"type":"control_request","request_id":"req_9","request":{"subtype":"teleport"}}"#);
    let HostMessage::ControlRequest(c) = &message else {
        panic!("not a control request: {message:?}")
    };
    assert!(matches!(&c.request, HostRequest::Unknown(_)));
    assert_eq!(
        message.unknown_paths(),
        [r#"/request (subtype "teleport")"#]
    );

    // A response of an unknown subtype still yields its request id.
    let message = cli(
        r#"{"type":"control_response","response":{"subtype":"partial","request_id":"req_3","progress":0.5}}"#,
    );
    let CliMessage::ControlResponse(c) = &message else {
        panic!("not a control response: {message:?}")
    };
    assert!(matches!(c.response, ControlResponseBody::Unknown(_)));
    assert_eq!(c.request_id(), Some("req_3"));
    assert_eq!(
        message.unknown_paths(),
        [r#"/response (subtype "partial")"#]
    );
}

#[test]
fn unknown_hook_event() {
    let message = cli(
        r#"{"type":"control_request","request_id":"r2","request":{"subtype":"hook_callback","callback_id":"hook_0","input":{"session_id":"s","hook_event_name":"HologramSummoned","beam":1},"tool_use_id":"t"}}"#,
    );
    let CliMessage::ControlRequest(c) = &message else {
        panic!("not a control request: {message:?}")
    };
    let CliRequest::HookCallback(h) = &c.request else {
        panic!("the request must stay a hook_callback: {:?}", c.request)
    };
    assert_eq!(h.callback_id, "hook_0");
    assert_eq!(h.input.tag(), Some("HologramSummoned"));
    assert_eq!(
        message.unknown_paths(),
        [r#"/request/input (hook_event_name "HologramSummoned")"#]
    );
}

#[test]
fn unmodelled_fields_are_listed_by_path() {
    let message = cli(
        r#"{"type":"assistant","message":{"content":[{"type":"text","text":"hi","glow":true}],"usage":{"input_tokens":1,"new_counter":2}},"session_id":"s","mood":"calm"}"#,
    );
    assert!(message.is_fully_typed());
    let mut paths = message.extra_paths();
    paths.sort();
    assert_eq!(
        paths,
        [
            "/message/content/0/glow",
            "/message/usage/new_counter",
            "/mood"
        ]
    );
    // Inside an unknown block nothing is listed: the block is reported as unknown instead.
    let message = cli(r#"{"type":"assistant","message":{"content":[{"type":"hologram","x":1}]}}"#);
    assert!(message.extra_paths().is_empty());
    assert_eq!(message.unknown_paths().len(), 1);
}

#[test]
fn a_hook_inputs_unmodelled_fields_are_listed() {
    let input: HookInput = serde_json::from_value(serde_json::json!({
        "hook_event_name": "Stop", "session_id": "s", "stop_hook_active": false,
        "loop_count": 3
    }))
    .unwrap();
    let extra = input.extra().expect("a known event");
    assert_eq!(extra.keys().collect::<Vec<_>>(), ["loop_count"]);
    let input: HookInput = serde_json::from_value(serde_json::json!({
        "hook_event_name": "HologramSummoned", "session_id": "s"
    }))
    .unwrap();
    assert!(input.extra().is_none());
    assert_eq!(input.session_id(), Some("s"));
}

#[test]
fn missing_tag_in_a_nested_union_is_unknown_without_tag() {
    let message = cli(r#"{"type":"assistant","message":{"content":[{"text":"no type"}]}}"#);
    assert!(matches!(message, CliMessage::Assistant(_)));
    assert_eq!(message.unknown_paths(), ["/message/content/0 (no type)"]);

    let message = cli(r#"{"type":"assistant","message":{"content":[{"type":7}]}}"#);
    assert_eq!(message.unknown_paths(), ["/message/content/0 (type 7)"]);
}

#[test]
fn redacted_thinking_decodes_typed() {
    let message = cli(
        r#"{"type":"assistant","message":{"id":"msg_r","role":"assistant","content":[{"type":"redacted_thinking","data":"EmwKAhgBEgy3va3pzix"}]}}"#,
    );
    let CliMessage::Assistant(a) = &message else {
        panic!("not assistant: {message:?}")
    };
    let ContentBlock::RedactedThinking(r) = &a.message.content[0] else {
        panic!("not redacted thinking: {:?}", a.message.content[0])
    };
    assert_eq!(r.data, "EmwKAhgBEgy3va3pzix");
    assert!(message.is_fully_typed());
}

// ---------------------------------------------------------------------------------------------
// bad lines

/// Decodes `line` in both directions, checks both fail the same way, and returns the error.
fn bad(line: &[u8]) -> DecodeError {
    let e = CliMessage::from_slice(line).expect_err("should not decode");
    let h = HostMessage::from_slice(line).expect_err("should not decode");
    assert_eq!(e, h);
    assert_eq!(e.len, line.len());
    e
}

#[test]
fn not_json() {
    let e = bad(br#"{"type":"#);
    assert!(matches!(e.kind, DecodeErrorKind::NotJson(_)), "{e:?}");
    assert_eq!(e.len, 8);
    assert_eq!(e.head, r#"{"type":"#);

    for line in [
        &b""[..],
        b"   ",
        b"{",
        b"nul",
        b"{\"type\":\"user\"} x",
        b"\xff\xfe",
        // Not UTF-8 inside a string, in a known and in an unknown type, `type` first or late.
        b"{\"type\":\"user\",\"x\":\"\xff\"}",
        b"{\"type\":\"no_such_type\",\"x\":\"a\xc3\"}",
        b"{\"x\":\"\xe2\x82\",\"type\":\"result\"}",
    ] {
        let e = bad(line);
        assert!(
            matches!(e.kind, DecodeErrorKind::NotJson(_)),
            "{line:?}: {e:?}"
        );
    }
    // Invalid UTF-8 shows lossily in the head.
    assert_eq!(bad(b"\xff{").head, "\u{fffd}{");
}

#[test]
fn not_an_object() {
    for line in [
        "[1,2,3]",
        r#""x""#,
        "42",
        "null",
        "true",
        r#"[{"type":"user"}]"#,
    ] {
        let e = bad(line.as_bytes());
        assert_eq!(e.kind, DecodeErrorKind::NotObject, "{line}");
        assert_eq!(e.head, line);
    }
}

#[test]
fn no_string_type() {
    for line in [
        "{}",
        r#"{"type":5}"#,
        r#"{"type":null}"#,
        r#"{"type":["user"]}"#,
        r#"{"Type":"user"}"#,
        r#"{"message":{"type":"user"}}"#,
    ] {
        let e = bad(line.as_bytes());
        assert_eq!(e.kind, DecodeErrorKind::NoType, "{line}");
        assert_eq!(e.head, line);
    }
}

#[test]
fn head_keeps_only_the_first_bytes() {
    let line = format!("[{}0]", "0,".repeat(199));
    let line = line.as_bytes();
    let e = bad(line);
    assert_eq!(e.kind, DecodeErrorKind::NotObject);
    assert_eq!(e.len, 401);
    assert_eq!(e.head.len(), DecodeError::HEAD_LEN);
    assert_eq!(e.head.as_bytes(), &line[..DecodeError::HEAD_LEN]);

    // A cut through a multi-byte character does not panic.
    let mut line = "x".repeat(DecodeError::HEAD_LEN - 1);
    line.push('é');
    line.push_str(" and more");
    let e = bad(line.as_bytes());
    assert!(e.head.starts_with("xxx"));
    assert!(e.head.ends_with('\u{fffd}'), "{:?}", e.head);

    let shown = e.to_string();
    assert!(shown.contains(&format!("{} bytes", line.len())), "{shown}");
}

#[test]
fn whitespace_and_trailing_cr_are_accepted() {
    for line in [
        "  {\"type\":\"keep_alive\"}  ",
        "\t{\"type\":\"keep_alive\"}",
        "{\"type\":\"keep_alive\"}\r",
        "{\"type\":\"keep_alive\"}\r\n",
        "{ \"type\" : \"keep_alive\" }",
    ] {
        assert!(
            matches!(line.parse::<CliMessage>(), Ok(CliMessage::KeepAlive(_))),
            "{line:?}"
        );
        assert!(
            matches!(
                HostMessage::from_slice(line.as_bytes()),
                Ok(HostMessage::KeepAlive(_))
            ),
            "{line:?}"
        );
    }
}

#[test]
fn any_message_follows_the_direction() {
    let line = br#"{"type":"user","message":{"role":"user","content":"x"}}"#;
    assert!(matches!(
        AnyMessage::from_slice(Direction::Send, line),
        Ok(AnyMessage::Send(HostMessage::User(_)))
    ));
    assert!(matches!(
        AnyMessage::from_slice(Direction::Recv, line),
        Ok(AnyMessage::Recv(CliMessage::User(_)))
    ));
    assert_eq!(Direction::Send.as_str(), "send");
    assert_eq!(Direction::Recv.as_str(), "recv");
}

#[test]
fn from_value_matches_from_slice() {
    let value: Value = serde_json::from_slice(STARTUP_FAILURE.as_bytes()).unwrap();
    let from_value = CliMessage::from_value(&value).unwrap();
    let from_slice = CliMessage::from_slice(STARTUP_FAILURE.as_bytes()).unwrap();
    assert_eq!(from_value, from_slice);
    assert_eq!(
        CliMessage::from_value(&json!([1])).unwrap_err().kind,
        DecodeErrorKind::NotObject
    );
}

// ---------------------------------------------------------------------------------------------
// extra fields, payloads, helpers

#[test]
fn extra_keeps_unknown_fields_on_nested_structs() {
    let message = cli(
        r#"{"type":"assistant","message":{"id":"m","role":"assistant","content":[{"type":"tool_use","id":"t","name":"Bash","input":{},"future_flag":true}],"usage":{"input_tokens":1,"fallback_credit":null,"new_counter":{"a":[1,2]}},"brand_new":"v"},"session_id":"s","top_extra":0}"#,
    );
    let CliMessage::Assistant(a) = &message else {
        panic!("not assistant: {message:?}")
    };
    assert_eq!(a.extra.get("top_extra"), Some(&json!(0)));
    assert_eq!(a.message.extra.get("brand_new"), Some(&json!("v")));
    let usage = a.message.usage.as_ref().unwrap();
    assert_eq!(usage.input_tokens, Some(1));
    // A modelled field of any JSON value keeps its null, and is not extra.
    assert_eq!(usage.fallback_credit, Some(Value::Null));
    assert_eq!(usage.extra.get("fallback_credit"), None);
    assert_eq!(usage.extra.get("new_counter"), Some(&json!({"a": [1, 2]})));
    let ContentBlock::ToolUse(t) = &a.message.content[0] else {
        panic!("not tool_use")
    };
    assert_eq!(t.extra.get("future_flag"), Some(&json!(true)));
    assert!(message.is_fully_typed(), "extra fields are not Unknowns");
}

#[test]
fn initialize_payload_decodes_from_a_real_response() {
    let message = CliMessage::from_slice(&corpus_line("s01_text_two_turns.jsonl", 3)).unwrap();
    let CliMessage::ControlResponse(c) = &message else {
        panic!("not a control response: {message:?}")
    };
    assert_eq!(c.request_id(), Some("req_1"));
    let ControlResponseBody::Success(ok) = &c.response else {
        panic!("not a success: {:?}", c.response)
    };
    let init: InitializeResponse = ok.payload().unwrap();
    assert_eq!(init.commands.as_ref().map(Vec::len), Some(44));
    assert_eq!(init.models.as_ref().map(Vec::len), Some(6));
    assert_eq!(init.claude_code_version.as_deref(), Some("2.1.328"));
    assert_eq!(
        init.current_permission_mode,
        Some(PermissionMode::BYPASS_PERMISSIONS)
    );
    assert_eq!(init.session_state.as_deref(), Some("idle"));
    assert_eq!(init.remote_control_available, Some(false));
    assert!(init.extra_paths().is_empty(), "{:?}", init.extra_paths());
    assert!(init.models.unwrap().iter().all(|m| !m.value.is_empty()));
    // The payload type named by the request body is this one.
    fn response_type_of<B: ControlRequestBody>() -> &'static str {
        std::any::type_name::<B::Response>()
    }
    assert!(response_type_of::<byre_proto::InitializeRequest>().ends_with("InitializeResponse"));
}

#[test]
fn success_without_response_key_round_trips_without_one() {
    let line =
        r#"{"type":"control_response","response":{"subtype":"success","request_id":"req_7"}}"#;
    let message = cli(line);
    let CliMessage::ControlResponse(c) = &message else {
        panic!("not a control response: {message:?}")
    };
    let ControlResponseBody::Success(ok) = &c.response else {
        panic!("not a success")
    };
    assert_eq!(ok.response, None);
    assert!(ok.extra.is_empty());
    let _: EmptyResponse = ok.payload().unwrap();
    // `set_max_thinking_tokens` answers with no payload.
    assert_eq!(
        <SetMaxThinkingTokensRequest as ControlRequestBody>::SUBTYPE,
        "set_max_thinking_tokens"
    );
    let out = message.to_value().expect("a value");
    assert!(!out["response"]
        .as_object()
        .unwrap()
        .contains_key("response"));

    // The constructor writes the same line.
    let built = ControlResponse::success("req_7", None);
    assert_eq!(
        CliMessage::ControlResponse(Box::new(built))
            .to_value()
            .expect("a value"),
        out
    );
}

#[test]
fn error_response_keeps_code_and_message() {
    let line = r#"{"type":"control_response","response":{"subtype":"error","request_id":"r","error":"Unsupported control request subtype: x","error_code":"unsupported_request"}}"#;
    let HostMessage::ControlResponse(c) = host(line) else {
        panic!("not a control response")
    };
    let ControlResponseBody::Error(e) = &c.response else {
        panic!("not an error")
    };
    assert_eq!(
        e.error_code,
        Some(byre_proto::ErrorCode::UNSUPPORTED_REQUEST)
    );
    assert_eq!(
        e.error.as_deref(),
        Some("Unsupported control request subtype: x")
    );
}

#[test]
fn null_in_an_optional_value_field_round_trips_as_a_value() {
    // A field that holds any JSON value keeps `null` as a value: `Some(Value::Null)`.
    let line = r#"{"type":"control_response","response":{"subtype":"success","request_id":"r","response":null}}"#;
    let message = host(line);
    let HostMessage::ControlResponse(c) = &message else {
        panic!("not a control response")
    };
    let ControlResponseBody::Success(ok) = &c.response else {
        panic!("not a success")
    };
    assert_eq!(ok.payload_value(), Some(Value::Null));

    // Built with `Some(Value::Null)`, it writes the same line and decodes to the same value.
    let built = HostMessage::ControlResponse(ControlResponse::success("r", Some(Value::Null)));
    assert_eq!(
        built.to_value().expect("a value"),
        message.to_value().expect("a value")
    );
    assert_eq!(HostMessage::from_slice(&built.to_vec()).unwrap(), message);
}

/// JSON-RPC allows `"result": null`: it is still a response, and survives a round trip.
#[test]

fn json_rpc_null_result_is_a_response() {
    let rpc = JsonRpcMessage::result(Some(json!(1)), Value::Null);
    assert!(rpc.is_response());
    let again: JsonRpcMessage = serde_json::from_slice(&serde_json::to_vec(&rpc).unwrap()).unwrap();
    assert!(again.is_response(), "{again:?}");
    assert_eq!(again, rpc);
}

#[test]
fn tool_progress_heartbeat_names_the_running_tool() {
    let message = cli(
        r#"{"type":"tool_progress","tool_use_id":"toolu_01-heartbeat-3","tool_name":"Bash","parent_tool_use_id":"toolu_01","elapsed_time_seconds":90.5,"session_id":"s"}"#,
    );
    let CliMessage::ToolProgress(p) = &message else {
        panic!("not tool_progress: {message:?}")
    };
    assert_eq!(p.tool_call_id(), "toolu_01");
    // Its parent_tool_use_id is the tool itself, not a subagent.
    assert_eq!(message.parent_tool_use_id(), None);

    let CliMessage::ToolProgress(p) =
        cli(r#"{"type":"tool_progress","tool_use_id":"toolu_02-heartbeat-12"}"#)
    else {
        panic!("not tool_progress")
    };
    assert_eq!(p.tool_call_id(), "toolu_02");

    let CliMessage::ToolProgress(p) = cli(r#"{"type":"tool_progress","tool_use_id":"toolu_03"}"#)
    else {
        panic!("not tool_progress")
    };
    assert_eq!(p.tool_call_id(), "toolu_03");
}

#[test]
fn ask_user_question_answers_keep_the_rest_of_the_input() {
    let request: byre_proto::CanUseToolRequest = serde_json::from_value(serde_json::json!({
        "tool_name": "AskUserQuestion",
        "input": {"questions": [{"question": "Which?", "header": "H", "multiSelect": false,
            "options": [{"label": "A", "description": "a", "icon": "star"}]}],
            "metadata": {"source": "x"}, "future_field": 1}
    }))
    .unwrap();
    let input = byre_proto::AskUserQuestionInput::from_request(&request)
        .expect("it is an AskUserQuestion call")
        .unwrap();
    let answer = serde_json::to_value(input.answered([("Which?", "A")])).unwrap();
    assert_eq!(answer["behavior"], "allow");
    let updated = &answer["updatedInput"];
    assert_eq!(updated["answers"]["Which?"], "A");
    assert_eq!(updated["future_field"], 1);
    assert_eq!(updated["metadata"]["source"], "x");
    assert_eq!(updated["questions"][0]["options"][0]["icon"], "star");
    let other: byre_proto::CanUseToolRequest =
        serde_json::from_value(serde_json::json!({"tool_name": "Bash", "input": {}})).unwrap();
    assert!(byre_proto::AskUserQuestionInput::from_request(&other).is_none());
}

#[test]
fn a_repeated_inner_tag_before_a_late_type_is_ignored_on_every_route() {
    // `subtype` twice, `type` last: whether the top-level tag is found first or the keys
    // before it are buffered, the second `subtype` is ignored, as a repeated tag always is.
    let late =
        r#"{"subtype":"status","subtype":"other","status":null,"session_id":"s","type":"system"}"#;
    let message = CliMessage::from_slice(late.as_bytes()).expect("decodes");
    let straight: CliMessage = serde_json::from_str(late).expect("decodes");
    assert_eq!(message, straight);
    assert!(
        message.extra_paths().is_empty(),
        "{:?}",
        message.extra_paths()
    );
}

#[test]
fn the_debug_of_a_request_holding_secrets_shows_none_of_them() {
    use byre_proto::{
        ApplyFlagSettingsRequest, InitializeRequest, McpSetServersRequest, UpdateSettingsRequest,
    };
    let secret = "sk-very-secret-0123456789";
    let settings = serde_json::json!({"env": {"API_TOKEN": secret}});
    let servers = serde_json::json!({"db": {"command": "db-mcp", "env": {"PASSWORD": secret},
        "headers": {"Authorization": secret}}});
    let init = InitializeRequest {
        settings: Some(settings.clone()),
        managed_settings: Some(settings.clone()),
        mcp_servers: Some(servers.clone()),
        title: Some("visible title".into()),
        ..InitializeRequest::default()
    };
    let shown = format!("{init:?}");
    assert!(!shown.contains(secret), "{shown}");
    assert!(
        shown.contains("visible title") && shown.contains("[redacted]"),
        "{shown}"
    );
    let set = McpSetServersRequest {
        servers: serde_json::from_value(servers).unwrap(),
        ..McpSetServersRequest::default()
    };
    let apply = ApplyFlagSettingsRequest {
        settings: settings.clone(),
        ..ApplyFlagSettingsRequest::default()
    };
    let update = UpdateSettingsRequest {
        source: "localSettings".into(),
        settings,
        ..UpdateSettingsRequest::default()
    };
    for shown in [
        format!("{set:?}"),
        format!("{apply:?}"),
        format!("{update:?}"),
    ] {
        assert!(!shown.contains(secret), "{shown}");
        assert!(shown.contains("[redacted]"), "{shown}");
    }
}

/// Splits a JSON object into its top-level keys, in order, and the exact bytes of their values.
fn top_level_fields(line: &[u8]) -> Option<Vec<(String, &[u8])>> {
    let skip_ws = |mut i: usize| {
        while line.get(i).is_some_and(u8::is_ascii_whitespace) {
            i += 1;
        }
        i
    };
    let mut fields = Vec::new();
    let mut i = skip_ws(0);
    if line.get(i) != Some(&b'{') {
        return None;
    }
    i = skip_ws(i + 1);
    if line.get(i) == Some(&b'}') {
        return Some(fields);
    }
    loop {
        let (key, used) = parse_prefix::<String>(&line[i..])?;
        i = skip_ws(i + used);
        if line.get(i) != Some(&b':') {
            return None;
        }
        i = skip_ws(i + 1);
        let (_, used) = parse_prefix::<Value>(&line[i..])?;
        fields.push((key, &line[i..i + used]));
        i = skip_ws(i + used);
        match line.get(i) {
            Some(b',') => i = skip_ws(i + 1),
            Some(b'}') => return Some(fields),
            _ => return None,
        }
    }
}

/// Parses one JSON value at the start of `bytes`; returns it and how many bytes it took.
fn parse_prefix<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> Option<(T, usize)> {
    let mut stream = serde_json::Deserializer::from_slice(bytes).into_iter::<T>();
    let value = stream.next()?.ok()?;
    Some((value, stream.byte_offset()))
}
