// Fuzzes .gitignore parsing and matching: the input is the file's text, then a line "@@", then
// one path per line to check ("a/b/" is checked as a directory).
#include <cstddef>
#include <cstdint>

#include "agent/tools/gitignore.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using lousho::agent::tools::IgnoreFile;
  std::string_view in = lousho::fuzz::AsView(data, size);
  std::string_view rules = in;
  std::string_view paths;
  size_t sep = in.find("\n@@\n");
  if (sep != std::string_view::npos) {
    rules = in.substr(0, sep + 1);
    paths = in.substr(sep + 4);
  }
  IgnoreFile file = IgnoreFile::Parse(rules);
  (void)file.empty();
  for (std::string path : lousho::fuzz::SplitLines(paths, 64)) {
    bool is_dir = !path.empty() && path.back() == '/';
    if (is_dir) path.pop_back();
    (void)file.Check(path, is_dir);
    (void)file.Check(path, !is_dir);
  }
  return 0;
}
