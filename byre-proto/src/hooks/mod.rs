//! Hooks: the events, their registrations, the input the CLI sends in `hook_callback` and the
//! output the host answers with.

// The event names, the union of inputs and the registrations are in `events`, each event's
// input in `inputs`, and what a callback answers in `outputs`; all are re-exported here.

mod events;
mod inputs;
mod outputs;
#[cfg(test)]
mod tests;

pub use self::events::*;
pub use self::inputs::*;
pub use self::outputs::*;
