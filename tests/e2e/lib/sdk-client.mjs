// A recording ACP client on the official SDK 2.x app API.
import { readFile, writeFile } from "node:fs/promises";
import * as acp from "@agentclientprotocol/sdk";
import { startAgent, finishAgent } from "./agent-process.mjs";

// The editor side of fs/read_text_file and fs/write_text_file, on the real disk.
export async function serveReadTextFile(params) {
  const lines = (await readFile(params.path, "utf8")).split("\n");
  const start = (params.line ?? 1) - 1;
  return { content: lines.slice(start, params.limit ? start + params.limit : undefined).join("\n") };
}

export async function serveWriteTextFile(params) {
  await writeFile(params.path, params.content);
  return {};
}

export { acp };

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Runs `body(session)` inside a connection to `agent` (an AgentProcess). `session` offers
// newSession(cwd, mcpServers = []), prompt(sessionId, text, {cancelAfterMs, cancelOn}) -> {res|error, events, ms},
// waitFor(pred, what, ms) (the first update that fits, seen or to come, within ms), and `events` (every update /
// permission request, in arrival order).
export async function withClient(agent, body, { permission = "allow_once", fs = true } = {}) {
  const events = [];
  const waiters = new Set();
  const app = acp
    .client({ name: "lousho-e2e" })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      const e = { kind: "update", sessionId: params.sessionId, update: params.update, t: performance.now() };
      events.push(e);
      for (const w of [...waiters]) w(e);
    })
    .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
      const opt = params.options.find((o) => o.kind === permission);
      events.push({ kind: "permission", params, choice: opt?.optionId });
      return opt ? { outcome: { outcome: "selected", optionId: opt.optionId } } : { outcome: { outcome: "cancelled" } };
    })
    .onRequest(acp.methods.client.fs.readTextFile, ({ params }) => serveReadTextFile(params))
    .onRequest(acp.methods.client.fs.writeTextFile, ({ params }) => serveWriteTextFile(params));

  return app.connectWith(agent.sdkStream(acp), async (ctx) => {
    const init = await ctx.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: { fs: { readTextFile: fs, writeTextFile: fs }, terminal: false },
      clientInfo: { name: "lousho-e2e", version: "0.0.0" },
    });
    const api = {
      init,
      events,
      request: (method, params) => ctx.request(method, params),
      async newSession(cwd, mcpServers = []) {
        return (await ctx.request(acp.methods.agent.session.new, { cwd, mcpServers })).sessionId;
      },
      cancel(sessionId) {
        ctx.notify(acp.methods.agent.session.cancel, { sessionId });
      },
      // The first update (seen or to come) for which pred(event) holds; rejects naming `what`
      // after `ms`.
      waitFor(pred, what = "an update", ms = 60000) {
        const seen = events.find((e) => e.kind === "update" && pred(e));
        if (seen) return Promise.resolve(seen);
        return new Promise((resolve, reject) => {
          const timer = setTimeout(() => {
            waiters.delete(w);
            reject(new Error(`no ${what} within ${ms} ms`));
          }, ms);
          const w = (e) => {
            if (!pred(e)) return;
            clearTimeout(timer);
            waiters.delete(w);
            resolve(e);
          };
          waiters.add(w);
        });
      },
      // cancelOn(event) -> true: cancel right after that update arrives.
      async prompt(sessionId, text, { cancelAfterMs, cancelOn } = {}) {
        const mark = events.length;
        const t0 = performance.now();
        let cancelledAt;
        if (cancelAfterMs) {
          setTimeout(() => {
            cancelledAt = performance.now();
            api.cancel(sessionId);
          }, cancelAfterMs);
        }
        let w;
        if (cancelOn) {
          w = (e) => {
            if (e.sessionId === sessionId && cancelOn(e)) {
              waiters.delete(w);
              cancelledAt = performance.now();
              api.cancel(sessionId);
            }
          };
          waiters.add(w);
        }
        const out = {};
        try {
          out.res = await ctx.request(acp.methods.agent.session.prompt, {
            sessionId,
            prompt: [{ type: "text", text }],
          });
        } catch (error) {
          out.error = error;
        } finally {
          if (w) waiters.delete(w);
        }
        const tEnd = performance.now();
        return {
          ...out,
          events: events.slice(mark).filter((e) => e.kind !== "update" || e.sessionId === sessionId),
          ms: tEnd - t0,
          afterCancelMs: cancelledAt ? tEnd - cancelledAt : undefined,
        };
      },
    };
    return body(api);
  });
}

// A bare connection: only session/update is handled (no fs, no permission answers), and
// initialize announces exactly `clientCapabilities`. Runs `body(ctx, updates)`, where ctx is the
// SDK's connection and `updates` every session/update's `update`, in arrival order.
export async function withBareClient(agent, clientCapabilities, body) {
  const updates = [];
  const app = acp.client({ name: "lousho-e2e" }).onNotification(acp.methods.client.session.update, ({ params }) => {
    updates.push(params.update);
  });
  return app.connectWith(agent.sdkStream(acp), async (ctx) => {
    await ctx.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities,
      clientInfo: { name: "lousho-e2e", version: "0.0.0" },
    });
    return body(ctx, updates);
  });
}

// Spawn, connect, run, end cleanly: starts an AgentProcess (`agentOptions`) that test `t` kills
// when it ends, runs `body` in withClient (`clientOptions`), then checks the clean end
// (finishAgent). Returns the agent for checks after its exit.
export async function withAgent(t, agentOptions, body, clientOptions) {
  const agent = startAgent(t, agentOptions);
  await withClient(agent, body, clientOptions);
  await finishAgent(agent);
  return agent;
}

export const textOf = (events, kind) =>
  events
    .filter((e) => e.kind === "update" && e.update.sessionUpdate === kind)
    .map((e) => (e.update.content?.type === "text" ? e.update.content.text : ""))
    .join("");

export const countOf = (events, kind) =>
  events.filter((e) => e.kind === "update" && e.update.sessionUpdate === kind).length;
