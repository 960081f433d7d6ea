// What the ACP registry and Zed check before they take lousho: the registry entry against the
// registry's schema and URL rules, the icon rules, the registry's auth check on the built
// binary (minimal environment, fresh HOME, one stdout line, an agent or terminal auth method),
// the settings snippets of zed/, and login through the official SDK (authenticate).
import test from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import crypto from "node:crypto";
import http from "node:http";
import { spawn, spawnSync, execFileSync } from "node:child_process";
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
  // lousho reports config options, so Zed ignores default_mode / default_model: the docs use
  // default_config_options, with lousho's option ids.
  assert.ok(!("default_mode" in entry) && !("default_model" in entry), `${where}: default_config_options, not default_mode/default_model`);
  assert.equal(typeof entry.default_config_options, "object", where);
  for (const id of Object.keys(entry.default_config_options)) {
    assert.ok(["mode", "model", "thought_level"].includes(id), `${where}: unknown config option ${id}`);
  }
  assert.ok(["default", "accept-edits", "plan", "bypass"].includes(entry.default_config_options.mode), where);
}

test("the Zed snippets of zed/README.md and settings.example.jsonc parse and match lousho", async () => {
  const readme = fs.readFileSync(path.join(zedDir, "README.md"), "utf8");
  const blocks = [...readme.matchAll(/```jsonc?\n([\s\S]*?)```/g)].map((m) => m[1]);
  assert.ok(blocks.length >= 2);
  const parsed = blocks.map((b) => parseJsonc(b));
  const custom = parsed.find((p) => p.agent_servers?.lousho?.type === "custom")?.agent_servers.lousho;
  assert.ok(custom, "the README has a custom agent_servers entry");
  checkCustomEntry(custom, "README");
  for (const key of ["env", "default_config_options"]) {
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
          // What Zed does with default_config_options: each value lousho offers is set.
          const offered = Object.fromEntries(s.configOptions.map((o) => [o.id, o.options.map((v) => v.value)]));
          for (const [configId, value] of Object.entries(custom.default_config_options)) {
            if (configId === "model") continue; // the models offered depend on the keys present
            assert.ok(offered[configId]?.includes(value), `${configId}=${value} offered: ${offered[configId]}`);
            const res = await ctx.request(acp.methods.agent.session.setConfigOption, { sessionId: s.sessionId, configId, value });
            assert.equal(res.configOptions.find((o) => o.id === configId).currentValue, value);
          }
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

// --- The workflow's publishing steps, run here on this machine's archive (scripts/registry-entry,
// scripts/registry-check): every platform filled (placeholders for those built elsewhere), the
// registry's checks passing on the real archive, and failing where the registry would. ---

const hostPlatform = () => {
  const os = { linux: "linux", darwin: "darwin" }[process.platform];
  const arch = { x64: "x86_64", arm64: "aarch64" }[process.arch];
  return `${os}-${arch}`;
};
const sha256 = (file) => crypto.createHash("sha256").update(fs.readFileSync(file)).digest("hex");
const runScript = (name, args) =>
  spawnSync(path.join(repoRoot, "scripts", name), args, { encoding: "utf8", timeout: 120000 });

// An archive as scripts/release packs it (lousho and its HTTP module at the root) from `dir`.
function packArchive(dist, dir, files) {
  const name = `lousho-${cmakeVersion}-${hostPlatform()}.tar.gz`;
  const archive = path.join(dist, name);
  execFileSync("tar", ["-czf", archive, "-C", dir, ...files]);
  fs.writeFileSync(`${archive}.sha256`, `${sha256(archive)}  ${name}\n`);
  return archive;
}

test("registry-entry fills all four platforms from the archives; registry-check passes on this one", () => {
  assertBinary();
  const dist = freshDir("lousho-reg-dist-");
  const out = freshDir("lousho-reg-out-");
  try {
    const archive = packArchive(dist, path.dirname(loushoBin), ["lousho", "liblousho_http.so"]);
    // Without every platform's sum the entry is refused (the workflow's publish job)...
    const refused = runScript("registry-entry", ["--sums", dist, "--out", out]);
    assert.equal(refused.status, 1);
    assert.match(refused.stderr, /has no sum for .*darwin-aarch64\.tar\.gz\.sha256/);
    // ...and with --placeholders the others get 64 zeros.
    const made = runScript("registry-entry", ["--sums", dist, "--out", out, "--placeholders"]);
    assert.equal(made.status, 0, made.stderr);
    const entryFile = path.join(out, "lousho/agent.json");
    const entry = JSON.parse(fs.readFileSync(entryFile, "utf8"));
    const binary = entry.distribution.binary;
    assert.deepEqual(Object.keys(binary).sort(), ["darwin-aarch64", "darwin-x86_64", "linux-aarch64", "linux-x86_64"]);
    for (const [platform, t] of Object.entries(binary)) {
      assert.equal(t.sha256, platform === hostPlatform() ? sha256(archive) : "0".repeat(64), platform);
    }
    assert.ok(fs.readFileSync(path.join(out, "extension.toml"), "utf8").includes(`sha256 = "${sha256(archive)}"`));
    const schema = JSON.parse(fs.readFileSync(path.join(e2eDir, "fixtures/registry/agent.schema.json"), "utf8"));
    const validate = new Ajv({ allErrors: true, strict: false, validateFormats: false }).compile(schema);
    assert.ok(validate(entry), JSON.stringify(validate.errors));

    const ok = runScript("registry-check", [entryFile, "--archives", dist]);
    assert.equal(ok.status, 0, ok.stderr);
    assert.match(ok.stdout, new RegExp(`ok \\(${hostPlatform()} archive run\\)`));

    // A changed archive no longer matches its sum.
    fs.appendFileSync(archive, "x");
    const tampered = runScript("registry-check", [entryFile, "--archives", dist]);
    assert.equal(tampered.status, 1);
    assert.match(tampered.stderr, /has sha256 [0-9a-f]{64}, the entry says/);
  } finally {
    fs.rmSync(dist, { recursive: true, force: true });
    fs.rmSync(out, { recursive: true, force: true });
  }
});

test("registry-check fails an agent that writes non-JSON, a broken icon, and URLs that do not answer", async () => {
  const dist = freshDir("lousho-reg-bad-");
  const out = freshDir("lousho-reg-badout-");
  const server = http.createServer((req, res) => {
    const file = path.join(dist, path.basename(new URL(req.url, "http://x").pathname));
    res.writeHead(fs.existsSync(file) ? 200 : 404).end();
  });
  try {
    // A "lousho" that greets on stdout instead of answering initialize.
    const fake = path.join(dist, "fake");
    fs.mkdirSync(fake);
    fs.writeFileSync(path.join(fake, "lousho"), "#!/bin/sh\necho hello\nsleep 1\n", { mode: 0o755 });
    packArchive(dist, fake, ["lousho"]);
    assert.equal(runScript("registry-entry", ["--sums", dist, "--out", out, "--placeholders"]).status, 0);
    const entryFile = path.join(out, "lousho/agent.json");
    const bad = runScript("registry-check", [entryFile, "--archives", dist]);
    assert.equal(bad.status, 1);
    assert.match(bad.stderr, /auth check: the agent wrote non-JSON to stdout: hello/);

    const icon = path.join(out, "lousho/icon.svg");
    fs.writeFileSync(icon, fs.readFileSync(icon, "utf8").replace("currentColor", "#ff0000"));
    const badIcon = runScript("registry-check", [entryFile]);
    assert.equal(badIcon.status, 1);
    assert.match(badIcon.stderr, /icon: colour #ff0000/);
    fs.copyFileSync(path.join(zedDir, "registry/lousho/icon.svg"), icon);

    // --urls: the entry's URLs moved to a loopback server holding only this platform's archive.
    await new Promise((r) => server.listen(0, "127.0.0.1", r));
    const base = `http://127.0.0.1:${server.address().port}/download/v${cmakeVersion}/`;
    const entry = JSON.parse(fs.readFileSync(entryFile, "utf8"));
    for (const t of Object.values(entry.distribution.binary)) t.archive = base + path.basename(t.archive);
    fs.writeFileSync(entryFile, JSON.stringify(entry));
    const urls = spawn(path.join(repoRoot, "scripts/registry-check"), [entryFile, "--urls"]);
    let stderr = "";
    urls.stderr.on("data", (d) => (stderr += d));
    const code = await new Promise((r) => urls.on("exit", r));
    assert.equal(code, 1);
    assert.equal(stderr.match(/answered 404/g)?.length, 3, stderr);
    assert.ok(!stderr.includes(hostPlatform() + ":"), stderr);
  } finally {
    server.close();
    fs.rmSync(dist, { recursive: true, force: true });
    fs.rmSync(out, { recursive: true, force: true });
  }
});
