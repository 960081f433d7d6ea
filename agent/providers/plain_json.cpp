// Plain readers' string and scalar pieces.
#include "agent/providers/plain_json.h"

namespace lousho::agent {

size_t ReadPlainJsonString(std::string_view from, std::string* out) {
  out->clear();
  for (size_t i = 0; i < from.size(); ++i) {
    const char c = from[i];
    if (c == '"') return i + 1;
    if (static_cast<unsigned char>(c) < 0x20) return 0;
    if (c != '\\') {
      out->push_back(c);
      continue;
    }
    if (++i == from.size()) return 0;
    switch (from[i]) {
      case '"':
      case '\\':
      case '/':
        out->push_back(from[i]);
        break;
      case 'b':
        out->push_back('\b');
        break;
      case 'f':
        out->push_back('\f');
        break;
      case 'n':
        out->push_back('\n');
        break;
      case 'r':
        out->push_back('\r');
        break;
      case 't':
        out->push_back('\t');
        break;
      default:
        return 0;  // \u and anything else
    }
  }
  return 0;
}

size_t SkipPlainJsonScalar(std::string_view from) {
  if (from.starts_with('"')) {
    std::string scratch;
    const size_t n = ReadPlainJsonString(from.substr(1), &scratch);
    return n == 0 ? 0 : n + 1;
  }
  for (std::string_view word : {"null", "true", "false"})
    if (from.starts_with(word)) return word.size();
  size_t i = from.starts_with('-') ? 1 : 0;
  const size_t first = i;
  while (i < from.size() && i - first < 19 && from[i] >= '0' && from[i] <= '9') ++i;
  const size_t digits = i - first;
  if (digits == 0 || digits > 18 || (digits > 1 && from[first] == '0')) return 0;
  return i;
}

}  // namespace lousho::agent
