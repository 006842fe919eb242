// One run of the official TypeScript SDK for the latency bench: how long after the stand-in
// wrote each stamped line the SDK's `query()` yields it as a message.
//
// Started by `cargo bench -p byre-cli --bench latency` with the stand-in's variables in its
// environment (which the CLI inherits). Usage: node latency_ts.mjs SDK_ENTRY CLI. Prints
// `latencies` and the microseconds of each stamped line, in the order they arrived.
import { pathToFileURL } from "node:url";

const [entry, cli] = process.argv.slice(2);
const { query } = await import(pathToFileURL(entry).href);
const latencies = [];
for await (const message of query({
  prompt: "go",
  options: { pathToClaudeCodeExecutable: cli },
})) {
  const now = process.hrtime.bigint();
  if (message.type === "assistant") {
    const text = message.message.content[0]?.text ?? "";
    if (text.startsWith("stamp ")) {
      latencies.push(Number(now - BigInt(text.slice("stamp ".length))) / 1000);
    }
  }
}
console.log(`latencies ${latencies.map((l) => l.toFixed(1)).join(" ")}`);
