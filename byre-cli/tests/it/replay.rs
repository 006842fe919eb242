//! `byre replay`: transcripts written by `--transcript`, NDJSON from `--output json`, the
//! recorded transcripts of testdata, and files that are neither; over-long lines, and the
//! memory of a transcript of hundreds of megabytes.

use std::io::Write;
use std::path::{Path, PathBuf};

use byre_testkit::{Block, Match, Reply, Rule, Script};
use serde_json::json;

use crate::support::{byre_bin, output, peak_rss, Offline};

fn testdata(name: &str) -> PathBuf {
    byre_testkit::corpus::transcripts_dir()
        .expect("the recorded transcripts")
        .join("cli-2.1.328")
        .join(name)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_s_transcript_reads_as_the_conversation() {
    let script = Script::new()
        .rule(Rule::when(Match::has_tool_result(true)).reply(Reply::text("It printed hi.")))
        .rule(Rule::any().reply(Reply::message(vec![
            Block::text("Running it."),
            Block::tool_use("Bash", json!({"command": "echo hi"})),
        ])));
    let offline = Offline::start(script).await;
    let transcript = offline.env.home().join("t.jsonl");
    let json = offline.env.home().join("run.ndjson");
    let run = output(
        offline.run(&[
            "--transcript",
            transcript.to_str().unwrap(),
            "--output",
            "json",
            "run echo hi",
        ]),
        None,
    )
    .await;
    assert!(run.status.success(), "{run:?}");
    std::fs::write(&json, &run.stdout).unwrap();

    let replay = output(
        offline.command(&["replay", transcript.to_str().unwrap()]),
        None,
    )
    .await;
    assert!(replay.status.success(), "{replay:?}");
    let lines: Vec<&str> = replay.stdout.lines().filter(|l| !l.is_empty()).collect();
    assert_eq!(lines[0], "you: run echo hi", "{replay:?}");
    assert!(lines[1].starts_with("session "), "{replay:?}");
    assert_eq!(
        &lines[2..6],
        [
            "claude: Running it.",
            "  ▸ Bash echo hi",
            "  ✓ Bash · hi",
            "claude: It printed hi."
        ],
        "{replay:?}"
    );
    assert!(lines[6].starts_with("── done · 2 turns · "), "{replay:?}");

    // The NDJSON of --output json replays the same, without the prompt (it is not a CLI line).
    let from_json = output(offline.command(&["replay", json.to_str().unwrap()]), None).await;
    assert!(from_json.status.success(), "{from_json:?}");
    let json_lines: Vec<&str> = from_json.stdout.lines().filter(|l| !l.is_empty()).collect();
    assert_eq!(json_lines, lines[1..], "{from_json:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recorded_transcripts_show_subagents_hooks_and_interrupts() {
    let offline = Offline::start(Script::new()).await;
    let show = |name: &str| {
        let path = testdata(name);
        offline.command(&["replay", path.to_str().unwrap()])
    };
    let subagent = output(show("subagent_foreground.jsonl"), None).await;
    assert!(subagent.status.success(), "{subagent:?}");
    assert!(subagent.stdout.contains("  ▸ Agent "), "{subagent:?}");
    assert!(
        subagent.stdout.contains("    ▸ Bash "),
        "the subagent's own tool call is nested: {subagent:?}"
    );

    let hook = output(show("stop_hook_block.jsonl"), None).await;
    assert!(hook.status.success(), "{hook:?}");
    assert!(hook.stdout.contains("  ↪ hook Stop"), "{hook:?}");

    let interrupt = output(show("interrupt_during_stream.jsonl"), None).await;
    assert!(interrupt.status.success(), "{interrupt:?}");
    assert!(interrupt.stdout.contains("  [interrupt]"), "{interrupt:?}");
    assert!(
        interrupt
            .stdout
            .contains("── error: error_during_execution (aborted_streaming)"),
        "{interrupt:?}"
    );

    let unknown = output(show("resume_unknown_id.jsonl"), None).await;
    assert!(unknown.status.success(), "{unknown:?}");
    assert!(
        unknown
            .stdout
            .contains("  error: No conversation found with session ID"),
        "{unknown:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_that_is_not_a_transcript_is_an_error_naming_the_line() {
    let offline = Offline::start(Script::new()).await;
    let path = offline.env.home().join("bad.jsonl");
    std::fs::write(
        &path,
        "{\"dir\":\"note\",\"note\":\"hi\"}\n\nnot json at all\n",
    )
    .unwrap();
    let out = output(offline.command(&["replay", path.to_str().unwrap()]), None).await;
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(
        out.stderr.contains("bad.jsonl: line 3: not JSON"),
        "{out:?}"
    );

    std::fs::write(&path, "{\"hello\":1}\n").unwrap();
    let out = output(offline.command(&["replay", path.to_str().unwrap()]), None).await;
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(
        out.stderr.contains("line 1: neither a transcript line"),
        "{out:?}"
    );

    let missing = offline.env.home().join("missing.jsonl");
    let out = output(
        offline.command(&["replay", missing.to_str().unwrap()]),
        None,
    )
    .await;
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(out.stderr.contains("missing.jsonl"), "{out:?}");
}

/// `byre replay ARGS...`: it needs no CLI and no model.
fn replay(args: &[&str]) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(byre_bin());
    command.arg("replay").args(args).kill_on_drop(true);
    command
}

/// The start of a transcript line holding an assistant message with one text block.
const LONG_START: &str = r#"{"dir":"recv","t":1.0,"msg":{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":""#;

/// Writes a transcript line whose message's text is `text_len` bytes, and its newline; gives
/// the line's length (without the newline).
fn write_long_line(out: &mut impl Write, text_len: usize) -> usize {
    let end = r#""}]},"session_id":"s"}}"#;
    out.write_all(LONG_START.as_bytes()).unwrap();
    let chunk = vec![b'a'; 1 << 20];
    let mut left = text_len;
    while left > 0 {
        let n = left.min(chunk.len());
        out.write_all(&chunk[..n]).unwrap();
        left -= n;
    }
    out.write_all(end.as_bytes()).unwrap();
    out.write_all(b"\n").unwrap();
    LONG_START.len() + text_len + end.len()
}

/// How `byre replay` reports an over-long line: its number, length and first bytes.
fn long_line_report(path: &Path, number: usize, len: usize, limit: usize) -> String {
    let head = format!("{LONG_START}{}", "a".repeat(80))[..80].to_owned();
    format!(
        "byre: warning: {}: line {number}: bad line ({len} bytes): longer than the \
         {limit}-byte limit; it starts {head:?}; skipped (--max-line-bytes raises the limit)",
        path.display()
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_over_long_line_is_reported_and_the_lines_after_it_replayed() {
    let dir = tempfile::tempdir().unwrap();
    let recorded = std::fs::read(testdata("bash_tool.jsonl")).unwrap();
    let lines = recorded.iter().filter(|&&b| b == b'\n').count();
    // The recorded transcript twice, and between the two a line longer than the limit (the
    // recorded lines are shorter).
    let twice = dir.path().join("twice.jsonl");
    std::fs::write(&twice, [&recorded[..], &recorded[..]].concat()).unwrap();
    let with_long = dir.path().join("with-long.jsonl");
    let mut file = std::io::BufWriter::new(std::fs::File::create(&with_long).unwrap());
    file.write_all(&recorded).unwrap();
    let len = write_long_line(&mut file, 30_000);
    file.write_all(&recorded).unwrap();
    file.flush().unwrap();
    drop(file);

    let expected = output(replay(&[twice.to_str().unwrap()]), None).await;
    assert!(expected.status.success(), "{expected:?}");
    assert!(expected.stdout.contains("▸ Bash"), "{expected:?}");
    let out = output(
        replay(&["--max-line-bytes", "20000", with_long.to_str().unwrap()]),
        None,
    )
    .await;
    assert!(out.status.success(), "{out:?}");
    assert_eq!(out.stdout, expected.stdout, "every other line is replayed");
    assert_eq!(
        out.stderr.trim_end(),
        long_line_report(&with_long, lines + 1, len, 20_000),
        "{out:?}"
    );

    // Under the default limit, the line is replayed.
    let out = output(replay(&[with_long.to_str().unwrap()]), None).await;
    assert!(out.status.success(), "{out:?}");
    assert!(
        out.stdout
            .contains(&format!("claude: {}", "a".repeat(30_000))),
        "{out:?}"
    );
    assert!(out.stderr.is_empty(), "{out:?}");

    let zero = output(
        replay(&["--max-line-bytes", "0", twice.to_str().unwrap()]),
        None,
    )
    .await;
    assert_eq!(zero.status.code(), Some(1), "{zero:?}");
    assert!(
        zero.stderr.contains("--max-line-bytes must be at least 1"),
        "{zero:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_transcript_of_hundreds_of_megabytes_replays_in_bounded_memory() {
    use tokio::io::AsyncReadExt;
    // Recorded lines (about 10 MB), a 300 MiB line (over the default limit), a prompt, four
    // answers of 1 MiB, and recorded lines again (about 5 MB): byre reads a line at a time, and
    // its peak memory, sampled while it writes the answers that follow the long line, stays far
    // below the file's size.
    let dir = tempfile::tempdir().unwrap();
    let recorded = std::fs::read(testdata("bash_tool.jsonl")).unwrap();
    let lines = recorded.iter().filter(|&&b| b == b'\n').count();
    let copies = (5 << 20) / recorded.len();
    let path = dir.path().join("big.jsonl");
    let mut file = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    for _ in 0..2 * copies {
        file.write_all(&recorded).unwrap();
    }
    let len = write_long_line(&mut file, 300 << 20);
    let prompt = "after the long line";
    let user = json!({"type": "user", "message": {"role": "user", "content": prompt}});
    writeln!(file, "{}", json!({"dir": "send", "t": 2.0, "msg": user})).unwrap();
    for _ in 0..4 {
        write_long_line(&mut file, 1 << 20);
    }
    for _ in 0..copies {
        file.write_all(&recorded).unwrap();
    }
    file.flush().unwrap();
    drop(file);
    let size = std::fs::metadata(&path).unwrap().len();
    assert!(size > 315 << 20, "{size}");

    let once = output(
        replay(&[testdata("bash_tool.jsonl").to_str().unwrap()]),
        None,
    )
    .await;
    let closings = |text: &str| text.lines().filter(|l| l.starts_with("── ")).count();
    let per_copy = closings(&once.stdout);
    assert!(per_copy > 0, "{once:?}");

    let mut command = replay(&[path.to_str().unwrap()]);
    command
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = command.spawn().expect("byre starts");
    let pid = child.id().expect("a pid");
    let mut stdout = child.stdout.take().expect("piped");
    let (mut text, mut buf) = (Vec::new(), vec![0; 64 * 1024]);
    // Sampled after each read; after the prompt, byre has read all of the file but its last
    // megabytes, and is blocked on its stdout with 4 MiB of answers still to write.
    let (mut peak, mut after, mut samples_after) = (0, false, 0);
    loop {
        let n = stdout.read(&mut buf).await.expect("stdout reads");
        if n == 0 {
            break;
        }
        text.extend_from_slice(&buf[..n]);
        let new = &text[text.len().saturating_sub(n + prompt.len())..];
        after = after || new.windows(prompt.len()).any(|w| w == prompt.as_bytes());
        if let Some(rss) = peak_rss(pid) {
            peak = peak.max(rss);
            samples_after += usize::from(after);
        }
    }
    let out = child.wait_with_output().await.expect("byre ends");
    let stdout = String::from_utf8(text).unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        samples_after > 10,
        "{samples_after} samples after the long line"
    );
    assert!(
        peak < 100 << 20,
        "{} MB at the peak for a {} MB transcript",
        peak >> 20,
        size >> 20
    );
    let limit = byre_transport::TRANSCRIPT_MAX_LINE;
    assert_eq!(
        stderr.trim_end(),
        long_line_report(&path, 2 * copies * lines + 1, len, limit)
    );
    assert!(stdout.contains(&format!("you: {prompt}")));
    let answer = format!("claude: {}\n", "a".repeat(1 << 20));
    assert_eq!(stdout.matches(&answer).count(), 4);
    assert_eq!(
        closings(&stdout),
        3 * copies * per_copy,
        "every turn is replayed"
    );
}
