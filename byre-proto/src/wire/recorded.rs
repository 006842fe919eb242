//! The message lines of the recorded transcripts (`testdata/transcripts/**/*.jsonl`), for
//! byre-proto's tests and its decode bench (which includes this file).

use std::path::Path;

/// Every recorded message line, as the CLI or host wrote it (its key order kept), with whether
/// the CLI wrote it (`recv`).
pub(crate) fn recorded_lines() -> Vec<(bool, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/transcripts");
    let mut files = Vec::new();
    let mut dirs = vec![root];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("the transcripts folder") {
            let path = entry.expect("an entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "jsonl") {
                files.push(path);
            }
        }
    }
    files.sort();
    let mut lines = Vec::new();
    for file in files {
        for line in std::fs::read_to_string(&file)
            .expect("a transcript")
            .lines()
        {
            #[derive(serde::Deserialize)]
            struct Entry<'a> {
                dir: &'a str,
                #[serde(borrow)]
                msg: Option<&'a serde_json::value::RawValue>,
            }
            let entry: Entry<'_> = serde_json::from_str(line).expect("a transcript line");
            if let Some(msg) = entry.msg {
                lines.push((entry.dir == "recv", msg.get().to_owned()));
            }
        }
    }
    lines
}
