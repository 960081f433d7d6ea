// Fuzzes the SSE parser and checks its promise that bytes may be split anywhere: feeding the
// input whole, byte by byte, and cut in two must give the same events and end state.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "support/http/sse_parser.h"
#include "tests/fuzz/fuzz_util.h"

namespace {
using lousho::agent::SseEvent;
using lousho::agent::SseParser;

struct Outcome {
  std::vector<SseEvent> events;
  bool pending = false;
  long retry_ms = -1;
};

Outcome Feed(std::string_view in, const std::vector<size_t>& cuts) {
  Outcome o;
  SseParser parser;
  size_t prev = 0;
  for (size_t cut : cuts) {
    // A failed feed is a legitimate outcome for random bytes; the events and state compared
    // across splits are what matter.
    (void)parser.Feed(in.substr(prev, cut - prev), &o.events);
    prev = cut;
  }
  (void)parser.Feed(in.substr(prev), &o.events);
  o.pending = parser.HasPendingData();
  o.retry_ms = parser.retry_ms();
  return o;
}

bool Same(const Outcome& a, const Outcome& b) {
  if (a.pending != b.pending || a.retry_ms != b.retry_ms || a.events.size() != b.events.size())
    return false;
  for (size_t i = 0; i < a.events.size(); ++i) {
    const SseEvent& x = a.events[i];
    const SseEvent& y = b.events[i];
    if (x.event != y.event || x.data != y.data || x.id != y.id) return false;
  }
  return true;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in = lousho::fuzz::AsView(data, size);
  Outcome whole = Feed(in, {});
  std::vector<size_t> every;
  for (size_t i = 1; i < in.size(); ++i) every.push_back(i);
  if (!Same(whole, Feed(in, every))) __builtin_trap();
  // One cut, at a place the input picks (its first byte), so the fuzzer can steer it.
  if (!in.empty()) {
    size_t cut = static_cast<unsigned char>(in[0]) % (in.size() + 1);
    if (!Same(whole, Feed(in, {cut}))) __builtin_trap();
  }
  return 0;
}
