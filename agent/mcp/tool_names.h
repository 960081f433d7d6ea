// The names the model sees for MCP tools: mcp__<server>__<tool>, restricted to the characters
// and length every provider accepts, unique within a session.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace lousho::agent::mcp {

inline constexpr size_t kMaxToolNameBytes = 64;

// "mcp__<server>__<tool>" with every byte outside [A-Za-z0-9_-] replaced by '_', cut to 64
// bytes. Not yet unique: see UniqueToolNames.
std::string MangleToolName(const std::string& server, const std::string& tool);

// The model-facing name of each (server, tool) pair, in the order given. Names that collide
// (after mangling or cutting) get a suffix "_<8 hex digits>" from a hash of the original server
// and tool names, so the same set of tools always gets the same names whatever order the
// servers answered in; should two suffixed names still collide, a counter follows.
std::vector<std::string> UniqueToolNames(
    const std::vector<std::pair<std::string, std::string>>& server_tool);

}  // namespace lousho::agent::mcp
