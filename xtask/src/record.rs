//! `cargo xtask record [SCENARIO...]`: runs scenarios against the real CLI and writes their
//! transcripts to `testdata/transcripts/cli-<version>/<scenario>.jsonl`, then regenerates the
//! corpus snapshots of byre-proto that render them.

use std::io::Write;

pub(crate) fn run(names: &[String]) -> Result<bool, String> {
    let ctx = byre_e2e::Ctx::new().map_err(|e| e.to_string())?;
    let version = byre_testkit::cli_version(&ctx.bin).map_err(|e| e.to_string())?;
    let version = version
        .split_whitespace()
        .next()
        .unwrap_or("unknown")
        .to_owned();
    let dir = crate::project_root()
        .join("testdata/transcripts")
        .join(format!("cli-{version}"));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let all = byre_e2e::scenarios::all();
    for name in names {
        if !all.iter().any(|s| s.name == name) {
            return Err(format!("no scenario {name:?}"));
        }
    }
    let runtime = tokio::runtime::Runtime::new().map_err(|e| e.to_string())?;
    let mut ok = true;
    for scenario in all
        .iter()
        .filter(|s| names.is_empty() || names.iter().any(|n| n == s.name))
    {
        let outcome = runtime.block_on(byre_e2e::run(scenario, ctx.clone()));
        match outcome {
            Ok(recordings) => {
                let path = dir.join(format!("{}.jsonl", scenario.name));
                let mut file =
                    std::fs::File::create(&path).map_err(|e| format!("{}: {e}", path.display()))?;
                let mut count = 0;
                for recording in &recordings {
                    // Each message's exact bytes, in the CLI's own key order.
                    file.write_all(recording.to_jsonl().as_bytes())
                        .map_err(|e| format!("{}: {e}", path.display()))?;
                    count += recording.lines.len();
                }
                println!("recorded {} ({count} lines)", path.display());
            }
            Err(failure) => {
                ok = false;
                eprintln!("scenario {} failed: {failure}", scenario.name);
            }
        }
    }
    ok &= refresh_snapshots()?;
    Ok(ok)
}

/// Regenerates the corpus snapshots of byre-proto, so that they follow the new recordings;
/// review them with `git diff` before committing.
fn refresh_snapshots() -> Result<bool, String> {
    println!("refreshing the corpus snapshots (review them with git diff)");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = std::process::Command::new(cargo)
        .args(["test", "-p", "byre-proto", "--test", "it", "corpus"])
        .env("INSTA_UPDATE", "always")
        .env_remove("CI")
        .current_dir(crate::project_root())
        .status()
        .map_err(|e| format!("could not run cargo: {e}"))?;
    Ok(status.success())
}
