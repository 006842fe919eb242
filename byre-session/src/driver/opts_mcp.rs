//! Options for the MCP servers the CLI starts itself (in-process servers are
//! `Options::serve_mcp`).

use super::options::Options;
use serde_json::Value;

impl Options {
    /// An MCP server the CLI starts or connects to itself, by name, in the shape of
    /// `.mcp.json` (`{"type": "stdio", "command": ..., "args": [...], "env": {...}}`, or
    /// `http`/`sse` with `url` and `headers`). Sent in `initialize`, so its `env` and
    /// `headers` stay off the command line (see [`Options::delivery`]) and out of transcripts.
    pub fn mcp_config(mut self, name: impl Into<String>, config: Value) -> Self {
        self.launch.mcp_servers.insert(name.into(), config);
        self
    }

    /// Uses only the MCP servers given here, none from the settings (`--strict-mcp-config`).
    pub fn strict_mcp_config(mut self) -> Self {
        self.launch.strict_mcp_config = true;
        self
    }
}
