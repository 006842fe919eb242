//! `cargo xtask test`: everything CI checks, in order, stopping at the first failure: format,
//! lints, the API docs' links, the sans-IO core built without tokio, the published crates
//! packaged, the whole suite on the pinned CLI (keeping every session's transcript), the strict
//! replay of the recordings and of those transcripts, then the suite's tests (not the doc
//! tests) once more on each older CLI of the matrix, whose drift (what byre does not model
//! there) is summed up rather than failed. Each step's time is printed as it ends.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use byre_testkit::{claude_bin_version, MATRIX_CLI_VERSIONS, PINNED_CLI_VERSION};

pub(crate) fn run() -> Result<bool, String> {
    let root = crate::project_root();
    let lines = root.join("target/cli-lines");
    let lines_arg = lines.to_string_lossy().into_owned();
    let cli_arg = format!("--cli={PINNED_CLI_VERSION}");
    let steps: [(&str, &[&str]); 9] = [
        ("format", &["fmt", "--all", "--check"]),
        (
            "lints",
            &[
                "clippy",
                "--workspace",
                "--all-targets",
                "--",
                "-D",
                "warnings",
            ],
        ),
        // Links in the API docs resolve (RUSTDOCFLAGS below makes warnings errors).
        ("docs", &["doc", "--workspace", "--no-deps"]),
        // The core stays free of tokio: byre-session without its default features.
        (
            "core",
            &["build", "-p", "byre-session", "--no-default-features"],
        ),
        // Every published crate packages (its manifest, its files, its local dependencies).
        (
            "package",
            &[
                "package",
                "--workspace",
                "--exclude",
                "xtask",
                "--exclude",
                "byre-e2e",
                "--no-verify",
                "--quiet",
            ],
        ),
        // The e2e suite runs the real CLI: provision it first, so a failure says why.
        ("cli", &["xtask", "cli"]),
        ("tests", &["test", "--workspace"]),
        (
            "replay",
            &["xtask", "replay", "--strict", "testdata/transcripts"],
        ),
        // Every line the real CLI wrote in the tests above (their sessions' transcripts), held
        // to byre's model as strictly as the recordings: lines no scenario recorded.
        (
            "lines",
            &["xtask", "replay", "--strict", &cli_arg, &lines_arg],
        ),
    ];
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let all = std::time::Instant::now();
    for (name, args) in steps {
        let started = std::time::Instant::now();
        eprintln!("xtask test: {name}: cargo {}", args.join(" "));
        let mut command = Command::new(&cargo);
        if name == "docs" {
            command.env("RUSTDOCFLAGS", "-D warnings");
        }
        if name == "tests" {
            fresh_dir(&lines)?;
            command.env(byre_testkit::LINES_VAR, &lines);
            test_threads(&mut command);
        }
        let status = command
            .args(args)
            .env_remove("BYRE_CLAUDE_BIN")
            .current_dir(&root)
            .status()
            .map_err(|e| format!("could not run cargo: {e}"))?;
        let took = started.elapsed().as_secs_f64();
        if !status.success() {
            eprintln!("xtask test: {name} failed ({status}) after {took:.0} s");
            return Ok(false);
        }
        eprintln!("xtask test: {name}: passed in {took:.0} s");
    }
    for version in MATRIX_CLI_VERSIONS {
        let started = std::time::Instant::now();
        let passed = matrix(&cargo, &root, version)?;
        let took = started.elapsed().as_secs_f64();
        eprintln!("xtask test: matrix {version}: ended in {took:.0} s");
        if !passed {
            return Ok(false);
        }
    }
    eprintln!(
        "xtask test: all steps passed in {:.0} s (pinned CLI {PINNED_CLI_VERSION}; matrix {})",
        all.elapsed().as_secs_f64(),
        MATRIX_CLI_VERSIONS.join(", ")
    );
    Ok(true)
}

/// Tests run on [`TEST_THREADS`] threads unless `RUST_TEST_THREADS` says otherwise.
fn test_threads(command: &mut Command) {
    if std::env::var_os("RUST_TEST_THREADS").is_none() {
        command.env("RUST_TEST_THREADS", TEST_THREADS.to_string());
    }
}

/// Threads per test binary: the real-CLI tests spend most of their time waiting on the CLI
/// (one test binary keeps about 1.2 of 2 cores busy with 2 threads), so twice the cores of
/// the CI machine finish them in about two thirds of the time.
const TEST_THREADS: usize = 4;

/// Makes `dir` an empty folder.
fn fresh_dir(dir: &Path) -> Result<(), String> {
    match std::fs::remove_dir_all(dir) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            return Err(format!("{}: {e}", dir.display()))
        }
        _ => {}
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))
}

/// The real-CLI suites on CLI `version`, with what it writes that byre does not model logged
/// to `target/drift/matrix-<version>.jsonl` and summed up here.
fn matrix(cargo: &str, root: &Path, version: &str) -> Result<bool, String> {
    let bin = claude_bin_version(version).map_err(|e| e.to_string())?;
    let log = root
        .join("target/drift")
        .join(format!("matrix-{version}.jsonl"));
    std::fs::create_dir_all(log.parent().expect("a folder"))
        .map_err(|e| format!("{}: {e}", log.display()))?;
    match std::fs::remove_file(&log) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            return Err(format!("{}: {e}", log.display()))
        }
        _ => {}
    }
    // The suite's tests without the doc tests (which never start the CLI): the real-CLI tests
    // are in byre-e2e, byre-session, byre-cli and byre-testkit, and the rest is quick. The
    // packages stay the workspace's, so nothing is built again with other features.
    let args = ["test", "--workspace", "--tests"];
    eprintln!(
        "xtask test: matrix {version}: BYRE_CLAUDE_BIN={} cargo {}",
        bin.display(),
        args.join(" ")
    );
    let mut command = Command::new(cargo);
    test_threads(&mut command);
    let status = command
        .args(args)
        .env("BYRE_CLAUDE_BIN", &bin)
        .env("BYRE_DRIFT_LOG", &log)
        .current_dir(root)
        .status()
        .map_err(|e| format!("could not run cargo: {e}"))?;
    eprint!("{}", drift_summary(version, &log));
    if !status.success() {
        eprintln!("xtask test: matrix {version} failed ({status})");
        return Ok(false);
    }
    Ok(true)
}

/// The distinct findings of a drift log, each with how many times the tests met it.
fn drift_summary(version: &str, log: &Path) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let mut found: BTreeMap<String, usize> = BTreeMap::new();
    for line in text.lines() {
        let Ok(entry) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let key = format!(
            "{} {}",
            entry["kind"].as_str().unwrap_or("?"),
            entry["path"].as_str().unwrap_or("?")
        );
        *found.entry(key).or_default() += 1;
    }
    if found.is_empty() {
        return format!("xtask test: matrix {version}: everything the CLI wrote is modelled\n");
    }
    let mut out = format!(
        "xtask test: matrix {version}: not modelled on this CLI (reported, not failed; {}):\n",
        log.display()
    );
    for (finding, count) in found {
        out.push_str(&format!("  {finding} ({count} times)\n"));
    }
    out
}
