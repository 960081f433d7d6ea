// Fuzzes the pull reader and the session-line decoder: for any bytes, JsonCursor never accepts
// what ParseJson refuses nor reads a value differently, and skips exactly what it reads; whatever
// ParseJson reads, written by WriteJson, the cursor reads as ParseJson reads it; and decoding the
// bytes as a session entry line never crashes and, when it succeeds, gives an entry whose written
// line decodes again.
#include <cstddef>
#include <cstdint>

#include "agent/history.h"
#include "support/json_util.h"
#include "tests/fuzz/fuzz_util.h"

namespace {
bool CursorReads(std::string_view text, Json::Value* out) {
  lousho::JsonCursor c(text);
  return c.Value(out) && c.End();
}

// Skipping a value reads exactly what building it reads: the same verdict, the same bytes
// consumed, the same error.
bool SkipAgreesWithValue(std::string_view text) {
  lousho::JsonCursor built(text);
  lousho::JsonCursor skipped(text);
  Json::Value v;
  const bool a = built.Value(&v) && built.End();
  const bool b = skipped.Skip() && skipped.End();
  return a == b && built.offset() == skipped.offset() && built.error() == skipped.error();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = lousho::fuzz::AsView(data, size);
  if (!SkipAgreesWithValue(text)) __builtin_trap();
  auto theirs = lousho::ParseJson(text);
  Json::Value mine;
  if (CursorReads(text, &mine)) {
    // ParseJson wants an object or an array at the top; the cursor reads any value.
    if (!theirs.ok() && (mine.isObject() || mine.isArray())) __builtin_trap();
    if (theirs.ok() && !(mine == *theirs)) __builtin_trap();
  }
  if (theirs.ok()) {
    // Compared with ParseJson's reading of the same text (not with *theirs: jsoncpp keeps a
    // lone surrogate escape as bytes that WriteJson then writes as U+FFFD).
    const std::string written = lousho::WriteJson(*theirs);
    auto again = lousho::ParseJson(written);
    Json::Value back;
    if (!again.ok() || !CursorReads(written, &back) || !(back == *again)) __builtin_trap();
  }
  auto entry = lousho::agent::EntryFromText(text, "fuzz");
  if (entry.ok()) {
    const std::string line = lousho::WriteJson(lousho::agent::EntryToJson(*entry));
    if (!lousho::agent::EntryFromText(line, "fuzz").ok()) __builtin_trap();
  }
  return 0;
}
