//! Many sessions at once: 1,000 idle sessions on one host (the host memory, descriptors and
//! processes they cost, and how long they take to start), and 100 sessions streaming at the
//! same time on a runtime with two worker threads, every message of every session checked.
//!
//! Each session runs its own stand-in CLI. An idle session is one whose `initialize` has been
//! answered and that waits for input; the memory is the growth of this process's resident set
//! over many of them (the stand-ins' own memory is theirs, not the host's). The host's CPU time
//! per message is this process's (all its threads', from `/proc/self/stat`) over each run of
//! the concurrent streams, divided by the messages delivered. `BYRE_BENCH_NO_WATCHDOG=1` starts
//! the sessions without the watchdog process each local CLI gets by default,
//! `BYRE_BENCH_NO_TAG=1` without the tag (and the look through `/proc` for it at each close).

mod support;

use std::time::{Duration, Instant};

use byre_session::Claude;

use support::{expected_kinds, run_stream, standin_options, StreamFile};

/// Idle sessions started for the memory measurement (`BYRE_BENCH_IDLE` changes it).
const IDLE: usize = 1000;

/// Sessions streaming at once.
const CONCURRENT: usize = 100;

/// Each of them streams the corpus once (every recorded CLI line, about 1.2 MB).
const PER_SESSION_MIN_BYTES: usize = 1;

/// Timed runs of the concurrent benchmark.
const RUNS: usize = 5;

fn main() {
    let standin = support::standin();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    eprintln!("{} cores, 2 worker threads", support::cores());

    // Idle sessions. One session first, so the runtime's threads and the driver's one-time
    // allocations are not counted.
    let idle = std::env::var("BYRE_BENCH_IDLE")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(IDLE);
    runtime.block_on(async {
        let (claude, _events) = Claude::start(standin_options(&standin, None))
            .await
            .expect("the stand-in starts");
        claude.close().await.expect("closes");
        let (soft, hard) = open_files_limit();
        eprintln!("idle: open files limit {soft} (hard {hard})");
        let before = resident_bytes();
        let fds_before = open_fds();
        let cpu = cpu_time();
        let started = Instant::now();
        let mut sessions = Vec::with_capacity(idle);
        for _ in 0..idle {
            sessions.push(
                Claude::start(standin_options(&standin, None))
                    .await
                    .expect("the stand-in starts"),
            );
        }
        let took = started.elapsed();
        let cpu = cpu_time() - cpu;
        // Let every driver settle into waiting.
        tokio::time::sleep(Duration::from_millis(200)).await;
        let after = resident_bytes();
        let fds = open_fds() - fds_before;
        let (clis, helpers) = children();
        eprintln!(
            "idle: {idle} sessions started one after the other in {:.1} s ({:.1} ms each, host \
             CPU {:.2} ms each)",
            took.as_secs_f64(),
            took.as_secs_f64() * 1e3 / idle as f64,
            cpu.as_secs_f64() * 1e3 / idle as f64,
        );
        eprintln!(
            "idle: {fds} descriptors ({:.2} per session), child processes: {clis} CLIs and \
             {helpers} other (the host's watchdog)",
            fds as f64 / idle as f64,
        );
        eprintln!(
            "idle: {idle} sessions, host resident set {:.1} MiB -> {:.1} MiB: \
             {:.1} KiB per session",
            before as f64 / 1048576.0,
            after as f64 / 1048576.0,
            (after.saturating_sub(before)) as f64 / idle as f64 / 1024.0,
        );
        for (claude, _events) in &sessions {
            claude.close().await.expect("closes");
        }
    });

    // Concurrent streams.
    let stream = StreamFile::new("sessions", PER_SESSION_MIN_BYTES);
    let expected = std::sync::Arc::new(expected_kinds(&stream));
    let standin = std::sync::Arc::new(standin);
    let path = std::sync::Arc::new(stream.path.clone());
    let mut walls = Vec::with_capacity(RUNS);
    let mut cpus = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let start = Instant::now();
        let cpu = cpu_time();
        let delivered: Vec<usize> = runtime.block_on(async {
            let tasks: Vec<_> = (0..CONCURRENT)
                .map(|_| {
                    let (standin, path, expected) =
                        (standin.clone(), path.clone(), expected.clone());
                    tokio::spawn(async move { run_stream(&standin, &path, &expected).await })
                })
                .collect();
            let mut delivered = Vec::with_capacity(CONCURRENT);
            for task in tasks {
                delivered.push(task.await.expect("a session failed"));
            }
            delivered
        });
        walls.push(start.elapsed());
        cpus.push(cpu_time() - cpu);
        assert!(
            delivered.iter().all(|&n| n == expected.len()),
            "every session gets every line"
        );
    }
    walls.sort();
    cpus.sort();
    let lines = CONCURRENT * stream.lines;
    let bytes = CONCURRENT * stream.bytes;
    let rate = |wall: Duration| {
        format!(
            "{:.0} ms, {:.0} messages/s, {:.0} MB/s",
            wall.as_secs_f64() * 1e3,
            lines as f64 / wall.as_secs_f64(),
            bytes as f64 / wall.as_secs_f64() / 1e6,
        )
    };
    eprintln!(
        "concurrent: {CONCURRENT} sessions x {} lines ({} bytes) each, {lines} lines in all, every \
         one delivered in order in each of {RUNS} runs",
        stream.lines, stream.bytes,
    );
    eprintln!("concurrent: fastest run {}", rate(walls[0]));
    eprintln!("concurrent: median run {}", rate(walls[RUNS / 2]));
    let per_message = |cpu: Duration| cpu.as_secs_f64() * 1e6 / lines as f64;
    eprintln!(
        "concurrent: host CPU per run: least {:.0} ms ({:.2} us per message), median {:.0} ms \
         ({:.2} us per message)",
        cpus[0].as_secs_f64() * 1e3,
        per_message(cpus[0]),
        cpus[RUNS / 2].as_secs_f64() * 1e3,
        per_message(cpus[RUNS / 2]),
    );
}

