//! Latency per event: how long after the CLI writes a line a program sees it, for the library
//! (`Events`), for `byre run --output json` read from a pipe, and for the official SDKs in their
//! own loops, in alternating rounds.
//!
//! `cargo bench -p byre-cli --bench latency`. This bench is also its own stand-in CLI: started
//! with `BYRE_LATENCY_LINES` in its environment, it answers every control request and, for each
//! prompt, writes that many `assistant` lines whose text is `stamp <ns>` (the monotonic clock
//! read just before the line's write, one write per line, as the CLI writes), at
//! `BYRE_LATENCY_RATE` lines a second (0: back to back), then a `result`. Each consumer reads
//! the same clock when a line reaches it as a message and reports arrival minus stamp:
//!
//! - `pipe`: the stand-in's stdout read by this bench, a line at a time (the floor);
//! - `library`: this bench started again with `--library`: `Claude::start`, `send`, then
//!   `events.next()` until the result, on a default multi-threaded runtime;
//! - `byre run`: `byre run --output json`, its stdout read line by line from a pipe;
//! - `python`: the official Python SDK's `query()` (`BYRE_BENCH_PYTHON`: an interpreter with
//!   `claude-agent-sdk` installed; `latency_python.py`);
//! - `ts`: the official TypeScript SDK's `query()` (`BYRE_BENCH_TS_SDK`: its `sdk.mjs`;
//!   `latency_ts.mjs`);
//! - `baseline`: another build of `byre` (`BYRE_BENCH_BASELINE`), as `byre run`.
//!
//! Three scenarios: a steady 100 lines a second, 1,000 lines a second, and a burst of 1,000
//! lines back to back. Each round runs every contender `BYRE_BENCH_RUNS` times (5) in each
//! scenario, the contenders taking turns, and reports the medians of the runs' first line, p50,
//! p90, p99 and max; over all rounds, each contender's p99 and max of every line.
//! `BYRE_BENCH_ROUNDS` (3) changes the count of rounds.

mod support;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

use byre_proto::{CliMessage, ContentBlock};
use byre_session::{Claude, Event, Options, StreamExt};
use support::env_count;

/// The stand-in's variable: how many stamped lines to write for each prompt.
const LINES_VAR: &str = "BYRE_LATENCY_LINES";
/// The stand-in's variable: lines a second (0: back to back).
const RATE_VAR: &str = "BYRE_LATENCY_RATE";

/// A scenario: its name, its lines, their rate.
const SCENARIOS: [(&str, usize, u32); 3] = [
    ("steady 100/s", 500, 100),
    ("steady 1,000/s", 1000, 1000),
    ("burst of 1,000", 1000, 0),
];

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // The library consumer has the stand-in's variables in its environment for its CLI.
    if args.first().map(String::as_str) == Some("--library") {
        library();
        return ExitCode::SUCCESS;
    }
    if let Some(lines) = std::env::var(LINES_VAR).ok().and_then(|n| n.parse().ok()) {
        let rate = std::env::var(RATE_VAR)
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        standin(lines, rate);
        return ExitCode::SUCCESS;
    }
    if args.iter().any(|a| a == "--list") {
        // `cargo bench -- --list` and test discovery: nothing to list.
        return ExitCode::SUCCESS;
    }
    compare();
    ExitCode::SUCCESS
}

/// The monotonic clock, in nanoseconds: the same clock in every process of this machine (Python's
/// `time.monotonic_ns`, Node's `process.hrtime`).
fn now_ns() -> u64 {
    let t = nix::time::clock_gettime(nix::time::ClockId::CLOCK_MONOTONIC).expect("the clock");
    t.tv_sec() as u64 * 1_000_000_000 + t.tv_nsec() as u64
}

/// Microseconds from the stamp in `text` (`stamp <ns>`) to `now`.
fn latency_us(text: &str, now: u64) -> Option<f64> {
    let at = text.find("stamp ")? + "stamp ".len();
    let digits = text[at..].bytes().take_while(u8::is_ascii_digit).count();
    let stamp: u64 = text[at..at + digits].parse().ok()?;
    Some(now.saturating_sub(stamp) as f64 / 1e3)
}

/// The stand-in CLI: answers control requests, and each prompt with `lines` stamped lines.
fn standin(lines: usize, rate: u32) {
    let mut out = std::io::stdout().lock();
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        let Ok(message) = serde_json::from_str::<serde_json::Value>(&line) else {
            continue;
        };
        let written = match message["type"].as_str() {
            Some("control_request") => {
                let answer = serde_json::json!({
                    "type": "control_response",
                    "response": {
                        "subtype": "success",
                        "request_id": message["request_id"],
                        "response": {}
                    }
                });
                writeln!(out, "{answer}").and_then(|()| out.flush())
            }
            Some("user") => turn(&mut out, lines, rate),
            _ => Ok(()),
        };
        if written.is_err() {
            // The host has gone.
            return;
        }
    }
}

