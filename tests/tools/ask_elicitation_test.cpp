// The ask tool through forms (elicitation) and dialogs: what each is asked, and what the model
// gets back for an answer, a refusal, a cancelled prompt and a client that fails.
#include <gtest/gtest.h>

#include <optional>

#include "agent/tools/builtin_tools.h"
#include "tests/tools/tool_test_util.h"

namespace lousho::agent {
namespace {

using testing::J;
using testing::TextOf;

// A client that shows forms: records the last one and answers with `reply` (or fails).
class FakeForms : public Elicitation {
 public:
  bool forms = true;
  Result<FormReply> reply = FormReply{};
  bool cancel_on_ask = false;  // the prompt is cancelled while the form is shown
  CancelSource* source = nullptr;
  std::optional<FormRequest> asked;

  bool CanAskForm() const override { return forms; }
  bool CanOpenUrl() const override { return false; }
  Result<FormReply> AskForm(const std::string& /*session_id*/, const FormRequest& request,
                            const CancelToken& cancel) override {
    asked = request;
    if (cancel_on_ask && source) {
      source->Cancel();
      if (cancel.cancelled()) return MakeError(ErrorCode::kCancelled, "cancelled");
    }
    return reply;
  }
  Result<ElicitationAction> OpenUrl(const std::string&, const UrlRequest&, const CancelToken&,
                                    const CancelToken&) override {
    return MakeError(ErrorCode::kClientError, "no URL steps");
  }
};

// A host that shows dialogs: records which dialog was used and answers as told.
class FakeDialogs : public Dialogs {
 public:
  std::string used;
  std::string title;
  std::string message;
  std::optional<bool> confirm_answer;
  std::optional<std::string> text_answer;

