//! Integration tests of byre-proto: the recorded corpus, property tests and hand-written edges.

mod corpus;
mod edges;
mod misfits;
mod roundtrip;
mod support;
mod text;
