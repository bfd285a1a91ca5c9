// The official TypeScript MCP SDK's v1 client (`@modelcontextprotocol/sdk`: `Client` with
// `StdioClientTransport` or `StreamableHTTPClientTransport`) against a running `webreach mcp`.
//
//   node mcp_sdk.mjs '<calls as JSON>' <server url ending in /mcp | server entry as JSON>
//
// A server entry is what an `mcpServers` config holds, `{"command", "args", "env"}`: the client
// starts it and talks to it over stdio.
// `calls` is a list of `{"name", "arguments"}`. The client lists the tools first, as every client
// does, so it holds each tool's outputSchema and checks each result against it. Prints one JSON
// object: the tools listed and, for each call, the result the SDK returned or the error it
// threw, with the output-schema checks the client ran for it. tests/suites/test_clients_mcp.py
// runs it.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";

import { describeError } from "./common.mjs";

// The SDK's own validator, recording each check the client makes with it.
class RecordingValidator {
  constructor() {
    this.inner = new AjvJsonSchemaValidator();
    this.checks = [];
  }

  getValidator(schema) {
    const validate = this.inner.getValidator(schema);
    return (input) => {
      const outcome = validate(input);
      this.checks.push({ valid: outcome.valid, errorMessage: outcome.errorMessage ?? null });
      return outcome;
    };
  }
}

function transportFor(target) {
  if (target.startsWith("{")) {
    const { command, args = [], env = {} } = JSON.parse(target);
    return new StdioClientTransport({ command, args, env, stderr: "inherit" });
  }
  return new StreamableHTTPClientTransport(new URL(target));
}

async function run(calls, target) {
  const validator = new RecordingValidator();
  const client = new Client(
    { name: "webreach-test", version: "0.0.0" },
    { jsonSchemaValidator: validator },
  );
  await client.connect(transportFor(target));
  try {
    const { tools } = await client.listTools();
    const outcomes = [];
    for (const call of calls) {
      const before = validator.checks.length;
      let outcome;
      try {
        outcome = { result: await client.callTool(call) };
      } catch (error) {
        outcome = { error: describeError(error) };
      }
      outcome.checks = validator.checks.slice(before);
      outcomes.push(outcome);
    }
    return { tools: tools.map((tool) => tool.name), calls: outcomes };
  } finally {
    await client.close();
  }
}

const [calls, target] = process.argv.slice(2);
if (!calls || !target) {
  console.error("usage: node mcp_sdk.mjs '<calls JSON>' <server url | server entry JSON>");
  process.exit(2);
}
let printed;
try {
  printed = await run(JSON.parse(calls), target);
} catch (error) {
  printed = { error: describeError(error) };
}
process.stdout.write(`${JSON.stringify(printed)}\n`);
