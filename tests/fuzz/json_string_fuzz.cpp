// Fuzzes the hot-path JSON string writer: for any bytes, AppendJsonString must write exactly
// what jsoncpp writes for the same string value, and the ACP chunk params and the RPC door's
// message_update line exactly what their DOM paths write.
#include <cstddef>
#include <cstdint>

#include "acp/codec.h"
#include "rpc_compat/codec.h"
#include "support/json_util.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string s(lousho::fuzz::AsView(data, size));
  std::string fast;
  lousho::AppendJsonString(s, &fast);
  if (fast != lousho::WriteJson(Json::Value(s))) __builtin_trap();

  lousho::agent::Message partial;
  lousho::agent::StreamDelta d;
  d.kind = size % 2 ? lousho::agent::DeltaKind::kThinking : lousho::agent::DeltaKind::kText;
  d.text = s;
  lousho::agent::Event e = lousho::agent::event::MessageUpdate{1, &d, &partial};
  auto params = lousho::acp::ChunkUpdateParamsJson("sid", e);
  auto update = lousho::acp::UpdateFromEvent(e);
  if (!params || !update) __builtin_trap();
  Json::Value p(Json::objectValue);
  p["sessionId"] = "sid";
  p["update"] = *update;
  if (*params != lousho::WriteJson(p)) __builtin_trap();

  // The RPC line carries the partial message too: the same bytes as its text, signature, model.
  partial.role = lousho::agent::Role::kAssistant;
  partial.model = s;
  partial.content.push_back(lousho::agent::ContentBlock::Thinking(s, s));
  partial.content.push_back(lousho::agent::ContentBlock::Text(s));
  auto line = lousho::rpc_compat::MessageUpdateLine(e);
  auto frames = lousho::rpc_compat::FramesFromEvent(e);
  if (!line || frames.size() != 1 || *line != lousho::WriteJson(frames[0])) __builtin_trap();
  return 0;
}
