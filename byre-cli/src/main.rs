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
    let root = traces.as_ref().map(|traces| traces.root.clone());
    let code = runtime.block_on(async {
        let args: Vec<_> = std::env::args_os().skip(1).collect();
        let run = byre_cli::main_with(args, byre_cli::Setup::default());
        let task = match root {
            Some(root) => tokio::spawn(tracing::Instrument::instrument(run, root)),
            None => tokio::spawn(run),
        };
        task.await.unwrap_or(ExitCode::FAILURE)
    });
    // The runtime's tasks end with it (a session's driver, just done), and their spans with
    // them: only then is every span closed and ready to export.
    drop(runtime);
    if let Some(traces) = traces {
        traces.finish();
    }
    code
}
