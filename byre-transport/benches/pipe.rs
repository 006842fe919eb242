//! Codec and decode throughput over a real pipe: a stand-in child writes a corpus stream of
//! more than 50 MB on its stdout, and the host reads it through `FramedRead` and the NDJSON
//! codec into lines, then decodes each into a typed message. A raw read of the same pipe is
//! the baseline; framing alone is measured too.

// criterion_group! generates an undocumented public function.
#![allow(missing_docs)]

use std::path::{Path, PathBuf};
use std::process::Stdio;

use byre_transport::{decode_frame, Frame, LineFrame, NdjsonCodec};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use futures::StreamExt;
use tokio::io::AsyncReadExt;
use tokio_util::codec::FramedRead;

const TARGET_BYTES: usize = 50 * 1024 * 1024;

/// Writes the stream (every `recv` message of the corpus, repeated past 50 MB) to a file.
fn build_stream() -> (PathBuf, usize, usize) {
    let stream = byre_testkit::corpus::CorpusStream::from_transcripts(TARGET_BYTES)
        .expect("the transcripts");
    let path = std::env::temp_dir().join(format!("byre-pipe-bench-{}.jsonl", std::process::id()));
    stream.write_to(&path).expect("write the stream");
    (path, stream.bytes.len(), stream.line_count())
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
    group.bench_function("framing", |b| {
        b.iter(|| {
            runtime.block_on(async {
                let mut child = child(&path);
                let out = child.stdout.take().expect("stdout");
                let mut frames = FramedRead::with_capacity(out, NdjsonCodec::new(), 64 * 1024);
                let mut framed = 0;
                while let Some(frame) = frames.next().await {
                    match frame.expect("no IO error") {
                        LineFrame::Line(_) => framed += 1,
                        LineFrame::BadLine(bad) => panic!("bad line in the corpus: {bad}"),
                    }
                }
                assert_eq!(framed, lines);
                child.wait().await.expect("exit");
            })
        })
    });
    group.bench_function("codec + typed decode", |b| {
        b.iter(|| {
            runtime.block_on(async {
                let mut child = child(&path);
                let out = child.stdout.take().expect("stdout");
                let mut frames = FramedRead::with_capacity(out, NdjsonCodec::new(), 64 * 1024);
                let mut messages = 0;
                while let Some(frame) = frames.next().await {
                    match decode_frame(frame.expect("no IO error")) {
                        Frame::Message { .. } => messages += 1,
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
