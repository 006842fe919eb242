// One run of the official TypeScript SDK over the whole-process benchmark's stream.
//
// Started by `cargo bench -p byre-cli --bench process` as a process of its own (node, the SDK's
// import, its start of the stand-in CLI through `pathToClaudeCodeExecutable` with the
// stand-in's flags in `extraArgs`, every message read to the end). Prints how many messages
// `query()` yielded. Usage: node sdk_ts.mjs SDK_ENTRY CLI STREAM
import { pathToFileURL } from "node:url";

const [entry, cli, stream] = process.argv.slice(2);
const { query } = await import(pathToFileURL(entry).href);
let messages = 0;
for await (const _ of query({
  prompt: "stream",
  options: {
    pathToClaudeCodeExecutable: cli,
    extraArgs: { initialize: null, "stdout-file": stream },
    includePartialMessages: true,
  },
})) {
  messages += 1;
}
console.log(`messages ${messages}`);
