// The `switch_mode` tool: the agent changes the session's mode (e.g. leaves plan mode once the
// plan is agreed); the user is always asked first.
#include "agent/tools/builtin_tools.h"
#include "agent/tools/tool_util.h"

namespace lousho::agent::tools {
namespace {

class SwitchModeTool : public Tool {
 public:
  std::string name() const override { return "switch_mode"; }
  std::string description() const override {
    return "Switch the session's mode: default (ask before edits and commands), accept-edits "
           "(apply file edits without asking), plan (read-only). Use it to leave plan mode "
           "once the user agrees with the plan; the user confirms every switch.";
  }
  Json::Value parameters() const override {
    Json::Value mode = PropSchema("string", "The mode to switch to");
    for (const char* m : {"default", "accept-edits", "plan"}) mode["enum"].append(m);
    return ObjectSchema(
        {{"mode", mode}, {"reason", PropSchema("string", "Why (shown to the user)")}}, {"mode"});
  }
  ToolKind kind() const override { return ToolKind::kSwitchMode; }
  bool read_only() const override { return false; }
  std::string Title(const Json::Value& args, const ToolContext& /*ctx*/) const override {
    std::string mode = StringOr(args, "mode");
    return mode.empty() ? "Switch mode" : "Switch to " + mode + " mode";
  }
  std::string PermissionSubject(const Json::Value& args) const override {
    return StringOr(args, "mode");
  }
  ToolOutput Run(const Json::Value& args, ToolContext& ctx) override {
    Args a(args);
    auto mode = a.String("mode", true);
    if (!a.ok()) return ToolOutput::Error("switch_mode: " + a.error());
    // Bypass is the user's choice alone; the agent may not grant it to itself.
    if (*mode == "bypass" || *mode == "bypassPermissions")
      return ToolOutput::Error("switch_mode: only the user can switch to bypass mode");
    if (!ctx.set_mode) return ToolOutput::Error("switch_mode: this session cannot change modes");
    Status st = ctx.set_mode(*mode);
    if (!st.ok()) return ToolOutput::Error("switch_mode: " + st.error().message);
    ToolOutput out = ToolOutput::Text("The session is now in " + *mode + " mode.");
    out.details["mode"] = *mode;
    return out;
  }
};

}  // namespace

std::unique_ptr<Tool> MakeSwitchModeTool() { return std::make_unique<SwitchModeTool>(); }

}  // namespace lousho::agent::tools
