// MCP resources for the model and the editor's links.
#include "agent/mcp/resources.h"

#include <algorithm>

#include "agent/mcp/mcp_tool.h"
#include "agent/tools/tool_util.h"
#include "support/json_util.h"
#include "support/log.h"

namespace lousho::agent::mcp {
namespace {

// The most lines a resource list shows the model (the rest are saved, as any cut output).
constexpr size_t kMaxListLines = 2000;
// A template with more expressions than this fits nothing (the match backtracks).
constexpr size_t kMaxTemplateExpressions = 16;

// One part of a URI template: literal text, or an expression with its operator (0: none).
struct TemplatePart {
  std::string literal;
  bool expression = false;
  char op = 0;
};

std::vector<TemplatePart> SplitTemplate(const std::string& t, bool* ok) {
  std::vector<TemplatePart> parts;
  size_t i = 0;
  *ok = true;
  while (i < t.size()) {
    const size_t open = t.find('{', i);
    if (open != i) {
      TemplatePart lit;
      lit.literal = t.substr(i, open == std::string::npos ? std::string::npos : open - i);
      parts.push_back(std::move(lit));
      if (open == std::string::npos) break;
    }
    const size_t close = t.find('}', open);
    if (close == std::string::npos || close == open + 1) {
      *ok = false;
      return parts;
    }
    TemplatePart expr;
    expr.expression = true;
    const char first = t[open + 1];
    if (std::string("+#./;?&").find(first) != std::string::npos) expr.op = first;
    parts.push_back(std::move(expr));
    i = close + 1;
  }
  return parts;
}

// Whether `c` may stand in an expression's value of operator `op`.
bool ExpressionChar(char op, char c) {
  if (op == '?' || op == '&') return true;
  if (c == '?' || c == '#') return false;
  if (op == '+' || op == '#' || op == '/' || op == '.' || op == ';') return true;
  return c != '/' && c != ',';
}

bool MatchFrom(const std::vector<TemplatePart>& parts, size_t part, const std::string& uri,
               size_t pos) {
  if (part == parts.size()) return pos == uri.size();
  const TemplatePart& p = parts[part];
  if (!p.expression) {
    if (uri.compare(pos, p.literal.size(), p.literal) != 0) return false;
    return MatchFrom(parts, part + 1, uri, pos + p.literal.size());
  }
  // A query expression may be absent; any other stands for one character or more.
  const bool optional = p.op == '?' || p.op == '&';
  if (optional && MatchFrom(parts, part + 1, uri, pos)) return true;
  for (size_t end = pos + 1; end <= uri.size() && ExpressionChar(p.op, uri[end - 1]); ++end)
    if (MatchFrom(parts, part + 1, uri, end)) return true;
  return false;
}

bool ListedUri(const Json::Value& resources, const std::string& uri) {
  for (Json::ArrayIndex i = 0; resources.isArray() && i < resources.size(); ++i)
    if (StringOr(ElementOrNull(resources, i), "uri") == uri) return true;
  return false;
}

// "- <uri> (<name>, <mime>): <description>" for a resource or a template (`key` its URI's).
std::string ListLine(const Json::Value& item, const char* key) {
  std::string line = "- " + StringOr(item, key);
  std::string about = StringOr(item, "title", StringOr(item, "name"));
  const std::string mime = StringOr(item, "mimeType");
  if (!mime.empty()) about += about.empty() ? mime : ", " + mime;
  if (!about.empty()) line += " (" + about + ")";
  const std::string description = StringOr(item, "description");
  if (!description.empty()) line += ": " + tools::Shorten(description, 200);
  return line + "\n";
}

std::string ListText(const std::string& server, const ServerResources& listed) {
  std::string text = "MCP server '" + server + "':\n";
  if (listed.resources.empty()) text += "No resources.\n";
  for (const auto& r : listed.resources) text += ListLine(r, "uri");
  if (!listed.templates.empty()) {
    text += "Resource templates (read a URI that fits one):\n";
    for (const auto& t : listed.templates) text += ListLine(t, "uriTemplate");
  }
  return text;
}

std::string ServerNames(const std::vector<std::shared_ptr<Client>>& clients) {
  std::string names;
  for (const auto& c : clients) names += (names.empty() ? "" : ", ") + c->name();
  return names.empty() ? "none" : names;
}

// A ReadResourceResult as a CallToolResult of embedded resources, for OutputFromResult.
Json::Value AsToolResult(const Json::Value& read) {
  Json::Value result(Json::objectValue);
  Json::Value& content = result["content"] = Json::Value(Json::arrayValue);
  const Json::Value& contents = MemberOrNull(read, "contents");
  for (Json::ArrayIndex i = 0; contents.isArray() && i < contents.size(); ++i) {
    Json::Value block(Json::objectValue);
    block["type"] = "resource";
    block["resource"] = ElementOrNull(contents, i);
    content.append(std::move(block));
  }
  return result;
}

}  // namespace

ContentBlock ResourceContentsBlock(const Json::Value& contents) {
  const std::string uri = StringOr(contents, "uri");
  const std::string mime = StringOr(contents, "mimeType");
  if (auto text = AsString(MemberOrNull(contents, "text")))
    return ContentBlock::Text("Contents of " + uri + ":\n" + *text);
  auto blob = AsString(MemberOrNull(contents, "blob"));
  if (blob && mime.rfind("image/", 0) == 0) return ContentBlock::Image(mime, std::move(*blob));
  return ContentBlock::Text("[binary resource " + uri + (mime.empty() ? "" : " (" + mime + ")") +
                            " not shown]");
}

ContentBlock McpContentBlock(const Json::Value& block) {
  const std::string type = StringOr(block, "type");
  if (type == "text") return ContentBlock::Text(StringOr(block, "text"));
  if (type == "image")
    return ContentBlock::Image(StringOr(block, "mimeType"), StringOr(block, "data"));
  if (type == "resource_link") {
    const std::string uri = StringOr(block, "uri");
    return ContentBlock::Text("[" + StringOr(block, "name", uri) + "](" + uri + ")");
  }
  if (type == "resource") return ResourceContentsBlock(MemberOrNull(block, "resource"));
  return ContentBlock::Text("[a " + (type.empty() ? std::string("malformed") : type) +
                            " block not shown]");
}

bool TemplateMatches(const std::string& uri_template, const std::string& uri) {
  bool ok = false;
  const std::vector<TemplatePart> parts = SplitTemplate(uri_template, &ok);
  if (!ok || parts.empty()) return false;
  size_t expressions = 0;
  for (const auto& p : parts) expressions += p.expression ? 1 : 0;
  if (expressions > kMaxTemplateExpressions) return false;
  return MatchFrom(parts, 0, uri, 0);
}

bool ServerResources::Has(const std::string& uri) const {
  if (ListedUri(resources, uri)) return true;
  for (Json::ArrayIndex i = 0; templates.isArray() && i < templates.size(); ++i)
    if (TemplateMatches(StringOr(ElementOrNull(templates, i), "uriTemplate"), uri)) return true;
  return false;
}

ServerResources ListServerResources(const std::shared_ptr<Client>& client,
                                    const CancelToken& cancel) {
  ServerResources out;
  out.client = client;
  out.resources = Json::Value(Json::arrayValue);
  out.templates = Json::Value(Json::arrayValue);
  auto resources = client->ListResources(cancel);
  if (resources.ok()) {
    out.resources = std::move(*resources);
  } else {
    log::Warn(resources.error().message);
  }
  auto templates = client->ListResourceTemplates(cancel);
  if (templates.ok()) {
    out.templates = std::move(*templates);
  } else {
    log::Warn(templates.error().message);
  }
  return out;
}

namespace {
// The blocks that stand for the resource `uri` of `server`: the link, then its contents.
std::vector<ContentBlock> ResolvedLink(ContentBlock link, const std::string& uri,
                                       const ServerResources& server, const CancelToken& cancel) {
  std::vector<ContentBlock> out;
  auto read = server.client->ReadResource(uri, cancel);
  if (!read.ok()) {
    link.text += " [not read from the MCP server '" + server.client->name() +
                 "': " + read.error().message + "]";
    out.push_back(std::move(link));
    return out;
  }
  out.push_back(std::move(link));
  const Json::Value& contents = MemberOrNull(*read, "contents");
  for (Json::ArrayIndex i = 0; contents.isArray() && i < contents.size(); ++i)
    out.push_back(ResourceContentsBlock(ElementOrNull(contents, i)));
  return out;
}
}  // namespace

std::string LinkedUri(const ContentBlock& block) {
  const std::string& t = block.text;
  if (block.type != BlockType::kText || t.size() < 5 || t.front() != '[' || t.back() != ')')
    return "";
  const size_t mid = t.find("](");
  if (mid == std::string::npos || t.find(']') != mid) return "";
  std::string uri = t.substr(mid + 2, t.size() - mid - 3);
  if (uri.empty() || uri.find_first_of(" \t\r\n()") != std::string::npos) return "";
  return uri;
}

void ResolveResourceLinks(std::vector<ContentBlock>& content,
                          const std::vector<std::shared_ptr<Client>>& servers,
                          const CancelToken& cancel) {
  const bool any = std::any_of(content.begin(), content.end(),
                               [](const ContentBlock& b) { return !LinkedUri(b).empty(); });
  if (!any || servers.empty()) return;
  std::vector<ServerResources> listed;
  listed.reserve(servers.size());
  for (const auto& c : servers) listed.push_back(ListServerResources(c, cancel));
  std::vector<ContentBlock> out;
  for (ContentBlock& b : content) {
    const std::string uri = LinkedUri(b);
    const ServerResources* owner = nullptr;
    for (const auto& l : listed)
      if (!uri.empty() && l.Has(uri)) {
        owner = &l;
        break;
      }
    if (owner == nullptr) {
      out.push_back(std::move(b));
      continue;
    }
    for (ContentBlock& r : ResolvedLink(std::move(b), uri, *owner, cancel))
      out.push_back(std::move(r));
  }
  content = std::move(out);
}

std::vector<ResourceRef> StoredResources(const std::string& tool, const Json::Value& details) {
  if (tool != kResourceToolName && tool.rfind("mcp__", 0) != 0) return {};
  if (!MemberOrNull(details, "content").isArray()) return {};
  return OutputFromResult(details).resources;
}

std::string ResourceTool::description() const {
  return "List and read the resources (files, documents, records) of the connected MCP "
         "servers. action \"list\" shows each server's resources and resource templates; "
         "action \"read\" with a uri returns that resource's contents (a URI that fits a "
         "template can be read too). Give server to ask one server only.";
}

Json::Value ResourceTool::parameters() const {
  Json::Value s(Json::objectValue);
  s["type"] = "object";
  Json::Value& p = s["properties"];
  p["action"]["type"] = "string";
  p["action"]["enum"].append("list");
  p["action"]["enum"].append("read");
  p["action"]["description"] = "list the resources, or read one";
  p["uri"]["type"] = "string";
  p["uri"]["description"] = "read: the resource's URI";
  p["server"]["type"] = "string";
  p["server"]["description"] = "the MCP server's name (optional)";
  s["required"].append("action");
  s["additionalProperties"] = false;
  return s;
}

std::string ResourceTool::Title(const Json::Value& args, const ToolContext&) const {
  const std::string server = StringOr(args, "server");
  if (StringOr(args, "action") == "read")
    return "Read resource " + tools::Shorten(StringOr(args, "uri"), 120);
  return server.empty() ? "List MCP resources" : "List the resources of " + server;
}

std::string ResourceTool::PermissionSubject(const Json::Value& args) const {
  return StringOr(args, "uri");
}

ToolOutput ResourceTool::Run(const Json::Value& args, ToolContext& ctx) {
  const std::string action = StringOr(args, "action");
  const std::string server = StringOr(args, "server");
  if (action == "list") return List(server, ctx.cancel);
  if (action != "read") return ToolOutput::Error("action must be \"list\" or \"read\"");
  const std::string uri = StringOr(args, "uri");
  if (uri.empty()) return ToolOutput::Error("read needs the resource's uri");
  auto read = Read(server, uri, ctx.cancel);
  if (!read.ok()) return ToolOutput::Error(read.error().message);
  return OutputFromResult(AsToolResult(*read), ctx.saved_outputs);
}

ToolOutput ResourceTool::List(const std::string& server, const CancelToken& cancel) const {
  const std::vector<std::shared_ptr<Client>> clients = servers_();
  std::string text;
  bool any = false;
  for (const auto& c : clients) {
    if (!server.empty() && c->name() != server) continue;
    any = true;
    text += ListText(c->name(), ListServerResources(c, cancel));
  }
  if (!any)
    return ToolOutput::Error("No MCP server " + (server.empty() ? "" : "'" + server + "' ") +
                             "offers resources (servers with resources: " + ServerNames(clients) +
                             ")");
  bool cut = false;
  const std::string shown = tools::CutForModel(
      text, tools::OutputCap{tools::kMaxToolOutputBytes, kMaxListLines}, "", &cut);
  return ToolOutput::Text(shown);
}

Result<Json::Value> ResourceTool::Read(const std::string& server, const std::string& uri,
                                       const CancelToken& cancel) const {
  const std::vector<std::shared_ptr<Client>> clients = servers_();
  std::vector<std::shared_ptr<Client>> asked;
  for (const auto& c : clients)
    if (server.empty() || c->name() == server) asked.push_back(c);
  if (asked.empty())
    return MakeError(ErrorCode::kInvalidParams,
                     "No MCP server " + (server.empty() ? "" : "'" + server + "' ") +
                         "offers resources (servers with resources: " + ServerNames(clients) + ")");
  // The server that lists it first; then, with no server named, any that can read it.
  if (asked.size() > 1) {
    std::stable_partition(asked.begin(), asked.end(), [&](const std::shared_ptr<Client>& c) {
      return ListServerResources(c, cancel).Has(uri);
    });
  }
  std::string errors;
  for (const auto& c : asked) {
    auto read = c->ReadResource(uri, cancel);
    if (read.ok() || read.error().code == ErrorCode::kCancelled) return read;
    errors += (errors.empty() ? "" : "\n") + read.error().message;
  }
  return MakeError(ErrorCode::kMcpServer, "Cannot read " + uri + ":\n" + errors);
}

}  // namespace lousho::agent::mcp
