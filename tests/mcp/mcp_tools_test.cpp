// Tests of MCP tools as session tools: name mangling, schema adaptation, kinds, result mapping
// and the permission policy for them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <random>
#include <set>

#include "agent/mcp/mcp_tool.h"
#include "agent/mcp/tool_names.h"
#include "agent/permissions.h"
#include "agent/tools/tool_util.h"
#include "support/json_util.h"

namespace lousho::agent::mcp {
namespace {

TEST(McpToolNamesTest, PrefixAndAllowedCharacters) {
  EXPECT_EQ(MangleToolName("github", "create_issue"), "mcp__github__create_issue");
  EXPECT_EQ(MangleToolName("my server", "get.file/v2"), "mcp__my_server__get_file_v2");
  EXPECT_EQ(MangleToolName("é", "a-b"), "mcp______a-b");  // é is two bytes: two '_'
}

TEST(McpToolNamesTest, AtMost64Bytes) {
  std::string name = MangleToolName(std::string(40, 's'), std::string(40, 't'));
  EXPECT_EQ(name.size(), kMaxToolNameBytes);
  EXPECT_EQ(name.rfind("mcp__ssss", 0), 0u);
}

TEST(McpToolNamesTest, CollisionsAreUniqueAndDeterministic) {
  // "a.b" and "a_b" mangle alike; two long names cut to the same prefix.
  const std::string long_a = std::string(70, 'x') + "a";
  const std::string long_b = std::string(70, 'x') + "b";
  std::vector<std::pair<std::string, std::string>> pairs = {
      {"srv", "a.b"}, {"srv", "a_b"}, {"srv", long_a}, {"srv", long_b}, {"srv", "plain"}};
  std::vector<std::string> names = UniqueToolNames(pairs);
  std::set<std::string> unique(names.begin(), names.end());
  EXPECT_EQ(unique.size(), pairs.size());
  for (const auto& n : names) {
    EXPECT_LE(n.size(), kMaxToolNameBytes) << n;
    EXPECT_EQ(
        n.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-"),
        std::string::npos)
        << n;
  }
  EXPECT_EQ(names[4], "mcp__srv__plain") << "names without a collision stay as they are";
  // The same tools in another order get the same names.
  std::vector<std::pair<std::string, std::string>> reversed(pairs.rbegin(), pairs.rend());
  std::vector<std::string> again = UniqueToolNames(reversed);
  for (size_t i = 0; i < pairs.size(); ++i) EXPECT_EQ(names[i], again[pairs.size() - 1 - i]);
}

// The naming as it was first written (a scan of every taken name for each counter), kept here
// as the reference the hashed version must match name for name.
std::vector<std::string> ReferenceNames(
    const std::vector<std::pair<std::string, std::string>>& server_tool) {
  auto fnv = [](const std::string& server, const std::string& tool) {
    uint32_t h = 2166136261u;
    for (unsigned char c : server + std::string(1, '\0') + tool) {
      h ^= c;
      h *= 16777619u;
    }
    return h;
  };
  auto with_suffix = [](const std::string& base, const std::string& suffix) {
    if (base.size() + suffix.size() <= kMaxToolNameBytes) return base + suffix;
    return base.substr(0, kMaxToolNameBytes - suffix.size()) + suffix;
  };
  std::vector<std::string> names;
  names.reserve(server_tool.size());
  for (const auto& [server, tool] : server_tool) names.push_back(MangleToolName(server, tool));
  auto count = [&](const std::string& n) { return std::count(names.begin(), names.end(), n); };
  std::vector<std::string> taken;
  for (const auto& n : names)
    if (count(n) == 1) taken.push_back(n);
  auto is_taken = [&](const std::string& n) {
    return std::find(taken.begin(), taken.end(), n) != taken.end();
  };
  std::vector<std::string> out = names;
  for (size_t i = 0; i < names.size(); ++i) {
    if (count(names[i]) == 1) continue;
    char hex[16];
    std::snprintf(hex, sizeof hex, "_%08x",
                  static_cast<unsigned>(fnv(server_tool[i].first, server_tool[i].second)));
    std::string candidate = with_suffix(names[i], hex);
    for (int n = 2; is_taken(candidate); ++n)
      candidate = with_suffix(names[i], std::string(hex) + "_" + std::to_string(n));
    taken.push_back(candidate);
    out[i] = candidate;
  }
  return out;
}

// A corpus rich in every kind of collision: the same tool listed many times, names that mangle
// alike, long names cut to one prefix, and literal names equal to the suffixed names the others
// get (so counters must step over them).
TEST(McpToolNamesTest, CollisionNamingMatchesTheReferenceOnACorpus) {
  std::vector<std::pair<std::string, std::string>> corpus;
  std::mt19937 rng(18);
  const std::string alphabet = "ab._- /";
  for (int i = 0; i < 1500; ++i) {
    std::string tool;
    const size_t len = 1 + rng() % 4;
    for (size_t k = 0; k < len; ++k) tool += alphabet[rng() % alphabet.size()];
    corpus.emplace_back(rng() % 3 ? "srv" : "s.r.v", tool);
  }
  for (int i = 0; i < 100; ++i) corpus.emplace_back("srv", "dup");
  for (int i = 0; i < 40; ++i)
    corpus.emplace_back("srv", std::string(70, 'x') + std::to_string(i % 7));
  // The suffixed names "dup" gets, as literal tools of their own.
  const std::vector<std::string> dup_names =
      ReferenceNames({{"srv", "dup"}, {"srv", "dup"}, {"srv", "dup"}});
  for (const auto& n : dup_names)
    corpus.emplace_back("srv", n.substr(std::string("mcp__srv__").size()));
  corpus.emplace_back("srv", dup_names[1].substr(std::string("mcp__srv__").size()) + "_2");
  std::shuffle(corpus.begin(), corpus.end(), rng);

  std::vector<std::string> names = UniqueToolNames(corpus);
  EXPECT_EQ(names, ReferenceNames(corpus));
  std::set<std::string> unique(names.begin(), names.end());
  EXPECT_EQ(unique.size(), corpus.size());
}

TEST(McpSchemaTest, AdaptedForEveryProvider) {
  auto s = *ParseJson(
      R"({"$schema":"http://json-schema.org/draft-07/schema#","type":"object",
          "properties":{"a":{"type":"number"}},"required":["a"]})");
  Json::Value a = AdaptSchema(s);
  EXPECT_FALSE(a.isMember("$schema"));
  EXPECT_EQ(a["properties"]["a"]["type"].asString(), "number");
  EXPECT_EQ(a["required"][0].asString(), "a");
  Json::Value empty = AdaptSchema(Json::Value());
  EXPECT_EQ(empty["type"].asString(), "object");
  EXPECT_TRUE(empty["properties"].isObject());
}

TEST(McpKindTest, ReadOnlyToolsByName) {
  ToolInfo info;
  info.read_only = true;
  info.name = "search_code";
  EXPECT_EQ(KindOf(info), ToolKind::kSearch);
  info.name = "fetch_url";
  EXPECT_EQ(KindOf(info), ToolKind::kFetch);
  info.name = "get_issue";
  EXPECT_EQ(KindOf(info), ToolKind::kRead);
  info.read_only = false;
  EXPECT_EQ(KindOf(info), ToolKind::kOther);
}

TEST(McpOutputTest, EveryContentKind) {
  auto result = *ParseJson(R"({"content":[
      {"type":"text","text":"hello"},
      {"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"},
      {"type":"audio","data":"AAAA","mimeType":"audio/wav"},
      {"type":"resource_link","uri":"file:///r/a.txt","name":"a.txt","mimeType":"text/plain"},
      {"type":"resource","resource":{"uri":"mem://note","mimeType":"text/plain","text":"inside"}},
      {"type":"resource","resource":{"uri":"mem://bin","mimeType":"application/zip","blob":"UEsD"}}
    ]})");
  ToolOutput out = OutputFromResult(result);
  EXPECT_FALSE(out.is_error);
  ASSERT_EQ(out.content.size(), 6u);
  EXPECT_EQ(out.content[0].text, "hello");
  EXPECT_EQ(out.content[1].type, BlockType::kImage);
  EXPECT_EQ(out.content[1].mime_type(), "image/png");
  EXPECT_NE(out.content[2].text.find("audio"), std::string::npos);
  EXPECT_EQ(out.content[3].text, "[a.txt](file:///r/a.txt)");
  EXPECT_EQ(out.content[4].text, "Contents of mem://note:\ninside");
  EXPECT_NE(out.content[5].text.find("binary resource mem://bin"), std::string::npos);
  ASSERT_EQ(out.resources.size(), 3u);
  EXPECT_FALSE(out.resources[0].embedded);
  EXPECT_TRUE(out.resources[1].embedded);
  EXPECT_EQ(*out.resources[1].text, "inside");
  EXPECT_EQ(*out.resources[2].blob, "UEsD");
  EXPECT_EQ(out.details, result) << "the raw result is kept for the editor";
}

