//! The corpus stream for benchmarks: every CLI → host message of the recorded transcripts, as
//! the CLI wrote it, repeated until the stream reaches a given size.
//!
//! The mix of message types is the real one, and each line keeps its bytes (the CLI's key
//! order matters to decoding: `type` is first in most lines and late in `result` lines).

use std::io;
use std::path::{Path, PathBuf};

/// The recorded transcripts of the byre repository (`testdata/transcripts`).
///
/// They are not part of the published crate: outside a checkout of the byre repository (found
/// as the [`install_dir`](crate::install_dir) does), this fails with
/// [`io::ErrorKind::NotFound`]. Other projects read transcripts of their own with
/// [`recv_lines`] and [`CorpusStream::repeat`].
pub fn transcripts_dir() -> io::Result<PathBuf> {
    crate::cli::byre_repository()
        .map(|root| root.join("testdata").join("transcripts"))
        .ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::NotFound,
                "the recorded transcripts (testdata/transcripts) are in the byre repository \
                 (https://github.com/byre-rs/byre), not in the published crate: run inside a \
                 checkout of it, or read transcripts of your own with `recv_lines`",
            )
        })
}

/// Every transcript (`*.jsonl`) under `dir`, searched recursively, sorted by path.
///
/// This is the one walk of the recorded corpus for every crate above byre-proto: tests, benches
/// and [`recv_lines`] list transcripts with it, as `transcript_files(&transcripts_dir()?)` for
/// all of them or with `.join("cli-<version>")` for one CLI's recordings.
pub fn transcript_files(dir: &Path) -> io::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let path = entry?.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "jsonl") {
                files.push(path);
            }
        }
    }
    files.sort();
    Ok(files)
}

/// Every `recv` message of the transcripts under `dir` (listed by [`transcript_files`]), one
/// line each without its newline, byte for byte as recorded.
pub fn recv_lines(dir: &Path) -> io::Result<Vec<Vec<u8>>> {
    let files = transcript_files(dir)?;
    let mut lines = Vec::new();
    for file in files {
        for line in crate::TranscriptReader::open(&file).map_err(|e| io_error(&file, e))? {
            let line = line.map_err(|e| io_error(&file, e))?;
            if line.is_recv() {
                lines.push(line.raw.into_bytes());
            }
        }
    }
    Ok(lines)
}

/// A transcript that cannot be read, as an IO error naming the file.
fn io_error(file: &Path, error: crate::TranscriptError) -> io::Error {
    match error {
        crate::TranscriptError::Io { source, .. } => source,
        other => io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{}: {other}", file.display()),
        ),
    }
}

/// A stream of newline-terminated lines.
#[derive(Debug, Clone)]
pub struct CorpusStream {
    /// The bytes, every line ending in `\n`.
    pub bytes: Vec<u8>,
    /// Where each line starts and how long it is (without its newline).
    pub lines: Vec<(usize, usize)>,
}

impl CorpusStream {
    /// `lines` repeated, whole, until the stream holds at least `min_bytes` (once at least).
    pub fn repeat(lines: &[Vec<u8>], min_bytes: usize) -> CorpusStream {
        let mut bytes =
            Vec::with_capacity(min_bytes + lines.iter().map(|l| l.len() + 1).sum::<usize>());
        let mut spans = Vec::new();
        loop {
            for line in lines {
                spans.push((bytes.len(), line.len()));
                bytes.extend_from_slice(line);
                bytes.push(b'\n');
            }
            if bytes.len() >= min_bytes || lines.is_empty() {
                break;
            }
        }
        CorpusStream {
            bytes,
            lines: spans,
        }
    }

    /// The corpus of the byre repository's transcripts, repeated past `min_bytes`; see
    /// [`transcripts_dir`] for where they are found.
    pub fn from_transcripts(min_bytes: usize) -> io::Result<CorpusStream> {
        Ok(CorpusStream::repeat(
            &recv_lines(&transcripts_dir()?)?,
            min_bytes,
        ))
    }

