//! byre-cli's tests: the `byre` binary against the real Claude Code CLI, offline, with
//! byre-testkit's fake model.

mod chat;
mod environment;
mod errors;
mod history;
mod hostile;
mod replay;
mod run;
mod signals;
mod store;
mod support;
mod terminal;
mod unwritten;
