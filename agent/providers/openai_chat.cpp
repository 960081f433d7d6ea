// OpenAI Chat Completions: request body, stream decoder and provider.
#include "agent/providers/openai_chat.h"

#include <algorithm>

#include "support/http/provider_errors.h"
#include "support/json_util.h"

namespace lousho::agent {

namespace {

const char* EffortFor(ThinkingLevel level) {
  switch (level) {
    case ThinkingLevel::kOff:
      return nullptr;
    case ThinkingLevel::kMinimal:
    case ThinkingLevel::kLow:
      return "low";
    case ThinkingLevel::kMedium:
      return "medium";
    case ThinkingLevel::kHigh:
    case ThinkingLevel::kXHigh:
      return "high";
  }
  return nullptr;
}

Json::Value ImagePart(const ContentBlock& b) {
  Json::Value part(Json::objectValue);
  part["type"] = "image_url";
  part["image_url"]["url"] = "data:" + b.mime_type + ";base64," + b.data;
  return part;
}

Json::Value TextPart(const std::string& text) {
  Json::Value part(Json::objectValue);
  part["type"] = "text";
  part["text"] = text;
  return part;
}

// User content: a plain string when it is text only (what every compatible server accepts),
// otherwise an array of parts.
Json::Value UserContent(const std::vector<ContentBlock>& blocks) {
  bool has_image = false;
  std::string text;
  for (const auto& b : blocks) {
    if (b.type == BlockType::kImage) has_image = true;
    if (b.type == BlockType::kText) text += b.text;
  }
  if (!has_image) return Json::Value(text);
  Json::Value parts(Json::arrayValue);
  for (const auto& b : blocks) {
    switch (b.type) {
      case BlockType::kText:
        if (!b.text.empty()) parts.append(TextPart(b.text));
        break;
      case BlockType::kImage:
        parts.append(ImagePart(b));
        break;
      case BlockType::kThinking:
      case BlockType::kToolCall:
        break;
    }
  }
  return parts;
}

// Tool messages cannot hold images: the images of a run of tool results go in one user message
// after the run (one between two tool messages would break the call/result pairing). Takes the
// images out of *pending.
Json::Value ToolImagesMessage(std::vector<ContentBlock>* pending) {
  std::vector<ContentBlock> blocks;
  blocks.push_back(ContentBlock::Text("Images from the tool results above:"));
  for (auto& img : *pending) blocks.push_back(std::move(img));
  pending->clear();
  Json::Value user(Json::objectValue);
  user["role"] = "user";
  user["content"] = UserContent(blocks);
  return user;
}

Json::Value AssistantMessage(const Message& m, const OpenAiChatBodyOptions& options) {
  Json::Value out(Json::objectValue);
  out["role"] = "assistant";
  std::string text;
  std::string reasoning;
  std::string reasoning_field;
  Json::Value calls(Json::arrayValue);
  for (const auto& b : m.content) {
    switch (b.type) {
      case BlockType::kText:
        text += b.text;
        break;
      case BlockType::kThinking:
        // The decoder records which field the server used; only that server wants it back.
        if (!b.redacted && (b.signature == "reasoning_content" || b.signature == "reasoning")) {
          reasoning += b.text;
          reasoning_field = b.signature;
        }
        break;
      case BlockType::kToolCall: {
        Json::Value c(Json::objectValue);
        c["id"] = b.id;
        c["type"] = "function";
        c["function"]["name"] = b.name;
        // Arguments travel as a JSON string; a raw unparsable string is sent back as it came.
        c["function"]["arguments"] =
            b.arguments.isNull() ? std::string("{}") : StringOrJson(b.arguments);
        calls.append(c);
        break;
      }
      case BlockType::kImage:
        break;
    }
  }
  if (calls.empty() || !text.empty()) {
    out["content"] = text;
  } else {
    out["content"] = Json::Value(Json::nullValue);
  }
  if (!calls.empty()) out["tool_calls"] = calls;
  if (!reasoning.empty() && m.provider == options.provider_name) out[reasoning_field] = reasoning;
  return out;
}

}  // namespace

Json::Value BuildOpenAiChatBody(const ModelRequest& request, const OpenAiChatBodyOptions& options) {
  Json::Value body(Json::objectValue);
  body["model"] = request.model;
  body["stream"] = true;
  body["stream_options"]["include_usage"] = true;
  Json::Value& messages = body["messages"] = Json::Value(Json::arrayValue);
  if (!request.system.empty()) {
    Json::Value sys(Json::objectValue);
    sys["role"] = "system";
    sys["content"] = request.system;
    messages.append(sys);
  }
  // The images of a run of tool results follow it (ToolImagesMessage).
  std::vector<ContentBlock> pending_images;
  auto flush_images = [&] {
    if (!pending_images.empty()) messages.append(ToolImagesMessage(&pending_images));
  };
  for (const Message& m : request.messages) {
    switch (m.role) {
      case Role::kUser: {
        flush_images();
        Json::Value user(Json::objectValue);
        user["role"] = "user";
        user["content"] = UserContent(m.content);
        messages.append(user);
        break;
      }
      case Role::kAssistant:
        flush_images();
        messages.append(AssistantMessage(m, options));
        break;
      case Role::kToolResult: {
        Json::Value tool(Json::objectValue);
        tool["role"] = "tool";
        tool["tool_call_id"] = m.tool_call_id;
        std::string text;
        for (const auto& b : m.content) {
          if (b.type == BlockType::kText) text += b.text;
          if (b.type == BlockType::kImage) pending_images.push_back(b);
        }
        tool["content"] = text;
        messages.append(tool);
        break;
      }
    }
  }
  flush_images();
  if (!request.tools.empty()) {
    Json::Value& tools = body["tools"] = Json::Value(Json::arrayValue);
    for (const ToolSchema& t : request.tools) {
      Json::Value fn(Json::objectValue);
      fn["type"] = "function";
      fn["function"]["name"] = t.name;
      fn["function"]["description"] = t.description;
      Json::Value params = t.parameters;
      if (!params.isObject()) {
        params = Json::Value(Json::objectValue);
        params["type"] = "object";
        params["properties"] = Json::Value(Json::objectValue);
      }
      fn["function"]["parameters"] = params;
      tools.append(fn);
    }
  }
  long long max_tokens =
      request.max_output_tokens > 0 ? request.max_output_tokens : options.default_max_tokens;
  if (max_tokens > 0) {
    body[options.use_max_completion_tokens ? "max_completion_tokens" : "max_tokens"] =
        Json::Value(static_cast<Json::Int64>(max_tokens));
  }
  if (options.reasoning_model) {
    if (const char* effort = EffortFor(request.thinking)) body["reasoning_effort"] = effort;
  }
  return body;
}

// ---------------------------------------------------------------------------------------------
// Decoder

namespace {

// A mid-stream error object (`{"error": ...}`), or Ok.
Status StreamError(const Json::Value& chunk) {
  const Json::Value* err = FindMember(chunk, "error");
  if (err == nullptr || err->isNull()) return Status::Ok();
  std::string type = StringOr(*err, "code");
  if (type.empty()) type = StringOr(*err, "type");
  std::string message = AsString(*err).value_or(StringOr(*err, "message"));
  return ErrorFromStream(type, message);
}

// Text chunks are most of a stream. A chunk whose bytes are exactly an object of plain scalar
// members (id, object, created, model, system_fingerprint... as servers send them, no spaces)
// and one choices member of exactly [{"index":0,"delta":{"content":"..."},"logprobs":null,
// "finish_reason":null}] is read here without a Json::Value: its text is the content. Anything
// else (an error or usage member, other choices, nested values, spaces) returns false and takes the
// general path, which reads the same chunk to the same result (tests/providers/openai_chat_test.cpp
// compares both).
bool ReadPlainContentChunk(std::string_view data, std::string* text) {
  constexpr std::string_view kChoiceHead = R"([{"index":0,"delta":{"content":")";
  constexpr std::string_view kChoiceTail = R"(},"logprobs":null,"finish_reason":null}])";
  if (!data.starts_with('{')) return false;
  bool choices = false;
  std::string key;
  for (size_t i = 1;;) {
    if (i >= data.size() || data[i] != '"') return false;
    key.clear();
    const size_t k = ReadJsonStringBody(data.substr(i + 1), &key);
    if (k == 0) return false;
    i += 1 + k;
    if (i >= data.size() || data[i] != ':') return false;
    ++i;
    const std::string_view rest = data.substr(i);
    if (key == "choices") {
      if (choices || !rest.starts_with(kChoiceHead)) return false;
      choices = true;
      text->clear();
      const size_t n = ReadJsonStringBody(rest.substr(kChoiceHead.size()), text);
      if (n == 0 || !rest.substr(kChoiceHead.size() + n).starts_with(kChoiceTail)) return false;
      i += kChoiceHead.size() + n + kChoiceTail.size();
    } else if (key == "error" || key == "usage") {
      return false;
    } else {
      const size_t v = SkipJsonScalar(rest);
      if (v == 0) return false;
      i += v;
    }
    if (i >= data.size()) return false;
    if (data[i] == ',') {
      ++i;
      continue;
    }
    return data[i] == '}' && i + 1 == data.size() && choices;
  }
}

// The usage chunk's figures (prompt tokens include the cached ones).
Status ReadUsage(const Json::Value& chunk, StreamNumbers* numbers, Usage* usage) {
  const Json::Value* u = FindMember(chunk, "usage");
  if (u == nullptr || !u->isObject()) return Status::Ok();
  long long prompt = numbers->Tokens(*u, "prompt_tokens");
  long long cached = 0;
  if (const Json::Value* d = FindMember(*u, "prompt_tokens_details")) {
    cached = numbers->Tokens(*d, "cached_tokens");
  }
  long long output = numbers->Tokens(*u, "completion_tokens");
  if (!numbers->ok()) return numbers->status();
  usage->input = prompt - cached > 0 ? prompt - cached : 0;
  usage->cache_read = cached;
  usage->output = output;
  return Status::Ok();
}

// The argument text of one tool-call fragment. Ollama's native shape sends an object; it is taken
// as the whole argument text.
std::string ArgumentFragment(const Json::Value* fn) {
  const Json::Value* a = fn ? FindMember(*fn, "arguments") : nullptr;
  if (a == nullptr) return {};
  if (a->isString() || a->isObject()) return StringOrJson(*a);
  return {};
}

}  // namespace

