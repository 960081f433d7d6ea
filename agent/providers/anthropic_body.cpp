// Anthropic Messages API: the request body.
#include <algorithm>

#include "agent/providers/anthropic_messages.h"
#include "agent/providers/request_size.h"
#include "core/server_tool.h"
#include "support/http/provider_errors.h"
#include "support/json_util.h"
#include "support/json_writer.h"

namespace lousho::agent {

long long AnthropicThinkingBudget(ThinkingLevel level) {
  switch (level) {
    case ThinkingLevel::kOff:
      return 0;
    case ThinkingLevel::kMinimal:
      return 1024;  // the API's minimum
    case ThinkingLevel::kLow:
      return 2048;
    case ThinkingLevel::kMedium:
      return 8192;
    case ThinkingLevel::kHigh:
      return 16384;
    case ThinkingLevel::kXHigh:
      return 32000;
  }
  return 0;
}

namespace {

// Blocks the API is sent. It rejects empty text blocks; thinking must go back unchanged with its
// signature, so unsigned thinking (from another provider) is dropped.
bool SentInUserMessage(const ContentBlock& b) {
  return (b.type == BlockType::kText && !b.text.empty()) || b.type == BlockType::kImage;
}
bool SentInAssistantMessage(const ContentBlock& b) {
  switch (b.type) {
    case BlockType::kText:
      return !b.text.empty();
    case BlockType::kThinking:
      return b.redacted() || !b.signature().empty();
    case BlockType::kToolCall:
      return true;
    case BlockType::kImage:
      return false;
    case BlockType::kServerTool:
      // Its call and result go back only to the API that ran it, and only once it ended.
      return b.server.has_value() && b.server->api == kAnthropicApi;
  }
  return false;
}

// The block the cache mark goes on: the last one the body sends (a ContentBlock, or the
// tool-result Message its block is made of); null when there is none or it is a thinking block.
// Found from the end, so it costs nothing like the history's length.
const void* CacheMarkTarget(const ModelRequest& request) {
  for (size_t i = request.messages.size(); i-- > 0;) {
    const Message& m = request.messages[i];
    if (m.role == Role::kToolResult) return &m;
    for (size_t k = m.content.size(); k-- > 0;) {
      const ContentBlock& b = m.content[k];
      const bool sent = m.role == Role::kUser ? SentInUserMessage(b) : SentInAssistantMessage(b);
      if (sent)
        return b.type == BlockType::kThinking || b.type == BlockType::kServerTool ? nullptr : &b;
    }
  }
  return nullptr;
}

// The messages of the body, written as they are read, the members of every object in jsoncpp's
// sorted order (the bytes the API was always sent). Tool results are blocks of a user message,
// and user-side messages in a row merge into one, so that every tool_use is answered in the
// very next message: the user message stays open while user-side blocks follow.
class AnthropicMessagesWriter {
 public:
  AnthropicMessagesWriter(JsonWriter* w, const void* cache_mark) : w_(*w), mark_(cache_mark) {}

  void Add(const Message& m) {
    switch (m.role) {
      case Role::kUser:
        for (const auto& b : m.content) {
          if (!SentInUserMessage(b)) continue;
          OpenUser();
          UserBlock(b, &b);
        }
        break;
      case Role::kToolResult:
        OpenUser();
        ToolResult(m);
        break;
      case Role::kAssistant:
        Assistant(m);
        break;
    }
  }
  void Finish() { CloseUser(); }

