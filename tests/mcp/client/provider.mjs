// corral mcp on a remote provider's stand-in, driven by an official MCP TypeScript client
// of either protocol era, as an agent framework drives it: the tools on one provider, the
// features it has used and the ones it lacks refused, cancellation, calls that overlap,
// the limits the user set, and the client going away in the middle of a call. The client
// validates each tool result's structuredContent against its outputSchema.
//
// usage: node provider.mjs ERA CORRAL WORKSPACE PROVIDER
//   ERA  2025-11-25 (@modelcontextprotocol/sdk 1.x, the initialize lifecycle) or
//        2026-07-28 (@modelcontextprotocol/client 2.x, stateless, server/discover)
// The stand-ins run a sandbox's commands as processes of this machine, which is how the
// script sees that a cancelled command is gone. tests/mcp/{e2b,kubernetes}_test.cpp run it
// and check afterwards that the stand-in has no sandbox left and nothing printed a secret.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";

const [era, corral, workspace, provider] = process.argv.slice(2);
assert.ok(era && corral && workspace && provider, "usage: node provider.mjs ERA CORRAL WORKSPACE PROVIDER");

const args = ["mcp", "--provider", provider, "--max-sandboxes", "4", "--network", "none"];
let client, transport, callTool, isProtocolError;
if (era === "2025-11-25") {
  const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
  const { StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js");
  const { McpError } = await import("@modelcontextprotocol/sdk/types.js");
  transport = new StdioClientTransport({ command: corral, args, cwd: workspace, env: process.env, stderr: "inherit" });
  client = new Client({ name: "corral-provider-test", version: "1.0.0" });
  callTool = (params, options) => client.callTool(params, undefined, options);
  isProtocolError = (e) => e instanceof McpError;
} else if (era === "2026-07-28") {
  const { Client, ProtocolError } = await import("@modelcontextprotocol/client");
  const { StdioClientTransport } = await import("@modelcontextprotocol/client/stdio");
  transport = new StdioClientTransport({ command: corral, args, cwd: workspace, env: process.env, stderr: "inherit" });
  client = new Client({ name: "corral-provider-test", version: "1.0.0" },
    { versionNegotiation: { mode: { pin: "2026-07-28" } } });
  callTool = (params, options) => client.callTool(params, options);
  isProtocolError = (e) => e instanceof ProtocolError;
} else {
  assert.fail(`unknown era ${era}: 2025-11-25 or 2026-07-28`);
}
await client.connect(transport);
assert.equal(client.getServerVersion().name, "corral");

const { tools } = await client.listTools();
assert.equal(tools.length, 13);
for (const t of tools) assert.equal(t.outputSchema?.type, "object", `${t.name}'s outputSchema`);

const call = async (name, args = {}, options) => {
  const result = await callTool({ name, arguments: args }, options);
  assert.ok(!result.isError, `${name} failed: ${JSON.stringify(result.content)}`);
  return result.structuredContent;
};
const refused = async (name, args, pattern) => {
  const result = await callTool({ name, arguments: args });
  assert.equal(result.isError, true, `${name} ${JSON.stringify(args)} was not refused`);
  assert.match(result.content[0].text, pattern);
};

const { providers } = await call("providers");
assert.equal(providers[0].name, provider, "the --provider given is the default");
const features = providers[0].features;

// A fresh sandbox per run, made from the served folder.
const hello = readFileSync(join(workspace, "hello.txt"), "utf8");
const run = await call("run", { command: ["sh", "-c", "cat hello.txt; echo e >&2; exit 4"] });
assert.deepEqual([run.exitCode, run.stdout, run.stderr], [4, hello, "e\n"]);
assert.equal(run.handle.provider, provider);

const { lease } = await call("sandbox_start");
assert.equal((await call("sandbox_exec", { lease, command: ["sh", "-c", "echo $((6 * 7))"] })).stdout, "42\n");
assert.equal((await call("sandbox_exec", { lease, command: ["cat"], stdin: "fed" })).stdout, "fed");

await call("sandbox_write_file", { lease, path: "notes/a.txt", content: "written by the client\n" });
await call("sandbox_write_file", { lease, path: "notes/b.bin", content: "AAEC/w==", encoding: "base64" });
assert.equal((await call("sandbox_read_file", { lease, path: "notes/a.txt" })).content, "written by the client\n");
const binary = await call("sandbox_read_file", { lease, path: "notes/b.bin" });
assert.deepEqual([binary.encoding, binary.content, binary.size], ["base64", "AAEC/w==", 4]);
const listed = await call("sandbox_list_files", { lease, path: "notes" });
assert.deepEqual(listed.entries, [{ name: "a.txt", type: "file", size: 22 }, { name: "b.bin", type: "file", size: 4 }]);
assert.equal((await call("sandbox_status", { lease })).lease.slug, lease);

// The user's limits: no way out of the workspace, no wider network, no unlisted variable.
await refused("sandbox_read_file", { lease, path: "../../etc/passwd" }, /workspace|outside|\.\./);
await refused("run", { command: ["true"], network: "open" }, /network/);
await refused("sandbox_start", { env: ["HOME"] }, /HOME/);

// Fork and pause where the provider has them; a tool error naming the feature where not.
if (features.includes("fork")) {
  const { leases } = await call("sandbox_fork", { lease });
  assert.equal(leases.length, 1);
  assert.equal((await call("sandbox_read_file", { lease: leases[0], path: "notes/a.txt" })).content, "written by the client\n");
  await call("sandbox_stop", { lease: leases[0] });
} else {
  await refused("sandbox_fork", { lease }, /fork/);
}
if (features.includes("pause-resume")) {
  assert.equal((await call("sandbox_pause", { lease })).state, "paused");
  assert.equal((await call("sandbox_resume", { lease })).state, "running");
  assert.equal((await call("sandbox_exec", { lease, command: ["echo", "back"] })).stdout, "back\n");
} else {
  await refused("sandbox_pause", { lease }, /pause/);
}

// Two calls on two sandboxes overlap: each one's start comes before the other's end.
const other = (await call("sandbox_start")).lease;
const clock = ["sh", "-c", "date +%s%N; sleep 1; date +%s%N"];
const spans = (await Promise.all([call("sandbox_exec", { lease, command: clock }), call("sandbox_exec", { lease: other, command: clock })]))
  .map((r) => r.stdout.trim().split("\n").map(BigInt));
assert.ok(spans[0][0] < spans[1][1] && spans[1][0] < spans[0][1], `the calls ran one after the other: ${spans}`);

// Cancellation mid-command: the command says its pid in a progress notification, the
// client aborts, and the process is gone soon after; the sandbox takes the next call.
const controller = new AbortController();
let pid = 0;
const slow = callTool({ name: "sandbox_exec", arguments: { lease, command: ["sh", "-c", "echo $$; exec sleep 60"] } }, {
  signal: controller.signal,
  onprogress: (p) => {
    const m = /(\d+)/.exec(p.message ?? "");
    if (m && !pid) { pid = Number(m[1]); controller.abort("test"); }
  },
});
await assert.rejects(slow);
assert.ok(pid > 0, "the command's output arrived as progress");
const alive = (p) => { try { process.kill(p, 0); return true; } catch { return false; } };
for (let i = 0; i < 200 && alive(pid); i++) await new Promise((r) => setTimeout(r, 50));
assert.ok(!alive(pid), `the cancelled command (pid ${pid}) still runs`);
assert.equal((await call("sandbox_exec", { lease, command: ["echo", "free"] })).stdout, "free\n");

await assert.rejects(callTool({ name: "no_such_tool", arguments: {} }), (e) => isProtocolError(e) && e.code === -32602);

// The client goes away with a call in flight: the server stops both sandboxes (the test
// that runs this script checks the stand-in).
callTool({ name: "sandbox_exec", arguments: { lease: other, command: ["sleep", "60"] } }).catch(() => {});
await new Promise((r) => setTimeout(r, 300));
await client.close();
console.log("ok");
