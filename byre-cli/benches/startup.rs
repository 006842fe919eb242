//! Time to a first answer, side by side: the library, `byre run` and the official SDKs against
//! the real CLI, offline, cold and warm, to the session being ready and to the first result, in
//! alternating rounds.
//!
//! `cargo bench -p byre-cli --bench startup`. The pinned CLI talks to byre-testkit's fake model
//! (one short text for any prompt) in a scratch home. Each contender starts a session and sends
//! `hello`:
//!
//! - `library cold`: `Claude::start` (the CLI started, `initialize` answered: ready), then the
//!   first `result`, in this process;
//! - `library warm`: `Pool::take` from a pool of one whose session waits ready, then the result
//!   (the pool starts the next session meanwhile);
//! - `library started`: a session started with `Claude::start` before the time measured, as the
//!   SDKs' warm ones are (and no other starting);
//! - `byre run`: the whole `byre run --output json` process, from its start to the `result`
//!   line on its stdout (ready is not seen from outside);
//! - `python cold` / `python warm`: the official Python SDK's `ClaudeSDKClient`, connected in
//!   the time measured or before it (`BYRE_BENCH_PYTHON`; `startup_python.py`);
//! - `ts cold` / `ts warm`: the official TypeScript SDK's `query()`, or its `startup()` pre-warm
//!   first and the query on the warm handle (`BYRE_BENCH_TS_SDK`; `startup_ts.mjs`).
//!
//! The SDKs' times are taken inside their process (their interpreter's start and import not
//! counted); the SDKs run as they do by default (the Python SDK asks the CLI its version first).
//! Each round runs every contender `BYRE_BENCH_RUNS` times (5) and reports medians;
//! `BYRE_BENCH_ROUNDS` (3) rounds, the contenders taking turns.
//!
//! The system prompt is the same for all: by default the empty one the library and both SDKs
//! start with (`byre run`, which keeps the CLI's own, is given `--system-prompt ""`), and with
//! `BYRE_BENCH_CLI_SYSTEM_PROMPT=1` the CLI's own (Claude Code's; the library's
//! `cli_system_prompt`, the SDKs' `claude_code` preset, `byre run` as it is).

mod support;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use byre_proto::CliMessage;
use byre_session::{Claude, Event, Events, Pool, StreamExt};
use byre_testkit::{ClaudeEnv, FakeModel, Reply, Rule, Script};
use support::env_count;
use tokio::io::AsyncBufReadExt;

/// One start: the time to ready (when it can be seen) and to the first result.
type Timing = (Option<Duration>, Duration);

fn main() {
    if std::env::args().any(|a| a == "--list") {
        // `cargo bench -- --list` and test discovery: nothing to list.
        return;
    }
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    runtime.block_on(compare());
}

/// Waits for the result of the turn started by `hello`.
async fn first_result(claude: &Claude, events: &mut Events) {
    claude.send("hello").expect("sent");
    while let Some(event) = events.next().await {
        if let Event::Message(CliMessage::Result(_)) = event {
            return;
        }
    }
    panic!("the session ended before its result");
}

/// The timing of a session ready at this moment, timed from `start`: ready now, then its first
/// result; the session is closed after.
async fn answered(start: Instant, (claude, mut events): (Claude, Events)) -> Timing {
    let ready = start.elapsed();
    first_result(&claude, &mut events).await;
    let first = start.elapsed();
    claude.close().await.expect("closes");
    (Some(ready), first)
}

/// A way to start a session and get its first answer.
enum Contender {
    LibraryCold,
    LibraryWarm,
    LibraryStarted,
    ByreRun(PathBuf),
    /// A script printing `ready_ms X first_ms Y`, and its command line.
    Script(&'static str, Vec<String>),
}

impl Contender {
    fn name(&self) -> &'static str {
        match self {
            Contender::LibraryCold => "library cold",
            Contender::LibraryWarm => "library warm",
            Contender::LibraryStarted => "library started",
            Contender::ByreRun(_) => "byre run",
            Contender::Script(name, _) => name,
        }
    }

