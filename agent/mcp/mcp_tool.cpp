// MCP tools as session tools.
#include "agent/mcp/mcp_tool.h"

#include <cstdio>

#include "agent/tools/tool_util.h"
#include "support/json_util.h"
#include "support/text.h"

namespace lousho::agent::mcp {
namespace {

bool NameHas(const std::string& lower, std::initializer_list<const char*> words) {
  for (const char* w : words)
    if (lower.find(w) != std::string::npos) return true;
  return false;
}

// A short view of the arguments for the title: `key: value` pairs, cut at 80 bytes.
std::string Summary(const Json::Value& args) {
  if (!args.isObject() || args.empty()) return "";
  std::string out;
  for (const auto& key : MemberNames(args)) {
    if (!out.empty()) out += ", ";
    out += key + ": " + WriteJson(MemberOrNull(args, key));
    if (out.size() > 80) break;
  }
  return tools::Shorten(out, 80);
}

std::string Note(const std::string& what) { return "[" + what + "]"; }

}  // namespace

Json::Value AdaptSchema(const Json::Value& schema) {
  Json::Value s = schema.isObject() ? schema : Json::Value(Json::objectValue);
  s.removeMember("$schema");
  if (StringOr(s, "type") != "object") s["type"] = "object";
  if (!MemberOrNull(s, "properties").isObject()) s["properties"] = Json::Value(Json::objectValue);
  return s;
}

ToolKind KindOf(const ToolInfo& info) {
  if (!info.read_only) return ToolKind::kOther;
  const std::string name = AsciiLower(info.name);
  if (NameHas(name, {"search", "find", "grep", "query", "lookup"})) return ToolKind::kSearch;
  if (NameHas(name, {"fetch", "download", "http", "url", "web", "browse"})) return ToolKind::kFetch;
  return ToolKind::kRead;
}

ToolOutput OutputFromResult(const Json::Value& result) {
  ToolOutput out;
  out.details = result;
  out.is_error = BoolOr(result, "isError", false);
  const Json::Value& content = MemberOrNull(result, "content");
  size_t text_bytes = 0;
  bool cut = false;
  auto add_text = [&](std::string text) {
    if (cut) return;
    if (text_bytes + text.size() > tools::kMaxToolOutputBytes) {
      size_t room = tools::kMaxToolOutputBytes - text_bytes;
      text = text.substr(0, tools::Utf8Prefix(text, room));
      cut = true;
    }
    text_bytes += text.size();
    out.content.push_back(ContentBlock::Text(std::move(text)));
  };
  std::vector<std::string> texts;
  for (Json::ArrayIndex i = 0; content.isArray() && i < content.size(); ++i) {
    const Json::Value& b = ElementOrNull(content, i);
    const std::string type = StringOr(b, "type");
    if (type == "text") {
      texts.push_back(StringOr(b, "text"));
      add_text(texts.back());
    } else if (type == "image") {
      out.content.push_back(ContentBlock::Image(StringOr(b, "mimeType"), StringOr(b, "data")));
    } else if (type == "audio") {
      add_text(Note("audio (" + StringOr(b, "mimeType", "unknown type") + ") not shown"));
    } else if (type == "resource_link") {
      ResourceRef r;
      r.uri = StringOr(b, "uri");
      r.name = StringOr(b, "name", r.uri);
      r.mime_type = StringOr(b, "mimeType");
      add_text("[" + r.name + "](" + r.uri + ")");
      out.resources.push_back(std::move(r));
    } else if (type == "resource") {
      const Json::Value& res = MemberOrNull(b, "resource");
      ResourceRef r;
      r.embedded = true;
      r.uri = StringOr(res, "uri");
      r.name = r.uri;
      r.mime_type = StringOr(res, "mimeType");
      r.text = AsString(MemberOrNull(res, "text"));
      r.blob = AsString(MemberOrNull(res, "blob"));
      if (r.text) {
        add_text("Contents of " + r.uri + ":\n" + *r.text);
      } else if (r.blob && r.mime_type.rfind("image/", 0) == 0) {
        out.content.push_back(ContentBlock::Image(r.mime_type, *r.blob));
      } else {
        add_text(Note("binary resource " + r.uri +
                      (r.mime_type.empty() ? "" : " (" + r.mime_type + ")") + " not shown"));
      }
      out.resources.push_back(std::move(r));
    } else {
      add_text(Note("a " + (type.empty() ? std::string("malformed") : type) +
                    " block the client does not show"));
    }
  }
  // The structured result, unless a text block already carries it (servers should send both).
  const Json::Value& structured = MemberOrNull(result, "structuredContent");
  if (!structured.isNull()) {
    bool carried = false;
    for (const auto& t : texts) {
      auto parsed = ParseJson(t);
      carried = carried || (parsed.ok() && *parsed == structured);
    }
    if (!carried) add_text("Structured result:\n" + WriteJson(structured));
  }
  if (cut)
    out.content.push_back(ContentBlock::Text("\n[Output cut at " +
                                             std::to_string(tools::kMaxToolOutputBytes / 1024) +
                                             " KiB: the tool returned more.]"));
  if (out.content.empty()) out.content.push_back(ContentBlock::Text("(no output)"));
  return out;
}

McpTool::McpTool(std::shared_ptr<Client> client, ToolInfo info, std::string model_name)
    : client_(std::move(client)),
      info_(std::move(info)),
      model_name_(std::move(model_name)),
      schema_(AdaptSchema(info_.input_schema)),
      kind_(KindOf(info_)) {}

McpTool::McpTool(const McpTool& other, std::string model_name)
    : client_(other.client_),
      info_(other.info_),
      model_name_(std::move(model_name)),
      schema_(other.schema_),
      kind_(other.kind_) {}

std::string McpTool::description() const {
  std::string d = info_.description.empty() ? info_.title : info_.description;
  return d.empty() ? "Tool " + info_.name + " of the MCP server " + client_->name() : d;
}

std::string McpTool::Title(const Json::Value& args, const ToolContext&) const {
  std::string title = client_->name() + ": " + info_.name;
  std::string summary = Summary(args);
  return summary.empty() ? title : title + " (" + summary + ")";
}

std::string McpTool::PermissionSubject(const Json::Value&) const {
  // Rules name MCP tools as a whole ("mcp__github__*"); their arguments are no path or command.
  return "";
}

ToolOutput McpTool::Run(const Json::Value& args, ToolContext& ctx) {
  auto on_progress = [&](const Progress& p) {
    if (!ctx.on_progress) return;
    char buf[64];
    if (p.total) {
      std::snprintf(buf, sizeof buf, "%g/%g", p.progress, *p.total);
    } else {
      std::snprintf(buf, sizeof buf, "%g", p.progress);
    }
    ctx.on_progress(p.message.empty() ? std::string(buf) : std::string(buf) + ": " + p.message);
  };
  auto res = client_->CallTool(info_.name, args, on_progress, ctx.cancel);
  if (!res.ok()) {
    if (res.error().code == ErrorCode::kCancelled)
      return ToolOutput::Error("Cancelled by the user.");
    return ToolOutput::Error(res.error().message);
  }
  return OutputFromResult(*res);
}

}  // namespace lousho::agent::mcp
