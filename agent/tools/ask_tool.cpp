// The `ask` tool: a question for the user. Asked as a form where the editor shows forms
// (elicitation), as a dialog where the host shows dialogs, and otherwise as the turn's last
// message (numbered choices) whose answer is the user's next prompt.
#include <optional>

#include "agent/tools/builtin_tools.h"
#include "agent/tools/tool_util.h"
#include "support/text.h"

namespace lousho::agent::tools {
namespace {

constexpr char kAnswerField[] = "answer";
constexpr char kDeclined[] = "The user declined to answer the question.";

// What the model asked, checked.
struct Question {
  std::string text;
  std::vector<std::string> options;
  bool multiple = false;  // several options may be chosen
};

Json::Value OptionsJson(const Question& q) {
  Json::Value opts(Json::arrayValue);
  for (const auto& o : q.options) opts.append(o);
  return opts;
}

// The tool's result for an answer given at once (the turn goes on); nullopt: declined.
ToolOutput Answered(const Question& q, const std::optional<std::vector<std::string>>& answer,
                    const char* unanswered) {
  std::string joined;
  if (answer) {
    for (const auto& a : *answer) joined += (joined.empty() ? "" : ", ") + a;
  }
  ToolOutput out =
      answer ? ToolOutput::Text("The user answered: " + joined) : ToolOutput::Text(unanswered);
  out.details["question"] = q.text;
  out.details["options"] = OptionsJson(q);
  if (answer && q.multiple) {
    out.details["answer"] = Json::Value(Json::arrayValue);
    for (const auto& a : *answer) out.details["answer"].append(a);
  } else if (answer) {
    out.details["answer"] = joined;
  }
  return out;
}

// Two options that read yes and no (either order): asked as a confirmation where it can be.
std::optional<size_t> YesIndex(const Question& q) {
  if (q.options.size() != 2 || q.multiple) return std::nullopt;
  const std::string a = AsciiLower(q.options[0]);
  const std::string b = AsciiLower(q.options[1]);
  if (a == "yes" && b == "no") return 0;
  if (a == "no" && b == "yes") return 1;
  return std::nullopt;
}

// The question as a one-field form; nullopt when the editor could not show it (then the
// question ends the turn, as without forms).
std::optional<ToolOutput> AskByForm(const Question& q, ToolContext& ctx) {
  FormField field;
  field.name = kAnswerField;
  field.title = q.options.empty() ? "Answer" : (q.multiple ? "Choose any" : "Choose one");
  if (!q.options.empty()) {
    field.kind = q.multiple ? FormField::Kind::kMultiChoice : FormField::Kind::kChoice;
    for (const auto& o : q.options) field.choices.push_back({o, o});
  }
  FormRequest request{q.text, ctx.tool_call_id, {field}};
  auto reply = ctx.services.elicitation->AskForm(ctx.session_id, request, ctx.cancel);
  if (!reply.ok()) {
    if (ctx.cancel.cancelled()) return ToolOutput::Error("Cancelled by the user.");
    return std::nullopt;
  }
  if (reply->action != ElicitationAction::kAccept) {
    ToolOutput out = Answered(q, std::nullopt, kDeclined);
    out.details["declined"] = true;
    return out;
  }
  auto it = reply->answers.find(kAnswerField);
  if (it == reply->answers.end() || it->second.empty())
    return Answered(q, std::nullopt, "The user accepted the question without answering.");
  return Answered(q, it->second, "");
}

// The question as the host's dialog: yes/no a confirmation, choices a select, free text (and
// several choices, which no dialog offers) an input. nullopt when the host could not show it.
std::optional<ToolOutput> AskByDialog(const Question& q, ToolContext& ctx) {
  Dialogs& dialogs = *ctx.services.dialogs;
  Result<std::optional<std::string>> answer = std::optional<std::string>();
  if (auto yes = YesIndex(q)) {
    auto confirmed =
        dialogs.Confirm(ctx.session_id, q.text, q.options[0] + " / " + q.options[1], ctx.cancel);
    if (!confirmed.ok()) {
      answer = confirmed.error();
    } else if (confirmed->has_value()) {
      answer = std::optional<std::string>(q.options[**confirmed ? *yes : 1 - *yes]);
    }
  } else if (!q.options.empty() && !q.multiple) {
    answer = dialogs.Select(ctx.session_id, q.text, q.options, ctx.cancel);
  } else {
    std::string title = q.text;
    for (size_t i = 0; i < q.options.size(); ++i)
      title += (i == 0 ? "\n" : "; ") + std::to_string(i + 1) + ". " + q.options[i];
    answer = dialogs.Input(ctx.session_id, title, q.multiple ? "one or more of the choices" : "",
                           ctx.cancel);
  }
  if (!answer.ok()) {
    if (ctx.cancel.cancelled()) return ToolOutput::Error("Cancelled by the user.");
    return std::nullopt;
  }
  if (!answer->has_value())
    return Answered(q, std::nullopt, "The user dismissed the question without answering.");
  Question shown = q;
  shown.multiple = false;  // a dialog answers with one text
  return Answered(shown, std::vector<std::string>{**answer}, "");
}

// Without forms or dialogs: the question, with numbered choices, is the turn's last message.
ToolOutput AskInTheTranscript(const Question& q) {
  std::string text = q.text;
  for (size_t i = 0; i < q.options.size(); ++i)
    text += (i == 0 ? "\n\n" : "\n") + std::to_string(i + 1) + ". " + q.options[i];
  if (q.multiple && !q.options.empty()) text += "\n\n(Several may be chosen.)";
  ToolOutput out = ToolOutput::Text(std::move(text));
  out.ends_turn = true;
  out.details["question"] = q.text;
  out.details["options"] = OptionsJson(q);
  return out;
}

class AskTool : public Tool {
 public:
  std::string name() const override { return "ask"; }
  std::string description() const override {
    return "Ask the user a question. Use it when you cannot proceed without a decision. "
           "Optional options are offered as choices (set multiple to let the user pick "
           "several). The answer is the tool's result when the editor can ask at once; "
           "otherwise your turn ends and the answer arrives as the next message.";
  }
  Json::Value parameters() const override {
    Json::Value options(Json::objectValue);
    options["type"] = "array";
    options["description"] = "Choices to offer (optional)";
    options["items"]["type"] = "string";
    return ObjectSchema({{"question", PropSchema("string", "The question")},
                         {"options", options},
                         {"multiple", PropSchema("boolean", "Several options may be chosen")}},
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
    const bool multiple = a.Bool("multiple", false);
    if (!a.ok()) return ToolOutput::Error("ask: " + a.error());
    Question q{*question, {}, multiple};
    if (options) {
      for (const auto& o : *options) {
        auto option = AsString(o);
        if (!option) return ToolOutput::Error("ask: options: expected strings");
        q.options.push_back(*option);
      }
    }
    if (ctx.services.elicitation && ctx.services.elicitation->CanAskForm()) {
      if (auto answered = AskByForm(q, ctx)) return std::move(*answered);
    }
    if (ctx.services.dialogs) {
      if (auto answered = AskByDialog(q, ctx)) return std::move(*answered);
    }
    return AskInTheTranscript(q);
  }
};

}  // namespace

std::unique_ptr<Tool> MakeAskTool() { return std::make_unique<AskTool>(); }

}  // namespace lousho::agent::tools
