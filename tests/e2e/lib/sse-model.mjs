// The HTTP/SSE part every loopback model mock shares: reads each request's JSON body, records it,
// and streams the frames the API's own module makes of the test's reply.
import http from "node:http";

// `text` in pieces of at most `n` characters, as deltas arrive.
export const pieces = (text, n = 7) => {
  const out = [];
  for (let i = 0; i < text.length; i += n) out.push(text.slice(i, i + n));
  return out.length ? out : [""];
};

// `record(req, json)` is what `requests` keeps of a request; `frames(json, count, req)` returns
// the SSE text of its answer (count is 1-based). A request that is not a POST of JSON (a local
// server's limits asked for: GET /props, /v1/models...) goes to `other(req, body)`, which returns
// [status, json], else is answered 404; `others` lists them. Resolves to
// { server, requests, others, port }; closed after the test when `t` is given.
export function startSseModel(t, { record, frames, other }) {
  const requests = [];
  const others = [];
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", () => {
      let json;
      try {
        json = req.method === "POST" ? JSON.parse(body) : undefined;
      } catch {}
      if (json === undefined || !frames) {
        others.push({ method: req.method, path: req.url });
        const [status, answer] = other?.(req, body) ?? [404, { error: "not found" }];
        res.writeHead(status, { "content-type": "application/json" });
        return res.end(JSON.stringify(answer));
      }
      requests.push(record(req, json));
      res.on("error", () => {});
      res.writeHead(200, { "content-type": "text/event-stream" });
      for (const frame of frames(json, requests.length, req)) res.write(frame);
      res.end();
    });
  });
  t?.after(() => server.close());
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve({ server, requests, others, port: server.address().port })),
  );
}
