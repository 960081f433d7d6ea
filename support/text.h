// Small text helpers shared by every layer (header-only, so the HTTP module can use them too).
#pragma once

#include <string>
#include <string_view>

namespace lousho {

// ASCII lower case (header names, error types, URL schemes); other bytes are kept as they are.
inline std::string AsciiLower(std::string_view s) {
  std::string out(s);
  for (auto& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

}  // namespace lousho
