// Runs a provider stream decoder over fuzzed SSE bytes the way the HTTP driver does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "agent/providers/stream_decoder.h"
#include "support/http/sse_parser.h"
#include "tests/fuzz/fuzz_util.h"

namespace lousho::fuzz {

// Feeds `in` through an SseParser into a fresh decoder from `make`, cut in two at a place the
// input's first byte picks, stopping at the first error as the driver does; then builds the
// message. When `stop_after` > 0 the delta callback refuses after that many deltas (a
// cancelled turn).
template <typename MakeDecoder>
void RunDecoder(std::string_view in, MakeDecoder make, int stop_after) {
  std::unique_ptr<agent::StreamDecoder> decoder = make();
  agent::SseParser parser;
  int deltas = 0;
  agent::DeltaCallback emit = [&](const agent::StreamDelta&) {
    ++deltas;
    return stop_after <= 0 || deltas < stop_after;
  };
  size_t cut = in.empty() ? 0 : static_cast<unsigned char>(in[0]) % (in.size() + 1);
  Status status;
  for (std::string_view piece : {in.substr(0, cut), in.substr(cut)}) {
    std::vector<agent::SseEvent> events;
    // Hostile bytes may break the framing; the events parsed before that still go to the
    // decoder, which is what is under test.
    (void)parser.Feed(piece, &events);
    for (const auto& ev : events) {
      if (!status.ok() || decoder->aborted() || decoder->done()) break;
      status = decoder->Consume(ev, emit);
    }
  }
  // The end marker means the stream got far enough to be an answer.
  if (decoder->done() && !decoder->complete()) __builtin_trap();
  bool partial = decoder->aborted() || !status.ok() || !decoder->complete();
  agent::Message message = decoder->TakeMessage(partial);
  (void)message.TextContent();
}

}  // namespace lousho::fuzz
