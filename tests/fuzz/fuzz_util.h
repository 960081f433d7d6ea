// Small helpers shared by the libFuzzer targets: splitting inputs and quieting the logger.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "support/log.h"

namespace lousho::fuzz {

inline std::string_view AsView(const uint8_t* data, size_t size) {
  return std::string_view(reinterpret_cast<const char*>(data), size);
}

// Splits at '\n' (a trailing '\r' stays: the code under test sees it as the client sent it).
inline std::vector<std::string> SplitLines(std::string_view text, size_t max_lines) {
  std::vector<std::string> lines;
  while (!text.empty() && lines.size() < max_lines) {
    size_t nl = text.find('\n');
    lines.emplace_back(text.substr(0, nl));
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return lines;
}

// The logger writes to stderr; at libFuzzer speeds that would drown the run's own output.
inline void QuietLogs() { log::Configure(log::Level::kOff, ""); }

}  // namespace lousho::fuzz
