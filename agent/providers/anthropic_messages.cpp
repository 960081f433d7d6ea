// Anthropic Messages API: request body, stream decoder and provider.
#include "agent/providers/anthropic_messages.h"

#include <algorithm>

#include "support/http/provider_errors.h"
#include "support/json_util.h"

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

Json::Value TextBlock(const std::string& text) {
  Json::Value b(Json::objectValue);
  b["type"] = "text";
  b["text"] = text;
  return b;
}

Json::Value ImageBlock(const ContentBlock& img) {
  Json::Value b(Json::objectValue);
  b["type"] = "image";
  b["source"]["type"] = "base64";
  b["source"]["media_type"] = img.mime_type;
  b["source"]["data"] = img.data;
  return b;
}

// Text and image blocks of a user message or tool result. The API rejects empty text blocks.
void AppendUserBlocks(const std::vector<ContentBlock>& content, Json::Value* out) {
  for (const auto& b : content) {
    switch (b.type) {
      case BlockType::kText:
        if (!b.text.empty()) out->append(TextBlock(b.text));
        break;
      case BlockType::kImage:
        out->append(ImageBlock(b));
        break;
      case BlockType::kThinking:
      case BlockType::kToolCall:
        break;
    }
  }
}

Json::Value AssistantBlocks(const Message& m) {
  Json::Value out(Json::arrayValue);
  for (const auto& b : m.content) {
    switch (b.type) {
      case BlockType::kText:
        if (!b.text.empty()) out.append(TextBlock(b.text));
        break;
      case BlockType::kThinking: {
        // Thinking must go back unchanged with its signature; without one the API rejects it,
        // so unsigned thinking (from another provider) is dropped.
        Json::Value t(Json::objectValue);
        if (b.redacted) {
          t["type"] = "redacted_thinking";
          t["data"] = b.text;
        } else {
          if (b.signature.empty()) break;
          t["type"] = "thinking";
          t["thinking"] = b.text;
          t["signature"] = b.signature;
        }
        out.append(t);
        break;
      }
      case BlockType::kToolCall: {
        Json::Value t(Json::objectValue);
        t["type"] = "tool_use";
        t["id"] = b.id;
        t["name"] = b.name;
        t["input"] = b.arguments.isObject() ? b.arguments : Json::Value(Json::objectValue);
        out.append(t);
        break;
      }
      case BlockType::kImage:
        break;
    }
  }
  return out;
}

Json::Value ToolResultBlock(const Message& m) {
  Json::Value t(Json::objectValue);
  t["type"] = "tool_result";
  t["tool_use_id"] = m.tool_call_id;
  Json::Value content(Json::arrayValue);
  AppendUserBlocks(m.content, &content);
  if (content.empty()) content.append(TextBlock(m.is_error ? "(error)" : "(no output)"));
  t["content"] = content;
  if (m.is_error) t["is_error"] = true;
  return t;
}

// max_tokens, and the thinking budget when the model thinks.
void SetTokenLimits(const ModelRequest& request, const AnthropicBodyOptions& options,
                    Json::Value* body) {
  long long max_tokens = request.max_output_tokens > 0  ? request.max_output_tokens
                         : options.model_max_output > 0 ? options.model_max_output
                                                        : kAnthropicDefaultMaxTokens;
  long long budget = options.reasoning_model ? AnthropicThinkingBudget(request.thinking) : 0;
  if (budget > 0) {
    // max_tokens counts the thinking too and must exceed the budget.
    if (max_tokens <= budget) max_tokens = budget + 4096;
    if (options.model_max_output > 0 && max_tokens > options.model_max_output) {
      max_tokens = options.model_max_output;
      budget = std::min(budget, max_tokens - 1024);
    }
    if (budget >= 1024) {
      (*body)["thinking"]["type"] = "enabled";
      (*body)["thinking"]["budget_tokens"] = Json::Value(static_cast<Json::Int64>(budget));
    }
  }
  (*body)["max_tokens"] = Json::Value(static_cast<Json::Int64>(max_tokens));
}

}  // namespace