  Result<std::optional<std::string>> Select(const std::string&, const std::string& t,
                                            const std::vector<std::string>&,
                                            const CancelToken&) override {
    used = "select";
    title = t;
    return text_answer;
  }
  Result<std::optional<bool>> Confirm(const std::string&, const std::string& t,
                                      const std::string& m, const CancelToken&) override {
    used = "confirm";
    title = t;
    message = m;
    return confirm_answer;
  }
  Result<std::optional<std::string>> Input(const std::string&, const std::string& t,
                                           const std::string&, const CancelToken&) override {
    used = "input";
    title = t;
    return text_answer;
  }
  Result<std::optional<std::string>> Editor(const std::string&, const std::string&,
                                            const std::string&, const CancelToken&) override {
    used = "editor";
    return text_answer;
  }
};

FormReply Accepted(std::vector<std::string> answer) {
  FormReply r;
  r.action = ElicitationAction::kAccept;
  r.answers["answer"] = std::move(answer);
  return r;
}

ToolContext FormContext(FakeForms* forms) {
  ToolContext ctx;
  ctx.session_id = "s1";
  ctx.tool_call_id = "call-7";
  ctx.services.elicitation = forms;
  return ctx;
}

TEST(AskFormTest, ChoicesAreAChoiceFieldAndTheAnswerIsTheResult) {
  FakeForms forms;
  forms.reply = Accepted({"bar"});
  ToolContext ctx = FormContext(&forms);
  auto out = tools::MakeAskTool()->Run(J(R"({"question":"Which?","options":["foo","bar"]})"), ctx);
  ASSERT_TRUE(forms.asked);
  EXPECT_EQ(forms.asked->message, "Which?");
  EXPECT_EQ(forms.asked->tool_call_id, "call-7");
  ASSERT_EQ(forms.asked->fields.size(), 1u);
  const FormField& f = forms.asked->fields[0];
  EXPECT_EQ(f.kind, FormField::Kind::kChoice);
  ASSERT_EQ(f.choices.size(), 2u);
  EXPECT_EQ(f.choices[1].value, "bar");
  EXPECT_EQ(f.choices[1].title, "bar");
  EXPECT_TRUE(f.required);
  EXPECT_FALSE(out.is_error);
  EXPECT_FALSE(out.ends_turn);
  EXPECT_EQ(TextOf(out), "The user answered: bar");
  EXPECT_EQ(out.details["answer"].asString(), "bar");
}

TEST(AskFormTest, FreeTextIsATextFieldAndSeveralChoicesAMultiChoice) {
  FakeForms forms;
  forms.reply = Accepted({"feature/x"});
  ToolContext ctx = FormContext(&forms);
  auto tool = tools::MakeAskTool();
  auto text = tool->Run(J(R"({"question":"Branch name?"})"), ctx);
  EXPECT_EQ(forms.asked->fields[0].kind, FormField::Kind::kText);
  EXPECT_EQ(TextOf(text), "The user answered: feature/x");

  forms.reply = Accepted({"a", "c"});
  auto multi =
      tool->Run(J(R"({"question":"Which?","options":["a","b","c"],"multiple":true})"), ctx);
  EXPECT_EQ(forms.asked->fields[0].kind, FormField::Kind::kMultiChoice);
  EXPECT_EQ(TextOf(multi), "The user answered: a, c");
  ASSERT_TRUE(multi.details["answer"].isArray());
  EXPECT_EQ(multi.details["answer"].size(), 2u);
}

TEST(AskFormTest, DeclinedOrCancelledFormsAreTheAnswerThatTheUserDeclined) {
  FakeForms forms;
  ToolContext ctx = FormContext(&forms);
  auto tool = tools::MakeAskTool();
  for (auto action : {ElicitationAction::kDecline, ElicitationAction::kCancel}) {
    FormReply r;
    r.action = action;
    forms.reply = r;
    auto out = tool->Run(J(R"({"question":"Go on?","options":["yes","no"]})"), ctx);
    EXPECT_FALSE(out.is_error);
    EXPECT_FALSE(out.ends_turn);
    EXPECT_EQ(TextOf(out), "The user declined to answer the question.");
    EXPECT_TRUE(out.details["declined"].asBool());
  }
}

TEST(AskFormTest, ACancelledPromptCancelsTheTool) {
  FakeForms forms;
  CancelSource prompt;
  forms.cancel_on_ask = true;
  forms.source = &prompt;
  ToolContext ctx = FormContext(&forms);
  ctx.cancel = prompt.token();
  auto out = tools::MakeAskTool()->Run(J(R"({"question":"Go on?"})"), ctx);
  EXPECT_TRUE(out.is_error);
  EXPECT_EQ(TextOf(out), "Cancelled by the user.");
}

TEST(AskFormTest, WithoutFormsOrWhenTheClientFailsTheQuestionEndsTheTurn) {
  FakeForms forms;
  forms.reply = MakeError(ErrorCode::kClientError, "Method not found");
  ToolContext ctx = FormContext(&forms);
  auto tool = tools::MakeAskTool();
  auto failed = tool->Run(J(R"({"question":"Which?","options":["foo","bar"]})"), ctx);
  EXPECT_TRUE(failed.ends_turn);
  EXPECT_EQ(TextOf(failed), "Which?\n\n1. foo\n2. bar");

  forms.forms = false;  // URL steps only
  forms.asked.reset();
  auto no_forms = tool->Run(J(R"({"question":"Which?","options":["a"],"multiple":true})"), ctx);
  EXPECT_FALSE(forms.asked);
  EXPECT_TRUE(no_forms.ends_turn);
  EXPECT_EQ(TextOf(no_forms), "Which?\n\n1. a\n\n(Several may be chosen.)");
}

TEST(AskDialogTest, YesOrNoIsAConfirmationAnsweredWithTheOptionsOwnText) {
  FakeDialogs dialogs;
  ToolContext ctx;
  ctx.services.dialogs = &dialogs;
  auto tool = tools::MakeAskTool();
  dialogs.confirm_answer = false;
  auto no = tool->Run(J(R"({"question":"Delete it?","options":["Yes","No"]})"), ctx);
  EXPECT_EQ(dialogs.used, "confirm");
  EXPECT_EQ(dialogs.title, "Delete it?");
  EXPECT_EQ(dialogs.message, "Yes / No");
  EXPECT_EQ(TextOf(no), "The user answered: No");
  dialogs.confirm_answer = true;
  auto yes = tool->Run(J(R"({"question":"Keep it?","options":["no","yes"]})"), ctx);
  EXPECT_EQ(TextOf(yes), "The user answered: yes");
  dialogs.confirm_answer.reset();
  auto dismissed = tool->Run(J(R"({"question":"Keep it?","options":["no","yes"]})"), ctx);
  EXPECT_EQ(TextOf(dismissed), "The user dismissed the question without answering.");
}

TEST(AskDialogTest, ChoicesAreASelectAndFreeTextOrSeveralChoicesAnInput) {
  FakeDialogs dialogs;
  dialogs.text_answer = "b";
  ToolContext ctx;
  ctx.services.dialogs = &dialogs;
  auto tool = tools::MakeAskTool();
  EXPECT_EQ(TextOf(tool->Run(J(R"({"question":"Which?","options":["a","b"]})"), ctx)),
            "The user answered: b");
  EXPECT_EQ(dialogs.used, "select");
  tool->Run(J(R"({"question":"Name?"})"), ctx);
  EXPECT_EQ(dialogs.used, "input");
  EXPECT_EQ(dialogs.title, "Name?");
  tool->Run(J(R"({"question":"Which?","options":["a","b"],"multiple":true})"), ctx);
  EXPECT_EQ(dialogs.used, "input");
  EXPECT_EQ(dialogs.title, "Which?\n1. a; 2. b");
}

TEST(AskDialogTest, FormsComeFirstWhenTheClientHasBoth) {
  FakeForms forms;
  forms.reply = Accepted({"a"});
  FakeDialogs dialogs;
  ToolContext ctx = FormContext(&forms);
  ctx.services.dialogs = &dialogs;
  auto out = tools::MakeAskTool()->Run(J(R"({"question":"Which?","options":["a","b"]})"), ctx);
  EXPECT_TRUE(forms.asked);
  EXPECT_TRUE(dialogs.used.empty());
  EXPECT_EQ(TextOf(out), "The user answered: a");
}

}  // namespace
}  // namespace lousho::agent
