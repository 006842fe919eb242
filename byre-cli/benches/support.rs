//! What the byre-cli benches share: their settings read from the environment.

/// The count in the variable `name`, or `default` when it is unset or not a number.
pub(crate) fn env_count(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}
