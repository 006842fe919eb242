//! Whole-process throughput and memory: the `byre` binary against the bare pipe and the
//! official SDKs, each reading one long turn from the stand-in CLI, in alternating rounds.
//!
//! `cargo bench -p byre-cli --bench process`. The stream is one turn in real CLI shapes
//! ([`CorpusStream::one_turn`], about 50 MB) written by byre-transport's `byre-standin`. In each
//! round every contender runs a few times, one after the other, and the round compares their
//! medians (this machine's speed drifts within minutes, so only figures of one round are
//! compared):
//!
//! - `pipe`: the stand-in writing the stream into `wc -l` (what reading it costs at the least);
//! - `byre`: `byre run --output stats` with the stand-in as its CLI (through a two-line shell
//!   script that adds the stand-in's flags), from its start to its exit;
//! - `python`: the official Python SDK's `query()` over the same stand-in, the whole
//!   `python3` process (`BYRE_BENCH_PYTHON`: an interpreter with `claude-agent-sdk` installed);
//! - `ts`: the official TypeScript SDK's `query()`, the whole `node` process
//!   (`BYRE_BENCH_TS_SDK`: the SDK's `sdk.mjs`);
//! - `baseline`: another build of `byre` (`BYRE_BENCH_BASELINE`: its path), to compare a change.
//!
//! Each run is timed by a small helper process (this bench, started again with `--measure`),
//! which also reports the run's CPU time (the process's and its children's, the stand-in
//! included) and peak resident memory (the largest of the process and the children it waited
//! for: the stand-in is small). Every byre run is checked to have counted
//! every line of the stream by kind. Last, byre's peak memory while it skips one 100 MB line
//! under its default 64 MiB line limit. `BYRE_BENCH_ROUNDS` (3) and `BYRE_BENCH_RUNS` (5 for
//! byre and the pipe, half that for the SDKs) change the counts.

mod support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use byre_testkit::corpus::CorpusStream;
use support::env_count;

/// The stream's size.
const STREAM_BYTES: usize = 50 * 1024 * 1024;

/// The size of the line byre skips in the memory check.
const HUGE_LINE: usize = 100 * 1024 * 1024;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--measure") {
        return measure(&args[1..]);
    }
    if args.iter().any(|a| a == "--list") {
        // `cargo bench -- --list` and test discovery: nothing to list.
        return ExitCode::SUCCESS;
    }
    compare();
    ExitCode::SUCCESS
}

/// The helper: runs `command`, and prints its wall time, its peak memory and its stdout.
fn measure(command: &[String]) -> ExitCode {
    let start = Instant::now();
    let output = Command::new(&command[0])
        .args(&command[1..])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .expect("the measured command starts");
    let wall = start.elapsed();
    let usage = nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_CHILDREN)
        .expect("getrusage");
    let time = |t: nix::sys::time::TimeVal| {
        Duration::from_micros(t.tv_sec() as u64 * 1_000_000 + t.tv_usec() as u64)
    };
    let cpu = time(usage.user_time()) + time(usage.system_time());
    println!(
        "measured wall_us {} maxrss_kb {} status {} cpu_us {}",
        wall.as_micros(),
        usage.max_rss(),
        output.status.code().unwrap_or(-1),
        cpu.as_micros()
    );
    print!("{}", String::from_utf8_lossy(&output.stdout));
    ExitCode::SUCCESS
}

/// One measured run.
struct Run {
    wall: Duration,
    max_rss_kb: u64,
    /// User and system CPU time of the process and the children it waited for.
    cpu: Duration,
    stdout: String,
}

/// Runs `command` through the helper.
fn run(command: &[&str]) -> Run {
    let me = std::env::current_exe().expect("the bench's path");
    let output = Command::new(me)
        .arg("--measure")
        .args(command)
        .output()
        .expect("the helper runs");
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    let (first, rest) = text.split_once('\n').unwrap_or((&text, ""));
    let fields: Vec<&str> = first.split_whitespace().collect();
    assert!(
        fields.len() == 9 && fields[0] == "measured",
        "the helper's report: {text}"
    );
    assert_eq!(fields[6], "0", "{command:?} failed: {rest}");
    Run {
        wall: Duration::from_micros(fields[2].parse().expect("a number")),
        max_rss_kb: fields[4].parse().expect("a number"),
        cpu: Duration::from_micros(fields[8].parse().expect("a number")),
        stdout: rest.to_owned(),
    }
}

