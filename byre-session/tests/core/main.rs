//! Tests of byre-session's sans-IO core (assembly, correlation, the session, tasks and turns),
//! fed from recorded transcripts and generated inputs; no process is started.

mod answers;
mod assembly;
mod correlation;
mod interleavings;
mod session;
mod stall;
mod support;
mod tasks;
mod turns;
