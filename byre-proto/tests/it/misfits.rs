//! Lines a `Value` cannot hold or the model does not expect: nesting past any limit, numbers out
//! of `f64`'s range, known fields of another type, missing required fields. A line whose
//! `type` is known is delivered as that type, what does not fit is kept as text where it sits
//! and listed, and re-encoding gives the line back.

use std::collections::BTreeMap;

use byre_proto::{
    CliMessage, ContentBlock, DecodeErrorKind, FindUnknown, HostMessage, RawJson, SystemMessage,
};
use proptest::prelude::*;

use crate::support::corpus_messages;

// ---------------------------------------------------------------------------------------------
// A JSON comparison that needs no `Value`: any depth, any number, lone surrogates as U+FFFD

/// A JSON value as the comparison sees it.
#[derive(Debug, PartialEq)]
enum Json {
    Null,
    Bool(bool),
    Number(Number),
    String(String),
    Array(Vec<Json>),
    Object(BTreeMap<String, Json>),
}

/// A number: its value where `f64` holds it, else its text.
#[derive(Debug)]
struct Number(String);

impl PartialEq for Number {
    fn eq(&self, other: &Self) -> bool {
        match (self.0.parse::<f64>(), other.0.parse::<f64>()) {
            (Ok(a), Ok(b)) if a.is_finite() && b.is_finite() => a == b,
            _ => self.0 == other.0,
        }
    }
}

/// Reads one JSON value (recursively: keep depths within the thread's stack).
fn parse(text: &[u8]) -> Json {
    let mut at = 0;
    let value = value(text, &mut at);
    assert!(
        text[at..].iter().all(u8::is_ascii_whitespace),
        "trailing text"
    );
    value
}

fn skip_ws(text: &[u8], at: &mut usize) {
    while text.get(*at).is_some_and(u8::is_ascii_whitespace) {
        *at += 1;
    }
}

fn value(text: &[u8], at: &mut usize) -> Json {
    skip_ws(text, at);
    match text[*at] {
        b'n' => word(text, at, "null", Json::Null),
        b't' => word(text, at, "true", Json::Bool(true)),
        b'f' => word(text, at, "false", Json::Bool(false)),
        b'"' => Json::String(string(text, at)),
        b'[' => {
            *at += 1;
            let mut items = Vec::new();
            skip_ws(text, at);
            if text[*at] == b']' {
                *at += 1;
                return Json::Array(items);
            }
            loop {
                items.push(value(text, at));
                skip_ws(text, at);
                *at += 1;
                if text[*at - 1] == b']' {
                    return Json::Array(items);
                }
            }
        }
        b'{' => {
            *at += 1;
            let mut fields = BTreeMap::new();
            skip_ws(text, at);
            if text[*at] == b'}' {
                *at += 1;
                return Json::Object(fields);
            }
            loop {
                skip_ws(text, at);
                let key = string(text, at);
                skip_ws(text, at);
                assert_eq!(text[*at], b':');
                *at += 1;
                let v = value(text, at);
                assert!(fields.insert(key, v).is_none(), "a repeated key");
                skip_ws(text, at);
                *at += 1;
                if text[*at - 1] == b'}' {
                    return Json::Object(fields);
                }
            }
        }
        _ => {
            let start = *at;
            while text
                .get(*at)
                .is_some_and(|b| b"+-.eE0123456789".contains(b))
            {
                *at += 1;
            }
            Json::Number(Number(
                String::from_utf8(text[start..*at].to_vec()).expect("ASCII"),
            ))
        }
    }
}

fn word(text: &[u8], at: &mut usize, word: &str, value: Json) -> Json {
    assert!(text[*at..].starts_with(word.as_bytes()));
    *at += word.len();
    value
}

