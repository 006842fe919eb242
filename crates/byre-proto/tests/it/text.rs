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
