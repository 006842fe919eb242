//! Integration tests of byre-session's sans-IO pieces, fed from recorded transcripts.

mod assembly;
mod correlation;
mod delivery;
mod dialogs;
mod driver;
mod fds;
mod history;
mod hooks;
mod hostile;
mod interleavings;
mod mcp;
mod more_options;
mod pool;
mod reattach;
mod run_end;
mod session;
mod spawn;
mod store;
mod support;
mod surface;
mod tasks;
mod turns;
mod unwritten;