/// A string's value; a lone surrogate escape reads as U+FFFD.
fn string(text: &[u8], at: &mut usize) -> String {
    assert_eq!(text[*at], b'"');
    *at += 1;
    let mut units: Vec<u16> = Vec::new();
    loop {
        match text[*at] {
            b'"' => {
                *at += 1;
                return String::from_utf16_lossy(&units);
            }
            b'\\' => {
                let (unit, len) = match text[*at + 1] {
                    b'u' => {
                        let hex = std::str::from_utf8(&text[*at + 2..*at + 6]).expect("hex");
                        (u16::from_str_radix(hex, 16).expect("hex"), 6)
                    }
                    b'n' => (u16::from(b'\n'), 2),
                    b't' => (u16::from(b'\t'), 2),
                    b'r' => (u16::from(b'\r'), 2),
                    b'b' => (0x08, 2),
                    b'f' => (0x0c, 2),
                    other => (u16::from(other), 2),
                };
                units.push(unit);
                *at += len;
            }
            _ => {
                let rest = std::str::from_utf8(&text[*at..]).expect("UTF-8");
                let c = rest.chars().next().expect("a char");
                let mut buf = [0u16; 2];
                units.extend_from_slice(c.encode_utf16(&mut buf));
                *at += c.len_utf8();
            }
        }
    }
}

/// Runs `f` on a thread with a large stack (the comparison recurses).
fn on_big_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(f)
        .expect("a thread")
        .join()
        .expect("no panic")
}

/// Whether two JSON texts hold the same value (key order aside).
fn same_json(a: &[u8], b: &[u8]) -> bool {
    let (a, b) = (a.to_vec(), b.to_vec());
    on_big_stack(move || parse(&a) == parse(&b))
}

// ---------------------------------------------------------------------------------------------
// Deep values

fn deep_array(depth: usize) -> String {
    format!("{}1{}", "[".repeat(depth), "]".repeat(depth))
}

