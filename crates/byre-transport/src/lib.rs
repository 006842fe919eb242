//! The IO layer of byre (not built yet): an NDJSON codec over tokio-util framing with a
//! bounded line length that recovers from over-long and malformed lines, the launcher that
//! builds the `claude` argv and environment, a bounded stderr buffer, shutdown that leaves no
//! orphan processes, and the transcript writer.
