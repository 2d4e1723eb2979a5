#!/usr/bin/env node
// Interop check: the official MCP TypeScript SDK (@modelcontextprotocol/sdk,
// the version scripts/interop.sh installs) against the catalog example.
//
//     node ts_client.mjs --sdk DIR --url http://127.0.0.1:PORT/mcp/v1
//     node ts_client.mjs --sdk DIR --stdio target/debug/catalog
//
// DIR is the SDK's package directory (.../node_modules/@modelcontextprotocol/sdk).
// The SDK speaks the handshake era (up to 2025-11-25). Over Streamable HTTP, or
// starting `catalog --stdio` itself (StdioClientTransport, as a desktop client's
// `command` does), it checks what python_client.py checks, the SDK's way:
//   * initialize: protocol 2025-11-25, server name and capabilities;
//   * every page of tools/list; the catalog's tools, each described;
//   * tools/call Catalog.get {"id": 7}: structuredContent and its JSON text. The
//     SDK validates every structured result against the tool's outputSchema
//     (Ajv) and throws when one does not match: each call below checks a schema;
//   * a tool error (isError), progress and a log message while Catalog.stats runs,
//     the protocol ping, tools/call ping;
//   * no protocol error reported by the SDK (`onerror`): over stdio, a progress
//     notification read in the same chunk as its response is handled after it
//     and reported as having "an unknown token" (Claude Code then closes the
//     connection); the transport writes none that its response overtakes;
//   * validation refusals, a rename that refreshes the cached Catalog.get, `$rpc`
//     refused over MCP;
//   * resources (a template, a read, an unknown URI), a subscription and its
//     update (over HTTP on the session's GET stream), a prompt, completion;
//   * a tool that asks the user first (elicitation, answered by this client);
//   * a call cancelled by the client (an AbortSignal: notifications/cancelled),
//     then another call on the same connection;
//   * over HTTP: the session ended by the client (DELETE), after which its id is
//     refused with 404; over stdio: the server exits by itself when stdin closes.
// Exits 1 with a message for every mismatch, 2 when the connection itself fails.

import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const EXPECTED_TOOLS = ["ping", "Catalog.search", "Catalog.get", "Catalog.list", "Catalog.categories", "Catalog.stats"];
const MAX_PAGES = 100;

function parseArgs(argv) {
  const args = {};
  for (let i = 0; i < argv.length; i += 2) {
    const key = argv[i];
    const value = argv[i + 1];
    if (!["--sdk", "--url", "--stdio"].includes(key) || value === undefined) {
      throw new Error(`usage: ts_client.mjs --sdk DIR (--url URL | --stdio CATALOG); got ${argv.join(" ")}`);
    }
    args[key.slice(2)] = value;
  }
  if (!args.sdk || !!args.url === !!args.stdio) {
    throw new Error("usage: ts_client.mjs --sdk DIR (--url URL | --stdio CATALOG)");
  }
  return args;
}

class Checker {
  constructor() {
    this.failures = [];
    this.passed = 0;
  }

  check(ok, what, detail) {
    if (ok) {
      this.passed += 1;
      console.log(`  ok    ${what}`);
    } else {
      const message = detail === undefined ? what : `${what}: ${show(detail)}`;
      this.failures.push(message);
      console.log(`  FAIL  ${message}`);
    }
    return ok;
  }
}

function show(value) {
  const text = typeof value === "string" ? value : JSON.stringify(value);
  return text === undefined ? String(value) : text.slice(0, 400);
}

const texts = (result) => (result.content ?? []).filter((b) => b.type === "text").map((b) => b.text);

function jsonTexts(result) {
  return texts(result).map((text) => {
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  });
}

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function loadSdk(dir) {
  const load = (path) => import(pathToFileURL(join(dir, "dist/esm", path)).href);
  const [client, http, stdio, types] = await Promise.all([
    load("client/index.js"),
    load("client/streamableHttp.js"),
    load("client/stdio.js"),
    load("types.js"),
  ]);
  return { ...client, ...http, ...stdio, ...types };
}

