// `lousho mcp list|call`: connects to a spec's MCP servers (or one given as a command or URL)
// and shows what they offer, or makes one call: how people debug their MCP setup.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>

#include "agent/mcp/elicit.h"
#include "agent/mcp/oauth_flow.h"
#include "agent/mcp/servers.h"
#include "agent/mcp/tool_names.h"
#include "cli/command.h"
#include "support/env.h"
#include "support/http/http_client.h"
#include "support/json_util.h"
#include "support/shell_words.h"

namespace lousho::cli {
namespace {
namespace fs = std::filesystem;

struct McpOptions {
  std::string spec;
  std::string cwd;
  bool json = false;
  std::string transport;  // for a bare URL: http or sse
  std::string server;
  std::string tool;
  std::string arguments = "{}";
  std::string spec_version;         // conformance-client: the revision to speak
  std::string client_metadata_url;  // conformance-client: the CIMD it is known by
};

// The servers SPEC names: a spec's mcp_servers, or one server given as a URL or a command line.
Result<std::pair<std::vector<config::McpServerSpec>, config::McpSettings>> ServersOf(
    const McpOptions& o) {
  std::error_code ec;
  if (o.spec.rfind("http://", 0) == 0 || o.spec.rfind("https://", 0) == 0) {
    config::McpServerSpec s;
    s.name = "server";
    s.url = o.spec;
    bool sse = o.transport == "sse" || (o.transport.empty() && o.spec.size() >= 4 &&
                                        o.spec.compare(o.spec.size() - 4, 4, "/sse") == 0);
    s.transport = sse ? config::McpTransport::kSse : config::McpTransport::kHttp;
    return std::make_pair(std::vector<config::McpServerSpec>{s}, config::McpSettings{});
  }
  if (fs::exists(o.spec, ec)) {
    auto spec = LoadSpec(o.spec, "");
    if (!spec.ok()) return spec.error();
    return std::make_pair(spec->mcp_servers, spec->mcp);
  }
  ShellScript script = ParseShell(o.spec);
  if (script.commands.size() != 1 || script.opaque || script.substitution ||
      script.commands[0].words.empty())
    return MakeError(ErrorCode::kUsage,
                     "'" + o.spec + "' is neither a spec, a URL nor a simple command");
  config::McpServerSpec s;
  s.name = "server";
  const auto& words = script.commands[0].words;
  s.command = words[0];
  s.args.assign(words.begin() + 1, words.end());
  return std::make_pair(std::vector<config::McpServerSpec>{s}, config::McpSettings{});
}

agent::mcp::StartOptions Start(const McpOptions& o, const config::McpSettings& settings) {
  agent::mcp::StartOptions so;
  std::error_code ec;
  so.cwd = o.cwd.empty() ? fs::current_path(ec) : fs::absolute(o.cwd, ec);
  so.roots = {so.cwd};
  so.client_version = LOUSHO_VERSION;
  so.settings = settings;
  return so;
}

Json::Value ToolJson(const agent::mcp::McpTool& t) {
  Json::Value j(Json::objectValue);
  j["name"] = t.info().name;
  j["modelName"] = t.name();
  if (!t.info().title.empty()) j["title"] = t.info().title;
  j["description"] = t.info().description;
  j["readOnly"] = t.info().read_only;
  j["inputSchema"] = t.info().input_schema;
  if (!t.info().annotations.isNull()) j["annotations"] = t.info().annotations;
  return j;
}

// One server's line of `mcp list`: connected (with what it runs) or why not.
void PrintServer(const agent::mcp::ServerStatus& st, const agent::mcp::Client* client) {
  if (!client) {
    std::printf("%s\n", agent::mcp::FailureMessage(st).c_str());
    return;
  }
  std::printf("%s: connected (MCP %s, %s %s), %zu tool(s)\n", st.name.c_str(),
              client->protocol_version().c_str(),
              StringOr(client->server_info(), "name", "?").c_str(),
              StringOr(client->server_info(), "version").c_str(), st.tools);
}

void PrintTool(const agent::mcp::McpTool& t) {
  std::string desc = t.info().description.substr(0, t.info().description.find('\n'));
  std::printf("  %s%s  (model sees: %s)\n    %s\n    input: %s\n", t.info().name.c_str(),
              t.info().read_only ? " [read-only]" : "", t.name().c_str(), desc.c_str(),
              WriteJson(t.info().input_schema).c_str());
}

// One server of `mcp list`: printed unless --json; its JSON entry either way.
Json::Value ListServer(const McpOptions& o, const agent::mcp::McpServers& started,
                       const agent::mcp::ServerStatus& st,
                       const std::vector<std::shared_ptr<agent::Tool>>& tools) {
  Json::Value s(Json::objectValue);
  s["name"] = st.name;
  s["connected"] = st.connected;
  auto client = started.Find(st.name);
  if (client) {
    s["protocolVersion"] = client->protocol_version();
    s["serverInfo"] = client->server_info();
  } else {
    s["error"] = st.error;
    if (!st.stderr_tail.empty()) s["stderr"] = st.stderr_tail;
  }
  s["tools"] = Json::Value(Json::arrayValue);
  if (!o.json) PrintServer(st, client.get());
  for (const auto& tool : tools) {
    auto* t = dynamic_cast<agent::mcp::McpTool*>(tool.get());
    if (!t || t->server() != st.name) continue;
    s["tools"].append(ToolJson(*t));
    if (!o.json) PrintTool(*t);
  }
  return s;
}

int List(const McpOptions& o) {
  auto servers = ServersOf(o);
  if (!servers.ok()) return Fail(servers.error());
  if (servers->first.empty()) {
    std::fprintf(stderr, "%s: no MCP servers (add mcp_servers to the spec)\n", o.spec.c_str());
    return 1;
  }
  auto started = agent::mcp::McpServers::Start(servers->first, Start(o, servers->second));
  auto tools = started->CurrentTools(CancelToken());
  bool all = true;
  Json::Value out(Json::objectValue);
  out["servers"] = Json::Value(Json::arrayValue);
  for (const auto& st : started->status()) {
    all = all && st.connected;
    out["servers"].append(ListServer(o, *started, st, tools));
  }
  if (o.json) std::printf("%s\n", WriteJsonPretty(out).c_str());
  started->Close();
  return all ? 0 : 1;
}

int Call(const McpOptions& o) {
  auto servers = ServersOf(o);
  if (!servers.ok()) return Fail(servers.error());
  auto args = ParseJson(o.arguments);
  if (!args.ok() || !args->isObject())
    return Fail(MakeError(ErrorCode::kUsage, "JSON: expected an object of arguments"));
  std::vector<config::McpServerSpec> chosen;
  for (const auto& s : servers->first)
    if (s.name == o.server) chosen.push_back(s);
  // A server given on the command line has no name of its own: any name selects it.
  if (chosen.empty() && servers->first.size() == 1 && !fs::exists(o.spec)) chosen = servers->first;
  if (chosen.empty())
    return Fail(MakeError(ErrorCode::kUsage, "no MCP server named '" + o.server + "'"));
  const std::string name = chosen[0].name;
  auto started = agent::mcp::McpServers::Start(chosen, Start(o, servers->second));
  auto client = started->Find(name);
  if (!client) {
    std::fprintf(stderr, "%s\n", agent::mcp::FailureMessage(started->status()[0]).c_str());
    return 1;
  }
  auto res = client->CallTool(
      o.tool, *args,
      [](const agent::mcp::Progress& p) {
        if (p.total) {
          std::fprintf(stderr, "progress %g/%g", p.progress, *p.total);
        } else {
          std::fprintf(stderr, "progress %g", p.progress);
        }
        std::fprintf(stderr, "%s%s\n", p.message.empty() ? "" : ": ", p.message.c_str());
      },
      CancelToken());
  started->Close();
  if (!res.ok()) return Fail(res.error());
  const bool is_error = BoolOr(*res, "isError", false);
  if (o.json) {
    std::printf("%s\n", WriteJsonPretty(*res).c_str());
    return is_error ? 1 : 0;
  }
  agent::ToolOutput out = agent::mcp::OutputFromResult(*res);
  for (const auto& b : out.content) {
    if (b.type == agent::BlockType::kImage) {
      std::printf("[image %s, %zu base64 bytes]\n", b.mime_type().c_str(), b.data().size());
    } else {
      std::printf("%s\n", b.text.c_str());
    }
  }
  return is_error ? 1 : 0;
}

// `lousho mcp conformance-client URL`: the client under test of the official MCP conformance
// suite. The suite names the scenario (MCP_CONFORMANCE_SCENARIO), the revision
// (MCP_CONFORMANCE_PROTOCOL_VERSION, or --spec-version) and extra context
// (MCP_CONFORMANCE_CONTEXT); its authorization server approves at once, so a login here follows
// the authorization URL to its redirect as a browser would. The client is the one sessions use.

// The authorization page's redirect (to the loopback listener), as the address a user pastes.
Result<std::string> FollowAuthorization(const std::string& url, const CancelToken& stop) {
  auto base = agent::ParseBaseUrl(url);
  auto parts = agent::mcp::SplitUrl(url);
  if (!base.ok() || !parts) return MakeError(ErrorCode::kUsage, "not a URL: " + url);
  agent::HttpPostRequest req;
  req.method = "GET";
  req.path = parts->path;
  agent::HttpOptions ho;
  ho.connect_timeout_s = 10;
  ho.idle_timeout_s = 30;
  auto res = agent::HttpClient(*base, ho).PostStream(
      req, [](std::string_view, const agent::MoreReady&) { return true; }, stop);
  auto it = res.headers.find("location");
  if (res.status < 300 || res.status >= 400 || it == res.headers.end())
    return MakeError(ErrorCode::kMcpServer, "the authorization page answered HTTP " +
                                                std::to_string(res.status) + ", not a redirect");
  return it->second;
}

// What the scenario does once connected: its tool calls (a tool's own error is no failure).
Status RunScenario(agent::mcp::Client& client, const std::string& scenario) {
  Status connected = client.Connect(CancelToken());
  if (!connected.ok()) return connected;
  auto tools = client.ListTools(CancelToken());
  if (!tools.ok()) return tools.error();
  std::vector<std::pair<std::string, Json::Value>> calls;
  Json::Value none(Json::objectValue);
  if (scenario == "tools_call") {
    Json::Value args(Json::objectValue);
    args["a"] = 2;
    args["b"] = 3;
    calls.emplace_back("add_numbers", args);
  } else if (scenario == "sse-retry") {
    calls.emplace_back("test_reconnection", none);
  } else if (scenario.rfind("auth/", 0) == 0 || scenario.rfind("elicitation", 0) == 0 ||
             scenario.rfind("input-required", 0) == 0) {
    for (const auto& t : *tools) calls.emplace_back(t.name, none);
  }
  for (const auto& [name, args] : calls) {
    auto res = client.CallTool(name, args, nullptr, CancelToken());
    if (!res.ok()) return res.error();
    std::printf("%s: %s\n", name.c_str(), WriteJson(*res).c_str());
  }
  return Status::Ok();
}

int ConformanceClient(const McpOptions& o) {
  const std::string scenario = ProcessEnv("MCP_CONFORMANCE_SCENARIO").value_or("");
  std::string version = o.spec_version;
  if (version.empty()) version = ProcessEnv("MCP_CONFORMANCE_PROTOCOL_VERSION").value_or("");
  config::McpServerSpec spec;
  spec.name = "server";
  spec.url = o.spec;
  spec.transport = config::McpTransport::kHttp;
  agent::mcp::OAuthOptions ao;
  ao.server_url = o.spec;  // tokens in memory only: no store_dir
  ao.client_metadata_url = o.client_metadata_url;
  // A scenario with a pre-registered client passes its id and secret in its context.
  if (auto context = ParseJson(ProcessEnv("MCP_CONFORMANCE_CONTEXT").value_or("")); context.ok()) {
    ao.pre_registered.client_id = StringOr(*context, "client_id");
    ao.pre_registered.client_secret = StringOr(*context, "client_secret");
  }
  auto auth = std::make_shared<agent::mcp::ServerAuth>(ao);
  agent::mcp::ClientOptions co;
  co.client_version = LOUSHO_VERSION;
  co.auth = auth;
  if (!version.empty()) co.revisions = {version};
  // No one to ask: every question is accepted with the defaults its schema gives.
  co.on_elicit = [](const Json::Value& params, const CancelToken&) {
    Json::Value r(Json::objectValue);
    r["action"] = "accept";
    r["content"] = agent::mcp::ElicitContent(MemberOrNull(params, "requestedSchema"), {});
    return r;
  };
  agent::mcp::LoginUi ui;
  ui.show = [](const std::string& url, const CancelToken&, const CancelToken& stop) {
    return FollowAuthorization(url, stop);
  };
  // A refusal that wants a login (at the start, or a step-up for more scope) logs in and tries
  // again with a new connection: three logins at most.
  constexpr int kMaxLogins = 3;
  Status st = Status::Ok();
  for (int logins = 0;; ++logins) {
    agent::mcp::Client client(spec, co);
    st = RunScenario(client, scenario);
    client.Close();
    if (st.ok() || !auth->needs_login() || logins == kMaxLogins) break;
    auto pending = auth->BeginLogin(CancelToken());
    if (!pending.ok()) return Fail(pending.error());
    Status in = auth->FinishLogin(std::move(*pending), ui, CancelToken());
    if (!in.ok()) return Fail(in.error());
  }
  if (!st.ok()) return Fail(st.error());
  return 0;
}

}  // namespace

Subcommand AddMcpCommand(CLI::App& app) {
  auto o = std::make_shared<McpOptions>();
  CLI::App* cmd =
      app.add_subcommand("mcp", "connect to MCP servers: list their tools, call one, log in");
  cmd->require_subcommand(1);
  CLI::App* list = cmd->add_subcommand("list", "connect to each server and list its tools");
  list->add_option("spec", o->spec, "agent spec or folder, a server's URL, or a command line")
      ->required();
  list->add_option("--cwd", o->cwd, "folder the servers start in (default: here)");
  list->add_flag("--json", o->json, "print JSON");
  list->add_option("--transport", o->transport, "for a URL: http (default) or sse")
      ->check(CLI::IsMember({"http", "sse"}));
  CLI::App* call = cmd->add_subcommand("call", "call one tool of one server and print the result");
  call->add_option("spec", o->spec, "agent spec or folder, a server's URL, or a command line")
      ->required();
  call->add_option("server", o->server, "the server's name in the spec (any, for a URL/command)")
      ->required();
  call->add_option("tool", o->tool, "the tool's name as the server gives it")->required();
  call->add_option("json", o->arguments, "the arguments, a JSON object (default {})");
  call->add_option("--cwd", o->cwd, "folder the server starts in (default: here)");
  call->add_flag("--json", o->json, "print the raw result as JSON");
  call->add_option("--transport", o->transport, "for a URL: http (default) or sse")
      ->check(CLI::IsMember({"http", "sse"}));
  CLI::App* conformance =
      cmd->add_subcommand("conformance-client",
                          "the client under test of the MCP conformance suite (its scenario "
                          "from MCP_CONFORMANCE_SCENARIO)");
  conformance->add_option("url", o->spec, "the scenario's server URL")->required();
  conformance->add_option("--spec-version", o->spec_version,
                          "the MCP revision to speak (default: MCP_CONFORMANCE_PROTOCOL_VERSION, "
                          "else negotiated)");
  conformance->add_option("--client-metadata-url", o->client_metadata_url,
                          "the Client ID Metadata Document lousho is known by");
  auto login = std::make_shared<std::function<int()>>();
  AddMcpLoginCommands(cmd, login.get());
  return {cmd, [o, list, call, conformance, login] {
            if (list->parsed()) return List(*o);
            if (conformance->parsed()) return ConformanceClient(*o);
            return call->parsed() ? Call(*o) : (*login)();
          }};
}

}  // namespace lousho::cli
