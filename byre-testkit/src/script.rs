//! Scripts for the fake model: ordered rules that say how to answer each Messages API request.
//!
//! A [`Script`] is a list of [`Rule`]s. For every `POST /v1/messages` request the fake model
//! takes the first rule whose [`Match`] holds (and whose `times` budget is not used up) and
//! answers with its [`Reply`]. Scripts can be written in Rust with the builder functions or
//! loaded from JSON files (see `testdata/scenarios/example.json`).

use std::fmt;
use std::path::Path;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

mod reply;

pub use self::reply::{Block, ErrorReply, MessageReply, Reply, Usage};

/// Text of the reply sent when no rule matches a request.
pub const UNMATCHED_TEXT: &str = "(fake model: no rule matched)";

/// The default number of characters per streamed delta.
pub const DEFAULT_CHUNK_SIZE: usize = 20;

/// A failure to load a [`Script`].
#[derive(Debug, thiserror::Error)]
pub enum ScriptError {
    /// The script file could not be read.
    #[error("cannot read script {path}: {source}")]
    Read {
        /// The file that was read.
        path: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The script is not valid script JSON.
    #[error(
        "invalid script{}: {source}",
        .path.as_deref().map(|p| format!(" {p}")).unwrap_or_default()
    )]
    Parse {
        /// The file, when the script came from a file.
        path: Option<String>,
        /// The JSON error.
        #[source]
        source: serde_json::Error,
    },
}

/// An ordered list of rules; the first rule that matches a request answers it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Script {
    /// Free text describing the scenario (ignored by the server).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The rules, in the order they are tried.
    #[serde(default)]
    pub rules: Vec<Rule>,
}

impl Script {
    /// An empty script (every request gets the "no rule matched" reply).
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a rule at the end (builder style).
    #[must_use]
    pub fn rule(mut self, rule: Rule) -> Self {
        self.rules.push(rule);
        self
    }

    /// Sets the description (builder style).
    #[must_use]
    pub fn description(mut self, text: impl Into<String>) -> Self {
        self.description = Some(text.into());
        self
    }

    /// Adds a rule at the end.
    pub fn push(&mut self, rule: Rule) {
        self.rules.push(rule);
    }

    /// Parses a script from JSON text.
    pub fn from_json(text: &str) -> Result<Self, ScriptError> {
        serde_json::from_str(text).map_err(|source| ScriptError::Parse { path: None, source })
    }

    /// Reads and parses a JSON script file.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self, ScriptError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| ScriptError::Read {
            path: path.display().to_string(),
            source,
        })?;
        serde_json::from_str(&text).map_err(|source| ScriptError::Parse {
            path: Some(path.display().to_string()),
            source,
        })
    }

    /// The script as pretty-printed JSON, in the format [`Script::from_json`] reads.
    pub fn to_json(&self) -> String {
        // Serializing these plain data types cannot fail.
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// Index of the first rule that matches `request` and has budget left, given how often
    /// each rule has fired so far (`fired[i]` for rule `i`; missing entries count as 0).
    pub fn select(&self, request: &RequestView<'_>, fired: &[u32]) -> Option<usize> {
        self.rules.iter().enumerate().position(|(i, rule)| {
            let used = fired.get(i).copied().unwrap_or(0);
            rule.times.is_none_or(|max| used < max) && rule.when.matches(request)
        })
    }
}

/// One rule: when the matcher holds, answer with the reply (at most `times` times).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    /// Conditions on the request; all given ones must hold. Empty matches every request.
    #[serde(default)]
    pub when: Match,
    /// How to answer.
    pub reply: Reply,
    /// How often the rule may fire; `None` means without limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub times: Option<u32>,
}

impl Rule {
    /// Starts a rule with the given matcher; finish it with [`PendingRule::reply`].
    pub fn when(when: Match) -> PendingRule {
        PendingRule { when, times: None }
    }

    /// Starts a rule that matches every request.
    pub fn any() -> PendingRule {
        Self::when(Match::any())
    }

    /// Limits how often the rule may fire.
    #[must_use]
    pub fn times(mut self, times: u32) -> Self {
        self.times = Some(times);
        self
    }
}

/// A rule that still needs its reply; made by [`Rule::when`].
#[derive(Clone, Debug, PartialEq)]
pub struct PendingRule {
    when: Match,
    times: Option<u32>,
}