bool OpenAiChatDecoder::AppendText(DeltaKind kind, std::string text, const char* field,
                                   const DeltaCallback& emit) {
  StreamDelta d;
  d.kind = kind;
  d.text = std::move(text);
  const bool go_on = Apply(std::move(d), emit);
  if (kind == DeltaKind::kThinking) {
    // The field the server used is remembered so that only that server gets the text back.
    const int at = builder_.open_block();
    if (at >= 0 && builder_.message().content[at].signature.empty()) {
      builder_.AddSignature(at, field);
    }
  }
  return go_on;
}

bool OpenAiChatDecoder::EndToolCalls(const DeltaCallback& emit) {
  for (int key : builder_.UnendedToolCalls()) {
    builder_.EndToolCall(key, Forward(emit));
    if (aborted_) return false;
  }
  return true;
}

bool OpenAiChatDecoder::ConsumeText(const Json::Value& delta, const DeltaCallback& emit) {
  for (const char* field : {"reasoning_content", "reasoning"}) {
    std::string r = StringOr(delta, field);
    if (r.empty()) continue;
    if (!AppendText(DeltaKind::kThinking, std::move(r), field, emit)) return false;
    break;  // servers in transition send both names with the same text
  }
  for (const char* field : {"content", "refusal"}) {
    std::string text = StringOr(delta, field);
    if (!text.empty() && !AppendText(DeltaKind::kText, std::move(text), field, emit)) return false;
  }
  return true;
}

