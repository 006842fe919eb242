//! `byre`'s own traces: with `OTEL_EXPORTER_OTLP_ENDPOINT` (or `..._TRACES_ENDPOINT`) in its
//! environment and `OTEL_TRACES_EXPORTER` not `none`, byre exports its spans over OTLP/HTTP
//! (`OTEL_EXPORTER_OTLP_PROTOCOL`: `http/protobuf` by default, or `http/json`) as the service
//! `byre`, under a root span that continues the trace of a `TRACEPARENT` in its environment
//! (as CI systems set it); the CLI is started inside that trace.

use std::collections::HashMap;

use opentelemetry::propagation::TextMapPropagator;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{Protocol, WithExportConfig};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::SdkTracerProvider;
use opentelemetry_sdk::Resource;
use tracing_opentelemetry::OpenTelemetrySpanExt;
use tracing_subscriber::layer::SubscriberExt;

/// Traces being exported: the provider to flush at the end, and the root span.
pub struct Traces {
    provider: SdkTracerProvider,
    /// The span the whole command runs in.
    pub root: tracing::Span,
}

impl Traces {
    /// Starts exporting when the environment asks for it; `None` when it does not, or when
    /// the exporter cannot be built (said on stderr).
    pub fn from_env() -> Option<Traces> {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        if var("OTEL_TRACES_EXPORTER").as_deref() == Some("none") {
            return None;
        }
        var("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT").or_else(|| var("OTEL_EXPORTER_OTLP_ENDPOINT"))?;
        let protocol = var("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
            .or_else(|| var("OTEL_EXPORTER_OTLP_PROTOCOL"))
            .unwrap_or_else(|| "http/protobuf".into());
        let protocol = match protocol.as_str() {
            "http/json" => Protocol::HttpJson,
            "http/protobuf" => Protocol::HttpBinary,
            other => {
                eprintln!(
                    "byre: OTEL_EXPORTER_OTLP_PROTOCOL={other} is not supported \
                     (http/protobuf or http/json): no traces exported"
                );
                return None;
            }
        };
        let exporter = match opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_protocol(protocol)
            .build()
        {
            Ok(exporter) => exporter,
            Err(error) => {
                eprintln!("byre: no traces exported: {error}");
                return None;
            }
        };
        let provider = SdkTracerProvider::builder()
            .with_batch_exporter(exporter)
            .with_resource(Resource::builder().with_service_name("byre").build())
            .build();
        let layer = tracing_opentelemetry::layer().with_tracer(provider.tracer("byre"));
        let subscriber = tracing_subscriber::registry().with(layer);
        if tracing::subscriber::set_global_default(subscriber).is_err() {
            return None;
        }
        let root = tracing::info_span!("byre", otel.name = "byre", otel.kind = "internal");
        let carrier: HashMap<String, String> = ["traceparent", "tracestate"]
            .into_iter()
            .filter_map(|key| Some((key.to_owned(), var(&key.to_ascii_uppercase())?)))
            .collect();
        // A malformed TRACEPARENT gives no parent: the trace starts here.
        let parent = TraceContextPropagator::new().extract(&carrier);
        if let Err(error) = root.set_parent(parent) {
            eprintln!("byre: the trace of TRACEPARENT is not continued: {error}");
        }
        Some(Traces { provider, root })
    }

    /// Ends the root span and exports what is left; a failure is said on stderr.
    pub fn finish(self) {
        drop(self.root);
        if let Err(error) = self.provider.shutdown() {
            eprintln!("byre: not every span was exported: {error}");
        }
    }
}
