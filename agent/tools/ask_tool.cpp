// The `ask` tool: a question for the user that ends the turn.
#include "agent/tools/builtin_tools.h"
#include "agent/tools/tool_util.h"

namespace lousho::agent::tools {
namespace {

class AskTool : public Tool {
 public:
  std::string name() const override { return "ask"; }
  std::string description() const override {
    return "Ask the user a question and end your turn; their answer arrives as the next "
           "message. Use it when you cannot proceed without a decision. Optional options are "
           "shown as numbered choices.";
  }
  Json::Value parameters() const override {
    Json::Value options(Json::objectValue);
    options["type"] = "array";
    options["description"] = "Choices to offer (optional)";
    options["items"]["type"] = "string";
    return ObjectSchema({{"question", PropSchema("string", "The question")}, {"options", options}},
                        {"question"});
  }
  ToolKind kind() const override { return ToolKind::kOther; }
  bool read_only() const override { return true; }
  std::string Title(const Json::Value& args, const ToolContext& /*ctx*/) const override {
    std::string q = StringOr(args, "question");
    return q.empty() ? "Ask" : "Ask: " + Shorten(q, 80);
  }
  std::string PermissionSubject(const Json::Value& /*args*/) const override { return ""; }

  ToolOutput Run(const Json::Value& args, ToolContext& /*ctx*/) override {
    Args a(args);
    auto question = a.String("question", true);
    const Json::Value* options = a.Array("options", false);
    if (!a.ok()) return ToolOutput::Error("ask: " + a.error());
    std::string text = *question;
    Json::Value opts(Json::arrayValue);
    if (options) {
      int n = 0;
      for (const auto& o : *options) {
        auto option = AsString(o);
        if (!option) return ToolOutput::Error("ask: options: expected strings");
        text += n == 0 ? "\n\n" : "\n";
        ++n;
        text += std::to_string(n) + ". " + *option;
        opts.append(*option);
      }
    }
    ToolOutput out = ToolOutput::Text(std::move(text));
    out.ends_turn = true;
    out.details["question"] = *question;
    out.details["options"] = opts;
    return out;
  }
};

}  // namespace

std::unique_ptr<Tool> MakeAskTool() { return std::make_unique<AskTool>(); }

}  // namespace lousho::agent::tools
