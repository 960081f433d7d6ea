// Forms and URL steps through both doors: acp::EditorChannel over a JSON-RPC peer (the
// elicitation/create requests and the elicitation/complete notification it writes, and how it
// reads the editor's answers) and rpc_compat::HostChannel (a notify and a confirm, withdrawn
// when the step finishes first); and the capability parsing that turns them on.
#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <thread>

#include "acp/codec.h"
#include "acp/editor_channel.h"
#include "rpc_compat/host_channel.h"
#include "support/json_util.h"
#include "support/jsonrpc.h"
#include "support/transport.h"

namespace lousho {
namespace {

Json::Value Parse(const std::string& text) {
  auto r = ParseJson(text);
  EXPECT_TRUE(r.ok()) << text;
  return r.ok() ? *r : Json::Value();
}

class EditorElicitationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    reader_ = std::thread([this] { peer_.Run(); });
    channel_.SetCapabilities(
        acp::ClientCapabilitiesFromJson(Parse(R"({"elicitation":{"form":{},"url":{}}})")));
  }
  void TearDown() override {
    transport_.Close();
    reader_.join();
  }
  // The i-th line the agent wrote (waits for it).
  Json::Value Out(size_t i) {
    auto lines = transport_.WaitForOutput(i + 1, 10000);
    EXPECT_GT(lines.size(), i);
    return lines.size() > i ? Parse(lines[i]) : Json::Value();
  }
  // Returns once the reader has handled every line pushed so far (it answers in order).
  void Flush() {
    const std::string id = "sync-" + std::to_string(++syncs_);
    transport_.Push(R"({"jsonrpc":"2.0","id":")" + id + R"(","method":"test/sync"})");
    for (size_t n = transport_.Output().size() + 1;; ++n) {
      auto lines = transport_.WaitForOutput(n, 10000);
      ASSERT_GE(lines.size(), n) << "no answer to " << id;
      if (Parse(lines[n - 1])["id"].asString() == id) return;
    }
  }
  // The lines the agent wrote with this method, in order.
  std::vector<Json::Value> Sent(const std::string& method) {
    std::vector<Json::Value> out;
    for (const auto& line : transport_.Output()) {
      Json::Value v = Parse(line);
      if (v["method"].asString() == method) out.push_back(v);
    }
    return out;
  }
  void Answer(const Json::Value& request, const std::string& result) {
    transport_.Push(R"({"jsonrpc":"2.0","id":)" + std::to_string(request["id"].asInt64()) +
                    R"(,"result":)" + result + "}");
  }

  MemoryTransport transport_;
  jsonrpc::Peer peer_{&transport_, jsonrpc::PeerOptions{}};
  std::thread reader_;
  acp::EditorChannel channel_{&peer_, 1000};
  int syncs_ = 0;
};

agent::FormRequest ChoiceForm() {
  agent::FormField f;
  f.name = "answer";
  f.title = "Choose one";
  f.kind = agent::FormField::Kind::kChoice;
  f.choices = {{"a", "Option A"}, {"b", ""}};
  return agent::FormRequest{"Which?", "call-1", {f}};
}

TEST_F(EditorElicitationTest, AFormIsAFormModeRequestWithTitledChoices) {
  Result<agent::FormReply> reply = agent::FormReply{};
  std::thread asker([&] { reply = channel_.AskForm("sess-1", ChoiceForm(), CancelToken()); });
  Json::Value req = Out(0);
  EXPECT_EQ(req["method"].asString(), "elicitation/create");
  const Json::Value& p = req["params"];
  EXPECT_EQ(p["sessionId"].asString(), "sess-1");
  EXPECT_EQ(p["toolCallId"].asString(), "call-1");
  EXPECT_EQ(p["mode"].asString(), "form");
  EXPECT_EQ(p["message"].asString(), "Which?");
  const Json::Value& schema = p["requestedSchema"];
  EXPECT_EQ(schema["type"].asString(), "object");
  EXPECT_EQ(schema["required"][0].asString(), "answer");
  const Json::Value& field = schema["properties"]["answer"];
  EXPECT_EQ(field["type"].asString(), "string");
  EXPECT_EQ(field["title"].asString(), "Choose one");
  EXPECT_EQ(field["oneOf"][0]["const"].asString(), "a");
  EXPECT_EQ(field["oneOf"][0]["title"].asString(), "Option A");
  EXPECT_EQ(field["oneOf"][1]["title"].asString(), "b");  // no title: the value shows
  Answer(req, R"({"action":"accept","content":{"answer":"b"}})");
  asker.join();
  ASSERT_TRUE(reply.ok()) << reply.error().message;
  EXPECT_EQ(reply->action, agent::ElicitationAction::kAccept);
  ASSERT_EQ(reply->answers["answer"].size(), 1u);
  EXPECT_EQ(reply->answers["answer"][0], "b");
}

