//! Trace propagation (feature `otel`): the CLI gets the OpenTelemetry context of the session's
//! span as `TRACEPARENT` and `TRACESTATE`, so what it traces joins the program's trace (a
//! child of the span the session was started in). A value the options set explicitly wins;
//! without a context (no OpenTelemetry layer, or no span), the environment is left as it is.

use opentelemetry::trace::TraceContextExt;
use tracing_opentelemetry::OpenTelemetrySpanExt;

use byre_transport::Launch;

/// Sets `TRACEPARENT` (and `TRACESTATE`, or drops an inherited one) for `span`'s context.
pub(super) fn propagate(span: &tracing::Span, launch: &mut Launch) {
    let explicit = launch.env.iter().any(|(name, _)| name == "TRACEPARENT");
    if explicit {
        return;
    }
    let context = span.context();
    let span_ref = context.span();
    let span_context = span_ref.span_context();
    if !span_context.is_valid() {
        return;
    }
    let parent = format!(
        "00-{}-{}-{:02x}",
        span_context.trace_id(),
        span_context.span_id(),
        span_context.trace_flags().to_u8()
    );
    launch.env.push(("TRACEPARENT".into(), parent.into()));
    let state = span_context.trace_state().header();
    if state.is_empty() {
        // One the CLI inherited belongs to another trace.
        launch.env_remove.push("TRACESTATE".into());
    } else {
        launch.env.push(("TRACESTATE".into(), state.into()));
    }
}
