//! The session layer of byre (not built yet): sans-IO state machines for the handshake, the
//! control channel in both directions, hooks, permissions, turns and tasks, with a thin tokio
//! driver on top that offers a cloneable session handle and an event stream.
