// MCP call benchmark: echo tools/call round trips through lousho's MCP client (the one the
// sessions use) to @modelcontextprotocol/server-everything over stdio. Not a test; run on demand
// (see docs/performance.md, "MCP servers"); bench/mcp/run.mjs measures the same server from node.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "agent/mcp/client.h"

int main(int argc, char** argv) {
  using Clock = std::chrono::steady_clock;
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s SERVER_EVERYTHING_INDEX_JS [calls]\n", argv[0]);
    return 2;
  }
  const int calls = argc > 2 ? std::atoi(argv[2]) : 500;
  lousho::config::McpServerSpec spec;
  spec.name = "everything";
  spec.command = "node";
  spec.args = {argv[1], "stdio"};
  const lousho::agent::mcp::ClientOptions options;
  lousho::agent::mcp::Client client(spec, options);
  auto st = client.Connect(lousho::CancelToken());
  if (!st.ok()) {
    std::fprintf(stderr, "%s\n", st.error().message.c_str());
    return 1;
  }
  Json::Value args(Json::objectValue);
  args["message"] = "hi";
  std::vector<double> ms;
  for (int i = 0; i < calls + 20; ++i) {
    auto t0 = Clock::now();
    auto res = client.CallTool("echo", args, nullptr, lousho::CancelToken());
    double d = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    if (!res.ok()) {
      std::fprintf(stderr, "%s\n", res.error().message.c_str());
      return 1;
    }
    if (i >= 20) ms.push_back(d);  // the first calls warm the server's JIT
  }
  client.Close();
  std::sort(ms.begin(), ms.end());
  std::printf("| echo tools/call through lousho's MCP client (%d) | %.3f ms | %.3f ms |\n", calls,
              ms[ms.size() / 2], ms[ms.size() * 9 / 10]);
  return 0;
}
