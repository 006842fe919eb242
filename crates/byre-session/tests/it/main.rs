//! Integration tests of byre-session's sans-IO pieces, fed from recorded transcripts.

mod assembly;
mod correlation;
mod session;
mod tasks;
mod turns;