fn deep_object(depth: usize) -> String {
    format!("{}1{}", r#"{"k":"#.repeat(depth), "}".repeat(depth))
}

#[test]
fn structured_output_nested_200_deep_is_still_a_result() {
    let deep = deep_object(200);
    let line = format!(
        r#"{{"type":"result","subtype":"success","is_error":false,"result":"ok","session_id":"s","structured_output":{deep},"num_turns":1}}"#
    );
    let decoded = CliMessage::decode(line.as_bytes()).expect("a message");
    let CliMessage::Result(result) = &decoded.message else {
        panic!("not a result: {:?}", decoded.message)
    };
    assert_eq!(result.session_id.as_deref(), Some("s"));
    assert_eq!(result.num_turns, Some(1));
    assert_eq!(result.structured_output, None);
    let misfit = result.extra.misfit("structured_output").expect("kept");
    assert_eq!(misfit.raw.as_ref().map(RawJson::get), Some(deep.as_str()));
    assert_eq!(decoded.misfits.len(), 1, "{:?}", decoded.misfits);
    assert!(decoded.misfits[0].starts_with("/structured_output ("));
    // The text is written back byte for byte.
    let again = String::from_utf8(decoded.message.to_vec()).unwrap();
    assert!(
        again.contains(&format!(r#""structured_output":{deep}"#)),
        "{again:.200}"
    );
    assert!(same_json(line.as_bytes(), again.as_bytes()));
}

#[test]
fn a_tool_call_with_input_nested_past_the_limit_is_delivered() {
    // Within the limit, the input is a `Value` as always.
    let input = format!(r#"{{"command":{}}}"#, deep_array(120));
    let line = format!(
        r#"{{"type":"assistant","message":{{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{{"type":"tool_use","id":"toolu_1","name":"Bash","input":{input}}}]}},"parent_tool_use_id":null,"session_id":"s","uuid":"u"}}"#
    );
    let decoded = CliMessage::decode(line.as_bytes()).expect("a message");
    assert!(decoded.misfits.is_empty());
    for depth in [130, 500] {
        let input = format!(r#"{{"command":{}}}"#, deep_array(depth));
        let line = format!(
            r#"{{"type":"assistant","message":{{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{{"type":"tool_use","id":"toolu_1","name":"Bash","input":{input}}}]}},"parent_tool_use_id":null,"session_id":"s","uuid":"u"}}"#
        );
        let decoded = CliMessage::decode(line.as_bytes()).expect("a message");
        let CliMessage::Assistant(a) = &decoded.message else {
            panic!("not an assistant line: {:?}", decoded.message)
        };
        let ContentBlock::ToolUse(tool) = &a.message.content[0] else {
            panic!("not a tool call: {:?}", a.message.content)
        };
        assert_eq!((tool.id.as_str(), tool.name.as_str()), ("toolu_1", "Bash"));
        // The input as a whole is kept as text: a `Value` holds 128 levels at most.
        assert_eq!(tool.input, serde_json::Value::Null);
        let raw = tool.extra.misfit("input").and_then(|m| m.raw.as_ref());
        assert_eq!(raw.map(RawJson::get), Some(input.as_str()));
        assert_eq!(decoded.misfits.len(), 1, "{depth}: {:?}", decoded.misfits);
        assert!(decoded.misfits[0].starts_with("/message/content/0/input ("));
        assert!(same_json(line.as_bytes(), &decoded.message.to_vec()));
    }
}

#[test]
fn a_million_levels_decode_on_a_small_stack() {
    // A tokio worker's stack: every decoder and the checks behind them stay bounded.
    let deep = deep_array(1_000_000);
    let lines = [
        format!(r#"{{"type":"result","subtype":"success","structured_output":{deep}}}"#),
        format!(r#"{{"type":"result","subtype":"success","zz_new":{deep}}}"#),
        format!(r#"{{"type":"hologram","x":{deep}}}"#),
        // A recursive typed shape: tool results inside tool results.
        format!(
            r#"{{"type":"user","message":{{"role":"user","content":{}"x"{}}},"session_id":"s"}}"#,
            r#"[{"type":"tool_result","tool_use_id":"t","content":"#.repeat(100_000),
            "}]".repeat(100_000)
        ),
    ];
    let kinds = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || {
            let deep = deep_array(1_000_000);
            let mut kinds = Vec::new();
            for line in &lines {
                let bytes = bytes::Bytes::from(line.clone());
                let decoded = CliMessage::decode_bytes(&bytes).expect("a message");
                assert_eq!(decoded.message.to_vec(), line.as_bytes());
                kinds.push((decoded.message.kind().to_owned(), decoded.misfits.len()));
                // Cut short, it is not JSON, and says so.
                let cut = &line.as_bytes()[..line.len() - 1];
                let e = CliMessage::from_slice(cut).unwrap_err();
                assert!(matches!(e.kind, DecodeErrorKind::NotJson(_)), "{e}");
            }
            // Not an object, however deep.
            let e = CliMessage::from_slice(deep.as_bytes()).unwrap_err();
            assert_eq!(e.kind, DecodeErrorKind::NotObject);
            kinds
        })
        .expect("a thread")
        .join()
        .expect("no stack overflow, no panic");
    assert_eq!(
        kinds,
        [
            ("result".to_owned(), 1),
            ("result".to_owned(), 1),
            ("hologram".to_owned(), 1),
            ("user".to_owned(), 1),
        ]
    );
}

// ---------------------------------------------------------------------------------------------
// Numbers out of range

#[test]
fn numbers_out_of_range_are_kept_as_written() {
    let huge = format!("1{}", "0".repeat(5000));
    for number in ["1e400", "-1e400", huge.as_str()] {
        for (line, path) in [
            (
                format!(
                    r#"{{"type":"result","subtype":"success","total_cost_usd":{number},"session_id":"s"}}"#
                ),
                "/total_cost_usd",
            ),
            (
                format!(r#"{{"type":"result","subtype":"success","zz_new":{number}}}"#),
                "/zz_new",
            ),
            (
                format!(
                    r#"{{"type":"result","subtype":"success","usage":{{"input_tokens":{number}}}}}"#
                ),
                "/usage/input_tokens",
            ),
            (
                format!(
                    r#"{{"type":"result","subtype":"success","structured_output":{{"n":[{number}]}}}}"#
                ),
                "/structured_output",
            ),
        ] {
            let decoded = CliMessage::decode(line.as_bytes()).expect("a message");
            assert!(
                matches!(decoded.message, CliMessage::Result(_)),
                "{line:.100}: {:?}",
                decoded.message
            );
            assert_eq!(decoded.misfits.len(), 1, "{line:.100}");
            assert!(decoded.misfits[0].starts_with(&format!("{path} (")));
            let again = decoded.message.to_vec();
            assert!(
                String::from_utf8(again.clone()).unwrap().contains(number),
                "{line:.100}"
            );
            assert!(same_json(line.as_bytes(), &again), "{line:.100}");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Fields of another type, required fields missing

#[test]
fn a_retyped_result_field_leaves_the_result_a_result() {
    for (field, value) in [
        ("usage", r#"{"input_tokens":1.5}"#),
        ("num_turns", r#""1""#),
        ("total_cost_usd", r#""0.01""#),
        ("is_error", r#""false""#),
        ("session_id", "5"),
        ("subtype", "7"),
        ("modelUsage", "[]"),
    ] {
        let mut fields = vec![
            ("subtype", r#""success""#),
            ("is_error", "false"),
            ("result", r#""done""#),
            ("session_id", r#""s""#),
            ("uuid", r#""u""#),
        ];
        match fields.iter_mut().find(|(k, _)| *k == field) {
            Some(slot) => slot.1 = value,
            None => fields.push((field, value)),
        }
        let fields: Vec<String> = fields
            .iter()
            .map(|(k, v)| format!(r#""{k}":{v}"#))
            .collect();
        let line = format!(r#"{{"type":"result",{}}}"#, fields.join(","));
        let decoded = CliMessage::decode(line.as_bytes()).expect("a message");
        let CliMessage::Result(result) = &decoded.message else {
            panic!("{field}: not a result: {:?}", decoded.message)
        };
        assert_eq!(decoded.misfits.len(), 1, "{field}: {:?}", decoded.misfits);
        assert_eq!(result.uuid.as_deref(), Some("u"), "{field}");
        assert!(
            same_json(line.as_bytes(), &decoded.message.to_vec()),
            "{field}"
        );
    }
}

#[test]
fn a_missing_required_field_is_listed_and_not_written_back() {
    let line = r#"{"type":"system","subtype":"task_started","session_id":"s","uuid":"u"}"#;
    let decoded = CliMessage::decode(line.as_bytes()).expect("a message");
    let CliMessage::System(SystemMessage::TaskStarted(task)) = &decoded.message else {
        panic!("not a task start: {:?}", decoded.message)
    };
    assert_eq!(task.task_id, "");
    assert_eq!(decoded.misfits, ["/task_id (missing)"]);
    assert!(same_json(line.as_bytes(), &decoded.message.to_vec()));
}

#[test]
fn a_repeated_key_keeps_its_last_value_whether_it_fits_or_not() {
    let fits_last = r#"{"type":"result","subtype":"success","num_turns":"1","num_turns":2}"#;
    let decoded = CliMessage::decode(fits_last.as_bytes()).expect("a message");
    let CliMessage::Result(result) = &decoded.message else {
        panic!("{:?}", decoded.message)
    };
    assert_eq!(result.num_turns, Some(2));
    assert!(decoded.misfits.is_empty(), "{:?}", decoded.misfits);

    let misfits_last = r#"{"type":"result","subtype":"success","num_turns":2,"num_turns":"1"}"#;
    let decoded = CliMessage::decode(misfits_last.as_bytes()).expect("a message");
    let CliMessage::Result(result) = &decoded.message else {
        panic!("{:?}", decoded.message)
    };
    assert_eq!(result.num_turns, None);
    assert_eq!(decoded.misfits.len(), 1);
    let again = String::from_utf8(decoded.message.to_vec()).unwrap();
    assert!(again.contains(r#""num_turns":"1""#), "{again}");
}

#[test]
fn host_lines_follow_the_same_rule() {
    let deep = deep_object(300);
    let line = format!(
        r#"{{"type":"control_response","response":{{"subtype":"success","request_id":"r","response":{{"behavior":"allow","updatedInput":{deep}}}}}}}"#
    );
    let decoded = HostMessage::decode(line.as_bytes()).expect("a message");
    assert!(matches!(decoded.message, HostMessage::ControlResponse(_)));
    assert!(same_json(line.as_bytes(), &decoded.message.to_vec()));
    let line = r#"{"type":"user","message":{"role":"user","content":5},"session_id":""}"#;
    let decoded = HostMessage::decode(line.as_bytes()).expect("a message");
    assert!(matches!(decoded.message, HostMessage::User(_)));
    assert_eq!(decoded.misfits.len(), 1, "{:?}", decoded.misfits);
    assert!(decoded.misfits[0].starts_with("/message/content ("));
}

// ---------------------------------------------------------------------------------------------
// Any value in any field of every recorded line

/// The JSON text of a string with plain characters, escapes, and lone surrogates (as
/// `JSON.stringify` writes a string cut inside a surrogate pair).
fn arb_string() -> BoxedStrategy<String> {
    let piece = prop_oneof![
        "[a-zA-Z0-9 é中😀]{0,4}".prop_map(|s| s),
        Just(r"\n".to_owned()),
        Just(r#"\""#.to_owned()),
        Just(r"\\".to_owned()),
        Just(r"\u0001".to_owned()),
        Just(r"\ud800".to_owned()),
        Just(r"\udfff".to_owned()),
        Just(r"\ud83d\ude00".to_owned()),
    ];
    proptest::collection::vec(piece, 0..5)
        .prop_map(|pieces| format!("\"{}\"", pieces.concat()))
        .boxed()
}

/// The JSON text of a number, in range or not.
fn arb_number() -> BoxedStrategy<String> {
    prop_oneof![
        any::<i64>().prop_map(|n| n.to_string()),
        any::<u64>().prop_map(|n| n.to_string()),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| format!("{f:e}")),
        Just("1e400".to_owned()),
        Just("-1e400".to_owned()),
        Just("1E+2".to_owned()),
        Just("-0".to_owned()),
        Just("5e-324".to_owned()),
        (1usize..6000).prop_map(|n| format!("9{}", "9".repeat(n))),
    ]
    .boxed()
}

/// The JSON text of any value: leaves, lists, objects in any key order, and values nested
/// deeper than a `Value` holds.
fn arb_value() -> BoxedStrategy<String> {
    let leaf = prop_oneof![
        Just("null".to_owned()),
        Just("true".to_owned()),
        Just("false".to_owned()),
        arb_number(),
        arb_string(),
    ];
    let tree = leaf.prop_recursive(4, 24, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4)
                .prop_map(|items| format!("[{}]", items.join(","))),
            proptest::collection::btree_map("[a-z_]{1,6}", inner, 0..4).prop_map(|fields| {
                let fields: Vec<String> = fields
                    .into_iter()
                    .map(|(k, v)| format!("\"{k}\":{v}"))
                    .collect();
                format!("{{{}}}", fields.join(","))
            }),
        ]
    });
    prop_oneof![
        4 => tree.clone(),
        1 => (tree, 100usize..400, any::<bool>()).prop_map(|(v, depth, object)| match object {
            true => format!("{}{v}{}", r#"{"k":"#.repeat(depth), "}".repeat(depth)),
            false => format!("{}{v}{}", "[".repeat(depth), "]".repeat(depth)),
        }),
    ]
    .boxed()
}

/// Every place in a recorded line where a value sits (keys of objects, items of lists), but
/// the line's own `type`.
fn value_paths(v: &serde_json::Value, path: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    let items: Vec<(String, &serde_json::Value)> = match v {
        serde_json::Value::Object(fields) => fields.iter().map(|(k, v)| (k.clone(), v)).collect(),
        serde_json::Value::Array(items) => items
            .iter()
            .enumerate()
            .map(|(i, v)| (i.to_string(), v))
            .collect(),
        _ => return,
    };
    for (key, child) in items {
        if path.is_empty() && key == "type" {
            continue;
        }
        path.push(key);
        out.push(path.clone());
        value_paths(child, path, out);
        path.pop();
    }
}

/// The recorded line with the value at `path` replaced by the JSON text `text`.
fn with_value_at(v: &serde_json::Value, path: &[String], text: &str) -> String {
    const MARK: &str = "\u{1}byre-value-here\u{1}";
    let mut v = v.clone();
    let mut at = &mut v;
    for key in path {
        at = match at {
            serde_json::Value::Object(fields) => fields.get_mut(key).expect("a key"),
            serde_json::Value::Array(items) => &mut items[key.parse::<usize>().expect("an index")],
            _ => unreachable!("paths lead through containers"),
        };
    }
    *at = serde_json::Value::String(MARK.to_owned());
    let line = serde_json::to_string(&v).expect("a line");
    let mark = serde_json::to_string(MARK).expect("a string");
    line.replacen(&mark, text, 1)
}

/// A recorded line: its direction, its value and every place in it a value sits.
type Recorded = (byre_proto::Direction, serde_json::Value, Vec<Vec<String>>);

fn corpus_values() -> &'static [Recorded] {
    static VALUES: std::sync::LazyLock<Vec<Recorded>> = std::sync::LazyLock::new(|| {
        corpus_messages()
            .iter()
            .map(|(dir, bytes)| {
                let v: serde_json::Value = serde_json::from_slice(bytes).expect("recorded JSON");
                let mut paths = Vec::new();
                value_paths(&v, &mut Vec::new(), &mut paths);
                (*dir, v, paths)
            })
            .collect()
    });
    &VALUES
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn any_value_in_any_field_keeps_the_line_its_type(
        line in any::<prop::sample::Index>(),
        place in any::<prop::sample::Index>(),
        value in arb_value(),
    ) {
        let values = corpus_values();
        let (dir, original, paths) = &values[line.index(values.len())];
        prop_assume!(!paths.is_empty());
        let path = &paths[place.index(paths.len())];
        let changed = with_value_at(original, path, &value);
        let recorded = serde_json::to_vec(original).expect("a line");
        let before = byre_proto::AnyMessage::from_slice(*dir, &recorded).expect("recorded");
        let after = byre_proto::AnyMessage::from_slice(*dir, changed.as_bytes())
            .map_err(|e| TestCaseError::fail(format!("{path:?} = {value:.80}: {e}")))?;
        let kind = |m: &byre_proto::AnyMessage| match m {
            byre_proto::AnyMessage::Send(m) => (m.kind().to_owned(), m.is_fully_typed()),
            byre_proto::AnyMessage::Recv(m) => (m.kind().to_owned(), m.is_fully_typed()),
        };
        let unknown = |m: &byre_proto::AnyMessage| matches!(
            m,
            byre_proto::AnyMessage::Send(HostMessage::Unknown(_))
                | byre_proto::AnyMessage::Recv(CliMessage::Unknown(_))
        );
        prop_assert_eq!(kind(&before).0, kind(&after).0, "{:?}", path);
        prop_assert_eq!(unknown(&before), unknown(&after), "{:?}", path);
        let again = match &after {
            byre_proto::AnyMessage::Send(m) => m.to_vec(),
            byre_proto::AnyMessage::Recv(m) => m.to_vec(),
        };
        prop_assert!(
            same_json(changed.as_bytes(), &again),
            "{:?} = {:.200}: re-encoded {:.400}",
            path,
            value,
            String::from_utf8_lossy(&again)
        );
    }
}
