// Asking the user to log in to an MCP server, from an editor or without one.
#include "agent/mcp/mcp_login.h"

#include <atomic>

#include "agent/mcp/oauth_flow.h"

namespace lousho::agent::mcp {

std::string LoginMessage(const std::string& server, const std::string& url) {
  return "The MCP server '" + server + "' needs you to log in before its tools can be used: open " +
         url + " (or run `lousho mcp login " + server + "` in a terminal).";
}

LoginUi SessionLoginUi(const std::string& server, const LoginHooks& hooks) {
  LoginUi ui;
  ui.show = [server, hooks](const std::string& url, const CancelToken& done,
                            const CancelToken& stop) -> Result<std::string> {
    if (hooks.wait_announced) {
      LinkedCancelSource either(hooks.announced, stop);
      while (!either.token().WaitFor(60000)) {
      }
      if (stop.cancelled()) return MakeError(ErrorCode::kCancelled, "cancelled");
    }
    if (hooks.on_login) hooks.on_login(server, true, LoginMessage(server, url));
    if (hooks.elicitation != nullptr && hooks.elicitation->CanOpenUrl()) {
      static std::atomic<long long> ids{0};
      UrlRequest r;
      r.elicitation_id = "mcp-login-" + server + "-" + std::to_string(++ids);
      r.url = url;
      r.message = "Log in to the MCP server '" + server + "' so that its tools can be used.";
      auto action = hooks.elicitation->OpenUrl(hooks.session_id, r, done, stop);
      if (!action.ok()) return action.error();
      if (*action != ElicitationAction::kAccept)
        return MakeError(ErrorCode::kCancelled, "the login to '" + server + "' was declined");
      return std::string();
    }
    // No editor step: the user was told where to go; the redirect ends the wait.
    LinkedCancelSource either(done, stop);
    while (!either.token().WaitFor(60000)) {
    }
    if (!done.cancelled()) return MakeError(ErrorCode::kCancelled, "cancelled");
    return std::string();
  };
  return ui;
}

LoginWaitTool::LoginWaitTool(std::string name, std::string server, std::string url)
    : name_(std::move(name)), server_(std::move(server)), url_(std::move(url)) {}

std::string LoginWaitTool::description() const {
  return "The MCP server '" + server_ +
         "' is waiting for the user to log in; its tools appear once they have. Call this to "
         "get the address where the user logs in, to tell them.";
}

Json::Value LoginWaitTool::parameters() const {
  Json::Value schema(Json::objectValue);
  schema["type"] = "object";
  schema["properties"] = Json::Value(Json::objectValue);
  return schema;
}

std::string LoginWaitTool::Title(const Json::Value& /*args*/, const ToolContext& /*ctx*/) const {
  return "Login to " + server_;
}

ToolOutput LoginWaitTool::Run(const Json::Value& /*args*/, ToolContext& /*ctx*/) {
  return ToolOutput::Text(LoginMessage(server_, url_) +
                          " Its tools are offered once the login is done.");
}

}  // namespace lousho::agent::mcp
