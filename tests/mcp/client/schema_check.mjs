// Every message corral mcp writes, checked against the official schema.json of the era it
// answers in (the MCP specification's 2025-11-25 and 2026-07-28 revisions): results of each
// method, tool results (successes and tool errors), protocol errors, progress notifications,
// and the structuredContent of each tool call against the tool's own outputSchema.
//
// usage: node schema_check.mjs CORRAL WORKSPACE SPEC_DIR
// SPEC_DIR holds 2025-11-25/schema.json and 2026-07-28/schema.json (tests/mcp_schema_test.cpp
// runs this when CORRAL_MCP_SPEC_DIR is set).
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import readline from "node:readline";
import Ajv2020 from "ajv/dist/2020.js";

const [corral, workspace, specDir] = process.argv.slice(2);
assert.ok(corral && workspace && specDir, "usage: node schema_check.mjs CORRAL WORKSPACE SPEC_DIR");

// A validator for `def` of one revision's schema.json.
const validators = {};
for (const era of ["2025-11-25", "2026-07-28"]) {
  const schema = JSON.parse(fs.readFileSync(path.join(specDir, era, "schema.json"), "utf8"));
  const ajv = new Ajv2020({ strict: false, allErrors: true, logger: false });
  ajv.addSchema(schema, era);
  validators[era] = (def) => ajv.getSchema(`${era}#/$defs/${def}`) ?? assert.fail(`no ${def} in ${era}'s schema`);
}
const toolAjv = new Ajv2020({ strict: false, allErrors: true, logger: false });
let checked = 0;
const valid = (era, def, value, what) => {
  const v = validators[era](def);
  assert.ok(v(value), `${what}: not a valid ${era} ${def}: ${JSON.stringify(v.errors)}\n${JSON.stringify(value).slice(0, 500)}`);
  ++checked;
};

// One server; `send` writes a message, `next` reads the next one the server writes.
function server() {
  const child = spawn(corral, ["mcp", "--max-sandboxes", "1", "--max-output", "1K"], {
    cwd: workspace, env: process.env, stdio: ["pipe", "pipe", "inherit"],
  });
  const lines = readline.createInterface({ input: child.stdout });
  const queue = [];
  const waiting = [];
  lines.on("line", (line) => (waiting.length ? waiting.shift()(line) : queue.push(line)));
  return {
    send: (message) => child.stdin.write((typeof message === "string" ? message : JSON.stringify(message)) + "\n"),
    next: () => new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("no message within 20 s")), 20000);
      const take = (line) => { clearTimeout(timer); resolve(JSON.parse(line)); };
      queue.length ? take(queue.shift()) : waiting.push(take);
    }),
    end: () => new Promise((resolve) => { child.on("close", resolve); child.stdin.end(); }),
  };
}

// Runs one era's conversation: `meta` is the modern _meta (undefined for the legacy era).
async function conversation(era, meta) {
  const s = server();
  let id = 0;
  const withMeta = (params = {}) => (meta ? { ...params, _meta: { ...(params._meta ?? {}), ...meta } } : params);
  // Sends a request; returns its answer and the notifications before it, all checked.
  const request = async (method, params, resultDef) => {
    const mine = ++id;
    s.send({ jsonrpc: "2.0", id: mine, method, params: withMeta(params) });
    const notifications = [];
    for (;;) {
      const m = await s.next();
      valid(era, "JSONRPCMessage", m, `an answer to ${method}`);
      if (m.id === undefined) {
        valid(era, "ServerNotification", m, `a notification during ${method}`);
        if (m.method === "notifications/progress") valid(era, "ProgressNotification", m, "a progress notification");
        notifications.push(m);
        continue;
      }
      assert.equal(m.id, mine);
      if (resultDef) {
        valid(era, "JSONRPCResultResponse", m, method);
        valid(era, resultDef, m.result, method);
      } else {
        valid(era, "JSONRPCErrorResponse", m, method);
      }
      return { answer: m, notifications };
    }
  };

  if (meta) {
    await request("server/discover", {}, "DiscoverResult");
  } else {
    await request("initialize", { protocolVersion: era, capabilities: {}, clientInfo: { name: "schema-check", version: "1" } },
      "InitializeResult");
    s.send({ jsonrpc: "2.0", method: "notifications/initialized" });
  }
  await request("ping", {}, meta ? "Result" : "EmptyResult");
  const { answer: listed } = await request("tools/list", {}, "ListToolsResult");
  const outputValidators = Object.fromEntries(listed.result.tools.map((t) => [t.name, toolAjv.compile(t.outputSchema)]));
  assert.equal(Object.keys(outputValidators).length, 13);

  // A tool call, its result checked against the era's CallToolResult and the tool's schema.
  const call = async (name, args, { progress = false, error = false } = {}) => {
    const params = { name, arguments: args, ...(progress ? { _meta: { progressToken: `p${id + 1}` } } : {}) };
    const { answer, notifications } = await request("tools/call", params, "CallToolResult");
    assert.equal(Boolean(answer.result.isError), error, `${name}: ${JSON.stringify(answer.result.content)}`);
    if (!error) {
      const v = outputValidators[name];
      assert.ok(v(answer.result.structuredContent), `${name}'s structuredContent against its outputSchema: ${JSON.stringify(v.errors)}`);
      ++checked;
    }
    return { result: answer.result, notifications };
  };

  const run = await call("run", { command: ["sh", "-c", "seq 1 2000; echo done >&2; exit 1"] }, { progress: true });
  assert.equal(run.result.structuredContent.exitCode, 1);
  assert.ok(run.notifications.length > 0, "progress notifications were sent");
  await call("run", { command: ["true"], network: "sideways" }, { error: true });
  const lease = (await call("sandbox_start", {})).result.structuredContent.lease;
  await call("sandbox_start", {}, { error: true });  // past --max-sandboxes 1
  await call("sandbox_exec", { lease, command: ["sh", "-c", "printf '\\377\\376'; echo text >&2"] });
  await call("sandbox_write_file", { lease, path: "d/f.txt", content: "x".repeat(3000) });
  const read = await call("sandbox_read_file", { lease, path: "d/f.txt" });
  assert.equal(read.result.structuredContent.truncated, true);
  await call("sandbox_list_files", { lease, path: "d" });
  await call("sandbox_status", { lease });
  await call("sandbox_list", {});
  await call("providers", {});
  await call("sandbox_pause", { lease });
  await call("sandbox_resume", { lease });
  await call("sandbox_fork", { lease }, { error: true });  // past --max-sandboxes 1
  await call("sandbox_stop", { lease });

  // Protocol errors.
  await request("no/such/method", {});
  await request("tools/call", { name: "no_such_tool", arguments: {} });
  s.send("{not json");
  valid(era, "JSONRPCErrorResponse", await s.next(), "the answer to a line that is not JSON");
  await s.end();
}

await conversation("2025-11-25");
await conversation("2026-07-28", {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {},
});
// The unsupported-version error of the modern era.
{
  const s = server();
  s.send({ jsonrpc: "2.0", id: 1, method: "tools/list", params: { _meta: { "io.modelcontextprotocol/protocolVersion": "2099-01-01" } } });
  const m = await s.next();
  valid("2026-07-28", "JSONRPCErrorResponse", m, "the unsupported-version error");
  valid("2026-07-28", "UnsupportedProtocolVersionError", m, "the unsupported-version error");
  await s.end();
}
console.log(`ok: ${checked} messages and results valid`);
