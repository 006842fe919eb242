//! The `byre` binary: run a prompt, chat, or replay a transcript (see `byre --help`).

use std::process::ExitCode;

// Messages are decoded on the runtime's worker threads and dropped where they are shown, on
// another; mimalloc frees across threads without the system allocator's arena locks (see
// BENCHMARKS.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("byre: cannot start the async runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    // The exporter works on a thread of its own, outside the runtime.
    let traces = byre_cli::traces::Traces::from_env();
    let code = runtime.block_on(async {
        let run = byre_cli::main_with(std::env::args_os().skip(1), byre_cli::Setup::default());
        match &traces {
            Some(traces) => tracing::Instrument::instrument(run, traces.root.clone()).await,
            None => run.await,
        }
    });
    // The runtime's tasks end with it (a session's driver, just done), and their spans with
    // them: only then is every span closed and ready to export.
    drop(runtime);
    if let Some(traces) = traces {
        traces.finish();
    }
    code
}
