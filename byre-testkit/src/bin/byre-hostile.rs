//! `byre-hostile`: a stand-in for the `claude` CLI that misbehaves on purpose, for tests of
//! what byre does with a crashed, hung, flooding or otherwise hostile CLI. It answers the
//! host's `initialize`, then acts as `--mode` says on each `user` line:
//!
//! - `answer` (default): a `result` whose text is `--result TEXT`, written into the JSON as it
//!   is (so `\ud83d`, a lone surrogate escape, reaches the host as written).
//! - `crash`: an `assistant` message, then exit 3 mid-turn; with `--hold`, first a `sleep` in
//!   a process group of its own that keeps stdout open.
//! - `close-stdout`: close stdout, then keep running until stdin ends.
//! - `stall`: before reading anything after `initialize`, write `--lines N` messages of
//!   `--size BYTES` (more than a pipe holds): the host must read them while its own writes
//!   wait; then answer as `answer` does.
//! - `big`: `--lines N` messages of `--size BYTES`, then the `result`; with `--newlines`, the
//!   text has a newline (an escape in the JSON) every 80 bytes.
//! - `tasks`: a background task started and finished, then the `result`.
//! - `flood-on-eof`: as `answer`; when stdin ends, `--lines N` messages of `--size BYTES`
//!   before exiting.
//! - `hang-init`: never answer `initialize` (stderr says so).
//! - `deep-tool`: before the `result`, an `assistant` line whose tool call's input is nested
//!   300 deep (more than serde_json's 128).
//! - `deep-output`: a `result` whose `structured_output` is nested 200 deep.
//! - `huge-number`: a `result` with `total_cost_usd` 1e400 and a new field -1e400.
//! - `retyped`: a `result` whose `num_turns`, `total_cost_usd`, `is_error`, `session_id` and
//!   `usage.input_tokens` are of other types than the CLI writes today.
//! - `early-result`: a `result` written before the `initialize` answer, then as `answer`.
//! - `close-stdin`: close stdin before answering `initialize`, then keep running (10 minutes)
//!   without reading: every write the host makes after the answer fails.
//! - `linger`: as `answer`; when stdin ends, keep running (10 minutes) instead of exiting, as
//!   a CLI busy with a long turn does (stderr says so): a host's close waits out its grace.
//! - `env`: a `result` whose text is the names of the variables of its environment, sorted,
//!   separated by spaces.
//! - `env-value`: a `result` whose text is the value of the variable `--result` names, or
//!   `(unset)`.
//! - `controls`: terminal control sequences (ESC, BEL, backspace, OSC 52, CSI, C1) in every
//!   place a host shows: a line that is not JSON, answer text, a tool call's name and input, a
//!   tool result, a notification, and stderr; then the `result`, or with `--exit` exit 3
//!   mid-turn (the host's error quotes stderr).
//!
//! - `silent`: an `assistant` message, then nothing more for the turn (still reading, answering
//!   nothing, not even an `interrupt`): a CLI hung mid-turn.
//! - `heartbeat`: `--lines N` `tool_progress` heartbeats of a running Bash call, one every
//!   `--every MS` (1000 by default), then the `result`: a long tool that is alive.
//!
//! Flags may also come in `BYRE_HOSTILE_ARGS` (split at spaces), for a host that passes only
//! its own flags to the CLI (`byre run`).
//!
//! Its own writes' failures are not reported: the host under test may stop reading at any
//! time, and what it does then is what the tests look at.

