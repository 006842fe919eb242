//! Decode throughput: typed decoding of a corpus stream against `serde_json::Value` and
//! `serde::de::IgnoredAny` on the same bytes.
//!
//! The stream is built at bench time by repeating every CLI → host message of the recorded
//! transcripts until it passes 50 MB, so its mix of message types is the real one.

// criterion_group! generates an undocumented public function.
#![allow(missing_docs)]

use byre_proto::CliMessage;
use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use serde::de::IgnoredAny;

const TARGET_BYTES: usize = 50 * 1024 * 1024;

#[path = "../src/wire/recorded.rs"]
mod recorded;

/// Every `recv` message of the corpus, one compact JSON line each.
fn corpus_lines() -> Vec<Vec<u8>> {
    recorded::recorded_lines()
        .into_iter()
        .filter(|(recv, _)| *recv)
        .map(|(_, line)| line.into_bytes())
        .collect()
}

/// The stream: the corpus lines repeated until it holds at least 50 MB.
struct Stream {
    bytes: Vec<u8>,
    lines: Vec<(usize, usize)>,
}

fn build_stream() -> Stream {
    let corpus = corpus_lines();
    let mut bytes = Vec::with_capacity(TARGET_BYTES + (1 << 20));
    let mut lines = Vec::new();
    while bytes.len() < TARGET_BYTES {
        for line in &corpus {
            lines.push((bytes.len(), line.len()));
            bytes.extend_from_slice(line);
            bytes.push(b'\n');
        }
    }
    Stream { bytes, lines }
}

fn decode(c: &mut Criterion) {
    let stream = build_stream();
    eprintln!(
        "stream: {} bytes, {} lines, {} cores",
        stream.bytes.len(),
        stream.lines.len(),
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    );
    let lines: Vec<&[u8]> = stream
        .lines
        .iter()
        .map(|&(at, len)| &stream.bytes[at..at + len])
        .collect();

    if std::env::var_os("BYRE_DECODE_BY_KIND").is_some() {
        by_kind(&lines);
    }

    let mut group = c.benchmark_group("decode");
    group.sample_size(10);
    group.throughput(Throughput::Bytes(stream.bytes.len() as u64));
    group.bench_function("typed CliMessage", |b| {
        b.iter(|| {
            for line in &lines {
                black_box(CliMessage::from_slice(line).expect("corpus line decodes"));
            }
        })
    });
    group.bench_function("serde_json::Value", |b| {
        b.iter(|| {
            for line in &lines {
                black_box(serde_json::from_slice::<serde_json::Value>(line).expect("valid JSON"));
            }
        })
    });
    group.bench_function("IgnoredAny", |b| {
        b.iter(|| {
            for line in &lines {
                black_box(serde_json::from_slice::<IgnoredAny>(line).expect("valid JSON"));
            }
        })
    });
    group.finish();

    let mut group = c.benchmark_group("encode");
    group.sample_size(10);
    group.throughput(Throughput::Bytes(stream.bytes.len() as u64));
    let decoded: Vec<CliMessage> = lines
        .iter()
        .map(|l| CliMessage::from_slice(l).expect("decodes"))
        .collect();
    group.bench_function("typed CliMessage", |b| {
        let mut out = Vec::with_capacity(stream.bytes.len() + 1024);
        b.iter(|| {
            out.clear();
            for message in &decoded {
                serde_json::to_writer(&mut out, message).expect("encodes");
                out.push(b'\n');
            }
            black_box(out.len())
        })
    });
    group.finish();
}

/// A line's kind: its type, and its subtype or stream event's type where it has one.
fn kind_of(line: &[u8]) -> String {
    let value: serde_json::Value = serde_json::from_slice(line).expect("valid JSON");
    let field =
        |v: &serde_json::Value, k: &str| v.get(k).and_then(|t| t.as_str()).map(str::to_owned);
    let kind = field(&value, "type").unwrap_or_default();
    let sub = field(&value, "subtype")
        .or_else(|| value.get("event").and_then(|e| field(e, "type")))
        .or_else(|| value.get("response").and_then(|r| field(r, "subtype")));
    match sub {
        Some(sub) => format!("{kind}/{sub}"),
        None => kind,
    }
}

/// Each kind's lines decoded alone (`BYRE_DECODE_BY_KIND=1`): the best of five passes, typed
/// and `IgnoredAny`, with the kind's share of the stream.
fn by_kind(lines: &[&[u8]]) {
    use std::collections::BTreeMap;
    use std::time::{Duration, Instant};
    let mut kinds: BTreeMap<String, Vec<&[u8]>> = BTreeMap::new();
    for line in lines {
        kinds.entry(kind_of(line)).or_default().push(line);
    }
    let best = |f: &dyn Fn()| {
        (0..5)
            .map(|_| {
                let start = Instant::now();
                f();
                start.elapsed()
            })
            .min()
            .unwrap_or_default()
    };
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let (mut typed_sum, mut ignored_sum) = (Duration::ZERO, Duration::ZERO);
    eprintln!(
        "{:<40} {:>7} {:>10} {:>9} {:>9}",
        "kind", "lines", "bytes", "typed", "ignored"
    );
    for (kind, lines) in &kinds {
        let bytes: usize = lines.iter().map(|l| l.len()).sum();
        let typed = best(&|| {
            for line in lines {
                black_box(CliMessage::from_slice(line).expect("corpus line decodes"));
            }
        });
        let ignored = best(&|| {
            for line in lines {
                black_box(serde_json::from_slice::<IgnoredAny>(line).expect("valid JSON"));
            }
        });
        typed_sum += typed;
        ignored_sum += ignored;
        eprintln!(
            "{kind:<40} {:>7} {bytes:>10} {:>6.2} ms {:>6.2} ms",
            lines.len(),
            ms(typed),
            ms(ignored)
        );
    }
    eprintln!(
        "{:<40} {:>7} {:>10} {:>6.2} ms {:>6.2} ms",
        "all kinds",
        lines.len(),
        "",
        ms(typed_sum),
        ms(ignored_sum)
    );
}

criterion_group!(
    name = benches;
    config = Criterion::default();
    targets = decode
);
criterion_main!(benches);
