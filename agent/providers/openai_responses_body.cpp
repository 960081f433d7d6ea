// OpenAI Responses API: the request body.
#include <algorithm>

#include "agent/providers/openai_chat.h"
#include "agent/providers/openai_responses.h"
#include "agent/providers/request_size.h"
#include "core/freeform_tool.h"
#include "support/json_util.h"
#include "support/json_writer.h"

namespace lousho::agent {

namespace {

// The input items of the body, written as they are read.
class ResponsesInputWriter {
 public:
  ResponsesInputWriter(JsonWriter* w, const ModelRequest& request,
                       const OpenAiResponsesBodyOptions& options)
      : w_(*w), request_(request), options_(options) {}

  void Add(const Message& m) {
    if (m.role != Role::kToolResult) FlushImages();
    switch (m.role) {
      case Role::kUser:
        UserMessage(m.content);
        break;
      case Role::kAssistant:
        Assistant(m);
        break;
      case Role::kToolResult:
        ToolResult(m);
        break;
    }
  }
  // Tool outputs are text: the images of a run of tool results go in one user message after it.
  void FlushImages() {
    if (pending_images_.empty()) return;
    MessageBegin("user");
    InputText("Images from the tool results above:");
    for (const ContentBlock* img : pending_images_) InputImage(*img);
    pending_images_.clear();
    MessageEnd();
  }

 private:
  void MessageBegin(const char* role) {
    w_.ObjectBegin();
    w_.AttributeBegin("content");
    w_.ArrayBegin();
    role_ = role;
  }
  void MessageEnd() {
    w_.ArrayEnd();
    w_.AttributeEnd();
    w_.Attribute("role", role_);
    w_.Attribute("type", "message");
    w_.ObjectEnd();
  }
  void Part(const char* key, std::string_view value, const char* type) {
    w_.ObjectBegin();
    w_.Attribute(key, value);
    w_.Attribute("type", type);
    w_.ObjectEnd();
  }
  void InputText(std::string_view text) { Part("text", text, "input_text"); }
  void InputImage(const ContentBlock& b) {
    Part("image_url", "data:" + b.mime_type() + ";base64," + b.data(), "input_image");
  }
  void UserMessage(const std::vector<ContentBlock>& blocks) {
    MessageBegin("user");
    bool any = false;
    for (const auto& b : blocks) {
      if (b.type == BlockType::kText && !b.text.empty()) InputText(b.text);
      if (b.type == BlockType::kImage) InputImage(b);
      any = any || (b.type == BlockType::kText && !b.text.empty()) || b.type == BlockType::kImage;
    }
    if (!any) InputText("");
    MessageEnd();
  }
  // Whether a call goes as a custom (freeform) call: its tool is freeform in this request and
  // its arguments are the one string "input".
  bool Custom(const std::string& tool, const Json::Value* args) const {
    const bool freeform =
        std::any_of(request_.tools.begin(), request_.tools.end(), [&](const ToolSchema& t) {
          return t.name == tool && !FreeformGrammar(t.parameters).empty();
        });
    if (!freeform || args == nullptr) return freeform;
    return args->isObject() && args->size() == 1 && MemberOrNull(*args, "input").isString();
  }
  // The encrypted reasoning of a thinking block, sent back to the provider it came from.
  bool Reasoning(const Message& m, const ContentBlock& b, std::string_view* encrypted) const {
    if (b.type != BlockType::kThinking || b.redacted()) return false;
    if (!b.signature().starts_with(kResponsesReasoningPrefix)) return false;
    // Only to the provider it came from, and only to a reasoning model (one switched to
    // mid-session would refuse the item).
    if (m.provider() != options_.provider_name || !options_.reasoning_model) return false;
    *encrypted = std::string_view(b.signature()).substr(kResponsesReasoningPrefix.size());
    return true;
  }
  void ReasoningItem(const ContentBlock& b, std::string_view encrypted) {
    w_.ObjectBegin();
    w_.Attribute("encrypted_content", encrypted);
    w_.AttributeBegin("summary");
    w_.ArrayBegin();
    if (!b.text.empty()) Part("text", b.text, "summary_text");
    w_.ArrayEnd();
    w_.AttributeEnd();
    w_.Attribute("type", "reasoning");
    w_.ObjectEnd();
  }
  void CallItem(const ContentBlock& b) {
    w_.ObjectBegin();
    if (Custom(b.name(), &b.arguments())) {
      w_.Attribute("call_id", b.id());
      w_.Attribute("input", StringOr(b.arguments(), "input"));
      w_.Attribute("name", b.name());
      w_.Attribute("type", "custom_tool_call");
    } else {
      // Arguments travel as a JSON string; a raw unparsable string goes back as it came.
      w_.Attribute("arguments",
                   b.arguments().isNull() ? std::string("{}") : StringOrJson(b.arguments()));
      w_.Attribute("call_id", b.id());
      w_.Attribute("name", b.name());
      w_.Attribute("type", "function_call");
    }
    w_.ObjectEnd();
  }
  // The assistant's blocks in order: reasoning items, runs of text as one output message, calls.
  void Assistant(const Message& m) {
    std::string text;
    auto flush_text = [&] {
      if (text.empty()) return;
      MessageBegin("assistant");
      Part("text", text, "output_text");
      MessageEnd();
      text.clear();
    };
    for (const auto& b : m.content) {
      std::string_view encrypted;
      if (b.type == BlockType::kText) {
        text += b.text;
        continue;
      }
      flush_text();
      if (Reasoning(m, b, &encrypted)) ReasoningItem(b, encrypted);
      if (b.type == BlockType::kToolCall) CallItem(b);
    }
    flush_text();
  }
  void ToolResult(const Message& m) {
    std::string text;
    for (const auto& b : m.content) {
      if (b.type == BlockType::kText) text += b.text;
      if (b.type == BlockType::kImage) pending_images_.push_back(&b);
    }
    const bool custom = Custom(m.tool_name, nullptr);
    w_.ObjectBegin();
    w_.Attribute("call_id", m.tool_call_id);
    w_.Attribute("output", text);
    w_.Attribute("type", custom ? "custom_tool_call_output" : "function_call_output");
    w_.ObjectEnd();
  }

