// Tests of MCP elicitation put to the editor: the form built from a requestedSchema, the typed
// answers and defaults sent back, and a decline where the editor cannot ask.
#include <gtest/gtest.h>

#include "agent/mcp/elicit.h"
#include "support/json_util.h"

namespace lousho::agent::mcp {
namespace {

Json::Value Schema() {
  auto s = ParseJson(R"({"type":"object","required":["name"],"properties":{
    "name":{"type":"string","title":"Name","default":"Ada"},
    "age":{"type":"integer","default":36},
    "ratio":{"type":"number"},
    "ok":{"type":"boolean","default":true},
    "color":{"type":"string","enum":["r","g"],"enumNames":["Red","Green"]},
    "size":{"type":"string","oneOf":[{"const":"s","title":"Small"},{"const":"l","title":"Large"}]},
    "tags":{"type":"array","items":{"anyOf":[{"const":"a","title":"A"},{"const":"b","title":"B"}]}},
    "blob":{"type":"object"}}})");
  return *s;
}

TEST(McpElicitTest, FormFieldsFollowTheSchema) {
  auto fields = FormFieldsOf(Schema());
  std::map<std::string, FormField> by;
  for (auto& f : fields) by[f.name] = f;
  ASSERT_EQ(by.size(), 7u) << "an object property has no form field";
  EXPECT_EQ(by["name"].kind, FormField::Kind::kText);
  EXPECT_EQ(by["name"].title, "Name");
  EXPECT_TRUE(by["name"].required);
  EXPECT_FALSE(by["age"].required);
  EXPECT_EQ(by["ok"].kind, FormField::Kind::kChoice);
  ASSERT_EQ(by["color"].choices.size(), 2u);
  EXPECT_EQ(by["color"].choices[1].value, "g");
  EXPECT_EQ(by["color"].choices[1].title, "Green");
  EXPECT_EQ(by["size"].kind, FormField::Kind::kChoice);
  EXPECT_EQ(by["size"].choices[0].title, "Small");
  EXPECT_EQ(by["tags"].kind, FormField::Kind::kMultiChoice);
  EXPECT_EQ(by["tags"].choices.size(), 2u);
}

TEST(McpElicitTest, AnswersAreTypedAndDefaultsFillTheRest) {
  std::map<std::string, std::vector<std::string>> answers = {{"name", {"Grace"}},
                                                             {"ratio", {"0.5"}},
                                                             {"ok", {"false"}},
                                                             {"tags", {"a", "b"}},
                                                             {"age", {"not a number"}}};
  Json::Value c = ElicitContent(Schema(), answers);
  EXPECT_EQ(c["name"].asString(), "Grace");
  EXPECT_DOUBLE_EQ(c["ratio"].asDouble(), 0.5);
  EXPECT_TRUE(c["ok"].isBool());
  EXPECT_FALSE(c["ok"].asBool());
  ASSERT_TRUE(c["tags"].isArray());
  EXPECT_EQ(c["tags"].size(), 2u);
  // A misfit answer falls back to the default.
  EXPECT_TRUE(c["age"].isInt64());
  EXPECT_EQ(c["age"].asInt64(), 36);
  EXPECT_FALSE(c.isMember("color"));

  Json::Value defaults = ElicitContent(Schema(), {});
  EXPECT_EQ(defaults["name"].asString(), "Ada");
  EXPECT_TRUE(defaults["ok"].asBool());
  EXPECT_EQ(defaults.size(), 3u);
}

class FakeEditor : public Elicitation {
 public:
  bool CanAskForm() const override { return form; }
  bool CanOpenUrl() const override { return false; }
  Result<FormReply> AskForm(const std::string& session_id, const FormRequest& request,
                            const CancelToken&) override {
    seen_session = session_id;
    seen = request;
    FormReply r;
    r.action = ElicitationAction::kAccept;
    r.answers["name"] = {"Grace"};
    return r;
  }
  Result<ElicitationAction> OpenUrl(const std::string&, const UrlRequest&, const CancelToken&,
                                    const CancelToken&) override {
    return ElicitationAction::kAccept;
  }
  bool form = true;
  std::string seen_session;
  FormRequest seen;
};