/// This process's CPU time so far, user and system, all threads (`/proc/self/stat`, in the
/// kernel's clock ticks of 10 ms).
fn cpu_time() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").expect("/proc/self/stat");
    // The fields after the command's closing parenthesis start at the third (`state`);
    // `utime` and `stime` are the 14th and 15th.
    let rest = &stat[stat.rfind(')').expect("a command name") + 1..];
    let ticks: u64 = rest
        .split_whitespace()
        .skip(11)
        .take(2)
        .map(|field| field.parse::<u64>().expect("a tick count"))
        .sum();
    Duration::from_millis(ticks * 10)
}

/// This process's open descriptors.
fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd")
        .expect("/proc/self/fd")
        .count()
}

/// This process's soft and hard limits on open files (`ulimit -n`).
fn open_files_limit() -> (String, String) {
    let limits = std::fs::read_to_string("/proc/self/limits").expect("/proc/self/limits");
    let line = limits
        .lines()
        .find(|line| line.starts_with("Max open files"))
        .expect("the open files limit");
    let mut fields = line["Max open files".len()..].split_whitespace();
    let soft = fields.next().unwrap_or("?").to_owned();
    (soft, fields.next().unwrap_or("?").to_owned())
}

/// This process's children: the stand-in CLIs, and the others (the watchdog).
fn children() -> (usize, usize) {
    let me = std::process::id().to_string();
    let (mut clis, mut others) = (0, 0);
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let path = entry.path();
        let Ok(stat) = std::fs::read_to_string(path.join("stat")) else {
            continue;
        };
        let Some((name, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        // The parent is the second field after the name.
        if rest.split_whitespace().nth(1) != Some(me.as_str()) {
            continue;
        }
        match name.contains("byre-standin") {
            true => clis += 1,
            false => others += 1,
        }
    }
    (clis, others)
}

/// This process's resident set (`VmRSS`), in bytes.
fn resident_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|kb| kb.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map(|kb| kb * 1024)
        .expect("VmRSS in /proc/self/status")
}
