// One start of the official TypeScript SDK for the start-up bench, cold or warm.
//
// Started by `cargo bench -p byre-cli --bench startup` in the offline environment (the fake
// model's address and a scratch home in its environment, which the CLI inherits). Usage: node
// startup_ts.mjs SDK_ENTRY CLI cold|warm empty|cli (the SDK's default empty system prompt, or the
// CLI's own: its `claude_code` preset). Cold: `query()`, the time from the call to its
// `initializationResult()` (ready) and to its first `result` message. Warm: `startup()` first
// (the SDK's pre-warm: the CLI started and initialized), then `query()` on the warm handle; the
// times run from that call. Prints `ready_ms X first_ms Y`. Times are taken inside the
// process: node's start and the SDK's import are not counted.
import { pathToFileURL } from "node:url";

const [entry, cli, mode, prompt] = process.argv.slice(2);
const sdk = await import(pathToFileURL(entry).href);
const options = { pathToClaudeCodeExecutable: cli };
if (prompt === "cli") {
  options.systemPrompt = { type: "preset", preset: "claude_code" };
}
const ms = (from) => Number(process.hrtime.bigint() - from) / 1e6;

let start;
let q;
if (mode === "warm") {
  const warm = await sdk.startup({ options });
  start = process.hrtime.bigint();
  q = warm.query("hello");
} else {
  start = process.hrtime.bigint();
  q = sdk.query({ prompt: "hello", options });
}
await q.initializationResult();
const ready = ms(start);
let first = null;
for await (const message of q) {
  if (message.type === "result") {
    first = ms(start);
    break;
  }
}
q.close?.();
console.log(`ready_ms ${ready.toFixed(1)} first_ms ${first.toFixed(1)}`);
process.exit(0);
