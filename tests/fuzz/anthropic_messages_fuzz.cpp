// Fuzzes the Anthropic Messages stream decoder with SSE bytes: whole turns and ones the
// client stops after a few deltas.
#include <cstddef>
#include <cstdint>

#include "agent/providers/anthropic_messages.h"
#include "tests/fuzz/decoder_fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in = lousho::fuzz::AsView(data, size);
  auto make = [] { return std::make_unique<lousho::agent::AnthropicDecoder>(); };
  lousho::fuzz::RunDecoder(in, make, 0);
  lousho::fuzz::RunDecoder(in, make, 3);
  return 0;
}
