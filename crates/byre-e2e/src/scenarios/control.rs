//! Control scenarios: host → CLI requests, interrupts, permissions, MCP servers, subagents,
//! resume and fork.

use crate::Scenario;

pub(crate) fn all() -> Vec<Scenario> {
    Vec::new()
}