impl PendingRule {
    /// Limits how often the rule may fire.
    #[must_use]
    pub fn times(mut self, times: u32) -> Self {
        self.times = Some(times);
        self
    }

    /// Finishes the rule with its reply.
    pub fn reply(self, reply: Reply) -> Rule {
        Rule {
            when: self.when,
            reply,
            times: self.times,
        }
    }
}

/// Conditions on a Messages API request. Every condition that is set must hold.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Match {
    /// The 1-based number of this `POST /v1/messages` request on this server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<u32>,
    /// The last user text contains this string.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_text_contains: Option<String>,
    /// The last user text is exactly this string.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_text_equals: Option<String>,
    /// A text block of the last user message contains this string, `<system-reminder>`
    /// blocks included: the CLI's own notes (hook feedback, task notifications) arrive as
    /// plain text in some versions and inside a reminder in others, so a rule on text the
    /// test chose (a hook's reason) matches them all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub any_user_text_contains: Option<String>,
    /// Whether the last user message holds a `tool_result` block.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub has_tool_result: Option<bool>,
    /// The text of a `tool_result` block in the last user message contains this string.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_result_contains: Option<String>,
    /// A tool of this name is in the request's `tools`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_offered: Option<String>,
    /// The request's `model` equals or starts with this string.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Whether the request asks for streaming (`"stream": true`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<bool>,
    /// Whether the request offers no tools (`tools` absent or empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub no_tools: Option<bool>,
    /// Whether the last user message holds a `<task-notification>`: the turn the CLI starts by
    /// itself when a background task finishes (it wraps the notification in a
    /// `<system-reminder>` block, which the user-text conditions skip).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_notification: Option<bool>,
    /// A text of a message after the last assistant one (this request's new input), of any
    /// role, `<system-reminder>` blocks included: the CLI sends some hook feedback
    /// (`additionalContext` of `UserPromptSubmit` and `PostToolUse`) as a message of its own
    /// with `role: "system"`, which the user-text conditions do not see.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new_text_contains: Option<String>,
    /// A condition of the test's own on the request. It is not serialized: a script that
    /// holds one prints (and saves) without it.
    #[serde(skip)]
    pub predicate: Option<Predicate>,
}

/// A condition of a test's own on a request ([`Match::when`]).
#[derive(Clone)]
pub struct Predicate(Arc<dyn Fn(&RequestView<'_>) -> bool + Send + Sync>);

impl fmt::Debug for Predicate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Predicate(..)")
    }
}