Json::Value BuildAnthropicBody(const ModelRequest& request, const AnthropicBodyOptions& options) {
  Json::Value body(Json::objectValue);
  body["model"] = request.model;
  body["stream"] = true;
  SetTokenLimits(request, options, &body);
  if (!request.system.empty()) {
    if (options.prompt_caching) {
      Json::Value sys(Json::arrayValue);
      Json::Value block = TextBlock(request.system);
      block["cache_control"]["type"] = "ephemeral";
      sys.append(block);
      body["system"] = sys;
    } else {
      body["system"] = request.system;
    }
  }
  Json::Value& messages = body["messages"] = Json::Value(Json::arrayValue);
  // Tool results are blocks of a user message; consecutive user-side messages merge into one
  // so every tool_use is answered in the very next message.
  auto user_tail = [&]() -> Json::Value& {
    if (messages.empty() ||
        StringOr(ElementOrNull(messages, messages.size() - 1), "role") != "user") {
      Json::Value u(Json::objectValue);
      u["role"] = "user";
      u["content"] = Json::Value(Json::arrayValue);
      messages.append(u);
    }
    Json::Value& tail = messages[messages.size() - 1];
    Json::Value& content = tail["content"];
    return content;
  };
  for (const Message& m : request.messages) {
    switch (m.role) {
      case Role::kUser: {
        Json::Value blocks(Json::arrayValue);
        AppendUserBlocks(m.content, &blocks);
        if (blocks.empty()) break;
        Json::Value& tail = user_tail();
        for (auto& b : blocks) tail.append(b);
        break;
      }
      case Role::kToolResult:
        user_tail().append(ToolResultBlock(m));
        break;
      case Role::kAssistant: {
        Json::Value blocks = AssistantBlocks(m);
        if (blocks.empty()) break;  // e.g. a turn cancelled before any output
        Json::Value a(Json::objectValue);
        a["role"] = "assistant";
        a["content"] = blocks;
        messages.append(a);
        break;
      }
    }
  }
  if (options.prompt_caching && !messages.empty()) {
    Json::Value& content = messages[messages.size() - 1]["content"];
    if (content.isArray() && !content.empty()) {
      Json::Value& last = content[content.size() - 1];
      const std::string type = StringOr(last, "type");
      if (type != "thinking" && type != "redacted_thinking") {
        last["cache_control"]["type"] = "ephemeral";
      }
    }
  }
  if (!request.tools.empty()) {
    Json::Value& tools = body["tools"] = Json::Value(Json::arrayValue);
    for (const ToolSchema& t : request.tools) {
      Json::Value tool(Json::objectValue);
      tool["name"] = t.name;
      tool["description"] = t.description;
      Json::Value schema = t.parameters;
      if (!schema.isObject()) {
        schema = Json::Value(Json::objectValue);
        schema["type"] = "object";
        schema["properties"] = Json::Value(Json::objectValue);
      }
      tool["input_schema"] = schema;
      tools.append(tool);
    }
  }
  return body;
}

namespace {

// The messages of BuildAnthropicBody, written as they are read: the members of every object in
// jsoncpp's sorted order, strings by AppendJsonString, tool arguments by WriteJson. A user
// message stays open while user-side blocks follow (BuildAnthropicBody's user_tail); the last
// block's offset is kept for the cache mark, which sorts first among every block's members.
class MessagesWriter {
 public:
  explicit MessagesWriter(std::string* out) : out_(out) {}

  void Add(const Message& m) {
    switch (m.role) {
      case Role::kUser:
        for (const auto& b : m.content) UserBlock(b, /*in_user_message=*/true);
        break;
      case Role::kToolResult:
        ToolResult(m);
        break;
      case Role::kAssistant:
        Assistant(m);
        break;
    }
  }

  // Closes the last message and marks its last block cacheable when asked (not a thinking one).
  void Finish(bool prompt_caching) {
    CloseUser();
    if (prompt_caching && last_block_at_ != std::string::npos && !last_block_thinking_)
      out_->insert(last_block_at_, "\"cache_control\":{\"type\":\"ephemeral\"},");
  }

 private:
  // Opens a block inside the current message: in the user message (opened if needed) or in the
  // assistant message being written.
  void BeginBlock(bool thinking) {
    if (!block_written_) {
      block_written_ = true;
    } else {
      out_->push_back(',');
    }
    out_->push_back('{');
    last_block_at_ = out_->size();
    last_block_thinking_ = thinking;
  }
  void OpenUser() {
    if (user_open_) return;
    OpenMessage();
    user_open_ = true;
  }
  void CloseUser() {
    if (!user_open_) return;
    out_->append("],\"role\":\"user\"}");
    user_open_ = false;
  }
  void OpenMessage() {
    if (messages_ > 0) out_->push_back(',');
    ++messages_;
    out_->append("{\"content\":[");
    block_written_ = false;
  }

