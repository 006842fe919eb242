//! The driver's throughput bench (`driver`) with mimalloc as the host's global allocator: the
//! decoding tasks allocate every message and the consumer frees it on another thread, which
//! the system allocator serves with locks and mimalloc without.

// criterion_group! generates an undocumented public function.
#![allow(missing_docs)]

mod support;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    support::stream_bench("stream through one session, mimalloc");
}