/// One turn of the stand-in: the stamped lines, then the result.
fn turn(out: &mut impl Write, lines: usize, rate: u32) -> std::io::Result<()> {
    let start = std::time::Instant::now();
    for i in 0..lines {
        if rate > 0 {
            let due = start + std::time::Duration::from_secs_f64(i as f64 / f64::from(rate));
            std::thread::sleep(due.saturating_duration_since(std::time::Instant::now()));
        }
        // One write per line, flushed at once, the stamp read just before it.
        let line = format!(
            concat!(
                r#"{{"type":"assistant","message":{{"id":"msg_{i}","type":"message","#,
                r#""role":"assistant","model":"stand-in","content":[{{"type":"text","#,
                r#""text":"stamp {stamp}"}}],"stop_reason":null,"stop_sequence":null,"#,
                r#""usage":{{"input_tokens":1,"output_tokens":1}}}},"#,
                r#""parent_tool_use_id":null,"session_id":"latency","#,
                r#""uuid":"00000000-0000-4000-8000-{i:012}"}}"#,
                "\n"
            ),
            i = i,
            stamp = now_ns(),
        );
        out.write_all(line.as_bytes())?;
        out.flush()?;
    }
    let result = concat!(
        r#"{"type":"result","subtype":"success","is_error":false,"duration_ms":1,"#,
        r#""duration_api_ms":1,"num_turns":1,"result":"done","session_id":"latency","#,
        r#""total_cost_usd":0,"usage":{"input_tokens":1,"output_tokens":1},"#,
        r#""uuid":"00000000-0000-4000-8000-ffffffffffff"}"#,
        "\n"
    );
    out.write_all(result.as_bytes())?;
    out.flush()
}

/// The library consumer: one session with this bench as its CLI (the stand-in's variables are
/// in this process's environment, which the CLI inherits), one prompt, every event read.
fn library() {
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let session = async {
        let me = std::env::current_exe().expect("the bench's path");
        let (claude, mut events) = Claude::start(Options::new().program(me))
            .await
            .expect("the stand-in starts");
        claude.send("go").expect("sent");
        let mut latencies = Vec::new();
        while let Some(event) = events.next().await {
            let now = now_ns();
            match event {
                Event::Message(CliMessage::Assistant(message)) => {
                    if let Some(ContentBlock::Text(block)) = message.message.content.first() {
                        latencies.extend(latency_us(&block.text, now));
                    }
                }
                Event::Message(CliMessage::Result(_)) => break,
                _ => {}
            }
        }
        claude.close().await.expect("closes");
        latencies
    };
    let latencies = runtime.block_on(session);
    print_latencies(&latencies);
}

fn print_latencies(latencies: &[f64]) {
    let text: Vec<String> = latencies.iter().map(|l| format!("{l:.1}")).collect();
    println!("latencies {}", text.join(" "));
}

/// Reads `latencies ...` from a consumer's output.
fn parse_latencies(stdout: &str) -> Vec<f64> {
    stdout
        .lines()
        .find_map(|line| line.strip_prefix("latencies"))
        .unwrap_or_else(|| panic!("no latencies in: {stdout}"))
        .split_whitespace()
        .map(|l| l.parse().expect("a number"))
        .collect()
}