impl PartialEq for Predicate {
    /// Two predicates are equal when they are the same closure.
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Match {
    /// Matches every request.
    pub fn any() -> Self {
        Self::default()
    }

    /// Matches the `n`-th (1-based) `POST /v1/messages` request.
    pub fn request(n: u32) -> Self {
        Self {
            request: Some(n),
            ..Self::default()
        }
    }

    /// Matches when the last user text contains `text`.
    pub fn user_text_contains(text: impl Into<String>) -> Self {
        Self {
            user_text_contains: Some(text.into()),
            ..Self::default()
        }
    }

    /// Matches when a text block of the last user message, `<system-reminder>` blocks
    /// included, contains `text`.
    pub fn any_user_text_contains(text: impl Into<String>) -> Self {
        Self {
            any_user_text_contains: Some(text.into()),
            ..Self::default()
        }
    }

    /// Matches the turn the CLI starts by itself when a background task finishes.
    pub fn task_notification() -> Self {
        Self {
            task_notification: Some(true),
            ..Self::default()
        }
    }

    /// Matches when a text of this request's new input (the messages after the last
    /// assistant one), of any role and reminders included, contains `text`: hook feedback the
    /// CLI sends as a `role: "system"` message, for one.
    pub fn new_text_contains(text: impl Into<String>) -> Self {
        Self {
            new_text_contains: Some(text.into()),
            ..Self::default()
        }
    }

    /// Matches when `predicate` holds for the request (with the other conditions set).
    pub fn when(predicate: impl Fn(&RequestView<'_>) -> bool + Send + Sync + 'static) -> Self {
        Self {
            predicate: Some(Predicate(Arc::new(predicate))),
            ..Self::default()
        }
    }

    /// Matches when the last user text is exactly `text`.
    pub fn user_text_equals(text: impl Into<String>) -> Self {
        Self {
            user_text_equals: Some(text.into()),
            ..Self::default()
        }
    }

    /// Matches when the last user message does (`true`) or does not hold a `tool_result`.
    pub fn has_tool_result(yes: bool) -> Self {
        Self {
            has_tool_result: Some(yes),
            ..Self::default()
        }
    }

    /// Matches when a `tool_result` in the last user message contains `text`.
    pub fn tool_result_contains(text: impl Into<String>) -> Self {
        Self {
            tool_result_contains: Some(text.into()),
            ..Self::default()
        }
    }

    /// Matches when a tool named `name` is offered.
    pub fn tool_offered(name: impl Into<String>) -> Self {
        Self {
            tool_offered: Some(name.into()),
            ..Self::default()
        }
    }

    /// Matches when the request's model equals or starts with `model`.
    pub fn model(model: impl Into<String>) -> Self {
        Self {
            model: Some(model.into()),
            ..Self::default()
        }
    }

    /// Matches streaming (`true`) or non-streaming (`false`) requests.
    pub fn stream(yes: bool) -> Self {
        Self {
            stream: Some(yes),
            ..Self::default()
        }
    }

    /// Matches requests that offer no tools (`true`) or some tools (`false`).
    pub fn no_tools(yes: bool) -> Self {
        Self {
            no_tools: Some(yes),
            ..Self::default()
        }
    }

    /// Combines two matchers: the result requires the conditions of both (where both set the
    /// same condition, `other` wins).
    #[must_use]
    pub fn and(self, other: Match) -> Self {
        Self {
            request: other.request.or(self.request),
            user_text_contains: other.user_text_contains.or(self.user_text_contains),
            user_text_equals: other.user_text_equals.or(self.user_text_equals),
            any_user_text_contains: other.any_user_text_contains.or(self.any_user_text_contains),
            has_tool_result: other.has_tool_result.or(self.has_tool_result),
            tool_result_contains: other.tool_result_contains.or(self.tool_result_contains),
            tool_offered: other.tool_offered.or(self.tool_offered),
            model: other.model.or(self.model),
            stream: other.stream.or(self.stream),
            no_tools: other.no_tools.or(self.no_tools),
            task_notification: other.task_notification.or(self.task_notification),
            new_text_contains: other.new_text_contains.or(self.new_text_contains),
            predicate: other.predicate.or(self.predicate),
        }
    }

    /// Whether every condition that is set holds for `request`.
    pub fn matches(&self, request: &RequestView<'_>) -> bool {
        if self.request.is_some_and(|n| n != request.number) {
            return false;
        }
        if self.user_text_contains.is_some() || self.user_text_equals.is_some() {
            let text = last_user_text(request.body);
            let text = text.as_deref();
            if let Some(want) = &self.user_text_contains {
                if !text.is_some_and(|t| t.contains(want.as_str())) {
                    return false;
                }
            }
            if let Some(want) = &self.user_text_equals {
                if text != Some(want.as_str()) {
                    return false;
                }
            }
        }
        if let Some(want) = &self.any_user_text_contains {
            if !contains(&user_texts(request.body), want) {
                return false;
            }
        }
        if let Some(want) = self.has_tool_result {
            if has_tool_result(request.body) != want {
                return false;
            }
        }
        if let Some(want) = self.task_notification {
            if has_task_notification(request.body) != want {
                return false;
            }
        }
        if let Some(want) = &self.tool_result_contains {
            if !contains(&tool_result_texts(request.body), want) {
                return false;
            }
        }
        if let Some(want) = &self.tool_offered {
            if !tool_names(request.body).iter().any(|n| n == want) {
                return false;
            }
        }
        if let Some(want) = &self.model {
            let model = request.body.get("model").and_then(Value::as_str);
            if !model.is_some_and(|m| m.starts_with(want.as_str())) {
                return false;
            }
        }
        if self
            .stream
            .is_some_and(|want| is_streaming(request.body) != want)
        {
            return false;
        }
        if self
            .no_tools
            .is_some_and(|want| tool_names(request.body).is_empty() != want)
        {
            return false;
        }
        if let Some(want) = &self.new_text_contains {
            if !contains(&new_texts(request.body), want) {
                return false;
            }
        }
        if let Some(predicate) = &self.predicate {
            if !(predicate.0)(request) {
                return false;
            }
        }
        true
    }
}

/// What a matcher looks at: the request number and the parsed JSON body.
#[derive(Clone, Copy, Debug)]
pub struct RequestView<'a> {
    /// 1-based number of this `POST /v1/messages` request.
    pub number: u32,
    /// The request body.
    pub body: &'a Value,
}

impl fmt::Display for Script {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_json())
    }
}

