//! Tests of the fake Anthropic Messages API: wire format, rule matching, replies, request log
//! and JSON scripts. They talk to the server over loopback with a minimal HTTP/1.1 client.
//! With them, the rest of what tests get from byre-testkit besides the fake model: CLI
//! provisioning, the offline environment, and transcripts read back.

mod client;
mod env;
mod log;
mod matching;
mod replies;
mod script_file;
mod sse_wire;
mod transcript;

use std::path::PathBuf;

/// The workspace's `testdata` directory.
fn testdata(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata")
        .join(rel)
}
