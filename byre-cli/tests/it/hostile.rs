//! `byre run` against CLIs that misbehave on purpose (byre-testkit's `byre-hostile`): what it
//! says on stderr and how it exits.

use std::time::{Duration, Instant};

use crate::support::{byre_in, output, peak_rss, Offline};

/// `byre run --claude byre-hostile ARGS...` with the hostile flags `hostile`.
async fn run_hostile(hostile: &str, args: &[&str]) -> (crate::support::Out, Duration) {
    let offline = Offline::start(byre_testkit::Script::new()).await;
    let bin = byre_testkit::hostile_bin().expect("byre-hostile builds");
    let mut all = vec!["run", "--claude", bin.to_str().expect("a UTF-8 path")];
    all.extend_from_slice(args);
    let mut command = byre_in(&offline.env, &all);
    command.env("BYRE_HOSTILE_ARGS", hostile);
    let started = Instant::now();
    let out = output(command, None).await;
    (out, started.elapsed())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_initialize_timeout_says_why_with_the_stderr_tail() {
    let (out, elapsed) = run_hostile("--mode hang-init", &["--request-timeout", "1", "hi"]).await;
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(elapsed < Duration::from_secs(10), "{elapsed:?}");
    assert!(
        out.stderr.contains("did not answer initialize within 1.0s"),
        "{out:?}"
    );
    assert!(out.stderr.contains("--request-timeout"), "{out:?}");
    assert!(out.stderr.contains("not answering initialize"), "{out:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mid_turn_exit_is_not_called_a_failed_start() {
    let (out, _) = run_hostile("--mode crash", &["hi"]).await;
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(out.stderr.contains("in the middle of the turn"), "{out:?}");
    assert!(out.stderr.contains("crashing mid-turn"), "{out:?}");
    assert!(!out.stderr.contains("could not start"), "{out:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cli_that_closes_its_stdin_is_named_so_instead_of_waited_for() {
    // It closes its stdin, answers `initialize` and runs on for 10 minutes: the prompt cannot
    // be written.
    let (out, elapsed) = run_hostile("--mode close-stdin", &["hi"]).await;
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(out.stderr.contains("closed its input (stdin)"), "{out:?}");
    assert!(out.stderr.contains("1 line sent to it was not"), "{out:?}");
    assert!(!out.stderr.contains("in the middle of the turn"), "{out:?}");
    assert!(elapsed < Duration::from_secs(60), "{elapsed:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_result_with_a_lone_surrogate_ends_the_run() {
    // `\ud83d` without its low half: valid JSON, as `JSON.stringify` writes a cut string.
    let (out, elapsed) = run_hostile(r"--mode answer --result cut\ud83d", &["hi"]).await;
    assert!(out.status.success(), "{out:?}");
    assert!(elapsed < Duration::from_secs(10), "{elapsed:?}");
    assert!(!out.stderr.contains("bad line"), "{out:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retried_stream_leaves_only_the_final_answer_on_stdout() {
    // The real CLI: the fake model's first stream breaks after two deltas; the CLI ends that
    // message with `abandoned_blocks` and asks again.
    use byre_testkit::{MessageReply, Reply, Rule, Script};
    let answer = "The whole answer, streamed in one piece after the retry.";
    let broken = MessageReply {
        blocks: vec![byre_testkit::Block::text("A first attempt that breaks off")],
        chunk_size: 6,
        cut_after_deltas: Some(3),
        chunk_delay_ms: 50,
        ..MessageReply::default()
    };
    let script = Script::new()
        .rule(Rule::any().times(1).reply(Reply::Message(broken)))
        .rule(Rule::any().reply(Reply::text(answer)));
    let offline = crate::support::Offline::start(script).await;
    let out = output(offline.run(&["hi"]), None).await;
    assert!(out.status.success(), "{out:?}");
    assert_eq!(out.stdout, format!("{answer}\n"), "{out:?}");
    assert!(out.stderr.contains("broke off after 12 bytes"), "{out:?}");
    assert!(out.stderr.contains("A first atte"), "{out:?}");
    assert_eq!(offline.model.message_requests().len(), 2, "the CLI retried");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_reader_holds_byre_within_its_byte_budget() {
    // 24 messages of 8 MiB (192 MiB) while nobody reads byre's stdout: byre's own memory stays
    // within the reading budget and a few lines, far below the stream's size.
    stalled_reader(24, 8 << 20, "text", false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forty_megabyte_lines_cost_about_their_size_with_a_stalled_reader() {
    // Lines of 40 MiB (under the 64 MiB limit): each is gathered once, its text shares the
    // line's memory, and JSON output is written as it is encoded, so byre holds about one
    // line, not three, in text and in JSON output.
    for output in ["text", "json"] {
        stalled_reader(6, 40 << 20, output, false).await;
    }
    // An escaped text is held twice while its line is decoded (the line, the unescaped text):
    // 32 MiB lines here, as a debug build's own memory is larger (40 MiB lines peak at 95 MB
    // in a release build).
    for output in ["text", "json"] {
        stalled_reader(6, 32 << 20, output, true).await;
    }
}

/// `byre run` on `lines` messages whose text is `size` bytes (with an escaped newline every
/// 80 bytes when `newlines`), its stdout left unread for a while and then read to the end:
/// every byte arrives, and byre's peak memory stays under 100 MB, while stalled and after.
async fn stalled_reader(lines: usize, size: usize, output: &str, newlines: bool) {
    use tokio::io::AsyncReadExt;
    let offline = crate::support::Offline::start(byre_testkit::Script::new()).await;
    let bin = byre_testkit::hostile_bin().expect("byre-hostile builds");
    let mut command = byre_in(
        &offline.env,
        &[
            "run",
            "--claude",
            bin.to_str().unwrap(),
            "--output",
            output,
            "hi",
        ],
    );
    command
        .env(
            "BYRE_HOSTILE_ARGS",
            format!(
                "--mode big --lines {lines} --size {size}{}",
                if newlines { " --newlines" } else { "" }
            ),
        )
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null());
    let mut child = command.spawn().expect("byre starts");
    let pid = child.id().expect("a pid");
    // Nobody reads for a while: byre blocks on its stdout and stops reading the CLI.
    tokio::time::sleep(Duration::from_secs(4)).await;
    let stalled = peak_rss(pid).expect("byre is running");
    let mut stdout = child.stdout.take().expect("piped");
    let (mut read, mut buf, mut peak) = (0usize, vec![0; 1 << 20], stalled);
    loop {
        let n = stdout.read(&mut buf).await.expect("stdout reads");
        if n == 0 {
            break;
        }
        read += n;
        peak = peak_rss(pid).unwrap_or(0).max(peak);
    }
    assert!(child.wait().await.expect("byre ends").success());
    // An escaped newline is two bytes in the line and one in the text.
    let text = if newlines { size - size / 81 } else { size };
    match output {
        "text" => assert_eq!(read, lines * (text + 1), "the answer's text alone"),
        _ => assert!(read >= lines * (size + 1), "every message: {read} bytes"),
    }
    let case = format!(
        "{lines} lines of {} MiB, {output}, newlines: {newlines}",
        size >> 20
    );
    assert!(
        stalled < 100 << 20,
        "{case}: {} MB while stalled",
        stalled >> 20
    );
    assert!(peak < 100 << 20, "{case}: {} MB at the peak", peak >> 20);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closed_stdout_stops_the_turn() {
    // `byre run --output json ... | head -c 1000` with the real CLI and an answer that would
    // stream for 30 s: byre stops the CLI once stdout's reader has gone.
    use byre_testkit::{Block, MessageReply, Reply, Rule, Script};
    use tokio::io::AsyncReadExt;
    let slow = MessageReply {
        blocks: vec![Block::text("word ".repeat(300))],
        chunk_size: 5,
        chunk_delay_ms: 100,
        ..MessageReply::default()
    };
    let offline =
        crate::support::Offline::start(Script::new().rule(Rule::any().reply(Reply::Message(slow))))
            .await;
    let mut command = offline.run(&["--output", "json", "hi"]);
    command
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = command.spawn().expect("byre starts");
    let mut stdout = child.stdout.take().expect("piped");
    let mut head = vec![0; 1000];
    stdout.read_exact(&mut head).await.expect("1000 bytes come");
    drop(stdout);
    let closed = Instant::now();
    let out = tokio::time::timeout(Duration::from_secs(20), child.wait_with_output())
        .await
        .expect("byre stops long before the answer's end")
        .expect("byre's output");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(141), "{stderr}");
    assert!(
        stderr.contains("stdout was closed; stopping the CLI"),
        "{stderr}"
    );
    assert!(
        closed.elapsed() < Duration::from_secs(10),
        "{:?}",
        closed.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_while_the_cli_exits_stays_within_the_budget() {
    // After the result, byre closes the CLI's stdin; the stand-in then writes 200 MB that
    // nobody will read. byre's memory stays far below it, and it ends within the graces.
    let offline = crate::support::Offline::start(byre_testkit::Script::new()).await;
    let bin = byre_testkit::hostile_bin().expect("byre-hostile builds");
    let mut command = byre_in(
        &offline.env,
        &["run", "--claude", bin.to_str().unwrap(), "hi"],
    );
    command
        .env(
            "BYRE_HOSTILE_ARGS",
            "--mode flood-on-eof --lines 200 --size 1000000",
        )
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let started = Instant::now();
    let mut child = command.spawn().expect("byre starts");
    let pid = child.id().expect("a pid");
    let mut peak = 0;
    let status = loop {
        peak = peak_rss(pid).unwrap_or(0).max(peak);
        if let Some(status) = child.try_wait().expect("byre can be waited for") {
            break status;
        }
        assert!(started.elapsed() < Duration::from_secs(30), "byre ends");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert!(status.success(), "{status:?}");
    assert!(peak < 100 << 20, "{} MB at the peak", peak >> 20);
}

/// `byre run --output json hi` against `byre-hostile --mode MODE`: it must end the turn, exit
/// 0 and deliver every line, whatever parts of the lines do not fit byre's model.
async fn run_odd(mode: &str) -> (crate::support::Out, Duration) {
    let (out, elapsed) = run_hostile(&format!("--mode {mode}"), &["--output", "json", "hi"]).await;
    assert!(out.status.success(), "{mode}: {out:?}");
    // A hang guard, not a timing: the result ends the run at once.
    assert!(elapsed < Duration::from_secs(20), "{mode}: {elapsed:?}");
    let results = out
        .stdout
        .lines()
        .filter(|l| l.starts_with(r#"{"type":"result""#))
        .count();
    let expected = if mode == "early-result" { 2 } else { 1 };
    assert_eq!(results, expected, "{mode}: {out:?}");
    (out, elapsed)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_call_nested_300_deep_is_delivered() {
    let (out, _) = run_odd("deep-tool").await;
    let depth = 300;
    let input = format!(
        r#""input":{{"command":{}"x"{}}}"#,
        "[".repeat(depth),
        "]".repeat(depth)
    );
    let line = out
        .stdout
        .lines()
        .find(|l| l.starts_with(r#"{"type":"assistant""#))
        .unwrap_or_else(|| panic!("no assistant line: {out:?}"));
    assert!(line.contains(r#""id":"toolu_deep""#), "{line:.300}");
    assert!(
        line.contains(&input),
        "the input is written back as it came: {line:.300}"
    );
    assert!(out.stderr.contains("do not fit the model"), "{out:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_result_with_deep_structured_output_ends_the_turn() {
    let (out, _) = run_odd("deep-output").await;
    let nested = format!("{}1{}", r#"{"k":"#.repeat(200), "}".repeat(200));
    assert!(out.stdout.contains(&nested), "{out:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_result_with_numbers_out_of_range_ends_the_turn() {
    let (out, _) = run_odd("huge-number").await;
    assert!(out.stdout.contains(r#""total_cost_usd":1e400"#), "{out:?}");
    assert!(out.stdout.contains(r#""cost_next":-1e400"#), "{out:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_result_with_retyped_fields_ends_the_turn() {
    let (out, _) = run_odd("retyped").await;
    for part in [
        r#""num_turns":"1""#,
        r#""session_id":5"#,
        r#""is_error":"false""#,
        r#""input_tokens":1.5"#,
    ] {
        assert!(out.stdout.contains(part), "{part}: {out:?}");
    }
    assert!(out.stderr.contains("/num_turns"), "{out:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_result_before_the_initialize_answer_is_not_the_prompts_answer() {
    let (out, _) = run_odd("early-result").await;
    // Both lines are delivered; the turn ends at the prompt's answer, the last line.
    let last = out.stdout.lines().last().unwrap_or_default();
    assert!(last.contains(r#""result":"done""#), "{out:?}");
    assert!(out.stdout.contains("not an answer to anything"), "{out:?}");
    assert!(
        out.stderr.contains("a result before the initialize answer"),
        "{out:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cli_that_goes_silent_mid_turn_is_stopped_at_the_stall_timeout() {
    let (out, elapsed) = run_hostile("--mode silent", &["--stall-timeout", "3", "hi"]).await;
    assert_eq!(out.status.code(), Some(75), "{out:?}");
    assert!(elapsed < Duration::from_secs(10), "{elapsed:?}");
    assert!(
        out.stderr
            .contains("heard nothing from the CLI for 3 s (--stall-timeout)"),
        "{out:?}"
    );
}
