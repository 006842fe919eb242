//! Helpers shared by the core's tests: the recorded transcripts and their messages.

use std::path::{Path, PathBuf};

use byre_proto::CliMessage;
use byre_testkit::{read_transcript, TranscriptLine};

/// The folder of the transcripts recorded with CLI 2.1.328, which the tests of particular
/// recordings read.
pub(crate) fn corpus_dir() -> PathBuf {
    corpus_root().join("cli-2.1.328")
}

/// The corpus root, `testdata/transcripts` of the repository.
pub(crate) fn corpus_root() -> PathBuf {
    byre_testkit::corpus::transcripts_dir().expect("the recorded transcripts")
}

/// Every transcript of every CLI version (`cli-<version>/*.jsonl`), sorted.
pub(crate) fn transcripts() -> Vec<PathBuf> {
    let files = files_under(&corpus_root());
    assert!(files.len() >= 50, "found {} transcripts", files.len());
    files
}

/// Every transcript under `dir`, sorted.
pub(crate) fn files_under(dir: &Path) -> Vec<PathBuf> {
    byre_testkit::corpus::transcript_files(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
}

/// The messages the CLI wrote in a transcript, each decoded from its recorded bytes.
pub(crate) fn recv_messages(path: &Path) -> Vec<CliMessage> {
    read_transcript(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .iter()
        .filter_map(TranscriptLine::decode_recv)
        .map(|message| message.expect("a recorded line decodes"))
        .collect()
}
