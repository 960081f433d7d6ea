// What the ACP registry and Zed check before they take lousho: the registry entry against the
// registry's schema and URL rules, the icon rules, the registry's auth check on the built
// binary (minimal environment, fresh HOME, one stdout line, an agent or terminal auth method),
// the settings snippets of zed/, and login through the official SDK (authenticate).
import test from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { spawn, execFileSync } from "node:child_process";
import Ajv from "ajv";
import * as acp from "@agentclientprotocol/sdk";
import { AgentProcess } from "./lib/agent-process.mjs";
import { loushoBin, repoRoot, e2eDir, assertBinary } from "./lib/env.mjs";

const zedDir = path.join(repoRoot, "zed");
const entryPath = path.join(zedDir, "registry/lousho/agent.json");
const cmakeVersion = fs
  .readFileSync(path.join(repoRoot, "CMakeLists.txt"), "utf8")
  .match(/project\(lousho VERSION ([0-9]+\.[0-9]+\.[0-9]+)/)[1];

// The environment the registry's client.py gives an agent: PATH, TMP*, XDG_*, TERM=dumb and a
// fresh HOME, nothing else (no keys).
function registryEnv(home) {
  const env = { PATH: "/usr/bin:/bin", TERM: "dumb", HOME: home };
  for (const k of Object.keys(process.env)) {
    if (/^(TMP|TEMP|TMPDIR|XDG_)/.test(k) && k !== "XDG_CONFIG_HOME") env[k] = process.env[k];
  }
  return env;
}
const freshDir = (p) => fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), p)));

// The registry's initialize (client.py): these capabilities, no auth.terminal.
const registryInit = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: {
    protocolVersion: 1,
    clientCapabilities: {
      fs: { readTextFile: true, writeTextFile: true },
      terminal: true,
      _meta: { terminal_output: true, "terminal-auth": true },
    },
    clientInfo: { name: "registry-auth-check", version: "1.0.0" },
  },
};

// How the registry classifies an auth method: `type`, else _meta terminal-auth / agent-auth,
// else agent.
function authType(m) {
  if (typeof m.type === "string") return m.type;
  if (m._meta?.["terminal-auth"]) return "terminal";
  return "agent";
}

test("agent.json validates against the registry schema and its URL rules", () => {
  const schema = JSON.parse(fs.readFileSync(path.join(e2eDir, "fixtures/registry/agent.schema.json"), "utf8"));
  const ajv = new Ajv({ allErrors: true, strict: false });
  ajv.addFormat("uri", (s) => {
    try {
      return Boolean(new URL(s).protocol);
    } catch {
      return false;
    }
  });
  const entry = JSON.parse(fs.readFileSync(entryPath, "utf8"));
  const validate = ajv.compile(schema);
  assert.ok(validate(entry), JSON.stringify(validate.errors, null, 2));
  // build_registry.py: id = folder name, version x.y.z, /download/v<version>/ in every URL, no
  // /latest/; Zed: cmd must start with ./
  assert.equal(entry.id, path.basename(path.dirname(entryPath)));
  assert.equal(entry.version, cmakeVersion, "the entry's version is CMake's project(VERSION)");
  assert.equal(execFileSync(loushoBin, ["--version"], { encoding: "utf8" }).trim(), `lousho ${cmakeVersion}`);
  const targets = Object.entries(entry.distribution.binary);
  assert.ok(targets.length >= 1);
  for (const [platform, t] of targets) {
    assert.ok(t.archive.includes(`/download/v${entry.version}/`), t.archive);
    assert.ok(!t.archive.includes("/latest/"), t.archive);
    assert.ok(t.archive.endsWith(`/lousho-${entry.version}-${platform}.tar.gz`), t.archive);
    assert.equal(t.cmd, "./lousho");
    assert.deepEqual(t.args, ["acp"]);
  }
  // The same validator rejects what the registry rejects.
  assert.equal(validate({ ...entry, id: "Lousho" }), false);
  assert.equal(validate({ ...entry, distribution: { binary: { "linux-riscv": targets[0][1] } } }), false);
  // scripts/zed_files.py agrees (no drift between CMake, agent.json and extension.toml).
  execFileSync("python3", [path.join(repoRoot, "scripts/zed_files.py"), "--check"], { stdio: "pipe" });
  const toml = fs.readFileSync(path.join(zedDir, "extension/extension.toml"), "utf8");
  assert.match(toml, new RegExp(`^version = "${cmakeVersion}"$`, "m"));
  for (const [platform, t] of targets) {
    assert.ok(toml.includes(`[agent_servers.lousho.targets.${platform}]\narchive = "${t.archive}"`), platform);
  }
});

