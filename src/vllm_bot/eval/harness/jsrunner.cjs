"use strict";
// Runs an eval task's JavaScript tests, started by check.py with node and an environment without
// NODE_OPTIONS or NODE_PATH. Reads the nonce (the first line of stdin) and the tests' sources (the
// rest, JSON) before anything of the workspace runs; each test file registers its tests with the
// global `test(name, fn)` (fn may be async); the files are compiled from those sources, so their
// `require("./x.js")` loads the workspace's code. Every registered test runs in order, then one
// end-of-run line goes to stdout: `@@vllm-bot-eval NONCE ran=N passed=M`. Code under test that calls
// process.exit() (or throws at load) ends the run before that line: the check then fails.
const fs = require("node:fs");
const path = require("node:path");
const Module = require("node:module");

const RESULT = "@@vllm-bot-eval";
const writeSync = fs.writeSync;
const input = fs.readFileSync(0, "utf8");
fs.closeSync(0);
const firstLine = input.indexOf("\n");
const nonce = input.slice(0, firstLine).trim();
const files = JSON.parse(input.slice(firstLine + 1));
const workspace = fs.realpathSync(process.cwd());
const tests = [];

// `test` cannot be replaced or wrapped by the code under test (which loads before a file's own
// test() calls), and the assert modules cannot be changed: either made an unsolved task pass.
Object.defineProperty(globalThis, "test", {
  value: (name, fn) => {
    tests.push({ name: String(name), fn });
  },
  writable: false,
  configurable: false,
});
for (const name of ["node:assert", "node:assert/strict"]) {
  const assert = require(name);
  Object.freeze(assert);
  Object.freeze(assert.AssertionError);
  Object.freeze(assert.AssertionError.prototype);
}

for (const file of files) {
  const filename = path.join(workspace, file.path);
  const mod = new Module(filename, null);
  mod.filename = filename;
  mod.paths = Module._nodeModulePaths(path.dirname(filename));
  try {
    mod._compile(file.source, filename);
  } catch (error) {
    console.error(`${file.path} did not load:`, error);
  }
}

(async () => {
  const registered = tests.slice();
  let passed = 0;
  for (const [index, t] of registered.entries()) {
    try {
      await t.fn();
      passed += 1;
      console.log(`ok ${index + 1} - ${t.name}`);
    } catch (error) {
      console.log(`not ok ${index + 1} - ${t.name}`);
      console.error(error);
    }
  }
  writeSync(1, `${RESULT} ${nonce} ran=${registered.length} passed=${passed}\n`);
})();
