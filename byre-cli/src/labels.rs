//! The short labels byre's text output shows: tool names and calls, one-line previews and
//! durations.

use std::time::Duration;

use byre_proto::ResultMessage;
use serde_json::Value;

/// The longest tool summary or result preview shown, in characters.
const PREVIEW: usize = 72;

/// A tool's short name: `mcp__server__tool` becomes `server.tool`.
pub(crate) fn tool_name(name: &str) -> String {
    match name
        .strip_prefix("mcp__")
        .and_then(|rest| rest.split_once("__"))
    {
        Some((server, tool)) => format!("{server}.{tool}"),
        None => name.to_owned(),
    }
}

/// A tool call in one line: its short name and the most telling part of its input.
pub(crate) fn tool_label(name: &str, input: &Value) -> String {
    let name = tool_name(name);
    const KEYS: [&str; 8] = [
        "command",
        "file_path",
        "path",
        "pattern",
        "url",
        "query",
        "description",
        "prompt",
    ];
    let summary = KEYS
        .iter()
        .find_map(|k| input.get(*k).and_then(Value::as_str))
        .map(str::to_owned)
        .or_else(|| match input {
            Value::Object(map) if map.is_empty() => None,
            Value::Null => None,
            other => Some(other.to_string()),
        });
    match summary {
        Some(summary) => format!("{name} {}", preview(&summary)),
        None => name,
    }
}

/// The first line of a text, cut to a readable length, with a note of what was left out.
pub(crate) fn preview(text: &str) -> String {
    let text = text.trim();
    let mut lines = text.lines();
    let first = lines.next().unwrap_or("").trim();
    let more = lines.count();
    let mut shown: String = first.chars().take(PREVIEW).collect();
    if first.chars().count() > PREVIEW {
        shown.push('…');
    }
    if more > 0 {
        shown.push_str(&format!(
            " (+{more} line{})",
            if more == 1 { "" } else { "s" }
        ));
    }
    shown
}

/// A text on one line, cut to a readable length.
pub(crate) fn one_line(text: &str) -> String {
    let joined = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut shown: String = joined.chars().take(PREVIEW * 2).collect();
    if joined.chars().count() > PREVIEW * 2 {
        shown.push('…');
    }
    shown
}

/// A duration for people: `0.4s`, `12s`, `3m05s`.
pub(crate) fn elapsed(d: Duration) -> String {
    let secs = d.as_secs_f64();
    if secs < 10.0 {
        format!("{secs:.1}s")
    } else if secs < 60.0 {
        format!("{}s", secs as u64)
    } else {
        let whole = secs as u64;
        format!("{}m{:02}s", whole / 60, whole % 60)
    }
}

/// The closing line of a turn: its status, turns, duration, cost and session.
pub(crate) fn closing_line(result: &ResultMessage) -> String {
    let failed = result.is_error == Some(true) || result.subtype.as_str() != "success";
    let mut status = match (failed, result.subtype.as_str()) {
        (false, _) => "done".to_owned(),
        // An API error is a `success` result with `is_error`.
        (true, "success") => "error".to_owned(),
        (true, subtype) => format!("error: {subtype}"),
    };
    if failed {
        if let Some(reason) = &result.terminal_reason {
            status.push_str(&format!(" ({reason})"));
        }
    }
    let turns = result.num_turns.unwrap_or(0);
    let mut line = format!(
        "── {status} · {turns} turn{}",
        if turns == 1 { "" } else { "s" }
    );
    if let Some(ms) = result.duration_ms.as_ref().and_then(|n| n.as_f64()) {
        line.push_str(&format!(" · {}", elapsed(Duration::from_millis(ms as u64))));
    }
    if let Some(cost) = result.total_cost_usd.as_ref().and_then(|n| n.as_f64()) {
        line.push_str(&format!(" · ${cost:.4}"));
    }
    if let Some(session) = &result.session_id {
        line.push_str(&format!(" · session {session}"));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use byre_proto::CliMessage;
    use serde_json::json;

    #[test]
    fn tool_labels_show_the_telling_input() {
        assert_eq!(
            tool_label(
                "Bash",
                &json!({"command": "echo hi", "description": "Say hi"})
            ),
            "Bash echo hi"
        );
        assert_eq!(
            tool_label("mcp__byre__lookup", &json!({"word": "byre"})),
            r#"byre.lookup {"word":"byre"}"#
        );
        assert_eq!(tool_label("ListAgents", &json!({})), "ListAgents");
    }

    #[test]
    fn previews_keep_one_line() {
        assert_eq!(preview("hi\n"), "hi");
        assert_eq!(preview("a\nb\nc"), "a (+2 lines)");
        let long = "x".repeat(200);
        assert_eq!(preview(&long).chars().count(), PREVIEW + 1);
    }

    #[test]
    fn durations_read_well() {
        assert_eq!(elapsed(Duration::from_millis(420)), "0.4s");
        assert_eq!(elapsed(Duration::from_secs(12)), "12s");
        assert_eq!(elapsed(Duration::from_secs(185)), "3m05s");
    }

    #[test]
    fn the_closing_line_has_turns_duration_cost_and_session() {
        let line = concat!(
            r#"{"type":"result","subtype":"success","is_error":false,"num_turns":2,"#,
            r#""duration_ms":2300,"total_cost_usd":0.0012,"session_id":"abc"}"#
        )
        .as_bytes();
        let CliMessage::Result(result) = CliMessage::from_slice(line).unwrap() else {
            panic!("a result")
        };
        assert_eq!(
            closing_line(&result),
            "── done · 2 turns · 2.3s · $0.0012 · session abc"
        );
        let line = concat!(
            r#"{"type":"result","subtype":"error_during_execution","is_error":true,"#,
            r#""num_turns":1,"terminal_reason":"aborted_streaming"}"#
        )
        .as_bytes();
        let CliMessage::Result(result) = CliMessage::from_slice(line).unwrap() else {
            panic!("a result")
        };
        assert_eq!(
            closing_line(&result),
            "── error: error_during_execution (aborted_streaming) · 1 turn"
        );
        let line = concat!(
            r#"{"type":"result","subtype":"success","is_error":true,"num_turns":1,"#,
            r#""terminal_reason":"api_error"}"#
        )
        .as_bytes();
        let CliMessage::Result(result) = CliMessage::from_slice(line).unwrap() else {
            panic!("a result")
        };
        assert_eq!(closing_line(&result), "── error (api_error) · 1 turn");
    }
}