/// A consumer, and how it is run.
enum Contender {
    /// The stand-in's stdout read here, a line at a time, with nothing between (the floor).
    Pipe,
    /// A program that prints `latencies ...`.
    Reports(&'static str, Vec<String>),
    /// A `byre` binary whose `run --output json` is read here.
    ByreRun(&'static str, PathBuf),
}

impl Contender {
    fn name(&self) -> &'static str {
        match self {
            Contender::Pipe => "pipe",
            Contender::Reports(name, _) | Contender::ByreRun(name, _) => name,
        }
    }

    /// One run: the latency of every stamped line, in the order they arrived.
    fn run(&self, me: &Path, lines: usize, rate: u32) -> Vec<f64> {
        let mut command = match self {
            Contender::Pipe => Command::new(me),
            Contender::Reports(_, argv) => {
                let mut command = Command::new(&argv[0]);
                command.args(&argv[1..]);
                command
            }
            Contender::ByreRun(_, byre) => {
                let mut command = Command::new(byre);
                command
                    .args(["run", "--output", "json", "--claude"])
                    .arg(me)
                    .arg("go");
                command
            }
        };
        command
            .env(LINES_VAR, lines.to_string())
            .env(RATE_VAR, rate.to_string())
            // The Python SDK would start the CLI once more with `-v`.
            .env("CLAUDE_AGENT_SDK_SKIP_VERSION_CHECK", "1")
            .stdin(match self {
                Contender::Pipe => Stdio::piped(),
                _ => Stdio::null(),
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        let mut child = command.spawn().expect("the consumer starts");
        let stdout = child.stdout.take().expect("piped");
        // The stand-in alone: the prompt is written here, and stdin closed after it.
        let mut prompt = child.stdin.take().map(|mut stdin| {
            stdin
                .write_all(b"{\"type\":\"user\"}\n")
                .expect("the prompt is written");
            stdin
        });
        let latencies = match self {
            Contender::Reports(..) => {
                let mut text = String::new();
                std::io::Read::read_to_string(&mut BufReader::new(stdout), &mut text)
                    .expect("the consumer's output");
                parse_latencies(&text)
            }
            Contender::Pipe | Contender::ByreRun(..) => {
                let mut reader = BufReader::new(stdout);
                let mut line = String::new();
                let mut latencies = Vec::new();
                while reader.read_line(&mut line).expect("byre's output") > 0 {
                    let now = now_ns();
                    if line.contains(r#""type":"assistant""#) {
                        latencies.extend(latency_us(&line, now));
                    }
                    if line.contains(r#""type":"result""#) {
                        // The stand-in reads on until its input ends.
                        drop(prompt.take());
                    }
                    line.clear();
                }
                latencies
            }
        };
        let status = child.wait().expect("the consumer ends");
        assert!(status.success(), "{}: {status}", self.name());
        assert_eq!(
            latencies.len(),
            lines,
            "{}: every stamped line",
            self.name()
        );
        latencies
    }
}

/// The median of each of the runs' five figures.
fn medians(summaries: &[[f64; 5]]) -> [f64; 5] {
    std::array::from_fn(|i| {
        let mut column: Vec<f64> = summaries.iter().map(|s| s[i]).collect();
        column.sort_by(f64::total_cmp);
        column[column.len() / 2]
    })
}

/// First line, p50, p90, p99 and max of one run, in microseconds.
fn summary(latencies: &[f64]) -> [f64; 5] {
    let mut sorted = latencies.to_vec();
    sorted.sort_by(f64::total_cmp);
    let at = |q: f64| sorted[((sorted.len() - 1) as f64 * q).round() as usize];
    [
        latencies[0],
        at(0.5),
        at(0.9),
        at(0.99),
        sorted[sorted.len() - 1],
    ]
}

fn compare() {
    let me = std::env::current_exe().expect("the bench's path");
    let path = |p: &Path| p.to_str().expect("a UTF-8 path").to_owned();
    let byre = PathBuf::from(env!("CARGO_BIN_EXE_byre"));
    let mut contenders = vec![
        Contender::Pipe,
        Contender::Reports("library", vec![path(&me), "--library".into()]),
        Contender::ByreRun("byre run", byre),
    ];
    if let Some(base) = std::env::var_os("BYRE_BENCH_BASELINE").filter(|p| !p.is_empty()) {
        contenders.push(Contender::ByreRun("baseline", base.into()));
    }
    let benches = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches");
    if let Some(python) = std::env::var_os("BYRE_BENCH_PYTHON").filter(|p| !p.is_empty()) {
        contenders.push(Contender::Reports(
            "python",
            vec![
                python.to_string_lossy().into_owned(),
                path(&benches.join("latency_python.py")),
                path(&me),
            ],
        ));
    }
    if let Some(sdk) = std::env::var_os("BYRE_BENCH_TS_SDK").filter(|p| !p.is_empty()) {
        contenders.push(Contender::Reports(
            "ts",
            vec![
                "node".into(),
                path(&benches.join("latency_ts.mjs")),
                sdk.to_string_lossy().into_owned(),
                path(&me),
            ],
        ));
    }
    let rounds = env_count("BYRE_BENCH_ROUNDS", 3);
    let runs = env_count("BYRE_BENCH_RUNS", 5).max(1);
    eprintln!(
        "{} cores; microseconds from the stand-in's write to the consumer's message; \
         medians of {runs} runs",
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    eprintln!("round | scenario | consumer | first line | p50 | p90 | p99 | max");
    let mut all = vec![vec![Vec::new(); contenders.len()]; SCENARIOS.len()];
    for round in 1..=rounds {
        for (s, (scenario, lines, rate)) in SCENARIOS.iter().enumerate() {
            // The contenders take turns run by run, so drift reaches them alike.
            let mut summaries = vec![Vec::with_capacity(runs); contenders.len()];
            for _ in 0..runs {
                for (c, contender) in contenders.iter().enumerate() {
                    let latencies = contender.run(&me, *lines, *rate);
                    summaries[c].push(summary(&latencies));
                    all[s][c].extend(latencies);
                }
            }
            for (c, contender) in contenders.iter().enumerate() {
                let [first, p50, p90, p99, max] = medians(&summaries[c]);
                eprintln!(
                    "{round} | {scenario} | {} | {first:.0} | {p50:.0} | {p90:.0} | {p99:.0} | \
                     {max:.0}",
                    contender.name()
                );
            }
        }
    }
    eprintln!("over all rounds: scenario | consumer | p50 | p90 | p99 | max");
    for (s, (scenario, ..)) in SCENARIOS.iter().enumerate() {
        for (c, contender) in contenders.iter().enumerate() {
            let [_, p50, p90, p99, max] = summary(&all[s][c]);
            eprintln!(
                "{scenario} | {} | {p50:.0} | {p90:.0} | {p99:.0} | {max:.0}",
                contender.name()
            );
        }
    }
}
