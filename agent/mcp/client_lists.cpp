// The MCP client's lists: tools (with their time to live), prompts and resources, in pages, and
// single requests on the live connection.
#include <algorithm>
#include <chrono>

#include "agent/mcp/client.h"
#include "support/json_util.h"
#include "support/log.h"

namespace lousho::agent::mcp {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kMaxListPages = 1000;  // pages of one list before giving up

// Moves a member out of an object (null when `obj` is no object or has no such member): a tool
// list may be megabytes, and copying it costs more than reading it.
Json::Value TakeMember(Json::Value& obj, const char* key) {
  Json::Value out;
  if (obj.isObject()) obj.removeMember(key, &out);
  return out;
}

// One entry of tools/list as a ToolInfo (its schemas moved out of `t`); nullopt without a name.
std::optional<ToolInfo> ToolFrom(Json::Value& t) {
  ToolInfo info;
  info.name = StringOr(t, "name");
  if (info.name.empty()) return std::nullopt;  // nothing to call it by
  info.title = StringOr(t, "title");
  info.description = StringOr(t, "description");
  info.input_schema = TakeMember(t, "inputSchema");
  if (!info.input_schema.isObject()) {
    info.input_schema = Json::Value(Json::objectValue);
    info.input_schema["type"] = "object";
  }
  info.output_schema = TakeMember(t, "outputSchema");
  info.annotations = TakeMember(t, "annotations");
  info.read_only = BoolOr(info.annotations, "readOnlyHint", false);
  if (info.title.empty()) info.title = StringOr(info.annotations, "title");
  return info;
}

}  // namespace

Result<std::vector<ToolInfo>> Client::ListTools(const CancelToken& cancel) {
  auto conn = Live(cancel);
  if (!conn.ok()) return conn.error();
  tools_changed_ = false;
  std::vector<ToolInfo> tools;
  std::string cursor;
  for (int page = 0; page < kMaxListPages; ++page) {
    Json::Value params(Json::objectValue);
    if (!cursor.empty()) params["cursor"] = cursor;
    auto res =
        Request(*conn, "tools/list", params, cancel, std::min(options_.call_timeout_ms, 30000L));
    if (!res.ok()) return res.error();
    Json::Value list = TakeMember(*res, "tools");
    if (list.isArray()) {
      tools.reserve(tools.size() + list.size());
      for (Json::Value& t : list)
        if (auto info = ToolFrom(t)) tools.push_back(std::move(*info));
    }
    cursor = StringOr(*res, "nextCursor");
    if (cursor.empty()) {
      // Fresh for ttlMs; without one (or 0) the list stands until the server says otherwise.
      auto ttl = AsDouble(MemberOrNull(*res, "ttlMs"));
      long long expire = 0;
      if (ttl && *ttl > 0)
        expire =
            std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now().time_since_epoch())
                .count() +
            static_cast<long long>(std::min(*ttl, 1e12));
      tools_expire_ms_ = expire;
      return tools;
    }
  }
  log::Warn("MCP server '" + spec_.name + "': stopped listing tools after " +
            std::to_string(kMaxListPages) + " pages");
  return tools;
}

Result<Json::Value> Client::Ask(const std::string& method, const Json::Value& params,
                                const CancelToken& cancel, long timeout_ms) {
  auto conn = Live(cancel);
  if (!conn.ok()) return conn.error();
  return Request(*conn, method, params, cancel, timeout_ms);
}

Result<Json::Value> Client::ListPages(const std::string& method, const char* key,
                                      const CancelToken& cancel) {
  Json::Value items(Json::arrayValue);
  std::string cursor;
  for (int page = 0; page < kMaxListPages; ++page) {
    Json::Value params(Json::objectValue);
    if (!cursor.empty()) params["cursor"] = cursor;
    auto res = Ask(method, params, cancel, std::min(options_.call_timeout_ms, 30000L));
    if (!res.ok()) return res.error();
    const Json::Value& list = MemberOrNull(*res, key);
    for (Json::ArrayIndex i = 0; list.isArray() && i < list.size(); ++i)
      if (ElementOrNull(list, i).isObject()) items.append(ElementOrNull(list, i));
    cursor = StringOr(*res, "nextCursor");
    if (cursor.empty()) return items;
  }
  log::Warn("MCP server '" + spec_.name + "': stopped " + method + " after " +
            std::to_string(kMaxListPages) + " pages");
  return items;
}

Result<Json::Value> Client::ListPrompts(const CancelToken& cancel) {
  return ListPages("prompts/list", "prompts", cancel);
}

Result<Json::Value> Client::GetPrompt(const std::string& prompt, const Json::Value& arguments,
                                      const CancelToken& cancel) {
  Json::Value params(Json::objectValue);
  params["name"] = prompt;
  if (arguments.isObject() && !arguments.empty()) params["arguments"] = arguments;
  return Ask("prompts/get", params, cancel, options_.call_timeout_ms);
}

bool Client::ResourcesKept() const {
  if (!BoolOr(MemberOrNull(capabilities(), "resources"), "listChanged", false)) return false;
  // A stateless server says it only on an open subscription.
  return !IsStateless(protocol_version()) || listening_.load();
}

Result<Json::Value> Client::KeptPages(const std::string& method, const char* key, KeptList* kept,
                                      const CancelToken& cancel) {
  const long long generation = resources_generation_.load();
  {
    std::lock_guard<std::mutex> lock(kept_mu_);
    if (kept->generation == generation && ResourcesKept()) return kept->items;
  }
  auto listed = ListPages(method, key, cancel);
  if (!listed.ok()) return listed;
  std::lock_guard<std::mutex> lock(kept_mu_);
  // A change announced while it was listed leaves it stale: not kept.
  kept->items = *listed;
  kept->generation = generation;
  return listed;
}

Result<Json::Value> Client::ListResources(const CancelToken& cancel) {
  return KeptPages("resources/list", "resources", &kept_resources_, cancel);
}

Result<Json::Value> Client::ListResourceTemplates(const CancelToken& cancel) {
  return KeptPages("resources/templates/list", "resourceTemplates", &kept_templates_, cancel);
}

Result<Json::Value> Client::ReadResource(const std::string& uri, const CancelToken& cancel) {
  Json::Value params(Json::objectValue);
  params["uri"] = uri;
  return Ask("resources/read", params, cancel, options_.call_timeout_ms);
}

Json::Value Client::capabilities() const {
  std::lock_guard<std::mutex> lock(mu_);
  return capabilities_;
}

}  // namespace lousho::agent::mcp