    async fn run(&self, env: &ClaudeEnv, pool: &Pool) -> Timing {
        let options = tweak(env.options().expect("the pinned CLI"));
        match self {
            Contender::LibraryCold => {
                let start = Instant::now();
                let session = Claude::start(options).await.expect("starts");
                answered(start, session).await
            }
            Contender::LibraryWarm => {
                // Warm: the pool's session waits ready, as between jobs.
                while pool.waiting() < 1 {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                let start = Instant::now();
                let session = pool.take().await.expect("a session");
                answered(start, session).await
            }
            Contender::LibraryStarted => {
                // Warm as the SDKs' are: one session started before, and no other.
                let session = Claude::start(options).await.expect("starts");
                answered(Instant::now(), session).await
            }
            Contender::ByreRun(byre) => {
                let cli = options.launch().program.clone().expect("the CLI's path");
                let mut command = tokio::process::Command::new(byre);
                command
                    .args(["run", "--output", "json", "--claude"])
                    .arg(cli)
                    .args(match cli_system_prompt() {
                        true => &[][..],
                        false => &["--system-prompt", ""],
                    })
                    .arg("hello")
                    .stdin(Stdio::null())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::null());
                env.apply(&mut command);
                let start = Instant::now();
                let mut child = command.spawn().expect("byre starts");
                let stdout = child.stdout.take().expect("piped");
                let mut lines = tokio::io::BufReader::new(stdout).lines();
                let mut first = None;
                while let Some(line) = lines.next_line().await.expect("byre's output") {
                    if first.is_none() && line.contains(r#""type":"result""#) {
                        first = Some(start.elapsed());
                    }
                }
                let status = child.wait().await.expect("byre ends");
                assert!(status.success(), "byre run: {status}");
                (None, first.expect("a result line"))
            }
            Contender::Script(name, argv) => {
                let mut command = tokio::process::Command::new(&argv[0]);
                command
                    .args(&argv[1..])
                    .stdin(Stdio::null())
                    .stderr(Stdio::inherit());
                env.apply(&mut command);
                let output = command.output().await.expect("the script runs");
                let text = String::from_utf8_lossy(&output.stdout);
                assert!(output.status.success(), "{name}: {text}");
                let fields: Vec<&str> = text.split_whitespace().collect();
                let ms = |at: usize| {
                    let ms: f64 = fields[at].parse().expect("a number");
                    Duration::from_secs_f64(ms / 1e3)
                };
                assert!(
                    fields.len() == 4 && fields[0] == "ready_ms",
                    "{name}: {text}"
                );
                (Some(ms(1)), ms(3))
            }
        }
    }
}

/// `BYRE_BENCH_CLI_SYSTEM_PROMPT=1`: every contender runs the CLI with its own system prompt,
/// not the empty one the library and both SDKs start with.
fn cli_system_prompt() -> bool {
    std::env::var_os("BYRE_BENCH_CLI_SYSTEM_PROMPT").is_some_and(|v| v == "1")
}

fn tweak(options: byre_session::Options) -> byre_session::Options {
    match cli_system_prompt() {
        true => options.cli_system_prompt(),
        false => options,
    }
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

async fn compare() {
    let script = Script::new().rule(Rule::any().reply(Reply::text("Hi.")));
    let model = FakeModel::start(script).await.expect("the fake model");
    let env = ClaudeEnv::new(&model.base_url()).expect("an offline environment");
    let options = env.options().expect("the pinned CLI");
    let cli = options.launch().program.clone().expect("the CLI's path");
    let pool = Pool::new(tweak(options), 1).expect("a pool");
    let path = |p: &Path| p.to_str().expect("a UTF-8 path").to_owned();
    let cli = path(&cli);
    let mut contenders = vec![
        Contender::LibraryCold,
        Contender::LibraryWarm,
        Contender::LibraryStarted,
        Contender::ByreRun(PathBuf::from(env!("CARGO_BIN_EXE_byre"))),
    ];
    let benches = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches");
    let prompt = match cli_system_prompt() {
        true => "cli",
        false => "empty",
    };
    if let Some(python) = std::env::var_os("BYRE_BENCH_PYTHON").filter(|p| !p.is_empty()) {
        let script = path(&benches.join("startup_python.py"));
        for (name, mode) in [("python cold", "cold"), ("python warm", "warm")] {
            let python = python.to_string_lossy().into_owned();
            let argv = vec![
                python,
                script.clone(),
                cli.clone(),
                mode.into(),
                prompt.into(),
            ];
            contenders.push(Contender::Script(name, argv));
        }
    }
    if let Some(sdk) = std::env::var_os("BYRE_BENCH_TS_SDK").filter(|p| !p.is_empty()) {
        let script = path(&benches.join("startup_ts.mjs"));
        for (name, mode) in [("ts cold", "cold"), ("ts warm", "warm")] {
            let sdk = sdk.to_string_lossy().into_owned();
            let argv = vec![
                "node".into(),
                script.clone(),
                sdk,
                cli.clone(),
                mode.into(),
                prompt.into(),
            ];
            contenders.push(Contender::Script(name, argv));
        }
    }
    let rounds = env_count("BYRE_BENCH_ROUNDS", 3);
    let runs = env_count("BYRE_BENCH_RUNS", 5);
    let ms = |d: Duration| format!("{:.0} ms", d.as_secs_f64() * 1e3);
    eprintln!("CLI {cli}; medians of {runs} runs");
    eprintln!("round | contender | ready | first result");
    for round in 1..=rounds {
        for contender in &contenders {
            let (mut ready, mut first) = (Vec::new(), Vec::new());
            for _ in 0..runs {
                let (r, f) = contender.run(&env, &pool).await;
                ready.extend(r);
                first.push(f);
            }
            let ready = match ready.is_empty() {
                true => "-".to_owned(),
                false => ms(median(ready)),
            };
            eprintln!(
                "{round} | {} | {ready} | {}",
                contender.name(),
                ms(median(first))
            );
        }
    }
    pool.close().await;
}
