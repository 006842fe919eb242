//! What a set of transcripts says about the CLI that wrote them: its message kinds, the fields
//! of each kind by path, its hook events and their inputs, its control requests, its
//! `initialize` answer, and per scenario the behaviour (results, tools called).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use byre_testkit::TranscriptLine;
use serde_json::Value;

/// Everything one CLI's run of the scenarios shows, in sorted sets so two can be compared.
#[derive(Default)]
pub(super) struct Profile {
    /// Message kinds (`system/init`, `stream_event/content_block_delta`, `assistant`), with
    /// how many lines of each came.
    pub(super) kinds: BTreeMap<String, usize>,
    /// Field paths by kind (`result /begun_message_ids`), with a first example value.
    pub(super) fields: BTreeMap<String, String>,
    /// Hook events the CLI called back for, with the fields of their inputs.
    pub(super) hook_events: BTreeMap<String, BTreeSet<String>>,
    /// Subtypes of the CLI's own control requests.
    pub(super) control_requests: BTreeSet<String>,
    /// Top-level fields of the `initialize` answer.
    pub(super) initialize_fields: BTreeMap<String, String>,
    /// Values of every `capabilities` list (in `system/init` and the `initialize` answer).
    pub(super) capabilities: BTreeSet<String>,
    /// Per scenario: what it did.
    pub(super) behaviour: BTreeMap<String, Behaviour>,
}

/// What one scenario did, in terms that do not depend on timing or the CLI's wording.
#[derive(Default, Debug, Clone, PartialEq, Eq)]
pub(super) struct Behaviour {
    /// One entry per `result` line: `subtype`, whether an error, and the result text.
    pub(super) results: Vec<String>,
    /// The tools the model called, in order.
    pub(super) tools: Vec<String>,
}

impl Behaviour {
    /// The number of turns (results).
    pub(super) fn turns(&self) -> usize {
        self.results.len()
    }
}

/// The longest example value shown.
const EXAMPLE: usize = 80;

impl Profile {
    /// Adds scenario `name`'s transcript lines (one or more CLI processes, in order).
    pub(super) fn add(&mut self, name: &str, lines: &[TranscriptLine]) {
        // The subtype of each host request, by request id, to name the answers.
        let mut sent: HashMap<String, String> = HashMap::new();
        let behaviour = self.behaviour.entry(name.to_owned()).or_default();
        for line in lines {
            let Some(msg) = line.msg() else { continue };
            if line.is_send() {
                if msg["type"] == "control_request" {
                    if let (Some(id), Some(subtype)) = (
                        msg["request_id"].as_str(),
                        msg["request"]["subtype"].as_str(),
                    ) {
                        sent.insert(id.to_owned(), subtype.to_owned());
                    }
                }
                continue;
            }
            if !line.is_recv() {
                continue;
            }
            let kind = kind_of(&msg);
            *self.kinds.entry(kind.clone()).or_default() += 1;
            let mut paths = Vec::new();
            flatten(&msg, &mut String::new(), &mut paths);
            for (path, example) in paths {
                self.fields
                    .entry(format!("{kind} {path}"))
                    .or_insert(example);
            }
            match msg["type"].as_str() {
                Some("control_request") => {
                    let request = &msg["request"];
                    if let Some(subtype) = request["subtype"].as_str() {
                        self.control_requests.insert(subtype.to_owned());
                    }
                    if request["subtype"] == "hook_callback" {
                        let input = &request["input"];
                        let event = input["hook_event_name"].as_str().unwrap_or("?");
                        let fields = self.hook_events.entry(event.to_owned()).or_default();
                        if let Some(object) = input.as_object() {
                            fields.extend(object.keys().cloned());
                        }
                    }
                }
                Some("control_response") => {
                    let response = &msg["response"];
                    let answers = response["request_id"]
                        .as_str()
                        .and_then(|id| sent.get(id))
                        .map(String::as_str);
                    if answers == Some("initialize") {
                        if let Some(object) = response["response"].as_object() {
                            for (key, value) in object {
                                self.initialize_fields
                                    .entry(key.clone())
                                    .or_insert_with(|| example(value));
                            }
                        }
                        capabilities(&response["response"], &mut self.capabilities);
                    }
                }
                Some("system") if msg["subtype"] == "init" => {
                    capabilities(&msg, &mut self.capabilities);
                }
                Some("assistant") => {
                    for block in msg["message"]["content"].as_array().into_iter().flatten() {
                        if block["type"] == "tool_use" {
                            let tool = block["name"].as_str().unwrap_or("?");
                            behaviour.tools.push(tool.to_owned());
                        }
                    }
                }
                Some("result") => behaviour.results.push(format!(
                    "{} error={} {}",
                    msg["subtype"].as_str().unwrap_or("?"),
                    msg["is_error"].as_bool().unwrap_or(false),
                    example(&msg["result"])
                )),
                _ => {}
            }
        }
    }
}

