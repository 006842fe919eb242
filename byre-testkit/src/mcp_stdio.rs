//! The test binaries of this crate (and any workspace binary, [`workspace_bin`]), built on
//! demand: `byre-mcp-stdio`, a small MCP server on
//! stdio (see its source for its tools), and `byre-hostile`, a CLI stand-in that misbehaves.

use std::io;
use std::path::PathBuf;
use std::process::Command;
use std::sync::Mutex;

/// The name of the binary.
pub const MCP_STDIO_BIN: &str = "byre-mcp-stdio";

/// The name of the hostile CLI stand-in (its flags are in its source).
pub const HOSTILE_BIN: &str = "byre-hostile";

/// The binaries built so far by this process: name, profile, path.
static BUILT: Mutex<Vec<(&'static str, String, PathBuf)>> = Mutex::new(Vec::new());

/// The path of `byre-hostile`, a stand-in for the CLI that misbehaves as its `--mode` says
/// (crashes mid-turn, closes its stdout, stops reading its stdin, floods, never answers
/// `initialize`...): `BYRE_HOSTILE_BIN` when set, otherwise built now with cargo.
pub fn hostile_bin() -> io::Result<PathBuf> {
    testkit_bin(HOSTILE_BIN, "BYRE_HOSTILE_BIN")
}

/// The path of `byre-mcp-stdio`: `BYRE_MCP_STDIO_BIN` when set, otherwise built now with
/// cargo (`cargo build -p byre-testkit --bin byre-mcp-stdio`, a no-op when it is fresh) and
/// remembered for this process.
///
/// Declared as `{"type":"stdio","command":<path>,"args":[]}` in `--mcp-config`, the CLI starts
/// it as an MCP server with two tools: `echo {text}` returns the text; `ask {question}` asks
/// the client to fill in a form (`elicitation/create`, schema `{answer: string}`) and returns
/// `elicitation: <action> <content>`.
pub fn mcp_stdio_bin() -> io::Result<PathBuf> {
    testkit_bin(MCP_STDIO_BIN, "BYRE_MCP_STDIO_BIN")
}

/// A binary of this crate: `var` when set, otherwise built with cargo (once per process).
fn testkit_bin(name: &'static str, var: &str) -> io::Result<PathBuf> {
    if let Some(path) = std::env::var_os(var).filter(|p| !p.is_empty()) {
        return Ok(PathBuf::from(path));
    }
    workspace_bin("byre-testkit", name, "dev")
}

/// Binary `name` of workspace package `package`, built with cargo in `profile` (`dev`,
/// `release`, `bench`; a no-op when it is fresh) the first time this process asks for it.
/// Benchmarks use it for byre-transport's `byre-standin`.
pub fn workspace_bin(package: &str, name: &'static str, profile: &str) -> io::Result<PathBuf> {
    let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    let found = built
        .iter()
        .find(|(n, built_as, path)| *n == name && built_as == profile && path.exists());
    if let Some((_, _, path)) = found {
        return Ok(path.clone());
    }
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = Command::new(cargo)
        .args(["build", "--quiet", "--profile", profile, "-p", package])
        .args(["--bin", name, "--message-format", "json"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()?;
    if !output.status.success() {
        return Err(io::Error::other(format!(
            "building {name} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        )));
    }
    let path = String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|m| m["reason"] == "compiler-artifact" && m["target"]["name"] == name)
        .find_map(|m| m["executable"].as_str().map(PathBuf::from))
        .ok_or_else(|| io::Error::other(format!("cargo did not name the {name} binary")))?;
    built.push((name, profile.to_owned(), path.clone()));
    Ok(path)
}
