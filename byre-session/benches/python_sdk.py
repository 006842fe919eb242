"""The official Python SDK (claude-agent-sdk) on the driver benchmark's stream, for comparison.

The SDK starts byre's stand-in CLI (its `cli_path` option) with the stand-in's flags passed
through `extra_args`: the stand-in answers `initialize`, writes the corpus stream on stdout and
exits when stdin closes. The script times `query()` from the call to its last message and counts
what it yields against the stream's lines, by `type`. `cargo bench -p byre-session --bench
driver` runs it when `BYRE_BENCH_PYTHON` names a Python interpreter with the SDK installed; see
BENCHMARKS.md.
"""

import argparse
import asyncio
import collections
import json
import os
import statistics
import time

from claude_agent_sdk import ClaudeAgentOptions, query


async def run_once(cli: str, stream: str) -> tuple[float, int, int]:
    """One run: seconds, messages yielded, and errors of the SDK's own background tasks."""
    task_errors = 0

    def on_error(loop: asyncio.AbstractEventLoop, context: dict) -> None:
        # The SDK answers the stream's control requests on tasks of its own; after it has
        # closed stdin (at the first result) those answers fail. They are counted, not printed.
        nonlocal task_errors
        task_errors += 1

    asyncio.get_running_loop().set_exception_handler(on_error)
    options = ClaudeAgentOptions(
        cli_path=cli,
        extra_args={"initialize": None, "stdout-file": stream},
        # The SDK's default limit is 1 MB per line; the corpus stays below it, but the limit is
        # raised to byre's default so that it cannot be why a line is missing.
        max_buffer_size=64 * 1024 * 1024,
    )
    messages = 0
    start = time.perf_counter()
    async for _ in query(prompt="stream", options=options):
        messages += 1
    return time.perf_counter() - start, messages, task_errors


def stream_types(path: str) -> collections.Counter:
    """The stream's lines by `type`."""
    with open(path, "rb") as f:
        return collections.Counter(json.loads(line).get("type") for line in f if line.strip())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cli", required=True, help="the byre-standin binary")
    parser.add_argument("--stream", required=True, help="the corpus stream file")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    # The version check would start the stand-in once more, with `-v`.
    os.environ["CLAUDE_AGENT_SDK_SKIP_VERSION_CHECK"] = "1"
    size = os.path.getsize(args.stream)
    types = stream_types(args.stream)
    lines = sum(types.values())
    control = sum(n for t, n in types.items() if t.startswith("control_"))
    times = []
    for run in range(args.runs):
        elapsed, delivered, task_errors = asyncio.run(run_once(args.cli, args.stream))
        times.append(elapsed)
        print(
            f"python sdk run {run + 1}: {elapsed * 1000:.0f} ms, "
            f"{delivered / elapsed:,.0f} messages/s, {lines / elapsed:,.0f} stream lines/s, "
            f"{size / elapsed / 1e6:.1f} MB/s; delivered {delivered} of {lines} lines "
            f"({lines - delivered} not: {control} control lines kept by the SDK, "
            f"{lines - delivered - control} others); {task_errors} errors in its own tasks",
            flush=True,
        )
    median = statistics.median(times)
    print(f"python sdk stream lines by type: {dict(types.most_common())}")
    print(
        f"python sdk median of {args.runs}: {median * 1000:.0f} ms, "
        f"{delivered / median:,.0f} messages/s, {lines / median:,.0f} stream lines/s, "
        f"{size / median / 1e6:.1f} MB/s"
    )


if __name__ == "__main__":
    main()