Status OpenAiChatDecoder::ToolCallKey(const Json::Value& tc, const std::string& id,
                                      StreamNumbers* numbers, int* key) const {
  if (const Json::Value* idx = FindMember(tc, "index"); idx && !idx->isNull()) {
    *key = static_cast<int>(numbers->Index(tc, "index"));
    return numbers->status();
  }
  // A server that omits the index sends whole calls, told apart by their ids.
  const int last = builder_.ToolCallBlock(last_call_key_);
  const bool new_id = !id.empty() && last >= 0 && builder_.message().content[last].id != id;
  *key = last_call_key_ < 0 || new_id ? last_call_key_ + 1 : last_call_key_;
  if (*key > kMaxBlockIndex) {
    return MakeError(kProviderBadResponse, "more than " + std::to_string(kMaxBlockIndex + 1) +
                                               " tool calls in one response");
  }
  return Status::Ok();
}

Status OpenAiChatDecoder::ConsumeToolCall(const Json::Value& tc, StreamNumbers* numbers,
                                          const DeltaCallback& emit) {
  std::string id = StringOr(tc, "id");
  const Json::Value* fn = FindMember(tc, "function");
  std::string name = fn ? StringOr(*fn, "name") : std::string();
  int key = 0;
  if (Status s = ToolCallKey(tc, id, numbers, &key); !s.ok()) return s;
  if (builder_.ToolCallBlock(key) < 0) {
    if (id.empty()) id = "call_" + std::to_string(key);
    if (!Apply(StreamDelta{DeltaKind::kToolCallStart, key, "", id, name}, emit)) {
      return Status::Ok();
    }
  } else if (!name.empty()) {
    builder_.NameToolCall(key, name);
  }
  last_call_key_ = std::max(last_call_key_, key);
  std::string fragment = ArgumentFragment(fn);
  if (fragment.empty() || builder_.ToolCallEnded(key)) return Status::Ok();
  const std::string& call_id = builder_.message().content[builder_.ToolCallBlock(key)].id;
  Apply(StreamDelta{DeltaKind::kToolCallArgs, key, std::move(fragment), call_id, ""}, emit);
  return Status::Ok();
}

