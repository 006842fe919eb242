//! Integration tests of byre-session's sans-IO pieces, fed from recorded transcripts.

mod assembly;
mod correlation;
mod driver;
mod mcp;
mod session;
mod support;
mod tasks;
mod turns;