  // A text or image block of a user message (in_user_message) or of a tool result's content.
  void UserBlock(const ContentBlock& b, bool in_user_message) {
    switch (b.type) {
      case BlockType::kText:
        if (b.text.empty()) return;
        if (in_user_message) OpenUser();
        Begin(in_user_message);
        out_->append("\"text\":");
        AppendJsonString(b.text, out_);
        out_->append(",\"type\":\"text\"}");
        return;
      case BlockType::kImage:
        if (in_user_message) OpenUser();
        Begin(in_user_message);
        out_->append("\"source\":{\"data\":");
        AppendJsonString(b.data, out_);
        out_->append(",\"media_type\":");
        AppendJsonString(b.mime_type, out_);
        out_->append(",\"type\":\"base64\"},\"type\":\"image\"}");
        return;
      case BlockType::kThinking:
      case BlockType::kToolCall:
        return;
    }
  }
  // A block of the message (tracked for the cache mark), or one nested in a tool result.
  void Begin(bool message_block) {
    if (message_block) return BeginBlock(false);
    if (nested_written_) out_->push_back(',');
    nested_written_ = true;
    out_->push_back('{');
  }

  void ToolResult(const Message& m) {
    OpenUser();
    BeginBlock(false);
    out_->append("\"content\":[");
    nested_written_ = false;
    for (const auto& b : m.content) UserBlock(b, /*in_user_message=*/false);
    if (!nested_written_) {
      out_->append("{\"text\":");
      out_->append(m.is_error ? "\"(error)\"" : "\"(no output)\"");
      out_->append(",\"type\":\"text\"}");
    }
    out_->push_back(']');
    if (m.is_error) out_->append(",\"is_error\":true");
    out_->append(",\"tool_use_id\":");
    AppendJsonString(m.tool_call_id, out_);
    out_->append(",\"type\":\"tool_result\"}");
  }

  static bool Sent(const ContentBlock& b) {
    switch (b.type) {
      case BlockType::kText:
        return !b.text.empty();
      case BlockType::kThinking:
        return b.redacted || !b.signature.empty();  // unsigned thinking is dropped
      case BlockType::kToolCall:
        return true;
      case BlockType::kImage:
        return false;
    }
    return false;
  }

  void Assistant(const Message& m) {
    if (std::none_of(m.content.begin(), m.content.end(), Sent)) return;  // e.g. cancelled early
    CloseUser();
    OpenMessage();
    for (const auto& b : m.content) {
      if (!Sent(b)) continue;
      switch (b.type) {
        case BlockType::kText:
          BeginBlock(false);
          out_->append("\"text\":");
          AppendJsonString(b.text, out_);
          out_->append(",\"type\":\"text\"}");
          break;
        case BlockType::kThinking:
          BeginBlock(true);
          if (b.redacted) {
            out_->append("\"data\":");
            AppendJsonString(b.text, out_);
            out_->append(",\"type\":\"redacted_thinking\"}");
          } else {
            out_->append("\"signature\":");
            AppendJsonString(b.signature, out_);
            out_->append(",\"thinking\":");
            AppendJsonString(b.text, out_);
            out_->append(",\"type\":\"thinking\"}");
          }
          break;
        case BlockType::kToolCall:
          BeginBlock(false);
          out_->append("\"id\":");
          AppendJsonString(b.id, out_);
          out_->append(",\"input\":");
          out_->append(b.arguments.isObject() ? WriteJson(b.arguments) : std::string("{}"));
          out_->append(",\"name\":");
          AppendJsonString(b.name, out_);
          out_->append(",\"type\":\"tool_use\"}");
          break;
        case BlockType::kImage:
          break;
      }
    }
    out_->append("],\"role\":\"assistant\"}");
  }

  std::string* out_;
  size_t messages_ = 0;
  bool user_open_ = false;
  bool block_written_ = false;   // in the message being written
  bool nested_written_ = false;  // in the tool result being written
  size_t last_block_at_ = std::string::npos;
  bool last_block_thinking_ = false;
};

}  // namespace