Status OpenAiChatDecoder::ConsumeChoice(const Json::Value& choice, StreamNumbers* numbers,
                                        const DeltaCallback& emit) {
  const long long choice_index = numbers->Index(choice, "index");
  if (!numbers->ok()) return numbers->status();
  if (choice_index != 0) return Status::Ok();  // we never ask for n > 1
  if (const Json::Value* delta = FindMember(choice, "delta"); delta && delta->isObject()) {
    if (!ConsumeText(*delta, emit)) return Status::Ok();
    const Json::Value* tool_calls = FindMember(*delta, "tool_calls");
    if (tool_calls && tool_calls->isArray()) {
      for (const Json::Value& tc : *tool_calls) {
        Status s = ConsumeToolCall(tc, numbers, emit);
        if (!s.ok() || aborted_) return s;
      }
    }
  }
  if (auto fr = AsString(MemberOrNull(choice, "finish_reason"))) {
    finish_reason_ = *fr;
    finish_seen_ = true;
    EndToolCalls(emit);
  }
  return Status::Ok();
}

Status OpenAiChatDecoder::Consume(const SseEvent& event, const DeltaCallback& emit) {
  if (aborted_ || done_) return Status::Ok();
  if (event.data == "[DONE]") {
    done_ = true;
    EndToolCalls(emit);
    return Status::Ok();
  }
  if (ReadPlainContentChunk(event.data, &plain_text_)) {
    if (!plain_text_.empty()) AppendText(DeltaKind::kText, plain_text_, "content", emit);
    return Status::Ok();
  }
  auto parsed = ParseJson(event.data);
  if (!parsed.ok() || !parsed->isObject()) {
    return MakeError(kProviderBadResponse, "malformed stream chunk: " + event.data.substr(0, 200));
  }
  const Json::Value& chunk = *parsed;
  if (Status s = StreamError(chunk); !s.ok()) return s;
  // Every number is checked before use; one out of range fails the response as malformed.
  StreamNumbers numbers("chat completion chunk");
  if (Status s = ReadUsage(chunk, &numbers, &usage_); !s.ok()) return s;
  const Json::Value* choices = FindMember(chunk, "choices");
  if (!choices || !choices->isArray()) return Status::Ok();  // null or missing: usage chunk
  for (const Json::Value& choice : *choices) {
    Status s = ConsumeChoice(choice, &numbers, emit);
    if (!s.ok() || aborted_) return s;
  }
  return Status::Ok();
}

Message OpenAiChatDecoder::TakeMessage(bool partial) {
  if (!partial) {
    // The stream ended well without closing some calls: their arguments are whole.
    const MessageBuilder::Emit nowhere = [](const StreamDelta&) {};
    for (int key : builder_.UnendedToolCalls()) builder_.EndToolCall(key, nowhere);
  }
  Message m = builder_.Take(partial);
  const bool has_calls = std::any_of(m.content.begin(), m.content.end(), [](const ContentBlock& b) {
    return b.type == BlockType::kToolCall;
  });
  if (finish_reason_ == "length") {
    m.stop_reason = StopReason::kMaxTokens;
  } else if (finish_reason_ == "content_filter") {
    m.stop_reason = StopReason::kRefusal;
  } else {
    // Several servers say "stop" after streaming tool calls: the calls decide.
    m.stop_reason = has_calls ? StopReason::kToolUse : StopReason::kEndTurn;
  }
  m.usage = usage_;
  return m;
}

// ---------------------------------------------------------------------------------------------
// Provider

namespace {

// `{"content":<text>,"role":<role>` and the closing brace: the members of a text-only message
// in jsoncpp's sorted order.
void AppendTextMessage(const char* role, const std::string& text, std::string* out) {
  out->append("{\"content\":");
  AppendJsonString(text, out);
  out->append(",\"role\":\"");
  out->append(role);
  out->append("\"}");
}

std::string JoinedText(const std::vector<ContentBlock>& blocks) {
  std::string text;
  for (const auto& b : blocks)
    if (b.type == BlockType::kText) text += b.text;
  return text;
}

}  // namespace

