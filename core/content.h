// Messages and content blocks of the engine's conversation history (protocol-free).
#pragma once

#include <json/json.h>

#include <optional>
#include <string>
#include <vector>

#include "support/boxed.h"

namespace lousho::agent {

// How an editor shows a tool call (the protocols' tool kinds).
enum class ToolKind {
  kRead,
  kEdit,
  kDelete,
  kMove,
  kSearch,
  kExecute,
  kThink,
  kFetch,
  kSwitchMode,
  kOther
};

struct ToolLocation {
  std::string path;  // absolute
  int line = 0;      // 1-based; 0 = none
};

struct FileDiff {
  std::string path;                     // absolute
  std::optional<std::string> old_text;  // nullopt: new file
  std::string new_text;
};

enum class BlockType { kText, kThinking, kToolCall, kImage, kServerTool };

// What a tool the provider ran itself (its web search) found: kept with the call so the API that
// ran it gets it back as it came, and the user is shown it again on replay.
struct ServerToolResult {
  std::string api;      // the API that ran it ("anthropic-messages", "openai-responses")
  std::string summary;  // what the user is shown: the query's results, a line each
  Json::Value result;   // the provider's own result block, sent back unchanged
  bool is_error = false;
};

// What only some kinds of block hold: kept behind one pointer, so a text block (the most of a
// history's blocks) is its type, its text and two pointers.
struct BlockDetail {
  std::string id;         // kToolCall, kServerTool: call id
  std::string name;       // kToolCall, kServerTool: tool name
  Json::Value arguments;  // kToolCall, kServerTool: parsed arguments (object)
  std::string signature;  // kThinking: provider signature to send back (Anthropic)
  bool redacted = false;  // kThinking: redacted by the provider (text holds opaque data)
  std::string mime_type;  // kImage
  std::string data;       // kImage: base64
};

// One block of a message. Plain value type. The fields of BlockDetail are read through the
// accessors below and written through `more.Edit()`.
struct ContentBlock {
  BlockType type = BlockType::kText;
  std::string text;         // kText, kThinking
  Boxed<BlockDetail> more;  // the fields of the other kinds (one pointer until set)
  // kServerTool (a call the provider ran: id, name, arguments as for kToolCall): its result, unset
  // while it runs.
  Boxed<ServerToolResult> server;

  const std::string& id() const { return more->id; }
  const std::string& name() const { return more->name; }
  const Json::Value& arguments() const { return more->arguments; }
  const std::string& signature() const { return more->signature; }
  bool redacted() const { return more->redacted; }
  const std::string& mime_type() const { return more->mime_type; }
  const std::string& data() const { return more->data; }

  static ContentBlock Text(std::string t) {
    ContentBlock b;
    b.text = std::move(t);
    return b;
  }
  static ContentBlock Thinking(std::string t, std::string sig = {}) {
    ContentBlock b;
    b.type = BlockType::kThinking;
    b.text = std::move(t);
    if (!sig.empty()) b.more.Edit().signature = std::move(sig);
    return b;
  }
  static ContentBlock ToolCall(std::string call_id, std::string tool, Json::Value args) {
    ContentBlock b;
    b.type = BlockType::kToolCall;
    BlockDetail& d = b.more.Edit();
    d.id = std::move(call_id);
    d.name = std::move(tool);
    d.arguments = std::move(args);
    return b;
  }
  static ContentBlock ServerTool(std::string call_id, std::string tool, Json::Value args) {
    ContentBlock b = ToolCall(std::move(call_id), std::move(tool), std::move(args));
    b.type = BlockType::kServerTool;
    return b;
  }
  static ContentBlock Image(std::string mime, std::string base64) {
    ContentBlock b;
    b.type = BlockType::kImage;
    BlockDetail& d = b.more.Edit();
    d.mime_type = std::move(mime);
    d.data = std::move(base64);
    return b;
  }
};

enum class Role { kUser, kAssistant, kToolResult };

// Why the model stopped producing one message. kPaused: the provider paused a long turn of its
// own tools (Anthropic's `pause_turn`); the engine sends the conversation back as it is, and the
// model goes on where it stopped.
enum class StopReason { kEndTurn, kToolUse, kMaxTokens, kRefusal, kCancelled, kError, kPaused };

struct Usage {
  long long input = 0;
  long long output = 0;
  long long cache_read = 0;
  long long cache_write = 0;
  double cost = 0;  // in USD, from the model's prices
  long long total() const { return input + output + cache_read + cache_write; }
  void Add(const Usage& o) {
    input += o.input;
    output += o.output;
    cache_read += o.cache_read;
    cache_write += o.cache_write;
    cost += o.cost;
  }
};

// What the user was shown of a tool call, kept with its result so a replay can show it again.
struct ToolDisplay {
  std::string title;
  ToolKind kind = ToolKind::kOther;
  Json::Value args;  // the call's arguments as shown (rawInput)
  std::vector<ToolLocation> locations;
  std::vector<FileDiff> diffs;
  Json::Value details;  // machine-readable result (rawOutput); null when none
  std::string terminal_id;
};

// An assistant message's own fields: kept behind one pointer, the other roles never set them.
struct AssistantDetail {
  Usage usage;
  std::string provider;
  std::string model;
  std::string error_message;  // why the stream ended badly (stop_reason kError)
};

// A message in the history. For kToolResult, tool_call_id/tool_name/is_error describe the call.
// A custom message (custom_type set, role kUser) is sent to the model as user text but is never
// shown as the user's words (a stream rule's reminder, a host's hidden note); `display` says
// whether a door may show it at all.
struct Message {
  Role role = Role::kUser;
  std::vector<ContentBlock> content;
  std::string tool_call_id;
  std::string tool_name;
  bool is_error = false;
  Boxed<ToolDisplay> tool;  // kToolResult: how the call was shown (one pointer until set)
  std::string custom_type;
  bool display = true;
  long long timestamp_ms = 0;  // when the message was made (ms since the epoch); 0: unknown
  // Assistant only: why it stopped; what it cost and who answered (read through the accessors
  // below, written through `assistant.Edit()`).
  StopReason stop_reason = StopReason::kEndTurn;
  Boxed<AssistantDetail> assistant;

  bool is_custom() const { return !custom_type.empty(); }
  const Usage& usage() const { return assistant->usage; }
  const std::string& provider() const { return assistant->provider; }
  const std::string& model() const { return assistant->model; }
  const std::string& error_message() const { return assistant->error_message; }

  // A custom user message of one text block (a summary, a reminder, a shell command's output).
  static Message Custom(std::string type, std::string text, bool display) {
    Message m;
    m.custom_type = std::move(type);
    m.display = display;
    m.content.push_back(ContentBlock::Text(std::move(text)));
    return m;
  }

  // Concatenated text blocks.
  std::string TextContent() const {
    std::string out;
    for (const auto& b : content)
      if (b.type == BlockType::kText) out += b.text;
    return out;
  }
};

}  // namespace lousho::agent
