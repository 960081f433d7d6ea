// Fuzzes the agent spec loader: the input is written as agent.json (when it starts with '{')
// or agent.yaml in a scratch folder, loaded and validated, then built into an agent (with no
// provider keys in the environment). The same text is also loaded as a script file.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "agent/session.h"
#include "config/agent_spec.h"
#include "core/tool.h"
#include "host/agent_builder.h"
#include "tests/fuzz/fuzz_util.h"

namespace {
namespace fs = std::filesystem;
fs::path g_dir;

void WriteFile(const fs::path& path, std::string_view text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
}
}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  lousho::fuzz::QuietLogs();
  g_dir = fs::temp_directory_path() / ("lousho-fuzz-spec-" + std::to_string(getpid()));
  fs::create_directories(g_dir);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in = lousho::fuzz::AsView(data, size);
  size_t first = in.find_first_not_of(" \t\r\n");
  bool json = first != std::string_view::npos && in[first] == '{';
  fs::path spec_path = g_dir / (json ? "agent.json" : "agent.yaml");
  WriteFile(spec_path, in);

  lousho::config::LoadOptions opts;
  opts.known_tools = lousho::agent::KnownToolNames();
  auto spec = lousho::config::LoadAgentSpec(spec_path.string(), opts);
  if (spec.ok()) {
    auto agent = lousho::agent::BuildAgent(
        *spec, [](const std::string&) { return std::optional<std::string>(); });
    (void)agent;
  }
  fs::remove(spec_path);

  fs::path script_path = g_dir / (json ? "s.script.json" : "s.script.yaml");
  WriteFile(script_path, in);
  (void)lousho::config::LoadScriptFile(script_path.string(), "s");
  fs::remove(script_path);
  return 0;
}
