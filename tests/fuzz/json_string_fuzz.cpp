// Fuzzes the one JSON writer: for any bytes, AppendJsonString must write exactly what jsoncpp's
// own writer writes for the same string value, and the hot-path frames must carry that very
// string at its place (the ACP chunk params, the RPC door's message_update line).
#include <cstddef>
#include <cstdint>

#include "acp/codec.h"
#include "rpc_compat/codec.h"
#include "support/json_util.h"
#include "support/json_writer.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string s(lousho::fuzz::AsView(data, size));
  std::string fast;
  lousho::AppendJsonString(s, &fast);
  Json::StreamWriterBuilder builder;
  builder["indentation"] = "";
  if (fast != Json::writeString(builder, Json::Value(s))) __builtin_trap();

  lousho::agent::Message partial;
  lousho::agent::StreamDelta d;
  const bool thinking = size % 2 != 0;
  d.kind = thinking ? lousho::agent::DeltaKind::kThinking : lousho::agent::DeltaKind::kText;
  d.text = s;
  lousho::agent::Event e = lousho::agent::event::MessageUpdate{1, &d, &partial, {}};
  auto params = lousho::acp::ChunkUpdateParamsJson("sid", e);
  const std::string want = std::string(R"({"sessionId":"sid","update":{"content":{"text":)") +
                           fast + R"(,"type":"text"},"sessionUpdate":")" +
                           (thinking ? "agent_thought_chunk" : "agent_message_chunk") + "\"}}";
  if (!params || *params != want) __builtin_trap();

  // The RPC line carries the partial message too: the same bytes as its text, signature, model.
  partial.role = lousho::agent::Role::kAssistant;
  partial.assistant.Edit().model = s;
  partial.content.push_back(lousho::agent::ContentBlock::Thinking(s, s));
  partial.content.push_back(lousho::agent::ContentBlock::Text(s));
  auto line = lousho::rpc_compat::MessageUpdateLine(e);
  const std::string message = lousho::WriteJson(lousho::rpc_compat::MessageToRpc(partial));
  if (!line || line->find(",\"delta\":" + fast + ",") == std::string::npos ||
      !line->ends_with(",\"message\":" + message + ",\"type\":\"message_update\"}"))
    __builtin_trap();
  return 0;
}
