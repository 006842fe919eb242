//! `cargo xtask replay`: decode every message of recorded transcripts, re-encode it and
//! compare, counting typed, unknown and failed messages, and the typed ones that carry fields
//! byre does not model.
//!
//! A transcript has one `{"dir":"send"|"recv","msg":{...}}` object per line (byre-transport's
//! transcript format, read with its reader, a line at a time in bounded memory); notes and raw
//! bytes are skipped. Each message is decoded once, from its recorded bytes, and compared with
//! the recorded text parsed as a value. Control answers are also checked against the request
//! they answer: the payload must decode as that request's typed success payload and
//! round-trip. A line longer than the reader's limit is reported, counted as a failed message,
//! and the file read on from the next line.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};

use byre_proto::{
    check_answer_payload, check_response_payload, first_difference, AnyMessage, CliMessage,
    ControlResponseBody, Direction, FindUnknown, HostMessage,
};
use byre_testkit::{TranscriptError, TranscriptLine, TranscriptReader};
use serde_json::Value;

use crate::flags::Replay;

/// Counts for one file or for the whole run.
#[derive(Default, Clone, Copy)]
struct Counts {
    messages: usize,
    typed: usize,
    /// Typed messages with fields byre does not model (kept in `extra`).
    unmodelled: usize,
    unknown: usize,
    failed: usize,
}

impl Counts {
    fn add(&mut self, other: Counts) {
        self.messages += other.messages;
        self.typed += other.typed;
        self.unmodelled += other.unmodelled;
        self.unknown += other.unknown;
        self.failed += other.failed;
    }

    fn line(&self) -> String {
        format!(
            "{} messages, {} typed ({} with unmodelled fields), {} unknown, {} failed",
            self.messages, self.typed, self.unmodelled, self.unknown, self.failed
        )
    }
}

/// What became of one message.
enum Outcome {
    /// Typed, with the paths of the fields not modelled.
    Typed(Vec<String>),
    Unknown(Vec<String>),
    Failed(Vec<String>),
}

pub(crate) fn run(flags: &Replay) -> Result<bool, String> {
    let mut files = Vec::new();
    for path in &flags.paths {
        collect(path, &mut files)?;
    }
    files.sort();
    if let Some(version) = &flags.cli {
        let before = files.len();
        files.retain(|file| from_cli(file, version));
        println!(
            "replay: {} of {before} transcripts are of sessions with CLI {version}",
            files.len()
        );
    }
    let mut total = Counts::default();
    for file in &files {
        let counts = replay_file(file, flags.explain)?;
        println!("{}: {}", file.display(), counts.line());
        total.add(counts);
    }
    println!("replay: {}", total.line());
    Ok(total.failed == 0 && !(flags.strict && (total.unknown > 0 || total.unmodelled > 0)))
}

/// Whether the transcript at `file` is of a session whose CLI said it is `version` (in its
/// `initialize` answer).
fn from_cli(file: &Path, version: &str) -> bool {
    let needle = format!("\"claude_code_version\":\"{version}\"");
    let Ok(lines) = TranscriptReader::open(file) else {
        return false;
    };
    for line in lines.flatten() {
        if line.direction() == Some(Direction::Recv) && line.raw.contains(&needle) {
            return true;
        }
    }
    false
}

