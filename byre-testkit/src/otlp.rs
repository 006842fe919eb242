//! An OTLP/HTTP receiver on loopback, for tests of what the CLI exports: it takes
//! `POST /v1/traces` in the JSON encoding (`OTEL_EXPORTER_OTLP_PROTOCOL=http/json`) and keeps
//! every span, answering `{}`; anything else gets 404. It stops when dropped.

use std::convert::Infallible;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::Value;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

/// A span as the receiver got it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct OtlpSpan {
    /// The trace id (32 hex digits).
    pub trace_id: String,
    /// The span id (16 hex digits).
    pub span_id: String,
    /// The parent's span id; empty for a root.
    pub parent_span_id: String,
    /// The span's name.
    pub name: String,
    /// The exporting service's `service.name`.
    pub service: String,
    /// The span's attributes, as OTLP/JSON writes them (`[{"key": .., "value": {..}}]`).
    pub attributes: Value,
}

impl OtlpSpan {
    /// The string value of attribute `key`.
    pub fn attribute(&self, key: &str) -> Option<&str> {
        self.attributes
            .as_array()?
            .iter()
            .find(|kv| kv.get("key").and_then(Value::as_str) == Some(key))?
            .get("value")?
            .get("stringValue")?
            .as_str()
    }
}

/// The receiver: its address and what it got.
#[derive(Debug)]
pub struct OtlpReceiver {
    addr: SocketAddr,
    spans: Arc<Mutex<Vec<OtlpSpan>>>,
    accept: JoinHandle<()>,
}

impl Drop for OtlpReceiver {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

impl OtlpReceiver {
    /// Listens on an ephemeral loopback port.
    pub async fn start() -> std::io::Result<OtlpReceiver> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await?;
        let addr = listener.local_addr()?;
        let spans: Arc<Mutex<Vec<OtlpSpan>>> = Arc::default();
        let kept = spans.clone();
        let accept = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                };
                let kept = kept.clone();
                tokio::spawn(async move {
                    let service = service_fn(move |req| receive(kept.clone(), req));
                    let served = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                    // A client that hangs up mid-request is the client's business.
                    drop(served);
                });
            }
        });
        Ok(OtlpReceiver {
            addr,
            spans,
            accept,
        })
    }

    /// `http://127.0.0.1:PORT`, for `OTEL_EXPORTER_OTLP_ENDPOINT`.
    pub fn endpoint(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every span received so far.
    pub fn spans(&self) -> Vec<OtlpSpan> {
        self.spans.lock().expect("spans").clone()
    }

    /// Waits up to `timeout` for a span that `found` accepts.
    pub async fn wait_for(
        &self,
        timeout: Duration,
        found: impl Fn(&OtlpSpan) -> bool,
    ) -> Option<OtlpSpan> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(span) = self.spans().into_iter().find(|s| found(s)) {
                return Some(span);
            }
            if Instant::now() >= deadline {
                return None;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

async fn receive(
    spans: Arc<Mutex<Vec<OtlpSpan>>>,
    req: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let traces = req.method() == Method::POST && req.uri().path() == "/v1/traces";
    let body = match req.into_body().collect().await {
        Ok(body) => body.to_bytes(),
        Err(_) => Bytes::new(),
    };
    if !traces {
        let mut response = Response::new(Full::new(Bytes::from_static(b"not found")));
        *response.status_mut() = StatusCode::NOT_FOUND;
        return Ok(response);
    }
    let value: Value = serde_json::from_slice(&body).unwrap_or_default();
    spans.lock().expect("spans").extend(spans_of(&value));
    Ok(Response::new(Full::new(Bytes::from_static(b"{}"))))
}

/// The spans of an OTLP/JSON export request.
fn spans_of(request: &Value) -> Vec<OtlpSpan> {
    let text = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).unwrap_or("").to_owned();
    let mut found = Vec::new();
    for resource in request["resourceSpans"].as_array().into_iter().flatten() {
        let service = resource["resource"]["attributes"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|kv| kv["key"] == "service.name")
            .map(|kv| text(&kv["value"], "stringValue"))
            .unwrap_or_default();
        for scope in resource["scopeSpans"].as_array().into_iter().flatten() {
            for span in scope["spans"].as_array().into_iter().flatten() {
                found.push(OtlpSpan {
                    trace_id: text(span, "traceId"),
                    span_id: text(span, "spanId"),
                    parent_span_id: text(span, "parentSpanId"),
                    name: text(span, "name"),
                    service: service.clone(),
                    attributes: span["attributes"].clone(),
                });
            }
        }
    }
    found
}
