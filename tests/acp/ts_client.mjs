// An editor written with the official TypeScript ACP SDK (@agentclientprotocol/sdk, a client we did not
// write): it starts the agent command it is given, runs the steps it is given and prints what it saw
// as one JSON object on stdout. tests/acp/test_acp_ts_client.py drives it.
//
// usage: node ts_client.mjs NODE_MODULES_DIR SCENARIO_JSON
//   scenario: {command: [...], cwd, steps: [{do: "new" | "mode" | "prompt" | "cancel_prompt" | "load", ...}]}
//   a prompt's `answers` are the permission option ids to pick in order; `instead` is the text the
//   editor's form answers when asked what to do instead.
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";

const [modulesDir, scenarioJson] = process.argv.slice(2);
const resolve = createRequire(join(modulesDir, "resolve.js")).resolve;
const acp = await import(pathToFileURL(resolve("@agentclientprotocol/sdk")).href);
const scenario = JSON.parse(scenarioJson);

const seen = { updates: [], questions: [], forms: [], results: [] };
let answers = [];
let instead = null;
let firstWords = null; // resolves at the next agent message chunk

const child = spawn(scenario.command[0], scenario.command.slice(1), {
  cwd: scenario.cwd,
  stdio: ["pipe", "pipe", "inherit"],
});
const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));

const editor = acp
  .client()
  .onRequest("session/request_permission", async ({ params }) => {
    seen.questions.push(params);
    return { outcome: { outcome: "selected", optionId: answers.shift() } };
  })
  .onRequest("elicitation/create", async ({ params }) => {
    seen.forms.push(params);
    return { action: "accept", content: { instead } };
  })
  .onNotification("session/update", async ({ params }) => {
    seen.updates.push(params);
    if (params.update.sessionUpdate === "agent_message_chunk" && firstWords) {
      firstWords.resolve();
      firstWords = null;
    }
  });

await editor.connectWith(stream, async (agent) => {
  seen.initialize = await agent.request("initialize", {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { elicitation: { form: {} } },
    clientInfo: { name: "ts-test-editor", version: "1" },
  });
  let sessionId = null;
  for (const step of scenario.steps) {
    if (step.do === "new") {
      const created = await agent.request("session/new", { cwd: scenario.cwd, mcpServers: [] });
      sessionId = created.sessionId;
      seen.results.push(created);
    } else if (step.do === "load") {
      sessionId = step.sessionId;
      const loaded = await agent.request("session/load", { cwd: scenario.cwd, sessionId, mcpServers: [] });
      seen.results.push(loaded);
    } else if (step.do === "mode") {
      seen.results.push(await agent.request("session/set_mode", { sessionId, modeId: step.mode }));
    } else if (step.do === "prompt") {
      answers = [...(step.answers || [])];
      instead = step.instead || null;
      const prompt = [{ type: "text", text: step.text }];
      seen.results.push(await agent.request("session/prompt", { sessionId, prompt }));
    } else if (step.do === "cancel_prompt") {
      const words = new Promise((done) => (firstWords = { resolve: done }));
      const prompt = [{ type: "text", text: step.text }];
      const reply = agent.request("session/prompt", { sessionId, prompt });
      await words;
      await agent.notify("session/cancel", { sessionId });
      seen.results.push(await reply);
    }
  }
  seen.sessionId = sessionId;
});
child.stdin.end();
const code = await new Promise((done) => child.on("exit", done));
seen.exitCode = code;
process.stdout.write(JSON.stringify(seen) + "\n");