std::string WriteAnthropicBody(const ModelRequest& request, const AnthropicBodyOptions& options) {
  // Every member but the messages through the DOM (a few small values); the messages, which
  // sort second after max_tokens, written straight in.
  ModelRequest rest = request;
  rest.messages = {};
  Json::Value others = BuildAnthropicBody(rest, options);
  others.removeMember("messages");
  Json::Value max_tokens;
  others.removeMember("max_tokens", &max_tokens);
  const std::string tail = WriteJson(others);  // {"model":…}: never empty
  size_t text = 0;
  for (const Message& m : request.messages)
    for (const auto& b : m.content) text += b.text.size() + b.data.size() + 64;
  std::string out;
  out.reserve(tail.size() + text + 64);
  out.append("{\"max_tokens\":");
  out.append(WriteJson(max_tokens));
  out.append(",\"messages\":[");
  MessagesWriter w(&out);
  for (const Message& m : request.messages) w.Add(m);
  w.Finish(options.prompt_caching);
  out.append("],");
  out.append(tail, 1, std::string::npos);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Decoder

namespace {

void ReadUsage(const Json::Value& u, StreamNumbers* numbers, Usage* usage) {
  if (!u.isObject()) return;
  // message_delta usage is cumulative: take the latest value of every field it carries.
  auto take = [&](const char* key, long long* field) {
    const Json::Value* m = FindMember(u, key);
    if (m == nullptr || m->isNull()) return;
    long long v = numbers->Tokens(u, key);
    if (numbers->ok()) *field = v;
  };
  take("input_tokens", &usage->input);
  take("output_tokens", &usage->output);
  take("cache_read_input_tokens", &usage->cache_read);
  take("cache_creation_input_tokens", &usage->cache_write);
}

// A message_delta: the stop reason and the cumulative usage.
Status ReadMessageDelta(const Json::Value& data, StreamNumbers* numbers, std::string* stop_reason,
                        Usage* usage) {
  if (const Json::Value* delta = FindMember(data, "delta")) {
    std::string reason = StringOr(*delta, "stop_reason");
    if (!reason.empty()) *stop_reason = std::move(reason);
  }
  if (const Json::Value* u = FindMember(data, "usage")) ReadUsage(*u, numbers, usage);
  return numbers->status();
}

// A message_start: the usage of the prompt.
Status ReadMessageStart(const Json::Value& data, StreamNumbers* numbers, Usage* usage) {
  const Json::Value* msg = FindMember(data, "message");
  if (const Json::Value* u = msg ? FindMember(*msg, "usage") : nullptr) {
    ReadUsage(*u, numbers, usage);
  }
  return numbers->status();
}

// The text and thinking deltas, one per streamed token, are most of a stream. When an event's
// bytes are exactly in the form the API writes them, {"type":"content_block_delta","index":N,
// "delta":{"type":"text_delta","text":"..."}} (or thinking_delta / "thinking"), the index and
// text are read here without a Json::Value (strings by ReadJsonStringBody, as ParseJson reads
// them). Anything else (another member order, spaces, a leading zero, an index over
// kMaxBlockIndex) returns false
// and takes the general path, which reads the same event to the same result
// (tests/providers/anthropic_messages_test.cpp compares both).
bool ReadPlainTextDelta(std::string_view data, int* index, bool* thinking, std::string* text) {
  constexpr std::string_view kHead = R"({"type":"content_block_delta","index":)";
  constexpr std::string_view kText = R"(,"delta":{"type":"text_delta","text":")";
  constexpr std::string_view kThinking = R"(,"delta":{"type":"thinking_delta","thinking":")";
  constexpr std::string_view kTail = "}}";
  if (!data.starts_with(kHead) || !data.ends_with(kTail)) return false;
  data.remove_prefix(kHead.size());
  size_t digits = 0;
  while (digits < data.size() && digits < 5 && data[digits] >= '0' && data[digits] <= '9') ++digits;
  if (digits == 0 || digits > 4 || (digits > 1 && data[0] == '0')) return false;
  int n = 0;
  for (size_t i = 0; i < digits; ++i) n = n * 10 + (data[i] - '0');
  if (n > kMaxBlockIndex) return false;
  data.remove_prefix(digits);
  if (data.starts_with(kText)) {
    *thinking = false;
    data.remove_prefix(kText.size());
  } else if (data.starts_with(kThinking)) {
    *thinking = true;
    data.remove_prefix(kThinking.size());
  } else {
    return false;
  }
  text->clear();
  const size_t used = ReadJsonStringBody(data, text);
  if (used == 0 || data.substr(used) != kTail) return false;
  *index = n;
  return true;
}

