//! Reading the transcript corpus: one `{"dir":..,"t":..,"msg":{..}}` per line, with the `msg`
//! kept as the exact bytes the transcript holds (key order matters to the decoder).

use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use byre_proto::Direction;
use serde_json::Value;

/// What one transcript line holds.
#[derive(Debug, Clone)]
pub(crate) enum Body {
    /// A message, as the bytes of its JSON text in the transcript.
    Msg(Vec<u8>),
    /// A line the host wrote verbatim (deliberately invalid input).
    Raw(String),
    /// Anything else (`note` lines).
    Other,
}

/// One transcript line.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    /// 1-based line number in the file.
    pub(crate) line_no: usize,
    /// `send`, `recv`, `note`, ...
    pub(crate) dir: String,
    /// What the line holds.
    pub(crate) body: Body,
}

impl Entry {
    /// The direction, for `send` and `recv` lines.
    pub(crate) fn direction(&self) -> Option<Direction> {
        match self.dir.as_str() {
            "send" => Some(Direction::Send),
            "recv" => Some(Direction::Recv),
            _ => None,
        }
    }
}

/// The corpus root: `testdata/transcripts` of the workspace.
pub(crate) fn corpus_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/transcripts")
}

/// Every `*.jsonl` file under the corpus root, sorted.
pub(crate) fn corpus_files() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        for entry in entries {
            let path = entry.expect("readable directory entry").path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "jsonl") {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(&corpus_root(), &mut out);
    out.sort();
    out
}

/// Reads one transcript.
pub(crate) fn read_transcript(path: &Path) -> Vec<Entry> {
    let text = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.split(|&b| b == b'\n')
        .enumerate()
        .filter(|(_, line)| !line.iter().all(u8::is_ascii_whitespace))
        .map(|(i, line)| {
            let fields = top_level_fields(line)
                .unwrap_or_else(|| panic!("{}:{}: not a transcript line", path.display(), i + 1));
            let get = |key: &str| fields.iter().find(|(k, _)| k == key).map(|(_, v)| *v);
            let dir = get("dir")
                .and_then(|v| serde_json::from_slice::<String>(v).ok())
                .unwrap_or_default();
            let body = if let Some(msg) = get("msg") {
                Body::Msg(msg.to_vec())
            } else if let Some(raw) = get("raw") {
                Body::Raw(serde_json::from_slice(raw).expect("`raw` is a JSON string"))
            } else {
                Body::Other
            };
            Entry {
                line_no: i + 1,
                dir,
                body,
            }
        })
        .collect()
}

/// Every message of the corpus with its direction, read once.
pub(crate) fn corpus_messages() -> &'static [(Direction, Vec<u8>)] {
    static MESSAGES: LazyLock<Vec<(Direction, Vec<u8>)>> = LazyLock::new(|| {
        corpus_files()
            .iter()
            .flat_map(|path| read_transcript(path))
            .filter_map(|entry| match (entry.direction(), entry.body) {
                (Some(dir), Body::Msg(bytes)) => Some((dir, bytes)),
                _ => None,
            })
            .collect()
    });
    &MESSAGES
}

/// Splits a JSON object into its top-level keys, in order, and the exact bytes of their values.
pub(crate) fn top_level_fields(line: &[u8]) -> Option<Vec<(String, &[u8])>> {
    let skip_ws = |mut i: usize| {
        while line.get(i).is_some_and(u8::is_ascii_whitespace) {
            i += 1;
        }
        i
    };
    let mut fields = Vec::new();
    let mut i = skip_ws(0);
    if line.get(i) != Some(&b'{') {
        return None;
    }
    i = skip_ws(i + 1);
    if line.get(i) == Some(&b'}') {
        return Some(fields);
    }
    loop {
        let (key, used) = parse_prefix::<String>(&line[i..])?;
        i = skip_ws(i + used);
        if line.get(i) != Some(&b':') {
            return None;
        }
        i = skip_ws(i + 1);
        let (_, used) = parse_prefix::<Value>(&line[i..])?;
        fields.push((key, &line[i..i + used]));
        i = skip_ws(i + used);
        match line.get(i) {
            Some(b',') => i = skip_ws(i + 1),
            Some(b'}') => return Some(fields),
            _ => return None,
        }
    }
}

/// Parses one JSON value at the start of `bytes`; returns it and how many bytes it took.
fn parse_prefix<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> Option<(T, usize)> {
    let mut stream = serde_json::Deserializer::from_slice(bytes).into_iter::<T>();
    let value = stream.next()?.ok()?;
    Some((value, stream.byte_offset()))
}