use std::io::{BufRead, Write};
use std::time::Duration;

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    if let Ok(more) = std::env::var("BYRE_HOSTILE_ARGS") {
        args.extend(more.split_whitespace().map(str::to_owned));
    }
    let value = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let number =
        |flag: &str, default: usize| value(flag).and_then(|n| n.parse().ok()).unwrap_or(default);
    let mode = value("--mode").unwrap_or_else(|| "answer".into());
    let result = value("--result").unwrap_or_else(|| "done".into());
    let (lines, size) = (number("--lines", 0), number("--size", 1000));
    let newlines = args.iter().any(|a| a == "--newlines");
    let stdin = std::io::stdin();
    let mut input = stdin.lock().lines();
    let mut out = std::io::stdout().lock();

    let Some(Ok(first)) = input.next() else {
        return;
    };
    if mode == "hang-init" {
        eprintln!("byre-hostile: not answering initialize");
        std::thread::sleep(Duration::from_secs(600));
        return;
    }
    if mode == "close-stdin" {
        close_stdin();
    }
    let request: serde_json::Value = serde_json::from_str(&first).unwrap_or_default();
    if mode == "early-result" {
        let _ = writeln!(
            out,
            concat!(
                r#"{{"type":"result","subtype":"success","is_error":false,"num_turns":1,"#,
                r#""result":"not an answer to anything","session_id":"hostile"}}"#
            )
        );
    }
    let answer = serde_json::json!({
        "type": "control_response",
        "response": {"subtype": "success", "request_id": request["request_id"], "response": {}},
    });
    let _ = writeln!(out, "{answer}");
    let _ = out.flush();
    if mode == "stall" {
        write_messages(&mut out, lines, size, newlines);
    }
    if mode == "close-stdin" {
        eprintln!("byre-hostile: stdin closed, still running");
        std::thread::sleep(Duration::from_secs(600));
        return;
    }
    for line in input {
        let Ok(line) = line else { break };
        if !line.contains("\"type\":\"user\"") {
            continue;
        }
        match mode.as_str() {
            "crash" => {
                if args.iter().any(|a| a == "--hold") {
                    hold_stdout();
                }
                write_messages(&mut out, 1, 100, false);
                eprintln!("byre-hostile: crashing mid-turn");
                std::process::exit(3);
            }
            "close-stdout" => {
                let _ = out.flush();
                close_stdout();
                // Still running, still reading: until stdin ends.
                continue;
            }
            "big" => write_messages(&mut out, lines, size, newlines),
            "silent" => {
                write_messages(&mut out, 1, 100, false);
                // A stand-in's own writes: the host under test may be gone (module docs).
                let _ = out.flush();
                continue;
            }
            "heartbeat" => {
                let every = Duration::from_millis(number("--every", 1000) as u64);
                for n in 0..lines {
                    std::thread::sleep(every);
                    // As every write here: the host may have stopped reading (module docs).
                    let _ = writeln!(
                        out,
                        concat!(
                            r#"{{"type":"tool_progress","tool_use_id":"toolu_long","#,
                            r#""tool_name":"Bash","parent_tool_use_id":null,"#,
                            r#""elapsed_time_seconds":{},"session_id":"hostile"}}"#
                        ),
                        n + 1
                    );
                    let _ = out.flush();
                }
            }
            "tasks" => write_task(&mut out),
            "deep-tool" => write_deep_tool_call(&mut out),
            "controls" => {
                write_controls(&mut out);
                if args.iter().any(|a| a == "--exit") {
                    std::process::exit(3);
                }
            }
            _ => {}
        }
        let _ = writeln!(out, "{}", result_line(&mode, &result));
        let _ = out.flush();
    }
    if mode == "flood-on-eof" {
        write_messages(&mut out, lines, size, newlines);
    }
    if mode == "linger" {
        eprintln!("byre-hostile: stdin ended, lingering");
        std::thread::sleep(Duration::from_secs(600));
    }
}

/// `count` assistant messages whose text is `size` bytes: lines of 79 `x` and a newline (an
/// escape in the JSON, as in any real answer) with `newlines`, else all `x`.
fn write_messages(out: &mut impl Write, count: usize, size: usize, newlines: bool) {
    let text = match newlines {
        true => {
            let mut text = format!("{}\\n", "x".repeat(79)).repeat(size / 81 + 1);
            text.truncate(size);
            if text.ends_with('\\') {
                text.pop();
                text.push('x');
            }
            text
        }
        false => "x".repeat(size),
    };
    for _ in 0..count {
        let line = format!(
            concat!(
                r#"{{"type":"assistant","message":{{"id":"msg_hostile","type":"message","#,
                r#""role":"assistant","model":"hostile","content":[{{"type":"text","#,
                r#""text":"{}"}}],"stop_reason":null,"usage":{{}}}},"#,
                r#""parent_tool_use_id":null,"session_id":"hostile"}}"#
            ),
            text
        );
        if writeln!(out, "{line}").is_err() {
            return;
        }
    }
    let _ = out.flush();
}

