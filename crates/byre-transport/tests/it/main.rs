//! Integration tests of byre-transport.

mod codec;
mod launch;
mod process;
mod transcript;