Status StreamError(const Json::Value& data) {
  const Json::Value* err = FindMember(data, "error");
  return ErrorFromStream(err ? StringOr(*err, "type") : std::string(),
                         err ? StringOr(*err, "message") : std::string());
}

}  // namespace

Status AnthropicDecoder::OnBlockStart(const Json::Value& data, int index,
                                      const DeltaCallback& emit) {
  const Json::Value* cb = FindMember(data, "content_block");
  const std::string block_type = cb ? StringOr(*cb, "type") : std::string();
  if (block_type == "text" || block_type == "thinking") {
    const bool thinking = block_type == "thinking";
    const int at = builder_.Open(thinking ? BlockType::kThinking : BlockType::kText, Forward(emit));
    blocks_[index] = at;
    if (thinking) builder_.AddSignature(at, StringOr(*cb, "signature"));
    std::string text = StringOr(*cb, thinking ? "thinking" : "text");
    if (!text.empty()) {
      Apply(StreamDelta{thinking ? DeltaKind::kThinking : DeltaKind::kText, index, std::move(text),
                        "", ""},
            emit);
    }
  } else if (block_type == "redacted_thinking") {
    // Opaque; sent back unchanged, never shown.
    blocks_[index] = builder_.AddRedactedThinking(StringOr(*cb, "data"), Forward(emit));
  } else if (block_type == "tool_use") {
    Apply(StreamDelta{DeltaKind::kToolCallStart, index, "", StringOr(*cb, "id"),
                      StringOr(*cb, "name")},
          emit);
    blocks_[index] = builder_.ToolCallBlock(index);
  } else {
    blocks_[index] = -1;  // server tool blocks and future kinds: not ours to keep
  }
  return Status::Ok();
}

Status AnthropicDecoder::OnBlockDelta(const Json::Value& data, int index,
                                      const DeltaCallback& emit) {
  auto it = blocks_.find(index);
  if (it == blocks_.end()) {
    return MakeError(kProviderBadResponse,
                     "content_block_delta for unknown block " + std::to_string(index));
  }
  const int at = it->second;
  const Json::Value* delta = FindMember(data, "delta");
  if (at < 0 || delta == nullptr) return Status::Ok();
  const std::string dtype = StringOr(*delta, "type");
  if (dtype == "signature_delta") {
    builder_.AddSignature(at, StringOr(*delta, "signature"));
    return Status::Ok();
  }
  const ContentBlock& b = builder_.message().content[at];
  StreamDelta d;
  if (dtype == "input_json_delta") {
    // Fragments after the block's stop, or for a block that is no tool call, change nothing.
    if (builder_.ToolCallBlock(index) != at || builder_.ToolCallEnded(index)) return Status::Ok();
    d = StreamDelta{DeltaKind::kToolCallArgs, index, StringOr(*delta, "partial_json"), b.id, ""};
  } else if (dtype == "text_delta" || dtype == "thinking_delta") {
    const bool thinking = dtype == "thinking_delta";
    return OnTextDelta(index, thinking, StringOr(*delta, thinking ? "thinking" : "text"), emit);
  } else {
    return Status::Ok();  // citations_delta and future kinds
  }
  if (!d.text.empty()) Apply(std::move(d), emit);
  return Status::Ok();
}

Status AnthropicDecoder::OnTextDelta(int index, bool thinking, std::string text,
                                     const DeltaCallback& emit) {
  auto it = blocks_.find(index);
  if (it == blocks_.end()) {
    return MakeError(kProviderBadResponse,
                     "content_block_delta for unknown block " + std::to_string(index));
  }
  const int at = it->second;
  if (at < 0) return Status::Ok();
  const ContentBlock& b = builder_.message().content[at];
  // Blocks stream one after another: text for any other block than the one streaming now
  // would land in the wrong place.
  if (at != builder_.open_block() ||
      b.type != (thinking ? BlockType::kThinking : BlockType::kText)) {
    const std::string dtype = thinking ? "thinking_delta" : "text_delta";
    return MakeError(kProviderBadResponse, dtype + " for block " + std::to_string(index) +
                                               ", which is not the text or thinking block "
                                               "being streamed");
  }
  if (!text.empty()) {
    Apply(StreamDelta{thinking ? DeltaKind::kThinking : DeltaKind::kText, index, std::move(text),
                      "", ""},
          emit);
  }
  return Status::Ok();
}

