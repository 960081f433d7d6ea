// `lousho mcp login <server>`: the OAuth login of an HTTP MCP server from a terminal (the
// browser's redirect to 127.0.0.1, a pasted redirect address over SSH, or a device code), and
// `lousho mcp logout <server>`, which forgets its tokens.
#include <poll.h>
#include <unistd.h>

#include <cstdio>
#include <memory>

#include "agent/mcp/client.h"
#include "agent/mcp/oauth_flow.h"
#include "cli/command.h"
#include "support/env.h"

namespace lousho::cli {
namespace {

struct McpLoginOptions {
  std::string server;      // a URL, or a server's name in the spec
  std::string spec = ".";  // where a name is looked up
  bool device = false;     // prefer the device flow
  long timeout_s = 300;
};

// The server `o.server` names: its URL, and the Client ID Metadata Document the spec gives
// lousho (`mcp.clientMetadataUrl`, also for a server given by its URL when the spec loads).
struct LoginTarget {
  std::string url;
  std::string client_metadata_url;
  config::McpOAuthClient oauth;  // the server's pre-registered client, if any
  std::string name;
};
Result<LoginTarget> Target(const McpLoginOptions& o) {
  auto spec = LoadSpec(o.spec, "");
  if (o.server.rfind("http://", 0) == 0 || o.server.rfind("https://", 0) == 0) {
    LoginTarget t{o.server, spec.ok() ? spec->mcp.client_metadata_url : std::string(), {}, ""};
    // A spec server at this URL lends its pre-registered client.
    for (const auto& s : spec.ok() ? spec->mcp_servers : std::vector<config::McpServerSpec>{})
      if (s.url == o.server && !s.oauth.client_id.empty()) t.oauth = s.oauth;
    return t;
  }
  if (!spec.ok()) return spec.error();
  for (const auto& s : spec->mcp_servers) {
    if (s.name != o.server) continue;
    if (s.transport == config::McpTransport::kStdio)
      return MakeError(ErrorCode::kUsage,
                       "'" + o.server + "' runs as a command: it needs no login");
    return LoginTarget{s.url, spec->mcp.client_metadata_url, s.oauth, s.name};
  }
  return MakeError(ErrorCode::kUsage, "no MCP server named '" + o.server + "' in " + o.spec);
}

// A line typed on stdin, read while `done` and `stop` have not fired; "" when none came.
std::string PastedLine(const CancelToken& done, const CancelToken& stop) {
  std::string line;
  while (!done.cancelled() && !stop.cancelled()) {
    pollfd p{0, POLLIN, 0};
    if (poll(&p, 1, 200) <= 0) continue;
    char c = 0;
    if (read(0, &c, 1) != 1) {
      // End of input: only the redirect can end the login now.
      LinkedCancelSource either(done, stop);
      while (!either.token().WaitFor(60000)) {
      }
      return {};
    }
    if (c != '\n') {
      line += c;
      continue;
    }
    if (line.find("code=") != std::string::npos || line.find("error=") != std::string::npos)
      return line;
    std::fprintf(stderr, "That is not the address the login ended on (it holds code=...).\n");
    line.clear();
  }
  return {};
}

// Over SSH without a display, the browser is on another machine: its redirect to 127.0.0.1
// cannot reach this one.
bool Remote() {
  return ProcessEnv("SSH_CONNECTION").has_value() && !ProcessEnv("DISPLAY").has_value();
}

agent::mcp::LoginUi TerminalUi() {
  agent::mcp::LoginUi ui;
  ui.show = [](const std::string& url, const CancelToken& done,
               const CancelToken& stop) -> Result<std::string> {
    std::fprintf(stderr, "Open this address in a browser to log in:\n\n  %s\n\n", url.c_str());
    std::fprintf(stderr, "Waiting for the browser to come back%s.\n",
                 Remote() ? "; if it cannot reach this machine, paste here the address it ended "
                            "on (http://127.0.0.1:...)"
                          : " (or paste the address it ended on)");
    return PastedLine(done, stop);
  };
  ui.device = [](const std::string& url, const std::string& code) {
    std::fprintf(stderr, "Open %s in a browser and enter the code %s\n", url.c_str(), code.c_str());
  };
  return ui;
}

// Asks the server once without a token, so its challenge (resource metadata, scope) is known.
void Probe(const std::string& url, const std::shared_ptr<agent::mcp::ServerAuth>& auth,
           long timeout_ms) {
  config::McpServerSpec spec;
  spec.name = "server";
  spec.url = url;
  spec.transport = config::McpTransport::kHttp;
  agent::mcp::ClientOptions co;
  co.client_version = LOUSHO_VERSION;
  co.connect_timeout_ms = timeout_ms;
  co.max_restarts = 0;
  co.auth = auth;
  agent::mcp::Client client(spec, co);
  (void)client.Connect(CancelToken());
  client.Close();
}

int Login(const McpLoginOptions& o) {
  auto target = Target(o);
  if (!target.ok()) return Fail(target.error());
  const std::string* url = &target->url;
  agent::mcp::OAuthOptions ao;
  ao.server_url = *url;
  ao.client_metadata_url = target->client_metadata_url;
  ao.pre_registered = target->oauth;
  ao.server_name = target->name;
  ao.store_dir = agent::mcp::TokenStoreDir(ProcessEnv);
  ao.login_timeout_ms = o.timeout_s * 1000;
  // No token is sent while probing: the login is made anew whatever is stored (and replaces
  // it only once it succeeds).
  ao.use_stored = false;
  auto probe = std::make_shared<agent::mcp::ServerAuth>(ao);
  Probe(*url, probe, 10000);
  const agent::mcp::LoginUi ui = TerminalUi();
  Status st = MakeError(ErrorCode::kMcpServer, "no device code");
  if (o.device || Remote()) {
    st = probe->DeviceLogin(ui, CancelToken());
    if (!st.ok())
      std::fprintf(stderr, "%s; logging in through the browser\n", st.error().message.c_str());
  }
  if (!st.ok()) {
    auto begun = probe->BeginLogin(CancelToken());
    if (!begun.ok()) return Fail(begun.error());
    st = probe->FinishLogin(std::move(*begun), ui, CancelToken());
  }
  if (!st.ok()) return Fail(st.error());
  std::printf("Logged in to %s; the token is kept in %s\n", url->c_str(),
              agent::mcp::TokenStore(ao.store_dir).PathFor(*url).c_str());
  return 0;
}

int Logout(const McpLoginOptions& o) {
  auto target = Target(o);
  if (!target.ok()) return Fail(target.error());
  const std::string* url = &target->url;
  auto forgot = agent::mcp::TokenStore(agent::mcp::TokenStoreDir(ProcessEnv)).Forget(*url);
  if (!forgot.ok()) return Fail(forgot.error());
  std::printf(*forgot ? "Logged out of %s\n" : "No login was kept for %s\n", url->c_str());
  return 0;
}

}  // namespace

void AddMcpLoginCommands(CLI::App* mcp, std::function<int()>* run) {
  auto o = std::make_shared<McpLoginOptions>();
  CLI::App* login =
      mcp->add_subcommand("login", "log in to an HTTP MCP server (OAuth) and keep its token");
  login->add_option("server", o->server, "the server's name in the spec, or its URL")->required();
  login->add_option("--spec", o->spec, "agent spec or folder naming the server (default: .)");
  login->add_flag("--device", o->device, "use a device code where the server offers one");
  login->add_option("--timeout", o->timeout_s, "seconds to wait for the login (default 300)");
  CLI::App* logout = mcp->add_subcommand("logout", "forget the token kept for an HTTP MCP server");
  logout->add_option("server", o->server, "the server's name in the spec, or its URL")->required();
  logout->add_option("--spec", o->spec, "agent spec or folder naming the server (default: .)");
  *run = [o, login] { return login->parsed() ? Login(*o) : Logout(*o); };
}

}  // namespace lousho::cli
