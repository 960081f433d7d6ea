// Fuzzes the ACP codec's readers of client JSON: prompts, client capabilities and permission
// answers. The input is one JSON value: the params or result object as a client sends it, or the
// bare value a reader takes.
#include <cstddef>
#include <cstdint>

#include "acp/codec.h"
#include "support/json_util.h"
#include "tests/fuzz/fuzz_util.h"

namespace {
void Prompt(const Json::Value& prompt) {
  // The server hands PromptFromJson only arrays (it checks params.prompt's type first).
  if (!prompt.isArray()) return;
  for (bool images : {false, true}) {
    auto blocks = lousho::acp::PromptFromJson(prompt, images);
    if (blocks.ok() && blocks->size() != prompt.size()) __builtin_trap();
  }
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto parsed = lousho::ParseJson(lousho::fuzz::AsView(data, size));
  if (!parsed.ok()) return 0;
  const Json::Value& v = *parsed;
  Prompt(v);
  if (const Json::Value* p = lousho::FindMember(v, "prompt")) Prompt(*p);

  (void)lousho::acp::ClientCapabilitiesFromJson(v);
  if (const Json::Value* caps = lousho::FindMember(v, "clientCapabilities"))
    (void)lousho::acp::ClientCapabilitiesFromJson(*caps);

  // The server passes whatever the client put in `result`.
  (void)lousho::acp::PermissionDecisionFromJson(v);
  if (const Json::Value* result = lousho::FindMember(v, "result"))
    (void)lousho::acp::PermissionDecisionFromJson(*result);
  return 0;
}
