// `lousho mcp list|call`: connects to a spec's MCP servers (or one given as a command or URL)
// and shows what they offer, or makes one call: how people debug their MCP setup.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>

#include "agent/mcp/servers.h"
#include "agent/mcp/tool_names.h"
#include "cli/command.h"
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
      std::printf("[image %s, %zu base64 bytes]\n", b.mime_type.c_str(), b.data.size());
    } else {
      std::printf("%s\n", b.text.c_str());
    }
  }
  return is_error ? 1 : 0;
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
  auto login = std::make_shared<std::function<int()>>();
  AddMcpLoginCommands(cmd, login.get());
  return {cmd, [o, list, call, login] {
            if (list->parsed()) return List(*o);
            return call->parsed() ? Call(*o) : (*login)();
          }};
}

}  // namespace lousho::cli
