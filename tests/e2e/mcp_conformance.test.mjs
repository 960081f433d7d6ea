// The MCP conformance suite (@modelcontextprotocol/conformance, pinned in package.json) runs its
// client scenarios against `lousho mcp conformance-client` at both revisions lousho speaks,
// 2025-11-25 (the initialize handshake) and 2026-07-28 (stateless), suites core, metadata and
// auth. docs/mcp-conformance-<revision>.yaml (--expected-failures) is empty at both revisions:
// every scenario must pass. A scenario listed there (with its reason) may fail; the run fails on
// anything else failing, and on a listed scenario that now passes (the list must shrink).
import test from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { e2eDir, loushoBin, assertBinary } from "./lib/env.mjs";

const suite = path.join(e2eDir, "node_modules/@modelcontextprotocol/conformance/dist/index.js");
const client = path.join(e2eDir, "fixtures/conformance-client.sh");
const docs = path.join(e2eDir, "../../docs");

for (const revision of ["2025-11-25", "2026-07-28"]) {
  for (const name of ["core", "metadata", "auth"]) {
    test(`MCP conformance ${revision}: ${name}`, { timeout: 240000 }, () => {
      assertBinary();
      const out = fs.mkdtempSync(path.join(os.tmpdir(), "lousho-conformance-"));
      const baseline = path.join(docs, `mcp-conformance-${revision}.yaml`);
      const args = [suite, "client", "--command", client, "--suite", name, "--spec-version", revision, "-o", out];
      if (fs.existsSync(baseline)) args.push("--expected-failures", baseline);
      try {
        const r = spawnSync(process.execPath, args, {
          env: { ...process.env, LOUSHO_BIN: loushoBin },
          encoding: "utf8",
          timeout: 230000,
        });
        const text = (r.stdout ?? "") + (r.stderr ?? "");
        const summary = text.slice(text.lastIndexOf("=== SUITE SUMMARY ==="));
        assert.equal(r.status, 0, summary || text);
        assert.match(summary, /Total: [1-9]\d* passed/, text);
      } finally {
        fs.rmSync(out, { recursive: true, force: true });
      }
    });
  }
}
