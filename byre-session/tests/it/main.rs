//! Tests of byre-session's driver against real processes: the pinned CLI, run offline against
//! a fake Messages API, and stand-in CLIs. The sans-IO core's tests are in `tests/core/`.

mod delivery;
mod dialogs;
mod driver;
mod fds;
mod history;
mod hooks;
mod hostile;
mod limits;
mod mcp;
mod more_options;
mod pool;
mod reattach;
mod run_end;
mod spawn;
mod store;
mod support;
mod surface;
mod unwritten;
