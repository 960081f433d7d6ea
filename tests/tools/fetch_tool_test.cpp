// Tests for the fetch tool over a loopback HTTP server, and for HTML to Markdown.
#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <thread>

#include "agent/tools/builtin_tools.h"
#include "agent/tools/html_markdown.h"
#include "agent/tools/tool_util.h"
#include "tests/tools/tool_test_util.h"

namespace lousho::agent {
namespace {

using testing::J;
using testing::TempWorkspace;
using testing::TextOf;

// GET routes on 127.0.0.1 (httplib::Server in a thread).
class PageServer {
 public:
  PageServer() {
    svr_.Get("/page", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(
          "<html><head><title>T</title><style>p{}</style><script>alert(1)</script></head>"
          "<body><h1>Hello</h1><p>Some <b>bold</b> and <a href=\"/next\">a link</a>.</p>"
          "<ul><li>one</li><li>two</li></ul><pre><code>x = 1\ny = 2</code></pre></body></html>",
          "text/html; charset=utf-8");
    });
    svr_.Get("/data.json", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("{\"a\": 1}", "application/json");
    });
    svr_.Get("/blob", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(std::string("\x01\x02\0\x03", 4), "application/octet-stream");
    });
    svr_.Get("/image", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(std::string("\x89PNG\r\n\x1a\n1234", 12), "image/png");
    });
    svr_.Get("/missing", [](const httplib::Request&, httplib::Response& res) {
      res.status = 404;
      res.set_content("nothing here", "text/plain");
    });
    svr_.Get("/moved", [](const httplib::Request&, httplib::Response& res) {
      res.set_redirect("/data.json");
    });
    svr_.Get("/big", [](const httplib::Request&, httplib::Response& res) {
      std::string text;
      for (int i = 1; i <= 20000; ++i) text += "row " + std::to_string(i) + "\n";
      res.set_content(text, "text/plain");
    });
    port_ = svr_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { svr_.listen_after_bind(); });
    while (!svr_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~PageServer() {
    svr_.stop();
    thread_.join();
  }
  std::string url(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
  }

 private:
  httplib::Server svr_;
  int port_ = 0;
  std::thread thread_;
};

Json::Value Args(const std::string& url, const std::string& format = "") {
  Json::Value a(Json::objectValue);
  a["url"] = url;
  if (!format.empty()) a["format"] = format;
  return a;
}

TEST(FetchToolTest, HtmlBecomesMarkdownTextOrStaysRaw) {
  PageServer server;
  TempWorkspace ws;
  ToolContext ctx = ws.Context();
  auto tool = tools::MakeFetchTool();
  auto md = tool->Run(Args(server.url("/page")), ctx);
  ASSERT_FALSE(md.is_error) << TextOf(md);
  const std::string text = TextOf(md);
  EXPECT_NE(text.find("# Hello"), std::string::npos) << text;
  EXPECT_NE(text.find("Some **bold** and [a link](" + server.url("/next") + ")."),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("- one\n- two"), std::string::npos) << text;
  EXPECT_NE(text.find("```\nx = 1\ny = 2\n```"), std::string::npos) << text;
  EXPECT_EQ(text.find("alert"), std::string::npos);
  EXPECT_EQ(text.find("p{}"), std::string::npos);
  auto plain = tool->Run(Args(server.url("/page"), "text"), ctx);
  EXPECT_EQ(TextOf(plain).find("**"), std::string::npos);
  EXPECT_NE(TextOf(plain).find("Some bold and a link."), std::string::npos) << TextOf(plain);
  auto raw = tool->Run(Args(server.url("/page"), "raw"), ctx);
  EXPECT_NE(TextOf(raw).find("<h1>Hello</h1>"), std::string::npos);
  EXPECT_TRUE(tool->Run(Args(server.url("/page"), "pdf"), ctx).is_error);
}