// build_registry.py validate_icon: valid SVG, square 16x16, fill/stroke only currentColor, none
// or inherit, currentColor used at least once, no comments (and Zed's: no gradients).
function iconProblems(svg) {
  const problems = [];
  if (svg.includes("<!--")) problems.push("has a comment");
  const root = svg.match(/<svg\b[^>]*>/);
  if (!root || !svg.trimEnd().endsWith("</svg>")) return ["not an <svg> document"];
  const attr = (name) => root[0].match(new RegExp(`\\s${name}="([^"]*)"`))?.[1];
  const square16 =
    (attr("width") === "16" && attr("height") === "16") || attr("viewBox")?.trim() === "0 0 16 16";
  if (!square16) problems.push("not 16x16");
  if (attr("width") && attr("height") && attr("width") !== attr("height")) problems.push("not square");
  if (/<(linearGradient|radialGradient|image)\b/.test(svg)) problems.push("gradient or bitmap");
  const colours = [
    ...[...svg.matchAll(/\s(fill|stroke)="([^"]*)"/g)].map((m) => m[2]),
    ...[...svg.matchAll(/(fill|stroke)\s*:\s*([^;"]+)/g)].map((m) => m[2].trim()),
  ];
  for (const c of colours) {
    if (!["currentColor", "none", "inherit"].includes(c)) problems.push(`colour ${c}`);
  }
  if (!colours.includes("currentColor")) problems.push("never uses currentColor");
  // Every tag closes: a cheap well-formedness check (no XML parser in the test's packages).
  const opened = [...svg.matchAll(/<([a-zA-Z]+)\b[^>]*?(\/?)>/g)].filter((m) => m[2] !== "/").map((m) => m[1]);
  const closed = [...svg.matchAll(/<\/([a-zA-Z]+)>/g)].map((m) => m[1]);
  if (opened.sort().join() !== closed.sort().join()) problems.push("unbalanced tags");
  return problems;
}

test("the icon follows the registry's rules (and the checker catches breaking them)", () => {
  const icon = fs.readFileSync(path.join(zedDir, "registry/lousho/icon.svg"), "utf8");
  assert.deepEqual(iconProblems(icon), []);
  assert.equal(fs.readFileSync(path.join(zedDir, "extension/icon/lousho.svg"), "utf8"), icon);
  assert.ok(iconProblems(icon.replace("currentColor", "#ff0000")).includes("colour #ff0000"));
  assert.ok(iconProblems(icon.replace('width="16"', 'width="24"').replace("0 0 16 16", "0 0 24 24")).includes("not 16x16"));
  assert.ok(iconProblems(icon.replace("<path", "<!-- x --><path")).includes("has a comment"));
});

test("the registry's auth check: bare environment, one stdout line, an agent or terminal method", async () => {
  assertBinary();
  const home = freshDir("lousho-reg-home-");
  const project = freshDir("lousho-reg-project-");
  const child = spawn(loushoBin, ["acp"], { cwd: project, env: registryEnv(home), stdio: ["pipe", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d) => (stdout += d));
  child.stderr.on("data", (d) => (stderr += d));
  const exited = new Promise((r) => child.on("exit", (code) => r(code)));
  child.stdin.write(JSON.stringify(registryInit) + "\n");
  // client.py reads one line, then is done with the agent.
  for (let i = 0; i < 600 && !stdout.includes("\n"); i++) await new Promise((r) => setTimeout(r, 10));
  child.stdin.end();
  assert.equal(await exited, 0, stderr);
  fs.rmSync(home, { recursive: true, force: true });
  fs.rmSync(project, { recursive: true, force: true });
  const lines = stdout.split("\n").filter((l) => l !== "");
  assert.equal(lines.length, 1, `exactly one stdout line, got: ${stdout}`);
  const msg = JSON.parse(lines[0]);
  assert.equal(msg.id, 1);
  const methods = msg.result.authMethods;
  assert.ok(methods.length > 0, "authMethods must not be empty");
  assert.ok(methods.some((m) => ["agent", "terminal"].includes(authType(m))), JSON.stringify(methods));
  // The legacy terminal-auth form runs this program itself.
  const legacy = methods.find((m) => m._meta?.["terminal-auth"]);
  assert.ok(legacy, "the client announced terminal-auth");
  assert.equal(fs.realpathSync(legacy._meta["terminal-auth"].command), fs.realpathSync(loushoBin));
  assert.deepEqual(legacy._meta["terminal-auth"].args, ["setup"]);
  assert.equal(msg.result.agentInfo.version, cmakeVersion);
});

test("the registry's smoke test: stdin closed, exit 0", async () => {
  const home = freshDir("lousho-reg-smoke-");
  const child = spawn(loushoBin, ["acp"], { cwd: home, env: registryEnv(home), stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  child.stdout.on("data", (d) => (stdout += d));
  const code = await new Promise((r) => child.on("exit", r));
  fs.rmSync(home, { recursive: true, force: true });
  assert.equal(code, 0);
  assert.equal(stdout, "");
});

// JSONC as Zed reads it: // and /* */ comments, trailing commas.
function parseJsonc(text) {
  let out = "";
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
      out += text.slice(i, j + 1);
      i = j;
    } else if (c === "/" && text[i + 1] === "/") {
      while (i < text.length && text[i] !== "\n") i++;
      out += "\n";
    } else if (c === "/" && text[i + 1] === "*") {
      i = text.indexOf("*/", i + 2) + 1;
    } else {
      out += c;
    }
  }
  return JSON.parse(out.replace(/,(\s*[}\]])/g, "$1"));
}

function checkCustomEntry(entry, where) {
  assert.equal(entry.type, "custom", `${where}: "type" is required`);
  assert.equal(typeof entry.command, "string", where);
  assert.equal(entry.args[0], "acp", where);
  assert.equal(typeof entry.env, "object", where);
  assert.ok(["default", "accept-edits", "plan", "bypass"].includes(entry.default_mode), where);
}

test("the Zed snippets of zed/README.md and settings.example.jsonc parse and match lousho", async () => {
  const readme = fs.readFileSync(path.join(zedDir, "README.md"), "utf8");
  const blocks = [...readme.matchAll(/```jsonc?\n([\s\S]*?)```/g)].map((m) => m[1]);
  assert.ok(blocks.length >= 2);
  const parsed = blocks.map((b) => parseJsonc(b));
  const custom = parsed.find((p) => p.agent_servers?.lousho?.type === "custom")?.agent_servers.lousho;
  assert.ok(custom, "the README has a custom agent_servers entry");
  checkCustomEntry(custom, "README");
  for (const key of ["env", "default_mode", "default_model", "default_config_options"]) {
    assert.ok(key in custom, `README snippet has ${key}`);
  }
  assert.ok(parsed.some((p) => p.agent_servers?.lousho?.type === "registry"));
  const example = parseJsonc(fs.readFileSync(path.join(zedDir, "settings.example.jsonc"), "utf8"));
  for (const [name, entry] of Object.entries(example.agent_servers)) checkCustomEntry(entry, name);
  assert.throws(() => parseJsonc('{"a": 1 // x\n "b": 2}'), SyntaxError, "the JSONC reader is not lax");

  // Zed launches `command args` with `env`: the README's entry answers initialize and reports
  // the mode it names.
  const home = freshDir("lousho-snippet-");
  const agent = new AgentProcess({
    spec: null,
    args: custom.args.slice(1),
    rawEnv: { ...registryEnv(home), ...custom.env, LOUSHO_TEST_MODE: "1" },
    cwd: home,
  });
  try {
    await new Promise((resolve, reject) => {
      acp
        .client({ name: "zed-like" })
        .connectWith(agent.sdkStream(acp), async (ctx) => {
          await ctx.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
          const s = await ctx.request(acp.methods.agent.session.new, { cwd: home, mcpServers: [] });
          assert.ok(s.modes.availableModes.some((m) => m.id === custom.default_mode));
          await ctx.request(acp.methods.agent.session.setMode, { sessionId: s.sessionId, modeId: custom.default_mode });
        })
        .then(resolve, reject);
    });
  } finally {
    await agent.kill();
    fs.rmSync(home, { recursive: true, force: true });
  }
});

test("login through the SDK: -32000 names what to do, authenticate picks up lousho setup's file", async () => {
  const home = freshDir("lousho-login-");
  const agent = new AgentProcess({ spec: null, rawEnv: { ...registryEnv(home), LOUSHO_TEST_MODE: "1" }, cwd: home });
  try {
    await new Promise((resolve, reject) => {
      acp
        .client({ name: "zed-like" })
        .connectWith(agent.sdkStream(acp), async (ctx) => {
          const init = await ctx.request(acp.methods.agent.initialize, {
            protocolVersion: 1,
            clientCapabilities: { auth: { terminal: true } },
          });
          const terminal = init.authMethods.find((m) => m.type === "terminal");
          assert.deepEqual(terminal.args, ["--setup"], "Zed appends these to `lousho acp`");
          const agentMethod = init.authMethods.find((m) => m.type === undefined);
          await assert.rejects(ctx.request(acp.methods.agent.session.new, { cwd: home, mcpServers: [] }), (e) => {
            assert.equal(e.code, -32000);
            assert.match(e.message, /set ANTHROPIC_API_KEY or OPENAI_API_KEY .* or run `lousho setup` in a terminal/);
            return true;
          });
          // What `lousho setup` leaves behind for a local server (no network needed to use it).
          fs.mkdirSync(path.join(home, ".config/lousho"), { recursive: true });
          fs.writeFileSync(
            path.join(home, ".config/lousho/credentials.json"),
            JSON.stringify({ model: "openai-compatible/m", env: { OPENAI_BASE_URL: "http://127.0.0.1:9/v1" } }),
            { mode: 0o600 },
          );
          await ctx.request(acp.methods.agent.authenticate, { methodId: agentMethod.id });
          const s = await ctx.request(acp.methods.agent.session.new, { cwd: home, mcpServers: [] });
          assert.equal(typeof s.sessionId, "string");
        })
        .then(resolve, reject);
    });
    assert.equal(agent.wire.problems.length, 0, agent.wire.report());
  } finally {
    await agent.kill();
    fs.rmSync(home, { recursive: true, force: true });
  }
});