void AnthropicDecoder::OnBlockStop(int index, const DeltaCallback& emit) {
  auto it = blocks_.find(index);
  if (it == blocks_.end() || it->second < 0) return;
  // A text or thinking block stays open: the next block's start ends it.
  if (builder_.ToolCallBlock(index) == it->second) builder_.EndToolCall(index, Forward(emit));
}

Status AnthropicDecoder::Consume(const SseEvent& event, const DeltaCallback& emit) {
  if (aborted_ || done_) return Status::Ok();
  int plain_index = 0;
  bool plain_thinking = false;
  if (ReadPlainTextDelta(event.data, &plain_index, &plain_thinking, &plain_text_))
    return OnTextDelta(plain_index, plain_thinking, plain_text_, emit);
  auto parsed = ParseJson(event.data);
  if (!parsed.ok() || !parsed->isObject()) {
    return MakeError(kProviderBadResponse,
                     "malformed stream event " + event.event + ": " + event.data.substr(0, 200));
  }
  const Json::Value& data = *parsed;
  std::string type = StringOr(data, "type");
  if (type.empty()) type = event.event;
  // Every number is checked before use; one out of range fails the response as malformed.
  StreamNumbers numbers(type.c_str());
  if (type == "message_start") return ReadMessageStart(data, &numbers, &usage_);
  if (type == "message_delta") return ReadMessageDelta(data, &numbers, &stop_reason_, &usage_);
  if (type == "message_stop") {
    done_ = true;
    return Status::Ok();
  }
  if (type == "error") return StreamError(data);
  if (type.rfind("content_block_", 0) != 0) return Status::Ok();  // "ping" and unknown types
  const int index = static_cast<int>(numbers.Index(data, "index"));
  if (!numbers.ok()) return numbers.status();
  if (type == "content_block_start") return OnBlockStart(data, index, emit);
  if (type == "content_block_delta") return OnBlockDelta(data, index, emit);
  if (type == "content_block_stop") OnBlockStop(index, emit);
  return Status::Ok();
}

Message AnthropicDecoder::TakeMessage(bool partial) {
  // Without `partial`, a call whose block never stopped keeps empty arguments.
  Message m = builder_.Take(partial);
  const bool has_calls = std::any_of(m.content.begin(), m.content.end(), [](const ContentBlock& b) {
    return b.type == BlockType::kToolCall;
  });
  if (stop_reason_ == "tool_use") {
    m.stop_reason = StopReason::kToolUse;
  } else if (stop_reason_ == "max_tokens" || stop_reason_ == "model_context_window_exceeded") {
    m.stop_reason = StopReason::kMaxTokens;
  } else if (stop_reason_ == "refusal") {
    m.stop_reason = StopReason::kRefusal;
  } else {
    // end_turn, stop_sequence, pause_turn: the turn ended; tool calls, if any, decide.
    m.stop_reason = has_calls ? StopReason::kToolUse : StopReason::kEndTurn;
  }
  m.usage = usage_;
  return m;
}

// ---------------------------------------------------------------------------------------------
// Provider

HttpPostRequest AnthropicMessagesProvider::BuildHttpRequest(const ModelRequest& request) const {
  const HttpProviderConfig& c = config();
  AnthropicBodyOptions options;
  options.reasoning_model = c.model.reasoning;
  options.model_max_output = c.model.max_output;
  ModelRequest req = request;
  if (req.model.empty()) req.model = c.model.id;
  HttpPostRequest out;
  // ANTHROPIC_BASE_URL has no /v1; tolerate one that does.
  const std::string& prefix = c.base.path_prefix;
  bool has_v1 = prefix.size() >= 3 && prefix.compare(prefix.size() - 3, 3, "/v1") == 0;
  out.path = prefix + (has_v1 ? "/messages" : "/v1/messages");
  out.body = WriteAnthropicBody(req, options);
  out.headers.emplace_back("Accept", "text/event-stream");
  out.headers.emplace_back("User-Agent", std::string("lousho/") + LOUSHO_VERSION);
  out.headers.emplace_back("anthropic-version", kAnthropicVersion);
  if (!c.api_key.empty()) {
    if (c.settings.auth == "bearer") {
      out.headers.emplace_back("Authorization", "Bearer " + c.api_key);
    } else {
      out.headers.emplace_back("x-api-key", c.api_key);
    }
  }
  for (const auto& [k, v] : c.settings.headers) out.headers.emplace_back(k, v);
  return out;
}

}  // namespace lousho::agent
