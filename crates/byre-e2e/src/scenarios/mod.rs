//! Every scenario, by family.

use crate::Scenario;

mod control;
mod conversation;

/// Every scenario, in a stable order.
pub fn all() -> Vec<Scenario> {
    let mut all = conversation::all();
    all.extend(control::all());
    all
}

/// The scenario called `name`.
pub fn find(name: &str) -> Option<Scenario> {
    all().into_iter().find(|s| s.name == name)
}
