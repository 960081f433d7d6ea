// The MCP conformance suite (@modelcontextprotocol/conformance) against `lousho mcp` as the
// client under test, for the client scenarios lousho supports. Not run: elicitation (lousho
// offers no elicitation capability) and auth/* (no OAuth yet).
import test from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { e2eDir, loushoBin, assertBinary } from "./lib/env.mjs";

const suite = path.join(e2eDir, "node_modules/@modelcontextprotocol/conformance/dist/index.js");
const client = path.join(e2eDir, "fixtures/conformance-client.sh");

for (const scenario of ["initialize", "tools_call", "sse-retry"]) {
  test(`MCP conformance: ${scenario}`, { timeout: 60000 }, () => {
    assertBinary();
    const out = fs.mkdtempSync(path.join(os.tmpdir(), "lousho-conformance-"));
    try {
      const r = spawnSync(process.execPath, [suite, "client", "--command", client, "--scenario", scenario, "-o", out], {
        env: { ...process.env, LOUSHO_BIN: loushoBin },
        encoding: "utf8",
        timeout: 55000,
      });
      const text = (r.stdout ?? "") + (r.stderr ?? "");
      assert.equal(r.status, 0, text);
      assert.match(text, /OVERALL: PASSED/, text);
      assert.match(text, /0 failed/, text);
    } finally {
      fs.rmSync(out, { recursive: true, force: true });
    }
  });
}
