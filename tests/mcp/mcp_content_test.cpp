// MCP prompts, resources and structured tool output: the pure parts (argument parsing, content
// mapping, URI templates) and the parts that ask a server, against an in-process fake server.
#include <gtest/gtest.h>

#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>

#include "agent/mcp/mcp_tool.h"
#include "agent/mcp/prompts.h"
#include "agent/mcp/resources.h"
#include "support/json_util.h"

namespace lousho::agent::mcp {
namespace {

Json::Value J(const std::string& text) {
  auto v = ParseJson(text);
  EXPECT_TRUE(v.ok()) << text;
  return v.ok() ? *v : Json::Value();
}

// A server answering each request at once from a table of method -> result (an error when
// the result has "error"); it records the requests.
class ContentServer {
 public:
  class Transport : public McpLineTransport {
   public:
    explicit Transport(ContentServer* s) : s_(s) {}
    ReadStatus ReadLine(std::string* line, size_t* size) override {
      std::unique_lock<std::mutex> lock(s_->mu_);
      s_->cv_.wait(lock, [&] { return !s_->out_.empty() || closed_; });
      if (s_->out_.empty()) return ReadStatus::kEof;
      *line = std::move(s_->out_.front());
      s_->out_.pop_front();
      if (size) *size = line->size();
      return ReadStatus::kLine;
    }
    void WriteLine(std::string line) override { s_->Take(line); }
    void Close() override {
      std::lock_guard<std::mutex> lock(s_->mu_);
      closed_ = true;
      s_->cv_.notify_all();
    }

   private:
    ContentServer* s_;
    bool closed_ = false;  // under s_->mu_
  };

  ContentServer() {
    answers["initialize"] = J(R"({"protocolVersion": "2025-11-25", "serverInfo": {"name": "f"},
      "capabilities": {"tools": {}, "prompts": {}, "resources": {}}})");
    answers["tools/list"] = J(R"({"tools": []})");
  }

  std::shared_ptr<Client> MakeClient(const std::string& name) {
    config::McpServerSpec spec;
    spec.name = name;
    ClientOptions o;
    o.open = [this](const CancelToken&) -> Result<std::unique_ptr<McpLineTransport>> {
      return std::unique_ptr<McpLineTransport>(new Transport(this));
    };
    auto c = std::make_shared<Client>(spec, o);
    EXPECT_TRUE(c->Connect(CancelToken()).ok());
    return c;
  }

  std::vector<Json::Value> Requests(const std::string& method) {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<Json::Value> out;
    for (const auto& r : requests_)
      if (StringOr(r, "method") == method) out.push_back(r);
    return out;
  }

  std::map<std::string, Json::Value> answers;  // set before the client connects
  // resources/read by URI (else answers["resources/read"]).
  std::map<std::string, Json::Value> reads;

 private:
  void Take(const std::string& line) {
    auto msg = ParseJson(line);
    if (!msg.ok() || !msg->isMember("id")) return;
    const std::string method = StringOr(*msg, "method");
    Json::Value answer = answers.count(method) ? answers[method] : Json::Value();
    if (method == "resources/read") {
      auto it = reads.find(StringOr(MemberOrNull(*msg, "params"), "uri"));
      if (it != reads.end()) answer = it->second;
    }
    Json::Value r(Json::objectValue);
    r["jsonrpc"] = "2.0";
    r["id"] = (*msg)["id"];
    if (answer.isNull()) {
      r["error"]["code"] = -32601;
      r["error"]["message"] = "no " + method;
    } else if (answer.isMember("error")) {
      r["error"] = answer["error"];
    } else {
      r["result"] = answer;
    }
    std::lock_guard<std::mutex> lock(mu_);
    requests_.push_back(*msg);
    out_.push_back(WriteJson(r));
    cv_.notify_all();
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::string> out_;
  std::vector<Json::Value> requests_;
};

PromptInfo WeatherPrompt() {
  return PromptsFrom(J(R"([{"name": "weather", "description": "Weather",
    "arguments": [{"name": "city", "description": "the city", "required": true},
                  {"name": "units"}]}])"))[0];
}

// --- prompts ---

TEST(McpPromptsTest, ListEntriesWithoutANameAreSkipped) {
  auto prompts = PromptsFrom(J(R"([{"description": "x"}, {"name": "p", "arguments":
    [{"name": "a", "required": true}, {"description": "nameless"}, {"name": "b"}]}])"));
  ASSERT_EQ(prompts.size(), 1u);
  ASSERT_EQ(prompts[0].arguments.size(), 2u);
  EXPECT_TRUE(prompts[0].arguments[0].required);
  EXPECT_FALSE(prompts[0].arguments[1].required);
  EXPECT_EQ(PromptHint(prompts[0]), "a [b]");
}

