//! `cargo xtask cli`: installs the pinned Claude Code CLI when it is missing and prints the
//! path of the binary.

pub(crate) fn run() -> Result<bool, String> {
    let bin = byre_testkit::claude_bin().map_err(|e| e.to_string())?;
    let version = byre_testkit::cli_version(&bin).map_err(|e| e.to_string())?;
    if version != byre_testkit::PINNED_CLI_VERSION {
        // Only possible with BYRE_CLAUDE_BIN, which is taken as given.
        eprintln!(
            "xtask cli: note: {} is version {version}, not the pinned {}",
            bin.display(),
            byre_testkit::PINNED_CLI_VERSION
        );
    }
    println!("{}", bin.display());
    Ok(true)
}
