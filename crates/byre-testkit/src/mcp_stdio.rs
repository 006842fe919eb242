//! `byre-mcp-stdio`, a small MCP server on stdio for tests (see its source for its tools): its
//! path, built on demand.

use std::io;
use std::path::PathBuf;
use std::process::Command;
use std::sync::Mutex;

/// The name of the binary.
pub const MCP_STDIO_BIN: &str = "byre-mcp-stdio";

static BUILT: Mutex<Option<PathBuf>> = Mutex::new(None);

/// The path of `byre-mcp-stdio`: `BYRE_MCP_STDIO_BIN` when set, otherwise built now with
/// cargo (`cargo build -p byre-testkit --bin byre-mcp-stdio`, a no-op when it is fresh) and
/// remembered for this process.
///
/// Declared as `{"type":"stdio","command":<path>,"args":[]}` in `--mcp-config`, the CLI starts
/// it as an MCP server with two tools: `echo {text}` returns the text; `ask {question}` asks
/// the client to fill in a form (`elicitation/create`, schema `{answer: string}`) and returns
/// `elicitation: <action> <content>`.
pub fn mcp_stdio_bin() -> io::Result<PathBuf> {
    if let Some(path) = std::env::var_os("BYRE_MCP_STDIO_BIN").filter(|p| !p.is_empty()) {
        return Ok(PathBuf::from(path));
    }
    let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(path) = built.as_ref().filter(|p| p.exists()) {
        return Ok(path.clone());
    }
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = Command::new(cargo)
        .args([
            "build",
            "--quiet",
            "-p",
            "byre-testkit",
            "--bin",
            MCP_STDIO_BIN,
            "--message-format",
            "json",
        ])
        .output()?;
    if !output.status.success() {
        return Err(io::Error::other(format!(
            "building {MCP_STDIO_BIN} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        )));
    }
    let path = String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|m| m["reason"] == "compiler-artifact" && m["target"]["name"] == MCP_STDIO_BIN)
        .find_map(|m| m["executable"].as_str().map(PathBuf::from))
        .ok_or_else(|| {
            io::Error::other(format!("cargo did not name the {MCP_STDIO_BIN} binary"))
        })?;
    *built = Some(path.clone());
    Ok(path)
}
