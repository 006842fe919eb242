//! The `byre` binary: run a prompt, chat, or replay a transcript (see `byre --help`).

use std::process::ExitCode;

#[tokio::main]
async fn main() -> ExitCode {
    byre_cli::main_with(std::env::args_os().skip(1), byre_cli::Setup::default()).await
}