    /// One long turn in real CLI shapes, for whole-process benchmarks where the reader ends at
    /// the turn's `result`: the corpus lines of a turn in progress (every kind but `result`,
    /// the control channel's lines and `session_state_changed`, so that a reader waits for
    /// no idle report), repeated past `min_bytes`, then the corpus's last `result`.
    pub fn one_turn(min_bytes: usize) -> io::Result<CorpusStream> {
        let lines = recv_lines(&transcripts_dir()?)?;
        let mut turn = Vec::new();
        let mut result = None;
        for line in lines {
            let value: serde_json::Value = serde_json::from_slice(&line).unwrap_or_default();
            let text = |key: &str| value[key].as_str().unwrap_or_default();
            match (text("type"), text("subtype")) {
                ("result", _) => result = Some(line),
                ("system", "session_state_changed") => {}
                (kind, _) if kind.starts_with("control_") => {}
                _ => turn.push(line),
            }
        }
        let Some(result) = result else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "the transcripts hold no result line",
            ));
        };
        let mut stream = CorpusStream::repeat(&turn, min_bytes);
        stream.lines.push((stream.bytes.len(), result.len()));
        stream.bytes.extend_from_slice(&result);
        stream.bytes.push(b'\n');
        Ok(stream)
    }

    /// The number of lines.
    pub fn line_count(&self) -> usize {
        self.lines.len()
    }

    /// Each line, without its newline.
    pub fn iter(&self) -> impl Iterator<Item = &[u8]> + '_ {
        self.lines
            .iter()
            .map(|&(at, len)| &self.bytes[at..at + len])
    }

    /// Writes the stream to `path`.
    pub fn write_to(&self, path: &Path) -> io::Result<()> {
        std::fs::write(path, &self.bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lines_repeat_whole_past_the_size() {
        let lines = vec![b"{\"type\":\"a\"}".to_vec(), b"{\"type\":\"bb\"}".to_vec()];
        let stream = CorpusStream::repeat(&lines, 40);
        // 13 + 14 bytes a round: two rounds are 54 bytes, the first past 40.
        assert_eq!(stream.bytes.len(), 54);
        assert_eq!(stream.line_count(), 4);
        let seen: Vec<&[u8]> = stream.iter().collect();
        assert_eq!(
            seen,
            [&lines[0][..], &lines[1][..], &lines[0][..], &lines[1][..]]
        );
        assert!(stream.bytes.ends_with(b"}\n"));
        assert_eq!(
            CorpusStream::repeat(&lines, 0).line_count(),
            2,
            "once at least"
        );
    }

    #[test]
    fn one_turn_ends_at_its_only_result() {
        let stream = CorpusStream::one_turn(1 << 20).unwrap();
        assert!(stream.bytes.len() >= 1 << 20);
        let types: Vec<String> = stream
            .iter()
            .map(|line| {
                let value: serde_json::Value = serde_json::from_slice(line).unwrap();
                value["type"].as_str().unwrap().to_owned()
            })
            .collect();
        assert_eq!(types.iter().filter(|t| *t == "result").count(), 1);
        assert_eq!(types.last().map(String::as_str), Some("result"));
        assert!(!types.iter().any(|t| t.starts_with("control_")));
    }

    #[test]
    fn transcript_files_lists_every_jsonl_file_below_the_folder_sorted() {
        let dir = tempfile::tempdir().unwrap();
        let nested = dir.path().join("cli-2").join("deeper");
        std::fs::create_dir_all(&nested).unwrap();
        for file in [
            "b.jsonl",
            "a.jsonl",
            "notes.md",
            "cli-2/c.jsonl",
            "cli-2/deeper/d.jsonl",
        ] {
            std::fs::write(dir.path().join(file), "").unwrap();
        }
        let found: Vec<PathBuf> = transcript_files(dir.path())
            .unwrap()
            .into_iter()
            .map(|p| p.strip_prefix(dir.path()).unwrap().to_path_buf())
            .collect();
        let expected = [
            "a.jsonl",
            "b.jsonl",
            "cli-2/c.jsonl",
            "cli-2/deeper/d.jsonl",
        ];
        assert_eq!(found, expected.map(PathBuf::from));
        assert!(transcript_files(&dir.path().join("missing")).is_err());
    }

    #[test]
    fn the_recorded_transcripts_give_their_recv_lines() {
        let lines = recv_lines(&transcripts_dir().unwrap()).unwrap();
        assert!(lines.len() > 100, "{} lines", lines.len());
        for line in &lines {
            let message: serde_json::Value = serde_json::from_slice(line).unwrap();
            assert!(message["type"].is_string(), "{message}");
        }
    }
}