/** A tool call that must be refused: a tool error, or a JSON-RPC error (-32602). */
async function refused(client, name, args) {
  try {
    const outcome = await client.callTool({ name, arguments: args });
    return [outcome.isError === true, texts(outcome).join(" ")];
  } catch (error) {
    return [true, String(error?.message ?? error)];
  }
}

async function run(sdk, transport, checker, label) {
  const logs = [];
  const questions = [];
  const client = new sdk.Client({ name: "ts-interop", version: "1" }, { capabilities: { elicitation: {} } });
  // What the SDK reports without failing a call: a message it could not
  // parse, or a progress notification it found no request for (read with
  // the response, it loses the race: Claude Code then closes a stdio
  // connection).
  const protocolErrors = [];
  client.onerror = (error) => protocolErrors.push(String(error?.message ?? error));
  client.setNotificationHandler(sdk.LoggingMessageNotificationSchema, (notification) => {
    logs.push(notification.params);
  });
  client.setRequestHandler(sdk.ElicitRequestSchema, async (request) => {
    questions.push(request.params);
    return { action: "accept", content: { confirm: true } };
  });
  const updates = [];
  client.setNotificationHandler(sdk.ResourceUpdatedNotificationSchema, (notification) => {
    updates.push(notification.params.uri);
  });
  await client.connect(transport);
  const server = client.getServerVersion();
  const protocol = transport.protocolVersion;
  console.log(`connected (${label}): protocol ${protocol ?? "?"}, server ${server?.name} ${server?.version}`);
  if (protocol !== undefined) {
    // Only the HTTP transport keeps the negotiated version.
    checker.check(protocol === "2025-11-25", "protocol 2025-11-25", protocol);
  }
  checker.check(!!server?.name, "the server names itself", server);
  checker.check(!!client.getServerCapabilities()?.tools, "server declares the tools capability");
  await client.setLoggingLevel("info");

  // tools/list, every page (the SDK caches each tool's outputSchema from it).
  const tools = [];
  let cursor;
  let pages = 0;
  do {
    const page = await client.listTools(cursor === undefined ? {} : { cursor });
    pages += 1;
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor !== undefined && pages < MAX_PAGES);
  const names = tools.map((tool) => tool.name);
  console.log(`  listed ${tools.length} tools on ${pages} page(s): ${names.join(", ")}`);
  checker.check(cursor === undefined, `tools/list ends within ${MAX_PAGES} pages`);
  checker.check(new Set(names).size === names.length, "tool names are unique", names);
  const missing = EXPECTED_TOOLS.filter((name) => !names.includes(name));
  checker.check(missing.length === 0, "tools/list has the catalog's tools", `missing ${missing}`);
  const undescribed = tools.filter((tool) => !tool.description).map((tool) => tool.name);
  checker.check(undescribed.length === 0, "every tool has a description", undescribed);
  const getTool = tools.find((tool) => tool.name === "Catalog.get");
  checker.check(!!getTool?.outputSchema, "Catalog.get has an outputSchema");
  checker.check("id" in (getTool?.inputSchema?.properties ?? {}), "Catalog.get's inputSchema has `id`", getTool?.inputSchema);

  // Catalog.get {"id": 7}: a structured result (validated by the SDK) mirrored as JSON text.
  let result = await client.callTool({ name: "Catalog.get", arguments: { id: 7 } });
  const expected = { id: 7, name: "n7" };
  checker.check(result.isError !== true, "Catalog.get {id: 7} succeeds", result.content);
  checker.check(same(result.structuredContent, { result: expected }),
    'Catalog.get {id: 7} structuredContent == {"result": {"id": 7, "name": "n7"}} (valid against its outputSchema)',
    result.structuredContent);
  checker.check(result.content.length === 1 && same(jsonTexts(result), [expected]),
    "Catalog.get {id: 7} text content is the product as JSON", texts(result));

  // Catalog.get {"id": 999}: the method fails, so the call is a tool error.
  result = await client.callTool({ name: "Catalog.get", arguments: { id: 999 } });
  checker.check(result.isError === true, "Catalog.get {id: 999} has isError: true", result);
  checker.check(texts(result).some((text) => text.includes("999")), "Catalog.get {id: 999} error text names the product",
    texts(result));

  // Catalog.stats reports progress and logs a summary.
  const progress = [];
  result = await client.callTool({ name: "Catalog.stats", arguments: {} }, undefined, {
    onprogress: (p) => progress.push([p.progress, p.total]),
  });
  checker.check(result.isError !== true && result.structuredContent?.result?.products === 100,
    "Catalog.stats counts 100 products", result.structuredContent);
  const values = progress.map(([done]) => done);
  const increasing = values.every((value, i) => i === 0 || value > values[i - 1]);
  if (label === "http") {
    checker.check(progress.length === 4 && increasing && same(progress[3], [100, 100]),
      "Catalog.stats reports increasing progress up to 100 of 100", progress);
  } else {
    // Over stdio a value is written 50 ms after it while the call goes on
    // (100 ms a batch); a later value may take its place on a busy machine.
    checker.check(progress.length >= 1 && increasing && progress.every(([done, total]) => total === 100 && done <= 100),
      "Catalog.stats reports increasing progress, of 100", progress);
  }
  for (let i = 0; i < 50 && logs.length === 0; i += 1) await sleep(20);
  checker.check(logs.some((entry) => entry.level === "info"), "Catalog.stats logs a summary at info", logs);

  // The protocol ping and the `ping` tool (a string result arrives as JSON text).
  checker.check(same(await client.ping(), {}), "protocol ping answers");
  result = await client.callTool({ name: "ping", arguments: {} });
  checker.check(result.isError !== true && same(jsonTexts(result), ["pong x"]), 'tool ping returns "pong x" (as JSON text)',
    texts(result));
  checker.check(same(result.structuredContent, { result: "pong x" }), 'tool ping structuredContent == {"result": "pong x"}',
    result.structuredContent);

  // The execution pipeline: validation rules, a rename that refreshes the
  // cached Catalog.get, `$rpc` refused.
  let [ok, why] = await refused(client, "Catalog.subscribe", { id: 7, email: "nope", digest: "hourly" });
  checker.check(ok && why.includes("email") && why.includes("hourly"),
    "Catalog.subscribe refuses a bad email and digest, naming both", why);
  result = await client.callTool({
    name: "Catalog.subscribe",
    arguments: { id: 7, email: "ts-agent@example.com", until: "2027-01-31" },
  });
  checker.check(result.isError !== true && result.structuredContent?.result?.digest === "weekly",
    "Catalog.subscribe with valid arguments (digest defaults to weekly)", result.structuredContent);
  result = await client.callTool({ name: "Catalog.rename", arguments: { id: 12, name: "n12 renamed" } });
  checker.check(result.isError !== true, "Catalog.rename succeeds", texts(result));
  let fresh;
  for (let i = 0; i < 40; i += 1) {
    const got = await client.callTool({ name: "Catalog.get", arguments: { id: 12 } });
    fresh = got.structuredContent?.result?.name;
    if (fresh === "n12 renamed") break;
    await sleep(50);
  }
  checker.check(fresh === "n12 renamed", "Catalog.get serves the renamed product (the cached entry was replaced)", fresh);
  [ok, why] = await refused(client, "ping", { $rpc: { callback: "http://127.0.0.1:1/x" } });
  checker.check(ok && why.includes("$rpc"), "`$rpc` is an unknown argument over MCP", why);

  // Resources, prompts and completion.
  const templates = await client.listResourceTemplates();
  checker.check(templates.resourceTemplates.some((t) => t.uriTemplate === "catalog://products/{id}"),
    "resources/templates/list has catalog://products/{id}", templates.resourceTemplates.map((t) => t.uriTemplate));
  const read = await client.readResource({ uri: "catalog://products/7" });
  const contents = read.contents[0];
  let product;
  try {
    product = JSON.parse(contents?.text ?? "null");
  } catch {
    product = contents?.text;
  }
  checker.check(contents?.mimeType === "application/json" && same(product, expected),
    "resources/read catalog://products/7 is the product as JSON", read.contents);
  try {
    await client.readResource({ uri: "catalog://nothing/here" });
    checker.check(false, "resources/read of an unknown URI is an error");
  } catch (error) {
    checker.check(String(error?.message).toLowerCase().includes("not found"),
      "resources/read of an unknown URI: resource not found", String(error));
  }
  // A subscribed resource that changes is announced (over HTTP on the
  // session's GET stream, which the SDK opens by itself; over stdio as a line).
  checker.check(client.getServerCapabilities()?.resources?.subscribe === true, "the server takes resource subscriptions");
  checker.check(same(await client.subscribeResource({ uri: "catalog://products/16" }), {}), "resources/subscribe");
  await client.callTool({ name: "Catalog.rename", arguments: { id: 17, name: "n17 renamed" } });
  await client.callTool({ name: "Catalog.rename", arguments: { id: 16, name: "n16 renamed" } });
  for (let i = 0; i < 100 && !updates.includes("catalog://products/16"); i += 1) await sleep(50);
  checker.check(same(updates, ["catalog://products/16"]),
    "notifications/resources/updated for the subscribed resource only (renamed: 17, then 16)", updates);
  const prompts = await client.listPrompts();
  const review = prompts.prompts.find((p) => p.name === "Catalog.review");
  checker.check(same((review?.arguments ?? []).map((a) => a.name), ["name", "tone"]),
    "prompts/list has Catalog.review(name, tone)", prompts.prompts);
  const prompt = await client.getPrompt({ name: "Catalog.review", arguments: { name: "n7", tone: "friendly" } });
  checker.check(same(prompt.messages.map((m) => m.content.type), ["resource", "text"]) &&
    prompt.messages[1].content.text.includes("friendly"),
    "prompts/get Catalog.review embeds the product and asks for a friendly review", prompt.messages);
  const productNames = await client.complete({
    ref: { type: "ref/prompt", name: "Catalog.review" },
    argument: { name: "name", value: "n9" },
  });
  checker.check(same(productNames.completion.values.slice(0, 2), ["n9", "n90"]) && productNames.completion.total === 11,
    "completion/complete of a product name", productNames.completion);
  const ids = await client.complete({
    ref: { type: "ref/resource", uri: "catalog://products/{id}" },
    argument: { name: "id", value: "10" },
  });
  checker.check(same(ids.completion.values, ["10", "100"]), "completion/complete of a product id", ids.completion);

  // A destructive tool asks the user first (elicitation, a request on the stream).
  const email = `elicit-ts-${label}@example.com`;
  await client.callTool({ name: "Catalog.subscribe", arguments: { id: 3, email } });
  await client.callTool({ name: "Catalog.subscribe", arguments: { id: 4, email } });
  result = await client.callTool({ name: "Catalog.unsubscribe_all", arguments: { email } });
  checker.check(questions.length === 1 && String(questions[0]?.message).includes("Cancel all 2"),
    "Catalog.unsubscribe_all asks the user to confirm", questions);
  checker.check(result.isError !== true && same(jsonTexts(result), [`cancelled 2 subscriptions of ${email}`]),
    "Catalog.unsubscribe_all cancels after the confirmation", texts(result));

  // A call the client cancels while the server waits on its question: the
  // SDK sends notifications/cancelled and rejects the call; the connection
  // goes on serving.
  const before = questions.length;
  const abort = new AbortController();
  client.setRequestHandler(sdk.ElicitRequestSchema, async (request) => {
    questions.push(request.params);
    abort.abort("changed my mind");
    await sleep(200);
    return { action: "decline" };
  });
  await client.callTool({ name: "Catalog.subscribe", arguments: { id: 5, email } });
  let cancelled;
  try {
    await client.callTool({ name: "Catalog.unsubscribe_all", arguments: { email } }, undefined, { signal: abort.signal });
    cancelled = "the call completed";
  } catch (error) {
    cancelled = String(error?.message ?? error);
  }
  checker.check(questions.length === before + 1 && abort.signal.aborted && !cancelled.startsWith("the call"),
    "a call the client cancels (AbortSignal) is abandoned", cancelled);
  result = await client.callTool({ name: "Catalog.get", arguments: { id: 8 } });
  checker.check(same(result.structuredContent, { result: { id: 8, name: "n8" } }),
    "the connection serves the next call after a cancellation", result.structuredContent);
  checker.check(protocolErrors.length === 0, "the SDK reported no protocol error (no progress for an unknown token)",
    protocolErrors);
  return client;
}

