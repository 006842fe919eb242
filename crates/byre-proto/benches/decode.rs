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

criterion_group!(
    name = benches;
    config = Criterion::default();
    targets = decode
);
criterion_main!(benches);