/// A program to compare, and how to check what it printed.
struct Contender {
    name: &'static str,
    command: Vec<String>,
    runs: usize,
}

fn compare() {
    let standin = byre_testkit::workspace_bin("byre-transport", "byre-standin", "bench")
        .expect("byre-standin");
    let byre = PathBuf::from(env!("CARGO_BIN_EXE_byre"));
    let scratch = tempfile::tempdir().expect("a scratch folder");
    let stream = CorpusStream::one_turn(STREAM_BYTES).expect("the transcripts");
    let stream_path = scratch.path().join("turn.jsonl");
    stream.write_to(&stream_path).expect("write the stream");
    let kinds = kinds(&stream);
    eprintln!(
        "stream: {} bytes, {} lines ({kinds:?}); {} cores",
        stream.bytes.len(),
        stream.line_count(),
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    let cli = shim(scratch.path(), &standin, &stream_path, "claude");
    let path = |p: &Path| p.to_str().expect("a UTF-8 path").to_owned();
    let rounds = env_count("BYRE_BENCH_ROUNDS", 3);
    let runs = env_count("BYRE_BENCH_RUNS", 5);
    let mut contenders = vec![
        Contender {
            name: "pipe",
            command: vec![
                "/bin/sh".into(),
                "-c".into(),
                r#""$0" --stdout-file "$1" </dev/null | wc -l"#.into(),
                path(&standin),
                path(&stream_path),
            ],
            runs,
        },
        Contender {
            name: "byre",
            command: vec![
                path(&byre),
                "run".into(),
                "--output".into(),
                "stats".into(),
                "--claude".into(),
                path(&cli),
                "stream".into(),
            ],
            runs,
        },
    ];
    if let Some(base) = std::env::var_os("BYRE_BENCH_BASELINE").filter(|p| !p.is_empty()) {
        let mut command = contenders[1].command.clone();
        command[0] = base.to_string_lossy().into_owned();
        contenders.push(Contender {
            name: "baseline",
            command,
            runs,
        });
    }
    if let Some(python) = std::env::var_os("BYRE_BENCH_PYTHON").filter(|p| !p.is_empty()) {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/sdk_python.py");
        contenders.push(Contender {
            name: "python",
            command: vec![
                python.to_string_lossy().into_owned(),
                path(&script),
                "--cli".into(),
                path(&standin),
                "--stream".into(),
                path(&stream_path),
            ],
            runs: runs.div_ceil(2),
        });
    }
    if let Some(sdk) = std::env::var_os("BYRE_BENCH_TS_SDK").filter(|p| !p.is_empty()) {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/sdk_ts.mjs");
        contenders.push(Contender {
            name: "ts",
            command: vec![
                "node".into(),
                path(&script),
                sdk.to_string_lossy().into_owned(),
                path(&standin),
                path(&stream_path),
            ],
            runs: runs.div_ceil(2),
        });
    }

    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    for round in 1..=rounds {
        let mut medians = BTreeMap::new();
        for contender in &contenders {
            let command: Vec<&str> = contender.command.iter().map(String::as_str).collect();
            let mut walls = Vec::new();
            let mut cpus = Vec::new();
            let mut peak = 0;
            let mut delivered = String::new();
            for _ in 0..contender.runs {
                let result = run(&command);
                delivered = check(contender.name, &result.stdout, &stream, &kinds);
                walls.push(result.wall);
                cpus.push(result.cpu);
                peak = peak.max(result.max_rss_kb);
            }
            walls.sort();
            cpus.sort();
            let median = walls[walls.len() / 2];
            eprintln!(
                "round {round}: {:>6}: median of {} {:7.1} ms (fastest {:7.1} ms), CPU {:7.1} ms, \
                 peak RSS {:.1} MB; {delivered}",
                contender.name,
                walls.len(),
                ms(median),
                ms(walls[0]),
                ms(cpus[cpus.len() / 2]),
                peak as f64 / 1e3 * 1.024,
            );
            medians.insert(contender.name, median);
        }
        let byre = medians["byre"].as_secs_f64();
        let ratios: Vec<String> = medians
            .iter()
            .filter(|(name, _)| **name != "byre")
            .map(|(name, t)| format!("{name}/byre {:.2}", t.as_secs_f64() / byre))
            .collect();
        eprintln!("round {round}: {}", ratios.join(", "));
    }

    // Memory while one 100 MB line is skipped under the default line limit.
    let mut huge = CorpusStream::one_turn(1 << 20).expect("the transcripts");
    let line = format!(
        r#"{{"type":"assistant","message":{{"content":[{{"type":"text","text":"{}"}}]}}}}"#,
        "x".repeat(HUGE_LINE)
    );
    let at = huge.lines.len() / 2;
    let offset = huge.lines[at].0;
    huge.bytes
        .splice(offset..offset, format!("{line}\n").into_bytes());
    let huge_path = scratch.path().join("huge.jsonl");
    huge.write_to(&huge_path).expect("write the stream");
    let cli = shim(scratch.path(), &standin, &huge_path, "claude-huge");
    let result = run(&[
        &path(&byre),
        "run",
        "--output",
        "stats",
        "--claude",
        &path(&cli),
        "stream",
    ]);
    eprintln!(
        "byre skipping a {} MB line (default limit 64 MiB): {:.1} ms, peak RSS {:.1} MB",
        HUGE_LINE / 1_000_000,
        ms(result.wall),
        result.max_rss_kb as f64 / 1e3 * 1.024
    );
}

/// A script that starts the stand-in with `stream` as its output, passing on the arguments
/// byre gives the CLI.
fn shim(dir: &Path, standin: &Path, stream: &Path, name: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(
        &path,
        format!(
            "#!/bin/sh\nexec '{}' --initialize --stdout-file '{}' \"$@\"\n",
            standin.display(),
            stream.display()
        ),
    )
    .expect("write the script");
    let mut permissions = std::fs::metadata(&path).expect("the script").permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
    std::fs::set_permissions(&path, permissions).expect("make it executable");
    path
}

/// The stream's lines by `type`.
fn kinds(stream: &CorpusStream) -> BTreeMap<String, u64> {
    let mut kinds = BTreeMap::new();
    for line in stream.iter() {
        let value: serde_json::Value = serde_json::from_slice(line).expect("a JSON line");
        let kind = value["type"].as_str().unwrap_or_default().to_owned();
        *kinds.entry(kind).or_default() += 1;
    }
    kinds
}

/// Checks what a run printed, and says how many of the stream's lines it delivered: byre's
/// counts by kind must be the stream's, and the pipe's line count too; the SDKs report how many
/// messages they yielded (they leave some kinds out).
fn check(name: &str, stdout: &str, stream: &CorpusStream, kinds: &BTreeMap<String, u64>) -> String {
    let lines = stream.line_count();
    match name {
        "pipe" => {
            assert_eq!(stdout.trim().parse::<usize>().ok(), Some(lines), "wc -l");
            format!("{lines} of {lines} lines")
        }
        "byre" | "baseline" => {
            // `byre run --output stats` prints `kind=count` lines.
            for (kind, count) in kinds {
                let line = format!("{kind}={count}");
                assert!(
                    stdout.lines().any(|l| l == line),
                    "byre did not count {line}: {stdout}"
                );
            }
            format!("{lines} of {lines} lines, each kind counted")
        }
        _ => {
            let delivered = stdout
                .lines()
                .find_map(|l| l.strip_prefix("messages "))
                .and_then(|n| n.trim().parse::<usize>().ok());
            let delivered = delivered.unwrap_or_else(|| panic!("{name}: {stdout}"));
            format!("{delivered} messages for {lines} lines")
        }
    }
}