/// The turn's `result` line, shaped as `mode` says.
fn result_line(mode: &str, result: &str) -> String {
    let nested = |depth: usize| format!("{}1{}", r#"{"k":"#.repeat(depth), "}".repeat(depth));
    match mode {
        "deep-output" => format!(
            concat!(
                r#"{{"type":"result","subtype":"success","is_error":false,"num_turns":1,"#,
                r#""result":"{}","session_id":"hostile","structured_output":{}}}"#
            ),
            result,
            nested(200)
        ),
        "huge-number" => format!(
            concat!(
                r#"{{"type":"result","subtype":"success","is_error":false,"num_turns":1,"#,
                r#""result":"{}","session_id":"hostile","total_cost_usd":1e400,"#,
                r#""cost_next":-1e400}}"#
            ),
            result
        ),
        "retyped" => format!(
            concat!(
                r#"{{"type":"result","subtype":"success","is_error":"false","num_turns":"1","#,
                r#""result":"{}","session_id":5,"total_cost_usd":"0.01","#,
                r#""usage":{{"input_tokens":1.5}}}}"#
            ),
            result
        ),
        "env" => {
            let mut names: Vec<String> = std::env::vars_os()
                .map(|(name, _)| name.to_string_lossy().into_owned())
                .collect();
            names.sort();
            serde_json::json!({
                "type": "result", "subtype": "success", "is_error": false, "num_turns": 1,
                "result": names.join(" "), "session_id": "hostile",
            })
            .to_string()
        }
        "env-value" => {
            // `--result NAME`: the value of that variable, or `(unset)`.
            let value = std::env::var(result).unwrap_or_else(|_| "(unset)".into());
            serde_json::json!({
                "type": "result", "subtype": "success", "is_error": false, "num_turns": 1,
                "result": value, "session_id": "hostile",
            })
            .to_string()
        }
        _ => format!(
            concat!(
                r#"{{"type":"result","subtype":"success","is_error":false,"num_turns":1,"#,
                r#""result":"{}","session_id":"hostile"}}"#
            ),
            result
        ),
    }
}

/// Lines with terminal control sequences wherever a host shows text, and one on stderr.
fn write_controls(out: &mut impl Write) {
    // Raw bytes in a line that is not JSON, then JSON escapes in messages.
    let lines = [
        "not json \x1b]0;bad line title\x07 \x1b[2J\x08".to_owned(),
        concat!(
            r#"{"type":"assistant","message":{"id":"msg_ctl","type":"message","role":"assistant","#,
            r#""model":"hostile","content":[{"type":"text","text":"an answer \u001b[2J\u001b]0;"#,
            r#"answer title\u0007 \u001b]52;c;ZXZpbA==\u0007 back\b\b \u009b31m\n"},"#,
            r#"{"type":"tool_use","id":"toolu_ctl","name":"Tool\u001b[31m","#,
            r#""input":{"command":"cat \u001b]0;input title\u0007"}}],"stop_reason":null,"#,
            r#""usage":{}},"parent_tool_use_id":null,"session_id":"hostile"}"#
        )
        .to_owned(),
        concat!(
            r#"{"type":"user","message":{"role":"user","content":[{"type":"tool_result","#,
            r#""tool_use_id":"toolu_ctl","content":"\u001b]52;c;cmVzdWx0\u0007\u001b[2J"#,
            r#"result\b"}]},"parent_tool_use_id":null,"session_id":"hostile"}"#
        )
        .to_owned(),
        concat!(
            r#"{"type":"system","subtype":"notification","text":"note \u001b]0;t\u0007","#,
            r#""session_id":"hostile","uuid":"u-ctl"}"#
        )
        .to_owned(),
    ];
    for line in lines {
        let _ = writeln!(out, "{line}");
    }
    let _ = out.flush();
    eprintln!("byre-hostile: stderr \x1b]0;stderr title\x07\x1b[2J\x08");
}

/// An `assistant` line with a tool call whose input is nested 300 deep.
fn write_deep_tool_call(out: &mut impl Write) {
    let depth = 300;
    let input = format!(
        r#"{{"command":{}"x"{}}}"#,
        "[".repeat(depth),
        "]".repeat(depth)
    );
    let _ = writeln!(
        out,
        concat!(
            r#"{{"type":"assistant","message":{{"id":"msg_deep","type":"message","#,
            r#""role":"assistant","model":"hostile","content":[{{"type":"tool_use","#,
            r#""id":"toolu_deep","name":"Bash","input":{}}}],"stop_reason":null,"usage":{{}}}},"#,
            r#""parent_tool_use_id":null,"session_id":"hostile"}}"#
        ),
        input
    );
}

/// A background task started and finished, as the CLI reports one.
fn write_task(out: &mut impl Write) {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let _ = writeln!(
        out,
        concat!(
            r#"{{"type":"system","subtype":"task_started","task_id":"task{n}","#,
            r#""tool_use_id":"tool{n}","description":"a task","task_type":"local_bash","#,
            r#""session_id":"hostile","uuid":"u{n}a"}}"#
        ),
        n = n
    );
    let _ = writeln!(
        out,
        concat!(
            r#"{{"type":"system","subtype":"task_notification","task_id":"task{n}","#,
            r#""tool_use_id":"tool{n}","status":"completed","output_file":"/dev/null","#,
            r#""summary":"done","session_id":"hostile","uuid":"u{n}b"}}"#
        ),
        n = n
    );
}

/// Starts a `sleep` in a process group of its own (out of reach of a signal to this one's
/// group) that inherits stdout and keeps it open.
fn hold_stdout() {
    let mut command = std::process::Command::new("sleep");
    command.arg("30").stdin(std::process::Stdio::null());
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    if let Ok(child) = command.spawn() {
        eprintln!("holder {}", child.id());
    }
}

/// Closes file descriptor 1.
fn close_stdout() {
    #[cfg(unix)]
    let _ = nix::unistd::close(1);
}

/// Closes file descriptor 0 (the input is not read again).
fn close_stdin() {
    #[cfg(unix)]
    let _ = nix::unistd::close(0);
}