TEST(McpOutputTest, StructuredContentKeptUnlessATextBlockCarriesIt) {
  auto carried = *ParseJson(
      R"({"content":[{"type":"text","text":"{\"t\": 36}"}],"structuredContent":{"t":36}})");
  EXPECT_EQ(OutputFromResult(carried).content.size(), 1u);
  auto alone = *ParseJson(R"({"content":[],"structuredContent":{"t":36}})");
  ToolOutput out = OutputFromResult(alone);
  ASSERT_EQ(out.content.size(), 1u);
  // Indented for the user (mcp_content_test.cpp has the rest).
  EXPECT_EQ(out.content[0].text, "Structured result:\n{\n  \"t\" : 36\n}");
}

TEST(McpOutputTest, IsErrorFailsTheCall) {
  auto r = *ParseJson(R"({"content":[{"type":"text","text":"no such repo"}],"isError":true})");
  ToolOutput out = OutputFromResult(r);
  EXPECT_TRUE(out.is_error);
  EXPECT_EQ(out.content[0].text, "no such repo");
}

TEST(McpOutputTest, LargeTextIsCutAndSaysSo) {
  Json::Value r(Json::objectValue);
  r["content"][0]["type"] = "text";
  r["content"][0]["text"] = std::string(tools::kMaxToolOutputBytes + 1000, 'x');
  r["content"][1]["type"] = "text";
  r["content"][1]["text"] = "tail";
  ToolOutput out = OutputFromResult(r);
  size_t total = 0;
  for (const auto& b : out.content)
    if (b.text.find("[Output cut") == std::string::npos) total += b.text.size();
  EXPECT_EQ(total, tools::kMaxToolOutputBytes);
  EXPECT_NE(out.content.back().text.find("[Output cut at 50 KiB"), std::string::npos);
}

