// Gemini's native API: the request body.
#include "agent/providers/gemini.h"
#include "agent/providers/request_size.h"
#include "support/json_util.h"
#include "support/json_writer.h"

namespace lousho::agent {

bool GeminiThinkingByLevel(std::string_view model_id) { return model_id.starts_with("gemini-3"); }

namespace {

// The contents array: consecutive messages of one role become one content (the API wants the
// function responses of a turn together, and the roles to alternate); messages that leave no
// part are left out.
class GeminiContentsWriter {
 public:
  GeminiContentsWriter(JsonWriter* w, const GeminiBodyOptions& options)
      : w_(*w), options_(options) {}

  void Add(const Message& m) {
    switch (m.role) {
      case Role::kUser:
        User(m);
        break;
      case Role::kAssistant:
        Model(m);
        break;
      case Role::kToolResult:
        ToolResult(m);
        break;
    }
  }
  void Finish() {
    if (role_ == nullptr) return;
    w_.ArrayEnd();
    w_.AttributeEnd();
    w_.Attribute("role", role_);
    w_.ObjectEnd();
    role_ = nullptr;
  }

 private:
  // Starts a part of a content of `role`.
  void PartBegin(const char* role) {
    if (role_ != nullptr && std::string_view(role_) != role) Finish();
    if (role_ == nullptr) {
      w_.ObjectBegin();
      w_.AttributeBegin("parts");
      w_.ArrayBegin();
      role_ = role;
    }
    w_.ObjectBegin();
  }
  void TextPart(const char* role, std::string_view text, bool thought, std::string_view signature) {
    PartBegin(role);
    w_.Attribute("text", text);
    if (thought) w_.Attribute("thought", true);
    if (!signature.empty()) w_.Attribute("thoughtSignature", signature);
    w_.ObjectEnd();
  }
  void ImagePart(const char* role, const ContentBlock& b) {
    PartBegin(role);
    w_.AttributeBegin("inlineData");
    w_.ObjectBegin();
    w_.Attribute("data", b.data());
    w_.Attribute("mimeType", b.mime_type());
    w_.ObjectEnd();
    w_.AttributeEnd();
    w_.ObjectEnd();
  }
  void User(const Message& m) {
    bool any = false;
    for (const auto& b : m.content) {
      if (b.type == BlockType::kText && !b.text.empty()) TextPart("user", b.text, false, {});
      if (b.type == BlockType::kImage) ImagePart("user", b);
      any = any || (b.type == BlockType::kText && !b.text.empty()) || b.type == BlockType::kImage;
    }
    if (!any) TextPart("user", " ", false, {});
  }
  void CallPart(const ContentBlock& b, std::string_view signature) {
    PartBegin("model");
    w_.AttributeBegin("functionCall");
    w_.ObjectBegin();
    w_.AttributeBegin("args");
    WriteObjectOrEmpty(b.arguments(), &w_);
    w_.AttributeEnd();
    w_.Attribute("name", b.name());
    w_.ObjectEnd();
    w_.AttributeEnd();
    if (!signature.empty()) w_.Attribute("thoughtSignature", signature);
    w_.ObjectEnd();
  }
  // The model's parts in order, each thought signature on the part it came with. Thinking from
  // another provider (or unsigned) is not sent: the API takes back only its own.
  void Model(const Message& m) {
    const bool own = m.provider() == options_.provider_name;
    std::string_view pending;  // a signature for the next part
    for (const auto& b : m.content) {
      if (b.type == BlockType::kThinking) {
        if (!own || b.redacted()) continue;
        std::string_view sig = b.signature();
        if (sig.starts_with(kGeminiThoughtSignature)) {
          TextPart("model", b.text, true, sig.substr(kGeminiThoughtSignature.size()));
        } else if (sig.starts_with(kGeminiNextSignature)) {
          if (!b.text.empty()) TextPart("model", b.text, true, {});
          pending = sig.substr(kGeminiNextSignature.size());
        }
        continue;
      }
      if (b.type == BlockType::kText && !b.text.empty()) {
        TextPart("model", b.text, false, pending);
        pending = {};
      } else if (b.type == BlockType::kToolCall) {
        CallPart(b, pending);
        pending = {};
      }
    }
    if (!pending.empty()) TextPart("model", "", false, pending);
  }
  void ToolResult(const Message& m) {
    std::string text;
    for (const auto& b : m.content) {
      if (b.type == BlockType::kText) text += b.text;
    }
    PartBegin("user");
    w_.AttributeBegin("functionResponse");
    w_.ObjectBegin();
    w_.Attribute("name", m.tool_name);
    w_.AttributeBegin("response");
    w_.ObjectBegin();
    w_.Attribute(m.is_error ? "error" : "output", text);
    w_.ObjectEnd();
    w_.AttributeEnd();
    w_.ObjectEnd();
    w_.AttributeEnd();
    w_.ObjectEnd();
    // Images of a tool's result follow its response in the same turn.
    for (const auto& b : m.content) {
      if (b.type == BlockType::kImage) ImagePart("user", b);
    }
  }

