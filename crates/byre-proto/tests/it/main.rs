//! Integration tests of byre-proto.
