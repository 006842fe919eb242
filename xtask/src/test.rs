//! `cargo xtask test`: everything CI checks, in order, stopping at the first failure.

use std::process::Command;

pub(crate) fn run() -> Result<bool, String> {
    let root = crate::project_root();
    let steps: [(&str, &[&str]); 5] = [
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
        // The e2e suite runs the real CLI: provision it first, so a failure says why.
        ("cli", &["xtask", "cli"]),
        ("tests", &["test", "--workspace"]),
        (
            "replay",
            &["xtask", "replay", "--strict", "testdata/transcripts"],
        ),
    ];
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    for (name, args) in steps {
        eprintln!("xtask test: {name}: cargo {}", args.join(" "));
        let status = Command::new(&cargo)
            .args(args)
            .current_dir(&root)
            .status()
            .map_err(|e| format!("could not run cargo: {e}"))?;
        if !status.success() {
            eprintln!("xtask test: {name} failed ({status})");
            return Ok(false);
        }
    }
    eprintln!("xtask test: all steps passed");
    Ok(true)
}