fn collect(path: &Path, out: &mut Vec<PathBuf>) -> Result<(), String> {
    let meta = fs::metadata(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if meta.is_file() {
        out.push(path.to_path_buf());
        return Ok(());
    }
    let entries = fs::read_dir(path).map_err(|e| format!("{}: {e}", path.display()))?;
    for entry in entries {
        let entry = entry.map_err(|e| format!("{}: {e}", path.display()))?;
        let p = entry.path();
        if p.is_dir() {
            collect(&p, out)?;
        } else if p.extension().is_some_and(|e| e == "jsonl") {
            out.push(p);
        }
    }
    Ok(())
}

fn replay_file(file: &Path, explain: bool) -> Result<Counts, String> {
    let mut counts = Counts::default();
    // Request subtypes by request id, per direction of the request.
    let mut requests: HashMap<(Direction, String), String> = HashMap::new();
    let mut lines = TranscriptReader::open(file).map_err(|e| e.to_string())?;
    while let Some(line) = lines.next() {
        let number = lines.line_number();
        let line = match line {
            Ok(line) => line,
            Err(TranscriptError::BadLine { line, reason }) => {
                return Err(format!(
                    "{}:{line}: not a transcript line: {reason}",
                    file.display()
                ))
            }
            Err(TranscriptError::TooLong { line, bad }) => {
                // Skipped as it was read: a message not checked, so a failure.
                counts.messages += 1;
                counts.failed += 1;
                println!(
                    "  {}:{line} {bad}; it starts {:?}; skipped",
                    file.display(),
                    bad.head
                );
                continue;
            }
            Err(other) => return Err(other.to_string()),
        };
        let Some(direction) = line.direction() else {
            continue;
        };
        counts.messages += 1;
        let (outcome, kind) = check_message(direction, &line, &mut requests);
        let (label, details) = match outcome {
            Outcome::Typed(extra) if extra.is_empty() => {
                counts.typed += 1;
                continue;
            }
            Outcome::Typed(extra) => {
                counts.typed += 1;
                counts.unmodelled += 1;
                ("unmodelled field", extra)
            }
            Outcome::Unknown(paths) => {
                counts.unknown += 1;
                ("unknown", paths)
            }
            Outcome::Failed(why) => {
                counts.failed += 1;
                ("failed", why)
            }
        };
        if explain {
            for detail in details {
                println!(
                    "  {}:{} {} {kind} {label}: {detail}",
                    file.display(),
                    number,
                    direction.as_str()
                );
            }
        }
    }
    Ok(counts)
}

/// Decodes one message from its recorded bytes and checks that it encodes back to the same
/// value; also gives the message's `type`.
fn check_message(
    direction: Direction,
    line: &TranscriptLine,
    requests: &mut HashMap<(Direction, String), String>,
) -> (Outcome, String) {
    let recorded: Value = match serde_json::from_str(&line.raw) {
        Ok(value) => value,
        Err(e) => return (Outcome::Failed(vec![e.to_string()]), "?".into()),
    };
    let kind = recorded
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("?")
        .to_owned();
    let decoded = match AnyMessage::from_slice(direction, line.raw.as_bytes()) {
        Ok(decoded) => decoded,
        Err(error) => return (Outcome::Failed(vec![error.to_string()]), kind),
    };
    let again = match decoded.to_value() {
        Ok(again) => again,
        Err(error) => return (Outcome::Failed(vec![error.to_string()]), kind),
    };
    if again != recorded {
        let at = first_difference(&recorded, &again).unwrap_or_else(|| "/".into());
        return (
            Outcome::Failed(vec![format!("re-encoded value differs at {at}")]),
            kind,
        );
    }
    let mut unknown = decoded.unknown_paths();
    // A part kept as text because it did not fit the model is a gap in it too.
    unknown.extend(
        decoded
            .misfit_paths()
            .into_iter()
            .map(|p| format!("misfit {p}")),
    );
    match control_check(direction, &decoded, requests) {
        Some(Err(why)) => return (Outcome::Failed(vec![why]), kind),
        Some(Ok(paths)) => unknown.extend(paths.into_iter().map(|p| format!("payload {p}"))),
        None => {}
    }
    if unknown.is_empty() {
        (Outcome::Typed(decoded.extra_paths()), kind)
    } else {
        (Outcome::Unknown(unknown), kind)
    }
}

/// Records control requests and checks a control answer's payload against its request.
fn control_check(
    direction: Direction,
    decoded: &AnyMessage,
    requests: &mut HashMap<(Direction, String), String>,
) -> Option<Result<Vec<String>, String>> {
    let response = match decoded {
        AnyMessage::Send(HostMessage::ControlRequest(r)) => {
            let subtype = r.request.tag().unwrap_or_default().to_owned();
            requests.insert((direction, r.request_id.clone()), subtype);
            return None;
        }
        AnyMessage::Recv(CliMessage::ControlRequest(r)) => {
            let subtype = r.request.tag().unwrap_or_default().to_owned();
            requests.insert((direction, r.request_id.clone()), subtype);
            return None;
        }
        AnyMessage::Send(HostMessage::ControlResponse(r)) => r,
        AnyMessage::Recv(CliMessage::ControlResponse(r)) => r,
        _ => return None,
    };
    let ControlResponseBody::Success(success) = &response.response else {
        return None;
    };
    let asker = match direction {
        Direction::Send => Direction::Recv,
        Direction::Recv => Direction::Send,
    };
    let subtype = requests.get(&(asker, success.request_id.clone()))?;
    let payload = success.payload_value();
    match asker {
        Direction::Send => check_response_payload(subtype, payload.as_ref()),
        Direction::Recv => check_answer_payload(subtype, payload.as_ref()),
    }
}