/** Over Streamable HTTP; then the session is ended with DELETE and its id refused. */
async function overHttp(sdk, url, checker) {
  const transport = new sdk.StreamableHTTPClientTransport(new URL(url));
  const client = await run(sdk, transport, checker, "http");
  const session = transport.sessionId;
  checker.check(typeof session === "string" && session.length >= 16, "the server opened a session", session);
  await transport.terminateSession();
  checker.check(transport.sessionId === undefined, "terminateSession (DELETE) ends the session");
  const stale = await fetch(url, {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      Accept: "application/json, text/event-stream",
      "Mcp-Session-Id": session,
      "MCP-Protocol-Version": "2025-11-25",
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
  });
  checker.check(stale.status === 404, "a request with the ended session's id gets 404", stale.status);
  await client.close();
}

/** Starting `catalog --stdio`; the server must exit by itself when stdin closes. */
async function overStdio(sdk, catalog, checker) {
  const transport = new sdk.StdioClientTransport({
    command: catalog,
    args: ["--stdio"],
    env: { ...process.env, RUST_LOG: "info" },
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk) => {
    stderr += chunk;
  });
  const client = await run(sdk, transport, checker, "stdio");
  const pid = transport.pid;
  await client.close();
  for (let i = 0; i < 100 && !stderr.includes("stdin closed; exiting"); i += 1) await sleep(50);
  checker.check(stderr.includes("serving MCP"), "the server logs on stderr", stderr.slice(-500));
  checker.check(stderr.includes("stdin closed; exiting"), "the server exits by itself when stdin closes",
    stderr.slice(-500));
  if (pid) {
    const alive = spawnSync("kill", ["-0", String(pid)]).status === 0;
    checker.check(!alive, "no server process is left behind", pid);
  }
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const sdk = await loadSdk(args.sdk);
  const label = args.url ? `http ${args.url}` : `stdio ${args.stdio} --stdio`;
  console.log(`ts-sdk interop (${label})`);
  const checker = new Checker();
  try {
    if (args.url) {
      await overHttp(sdk, args.url, checker);
    } else {
      await overStdio(sdk, args.stdio, checker);
    }
  } catch (error) {
    console.error(`ts-sdk interop: FAILED: ${error?.stack ?? error}`);
    if (checker.failures.length) console.error(`(and ${checker.failures.length} failed check(s) before it)`);
    return 2;
  }
  if (checker.failures.length) {
    console.error(`ts-sdk interop: FAILED: ${checker.failures.length} of ${checker.passed + checker.failures.length} checks failed:`);
    for (const failure of checker.failures) console.error(`  - ${failure}`);
    return 1;
  }
  console.log(`ts-sdk interop (${args.url ? "http" : "stdio"}): all ${checker.passed} checks passed`);
  return 0;
}

process.exitCode = await main();