TEST(McpElicitTest, TheEditorIsAskedOrTheServerHearsADecline) {
  Json::Value params(Json::objectValue);
  params["message"] = "Who are you?";
  params["requestedSchema"] = Schema();
  FakeEditor editor;
  Json::Value r = AskEditor(params, &editor, nullptr, "sess-1", CancelToken());
  EXPECT_EQ(r["action"].asString(), "accept");
  EXPECT_EQ(r["content"]["name"].asString(), "Grace");
  EXPECT_EQ(editor.seen_session, "sess-1");
  EXPECT_EQ(editor.seen.message, "Who are you?");

  EXPECT_EQ(AskEditor(params, nullptr, nullptr, "s", CancelToken())["action"].asString(),
            "decline");
  editor.form = false;
  EXPECT_EQ(AskEditor(params, &editor, nullptr, "s", CancelToken())["action"].asString(),
            "decline");
  params["mode"] = "url";
  params["url"] = "https://example.com/x";
  EXPECT_EQ(AskEditor(params, &editor, nullptr, "s", CancelToken())["action"].asString(), "decline")
      << "this editor opens no URLs";
}

// The RPC door has dialogs, not forms: the question is confirmed, then asked field by field.
class FakeDialogs : public Dialogs {
 public:
  Result<std::optional<std::string>> Select(const std::string&, const std::string& title,
                                            const std::vector<std::string>& options,
                                            const CancelToken&) override {
    asked.push_back("select " + title);
    return std::optional<std::string>(options.back());
  }
  Result<std::optional<bool>> Confirm(const std::string&, const std::string&,
                                      const std::string& message, const CancelToken&) override {
    asked.push_back("confirm " + message);
    return std::optional<bool>(go);
  }
  Result<std::optional<std::string>> Input(const std::string&, const std::string& title,
                                           const std::string&, const CancelToken&) override {
    asked.push_back("input " + title);
    return std::optional<std::string>(title.rfind("Tags", 0) == 0 ? " a, b " : "7");
  }
  Result<std::optional<std::string>> Editor(const std::string&, const std::string&,
                                            const std::string&, const CancelToken&) override {
    return std::optional<std::string>();
  }
  bool go = true;
  std::vector<std::string> asked;
};

TEST(McpElicitTest, WithoutFormsTheDialogsAskFieldByField) {
  auto schema = ParseJson(R"({"type":"object","properties":{
    "count":{"type":"integer","title":"Count"},
    "size":{"type":"string","title":"Size","enum":["s","l"],"enumNames":["Small","Large"]},
    "tags":{"type":"array","title":"Tags","items":{"enum":["a","b"]}}}})");
  ASSERT_TRUE(schema.ok());
  Json::Value params(Json::objectValue);
  params["message"] = "Configure";
  params["requestedSchema"] = *schema;
  FakeDialogs dialogs;
  Json::Value r = AskEditor(params, nullptr, &dialogs, "s", CancelToken());
  ASSERT_EQ(r["action"].asString(), "accept") << WriteJson(r);
  EXPECT_EQ(r["content"]["count"].asInt64(), 7);
  EXPECT_EQ(r["content"]["size"].asString(), "l");
  ASSERT_EQ(r["content"]["tags"].size(), 2u);
  EXPECT_EQ(r["content"]["tags"][0].asString(), "a");
  EXPECT_EQ(r["content"]["tags"][1].asString(), "b");
  EXPECT_EQ(dialogs.asked.front(), "confirm Configure");
  dialogs.go = false;
  EXPECT_EQ(AskEditor(params, nullptr, &dialogs, "s", CancelToken())["action"].asString(),
            "decline");
}

}  // namespace
}  // namespace lousho::agent::mcp
