// A session's logins to HTTP MCP servers that want OAuth: how the user is asked (the editor's
// URL step, else a message naming the URL and `lousho mcp login`), and the tool that tells the
// model a server is waiting for the user.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "core/client_services.h"
#include "core/tool.h"
#include "support/cancel.h"

namespace lousho::agent::mcp {

struct LoginUi;  // oauth_flow.h

// What a door gives a session's servers for their logins. Plain value.
struct LoginHooks {
  Elicitation* elicitation = nullptr;  // the editor's URL steps and forms; null: it has none
  // The RPC door's dialogs: the servers' questions are asked field by field where there are no
  // forms. May be null.
  Dialogs* dialogs = nullptr;
  std::string session_id;
  // When set, a login asks the user only once this fires (the door fires it when the client
  // knows the session); a default token never fires, so leave `wait_announced` false then.
  CancelToken announced;
  bool wait_announced = false;
  // Told when a server starts waiting for the user (`waiting`, `message` says where to log in)
  // and when the wait ends (`message` says how). On a login thread; keep it short. May be empty.
  std::function<void(const std::string& server, bool waiting, const std::string& message)> on_login;
};

// The line telling the user (and the model) where to log in to `server`.
std::string LoginMessage(const std::string& server, const std::string& url);

// The presenter of a session's login: the editor's URL step where it has one (a decline ends
// the login), else it only waits for the redirect (the user was told where to go).
LoginUi SessionLoginUi(const std::string& server, const LoginHooks& hooks);

// Stands in for the tools of a server waiting for a login: the model learns why the tools are
// missing and where the user logs in; its tools replace it once the login is done.
class LoginWaitTool : public Tool {
 public:
  LoginWaitTool(std::string name, std::string server, std::string url);
  std::string name() const override { return name_; }
  std::string description() const override;
  Json::Value parameters() const override;
  ToolKind kind() const override { return ToolKind::kOther; }
  bool read_only() const override { return true; }
  std::string Title(const Json::Value& args, const ToolContext& ctx) const override;
  std::string PermissionSubject(const Json::Value& /*args*/) const override { return server_; }
  ToolOutput Run(const Json::Value& args, ToolContext& ctx) override;

 private:
  std::string name_;
  std::string server_;
  std::string url_;
};

}  // namespace lousho::agent::mcp
