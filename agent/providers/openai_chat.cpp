// OpenAI Chat Completions: request body, stream decoder and provider.
#include "agent/providers/openai_chat.h"

#include "agent/providers/provider_errors.h"
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
  // Tool messages cannot hold images; those go in one user message after the run of tool
  // messages (a user message between two tool messages would break the call/result pairing).
  std::vector<ContentBlock> pending_images;
  auto flush_images = [&] {
    if (pending_images.empty()) return;
    std::vector<ContentBlock> blocks;
    blocks.push_back(ContentBlock::Text("Images from the tool results above:"));
    for (auto& img : pending_images) blocks.push_back(std::move(img));
    pending_images.clear();
    Json::Value user(Json::objectValue);
    user["role"] = "user";
    user["content"] = UserContent(blocks);
    messages.append(user);
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

bool OpenAiChatDecoder::AppendText(BlockType type, const std::string& text,
                                   const std::string& field, const DeltaCallback& emit) {
  if (open_block_ < 0 || blocks_[open_block_].type != type) {
    ContentBlock b;
    b.type = type;
    if (type == BlockType::kThinking) b.signature = field;  // remembered to echo it back
    blocks_.push_back(std::move(b));
    open_block_ = static_cast<int>(blocks_.size()) - 1;
  }
  blocks_[open_block_].text += text;
  StreamDelta d;
  d.kind = type == BlockType::kThinking ? DeltaKind::kThinking : DeltaKind::kText;
  d.index = open_block_;
  d.text = text;
  return Emit(emit, d);
}

bool OpenAiChatDecoder::EndToolCalls(const DeltaCallback& emit) {
  for (auto& [key, call] : calls_) {
    if (call.ended) continue;
    call.ended = true;
    ContentBlock& b = blocks_[call.block];
    if (call.args.empty()) {
      b.arguments = Json::Value(Json::objectValue);
    } else {
      auto parsed = ParseJson(call.args);
      // Unparsable arguments stay a raw string so the engine can tell the model what it sent.
      b.arguments = parsed.ok() ? *parsed : Json::Value(call.args);
    }
    StreamDelta d;
    d.kind = DeltaKind::kToolCallEnd;
    d.index = call.block;
    d.id = b.id;
    d.name = b.name;
    d.text = StringOrJson(b.arguments);
    if (!Emit(emit, d)) return false;
  }
  return true;
}

Status OpenAiChatDecoder::Consume(const SseEvent& event, const DeltaCallback& emit) {
  if (aborted_ || done_) return Status::Ok();
  if (event.data == "[DONE]") {
    done_ = true;
    EndToolCalls(emit);
    return Status::Ok();
  }
  auto parsed = ParseJson(event.data);
  if (!parsed.ok() || !parsed->isObject()) {
    return MakeError(kProviderBadResponse, "malformed stream chunk: " + event.data.substr(0, 200));
  }
  const Json::Value& chunk = *parsed;
  if (const Json::Value* err = FindMember(chunk, "error"); err && !err->isNull()) {
    std::string type = StringOr(*err, "code");
    if (type.empty()) type = StringOr(*err, "type");
    std::string message = AsString(*err).value_or(StringOr(*err, "message"));
    return ErrorFromStream(type, message);
  }
  // Every number is checked before use; one out of range fails the response as malformed.
  StreamNumbers numbers("chat completion chunk");
  if (const Json::Value* u = FindMember(chunk, "usage"); u && u->isObject()) {
    long long prompt = numbers.Tokens(*u, "prompt_tokens");
    long long cached = 0;
    if (const Json::Value* d = FindMember(*u, "prompt_tokens_details")) {
      cached = numbers.Tokens(*d, "cached_tokens");
    }
    long long output = numbers.Tokens(*u, "completion_tokens");
    if (!numbers.ok()) return numbers.status();
    usage_.input = prompt - cached > 0 ? prompt - cached : 0;
    usage_.cache_read = cached;
    usage_.output = output;
  }
  const Json::Value* choices = FindMember(chunk, "choices");
  if (!choices || !choices->isArray()) return Status::Ok();  // null or missing: usage chunk
  for (const Json::Value& choice : *choices) {
    long long choice_index = numbers.Index(choice, "index");
    if (!numbers.ok()) return numbers.status();
    if (choice_index != 0) continue;  // we never ask for n > 1
    if (const Json::Value* delta = FindMember(choice, "delta"); delta && delta->isObject()) {
      for (const char* field : {"reasoning_content", "reasoning"}) {
        std::string r = StringOr(*delta, field);
        if (r.empty()) continue;
        if (!AppendText(BlockType::kThinking, r, field, emit)) return Status::Ok();
        break;  // servers in transition send both names with the same text
      }
      std::string text = StringOr(*delta, "content");
      if (!text.empty() && !AppendText(BlockType::kText, text, "", emit)) return Status::Ok();
      std::string refusal = StringOr(*delta, "refusal");
      if (!refusal.empty() && !AppendText(BlockType::kText, refusal, "", emit)) {
        return Status::Ok();
      }
      const Json::Value* tool_calls = FindMember(*delta, "tool_calls");
      if (tool_calls && tool_calls->isArray()) {
        for (const Json::Value& tc : *tool_calls) {
          std::string id = StringOr(tc, "id");
          const Json::Value* fn = FindMember(tc, "function");
          std::string name = fn ? StringOr(*fn, "name") : std::string();
          // Key by index; a server that omits it sends whole calls, told apart by their ids.
          int key;
          if (const Json::Value* idx = FindMember(tc, "index"); idx && !idx->isNull()) {
            key = static_cast<int>(numbers.Index(tc, "index"));
            if (!numbers.ok()) return numbers.status();
          } else if (last_call_key_ < 0 ||
                     (!id.empty() && blocks_[calls_[last_call_key_].block].id != id)) {
            key = last_call_key_ + 1;
          } else {
            key = last_call_key_;
          }
          if (key > kMaxBlockIndex) {
            return MakeError(
                kProviderBadResponse,
                "more than " + std::to_string(kMaxBlockIndex + 1) + " tool calls in one response");
          }
          auto it = calls_.find(key);
          if (it == calls_.end()) {
            ContentBlock b = ContentBlock::ToolCall(id.empty() ? "call_" + std::to_string(key) : id,
                                                    name, Json::Value());
            blocks_.push_back(std::move(b));
            open_block_ = -1;
            Call call;
            call.block = static_cast<int>(blocks_.size()) - 1;
            it = calls_.emplace(key, call).first;
            StreamDelta d;
            d.kind = DeltaKind::kToolCallStart;
            d.index = call.block;
            d.id = blocks_[call.block].id;
            d.name = name;
            if (!Emit(emit, d)) return Status::Ok();
          } else if (!name.empty() && blocks_[it->second.block].name.empty()) {
            blocks_[it->second.block].name = name;
          }
          if (key > last_call_key_) last_call_key_ = key;
          std::string fragment;
          if (fn) {
            if (const Json::Value* a = FindMember(*fn, "arguments")) {
              // Ollama's native shape sends an object; accept it as the whole argument text.
              if (auto text = AsString(*a)) fragment = std::move(*text);
              if (a->isObject()) fragment = WriteJson(*a);
            }
          }
          if (!fragment.empty() && !it->second.ended) {
            it->second.args += fragment;
            StreamDelta d;
            d.kind = DeltaKind::kToolCallArgs;
            d.index = it->second.block;
            d.id = blocks_[it->second.block].id;
            d.text = fragment;
            if (!Emit(emit, d)) return Status::Ok();
          }
        }
      }
    }
    if (const Json::Value* fr = FindMember(choice, "finish_reason"); fr && fr->isString()) {
      finish_reason_ = StringOr(choice, "finish_reason");
      finish_seen_ = true;
      if (!EndToolCalls(emit)) return Status::Ok();
    }
  }
  return Status::Ok();
}

Message OpenAiChatDecoder::TakeMessage(bool partial) {
  Message m;
  m.role = Role::kAssistant;
  bool has_calls = false;
  for (auto& [key, call] : calls_) {
    if (!call.ended && !partial) {
      auto parsed = ParseJson(call.args.empty() ? "{}" : call.args);
      blocks_[call.block].arguments = parsed.ok() ? *parsed : Json::Value(call.args);
      call.ended = true;
    }
  }
  for (size_t i = 0; i < blocks_.size(); ++i) {
    const ContentBlock& b = blocks_[i];
    if (b.type == BlockType::kToolCall) {
      bool ended = false;
      for (const auto& [key, call] : calls_)
        if (call.block == static_cast<int>(i)) ended = call.ended;
      if (!ended) continue;
      has_calls = true;
    }
    m.content.push_back(b);
  }
  if (finish_reason_ == "length") {
    m.stop_reason = StopReason::kMaxTokens;
  } else if (finish_reason_ == "content_filter") {
    m.stop_reason = StopReason::kRefusal;
  } else if (finish_reason_ == "tool_calls" || finish_reason_ == "function_call" || has_calls) {
    // Several servers say "stop" after streaming tool calls: the calls decide.
    m.stop_reason = has_calls ? StopReason::kToolUse : StopReason::kEndTurn;
  } else {
    m.stop_reason = StopReason::kEndTurn;
  }
  m.usage = usage_;
  return m;
}

// ---------------------------------------------------------------------------------------------
// Provider

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
  out.body = WriteJson(BuildOpenAiChatBody(req, options));
  out.headers.emplace_back("Accept", "text/event-stream");
  out.headers.emplace_back("User-Agent", std::string("lousho/") + LOUSHO_VERSION);
  if (!c.api_key.empty()) out.headers.emplace_back("Authorization", "Bearer " + c.api_key);
  for (const auto& [k, v] : c.settings.headers) out.headers.emplace_back(k, v);
  return out;
}

}  // namespace lousho::agent
