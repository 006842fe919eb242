//! `cargo xtask record [SCENARIO...]`: runs scenarios against the real CLI and writes their
//! transcripts to `testdata/transcripts/cli-<version>/<scenario>.jsonl`.

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
                    for line in &recording.lines {
                        let text = serde_json::to_string(line).map_err(|e| e.to_string())?;
                        writeln!(file, "{text}").map_err(|e| format!("{}: {e}", path.display()))?;
                        count += 1;
                    }
                }
                println!("recorded {} ({count} lines)", path.display());
            }
            Err(failure) => {
                ok = false;
                eprintln!("scenario {} failed: {failure}", scenario.name);
            }
        }
    }
    Ok(ok)
}
