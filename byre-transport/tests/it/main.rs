//! Integration tests of byre-transport.

mod codec;
mod launch;
mod lines;
mod process;
mod sessions;
mod spawn;
mod store;
mod store_safety;
mod transcript;