// 300,000 tiny blocks (or many images) become a bounded output: the first blocks and a note
// that counts the rest, images within their budget, and no raw copy of the whole result.
TEST(McpOutputTest, ManyBlocksAndLargeImagesAreCappedWhileReading) {
  Json::Value r(Json::objectValue);
  Json::Value& content = r["content"];
  content = Json::Value(Json::arrayValue);
  for (int i = 0; i < 3; ++i) {
    Json::Value img(Json::objectValue);
    img["type"] = "image";
    img["mimeType"] = "image/png";
    img["data"] = std::string(4 << 20, 'A');
    content.append(img);
  }
  Json::Value b(Json::objectValue);
  b["type"] = "text";
  b["text"] = "b";
  for (int i = 0; i < 300000; ++i) content.append(b);
  ToolOutput out = OutputFromResult(r);
  size_t images = 0, texts = 0;
  for (const auto& block : out.content) (block.type == BlockType::kImage ? images : texts)++;
  EXPECT_EQ(images, 2u) << "10 MiB of images: the third is a note";
  EXPECT_NE(out.content[2].text.find("image (image/png, 4 MiB) not shown"), std::string::npos)
      << out.content[2].text;
  EXPECT_LE(out.content.size(), 258u);
  EXPECT_NE(out.content.back().text.find("299747 more content blocks not shown"), std::string::npos)
      << out.content.back().text;
  EXPECT_EQ(out.details, DetailsTooLarge()) << "the raw result is too large for the editor";
}

