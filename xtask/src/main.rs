//! byre's project tasks, run as `cargo xtask <task>`: `demo` (`byre run` offline against a
//! scripted fake model), `test` (everything CI runs), `replay` (decode and re-encode recorded
//! transcripts), `cli` (provision the pinned CLI), `fake-model` (serve a scripted fake
//! Messages API), `record` (re-record the e2e scenarios) and `drift` (compare another CLI
//! version with the pinned one).

mod cli;
mod demo;
mod drift;
mod flags;
mod record;
mod replay;
mod test;
mod tidy;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match flags::Task::parse(&args) {
        Ok(flags::Task::Replay(flags)) => replay::run(&flags),
        Ok(flags::Task::Demo) => demo::run(),
        Ok(flags::Task::Test) => test::run(),
        Ok(flags::Task::Cli) => cli::run(),
        Ok(flags::Task::FakeModel(flags)) => fake_model(&flags),
        Ok(flags::Task::Record(names)) => record::run(&names),
        Ok(flags::Task::Drift(version)) => drift::run(version.as_deref()),
        Ok(flags::Task::Help) => {
            println!("{}", flags::USAGE);
            Ok(true)
        }
        Err(message) => {
            eprintln!("xtask: {message}\n\n{}", flags::USAGE);
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(error) => {
            eprintln!("xtask: {error}");
            ExitCode::FAILURE
        }
    }
}

/// `cargo xtask fake-model`: serves a script on loopback until Ctrl-C.
fn fake_model(flags: &flags::FakeModel) -> Result<bool, String> {
    let script = byre_testkit::Script::from_file(&flags.script).map_err(|e| e.to_string())?;
    let runtime = tokio::runtime::Runtime::new().map_err(|e| e.to_string())?;
    runtime
        .block_on(byre_testkit::serve_forever(script, flags.port))
        .map_err(|e| e.to_string())?;
    Ok(true)
}

/// The workspace root (the parent of this crate's folder).
fn project_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives in the workspace")
        .to_path_buf()
}