TEST(McpPromptsTest, CommandNamesHaveNoBlanks) {
  EXPECT_EQ(PromptCommandName("every thing", "my prompt"), "mcp:every-thing:my-prompt");
  EXPECT_EQ(PromptCommandName("s", "p"), "mcp:s:p");
}

TEST(McpPromptsTest, ArgumentsByNameAndByPosition) {
  const PromptInfo p = WeatherPrompt();
  auto named = PromptArguments(p, "c", {"units=metric", "city=Paris"});
  ASSERT_TRUE(named.ok());
  EXPECT_EQ(*named, J(R"({"city": "Paris", "units": "metric"})"));
  auto positional = PromptArguments(p, "c", {"Paris", "metric"});
  ASSERT_TRUE(positional.ok());
  EXPECT_EQ(*positional, J(R"({"city": "Paris", "units": "metric"})"));
  // A name fills its argument wherever it stands; the other words fill the rest in order.
  auto mixed = PromptArguments(p, "c", {"units=imperial", "New", "York"});
  ASSERT_TRUE(mixed.ok());
  EXPECT_EQ(*mixed, J(R"({"city": "New York", "units": "imperial"})"));
  // Words past the last argument join it; an `=` with an unknown key is a plain word.
  auto rest = PromptArguments(p, "c", {"Paris", "a=b", "c"});
  ASSERT_TRUE(rest.ok());
  EXPECT_EQ(*rest, J(R"({"city": "Paris", "units": "a=b c"})"));
  auto optional_left = PromptArguments(p, "c", {"Oslo"});
  ASSERT_TRUE(optional_left.ok());
  EXPECT_EQ(*optional_left, J(R"({"city": "Oslo"})"));
}

TEST(McpPromptsTest, MissingAndExtraArgumentsAreClearErrors) {
  const PromptInfo p = WeatherPrompt();
  auto missing = PromptArguments(p, "mcp:s:weather", {"units=metric"});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message,
            "/mcp:s:weather needs city (the city); usage: /mcp:s:weather city [units]");
  auto extra = PromptArguments(p, "w", {"city=a", "units=b", "more"});
  ASSERT_FALSE(extra.ok());
  EXPECT_NE(extra.error().message.find("more words followed"), std::string::npos);
  PromptInfo bare;
  bare.name = "bare";
  EXPECT_TRUE(PromptArguments(bare, "b", {}).ok());
  auto words = PromptArguments(bare, "b", {"x"});
  ASSERT_FALSE(words.ok());
  EXPECT_EQ(words.error().message, "/b takes no arguments; usage: /b");
}

TEST(McpPromptsTest, MessagesBecomeTheUsersTurn) {
  auto content = PromptContent(J(R"({"messages": [
    {"role": "user", "content": {"type": "text", "text": "Analyze this:"}},
    {"role": "user", "content": {"type": "resource", "resource":
      {"uri": "demo://doc/1", "mimeType": "text/plain", "text": "hello"}}},
    {"role": "user", "content": {"type": "image", "mimeType": "image/png", "data": "AAAA"}},
    {"role": "assistant", "content": {"type": "text", "text": "Sure."}},
    {"role": "user", "content": {"type": "resource_link", "uri": "demo://doc/2", "name": "two"}},
    {"role": "user", "content": {"type": "audio", "mimeType": "audio/wav", "data": "AA"}}]})"));
  ASSERT_EQ(content.size(), 6u);
  EXPECT_EQ(content[0].text, "Analyze this:");
  EXPECT_EQ(content[1].text, "Contents of demo://doc/1:\nhello");
  EXPECT_EQ(content[2].type, BlockType::kImage);
  EXPECT_EQ(content[2].data(), "AAAA");
  EXPECT_EQ(content[3].text, "[The assistant said:] Sure.");
  EXPECT_EQ(content[4].text, "[two](demo://doc/2)");
  EXPECT_EQ(content[5].text, "[a audio block not shown]");
  auto empty = PromptContent(J(R"({"messages": []})"));
  ASSERT_EQ(empty.size(), 1u);
  EXPECT_EQ(empty[0].text, "[the MCP prompt has no messages]");
}