/// A message's kind: its `type`, with its `subtype` (or a stream event's type, or a control
/// request's subtype) after a slash.
fn kind_of(msg: &Value) -> String {
    let kind = msg["type"].as_str().unwrap_or("?");
    let sub = match kind {
        "stream_event" => msg["event"]["type"].as_str(),
        "control_request" => msg["request"]["subtype"].as_str(),
        "control_response" => msg["response"]["subtype"].as_str(),
        _ => msg["subtype"].as_str(),
    };
    match sub {
        Some(sub) => format!("{kind}/{sub}"),
        None => kind.to_owned(),
    }
}

/// Every leaf and every object of `value` by path, with an example of each. Array elements
/// share one path (`/message/content/[]/text`), and a key that is not an identifier (a model
/// name, a tool name, a file path) is written `*`, so paths do not depend on the data.
fn flatten(value: &Value, path: &mut String, out: &mut Vec<(String, String)>) {
    match value {
        Value::Object(object) => {
            for (key, child) in object {
                let len = path.len();
                path.push('/');
                path.push_str(if is_identifier(key) { key } else { "*" });
                out.push((path.clone(), example(child)));
                flatten(child, path, out);
                path.truncate(len);
            }
        }
        Value::Array(items) => {
            let len = path.len();
            path.push_str("/[]");
            for item in items {
                if item.is_object() || item.is_array() {
                    flatten(item, path, out);
                }
            }
            path.truncate(len);
        }
        _ => {}
    }
}

fn is_identifier(key: &str) -> bool {
    let mut chars = key.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A value shown in a report: its JSON, cut at [`EXAMPLE`] characters.
pub(super) fn example(value: &Value) -> String {
    let text = match value {
        Value::Object(o) => format!("{{{} keys}}", o.len()),
        Value::Array(a) if a.len() > 3 => format!("[{} items]", a.len()),
        other => other.to_string(),
    };
    if text.chars().count() <= EXAMPLE {
        return text;
    }
    let cut: String = text.chars().take(EXAMPLE).collect();
    format!("{cut}...")
}

/// The strings of every `capabilities` array directly in `object`.
fn capabilities(object: &Value, out: &mut BTreeSet<String>) {
    for item in object["capabilities"].as_array().into_iter().flatten() {
        if let Some(text) = item.as_str() {
            out.insert(text.to_owned());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn paths_do_not_depend_on_the_data() {
        let msg = json!({"type": "result", "modelUsage": {"claude-x-1": {"inputTokens": 1}},
            "list": [{"a": 1}, {"b": 2}]});
        let mut out = Vec::new();
        flatten(&msg, &mut String::new(), &mut out);
        let paths: Vec<&str> = out.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(
            paths,
            [
                "/list",
                "/list/[]/a",
                "/list/[]/b",
                "/modelUsage",
                "/modelUsage/*",
                "/modelUsage/*/inputTokens",
                "/type"
            ]
        );
        assert_eq!(kind_of(&msg), "result");
        assert_eq!(
            kind_of(&json!({"type": "stream_event", "event": {"type": "message_stop"}})),
            "stream_event/message_stop"
        );
    }

    #[test]
    fn examples_are_short() {
        assert_eq!(
            example(&json!("x".repeat(100))).chars().count(),
            EXAMPLE + 3
        );
        assert_eq!(example(&json!({"a": 1, "b": 2})), "{2 keys}");
        assert_eq!(example(&json!([1, 2])), "[1,2]");
    }
}
