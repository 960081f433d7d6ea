// MCP resources: their contents as content for the model, the one tool (`mcp_resource`) with
// which the model lists and reads the resources of a session's servers, and the test of whether
// a URI (an editor's resource link) is one of a server's resources.
#pragma once

#include <json/json.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "agent/mcp/client.h"
#include "core/tool.h"

namespace lousho::agent::mcp {

inline constexpr char kResourceToolName[] = "mcp_resource";

// One entry of a ReadResourceResult's `contents` (or an embedded resource) for the model: text
// under a "Contents of <uri>" line, an image blob as an image, other binary data as a note.
ContentBlock ResourceContentsBlock(const Json::Value& contents);

// One MCP content block (a prompt message's) for the model: text and images as they are, a
// resource_link as a Markdown link, an embedded resource as ResourceContentsBlock, others as a
// note.
ContentBlock McpContentBlock(const Json::Value& block);

// Whether `uri` fits the RFC 6570 template `uri_template`: its literal parts in order, each
// expression standing for at least one character ({var} no '/', '?', '#' or ','; {+var}, {#var}
// and {/var...} any but '?' and '#'; a trailing query expression anything).
bool TemplateMatches(const std::string& uri_template, const std::string& uri);

// What one server offers: its resources and resource templates (the raw list items).
struct ServerResources {
  std::shared_ptr<Client> client;
  Json::Value resources;  // array
  Json::Value templates;  // array
  // `uri` is one of the resources, or fits one of the templates.
  bool Has(const std::string& uri) const;
};

// Lists a server's resources and templates (a server that fails one list has none of it; the
// reason is logged).
ServerResources ListServerResources(const std::shared_ptr<Client>& client,
                                    const CancelToken& cancel);

// The URI of a text block that is exactly a Markdown link "[name](uri)" (as an editor's ACP
// resource_link reaches the engine), else empty.
std::string LinkedUri(const ContentBlock& block);

// Each block of a prompt that links (LinkedUri) to a resource of one of `servers` (listed, or
// fitting a template) followed by the resource's contents (ResourceContentsBlock each); the
// link stays, so the model knows where they came from. A read that fails is noted in the link's
// block. Links to no server's resources are left as they are. Servers are listed only when the
// prompt has a link.
void ResolveResourceLinks(std::vector<ContentBlock>& content,
                          const std::vector<std::shared_ptr<Client>>& servers,
                          const CancelToken& cancel);

// The resources a stored call of an MCP tool (`mcp__...`) or of mcp_resource showed the editor,
// from its `details` (the raw result), for a loaded session's replay; none for other tools.
std::vector<ResourceRef> StoredResources(const std::string& tool, const Json::Value& details);

// The servers that announced resources, connected now.
using ResourceServers = std::function<std::vector<std::shared_ptr<Client>>()>;

// `mcp_resource`: {"action": "list"} lists the resources and templates of every server (or
// `server`'s); {"action": "read", "uri": ...} reads one, from `server` or the server that lists
// it (else the first that can read it). Thread-safe.
class ResourceTool : public Tool {
 public:
  explicit ResourceTool(ResourceServers servers) : servers_(std::move(servers)) {}
  std::string name() const override { return kResourceToolName; }
  std::string description() const override;
  Json::Value parameters() const override;
  ToolKind kind() const override { return ToolKind::kRead; }
  bool read_only() const override { return true; }
  std::string Title(const Json::Value& args, const ToolContext& ctx) const override;
  std::string PermissionSubject(const Json::Value& args) const override;
  ToolOutput Run(const Json::Value& args, ToolContext& ctx) override;
  // What it reads comes from outside, as an MCP tool's result does.
  bool asks_by_default() const override { return true; }

 private:
  ToolOutput List(const std::string& server, const CancelToken& cancel) const;
  // The ReadResourceResult.
  Result<Json::Value> Read(const std::string& server, const std::string& uri,
                           const CancelToken& cancel) const;
  ResourceServers servers_;
};

}  // namespace lousho::agent::mcp
