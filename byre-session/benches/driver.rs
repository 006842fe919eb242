//! Throughput of the session driver: a stand-in CLI writes the corpus stream (more than 50 MB)
//! on its stdout, and a consumer counts the messages the driver delivers. Every line must
//! arrive, in order, exactly once; the count is checked on every iteration. This binary uses
//! the system allocator; `driver_mimalloc` runs the same with mimalloc.
//!
//! With `BYRE_BENCH_PYTHON` set to a Python interpreter that has the official Python SDK
//! (`claude-agent-sdk`) installed, the same stand-in and the same stream are then run through
//! that SDK (`python_sdk.py`) for comparison.

// criterion_group! generates an undocumented public function.
#![allow(missing_docs)]

mod support;

fn main() {
    support::stream_bench("stream through one session");
}