 private:
  void OpenUser() {
    if (user_open_) return;
    user_open_ = true;
    w_.ObjectBegin();
    w_.AttributeBegin("content");
    w_.ArrayBegin();
  }
  void CloseUser() {
    if (!user_open_) return;
    user_open_ = false;
    EndMessage("user");
  }
  void EndMessage(const char* role) {
    w_.ArrayEnd();
    w_.AttributeEnd();
    w_.Attribute("role", role);
    w_.ObjectEnd();
  }
  // Opens a block; `id` is what CacheMarkTarget finds for it (null inside a tool result).
  // "cache_control" sorts before every other member of every block.
  void BlockBegin(const void* id) {
    w_.ObjectBegin();
    if (id == nullptr || id != mark_) return;
    w_.AttributeBegin("cache_control");
    w_.ObjectBegin();
    w_.Attribute("type", "ephemeral");
    w_.ObjectEnd();
    w_.AttributeEnd();
  }
  void TextMembers(std::string_view text) {
    w_.Attribute("text", text);
    w_.Attribute("type", "text");
  }
  // A text or image block of a user message, or of a tool result's content.
  void UserBlock(const ContentBlock& b, const void* id) {
    BlockBegin(id);
    if (b.type == BlockType::kImage) {
      w_.AttributeBegin("source");
      w_.ObjectBegin();
      w_.Attribute("data", b.data());
      w_.Attribute("media_type", b.mime_type());
      w_.Attribute("type", "base64");
      w_.ObjectEnd();
      w_.AttributeEnd();
      w_.Attribute("type", "image");
    } else {
      TextMembers(b.text);
    }
    w_.ObjectEnd();
  }
  void ToolResult(const Message& m) {
    BlockBegin(&m);
    w_.AttributeBegin("content");
    w_.ArrayBegin();
    bool any = false;
    for (const auto& b : m.content) {
      if (!SentInUserMessage(b)) continue;
      UserBlock(b, nullptr);
      any = true;
    }
    if (!any) {
      w_.ObjectBegin();
      TextMembers(m.is_error ? "(error)" : "(no output)");
      w_.ObjectEnd();
    }
    w_.ArrayEnd();
    w_.AttributeEnd();
    if (m.is_error) w_.Attribute("is_error", true);
    w_.Attribute("tool_use_id", m.tool_call_id);
    w_.Attribute("type", "tool_result");
    w_.ObjectEnd();
  }
  void Assistant(const Message& m) {
    // e.g. a turn cancelled before any output
    if (std::none_of(m.content.begin(), m.content.end(), SentInAssistantMessage)) return;
    CloseUser();
    w_.ObjectBegin();
    w_.AttributeBegin("content");
    w_.ArrayBegin();
    for (const auto& b : m.content)
      if (SentInAssistantMessage(b)) AssistantBlock(b);
    EndMessage("assistant");
  }
  void AssistantBlock(const ContentBlock& b) {
    BlockBegin(&b);
    switch (b.type) {
      case BlockType::kText:
        TextMembers(b.text);
        break;
      case BlockType::kThinking:
        if (b.redacted()) {
          w_.Attribute("data", b.text);
          w_.Attribute("type", "redacted_thinking");
        } else {
          w_.Attribute("signature", b.signature());
          w_.Attribute("thinking", b.text);
          w_.Attribute("type", "thinking");
        }
        break;
      case BlockType::kToolCall:
        CallMembers(b, "tool_use");
        break;
      case BlockType::kImage:
        break;
      case BlockType::kServerTool:
        CallMembers(b, "server_tool_use");
        break;
    }
    w_.ObjectEnd();
    // A provider-run call is answered by its result block, as the API sent it.
    if (b.type == BlockType::kServerTool) w_.Value(b.server->result);
  }
  // A call's members: the model's (tool_use) or one the API ran (server_tool_use).
  void CallMembers(const ContentBlock& b, const char* type) {
    w_.Attribute("id", b.id());
    w_.AttributeBegin("input");
    WriteObjectOrEmpty(b.arguments(), &w_);
    w_.AttributeEnd();
    w_.Attribute("name", b.name());
    w_.Attribute("type", type);
  }

