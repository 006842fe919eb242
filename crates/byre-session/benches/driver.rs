//! Throughput of the session driver: a stand-in CLI writes the corpus stream (more than 50 MB)
//! on its stdout, and a consumer counts the messages the driver delivers. Every line must
//! arrive, in order, exactly once; the count is checked on every iteration.
//!
//! With `BYRE_BENCH_PYTHON` set to a Python interpreter that has the official Python SDK
//! (`claude-agent-sdk`) installed, the same stand-in and the same stream are then run through
//! that SDK (`python_sdk.py`) for comparison.

// criterion_group! generates an undocumented public function.
#![allow(missing_docs)]

mod support;

use std::path::Path;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput};

use support::{expected_kinds, run_stream, StreamFile};

const TARGET_BYTES: usize = 50 * 1024 * 1024;

fn main() {
    let standin = support::standin();
    let stream = StreamFile::new("driver", TARGET_BYTES);
    let expected = expected_kinds(&stream);
    assert_eq!(expected.len(), stream.lines + 1);
    eprintln!(
        "stream: {} bytes, {} lines, {} cores",
        stream.bytes,
        stream.lines,
        support::cores()
    );
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");

    let mut c = Criterion::default().configure_from_args();
    let mut group = c.benchmark_group("driver");
    group.sample_size(10);
    group.throughput(Throughput::Elements(stream.lines as u64));
    group.bench_function("stream through one session", |b| {
        b.iter(|| {
            let delivered = runtime.block_on(run_stream(&standin, &stream.path, &expected));
            assert_eq!(delivered, expected.len(), "every line is delivered");
        })
    });
    group.finish();
    c.final_summary();

    // Where the time goes: wall and CPU time of a few more runs (CPU time is steadier on a
    // shared machine, and shows how much of the two cores the host and the stand-in use).
    let runs = 10;
    let (host_before, child_before) = support::cpu_times();
    let mut walls: Vec<Duration> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            runtime.block_on(run_stream(&standin, &stream.path, &expected));
            start.elapsed()
        })
        .collect();
    walls.sort();
    let (host_after, child_after) = support::cpu_times();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    eprintln!(
        "per stream, {runs} runs: wall min {:.0} ms, median {:.0} ms; mean CPU: host {:.0} ms, \
         stand-in {:.0} ms",
        ms(walls[0]),
        ms(walls[runs / 2]),
        ms(host_after - host_before) / runs as f64,
        ms(child_after - child_before) / runs as f64,
    );
    eprintln!(
        "MB/s = {} bytes / time; every iteration delivered all {} lines",
        stream.bytes, stream.lines
    );

    if let Some(python) = std::env::var_os("BYRE_BENCH_PYTHON").filter(|p| !p.is_empty()) {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/python_sdk.py");
        let status = std::process::Command::new(python)
            .arg(script)
            .arg("--cli")
            .arg(&standin)
            .arg("--stream")
            .arg(&stream.path)
            .status()
            .expect("python runs");
        assert!(status.success(), "the Python SDK run failed");
    }
}
