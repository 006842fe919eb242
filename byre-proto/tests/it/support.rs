//! The transcript corpus for the integration tests: the walk and the line reader are byre-proto's
//! one copy (`src/wire/recorded.rs`, shared with the unit tests and the decode bench); this adds
//! each line's direction and the corpus's messages read once.

use std::sync::LazyLock;

use byre_proto::Direction;

#[path = "../../src/wire/recorded.rs"]
mod recorded;

pub(crate) use recorded::{corpus_files, corpus_root, read_transcript, Body, Entry};

/// The direction of a `send` or `recv` line.
pub(crate) fn direction(entry: &Entry) -> Option<Direction> {
    match entry.dir.as_str() {
        "send" => Some(Direction::Send),
        "recv" => Some(Direction::Recv),
        _ => None,
    }
}

/// Every message of the corpus with its direction, read once.
pub(crate) fn corpus_messages() -> &'static [(Direction, Vec<u8>)] {
    static MESSAGES: LazyLock<Vec<(Direction, Vec<u8>)>> = LazyLock::new(|| {
        corpus_files()
            .iter()
            .flat_map(|path| read_transcript(path))
            .filter_map(|entry| match (direction(&entry), entry.body) {
                (Some(dir), Body::Msg(bytes)) => Some((dir, bytes)),
                _ => None,
            })
            .collect()
    });
    &MESSAGES
}
