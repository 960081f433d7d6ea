// An MCP server's tool as a session tool: the model-facing name, schema and presentation, and
// the call's result mapped to engine content.
#pragma once

#include <json/json.h>

#include <memory>
#include <string>

#include "agent/mcp/client.h"
#include "core/tool.h"

namespace lousho::agent::mcp {

// The input schema as every provider takes it: an object schema with `properties`, without a
// top-level `$schema` (which some reject). Everything else is passed through.
Json::Value AdaptSchema(const Json::Value& schema);

// The tool kind an editor shows: read-only tools as search, fetch or read by their name;
// anything else as other.
ToolKind KindOf(const ToolInfo& info);

// A CallToolResult as tool output: text and images as they are, embedded resources as text (or
// an image), links as text and as ResourceRefs for the editor, structuredContent as indented
// JSON (in place of the text block that carries it, else added) and checked against
// `output_schema` when it is an object (a mismatch is noted in the output, not fatal), isError
// as a failed call, and text past kMaxToolOutputBytes cut with a note (which names the file in
// `saved` that keeps the whole text, when given). `details` holds the raw result.
ToolOutput OutputFromResult(const Json::Value& result, tools::SavedOutputs* saved = nullptr,
                            const Json::Value& output_schema = Json::Value());

// Thread-safe: calls go to the shared Client.
class McpTool : public Tool {
 public:
  McpTool(std::shared_ptr<Client> client, ToolInfo info, std::string model_name);
  // The same tool under another name (a collision found when the tools of all servers met).
  McpTool(const McpTool& other, std::string model_name);

  std::string name() const override { return model_name_; }
  std::string description() const override;
  Json::Value parameters() const override { return schema_; }
  ToolKind kind() const override { return kind_; }
  bool read_only() const override { return info_.read_only; }
  std::string Title(const Json::Value& args, const ToolContext& ctx) const override;
  std::string PermissionSubject(const Json::Value& args) const override;
  ToolOutput Run(const Json::Value& args, ToolContext& ctx) override;
  bool asks_by_default() const override { return true; }
  bool offered_in_plan_mode() const override { return info_.read_only; }

  const ToolInfo& info() const { return info_; }
  const std::string& server() const { return client_->name(); }

 private:
  std::shared_ptr<Client> client_;
  ToolInfo info_;
  std::string model_name_;
  Json::Value schema_;
  ToolKind kind_;
};

}  // namespace lousho::agent::mcp