TEST(McpPromptsTest, CatalogListsPromptsAndExpandsThemThroughTheServer) {
  ContentServer server;
  server.answers["prompts/list"] = J(R"({"prompts": [
    {"name": "weather", "description": "Weather", "arguments": [{"name": "city", "required": true}]},
    {"name": "simple"}]})");
  server.answers["prompts/get"] =
      J(R"({"messages": [{"role": "user", "content": {"type": "text", "text": "What now?"}}]})");
  auto client = server.MakeClient("srv");
  PromptCatalog catalog;
  catalog.Load(client, CancelToken());
  auto commands = catalog.Commands();
  ASSERT_EQ(commands.size(), 2u);
  EXPECT_EQ(commands[0].name, "mcp:srv:simple");
  EXPECT_EQ(commands[0].hint, "");
  EXPECT_EQ(commands[1].name, "mcp:srv:weather");
  EXPECT_EQ(commands[1].description, "Weather");
  EXPECT_EQ(commands[1].hint, "city");

  EXPECT_FALSE(catalog.Expand("mcp:srv:other", {}, CancelToken()).has_value());
  auto expanded = catalog.Expand("mcp:srv:weather", {"Paris"}, CancelToken());
  ASSERT_TRUE(expanded.has_value());
  ASSERT_TRUE(expanded->ok()) << expanded->error().message;
  ASSERT_EQ((*expanded)->size(), 1u);
  EXPECT_EQ((**expanded)[0].text, "What now?");
  auto gets = server.Requests("prompts/get");
  ASSERT_EQ(gets.size(), 1u);
  EXPECT_EQ(gets[0]["params"], J(R"({"name": "weather", "arguments": {"city": "Paris"}})"));
  // A missing argument fails before the server is asked.
  auto missing = catalog.Expand("mcp:srv:weather", {}, CancelToken());
  ASSERT_TRUE(missing.has_value());
  EXPECT_FALSE(missing->ok());
  EXPECT_EQ(server.Requests("prompts/get").size(), 1u);
  client->Close();
}

TEST(McpPromptsTest, ServersWithoutPromptsAreNotAskedAndFailingListsOfferNone) {
  ContentServer quiet;
  quiet.answers["initialize"] = J(R"({"protocolVersion": "2025-11-25", "capabilities": {}})");
  auto client = quiet.MakeClient("quiet");
  PromptCatalog catalog;
  catalog.Load(client, CancelToken());
  EXPECT_TRUE(catalog.Commands().empty());
  EXPECT_TRUE(quiet.Requests("prompts/list").empty());
  ContentServer failing;  // announces prompts, but has no prompts/list
  auto other = failing.MakeClient("failing");
  catalog.Load(other, CancelToken());
  EXPECT_TRUE(catalog.Commands().empty());
  EXPECT_EQ(failing.Requests("prompts/list").size(), 1u);
  client->Close();
  other->Close();
}

TEST(McpPromptsTest, AServerFailingTheGetIsAnError) {
  ContentServer server;
  server.answers["prompts/list"] = J(R"({"prompts": [{"name": "p"}]})");
  server.answers["prompts/get"] = J(R"({"error": {"code": -32602, "message": "bad prompt"}})");
  auto client = server.MakeClient("s");
  PromptCatalog catalog;
  catalog.Load(client, CancelToken());
  auto got = catalog.Expand("mcp:s:p", {}, CancelToken());
  ASSERT_TRUE(got.has_value());
  ASSERT_FALSE(got->ok());
  EXPECT_NE(got->error().message.find("bad prompt"), std::string::npos);
  client->Close();
}

// --- resources ---

TEST(McpResourcesTest, UriTemplatesMatch) {
  EXPECT_TRUE(TemplateMatches("demo://r/{id}", "demo://r/12"));
  EXPECT_FALSE(TemplateMatches("demo://r/{id}", "demo://r/"));
  EXPECT_FALSE(TemplateMatches("demo://r/{id}", "demo://r/1/2"));
  EXPECT_FALSE(TemplateMatches("demo://r/{id}", "demo://q/1"));
  EXPECT_TRUE(TemplateMatches("file:///{+path}", "file:///a/b/c.txt"));
  EXPECT_TRUE(TemplateMatches("db://{table}/rows/{row}", "db://users/rows/7"));
  EXPECT_FALSE(TemplateMatches("db://{table}/rows/{row}", "db://users/cols/7"));
  EXPECT_TRUE(TemplateMatches("s://x{?q,page}", "s://x"));
  EXPECT_TRUE(TemplateMatches("s://x{?q,page}", "s://x?q=1&page=2"));
  EXPECT_FALSE(TemplateMatches("s://{unclosed", "s://a"));
  EXPECT_TRUE(TemplateMatches("s://plain", "s://plain"));
}

