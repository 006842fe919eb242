//! What the driver benchmarks share: the stand-in CLI (byre-transport's `byre-standin`, built
//! on demand), the corpus stream written to a file, and the session options that point the
//! driver at the stand-in, and a consumer that checks every message it gets.

// Each benchmark uses a part of this module.
#![allow(dead_code)]

use std::mem::Discriminant;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput};

use byre_proto::CliMessage;
use byre_session::{Claude, Event, Options};
use byre_testkit::corpus::CorpusStream;
use futures::StreamExt;

/// The path of the stand-in CLI: `BYRE_STANDIN_BIN` when set, otherwise built now with the
/// bench profile (a no-op when it is fresh).
pub(crate) fn standin() -> PathBuf {
    if let Some(path) = std::env::var_os("BYRE_STANDIN_BIN").filter(|p| !p.is_empty()) {
        return PathBuf::from(path);
    }
    byre_testkit::workspace_bin("byre-transport", "byre-standin", "bench").expect("byre-standin")
}

/// The corpus stream, written to a file in the temporary folder that is removed on drop.
pub(crate) struct StreamFile {
    /// The file.
    pub(crate) path: PathBuf,
    /// Its size in bytes.
    pub(crate) bytes: usize,
    /// Its lines.
    pub(crate) lines: usize,
}

impl StreamFile {
    /// The corpus repeated past `min_bytes`, in a file named after `name`.
    pub(crate) fn new(name: &str, min_bytes: usize) -> StreamFile {
        let stream = CorpusStream::from_transcripts(min_bytes).expect("the transcripts");
        let path = std::env::temp_dir().join(format!(
            "byre-session-bench-{name}-{}.jsonl",
            std::process::id()
        ));
        stream.write_to(&path).expect("write the stream");
        StreamFile {
            path,
            bytes: stream.bytes.len(),
            lines: stream.line_count(),
        }
    }
}

impl Drop for StreamFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Options that start the stand-in: it answers `initialize`, then writes `stream` (when given)
/// and waits for stdin to close.
pub(crate) fn standin_options(standin: &Path, stream: Option<&Path>) -> Options {
    let mut options = Options::new();
    options = options.program(standin.to_path_buf());
    options = options.extra_arg("initialize", None);
    if let Some(stream) = stream {
        let path = stream.to_str().expect("a UTF-8 temporary path").to_owned();
        options = options.extra_arg("stdout-file", Some(path));
    }
    // `BYRE_BENCH_NO_WATCHDOG=1`: without the watchdog process each local CLI gets, to
    // measure what it costs.
    if std::env::var_os("BYRE_BENCH_NO_WATCHDOG").is_some_and(|v| v == "1") {
        options = options.watchdog(false);
    }
    // `BYRE_BENCH_NO_TAG=1`: without the tag, and so without the look through `/proc` for the
    // processes carrying it at each stop, to measure what it costs.
    if std::env::var_os("BYRE_BENCH_NO_TAG").is_some_and(|v| v == "1") {
        options = options.tag_descendants(false);
    }
    options
}

/// Starts a session against the stand-in writing `stream`, consumes every event, and returns
/// the number of messages delivered. `expected` holds the kind of every message in order: the
/// stand-in's answer to `initialize`, then the stream's lines; each delivered message is checked
/// against it.
pub(crate) async fn run_stream(
    standin: &Path,
    stream: &Path,
    expected: &[Discriminant<CliMessage>],
) -> usize {
    let (claude, mut events) = Claude::start(standin_options(standin, Some(stream)))
        .await
        .expect("the stand-in starts");
    let mut messages = 0;
    let all = async {
        while let Some(event) = events.next().await {
            if let Event::Message(message) = event {
                assert_eq!(
                    Some(&std::mem::discriminant(&message)),
                    expected.get(messages),
                    "message {messages} is out of order"
                );
                messages += 1;
                if messages == expected.len() {
                    break;
                }
            }
        }
    };
    if tokio::time::timeout(Duration::from_secs(120), all)
        .await
        .is_err()
    {
        panic!(
            "only {messages} of {} messages arrived in two minutes",
            expected.len()
        );
    }
    claude.close().await.expect("the stand-in exits");
    // Nothing more may arrive after the last line.
    while let Some(event) = events.next().await {
        assert!(
            !matches!(event, Event::Message(_)),
            "a message after the last line"
        );
    }
    messages
}

/// The kind of every message the consumer should see, in order.
pub(crate) fn expected_kinds(stream: &StreamFile) -> Vec<Discriminant<CliMessage>> {
    let answer = concat!(
        r#"{"type":"control_response","response":{"subtype":"success","#,
        r#""request_id":"req_1","response":{}}}"#
    )
    .as_bytes();
    let bytes = std::fs::read(&stream.path).expect("the stream");
    std::iter::once(answer)
        .chain(bytes.split(|&b| b == b'\n').filter(|l| !l.is_empty()))
        .map(|line| std::mem::discriminant(&CliMessage::from_slice(line).expect("decodes")))
        .collect()
}

