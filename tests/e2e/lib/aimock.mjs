// The @copilotkit/aimock mock LLM server (its `llmock` CLI) as the model of a test file: started
// on a port of its own before the tests with a fixture file from fixtures/, stopped after them.
import { before, after } from "node:test";
import path from "node:path";
import { e2eDir } from "./env.mjs";
import { startServerProcess } from "./server-process.mjs";

const llmock = path.join(e2eDir, "node_modules/.bin/llmock");

export class Aimock {
  constructor(fixture) {
    this.fixtures = path.join(e2eDir, "fixtures", fixture);
  }

  // Port 0: the server takes a free port and names it in its "listening on <url>" line.
  async start() {
    this.server = await startServerProcess(
      llmock,
      ["-p", "0", "-h", "127.0.0.1", "-f", this.fixtures, "--log-level", "info"],
      { ready: /listening on (http:\/\/\S+)/ },
    );
    this.base = this.server.match[1];
  }

  async stop() {
    await this.server?.stop();
  }

  // Every request the server has received, oldest first.
  async journal() {
    const j = await (await fetch(`${this.base}/__aimock/journal`)).json();
    return Array.isArray(j) ? j : j.entries;
  }

  // Environment pointing lousho's built-in providers at this server.
  openaiEnv() {
    return { OPENAI_BASE_URL: `${this.base}/v1`, OPENAI_API_KEY: "test" };
  }

  anthropicEnv() {
    return { ANTHROPIC_BASE_URL: this.base, ANTHROPIC_API_KEY: "test" };
  }

  // A `providers:` entry of an agent spec (an OpenAI-chat provider) pointing at this server.
  openaiProvider(extra = {}) {
    return { api: "openai-chat", baseUrl: `${this.base}/v1`, ...extra };
  }
}

// An Aimock for the whole test file: started in before(), stopped in after() (also when a test
// fails). Its `base` and `journal()` are usable inside the tests.
export function useAimock(fixture) {
  const mock = new Aimock(fixture);
  before(() => mock.start());
  after(() => mock.stop());
  return mock;
}
