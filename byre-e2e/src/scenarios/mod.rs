//! Every scenario, by family.

use crate::Scenario;

mod agents;
mod api;
mod control;
mod conversation;
mod input;
mod mcp;
mod resume;

/// Every scenario, in a stable order.
pub fn all() -> Vec<Scenario> {
    let mut all = conversation::all();
    all.extend(input::all());
    all.extend(agents::all());
    all.extend(control::all());
    all.extend(mcp::all());
    all.extend(resume::all());
    all.extend(api::all());
    all
}

/// The scenario called `name`.
pub fn find(name: &str) -> Option<Scenario> {
    all().into_iter().find(|s| s.name == name)
}