// ---- request inspection, shared by the matchers and the request log ----

/// The `messages` array of a request body (empty when absent).
pub(crate) fn messages(body: &Value) -> &[Value] {
    body.get("messages")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

/// The last message with `role: "user"` (messages with other roles, such as the CLI's
/// `role: "system"` environment message, are skipped).
pub(crate) fn last_user_message(body: &Value) -> Option<&Value> {
    messages(body)
        .iter()
        .rev()
        .find(|m| m.get("role").and_then(Value::as_str) == Some("user"))
}

/// Every text of the last user message (a string content, or its text blocks), reminders
/// included.
pub(crate) fn user_texts(body: &Value) -> Vec<&str> {
    last_user_message(body)
        .and_then(|m| m.get("content"))
        .map(content_texts)
        .unwrap_or_default()
}

/// The texts of a message's `content`: the string, or its text blocks.
fn content_texts(content: &Value) -> Vec<&str> {
    match content {
        Value::String(s) => vec![s.as_str()],
        Value::Array(blocks) => blocks
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect(),
        _ => Vec::new(),
    }
}

/// Whether one of `texts` contains `want`.
fn contains<S: AsRef<str>>(texts: &[S], want: &str) -> bool {
    texts.iter().any(|t| t.as_ref().contains(want))
}

/// Every text of the messages after the last assistant one, of any role, reminders included.
pub(crate) fn new_texts(body: &Value) -> Vec<&str> {
    let all = messages(body);
    let start = all
        .iter()
        .rposition(|m| m.get("role").and_then(Value::as_str) == Some("assistant"))
        .map_or(0, |at| at + 1);
    all[start..]
        .iter()
        .filter_map(|m| m.get("content"))
        .flat_map(content_texts)
        .collect()
}

fn is_reminder(text: &str) -> bool {
    text.trim_start().starts_with("<system-reminder>")
}

/// The text of the last user message: its text blocks, without `<system-reminder>` blocks,
/// joined with newlines. `None` when that message has no such text.
pub(crate) fn last_user_text(body: &Value) -> Option<String> {
    let content = last_user_message(body)?.get("content")?;
    let parts = content_texts(content);
    let parts: Vec<&str> = parts.into_iter().filter(|t| !is_reminder(t)).collect();
    if parts.is_empty() {
        None
    } else {
        Some(parts.join("\n"))
    }
}

/// Whether the last user message holds a `<task-notification>` in any text block, reminders
/// included.
fn has_task_notification(body: &Value) -> bool {
    let Some(content) = last_user_message(body).and_then(|m| m.get("content")) else {
        return false;
    };
    match content {
        Value::String(s) => s.contains("<task-notification>"),
        Value::Array(blocks) => blocks.iter().any(|b| {
            b.get("text")
                .and_then(Value::as_str)
                .is_some_and(|t| t.contains("<task-notification>"))
        }),
        _ => false,
    }
}

fn tool_result_blocks(body: &Value) -> Vec<&Value> {
    last_user_message(body)
        .and_then(|m| m.get("content"))
        .and_then(Value::as_array)
        .map(|blocks| {
            blocks
                .iter()
                .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
                .collect()
        })
        .unwrap_or_default()
}

/// Whether the last user message holds a `tool_result` block.
pub(crate) fn has_tool_result(body: &Value) -> bool {
    !tool_result_blocks(body).is_empty()
}

/// The text of each `tool_result` block in the last user message.
pub(crate) fn tool_result_texts(body: &Value) -> Vec<String> {
    tool_result_blocks(body)
        .into_iter()
        .map(|b| match b.get("content") {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Array(parts)) => parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n"),
            _ => String::new(),
        })
        .collect()
}

/// The names of the tools offered in the request.
pub(crate) fn tool_names(body: &Value) -> Vec<String> {
    body.get("tools")
        .and_then(Value::as_array)
        .map(|tools| {
            tools
                .iter()
                .filter_map(|t| t.get("name").and_then(Value::as_str))
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// Whether the request asks for a streamed reply.
pub(crate) fn is_streaming(body: &Value) -> bool {
    body.get("stream").and_then(Value::as_bool) == Some(true)
}
