//! Codec and decode throughput over a real pipe: a stand-in child writes a corpus stream of
//! more than 50 MB on its stdout, and the host reads it through `FramedRead` and the NDJSON
//! codec into typed messages. A raw read of the same pipe is the baseline.

// criterion_group! generates an undocumented public function.
#![allow(missing_docs)]

use std::path::{Path, PathBuf};
use std::process::Stdio;

use byre_transport::{Frame, NdjsonCodec};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use futures::StreamExt;
use tokio::io::AsyncReadExt;
use tokio_util::codec::FramedRead;

const TARGET_BYTES: usize = 50 * 1024 * 1024;

/// Writes the stream (every `recv` message of the corpus, repeated past 50 MB) to a file.
fn build_stream() -> (PathBuf, usize, usize) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/transcripts");
    let mut files = Vec::new();
    let mut dirs = vec![root];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("transcripts") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "jsonl") {
                files.push(path);
            }
        }
    }
    files.sort();
    let mut corpus = Vec::new();
    let mut lines = 0;
    for file in files {
        for line in std::fs::read_to_string(&file).expect("transcript").lines() {
            let entry: serde_json::Value = serde_json::from_str(line).expect("line");
            if entry["dir"] != "recv" {
                continue;
            }
            // The recorder writes `"msg":` last; keep the message's own bytes.
            let at = line.find("\"msg\":").expect("msg") + 6;
            corpus.extend_from_slice(line[at..line.len() - 1].trim_start().as_bytes());
            corpus.push(b'\n');
            lines += 1;
        }
    }
    let mut stream = Vec::with_capacity(TARGET_BYTES + corpus.len());
    let mut total_lines = 0;
    while stream.len() < TARGET_BYTES {
        stream.extend_from_slice(&corpus);
        total_lines += lines;
    }
    let path = std::env::temp_dir().join(format!("byre-pipe-bench-{}.jsonl", std::process::id()));
    std::fs::write(&path, &stream).expect("write the stream");
    (path, stream.len(), total_lines)
}

fn child(path: &Path) -> tokio::process::Child {
    tokio::process::Command::new(env!("CARGO_BIN_EXE_byre-standin"))
        .args(["--stdout-file", path.to_str().expect("utf-8 path")])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("the stand-in starts")
}

fn pipe(c: &mut Criterion) {
    let (path, bytes, lines) = build_stream();
    eprintln!(
        "stream: {bytes} bytes, {lines} lines, {} cores",
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    );
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let mut group = c.benchmark_group("pipe");
    group.sample_size(10);
    group.throughput(Throughput::Bytes(bytes as u64));
    group.bench_function("raw read", |b| {
        b.iter(|| {
            runtime.block_on(async {
                let mut child = child(&path);
                let mut out = child.stdout.take().expect("stdout");
                let mut buf = vec![0u8; 64 * 1024];
                let mut total = 0;
                loop {
                    let n = out.read(&mut buf).await.expect("read");
                    if n == 0 {
                        break;
                    }
                    total += n;
                }
                assert_eq!(total, bytes);
                child.wait().await.expect("exit");
            })
        })
    });
    group.bench_function("codec + typed decode", |b| {
        b.iter(|| {
            runtime.block_on(async {
                let mut child = child(&path);
                let out = child.stdout.take().expect("stdout");
                let mut frames = FramedRead::with_capacity(
                    out,
                    NdjsonCodec::<byre_proto::CliMessage>::new(),
                    64 * 1024,
                );
                let mut messages = 0;
                while let Some(frame) = frames.next().await {
                    match frame.expect("no IO error") {
                        Frame::Message(_) => messages += 1,
                        Frame::BadLine(bad) => panic!("bad line in the corpus: {bad}"),
                    }
                }
                assert_eq!(messages, lines);
                child.wait().await.expect("exit");
            })
        })
    });
    group.finish();
    let _ = std::fs::remove_file(&path);
}

criterion_group!(benches, pipe);
criterion_main!(benches);
