// Fuzzes the real ACP server: input lines ("$CWD" stands for a scratch workspace) are played
// to an acp::Server over a MemoryTransport, with an offline script agent whose tools only read
// or ask the client, so no input can make it change files or run commands.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>

#include "acp/server.h"
#include "agent/session.h"
#include "config/agent_spec.h"
#include "core/tool.h"
#include "host/session_host.h"
#include "support/json_util.h"
#include "support/transport.h"
#include "tests/fuzz/fuzz_util.h"

namespace {
namespace fs = std::filesystem;

constexpr char kSpec[] = R"(name: fuzz
model: script/t
tools: [read, ls, todo, ask]
maxSteps: 3
commands:
  - {name: greet, description: Say hello, prompt: "hello {{args}}"}
scripts:
  t:
    - {match: "^hello", thinking: "Greeting.", text: "Hi there.", chunkSize: 4}
    - match: "^read"
      steps:
        - toolCalls: [{name: read, arguments: {path: notes.txt}}]
        - {text: "Done reading.", chunkSize: 1000}
    - match: "^plan"
      steps:
        - toolCalls: [{name: todo, arguments: {todos: [{content: "Look", status: completed}]}}]
        - {text: "Planned.", chunkSize: 1000}
    - match: "^ask"
      steps:
        - toolCalls: [{name: ask, arguments: {question: "Which?", options: [a, b]}}]
    - match: "^loop"
      steps:
        - toolCalls: [{name: ls, arguments: {}}]
        - toolCalls: [{name: ls, arguments: {}}]
        - toolCalls: [{name: ls, arguments: {}}]
        - toolCalls: [{name: ls, arguments: {}}]
    - {match: "^long", text: "This answer was cut", stopReason: max_tokens}
    - {match: "^refuse", text: "No.", stopReason: refusal}
    - match: "^fail"
      error: {code: LOUSHO_PROVIDER_RATE_LIMITED, message: "rate limited"}
    - {match: "", text: "You sent: {{input}}", chunkSize: 100000}
)";

std::shared_ptr<lousho::host::SessionHost> g_host;
std::string g_workspace;

void Die(const std::string& what) {
  std::fprintf(stderr, "acp_server_fuzz: %s\n", what.c_str());
  std::abort();
}

// The id of a session/prompt request line, or null.
Json::Value PromptId(const std::string& line) {
  auto msg = lousho::ParseJson(line);
  if (!msg.ok()) return Json::Value();
  const Json::Value* method = lousho::FindMember(*msg, "method");
  const Json::Value* id = lousho::FindMember(*msg, "id");
  if (!method || !id || !method->isString() || method->asString() != "session/prompt")
    return Json::Value();
  // Any other id gets its error answer under a null id.
  if (!id->isString() && !id->isIntegral()) return Json::Value();
  return *id;
}

// Waits until the server answers request `id`, or sends a request of its own (the turn then
// waits on the client, whose answer can only come from later input lines), or goes quiet for
// long: a turn of the script agent takes milliseconds, so the bound only guards the harness.
void AwaitTurn(lousho::MemoryTransport& transport, const Json::Value& id, size_t* seen) {
  for (;;) {
    auto out = transport.WaitForOutput(*seen + 1, 5000);
    if (out.size() <= *seen) return;
    for (; *seen < out.size(); ++*seen) {
      auto msg = lousho::ParseJson(out[*seen]);
      if (!msg.ok()) continue;
      const Json::Value* msg_id = lousho::FindMember(*msg, "id");
      if (!msg_id) continue;
      if (lousho::FindMember(*msg, "method") || *msg_id == id) {
        *seen = out.size();
        return;
      }
    }
  }
}

std::string ReplaceAll(std::string s, const std::string& from, const std::string& to) {
  for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size()))
    s.replace(p, from.size(), to);
  return s;
}
}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  lousho::fuzz::QuietLogs();
  fs::path root = fs::temp_directory_path() / ("lousho-fuzz-acp-" + std::to_string(getpid()));
  fs::create_directories(root / "ws");
  std::ofstream(root / "agent.yaml") << kSpec;
  std::ofstream(root / "ws" / "notes.txt") << "alpha\nbeta\n";
  g_workspace = (root / "ws").string();
  lousho::host::HostOptions ho;
  ho.choice = {lousho::config::AgentSource::kArgument, (root / "agent.yaml").string(), ""};
  ho.env = [](const std::string&) { return std::optional<std::string>(); };
  ho.no_session = true;
  ho.test_ids = true;
  g_host = std::make_shared<lousho::host::SessionHost>(std::move(ho));
  if (lousho::Status st = g_host->Load(); !st.ok()) Die(st.error().message);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  lousho::MemoryTransport transport;
  lousho::acp::ServerOptions options;
  options.version = "0.0.0";
  lousho::acp::Server server(&transport, g_host.get(), options);
  // Run() returns at the end of input, after cancelling every turn and joining the workers.
  std::thread runner([&server] { server.Run(); });
  size_t seen = 0;
  for (std::string& line : lousho::fuzz::SplitLines(lousho::fuzz::AsView(data, size), 64)) {
    line = ReplaceAll(std::move(line), "$CWD", g_workspace);
    Json::Value prompt_id = PromptId(line);
    transport.Push(std::move(line));
    // Let each turn play out before the next line, as an editor waits for its answer; without
    // this the end of input would cancel most turns before they start.
    if (!prompt_id.isNull()) AwaitTurn(transport, prompt_id, &seen);
  }
  transport.Close();
  runner.join();
  return 0;
}
