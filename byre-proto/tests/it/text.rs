//! `Text` fields: a long text shares a long line's memory, anything else is copied, and both
//! read, compare and re-encode as the strings they are.

use byre_proto::{CliMessage, ContentBlock, MessageContent, Text, SHARE_LINE_MIN};
use bytes::Bytes;

/// An assistant line whose one text block is `text` (written into the JSON as it is).
fn assistant(text: &str) -> Bytes {
    Bytes::from(format!(
        concat!(
            r#"{{"type":"assistant","message":{{"id":"m","type":"message","role":"assistant","#,
            r#""model":"x","content":[{{"type":"text","text":"{}"}}]}},"#,
            r#""parent_tool_use_id":null,"session_id":"s"}}"#
        ),
        text
    ))
}

/// The text of the message's first block.
fn first_text(message: &CliMessage) -> &Text {
    let CliMessage::Assistant(a) = message else {
        panic!("not an assistant message: {message:?}")
    };
    match &a.message.content[0] {
        ContentBlock::Text(t) => &t.text,
        other => panic!("not a text block: {other:?}"),
    }
}

/// Whether `text`'s bytes lie in `line`'s.
fn inside(text: &str, line: &[u8]) -> bool {
    let (start, at) = (line.as_ptr() as usize, text.as_ptr() as usize);
    at >= start && at + text.len() <= start + line.len()
}

#[test]
fn a_long_text_in_a_long_line_shares_the_line() {
    let long = "x".repeat(SHARE_LINE_MIN + 10);
    let line = assistant(&long);
    let message = CliMessage::from_bytes(&line).unwrap();
    let text = first_text(&message);
    assert!(inside(text, &line), "no copy");
    assert_eq!(*text, long);
    // The same line decoded from a slice is copied, and decodes to an equal message.
    let copied = CliMessage::from_slice(&line).unwrap();
    assert!(!inside(first_text(&copied), &line));
    assert_eq!(copied, message);
    // It re-encodes to the line it came from.
    assert_eq!(message.to_vec(), line);
    // The shared text outlives the line's other owners.
    drop(line);
    let kept = first_text(&message).clone();
    drop(message);
    assert_eq!(kept.len(), SHARE_LINE_MIN + 10);
}

#[test]
fn small_texts_short_lines_and_escaped_texts_are_copied() {
    // A short line: copied, however much of it the text is.
    let line = assistant("hello");
    let message = CliMessage::from_bytes(&line).unwrap();
    assert!(!inside(first_text(&message), &line));
    assert_eq!(first_text(&message), "hello");
    // A long line whose text is less than half of it: copied, so that a small text never
    // keeps a large line alive.
    let line = Bytes::from(format!(
        concat!(
            r#"{{"type":"user","message":{{"role":"user","content":"small"}},"#,
            r#""session_id":"s","pad":"{}"}}"#
        ),
        "p".repeat(SHARE_LINE_MIN)
    ));
    let CliMessage::User(user) = CliMessage::from_bytes(&line).unwrap() else {
        panic!("a user message")
    };
    let MessageContent::Text(small) = &user.message.content else {
        panic!("string content")
    };
    assert!(!inside(small, &line));
    assert_eq!(small, "small");
    // A long text with an escape is unescaped into a copy.
    let escaped = format!("{}\\n", "y".repeat(SHARE_LINE_MIN));
    let line = assistant(&escaped);
    let message = CliMessage::from_bytes(&line).unwrap();
    let text = first_text(&message);
    assert!(!inside(text, &line));
    assert!(text.ends_with("y\n"));
    assert_eq!(message.to_vec(), line);
}

