//! Control scenarios.
