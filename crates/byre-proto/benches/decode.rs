//! Decode benchmark.
fn main() {}
