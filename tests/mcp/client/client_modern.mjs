// corral mcp driven by the official MCP TypeScript client 2.x (@modelcontextprotocol/client)
// in the stateless 2026-07-28 era: the client pins that revision, so connect() runs
// server/discover and every request carries the per-request _meta envelope. The client
// validates each tool result's structuredContent against the outputSchema tools/list gave.
//
// usage: node client_modern.mjs CORRAL WORKSPACE   (tests/mcp/client_modern_test.cpp runs it)
import assert from "node:assert/strict";
import { Client, ProtocolError } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";

const [corral, workspace] = process.argv.slice(2);
assert.ok(corral && workspace, "usage: node client_modern.mjs CORRAL WORKSPACE");

const transport = new StdioClientTransport({
  command: corral,
  args: ["mcp", "--max-sandboxes", "2"],
  cwd: workspace,
  env: process.env,
  stderr: "inherit",
});
const client = new Client(
  { name: "corral-interop-modern", version: "1.0.0" },
  { versionNegotiation: { mode: { pin: "2026-07-28" } } },
);
await client.connect(transport);
assert.equal(client.getNegotiatedProtocolVersion(), "2026-07-28");
const discovered = client.getDiscoverResult();
assert.ok(discovered?.supportedVersions.includes("2026-07-28"), JSON.stringify(discovered));
assert.equal(client.getServerVersion().name, "corral");

const { tools } = await client.listTools();
assert.equal(tools.length, 13);
for (const t of tools) assert.equal(t.outputSchema?.type, "object", `${t.name}'s outputSchema`);

const call = async (name, args = {}) => {
  const result = await client.callTool({ name, arguments: args });
  assert.ok(!result.isError, `${name} failed: ${JSON.stringify(result.content)}`);
  return result.structuredContent;
};

const run = await call("run", { command: ["sh", "-c", "cat hello.txt; exit 3"] });
assert.equal(run.exitCode, 3);
assert.equal(run.stdout, "hello from the served folder\n");

// Two sandboxes, the limit: a third is a clear tool error.
const a = (await call("sandbox_start")).lease;
const b = (await call("sandbox_start")).lease;
const third = await client.callTool({ name: "sandbox_start", arguments: {} });
assert.equal(third.isError, true);
assert.match(third.content[0].text, /--max-sandboxes/);

// Calls on the two sandboxes at once overlap.
const started = Date.now();
const [ea, eb] = await Promise.all([
  call("sandbox_exec", { lease: a, command: ["sh", "-c", "sleep 1; echo a"] }),
  call("sandbox_exec", { lease: b, command: ["sh", "-c", "sleep 1; echo b"] }),
]);
assert.equal(ea.stdout + eb.stdout, "a\nb\n");
assert.ok(Date.now() - started < 1900, `two 1 s calls took ${Date.now() - started} ms`);

await call("sandbox_write_file", { lease: a, path: "x/y.bin", content: Buffer.from([0, 1, 2, 255]).toString("base64"), encoding: "base64" });
const read = await call("sandbox_read_file", { lease: a, path: "x/y.bin" });
assert.deepEqual([read.encoding, read.content, read.size], ["base64", "AAEC/w==", 4]);
const forked = await client.callTool({ name: "sandbox_fork", arguments: { lease: a } });
assert.equal(forked.isError, true, "a fork past --max-sandboxes is refused");

// Cancellation in this era is notifications/cancelled too.
const controller = new AbortController();
const slow = client.callTool({ name: "sandbox_exec", arguments: { lease: b, command: ["sleep", "30"] } }, { signal: controller.signal });
setTimeout(() => controller.abort("test"), 800);
await assert.rejects(slow);
assert.equal((await call("sandbox_exec", { lease: b, command: ["echo", "free"] })).stdout, "free\n");

await assert.rejects(client.callTool({ name: "no_such_tool", arguments: {} }), (e) => e instanceof ProtocolError && e.code === -32602);
await call("sandbox_stop", { lease: a });
await client.close();  // b is stopped by the server as it ends
console.log("ok");