TEST_F(EditorElicitationTest, AnswersOfTheWrongShapeOrNotOfferedFailTheCall) {
  for (const char* content : {R"({"answer":"z"})", R"({"answer":["a"]})", R"({"answer":7})"}) {
    Result<agent::FormReply> reply = agent::FormReply{};
    size_t from = transport_.Output().size();
    std::thread asker([&] { reply = channel_.AskForm("sess-1", ChoiceForm(), CancelToken()); });
    Answer(Out(from), std::string(R"({"action":"accept","content":)") + content + "}");
    asker.join();
    ASSERT_FALSE(reply.ok()) << content;
    EXPECT_EQ(reply.error().code, ErrorCode::kClientError);
    EXPECT_NE(reply.error().message.find("answer"), std::string::npos);
  }
}

TEST_F(EditorElicitationTest, SeveralChoicesAreAnArrayAndRefusalsAreTheirAction) {
  agent::FormRequest form = ChoiceForm();
  form.fields[0].kind = agent::FormField::Kind::kMultiChoice;
  Result<agent::FormReply> reply = agent::FormReply{};
  std::thread asker([&] { reply = channel_.AskForm("sess-1", form, CancelToken()); });
  Json::Value req = Out(0);
  const Json::Value& field = req["params"]["requestedSchema"]["properties"]["answer"];
  EXPECT_EQ(field["type"].asString(), "array");
  EXPECT_EQ(field["items"]["anyOf"][1]["const"].asString(), "b");
  Answer(req, R"({"action":"accept","content":{"answer":["b","a"]}})");
  asker.join();
  ASSERT_TRUE(reply.ok());
  EXPECT_EQ(reply->answers["answer"], (std::vector<std::string>{"b", "a"}));

  for (const auto& [action, want] : {std::pair{"decline", agent::ElicitationAction::kDecline},
                                     std::pair{"cancel", agent::ElicitationAction::kCancel},
                                     std::pair{"_later", agent::ElicitationAction::kCancel}}) {
    size_t from = transport_.Output().size();
    std::thread again([&] { reply = channel_.AskForm("sess-1", form, CancelToken()); });
    Answer(Out(from), std::string(R"({"action":")") + action + "\"}");
    again.join();
    ASSERT_TRUE(reply.ok());
    EXPECT_EQ(reply->action, want) << action;
  }
}

TEST_F(EditorElicitationTest, ACancelledFormIsWithdrawn) {
  CancelSource prompt;
  Result<agent::FormReply> reply = agent::FormReply{};
  std::thread asker([&] { reply = channel_.AskForm("sess-1", ChoiceForm(), prompt.token()); });
  Json::Value req = Out(0);
  prompt.Cancel();
  asker.join();
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.error().code, ErrorCode::kCancelled);
  Json::Value cancel = Out(1);
  EXPECT_EQ(cancel["method"].asString(), "$/cancel_request");
  EXPECT_EQ(cancel["params"]["requestId"].asInt64(), req["id"].asInt64());
}

agent::UrlRequest Login() { return {"el-1", "https://example.test/login", "Sign in", ""}; }

