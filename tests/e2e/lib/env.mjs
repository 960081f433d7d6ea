// Where things are: the repo, the lousho binary, the ACP schema, the demo agent.
import path from "node:path";
import fs from "node:fs";
import os from "node:os";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
export const e2eDir = path.resolve(here, "..");
export const repoRoot = path.resolve(e2eDir, "../..");

export const loushoBin = path.resolve(process.env.LOUSHO_BIN || path.join(repoRoot, "build/lousho"));
// The v1 stable schema bundled with the pinned ACP SDK package, so the tests need nothing
// beside the repo.
export const schemaPath = path.resolve(
  process.env.LOUSHO_ACP_SCHEMA ||
    path.join(e2eDir, "node_modules/@agentclientprotocol/sdk/schema/v1/schema.json"),
);
export const demoDir = path.join(repoRoot, "examples/demo");
export const demoSpec = path.join(demoDir, "agent.yaml");

export function assertBinary() {
  if (!fs.existsSync(loushoBin)) {
    throw new Error(`lousho binary not found at ${loushoBin} (build it or set LOUSHO_BIN)`);
  }
}

// A fresh temp dir holding a copy of examples/demo/notes.txt: the session cwd.
export function makeWorkspace(prefix = "lousho-e2e-") {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
  fs.copyFileSync(path.join(demoDir, "notes.txt"), path.join(dir, "notes.txt"));
  return dir;
}

export function rmWorkspace(dir) {
  fs.rmSync(dir, { recursive: true, force: true });
}

// A fresh temp dir (real path) removed when test `t` ends, passed or failed. t.after hooks run
// in the order they were registered, so a dir made before an agent is removed before that agent
// is killed: the retries cover a file the dying agent still writes meanwhile.
const removeDir = (dir) => fs.rmSync(dir, { recursive: true, force: true, maxRetries: 3 });

export function tempDir(t, prefix = "lousho-e2e-") {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
  t.after(() => removeDir(dir));
  return dir;
}

// makeWorkspace() removed when test `t` ends, passed or failed.
export function workspace(t) {
  const dir = makeWorkspace();
  t.after(() => removeDir(dir));
  return dir;
}

// Session files of this test run go to a temp LOUSHO_HOME, never to the user's ~/.lousho.
let runHome;
function testHome() {
  if (!runHome) {
    runHome = fs.mkdtempSync(path.join(os.tmpdir(), "lousho-e2e-home-"));
    process.on("exit", () => fs.rmSync(runHome, { recursive: true, force: true }));
  }
  return runHome;
}

// Environment for the child: deterministic ids, no stray provider keys from the host, session
// files in a temp home.
export function childEnv(extra = {}) {
  const env = { ...process.env, LOUSHO_TEST_MODE: "1", LOUSHO_HOME: testHome() };
  for (const k of Object.keys(env)) {
    if (/^(OPENAI|ANTHROPIC)_/.test(k)) delete env[k];
  }
  return { ...env, ...extra };
}
