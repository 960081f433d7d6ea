// Host tools: a Tool whose Run is a call to the host.
#include "agent/host_tool.h"

namespace lousho::agent {
namespace {

std::string TextOf(const std::vector<ContentBlock>& content) {
  std::string out;
  for (const auto& b : content)
    if (b.type == BlockType::kText) out += b.text;
  return out;
}

class HostTool : public Tool {
 public:
  explicit HostTool(HostToolSpec spec) : spec_(std::move(spec)) {}
  std::string name() const override { return spec_.name; }
  std::string description() const override { return spec_.description; }
  Json::Value parameters() const override { return spec_.parameters; }
  ToolKind kind() const override { return ToolKind::kOther; }
  // Not a question for our permission policy: the host decides what its own tool may do.
  bool read_only() const override { return true; }
  std::string Title(const Json::Value& /*args*/, const ToolContext& /*ctx*/) const override {
    return spec_.name;
  }
  std::string PermissionSubject(const Json::Value& /*args*/) const override { return ""; }

  ToolOutput Run(const Json::Value& args, ToolContext& ctx) override {
    if (!ctx.services.host_tools)
      return ToolOutput::Error(spec_.name + ": the host that provided this tool is gone");
    auto on_update = [&ctx](const HostToolResult& partial) {
      if (ctx.on_output) ctx.on_output(TextOf(partial.content), "");
    };
    auto r = ctx.services.host_tools->Call(ctx.session_id, ctx.tool_call_id, spec_.name, args,
                                           ctx.cancel, on_update);
    if (!r.ok()) return ToolOutput::Error(spec_.name + ": " + r.error().message);
    ToolOutput out;
    out.content = std::move(r->content);
    if (out.content.empty()) out.content.push_back(ContentBlock::Text(""));
    out.is_error = r->is_error;
    out.details = std::move(r->details);
    return out;
  }

 private:
  HostToolSpec spec_;
};

}  // namespace

std::shared_ptr<Tool> MakeHostTool(HostToolSpec spec) {
  return std::make_shared<HostTool>(std::move(spec));
}

}  // namespace lousho::agent
