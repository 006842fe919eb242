//! Listing the CLI's session history: 1,000 session files in one project (most of them a
//! short conversation, one in ten a long one of about 300 KB, so the head and tail windows
//! are read rather than whole files), listed whole and as a first page of 20.

// criterion_group! generates an undocumented public function.
#![allow(missing_docs)]

use std::io::Write;
use std::path::Path;

use byre_transport::{project_dir_name, SessionHistory};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use serde_json::json;

const SESSIONS: usize = 1_000;

/// Writes session `n`'s file: a first prompt, then `exchanges` pairs of answer and tool result.
fn write_session(dir: &Path, n: usize, exchanges: usize) {
    let id = format!("00000000-0000-4000-8000-{n:012}");
    let mut file = std::io::BufWriter::new(
        std::fs::File::create(dir.join(format!("{id}.jsonl"))).expect("a session file"),
    );
    let mut parent = serde_json::Value::Null;
    let entry = |kind: &str, uuid: String, parent: &serde_json::Value, message| {
        json!({
            "type": kind, "uuid": uuid, "parentUuid": parent, "sessionId": id,
            "isSidechain": false, "userType": "external", "cwd": "/work/repo",
            "gitBranch": "main", "version": "2.1.332",
            "timestamp": "2026-12-01T10:00:00.000Z", "message": message,
        })
    };
    let first = entry(
        "user",
        format!("{n:08}-0000-4000-8000-000000000000"),
        &parent,
        json!({"role": "user", "content": format!("Question {n}: what does the parser do?")}),
    );
    writeln!(file, "{first}").unwrap();
    parent = first["uuid"].clone();
    let filler = "The parser reads one line at a time and keeps what it does not know. ".repeat(6);
    for i in 0..exchanges {
        let answer = entry(
            "assistant",
            format!("{n:08}-{i:04}-4000-8000-000000000001"),
            &parent,
            json!({"role": "assistant", "model": "claude-sonnet-4-5", "content": [
                {"type": "text", "text": filler},
                {"type": "tool_use", "id": format!("toolu_{i}"), "name": "Read",
                 "input": {"file_path": "/work/repo/src/lib.rs"}}]}),
        );
        writeln!(file, "{answer}").unwrap();
        let result = entry(
            "user",
            format!("{n:08}-{i:04}-4000-8000-000000000002"),
            &answer["uuid"],
            json!({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": format!("toolu_{i}"), "content": filler}]}),
        );
        writeln!(file, "{result}").unwrap();
        parent = result["uuid"].clone();
    }
    let last = json!({"type": "last-prompt", "lastPrompt": "and the tests?", "sessionId": id});
    writeln!(file, "{last}").unwrap();
}

fn listing(c: &mut Criterion) {
    let config = tempfile::tempdir().expect("a scratch config dir");
    let cwd = Path::new("/work/repo");
    let project = config.path().join("projects").join(project_dir_name(cwd));
    std::fs::create_dir_all(&project).unwrap();
    for n in 0..SESSIONS {
        write_session(&project, n, if n % 10 == 0 { 250 } else { 6 });
    }
    let bytes: u64 = std::fs::read_dir(&project)
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum();
    eprintln!("{SESSIONS} session files, {bytes} bytes");
    let history = SessionHistory::new(config.path());
    assert_eq!(history.list(cwd, 0, None).len(), SESSIONS);

    let mut group = c.benchmark_group("list 1,000 sessions");
    group.sample_size(10);
    group.throughput(Throughput::Elements(SESSIONS as u64));
    group.bench_function("all", |b| {
        b.iter(|| assert_eq!(history.list(cwd, 0, None).len(), SESSIONS))
    });
    group.bench_function("first 20", |b| {
        b.iter(|| assert_eq!(history.list(cwd, 0, Some(20)).len(), 20))
    });
    group.finish();
}

criterion_group!(benches, listing);
criterion_main!(benches);