  JsonWriter& w_;
  const GeminiBodyOptions& options_;
  const char* role_ = nullptr;  // the open content's role
};

long long GeminiThinkingBudget(ThinkingLevel level, bool pro) {
  switch (level) {
    case ThinkingLevel::kOff:
      return pro ? 128 : 0;  // the pro models always think (128 is their least)
    case ThinkingLevel::kMinimal:
      return 512;
    case ThinkingLevel::kLow:
      return 2048;
    case ThinkingLevel::kMedium:
      return 8192;
    case ThinkingLevel::kHigh:
      return 16384;
    case ThinkingLevel::kXHigh:
      return 24576;  // the flash models' most
  }
  return 0;
}

void WriteThinkingConfig(const ModelRequest& request, const GeminiBodyOptions& options,
                         JsonWriter* w) {
  w->AttributeBegin("thinkingConfig");
  w->ObjectBegin();
  w->Attribute("includeThoughts", request.thinking != ThinkingLevel::kOff);
  if (GeminiThinkingByLevel(options.model)) {
    const bool high = request.thinking == ThinkingLevel::kMedium ||
                      request.thinking == ThinkingLevel::kHigh ||
                      request.thinking == ThinkingLevel::kXHigh;
    w->Attribute("thinkingLevel", high ? "high" : "low");
  } else {
    const bool pro = options.model.find("-pro") != std::string::npos;
    w->Attribute("thinkingBudget", GeminiThinkingBudget(request.thinking, pro));
  }
  w->ObjectEnd();
  w->AttributeEnd();
}

void WriteGeminiTools(const ModelRequest& request, JsonWriter* w) {
  w->AttributeBegin("toolConfig");
  w->ObjectBegin();
  w->AttributeBegin("functionCallingConfig");
  w->ObjectBegin();
  w->Attribute("mode", "AUTO");
  w->ObjectEnd();
  w->AttributeEnd();
  w->ObjectEnd();
  w->AttributeEnd();
  w->AttributeBegin("tools");
  w->ArrayBegin();
  w->ObjectBegin();
  w->AttributeBegin("functionDeclarations");
  w->ArrayBegin();
  for (const ToolSchema& t : request.tools) {
    w->ObjectBegin();
    w->Attribute("description", t.description);
    w->Attribute("name", t.name);
    // The full JSON Schema form (`parameters` takes only an OpenAPI subset).
    w->AttributeBegin("parametersJsonSchema");
    WriteToolSchema(t.parameters, w);
    w->AttributeEnd();
    w->ObjectEnd();
  }
  w->ArrayEnd();
  w->AttributeEnd();
  w->ObjectEnd();
  w->ArrayEnd();
  w->AttributeEnd();
}

}  // namespace

std::string WriteGeminiBody(const ModelRequest& request, const GeminiBodyOptions& options) {
  std::string out;
  out.reserve(RequestBodySizeHint(request));
  JsonWriter w(&out);
  w.ObjectBegin();
  w.AttributeBegin("contents");
  w.ArrayBegin();
  GeminiContentsWriter contents(&w, options);
  for (const Message& m : request.messages) contents.Add(m);
  contents.Finish();
  w.ArrayEnd();
  w.AttributeEnd();
  const bool config = request.max_output_tokens > 0 || options.reasoning_model;
  if (config) {
    w.AttributeBegin("generationConfig");
    w.ObjectBegin();
    if (request.max_output_tokens > 0) w.Attribute("maxOutputTokens", request.max_output_tokens);
    if (options.reasoning_model) WriteThinkingConfig(request, options, &w);
    w.ObjectEnd();
    w.AttributeEnd();
  }
  if (!request.system.empty()) {
    w.AttributeBegin("systemInstruction");
    w.ObjectBegin();
    w.AttributeBegin("parts");
    w.ArrayBegin();
    w.ObjectBegin();
    w.Attribute("text", request.system);
    w.ObjectEnd();
    w.ArrayEnd();
    w.AttributeEnd();
    w.ObjectEnd();
    w.AttributeEnd();
  }
  if (!request.tools.empty()) WriteGeminiTools(request, &w);
  w.ObjectEnd();
  return out;
}

}  // namespace lousho::agent
