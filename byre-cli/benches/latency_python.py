"""One run of the official Python SDK for the latency bench: how long after the stand-in wrote
each stamped line the SDK's `query()` yields it as a message.

Started by `cargo bench -p byre-cli --bench latency` with the stand-in's variables in its
environment (which the CLI inherits). Usage: python latency_python.py CLI. Prints
`latencies` and the microseconds of each stamped line, in the order they arrived.
"""

import asyncio
import sys
import time

from claude_agent_sdk import AssistantMessage, ClaudeAgentOptions, query


async def run(cli: str) -> list:
    latencies = []
    async for message in query(prompt="go", options=ClaudeAgentOptions(cli_path=cli)):
        now = time.monotonic_ns()
        if isinstance(message, AssistantMessage):
            text = getattr(message.content[0], "text", "")
            if text.startswith("stamp "):
                latencies.append((now - int(text[len("stamp "):])) / 1000)
    return latencies


def main() -> None:
    latencies = asyncio.run(run(sys.argv[1]))
    print("latencies " + " ".join(f"{l:.1f}" for l in latencies))


if __name__ == "__main__":
    main()
