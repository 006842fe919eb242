//! The `byre` binary: run a prompt, chat, or replay a transcript (see `byre --help`).

use std::process::ExitCode;

// Messages are decoded on the runtime's worker threads and dropped where they are shown, on
// another; mimalloc frees across threads without the system allocator's arena locks (see
// BENCHMARKS.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> ExitCode {
    let traces = byre_cli::traces::Traces::from_env();
    let run = byre_cli::main_with(std::env::args_os().skip(1), byre_cli::Setup::default());
    let code = match &traces {
        Some(traces) => tracing::Instrument::instrument(run, traces.root.clone()).await,
        None => run.await,
    };
    if let Some(traces) = traces {
        traces.finish();
    }
    code
}
