//! Trace propagation (feature `otel`): with an OpenTelemetry layer installed, the CLI gets a
//! `TRACEPARENT` in the caller's trace whose parent is the session's own span (a trace of the
//! session's own outside any span), the spans reach the exporter with their GenAI attributes,
//! a `TRACEPARENT` the options set wins, and the real CLI's own spans, exported to an OTLP
//! receiver on loopback, carry the caller's trace id. A test
//! binary of its own: the layer is the process's only subscriber.

use std::time::Duration;

#[allow(dead_code)]
#[path = "../it/support.rs"]
mod support;

use byre_session::{Claude, Options};
use opentelemetry::trace::{TraceContextExt, TracerProvider as _};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider};
use tracing_opentelemetry::OpenTelemetrySpanExt;
use tracing_subscriber::layer::SubscriberExt;

/// A session on `byre-hostile` whose result is the value of the CLI's `var`.
fn reporting(var: &str) -> Options {
    Options::new()
        .program(byre_testkit::hostile_bin().expect("byre-hostile builds"))
        .extra_arg("mode", Some("env-value".into()))
        .extra_arg("result", Some(var.into()))
        .exit_grace(Duration::from_secs(2))
}

/// What the CLI saw of `var`, for a session started with `options`.
async fn seen(options: Options) -> String {
    let (claude, mut events) = Claude::start(options).await.unwrap();
    claude.send("what is it").unwrap();
    let output = events.turn().finish().await.unwrap();
    claude.close().await.unwrap();
    output.result.result.unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cli_joins_the_callers_trace_under_the_sessions_span() {
    let exporter = InMemorySpanExporter::default();
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(exporter.clone())
        .build();
    let tracer = provider.tracer("byre-test");
    let subscriber =
        tracing_subscriber::registry().with(tracing_opentelemetry::layer().with_tracer(tracer));
    tracing::subscriber::set_global_default(subscriber).expect("the only subscriber");

    let caller = tracing::info_span!("caller");
    let trace_id = caller.context().span().span_context().trace_id();
    let traceparent = {
        let _entered = caller.enter();
        seen(reporting("TRACEPARENT")).await
    };
    drop(caller);
    let parts: Vec<&str> = traceparent.split('-').collect();
    assert_eq!(parts.len(), 4, "{traceparent}");
    assert_eq!(parts[0], "00");
    assert_eq!(parts[1], trace_id.to_string(), "the caller's trace");
    // The session's span ends as its driver task does, just after `close` returns.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let spans = loop {
        provider.force_flush().unwrap();
        let spans = exporter.get_finished_spans().unwrap();
        if spans.iter().any(|s| s.name == "byre_session") {
            break spans;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the session's span never ended"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let session = spans
        .iter()
        .find(|s| s.name == "byre_session")
        .expect("the session's span is exported");
    assert_eq!(
        parts[2],
        session.span_context.span_id().to_string(),
        "{spans:#?}"
    );
    let turn = spans
        .iter()
        .find(|s| s.name == "invoke_agent claude-code")
        .expect("the turn's span, named as the GenAI conventions name it");
    let attribute = |key: &str| {
        turn.attributes
            .iter()
            .find(|kv| kv.key.as_str() == key)
            .map(|kv| kv.value.to_string())
    };
    assert_eq!(
        attribute("gen_ai.operation.name").as_deref(),
        Some("invoke_agent")
    );
    assert_eq!(
        attribute("gen_ai.provider.name").as_deref(),
        Some("anthropic")
    );

    // Set in the options, it wins.
    let mine = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    let explicit = {
        let _entered = tracing::info_span!("another").entered();
        seen(reporting("TRACEPARENT").env("TRACEPARENT", mine)).await
    };
    assert_eq!(explicit, mine);
    // Started outside any span, the session's span begins a trace of its own, and the CLI
    // joins that one.
    let outside = seen(reporting("TRACEPARENT")).await;
    assert!(outside.starts_with("00-"), "{outside}");
    assert!(!outside.contains(&trace_id.to_string()), "{outside}");

    // The real CLI, exporting its own spans to an OTLP receiver: they are in the caller's
    // trace.
    let receiver = byre_testkit::OtlpReceiver::start().await.unwrap();
    let script = byre_testkit::Script::new()
        .rule(byre_testkit::Rule::any().reply(byre_testkit::Reply::text("Traced.")));
    let model = byre_testkit::FakeModel::start(script).await.unwrap();
    let (options, _env) = support::options(&model);
    let options = options.cli_telemetry(receiver.endpoint(), "http/json");
    let caller = tracing::info_span!("caller with the real CLI");
    let trace_id = caller
        .context()
        .span()
        .span_context()
        .trace_id()
        .to_string();
    {
        let _entered = caller.enter();
        let (claude, mut events) = Claude::start(options).await.unwrap();
        claude.send("hello").unwrap();
        let output = events.turn().finish().await.unwrap();
        assert_eq!(output.text, "Traced.");
        claude.close().await.unwrap();
    }
    let span = receiver
        .wait_for(Duration::from_secs(30), |s| s.service == "claude-code")
        .await
        .unwrap_or_else(|| panic!("no span from the CLI: {:?}", receiver.spans()));
    assert_eq!(span.trace_id, trace_id, "{span:?}");
    assert_eq!(span.attribute("gen_ai.provider.name"), Some("anthropic"));
}
