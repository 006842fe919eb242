//! A stand-in for the `claude` CLI, for tests and benchmarks of the transport: it writes what
//! it is told on stdout and stderr, starts grandchildren, and ignores stdin EOF or SIGTERM on
//! request. It is not the real CLI and answers no prompt.
//!
//! Flags (any order):
//! - `--stdout-file PATH`: copy the file to stdout first.
//! - `--stdout-repeat N`: copy it N times.
//! - `--stderr-bytes N`: write N bytes of stderr lines first; with `--stderr-cr`, progress text
//!   separated by `\r` and no newline at all.
//! - `--grandchild`: start a long `sleep` in the same process group and print its pid on
//!   stderr as `grandchild <pid>`.
//! - `--daemon SCRIPT`: start `sh -c SCRIPT` in a session of its own (`setsid`), its stdio on
//!   `/dev/null`, and print its pid on stderr as `daemon <pid>`.
//! - `--host ARGS...` (first): be a host instead, as a program using byre-transport is: start
//!   another stand-in with `ARGS` as a `CliProcess` with the default options (a watchdog, a
//!   tag), print its pid on stderr as `cli <pid>` and each of its stderr lines after it, and
//!   wait until killed, never stopping it. `BYRE_STANDIN_WATCHDOG_REMOVES=DIR` gives the
//!   watchdog a folder to remove when the host dies; `BYRE_STANDIN_HOST_CLIS=N` starts N
//!   stand-ins, and `BYRE_STANDIN_HOST_STOPS=K` stops the first K of them (printing `stopped
//!   <pid>` each) before it prints `ready`.
//! - `--exit-early CODE`: write `--message` on stderr and exit with CODE before any stdout.
//! - `--message TEXT`: the stderr text for `--exit-early`.
//! - `--ignore-eof`: keep running after stdin closes.
//! - `--ignore-term`: keep running after SIGTERM.
//! - `--echo`: answer each stdin line of `type` `control_request` with a success
//!   `control_response`, and each `user` line with a `result`.
//! - `--initialize`: wait for the host's `initialize` request and answer it before writing
//!   `--stdout-file` (a host that waits for that answer before it reads, like a session driver
//!   or an SDK, then gets the file as a stream).
//!
//! Stdin is read on its own thread from the start, so a host writing while the stand-in writes
//! a large file never blocks on a full pipe.

use std::io::{BufRead, Write};
use std::os::fd::AsFd;
use std::sync::mpsc;
use std::time::Duration;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().is_some_and(|a| a == "--host") {
        return host(&args[1..]);
    }
    let value = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let has = |flag: &str| args.iter().any(|a| a == flag);

    if has("--ignore-term") {
        // Replacing the default action keeps the process alive on SIGTERM.
        let _ = signal_hook::flag::register(
            signal_hook::consts::SIGTERM,
            std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false)),
        );
    }
    if let Some(code) = value("--exit-early") {
        eprintln!(
            "{}",
            value("--message").unwrap_or_else(|| "exiting early".into())
        );
        std::process::exit(code.parse().unwrap_or(1));
    }
    if let Some(n) = value("--stderr-bytes").and_then(|n| n.parse::<usize>().ok()) {
        let end = if has("--stderr-cr") { '\r' } else { '\n' };
        let line = format!("{}{end}", "e".repeat(99));
        let mut err = std::io::stderr().lock();
        for _ in 0..n / line.len() {
            let _ = err.write_all(line.as_bytes());
        }
    }
    if has("--grandchild") {
        if let Ok(child) = std::process::Command::new("sleep").arg("300").spawn() {
            eprintln!("grandchild {}", child.id());
        }
    }
    if let Some(script) = value("--daemon") {
        // setsid(1) calls setsid(2) itself, without forking, in a process that leads no group.
        let daemon = std::process::Command::new("setsid")
            .args(["sh", "-c", &script])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn();
        match daemon {
            Ok(child) => eprintln!("daemon {}", child.id()),
            Err(e) => eprintln!("no daemon: {e}"),
        }
    }
    let lines = read_stdin();
    let echo = has("--echo");
    let mut out = std::io::stdout().lock();
    if has("--initialize") {
        for line in lines.iter() {
            if is_initialize(&line) {
                answer(&mut out, &line);
                break;
            }
            if echo {
                answer(&mut out, &line);
            }
        }
    }
    if let Some(path) = value("--stdout-file") {
        let times = value("--stdout-repeat")
            .and_then(|n| n.parse().ok())
            .unwrap_or(1);
        let _ = out.flush();
        // A `File` on a duplicate of fd 1 (not the line-buffered `Stdout`, which would cut the
        // stream into small writes at line ends): `io::copy` between two files lets the kernel
        // move the bytes, a pipe's worth at a time.
        let mut stdout = std::io::stdout()
            .as_fd()
            .try_clone_to_owned()
            .map(std::fs::File::from)
            .expect("stdout can be duplicated");
        for _ in 0..times {
            let mut file = std::fs::File::open(&path).expect("--stdout-file is readable");
            if std::io::copy(&mut file, &mut stdout).is_err() {
                return;
            }
        }
    }
    for line in lines {
        if echo {
            answer(&mut out, &line);
        }
    }
    drop(out);
    while has("--ignore-eof") {
        std::thread::sleep(Duration::from_secs(1));
    }
}

