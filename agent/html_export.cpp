// Session export to standalone HTML.
#include "agent/html_export.h"

#include <dtl/dtl.hpp>
#include <unordered_map>

#include "agent/tools/tool_util.h"
#include "core/server_tool.h"
#include "support/json_util.h"

namespace lousho::agent {

std::string HtmlEscape(const std::string& s) {
  std::string out;
  out.reserve(s.size() + s.size() / 8);
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

namespace {

constexpr char kStyle[] = R"(
body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#1d1d1f;background:#fafafa}
header{border-bottom:1px solid #ddd;margin-bottom:1rem}
header p{color:#666;margin:.2rem 0;font-size:13px}
.msg{margin:1rem 0;padding:.6rem .9rem;border-radius:8px;background:#fff;border:1px solid #e3e3e3}
.user{background:#eef4ff;border-color:#c9dcff}
.role{font-size:12px;font-weight:600;text-transform:uppercase;color:#777;margin-bottom:.3rem}
.text{white-space:pre-wrap;word-wrap:break-word}
details.thinking{color:#666;font-style:italic;margin:.4rem 0}
.tool{margin:.6rem 0;border:1px solid #ddd;border-radius:6px;background:#f6f6f6}
.tool summary{padding:.3rem .6rem;cursor:pointer;font-family:ui-monospace,monospace;font-size:13px}
.tool .ok{color:#1a7f37}.tool .err{color:#cf222e}
pre{margin:0;padding:.5rem .7rem;overflow-x:auto;font:12px/1.45 ui-monospace,monospace;white-space:pre-wrap}
.diff .add{background:#e6ffec;display:block}.diff .del{background:#ffebe9;display:block}
.diff .path{font-weight:600;display:block}
.note{color:#777;font-size:13px;margin:.8rem 0}
)";

std::string DiffHtml(const FileDiff& diff) {
  std::string out = "<pre class=\"diff\"><span class=\"path\">" + HtmlEscape(diff.path) +
                    (diff.old_text ? "" : " (new file)") + "</span>";
  std::vector<std::string> a =
      diff.old_text ? tools::SplitLineStrings(*diff.old_text) : std::vector<std::string>{};
  std::vector<std::string> b = tools::SplitLineStrings(diff.new_text);
  dtl::Diff<std::string> d(a, b);
  d.compose();
  for (const auto& [line, info] : d.getSes().getSequence()) {
    if (info.type == dtl::SES_ADD) {
      out += "<span class=\"add\">+" + HtmlEscape(line) + "</span>";
    } else if (info.type == dtl::SES_DELETE) {
      out += "<span class=\"del\">-" + HtmlEscape(line) + "</span>";
    } else {
      out += " " + HtmlEscape(line) + "\n";
    }
  }
  return out + "</pre>";
}

std::string ToolHtml(const ContentBlock& call, const Message* result) {
  std::string status = "<span>pending</span>";
  if (result)
    status = result->is_error ? "<span class=\"err\">failed</span>"
                              : "<span class=\"ok\">completed</span>";
  std::string title = result && !result->tool->title.empty() ? result->tool->title : call.name();
  std::string out = "<details class=\"tool\"><summary>" + HtmlEscape(title) + " &middot; " +
                    status + "</summary>";
  out += "<pre>" + HtmlEscape(call.name() + " " + WriteJsonPretty(call.arguments())) + "</pre>";
  if (result) {
    for (const auto& diff : result->tool->diffs) out += DiffHtml(diff);
    const std::string text = result->TextContent();
    if (!text.empty()) out += "<pre>" + HtmlEscape(text) + "</pre>";
  }
  return out + "</details>";
}

// One message of the conversation (tool results are shown under their call).
std::string MessageHtml(const Entry& e,
                        const std::unordered_map<std::string, const Message*>& results) {
  const Message& m = e.message;
  if (m.role == Role::kToolResult || !m.display) return "";
  const bool user = m.role == Role::kUser;
  std::string out = std::string("<div class=\"msg ") + (user ? "user" : "assistant") + "\">";
  out += "<div class=\"role\">" +
         std::string(user ? (m.is_custom() ? "note" : "user") : "assistant") + " &middot; " +
         IsoTimestamp(m.timestamp_ms ? m.timestamp_ms : e.timestamp_ms) + "</div>";
  for (const auto& b : m.content) {
    switch (b.type) {
      case BlockType::kText:
        out += "<div class=\"text\">" + HtmlEscape(b.text) + "</div>";
        break;
      case BlockType::kThinking:
        if (!b.redacted())
          out +=
              "<details class=\"thinking\"><summary>thinking</summary><div "
              "class=\"text\">" +
              HtmlEscape(b.text) + "</div></details>";
        break;
      case BlockType::kToolCall: {
        auto it = results.find(b.id());
        out += ToolHtml(b, it == results.end() ? nullptr : it->second);
        break;
      }
      case BlockType::kImage:
        out +=
            "<img alt=\"image\" style=\"max-width:100%\" src=\"data:" + HtmlEscape(b.mime_type()) +
            ";base64," + HtmlEscape(b.data()) + "\">";
        break;
      case BlockType::kServerTool:
        out += "<details class=\"tool\"><summary>" +
               HtmlEscape(ServerToolTitle(b.name(), b.arguments())) + "</summary><pre>" +
               HtmlEscape(b.server->summary) + "</pre></details>";
        break;
    }
  }
  if (!m.error_message().empty())
    out += "<div class=\"note\">" + HtmlEscape(m.error_message()) + "</div>";
  return out + "</div>\n";
}

}  // namespace

std::string SessionHtml(const HtmlExportInfo& info, const std::vector<Entry>& branch) {
  std::unordered_map<std::string, const Message*> results;
  for (const Entry& e : branch)
    if (e.kind == EntryKind::kMessage && e.message.role == Role::kToolResult)
      results[e.message.tool_call_id] = &e.message;

  const std::string title = info.title.empty() ? "lousho session" : info.title;
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">";
  out += "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">";
  out += "<title>" + HtmlEscape(title) + "</title><style>" + kStyle + "</style></head><body>";
  out += "<header><h1>" + HtmlEscape(title) + "</h1>";
  out += "<p>Session " + HtmlEscape(info.session_id) +
         (info.agent.empty() ? "" : " &middot; agent " + HtmlEscape(info.agent)) + "</p>";
  if (!info.cwd.empty()) out += "<p>" + HtmlEscape(info.cwd) + "</p>";
  out += "</header>\n";
  for (const Entry& e : branch) {
    switch (e.kind) {
      case EntryKind::kMessage:
        out += MessageHtml(e, results);
        break;
      case EntryKind::kModelChange:
        out +=
            "<div class=\"note\">model: " + HtmlEscape(e.more->provider + "/" + e.more->model_id) +
            "</div>\n";
        break;
      case EntryKind::kModeChange:
        out += "<div class=\"note\">mode: " + HtmlEscape(e.more->mode) + "</div>\n";
        break;
      case EntryKind::kCompaction:
      case EntryKind::kBranchSummary:
        if (e.more->summary.empty()) break;  // a branch summary that only marks a moved leaf
        out +=
            "<details class=\"msg\"><summary>summary of earlier work</summary><div "
            "class=\"text\">" +
            HtmlEscape(e.more->summary) + "</div></details>\n";
        break;
      case EntryKind::kThinkingChange:
      case EntryKind::kCustom:
      case EntryKind::kLabel:
      case EntryKind::kSessionInfo:
      case EntryKind::kTtsrInjection:
        break;
    }
  }
  out += "</body></html>\n";
  return out;
}

}  // namespace lousho::agent
