"""One start of the official Python SDK for the start-up bench, cold or warm.

Started by `cargo bench -p byre-cli --bench startup` in the offline environment (the fake
model's address and a scratch home in its environment, which the CLI inherits). Usage:
python startup_python.py CLI cold|warm empty|cli (the SDK's default empty system prompt, or
the CLI's own: its `claude_code` preset). Cold: the time from the call to a connected
`ClaudeSDKClient` (the CLI started and `initialize` answered: ready) and to the first
`ResultMessage` of a prompt sent then. Warm: the client is connected first; the times run from
sending the prompt. Prints `ready_ms X first_ms Y`. Times are taken inside the process: the
interpreter's start and the SDK's import are not counted.
"""

import asyncio
import sys
import time

from claude_agent_sdk import ClaudeAgentOptions, ClaudeSDKClient, ResultMessage


async def run(cli: str, warm: bool, own_prompt: bool) -> tuple:
    options = ClaudeAgentOptions(cli_path=cli)
    if own_prompt:
        options.system_prompt = {"type": "preset", "preset": "claude_code"}
    client = ClaudeSDKClient(options=options)
    if warm:
        await client.connect()
    start = time.monotonic()
    if not warm:
        await client.connect()
    ready = time.monotonic() - start
    await client.query("hello")
    async for message in client.receive_response():
        if isinstance(message, ResultMessage):
            break
    first = time.monotonic() - start
    await client.disconnect()
    return ready, first


def main() -> None:
    ready, first = asyncio.run(run(sys.argv[1], sys.argv[2] == "warm", sys.argv[3] == "cli"))
    print(f"ready_ms {ready * 1e3:.1f} first_ms {first * 1e3:.1f}")


if __name__ == "__main__":
    main()