#[test]
fn text_reads_and_compares_as_a_string() {
    let text = Text::from("abc");
    assert_eq!(text, "abc");
    assert_eq!("abc", text);
    assert_eq!(text, String::from("abc"));
    assert_eq!(&text[1..], "bc");
    assert_eq!(format!("{text} {text:?}"), r#"abc "abc""#);
    assert_eq!(String::from(text.clone()), "abc");
    assert_eq!(serde_json::to_string(&text).unwrap(), r#""abc""#);
    assert_eq!(serde_json::from_str::<Text>(r#""a\"b""#).unwrap(), "a\"b");
    assert_eq!(Text::new(), Text::default());
    assert!(Text::new().is_empty());
}

/// `line` padded past [`SHARE_LINE_MIN`] with an unknown field, so that its strings may share it.
fn long(line: &str) -> Bytes {
    let pad = "p".repeat(SHARE_LINE_MIN);
    Bytes::from(format!(
        r#"{},"zz_pad":"{pad}"}}"#,
        line.strip_suffix('}').unwrap()
    ))
}

#[test]
fn escaped_texts_in_a_long_line_decode_as_from_a_slice() {
    // Every escape, surrogate pairs, lone halves (U+FFFD), escapes at both ends.
    let texts = [
        r#"a\nb\t\"q\"\\ \/ \b\f\r \u00e9 \ud83d\ude00 end"#,
        r#"\n starts and ends \n"#,
        r#"lone \ud83d half and \ude00 other"#,
        r#"\u0000 nul"#,
    ];
    for text in texts {
        let line = long(std::str::from_utf8(&assistant(text)).unwrap());
        let shared = CliMessage::from_bytes(&line).unwrap();
        let copied = CliMessage::from_slice(&line).unwrap();
        assert_eq!(shared, copied, "{text}");
        assert!(first_text(&shared).len() < text.len(), "{text}: unescaped");
    }
    // A long escaped text: unescaped once, equal to what the slice decoder makes.
    let big = r#"line of text\n"#.repeat(SHARE_LINE_MIN / 8);
    let line = assistant(&big);
    let shared = CliMessage::from_bytes(&line).unwrap();
    assert_eq!(shared, CliMessage::from_slice(&line).unwrap());
    assert_eq!(first_text(&shared).lines().count(), SHARE_LINE_MIN / 8);
    assert_eq!(shared.to_vec(), line);
}

#[test]
fn content_in_a_long_line_is_shared_or_unescaped() {
    // A user message whose content is one long string, then one with a tool result whose
    // content is a long string, then blocks: each decodes as from a slice, and an unescaped
    // long string lies in the line.
    let text = "t".repeat(SHARE_LINE_MIN);
    let lines = [
        format!(r#"{{"type":"user","message":{{"role":"user","content":"{text}"}}}}"#),
        format!(
            concat!(
                r#"{{"type":"user","message":{{"role":"user","content":[{{"type":"tool_result","#,
                r#""tool_use_id":"t1","content":"{}"}}]}}}}"#
            ),
            text
        ),
        format!(
            concat!(
                r#"{{"type":"user","message":{{"role":"user","content":[{{"type":"text","#,
                r#""text":"{}"}}]}}}}"#
            ),
            text
        ),
        format!(r#"{{"type":"user","message":{{"role":"user","content":"{text}\n"}}}}"#),
    ];
    for (i, line) in lines.iter().enumerate() {
        let line = Bytes::from(line.clone());
        let shared = CliMessage::from_bytes(&line).unwrap();
        assert_eq!(shared, CliMessage::from_slice(&line).unwrap(), "line {i}");
        assert_eq!(shared.to_vec(), line, "line {i}");
        let CliMessage::User(user) = &shared else {
            panic!("line {i}: {shared:?}")
        };
        let long = match &user.message.content {
            MessageContent::Text(t) => t,
            MessageContent::Blocks(blocks) => match &blocks[0] {
                ContentBlock::Text(t) => &t.text,
                ContentBlock::ToolResult(r) => match &r.content {
                    Some(MessageContent::Text(t)) => t,
                    other => panic!("line {i}: {other:?}"),
                },
                other => panic!("line {i}: {other:?}"),
            },
        };
        assert!(long.starts_with("ttt"), "line {i}");
        assert_eq!(
            inside(long, &line),
            i < 3,
            "line {i}: shared unless escaped"
        );
    }
}

#[test]
fn text_converts_collects_and_builds_as_a_string_would() {
    let texts = [Text::from("a"), Text::from_static("b")];
    let joined: String = texts.iter().collect();
    assert_eq!(joined, "ab");
    let owned: String = texts.clone().into_iter().collect();
    assert_eq!(owned, "ab");
    let mut out = String::from(&texts[0]);
    out.extend(&texts);
    assert_eq!(out, "aab");
    assert_eq!(texts[0], &String::from("a"));
    assert_eq!("c".parse::<Text>().unwrap(), "c");
    let cow: std::borrow::Cow<'_, str> = "d".into();
    assert_eq!(Text::from(cow), "d");
    assert_eq!(Text::from(Box::<str>::from("e")), "e");
    let bytes: &[u8] = texts[0].as_ref();
    assert_eq!(bytes, b"a");
    let user = byre_proto::UserMessage::with_images([("image/png", "AAAA")], "look");
    let MessageContent::Blocks(blocks) = &user.message.content else {
        panic!("blocks")
    };
    assert_eq!(blocks.len(), 2);
}

#[test]
fn hostile_long_lines_decode_as_from_a_slice() {
    // Tool results nested 700 deep, a content object holding JSON in a string, values that are
    // not strings: each long line decodes exactly as from a slice, on a thread with the stack
    // of a tokio worker (2 MiB), without overflowing it.
    let nested = format!(
        r#"{{"type":"user","message":{{"role":"user","content":{}"x"{}}},"session_id":"s"}}"#,
        r#"[{"type":"tool_result","tool_use_id":"t","content":"#.repeat(700),
        "}]".repeat(700)
    );
    let mut lines = vec![long(&nested)];
    for content in [
        r#"{"k":"\"hi\""}"#,
        r#"{"k":"[{\"type\":\"text\",\"text\":\"x\"}]"}"#,
        "5",
        "null",
        r#"[{"type":"text","text":5}]"#,
        r#"[{"type":"text","text":{"a":1}}]"#,
    ] {
        lines.push(long(&format!(
            r#"{{"type":"user","message":{{"role":"user","content":{content}}},"session_id":"s"}}"#
        )));
    }
    for text in ["5", "null", "true", r#"["a"]"#, "{}"] {
        let line = String::from_utf8(assistant("x").to_vec()).unwrap();
        lines.push(long(
            &line.replace(r#""text":"x""#, &format!(r#""text":{text}"#)),
        ));
    }
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || {
            for line in &lines {
                let head = String::from_utf8_lossy(&line[..120]);
                assert_eq!(
                    CliMessage::from_bytes(line),
                    CliMessage::from_slice(line),
                    "{head}"
                );
            }
        })
        .unwrap()
        .join()
        .unwrap();
}

#[test]
fn a_long_line_ending_in_a_backslash_is_a_bad_line_not_a_panic() {
    let mut line = br#"{"type":"x","a":""#.to_vec();
    line.extend(std::iter::repeat_n(b'a', SHARE_LINE_MIN));
    line.push(b'\\');
    let error = CliMessage::from_bytes(&Bytes::from(line)).expect_err("not JSON");
    assert!(error.to_string().contains("not JSON"), "{error}");
}

#[test]
fn raw_payloads_that_no_value_can_hold_decode_and_say_so() {
    // JSON that serde_json keeps as raw text but cannot make a `Value` of: a lone surrogate,
    // a number past f64, nesting past 128.
    let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
    for payload in [r#""\ud800""#, "1e400", deep.as_str()] {
        let line = format!(
            concat!(
                r#"{{"type":"control_response","response":{{"subtype":"success","#,
                r#""request_id":"r","response":{{"email":"x","v":{}}}}}}}"#
            ),
            payload
        );
        let message = CliMessage::from_slice(line.as_bytes()).expect("decodes");
        let CliMessage::ControlResponse(response) = &message else {
            panic!("a control response: {message:?}");
        };
        let byre_proto::ControlResponseBody::Success(success) = &response.response else {
            panic!("a success: {response:?}");
        };
        let raw = success.response.as_ref().expect("a payload");
        assert!(raw.to_value().is_err(), "{payload}");
        assert_eq!(success.payload_value(), None);
        // Comparing and re-encoding still work; the text is kept as it came.
        assert_eq!(raw, &raw.clone());
        assert!(message.to_value().is_err());
        assert_eq!(message.to_vec(), line.as_bytes());
    }
}
