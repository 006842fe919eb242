//! Integration tests of byre-transport.

mod codec;
mod launch;
mod process;
mod spawn;
mod transcript;
