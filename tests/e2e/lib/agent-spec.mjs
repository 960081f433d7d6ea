// Agent specs written by a test: one top-level key a line, each value in flow style (JSON is
// YAML), so a test names only what it needs, e.g. {name, model, tools: ["read"], providers}.
import fs from "node:fs";
import path from "node:path";

export function specText(fields) {
  return Object.entries(fields)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}: ${JSON.stringify(v)}\n`)
    .join("");
}

// Writes `fields` as `dir/file` and returns its path.
export function writeAgentSpec(dir, fields, file = "agent.yaml") {
  const spec = path.join(dir, file);
  fs.writeFileSync(spec, specText(fields));
  return spec;
}