/// The number of cores this process may use.
pub(crate) fn cores() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}

/// CPU time used so far by this process, and by its children that have been waited for.
pub(crate) fn cpu_times() -> (Duration, Duration) {
    // Fields 14 to 17 of /proc/self/stat (after the command name in parentheses): utime,
    // stime, cutime, cstime, in clock ticks of 10 ms.
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit_once(')').map(|(_, rest)| rest).unwrap_or("");
    let fields: Vec<u64> = after
        .split_whitespace()
        .skip(11)
        .take(4)
        .map(|f| f.parse().unwrap_or(0))
        .collect();
    let tick = |n: u64| Duration::from_millis(n * 10);
    match fields[..] {
        [utime, stime, cutime, cstime] => (tick(utime + stime), tick(cutime + cstime)),
        _ => (Duration::ZERO, Duration::ZERO),
    }
}

/// How many rounds of the comparison with the Python SDK run.
const ROUNDS: usize = 3;

/// How many times the Python SDK reads the stream in each round.
const PYTHON_RUNS: usize = 5;

/// The median the Python script prints, from its line `python sdk median of N: T ms, ...`.
fn python_median(output: &str) -> Option<Duration> {
    let line = output
        .lines()
        .find(|l| l.starts_with("python sdk median of"))?;
    let ms = line.split(": ").nth(1)?.split(" ms").next()?;
    Some(Duration::from_secs_f64(
        ms.trim().parse::<f64>().ok()? / 1e3,
    ))
}

/// The size the corpus stream is repeated past.
const TARGET_BYTES: usize = 50 * 1024 * 1024;

/// Runs the stream through one session, timed by criterion as `name`, then ten more runs for
/// wall and CPU time; with `BYRE_BENCH_PYTHON` set, then rounds of ten more runs each followed
/// by the Python SDK (see `driver.rs`), each round giving the ratio of the two medians.
pub(crate) fn stream_bench(name: &str) {
    let standin = standin();
    let stream = StreamFile::new("driver", TARGET_BYTES);
    let expected = expected_kinds(&stream);
    assert_eq!(expected.len(), stream.lines + 1);
    eprintln!(
        "stream: {} bytes, {} lines, {} cores",
        stream.bytes,
        stream.lines,
        cores()
    );
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");

    let mut c = Criterion::default().configure_from_args();
    let mut group = c.benchmark_group("driver");
    group.sample_size(10);
    group.throughput(Throughput::Elements(stream.lines as u64));
    group.bench_function(name, |b| {
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
    let timed_runs = || -> Vec<Duration> {
        let mut walls: Vec<Duration> = (0..runs)
            .map(|_| {
                let start = Instant::now();
                runtime.block_on(run_stream(&standin, &stream.path, &expected));
                start.elapsed()
            })
            .collect();
        walls.sort();
        walls
    };
    let (host_before, child_before) = cpu_times();
    let walls = timed_runs();
    let (host_after, child_after) = cpu_times();
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

    let python = std::env::var_os("BYRE_BENCH_PYTHON").filter(|p| !p.is_empty());
    if let Some(python) = python {
        // On a shared machine the speed of both sides drifts, so they run in alternating
        // rounds, and each round compares its own medians.
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/python_sdk.py");
        let mut ratios = Vec::new();
        for round in 1..=ROUNDS {
            let byre = timed_runs()[runs / 2];
            let output = Command::new(&python)
                .arg(&script)
                .arg("--cli")
                .arg(&standin)
                .arg("--stream")
                .arg(&stream.path)
                .arg("--runs")
                .arg(PYTHON_RUNS.to_string())
                .output()
                .expect("python runs");
            let text = String::from_utf8_lossy(&output.stdout);
            eprint!("{text}");
            assert!(
                output.status.success(),
                "the Python SDK run failed: {}",
                String::from_utf8_lossy(&output.stderr)
            );
            let python = python_median(&text).expect("the script prints its median");
            let ratio = python.as_secs_f64() / byre.as_secs_f64();
            ratios.push(ratio);
            eprintln!(
                "round {round}: byre median of {runs} {:.0} ms, Python SDK median of \
                 {PYTHON_RUNS} {:.0} ms: byre {ratio:.1}x as fast",
                ms(byre),
                ms(python),
            );
        }
        ratios.sort_by(f64::total_cmp);
        eprintln!(
            "byre / Python SDK over {ROUNDS} rounds: {}; median {:.1}x",
            ratios
                .iter()
                .map(|r| format!("{r:.1}x"))
                .collect::<Vec<_>>()
                .join(", "),
            ratios[ratios.len() / 2]
        );
    }
}