TEST(McpResourcesTest, ContentsForTheModel) {
  EXPECT_EQ(ResourceContentsBlock(J(R"({"uri": "u://a", "text": "hi"})")).text,
            "Contents of u://a:\nhi");
  ContentBlock img = ResourceContentsBlock(J(R"({"uri": "u://i", "mimeType": "image/png",
                                                 "blob": "AAAA"})"));
  EXPECT_EQ(img.type, BlockType::kImage);
  EXPECT_EQ(img.mime_type(), "image/png");
  EXPECT_EQ(ResourceContentsBlock(J(R"({"uri": "u://b", "mimeType": "application/zip",
                                        "blob": "AAAA"})"))
                .text,
            "[binary resource u://b (application/zip) not shown]");
}

ContentServer* WithResources(ContentServer* s) {
  s->answers["resources/list"] = J(R"({"resources": [
    {"uri": "demo://static/a.md", "name": "a.md", "mimeType": "text/markdown",
     "description": "The A document"}]})");
  s->answers["resources/templates/list"] =
      J(R"({"resourceTemplates": [{"uriTemplate": "demo://dyn/{id}", "name": "Dynamic"}]})");
  s->reads["demo://static/a.md"] =
      J(R"({"contents": [{"uri": "demo://static/a.md", "text": "# A"}]})");
  s->reads["demo://dyn/7"] = J(R"({"contents": [{"uri": "demo://dyn/7", "text": "seven"}]})");
  return s;
}

ContentBlock Link(const std::string& uri) { return ContentBlock::Text("[x](" + uri + ")"); }

TEST(McpResourcesTest, OnlyAWholeBlockThatIsOneLinkIsALink) {
  EXPECT_EQ(LinkedUri(Link("demo://a/b")), "demo://a/b");
  EXPECT_EQ(LinkedUri(ContentBlock::Text("[](x://y)")), "x://y");
  EXPECT_EQ(LinkedUri(ContentBlock::Text("see [x](demo://a)")), "");
  EXPECT_EQ(LinkedUri(ContentBlock::Text("[x](demo://a) too")), "");
  EXPECT_EQ(LinkedUri(ContentBlock::Text("[x](demo://a b)")), "");
  EXPECT_EQ(LinkedUri(ContentBlock::Text("[a](b) and [c](d)")), "");
  EXPECT_EQ(LinkedUri(ContentBlock::Text("[x]()")), "");
}

TEST(McpResourcesTest, LinksToAServersResourcesAreReadIntoThePrompt) {
  ContentServer server;
  auto client = WithResources(&server)->MakeClient("docs");
  std::vector<ContentBlock> prompt = {ContentBlock::Text("look at"), Link("demo://static/a.md"),
                                      Link("demo://dyn/7"), Link("file:///elsewhere.txt")};
  ResolveResourceLinks(prompt, {client}, CancelToken());
  ASSERT_EQ(prompt.size(), 6u);
  EXPECT_EQ(prompt[0].text, "look at");
  EXPECT_EQ(prompt[1].text, "[x](demo://static/a.md)");
  EXPECT_EQ(prompt[2].text, "Contents of demo://static/a.md:\n# A");
  EXPECT_EQ(prompt[4].text, "Contents of demo://dyn/7:\nseven");
  // No server has it: left as the link it is.
  EXPECT_EQ(prompt[5].text, "[x](file:///elsewhere.txt)");
  EXPECT_EQ(server.Requests("resources/read").size(), 2u);
  client->Close();
}

TEST(McpResourcesTest, PromptsWithoutLinksAskNothingAndFailedReadsAreNoted) {
  ContentServer server;
  auto client = WithResources(&server)->MakeClient("docs");
  std::vector<ContentBlock> plain = {ContentBlock::Text("hello")};
  ResolveResourceLinks(plain, {client}, CancelToken());
  EXPECT_EQ(plain.size(), 1u);
  EXPECT_TRUE(server.Requests("resources/list").empty());
  std::vector<ContentBlock> broken = {Link("demo://dyn/8")};  // fits the template, read fails
  server.answers["resources/read"] = J(R"({"error": {"code": -32002, "message": "gone"}})");
  ResolveResourceLinks(broken, {client}, CancelToken());
  ASSERT_EQ(broken.size(), 1u);
  EXPECT_NE(broken[0].text.find("[not read from the MCP server 'docs'"), std::string::npos);
  EXPECT_NE(broken[0].text.find("gone"), std::string::npos);
  client->Close();
}

TEST(McpResourcesTest, TheToolListsAndReads) {
  ContentServer server;
  auto client = WithResources(&server)->MakeClient("docs");
  ResourceTool tool([client] { return std::vector<std::shared_ptr<Client>>{client}; });
  EXPECT_EQ(tool.name(), "mcp_resource");
  ToolContext ctx;
  ToolOutput list = tool.Run(J(R"({"action": "list"})"), ctx);
  ASSERT_FALSE(list.is_error);
  ASSERT_EQ(list.content.size(), 1u);
  EXPECT_EQ(list.content[0].text,
            "MCP server 'docs':\n- demo://static/a.md (a.md, text/markdown): The A document\n"
            "Resource templates (read a URI that fits one):\n- demo://dyn/{id} (Dynamic)\n");
  ToolOutput read = tool.Run(J(R"({"action": "read", "uri": "demo://static/a.md"})"), ctx);
  ASSERT_FALSE(read.is_error);
  EXPECT_EQ(read.content[0].text, "Contents of demo://static/a.md:\n# A");
  // The editor gets the resource itself.
  ASSERT_EQ(read.resources.size(), 1u);
  EXPECT_TRUE(read.resources[0].embedded);
  ToolOutput other = tool.Run(J(R"({"action": "list", "server": "nope"})"), ctx);
  EXPECT_TRUE(other.is_error);
  EXPECT_NE(other.content[0].text.find("servers with resources: docs"), std::string::npos);
  EXPECT_TRUE(tool.Run(J(R"({"action": "read"})"), ctx).is_error);
  EXPECT_TRUE(tool.Run(J(R"({"action": "delete"})"), ctx).is_error);
  ToolOutput missing = tool.Run(J(R"({"action": "read", "uri": "demo://none"})"), ctx);
  EXPECT_TRUE(missing.is_error);
  EXPECT_NE(missing.content[0].text.find("Cannot read demo://none"), std::string::npos);
  client->Close();
}

// --- structured output ---

const char kWeatherSchema[] = R"({"type": "object", "required": ["temperature"],
  "properties": {"temperature": {"type": "number"}, "conditions": {"type": "string"}}})";

TEST(McpStructuredTest, TheCarryingTextBecomesIndentedJson) {
  ToolOutput out = OutputFromResult(J(R"({"content": [{"type": "text",
    "text": "{\"temperature\":33,\"conditions\":\"Cloudy\"}"}],
    "structuredContent": {"temperature": 33, "conditions": "Cloudy"}})"),
                                    nullptr, J(kWeatherSchema));
  ASSERT_EQ(out.content.size(), 1u);
  EXPECT_EQ(out.content[0].text, "{\n  \"conditions\" : \"Cloudy\",\n  \"temperature\" : 33\n}");
  EXPECT_FALSE(out.is_error);
}

TEST(McpStructuredTest, WithoutACarrierTheResultIsAdded) {
  ToolOutput out = OutputFromResult(J(R"({"content": [{"type": "text", "text": "done"}],
    "structuredContent": {"temperature": 3}})"));
  ASSERT_EQ(out.content.size(), 2u);
  EXPECT_EQ(out.content[0].text, "done");
  EXPECT_EQ(out.content[1].text, "Structured result:\n{\n  \"temperature\" : 3\n}");
}

TEST(McpStructuredTest, AMismatchWithTheSchemaIsNotedNotFatal) {
  ToolOutput out = OutputFromResult(
      J(R"({"content": [], "structuredContent": {"temperature": "hot", "extra": 1}})"), nullptr,
      J(kWeatherSchema));
  EXPECT_FALSE(out.is_error);
  ASSERT_EQ(out.content.size(), 2u);
  EXPECT_EQ(out.content[1].text,
            "[the structured result does not fit the tool's output schema:\n"
            "$.temperature: expected number, got a string]");
  ToolOutput none = OutputFromResult(J(R"({"content": [{"type": "text", "text": "x"}]})"), nullptr,
                                     J(kWeatherSchema));
  ASSERT_EQ(none.content.size(), 2u);
  EXPECT_EQ(none.content[1].text,
            "[the tool declares an output schema but returned no structured result]");
}

}  // namespace
}  // namespace lousho::agent::mcp
