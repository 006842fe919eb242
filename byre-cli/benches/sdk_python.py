"""One run of the official Python SDK over the whole-process benchmark's stream.

Started by `cargo bench -p byre-cli --bench process` as a process of its own, so that its time
is the whole process's: interpreter, imports, the SDK's start of the stand-in CLI (its
`cli_path`, with the stand-in's flags in `extra_args`), every message read to the end. Prints
how many messages `query()` yielded.
"""

import argparse
import asyncio
import os

from claude_agent_sdk import ClaudeAgentOptions, query


async def run(cli: str, stream: str) -> int:
    options = ClaudeAgentOptions(
        cli_path=cli,
        extra_args={"initialize": None, "stdout-file": stream},
        include_partial_messages=True,
        # byre's default line limit, so that the limit cannot be why a line is missing.
        max_buffer_size=64 * 1024 * 1024,
    )
    messages = 0
    async for _ in query(prompt="stream", options=options):
        messages += 1
    return messages


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cli", required=True)
    parser.add_argument("--stream", required=True)
    args = parser.parse_args()
    # The version check would start the stand-in once more, with `-v`.
    os.environ["CLAUDE_AGENT_SDK_SKIP_VERSION_CHECK"] = "1"
    print(f"messages {asyncio.run(run(args.cli, args.stream))}")


if __name__ == "__main__":
    main()
