// Tools the provider runs itself (its web search): how their end travels in a stream delta, and
// how they are shown. The provider streams a kServerToolStart delta (the call) and a
// kServerToolEnd delta (its result); the engine shows them as a tool call that needs no running.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "core/content.h"
#include "core/events.h"
#include "core/provider.h"

namespace lousho::agent {

// The text of a kServerToolEnd delta for `result`, and back (a text that is not one reads as a
// failed result with nothing to show).
std::string ServerToolEndText(const ServerToolResult& result);
ServerToolResult ParseServerToolEnd(std::string_view text);

// The title of a provider-run call ("Web search: <query>"), from its tool name and arguments.
std::string ServerToolTitle(const std::string& name, const Json::Value& arguments);

// The tool events a provider-run call's delta stands for, given to `emit`: its start as
// ToolExecutionStart (a search, shown with its query), its result as ToolExecutionEnd. `partial`
// is the message with the delta applied (the delta's index is the call's block). Other deltas
// give nothing.
void EmitServerToolEvents(const StreamDelta& d, const Message& partial, int turn,
                          const std::function<void(const Event&)>& emit);

}  // namespace lousho::agent
