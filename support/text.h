// Small text helpers shared by every layer (header-only, so the HTTP module can use them too).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace lousho {

// ASCII lower case (header names, error types, URL schemes); other bytes are kept as they are.
inline std::string AsciiLower(std::string_view s) {
  std::string out(s);
  for (auto& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

// The length of an unfinished UTF-8 character at the end of `text` (a lead byte followed by
// fewer continuation bytes than it announces), or 0: what a stream holds back until the rest of
// the character arrives.
inline size_t IncompleteUtf8Tail(std::string_view text) {
  const size_t n = text.size();
  for (size_t back = 1; back <= 3 && back <= n; ++back) {
    const auto b = static_cast<unsigned char>(text[n - back]);
    if ((b & 0xC0) == 0x80) continue;
    size_t need = 1;
    if (b >= 0xC2 && b <= 0xDF) {
      need = 2;
    } else if (b >= 0xE0 && b <= 0xEF) {
      need = 3;
    } else if (b >= 0xF0 && b <= 0xF4) {
      need = 4;
    }
    return need > back ? back : 0;
  }
  return 0;
}

// The items with `sep` between them.
inline std::string JoinStrings(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += sep;
    out += items[i];
  }
  return out;
}

// `s` without leading and trailing spaces, tabs and line ends.
inline std::string TrimSpace(std::string_view s) {
  constexpr std::string_view kSpace = " \t\r\n";
  const size_t b = s.find_first_not_of(kSpace);
  if (b == std::string_view::npos) return "";
  return std::string(s.substr(b, s.find_last_not_of(kSpace) - b + 1));
}

}  // namespace lousho