std::string WriteOpenAiChatBody(const ModelRequest& request, const OpenAiChatBodyOptions& options) {
  // Every member but the conversation through the DOM (a few small values, the system message
  // included); the conversation's messages, which sort right after max_*tokens, written in.
  ModelRequest rest = request;
  rest.messages = {};
  Json::Value others = BuildOpenAiChatBody(rest, options);
  Json::Value system;
  others.removeMember("messages", &system);
  Json::Value max_tokens;
  const char* max_key = nullptr;
  for (const char* key : {"max_completion_tokens", "max_tokens"})
    if (others.removeMember(key, &max_tokens)) max_key = key;
  const std::string tail = WriteJson(others);  // {"model":…}: never empty
  size_t text = 0;
  for (const Message& m : request.messages)
    for (const auto& b : m.content) text += b.text.size() + b.data.size() + 64;
  std::string out;
  out.reserve(tail.size() + text + 128);
  out.push_back('{');
  if (max_key != nullptr) {
    out.append("\"");
    out.append(max_key);
    out.append("\":");
    out.append(WriteJson(max_tokens));
    out.push_back(',');
  }
  out.append("\"messages\":[");
  bool first = true;
  auto next = [&] {
    if (!first) out.push_back(',');
    first = false;
  };
  for (const Json::Value& m : system) {
    next();
    out.append(WriteJson(m));
  }
  // As BuildOpenAiChatBody: the images of a run of tool results follow it in one user message.
  std::vector<ContentBlock> pending_images;
  auto flush_images = [&] {
    if (pending_images.empty()) return;
    next();
    out.append(WriteJson(ToolImagesMessage(&pending_images)));
  };
  for (const Message& m : request.messages) {
    switch (m.role) {
      case Role::kUser: {
        flush_images();
        next();
        const bool has_image = std::any_of(m.content.begin(), m.content.end(), [](const auto& b) {
          return b.type == BlockType::kImage;
        });
        if (!has_image) {
          AppendTextMessage("user", JoinedText(m.content), &out);
        } else {
          Json::Value user(Json::objectValue);
          user["role"] = "user";
          user["content"] = UserContent(m.content);
          out.append(WriteJson(user));
        }
        break;
      }
      case Role::kAssistant: {
        flush_images();
        next();
        // Text only (no tool call, no reasoning to echo): written here; else through the DOM.
        const bool plain = std::all_of(m.content.begin(), m.content.end(), [](const auto& b) {
          return b.type == BlockType::kText || b.type == BlockType::kImage ||
                 (b.type == BlockType::kThinking &&
                  (b.redacted ||
                   (b.signature != "reasoning" && b.signature != "reasoning_content")));
        });
        if (plain) {
          AppendTextMessage("assistant", JoinedText(m.content), &out);
        } else {
          out.append(WriteJson(AssistantMessage(m, options)));
        }
        break;
      }
      case Role::kToolResult: {
        for (const auto& b : m.content)
          if (b.type == BlockType::kImage) pending_images.push_back(b);
        next();
        out.append("{\"content\":");
        AppendJsonString(JoinedText(m.content), &out);
        out.append(",\"role\":\"tool\",\"tool_call_id\":");
        AppendJsonString(m.tool_call_id, &out);
        out.push_back('}');
        break;
      }
    }
  }
  flush_images();
  out.append("],");
  out.append(tail, 1, std::string::npos);
  return out;
}

HttpPostRequest OpenAiChatProvider::BuildHttpRequest(const ModelRequest& request) const {
  const HttpProviderConfig& c = config();
  OpenAiChatBodyOptions options;
  options.provider_name = c.settings.name;
  options.reasoning_model = c.model.reasoning;
  options.use_max_completion_tokens =
      c.settings.name == "openai" || c.base.host == "api.openai.com";
  ModelRequest req = request;
  if (req.model.empty()) req.model = c.model.id;
  HttpPostRequest out;
  out.path = c.base.path_prefix + "/chat/completions";
  out.body = WriteOpenAiChatBody(req, options);
  out.headers.emplace_back("Accept", "text/event-stream");
  out.headers.emplace_back("User-Agent", std::string("lousho/") + LOUSHO_VERSION);
  if (!c.api_key.empty()) out.headers.emplace_back("Authorization", "Bearer " + c.api_key);
  for (const auto& [k, v] : c.settings.headers) out.headers.emplace_back(k, v);
  return out;
}

}  // namespace lousho::agent