TEST(FetchToolTest, JsonImagesBinaryErrorsAndRedirects) {
  PageServer server;
  TempWorkspace ws;
  ToolContext ctx = ws.Context();
  auto tool = tools::MakeFetchTool();
  EXPECT_EQ(TextOf(tool->Run(Args(server.url("/data.json")), ctx)), "{\"a\": 1}");
  EXPECT_EQ(TextOf(tool->Run(Args(server.url("/moved")), ctx)), "{\"a\": 1}");
  auto image = tool->Run(Args(server.url("/image")), ctx);
  ASSERT_EQ(image.content.size(), 2u);
  EXPECT_EQ(image.content[1].type, BlockType::kImage);
  EXPECT_EQ(image.content[1].mime_type(), "image/png");
  auto blob = tool->Run(Args(server.url("/blob")), ctx);
  EXPECT_TRUE(blob.is_error);
  EXPECT_NE(TextOf(blob).find("binary"), std::string::npos);
  auto missing = tool->Run(Args(server.url("/missing")), ctx);
  EXPECT_TRUE(missing.is_error);
  EXPECT_NE(TextOf(missing).find("HTTP 404"), std::string::npos);
  EXPECT_TRUE(tool->Run(Args("ftp://example.com/x"), ctx).is_error);
  EXPECT_TRUE(tool->Run(Args("http://127.0.0.1:1/"), ctx).is_error);  // refused
}

TEST(FetchToolTest, LongPagesAreCutAndSavedWhole) {
  PageServer server;
  TempWorkspace ws;
  tools::SavedOutputs saved(ws.root() / "out");
  ToolContext ctx = ws.Context();
  ctx.saved_outputs = &saved;
  auto out = tools::MakeFetchTool()->Run(Args(server.url("/big")), ctx);
  const std::string text = TextOf(out);
  EXPECT_TRUE(out.details["truncated"].asBool());
  EXPECT_EQ(text.rfind("row 1\n", 0), 0u);
  EXPECT_NE(text.find("row 20000"), std::string::npos);
  EXPECT_EQ(text.find("row 10000\n"), std::string::npos);
  EXPECT_NE(text.find("saved in " + (ws.root() / "out").string()), std::string::npos);
}

TEST(FetchToolTest, PermissionSubjectIsTheHost) {
  auto tool = tools::MakeFetchTool();
  EXPECT_EQ(tool->PermissionSubject(J(R"({"url":"https://Docs.Python.org/3/x?y#z"})")),
            "docs.python.org");
  EXPECT_EQ(tool->PermissionSubject(J(R"({"url":"http://127.0.0.1:8000"})")), "127.0.0.1:8000");
  EXPECT_EQ(tool->kind(), ToolKind::kFetch);
  EXPECT_FALSE(tool->read_only());
}

TEST(HtmlMarkdownTest, TablesQuotesAndNestedLists) {
  const std::string md = tools::HtmlToMarkdown(
      "<table><tr><th>a</th><th>b</th></tr><tr><td>1</td><td>2</td></tr></table>"
      "<blockquote><p>said</p></blockquote>"
      "<ol><li>first<ul><li>inner</li></ul></li><li>second</li></ol>"
      "<p>a<br>b</p><img src=\"/i.png\" alt=\"pic\">",
      "https://h.example");
  EXPECT_NE(md.find("| a | b |\n| --- | --- |\n| 1 | 2 |"), std::string::npos) << md;
  EXPECT_NE(md.find("> said"), std::string::npos) << md;
  EXPECT_NE(md.find("1. first\n   - inner\n2. second"), std::string::npos) << md;
  EXPECT_NE(md.find("a\nb"), std::string::npos) << md;
  EXPECT_NE(md.find("![pic](https://h.example/i.png)"), std::string::npos) << md;
  // Broken markup still gives its text.
  EXPECT_EQ(tools::HtmlToText("<p>open <b>never closed"), "open never closed");
}

}  // namespace
}  // namespace lousho::agent