class McpPermissionTest : public ::testing::Test {
 protected:
  std::shared_ptr<McpTool> Tool(const std::string& server, const std::string& name,
                                bool read_only) {
    config::McpServerSpec spec;
    spec.name = server;
    ToolInfo info;
    info.name = name;
    info.read_only = read_only;
    return std::make_shared<McpTool>(std::make_shared<Client>(spec, ClientOptions{}), info,
                                     MangleToolName(server, name));
  }
  Json::Value args_{Json::objectValue};
};

TEST_F(McpPermissionTest, WithoutARuleEvenReadOnlyToolsAsk) {
  PermissionPolicy policy({});
  EXPECT_EQ(policy.Decide(*Tool("gh", "get_issue", true), args_, PermissionMode::kDefault),
            PermissionAction::kAsk);
  EXPECT_EQ(policy.Decide(*Tool("gh", "create_issue", false), args_, PermissionMode::kDefault),
            PermissionAction::kAsk);
  EXPECT_EQ(policy.Decide(*Tool("gh", "create_issue", false), args_, PermissionMode::kBypass),
            PermissionAction::kAllow);
}

TEST_F(McpPermissionTest, RulesNameToolsByGlob) {
  auto rules =
      ParsePermissionRules(*ParseJson(R"({"mcp__github__*":"allow","mcp__gh__delete_*":"deny"})"));
  ASSERT_TRUE(rules.ok());
  PermissionPolicy policy(*rules);
  EXPECT_EQ(policy.Decide(*Tool("github", "create_issue", false), args_, PermissionMode::kDefault),
            PermissionAction::kAllow);
  EXPECT_EQ(policy.Decide(*Tool("gh", "delete_repo", false), args_, PermissionMode::kBypass),
            PermissionAction::kDeny);
  EXPECT_EQ(policy.Decide(*Tool("other", "create_issue", false), args_, PermissionMode::kDefault),
            PermissionAction::kAsk);
}

TEST_F(McpPermissionTest, PlanModeOffersOnlyReadOnlyTools) {
  PermissionPolicy policy({});
  auto writer = Tool("gh", "create_issue", false);
  auto reader = Tool("gh", "get_issue", true);
  EXPECT_EQ(policy.Decide(*writer, args_, PermissionMode::kPlan), PermissionAction::kDeny);
  EXPECT_EQ(policy.Decide(*reader, args_, PermissionMode::kPlan), PermissionAction::kAsk);
  EXPECT_FALSE(writer->offered_in_plan_mode());
  EXPECT_TRUE(reader->offered_in_plan_mode());
  // One rule allows the read-only tools of a server.
  auto rules = ParsePermissionRules(*ParseJson(R"([{"tool":"mcp__gh__get_*","action":"allow"}])"));
  PermissionPolicy allowing(*rules);
  EXPECT_EQ(allowing.Decide(*reader, args_, PermissionMode::kPlan), PermissionAction::kAllow);
}

TEST_F(McpPermissionTest, TitleNamesServerToolAndArguments) {
  auto t = Tool("everything", "echo", true);
  Json::Value args(Json::objectValue);
  args["message"] = "hi";
  ToolContext ctx;
  EXPECT_EQ(t->Title(args, ctx), "everything: echo (message: \"hi\")");
  EXPECT_EQ(t->Title(Json::Value(Json::objectValue), ctx), "everything: echo");
}

}  // namespace
}  // namespace lousho::agent::mcp
