// Helper servers the tests start as processes (aimock, server-everything over HTTP): spawned,
// ready when they print the line saying they listen (no polling), always stopped by SIGKILL.
import { spawn } from "node:child_process";
import net from "node:net";
import readline from "node:readline";

// A port free on loopback right now, for servers that cannot be told to take port 0.
export function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

// Spawns `cmd args` and resolves with {proc, match, stop} once a line of `stream` ("stdout" or
// "stderr") matches `ready` (match: that RegExp match). Fails if the process exits first or prints
// no such line within `timeoutMs` (a bound on a hung start, not a wait for it). Both pipes are read
// to their end so a chatty server never blocks; what they said goes into the error messages.
export function startServerProcess(cmd, args, { env = {}, ready, stream = "stdout", timeoutMs = 15000 } = {}) {
  const proc = spawn(cmd, args, { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...env } });
  let output = "";
  const exited = new Promise((resolve) => {
    proc.once("exit", resolve);
    proc.once("error", (e) => {
      output += `spawn error: ${e.message}\n`;
      resolve(null);
    });
  });
  const stop = async () => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGKILL");
    await exited;
  };
  return new Promise((resolve, reject) => {
    let done = false;
    const fail = (why) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      stop().then(() => reject(new Error(`${cmd} ${args.join(" ")}: ${why}; output:\n${output}`)));
    };
    const timer = setTimeout(() => fail(`no line matching ${ready} within ${timeoutMs} ms`), timeoutMs);
    for (const name of ["stdout", "stderr"]) {
      readline.createInterface({ input: proc[name] }).on("line", (line) => {
        if (output.length < 20000) output += line + "\n";
        const m = !done && name === stream ? ready.exec(line) : null;
        if (!m) return;
        done = true;
        clearTimeout(timer);
        resolve({ proc, match: m, stop });
      });
    }
    exited.then((code) => fail(`exited (${code}) before it was ready`));
  });
}
