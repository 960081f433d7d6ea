// MCP tool name mangling.
#include "agent/mcp/tool_names.h"

#include <cstdint>
#include <cstdio>
#include <unordered_map>
#include <unordered_set>

namespace lousho::agent::mcp {
namespace {

std::string Clean(const std::string& s) {
  std::string out = s;
  for (char& c : out) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-';
    if (!ok) c = '_';
  }
  return out;
}

// FNV-1a over "server\0tool": stable across runs and platforms.
uint32_t Hash(const std::string& server, const std::string& tool) {
  uint32_t h = 2166136261u;
  auto feed = [&](const std::string& s) {
    for (unsigned char c : s) {
      h ^= c;
      h *= 16777619u;
    }
  };
  feed(server);
  feed(std::string(1, '\0'));
  feed(tool);
  return h;
}

std::string WithSuffix(const std::string& base, const std::string& suffix) {
  if (base.size() + suffix.size() <= kMaxToolNameBytes) return base + suffix;
  return base.substr(0, kMaxToolNameBytes - suffix.size()) + suffix;
}

}  // namespace

std::string MangleToolName(const std::string& server, const std::string& tool) {
  std::string name = "mcp__" + Clean(server) + "__" + Clean(tool);
  if (name.size() > kMaxToolNameBytes) name.resize(kMaxToolNameBytes);
  return name;
}

std::vector<std::string> UniqueToolNames(
    const std::vector<std::pair<std::string, std::string>>& server_tool) {
  // Hash tables throughout: a server may list tens of thousands of tools, many of them alike.
  std::vector<std::string> names;
  names.reserve(server_tool.size());
  std::unordered_map<std::string, int> count;
  count.reserve(server_tool.size());
  for (const auto& [server, tool] : server_tool) {
    names.push_back(MangleToolName(server, tool));
    ++count[names.back()];
  }
  std::unordered_set<std::string> taken;
  taken.reserve(server_tool.size());
  for (const auto& n : names)
    if (count[n] == 1) taken.insert(n);
  // For each name and suffix, the counter to try next: the counters below it are taken already
  // (names are only ever added), so identical tools cost one step each, not one per twin.
  std::unordered_map<std::string, int> next_counter;
  for (size_t i = 0; i < names.size(); ++i) {
    if (count[names[i]] == 1) continue;
    char hex[16];
    std::snprintf(hex, sizeof hex, "_%08x",
                  static_cast<unsigned>(Hash(server_tool[i].first, server_tool[i].second)));
    std::string candidate = WithSuffix(names[i], hex);
    if (taken.count(candidate)) {
      int& n = next_counter.try_emplace(names[i] + hex, 2).first->second;
      do {
        candidate = WithSuffix(names[i], std::string(hex) + "_" + std::to_string(n++));
      } while (taken.count(candidate));
    }
    taken.insert(candidate);
    names[i] = candidate;
  }
  return names;
}

}  // namespace lousho::agent::mcp