/// Starts a stand-in with `args` as a [`CliProcess`](byre_transport::CliProcess) and holds it
/// until this process is killed.
fn host(args: &[String]) {
    use byre_transport::{CliProcess, Launch, ProcessOptions};
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        // The folders its watchdog is to remove when the host dies.
        let removes = std::env::var_os("BYRE_STANDIN_WATCHDOG_REMOVES")
            .map(|dir| vec![dir.into()])
            .unwrap_or_default();
        let options = ProcessOptions {
            on_stderr_line: Some(std::sync::Arc::new(|line: &str| eprintln!("{line}"))),
            watchdog_removes: removes,
            ..ProcessOptions::default()
        };
        let program = std::env::current_exe().expect("the stand-in's own path");
        let count: usize = std::env::var("BYRE_STANDIN_HOST_CLIS")
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or(1);
        let mut processes = Vec::with_capacity(count);
        for _ in 0..count {
            let args = args.iter().map(Into::into).collect();
            let process = CliProcess::spawn_args(&program, args, &Launch::new(), options.clone())
                .expect("the stand-in starts");
            eprintln!("cli {}", process.pid());
            processes.push(process);
        }
        // `BYRE_STANDIN_HOST_STOPS=N`: the first N are stopped the usual way.
        let stops: usize = std::env::var("BYRE_STANDIN_HOST_STOPS")
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        for process in processes.drain(..stops.min(count)) {
            let pid = process.pid();
            process.terminate().await.expect("the stand-in stops");
            eprintln!("stopped {pid}");
        }
        eprintln!("ready");
        std::future::pending::<()>().await;
        drop(processes);
    });
}

/// Reads stdin lines on a thread until EOF; the receiver ends with it.
fn read_stdin() -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// Whether `line` is a `control_request` whose subtype is `initialize`.
fn is_initialize(line: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(line)
        .is_ok_and(|m| m["type"] == "control_request" && m["request"]["subtype"] == "initialize")
}

fn answer(out: &mut impl Write, line: &str) {
    let Ok(message) = serde_json::from_str::<serde_json::Value>(line) else {
        return;
    };
    let reply = match message["type"].as_str() {
        Some("control_request") => serde_json::json!({
            "type": "control_response",
            "response": {"subtype": "success", "request_id": message["request_id"], "response": {}}
        }),
        Some("user") => serde_json::json!({
            "type": "result", "subtype": "success", "is_error": false, "num_turns": 1,
            "result": "stand-in", "session_id": "standin"
        }),
        _ => return,
    };
    let _ = writeln!(out, "{reply}");
    let _ = out.flush();
}