TEST_F(EditorElicitationTest, AUrlStepWaitsForItsEndAndTellsTheEditor) {
  CancelSource done;
  Result<agent::ElicitationAction> action = agent::ElicitationAction::kCancel;
  std::thread asker([&] { action = channel_.OpenUrl("sess-1", Login(), done.token(), {}); });
  Json::Value req = Out(0);
  EXPECT_EQ(req["params"]["mode"].asString(), "url");
  EXPECT_EQ(req["params"]["elicitationId"].asString(), "el-1");
  EXPECT_EQ(req["params"]["url"].asString(), "https://example.test/login");
  EXPECT_EQ(req["params"]["message"].asString(), "Sign in");
  EXPECT_FALSE(req["params"].isMember("toolCallId"));
  Answer(req, R"({"action":"accept"})");
  Flush();  // the answer is in: the step is open
  EXPECT_TRUE(Sent("elicitation/complete").empty());
  done.Cancel();  // the login finished
  asker.join();
  ASSERT_TRUE(action.ok());
  EXPECT_EQ(*action, agent::ElicitationAction::kAccept);
  EXPECT_TRUE(Sent("$/cancel_request").empty());
  auto complete = Sent("elicitation/complete");
  ASSERT_EQ(complete.size(), 1u);
  EXPECT_FALSE(complete[0].isMember("id"));
  EXPECT_EQ(complete[0]["params"]["elicitationId"].asString(), "el-1");
}

TEST_F(EditorElicitationTest, AUrlStepThatFinishesFirstIsWithdrawnAndCompleted) {
  CancelSource done;
  Result<agent::ElicitationAction> action = agent::ElicitationAction::kCancel;
  std::thread asker([&] { action = channel_.OpenUrl("sess-1", Login(), done.token(), {}); });
  Json::Value req = Out(0);
  done.Cancel();
  asker.join();
  ASSERT_TRUE(action.ok());
  EXPECT_EQ(*action, agent::ElicitationAction::kAccept);
  EXPECT_EQ(Out(1)["method"].asString(), "$/cancel_request");
  EXPECT_EQ(Out(2)["method"].asString(), "elicitation/complete");
}

TEST_F(EditorElicitationTest, ADeclinedOrCancelledUrlStepIsNotCompleted) {
  CancelSource done;
  CancelSource prompt;
  Result<agent::ElicitationAction> action = agent::ElicitationAction::kAccept;
  std::thread asker(
      [&] { action = channel_.OpenUrl("sess-1", Login(), done.token(), prompt.token()); });
  Answer(Out(0), R"({"action":"decline"})");
  asker.join();
  ASSERT_TRUE(action.ok());
  EXPECT_EQ(*action, agent::ElicitationAction::kDecline);

  std::thread waiting(
      [&] { action = channel_.OpenUrl("sess-1", Login(), done.token(), prompt.token()); });
  Answer(Out(1), R"({"action":"accept"})");
  prompt.Cancel();  // the user gave up while the step was open
  waiting.join();
  ASSERT_FALSE(action.ok());
  EXPECT_EQ(action.error().code, ErrorCode::kCancelled);
  for (const auto& line : transport_.Output())
    EXPECT_EQ(line.find("elicitation/complete"), std::string::npos) << line;
}

TEST(ElicitationCapabilitiesTest, EachModeOnlyWhenDeclared) {
  auto none = acp::ClientCapabilitiesFromJson(Parse(R"({"fs":{"readTextFile":true}})"));
  EXPECT_FALSE(none.elicitation_form);
  EXPECT_FALSE(none.elicitation_url);
  auto form = acp::ClientCapabilitiesFromJson(Parse(R"({"elicitation":{"form":{}}})"));
  EXPECT_TRUE(form.elicitation_form);
  EXPECT_FALSE(form.elicitation_url);
  auto nulls =
      acp::ClientCapabilitiesFromJson(Parse(R"({"elicitation":{"form":null,"url":true}})"));
  EXPECT_FALSE(nulls.elicitation_form);
  EXPECT_FALSE(nulls.elicitation_url);

  MemoryTransport transport;
  jsonrpc::Peer peer(&transport, jsonrpc::PeerOptions{});
  acp::EditorChannel channel(&peer, 1000);
  EXPECT_EQ(channel.Services().elicitation, nullptr);
  channel.SetCapabilities(form);
  EXPECT_EQ(channel.Services().elicitation, &channel);
  EXPECT_TRUE(channel.CanAskForm());
  EXPECT_FALSE(channel.CanOpenUrl());
}