  JsonWriter& w_;
  const ModelRequest& request_;
  const OpenAiResponsesBodyOptions& options_;
  std::vector<const ContentBlock*> pending_images_;
  const char* role_ = "user";
};

void WriteResponsesTool(const ToolSchema& t, JsonWriter* w) {
  w->ObjectBegin();
  w->Attribute("description", t.description);
  const std::string grammar = FreeformGrammar(t.parameters);
  if (grammar.empty()) {
    w->Attribute("name", t.name);
    w->AttributeBegin("parameters");
    WriteToolSchema(t.parameters, w);
    w->AttributeEnd();
    w->Attribute("strict", false);
    w->Attribute("type", "function");
    w->ObjectEnd();
    return;
  }
  w->AttributeBegin("format");
  w->ObjectBegin();
  if (grammar == "text") {
    w->Attribute("type", "text");
  } else {
    w->Attribute("definition", grammar);
    w->Attribute("syntax", "lark");
    w->Attribute("type", "grammar");
  }
  w->ObjectEnd();
  w->AttributeEnd();
  w->Attribute("name", t.name);
  w->Attribute("type", "custom");
  w->ObjectEnd();
}

void WriteReasoning(const ModelRequest& request, JsonWriter* w) {
  w->AttributeBegin("reasoning");
  w->ObjectBegin();
  if (const char* effort = OpenAiReasoningEffort(request.thinking)) w->Attribute("effort", effort);
  w->Attribute("summary", "auto");
  w->ObjectEnd();
  w->AttributeEnd();
}

}  // namespace

namespace {
// The API's own web search tool; it filters by allowed domains only (blocked ones are the
// Messages API's).
void WriteWebSearchTool(const WebSearchSettings& s, JsonWriter* w) {
  w->ObjectBegin();
  if (!s.allowed_domains.empty()) {
    w->AttributeBegin("filters");
    w->ObjectBegin();
    w->AttributeBegin("allowed_domains");
    w->ArrayBegin();
    for (const auto& d : s.allowed_domains) w->Value(d);
    w->ArrayEnd();
    w->AttributeEnd();
    w->ObjectEnd();
    w->AttributeEnd();
  }
  w->Attribute("type", "web_search");
  w->ObjectEnd();
}
}  // namespace

std::string WriteOpenAiResponsesBody(const ModelRequest& request,
                                     const OpenAiResponsesBodyOptions& options) {
  std::string out;
  out.reserve(RequestBodySizeHint(request));
  JsonWriter w(&out);
  w.ObjectBegin();
  if (options.reasoning_model) {
    // Stateless: the reasoning comes back encrypted in each reasoning item.
    w.AttributeBegin("include");
    w.ArrayBegin();
    w.Value("reasoning.encrypted_content");
    w.ArrayEnd();
    w.AttributeEnd();
  }
  w.AttributeBegin("input");
  w.ArrayBegin();
  ResponsesInputWriter input(&w, request, options);
  for (const Message& m : request.messages) input.Add(m);
  input.FlushImages();
  w.ArrayEnd();
  w.AttributeEnd();
  if (!request.system.empty()) w.Attribute("instructions", request.system);
  if (request.max_output_tokens > 0) w.Attribute("max_output_tokens", request.max_output_tokens);
  w.Attribute("model", request.model.empty() ? options.model : request.model);
  if (!request.tools.empty()) w.Attribute("parallel_tool_calls", true);
  if (options.reasoning_model) WriteReasoning(request, &w);
  w.Attribute("store", false);
  w.Attribute("stream", true);
  if (!request.tools.empty() || request.web_search.enabled) {
    w.Attribute("tool_choice", "auto");
    w.AttributeBegin("tools");
    w.ArrayBegin();
    for (const ToolSchema& t : request.tools) WriteResponsesTool(t, &w);
    if (request.web_search.enabled) WriteWebSearchTool(request.web_search, &w);
    w.ArrayEnd();
    w.AttributeEnd();
  }
  w.ObjectEnd();
  return out;
}

}  // namespace lousho::agent
