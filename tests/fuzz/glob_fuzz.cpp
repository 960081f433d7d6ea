// Fuzzes Glob in both modes: the input is "pattern\ntext" (no newline: the pattern matches itself).
#include <cstddef>
#include <cstdint>

#include "support/glob.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in = lousho::fuzz::AsView(data, size);
  size_t nl = in.find('\n');
  std::string_view pattern = in.substr(0, nl);
  std::string_view text = nl == std::string_view::npos ? pattern : in.substr(nl + 1);
  (void)lousho::HasGlobChars(pattern);
  for (lousho::GlobMode mode : {lousho::GlobMode::kPath, lousho::GlobMode::kText}) {
    lousho::Glob glob(pattern, mode);
    bool match = glob.Match(text);
    // The one-shot form compiles the same pattern, so it must agree.
    if (lousho::GlobMatch(pattern, text, mode) != match) __builtin_trap();
    (void)glob.Match(pattern);
  }
  return 0;
}
