// corral mcp driven by the official MCP TypeScript SDK (1.x: Client + StdioClientTransport,
// the 2025-11-25 lifecycle), as an agent framework drives it. The SDK validates every
// tool result's structuredContent against the outputSchema tools/list gave.
//
// usage: node client.mjs CORRAL WORKSPACE   (tests/mcp/client_test.cpp runs it, in a
// hermetic environment, and checks afterwards that no sandbox is left)
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";

const [corral, workspace] = process.argv.slice(2);
assert.ok(corral && workspace, "usage: node client.mjs CORRAL WORKSPACE");

const transport = new StdioClientTransport({
  command: corral,
  args: ["mcp", "--max-output", "4K"],
  cwd: workspace,
  env: process.env,
  stderr: "inherit",
});
const client = new Client({ name: "corral-interop-test", version: "1.0.0" });
await client.connect(transport);
assert.equal(client.getServerVersion().name, "corral");
assert.ok(client.getServerCapabilities().tools, "the server says it has tools");

const { tools } = await client.listTools();
const names = tools.map((t) => t.name);
assert.deepEqual(names, [
  "run", "sandbox_start", "sandbox_exec", "sandbox_write_file", "sandbox_read_file", "sandbox_list_files",
  "sandbox_fork", "sandbox_pause", "sandbox_resume", "sandbox_stop", "sandbox_status", "sandbox_list", "providers",
]);
for (const t of tools) {
  assert.ok(t.description, `${t.name} has a description`);
  assert.equal(t.inputSchema.type, "object", `${t.name}'s inputSchema`);
  assert.equal(t.outputSchema?.type, "object", `${t.name}'s outputSchema`);
}

// Every call below that is not an error is checked against its tool's outputSchema by
// the SDK, which throws when structuredContent does not match.
const call = async (name, args = {}) => {
  const result = await client.callTool({ name, arguments: args });
  assert.ok(!result.isError, `${name} failed: ${JSON.stringify(result.content)}`);
  return result.structuredContent;
};

const run = await call("run", { command: ["sh", "-c", "cat hello.txt; echo oops >&2; exit 3"] });
assert.equal(run.exitCode, 3);
assert.equal(run.stdout, "hello from the served folder\n");
assert.equal(run.stderr, "oops\n");

const big = await call("run", { command: ["seq", "1", "5000"] });
assert.ok(big.stdout.includes("left out"), "output past --max-output is cut with a marker");
assert.equal(big.stdoutBytes, 23893);

const { lease } = await call("sandbox_start");
const exec = await call("sandbox_exec", { lease, command: ["sh", "-c", "echo $((6 * 7))"] });
assert.equal(exec.stdout, "42\n");
await call("sandbox_write_file", { lease, path: "notes/a.txt", content: "written by the SDK\n" });
const read = await call("sandbox_read_file", { lease, path: "notes/a.txt" });
assert.equal(read.content, "written by the SDK\n");
const listed = await call("sandbox_list_files", { lease, path: "notes" });
assert.deepEqual(listed.entries, [{ name: "a.txt", type: "file", size: 19 }]);
await call("sandbox_status", { lease });
assert.equal((await call("sandbox_list")).leases.length, 1);
assert.equal((await call("providers")).providers[0].name, "local");

// A bad argument is a tool error; an unknown tool a protocol error.
const bad = await client.callTool({ name: "sandbox_read_file", arguments: { lease, path: "../../etc/passwd" } });
assert.equal(bad.isError, true);
await assert.rejects(client.callTool({ name: "no_such_tool", arguments: {} }), (e) => e instanceof McpError && e.code === -32602);

// Cancellation: the SDK sends notifications/cancelled when the signal aborts; the sandbox
// is free again right after.
const controller = new AbortController();
const slow = client.callTool({ name: "sandbox_exec", arguments: { lease, command: ["sleep", "30"] } }, undefined, {
  signal: controller.signal,
});
setTimeout(() => controller.abort("test"), 1000);
const started = Date.now();
await assert.rejects(slow);
const after = await call("sandbox_exec", { lease, command: ["echo", "after"] });
assert.equal(after.stdout, "after\n");
assert.ok(Date.now() - started < 10000, "the cancelled command did not hold the sandbox");

// Progress: output arrives as notifications while the command runs.
const progress = [];
const streamed = await client.callTool({ name: "run", arguments: { command: ["sh", "-c", "echo one; sleep 0.3; echo two"] } },
  undefined, { onprogress: (p) => progress.push(p) });
assert.equal(streamed.structuredContent.stdout, "one\ntwo\n");
assert.ok(progress.length >= 1 && progress[0].message.includes("one"), JSON.stringify(progress));

await call("sandbox_stop", { lease });
// The server is left with one started sandbox, which closing must stop.
await call("sandbox_start");
await client.close();
console.log("ok");
