//! Tracing spans of the driver against the real CLI: one span per session (with the CLI's pid
//! and, once known, the session id), one per turn, one per control request in each direction,
//! nested as they happen. A test binary of its own: the recorder is the process's only
//! subscriber, so no other test's sessions can race with it.

#[allow(dead_code)]
#[path = "../it/support.rs"]
mod support;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use byre_proto::{CliMessage, HookEvent, HookOutput};
use byre_session::{Claude, Event};
use byre_testkit::{FakeModel, Match, Reply, Rule, Script};
use futures::StreamExt;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::Subscriber;
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::Layer;

#[derive(Debug, Clone)]
struct SpanRec {
    id: u64,
    name: &'static str,
    parent: Option<u64>,
    fields: BTreeMap<String, String>,
}

#[derive(Debug, Clone)]
struct EventRec {
    span: Option<u64>,
    fields: BTreeMap<String, String>,
}

#[derive(Default, Clone)]
struct Recorder {
    spans: Arc<Mutex<Vec<SpanRec>>>,
    events: Arc<Mutex<Vec<EventRec>>>,
}

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(
            field.name().to_owned(),
            format!("{value:?}").trim_matches('"').to_owned(),
        );
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
}

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Recorder {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let mut fields = BTreeMap::new();
        attrs.record(&mut Fields(&mut fields));
        let parent = ctx
            .span(id)
            .and_then(|span| span.parent())
            .map(|parent| parent.id().into_u64());
        self.spans.lock().unwrap().push(SpanRec {
            id: id.into_u64(),
            name: attrs.metadata().name(),
            parent,
            fields,
        });
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, _ctx: Context<'_, S>) {
        let mut spans = self.spans.lock().unwrap();
        if let Some(span) = spans.iter_mut().rev().find(|s| s.id == id.into_u64()) {
            values.record(&mut Fields(&mut span.fields));
        }
    }

    fn on_event(&self, event: &tracing::Event<'_>, ctx: Context<'_, S>) {
        let mut fields = BTreeMap::new();
        event.record(&mut Fields(&mut fields));
        let span = ctx.event_span(event).map(|s| s.id().into_u64());
        self.events.lock().unwrap().push(EventRec { span, fields });
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_turns_and_control_requests_have_spans() {
    let recorder = Recorder::default();
    let subscriber = tracing_subscriber::registry().with(recorder.clone());
    tracing::subscriber::set_global_default(subscriber).expect("the only subscriber");

    let script = Script::new()
        .rule(
            Rule::when(Match::has_tool_result(true)).reply(Reply::text("Hi from the fake model.")),
        )
        .rule(
            Rule::when(Match::user_text_contains("hello")).reply(Reply::tool_use(
                "Bash",
                serde_json::json!({"command": "echo hi", "description": "Say hi"}),
            )),
        );
    let model = FakeModel::start(script).await.unwrap();
    let (options, _env) = support::options(&model);
    let options = options.hook(HookEvent::STOP, |_input, _id| async {
        Ok(HookOutput::default())
    });
    let (claude, mut events) = Claude::start(options).await.unwrap();
    claude.send("hello").unwrap();
    loop {
        let event = tokio::time::timeout(Duration::from_secs(30), events.next())
            .await
            .expect("an event in time")
            .expect("events go on");
        if let Event::Message(CliMessage::Result(_)) = event {
            break;
        }
    }
    claude
        .request(byre_proto::GetContextUsageRequest::default())
        .await
        .unwrap();
    let session_id = claude.session_id().unwrap();
    claude.close().await.unwrap();

    let spans = recorder.spans.lock().unwrap().clone();
    let events = recorder.events.lock().unwrap().clone();
    let named = |name: &str| spans.iter().filter(|s| s.name == name).collect::<Vec<_>>();
    let sessions = named("byre_session");
    assert_eq!(sessions.len(), 1, "{spans:#?}");
    let session = sessions[0];
    assert!(
        session
            .fields
            .get("pid")
            .is_some_and(|p| p.contains(char::is_numeric)),
        "{session:?}"
    );
    assert_eq!(session.fields.get("session_id"), Some(&session_id));

    let turns = named("turn");
    assert_eq!(turns.len(), 1, "{spans:#?}");
    // In the shape of OpenTelemetry's GenAI conventions: the turn an agent invocation with
    // the session, the usage and the cost of its result; the tool call a span inside it.
    let field = |span: &SpanRec, name: &str| span.fields.get(name).cloned().unwrap_or_default();
    let turn = turns[0];
    assert_eq!(
        field(turn, "otel.name"),
        "invoke_agent claude-code",
        "{turn:?}"
    );
    assert_eq!(field(turn, "gen_ai.operation.name"), "invoke_agent");
    assert_eq!(field(turn, "gen_ai.provider.name"), "anthropic");
    assert_eq!(
        field(turn, "gen_ai.conversation.id"),
        session_id,
        "{turn:?}"
    );
    assert_eq!(field(turn, "gen_ai.usage.input_tokens"), "200", "{turn:?}");
    assert_eq!(field(turn, "gen_ai.usage.output_tokens"), "20", "{turn:?}");
    assert!(!field(turn, "gen_ai.request.model").is_empty(), "{turn:?}");
    assert!(field(turn, "byre.cost_usd").parse::<f64>().unwrap() > 0.0);
    assert_eq!(field(turn, "otel.status_code"), "OK");
    let tools = named("tool");
    assert_eq!(tools.len(), 1, "{spans:#?}");
    let tool = tools[0];
    assert_eq!(tool.parent, Some(turn.id));
    assert_eq!(field(tool, "otel.name"), "execute_tool Bash");
    assert_eq!(field(tool, "gen_ai.operation.name"), "execute_tool");
    assert_eq!(field(tool, "gen_ai.tool.name"), "Bash");
    assert!(
        field(tool, "gen_ai.tool.call.id").starts_with("toolu_"),
        "{tool:?}"
    );
    let turn = turns[0];
    assert_eq!(turn.parent, Some(session.id));
    assert_eq!(turn.fields.get("turn").map(String::as_str), Some("1"));
    assert!(
        events.iter().any(|e| e.span == Some(turn.id)
            && e.fields.get("message").map(String::as_str) == Some("ended")
            && e.fields.get("subtype").map(String::as_str) == Some("success")),
        "the turn's end is told in its span: {events:#?}"
    );

    let requests = named("control_request");
    let find = |subtype: &str, from: &str| {
        requests
            .iter()
            .find(|s| {
                s.fields.get("subtype").map(String::as_str) == Some(subtype)
                    && s.fields.get("from").map(String::as_str) == Some(from)
            })
            .unwrap_or_else(|| panic!("no {from} {subtype} span: {requests:#?}"))
    };
    let initialize = find("initialize", "host");
    assert_eq!(initialize.parent, Some(session.id));
    let hook = find("hook_callback", "cli");
    assert_eq!(hook.parent, Some(turn.id), "the hook ran during the turn");
    let usage = find("get_context_usage", "host");
    assert_eq!(usage.parent, Some(session.id), "sent after the turn");
    for span in [initialize, hook, usage] {
        assert!(
            events.iter().any(|e| e.span == Some(span.id)
                && e.fields.get("message").map(String::as_str) == Some("answered")
                && e.fields.contains_key("elapsed_ms")),
            "{span:?} tells its answer and how long it took: {events:#?}"
        );
    }
}
