// The `ask` tool: a question for the user that ends the turn.
#include <optional>

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

  ToolOutput Run(const Json::Value& args, ToolContext& ctx) override {
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
    if (ctx.services.dialogs) {
      // A host that shows dialogs answers at once, and the turn goes on with the answer.
      if (auto answered = AskHost(*question, opts, ctx)) return std::move(*answered);
    }
    ToolOutput out = ToolOutput::Text(std::move(text));
    out.ends_turn = true;
    out.details["question"] = *question;
    out.details["options"] = opts;
    return out;
  }

 private:
  // nullopt when the host could not show the question (then the turn ends with it, as usual).
  static std::optional<ToolOutput> AskHost(const std::string& question, const Json::Value& opts,
                                           ToolContext& ctx) {
    Result<std::optional<std::string>> answer = std::optional<std::string>();
    if (opts.empty()) {
      answer = ctx.services.dialogs->Input(ctx.session_id, question, "", ctx.cancel);
    } else {
      std::vector<std::string> choices;
      for (const auto& o : opts) choices.push_back(AsString(o).value_or(""));
      answer = ctx.services.dialogs->Select(ctx.session_id, question, choices, ctx.cancel);
    }
    if (!answer.ok()) {
      if (ctx.cancel.cancelled()) return ToolOutput::Error("Cancelled by the user.");
      return std::nullopt;
    }
    ToolOutput out = answer->has_value()
                         ? ToolOutput::Text("The user answered: " + **answer)
                         : ToolOutput::Text("The user dismissed the question without answering.");
    out.details["question"] = question;
    out.details["options"] = opts;
    if (answer->has_value()) out.details["answer"] = **answer;
    return out;
  }
};

}  // namespace

std::unique_ptr<Tool> MakeAskTool() { return std::make_unique<AskTool>(); }

}  // namespace lousho::agent::tools