// The RPC door: frames written are kept; the test answers through Deliver.
class HostUrlTest : public ::testing::Test {
 protected:
  Json::Value Frame(size_t i) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, std::chrono::seconds(10), [&] { return frames_.size() > i; });
    return frames_.size() > i ? frames_[i] : Json::Value();
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Json::Value> frames_;
  rpc_compat::HostChannel channel_{[this](const Json::Value& f) {
                                     std::lock_guard<std::mutex> lock(mu_);
                                     frames_.push_back(f);
                                     cv_.notify_all();
                                   },
                                   0};
};

TEST_F(HostUrlTest, AUrlStepIsANotifyAndAConfirmation) {
  Result<agent::ElicitationAction> action = agent::ElicitationAction::kCancel;
  std::thread asker([&] { action = channel_.OpenUrl("s", Login(), {}, {}); });
  Json::Value note = Frame(0);
  EXPECT_EQ(note["type"].asString(), "extension_ui_request");
  EXPECT_EQ(note["method"].asString(), "notify");
  EXPECT_NE(note["message"].asString().find("https://example.test/login"), std::string::npos);
  Json::Value confirm = Frame(1);
  EXPECT_EQ(confirm["method"].asString(), "confirm");
  EXPECT_EQ(confirm["title"].asString(), "Sign in");
  EXPECT_NE(confirm["message"].asString().find("https://example.test/login"), std::string::npos);
  channel_.Deliver("extension_ui_response",
                   Parse(R"({"id":")" + confirm["id"].asString() + R"(","confirmed":true})"));
  asker.join();
  ASSERT_TRUE(action.ok());
  EXPECT_EQ(*action, agent::ElicitationAction::kAccept);

  std::thread refused([&] { action = channel_.OpenUrl("s", Login(), {}, {}); });
  Json::Value again = Frame(3);
  channel_.Deliver("extension_ui_response",
                   Parse(R"({"id":")" + again["id"].asString() + R"(","confirmed":false})"));
  refused.join();
  ASSERT_TRUE(action.ok());
  EXPECT_EQ(*action, agent::ElicitationAction::kDecline);
}

TEST_F(HostUrlTest, AStepThatFinishesFirstWithdrawsTheQuestion) {
  CancelSource done;
  Result<agent::ElicitationAction> action = agent::ElicitationAction::kCancel;
  std::thread asker([&] { action = channel_.OpenUrl("s", Login(), done.token(), {}); });
  Json::Value confirm = Frame(1);
  done.Cancel();
  asker.join();
  ASSERT_TRUE(action.ok());
  EXPECT_EQ(*action, agent::ElicitationAction::kAccept);
  Json::Value withdraw = Frame(2);
  EXPECT_EQ(withdraw["method"].asString(), "cancel");
  EXPECT_EQ(withdraw["targetId"].asString(), confirm["id"].asString());
  EXPECT_FALSE(channel_.CanAskForm());
  EXPECT_FALSE(channel_.AskForm("s", agent::FormRequest{}, {}).ok());
}

TEST(LinkedCancelSourceTest, FiresWithEitherTokensCause) {
  CancelSource a;
  CancelSource b;
  LinkedCancelSource either(a.token(), b.token());
  EXPECT_FALSE(either.token().cancelled());
  b.Cancel(CancelCause::kShutdown);
  EXPECT_TRUE(either.token().cancelled());
  EXPECT_EQ(either.token().cause(), CancelCause::kShutdown);
  CancelSource c;
  c.Cancel(CancelCause::kSteering);
  LinkedCancelSource already(c.token(), CancelToken());
  EXPECT_EQ(already.token().cause(), CancelCause::kSteering);
}

}  // namespace
}  // namespace lousho