  JsonWriter& w_;
  const void* mark_;
  bool user_open_ = false;
};

struct AnthropicLimits {
  long long max_tokens = 0;
  long long budget = 0;  // the thinking budget; sent only when at least 1024
};

// max_tokens, and the thinking budget when the model thinks.
AnthropicLimits TokenLimits(const ModelRequest& request, const AnthropicBodyOptions& options) {
  AnthropicLimits l;
  l.max_tokens = request.max_output_tokens > 0  ? request.max_output_tokens
                 : options.model_max_output > 0 ? options.model_max_output
                                                : kAnthropicDefaultMaxTokens;
  l.budget = options.reasoning_model ? AnthropicThinkingBudget(request.thinking) : 0;
  if (l.budget > 0) {
    // max_tokens counts the thinking too and must exceed the budget.
    if (l.max_tokens <= l.budget) l.max_tokens = l.budget + 4096;
    if (options.model_max_output > 0 && l.max_tokens > options.model_max_output) {
      l.max_tokens = options.model_max_output;
      l.budget = std::min(l.budget, l.max_tokens - 1024);
    }
  }
  return l;
}

// The system prompt: one text block marked cacheable, or a plain string.
void WriteSystem(const std::string& system, bool prompt_caching, JsonWriter* w) {
  w->AttributeBegin("system");
  if (prompt_caching) {
    w->ArrayBegin();
    w->ObjectBegin();
    w->AttributeBegin("cache_control");
    w->ObjectBegin();
    w->Attribute("type", "ephemeral");
    w->ObjectEnd();
    w->AttributeEnd();
    w->Attribute("text", system);
    w->Attribute("type", "text");
    w->ObjectEnd();
    w->ArrayEnd();
  } else {
    w->Value(system);
  }
  w->AttributeEnd();
}

// The API's own web search tool (members in sorted order).
void WriteWebSearchTool(const WebSearchSettings& s, JsonWriter* w) {
  auto domains = [&](const char* key, const std::vector<std::string>& list) {
    if (list.empty()) return;
    w->AttributeBegin(key);
    w->ArrayBegin();
    for (const auto& d : list) w->Value(d);
    w->ArrayEnd();
    w->AttributeEnd();
  };
  w->ObjectBegin();
  domains("allowed_domains", s.allowed_domains);
  domains("blocked_domains", s.blocked_domains);
  if (s.max_uses > 0) w->Attribute("max_uses", s.max_uses);
  w->Attribute("name", "web_search");
  w->Attribute("type", "web_search_20250305");
  w->ObjectEnd();
}

void WriteTools(const std::vector<ToolSchema>& tools, const WebSearchSettings& web_search,
                JsonWriter* w) {
  w->AttributeBegin("tools");
  w->ArrayBegin();
  if (web_search.enabled) WriteWebSearchTool(web_search, w);
  for (const ToolSchema& t : tools) {
    w->ObjectBegin();
    w->Attribute("description", t.description);
    w->AttributeBegin("input_schema");
    WriteToolSchema(t.parameters, w);
    w->AttributeEnd();
    w->Attribute("name", t.name);
    w->ObjectEnd();
  }
  w->ArrayEnd();
  w->AttributeEnd();
}

}  // namespace

std::string WriteAnthropicBody(const ModelRequest& request, const AnthropicBodyOptions& options) {
  const AnthropicLimits limits = TokenLimits(request, options);
  std::string out;
  out.reserve(RequestBodySizeHint(request));
  // Members in jsoncpp's sorted order.
  JsonWriter w(&out);
  w.ObjectBegin();
  w.Attribute("max_tokens", limits.max_tokens);
  w.AttributeBegin("messages");
  w.ArrayBegin();
  AnthropicMessagesWriter messages(&w, options.prompt_caching ? CacheMarkTarget(request) : nullptr);
  for (const Message& m : request.messages) messages.Add(m);
  messages.Finish();
  w.ArrayEnd();
  w.AttributeEnd();
  w.Attribute("model", request.model.empty() ? options.model : request.model);
  w.Attribute("stream", true);
  if (!request.system.empty()) WriteSystem(request.system, options.prompt_caching, &w);
  if (limits.budget >= 1024) {
    w.AttributeBegin("thinking");
    w.ObjectBegin();
    w.Attribute("budget_tokens", limits.budget);
    w.Attribute("type", "enabled");
    w.ObjectEnd();
    w.AttributeEnd();
  }
  if (!request.tools.empty() || request.web_search.enabled)
    WriteTools(request.tools, request.web_search, &w);
  w.ObjectEnd();
  return out;
}

}  // namespace lousho::agent
