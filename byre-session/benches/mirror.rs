//! What mirroring a session to a store costs: the corpus stream with a `transcript_mirror`
//! line after each `user` and `assistant` line (as the CLI writes them with
//! `--session-mirror`), through one session with an in-memory store (batched and eager) and a
//! directory store, beside the same stream without mirror lines and without a store. The
//! configurations run in alternating rounds; each run checks that every message arrives and
//! that the store holds every mirrored entry.

#![allow(missing_docs)]

mod support;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use byre_proto::SessionKey;
use byre_session::transport::store::{DirStore, MemoryStore, SessionStore};
use byre_session::{Claude, Event, MirrorFlush};
use byre_testkit::corpus::CorpusStream;
use futures::StreamExt;
use serde_json::json;

const TARGET_BYTES: usize = 50 * 1024 * 1024;
const ROUNDS: usize = 3;
const RUNS: usize = 3;
const PROJECT: &str = "-tmp-byre-bench";
const SESSION: &str = "0b1e0000-0000-4000-8000-000000000001";

/// The two streams: plain, and with mirror lines. Returns (path, lines, mirror lines).
fn write_streams() -> ((PathBuf, usize), (PathBuf, usize, usize)) {
    let corpus = CorpusStream::from_transcripts(TARGET_BYTES).expect("the transcripts");
    let dir = std::env::temp_dir();
    let plain = dir.join(format!(
        "byre-mirror-bench-plain-{}.jsonl",
        std::process::id()
    ));
    corpus.write_to(&plain).expect("write the stream");
    let file = format!("/tmp/byre-bench/projects/{PROJECT}/{SESSION}.jsonl");
    let mut mirrored = Vec::with_capacity(corpus.bytes.len() * 2);
    let (mut lines, mut mirrors) = (0, 0);
    for line in corpus.iter() {
        mirrored.extend_from_slice(line);
        mirrored.push(b'\n');
        lines += 1;
        let value: serde_json::Value = serde_json::from_slice(line).expect("a JSON line");
        if matches!(value["type"].as_str(), Some("user" | "assistant")) {
            let mirror = json!({"type": "transcript_mirror", "filePath": file, "entries": [value]});
            serde_json::to_writer(&mut mirrored, &mirror).unwrap();
            mirrored.push(b'\n');
            lines += 1;
            mirrors += 1;
        }
    }
    let with = dir.join(format!(
        "byre-mirror-bench-mirrored-{}.jsonl",
        std::process::id()
    ));
    std::fs::write(&with, &mirrored).expect("write the mirrored stream");
    ((plain, corpus.line_count()), (with, lines, mirrors))
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Config {
    /// The plain stream, no store.
    NoStore,
    /// The mirrored stream into a `MemoryStore`, written at each turn's end.
    Memory,
    /// The same, each mirror line written as it comes.
    MemoryEager,
    /// The mirrored stream into a `DirStore` on the scratch disk, batched.
    Dir,
}

const CONFIGS: [Config; 4] = [
    Config::NoStore,
    Config::Memory,
    Config::MemoryEager,
    Config::Dir,
];

/// One run of `config`: the time from start to `close()` returning (the store written).
/// Checks that every message arrives and, with a store, that it holds every mirrored entry.
async fn run(standin: &Path, stream: &Path, config: Config, expect: (usize, usize)) -> Duration {
    let (messages_expected, mirrors) = expect;
    let scratch = tempfile::tempdir().expect("a scratch dir");
    let store: Option<(Arc<dyn SessionStore>, MirrorFlush)> = match config {
        Config::NoStore => None,
        Config::Memory => Some((Arc::new(MemoryStore::new()), MirrorFlush::Batched)),
        Config::MemoryEager => Some((Arc::new(MemoryStore::new()), MirrorFlush::Eager)),
        Config::Dir => Some((
            Arc::new(DirStore::new(scratch.path())),
            MirrorFlush::Batched,
        )),
    };
    let start = Instant::now();
    let mut options = support::standin_options(standin, Some(stream));
    if let Some((store, flush)) = &store {
        options = options.session_store(store.clone()).store_flush(*flush);
    }
    let (claude, mut events) = Claude::start(options).await.expect("the stand-in starts");
    let mut messages = 0;
    while messages < messages_expected {
        match events
            .next()
            .await
            .expect("the stream goes on to its last line")
        {
            Event::Message(_) => messages += 1,
            Event::MirrorFailed { error, .. } => panic!("the store failed: {error}"),
            _ => {}
        }
    }
    claude.close().await.expect("the stand-in exits");
    let elapsed = start.elapsed();
    while let Some(event) = events.next().await {
        assert!(
            !matches!(event, Event::Message(_)),
            "a message after the last line"
        );
    }
    if let Some((store, _)) = store {
        let key = SessionKey::main(PROJECT, SESSION);
        let held = store.load(&key).await.expect("the store loads");
        assert_eq!(
            held.map(|e| e.len()),
            Some(mirrors),
            "every entry reached the store"
        );
    }
    elapsed
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn main() {
    let standin = support::standin();
    let ((plain, plain_lines), (mirrored, lines, mirrors)) = write_streams();
    eprintln!(
        "streams: {plain_lines} lines plain; {lines} lines with {mirrors} mirror lines; {} cores",
        support::cores()
    );
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    // Every message but the mirror lines, and the stand-in's answer to `initialize`.
    let expect = (plain_lines + 1, mirrors);
    for round in 1..=ROUNDS {
        let mut base = Duration::ZERO;
        for config in CONFIGS {
            let stream = if config == Config::NoStore {
                &plain
            } else {
                &mirrored
            };
            let times = (0..RUNS)
                .map(|_| runtime.block_on(run(&standin, stream, config, expect)))
                .collect();
            let time = median(times);
            if config == Config::NoStore {
                base = time;
            }
            let per_mirror = time.saturating_sub(base).as_nanos() as f64 / mirrors as f64 / 1e3;
            println!(
                "round {round} {config:?}: median of {RUNS} {:.0} ms, {:.0} messages/s, \
                 {per_mirror:.2} us more per mirrored entry",
                time.as_secs_f64() * 1e3,
                plain_lines as f64 / time.as_secs_f64(),
            );
        }
    }
    let _ = std::fs::remove_file(&plain);
    let _ = std::fs::remove_file(&mirrored);
}
