// Starting, listing and stopping a session's MCP servers.
#include "agent/mcp/servers.h"

#include <chrono>
#include <set>

#include "agent/mcp/elicit.h"
#include "agent/mcp/oauth_flow.h"
#include "agent/mcp/resources.h"
#include "agent/mcp/tool_names.h"
#include "support/env.h"
#include "support/json_util.h"
#include "support/log.h"
#include "support/text.h"

namespace lousho::agent::mcp {

struct McpServers::Slot {
  config::McpServerSpec spec;
  std::shared_ptr<Client> client;
  // Built by the starter (within the start's deadline) under the mangled name, which is the
  // model's name unless the tools of all servers collide on it.
  std::vector<std::shared_ptr<McpTool>> tools;
  ServerStatus status;
  bool done = false;                 // the starter finished (guarded by McpServers::mu_)
  bool given_up = false;             // the deadline passed first
  CancelSource cancel;               // ends the start (the deadline, or Close)
  ClientOptions options;             // how its client was made (a login makes it anew)
  std::shared_ptr<ServerAuth> auth;  // HTTP servers: their OAuth
};

std::vector<config::McpServerSpec> MergeServers(std::vector<config::McpServerSpec> editor,
                                                const std::vector<config::McpServerSpec>& spec) {
  std::set<std::string> names;
  for (auto& s : editor) {
    names.insert(s.name);
    // ACP gives an HTTP server no OAuth client: the spec's client for the same URL serves it.
    if (s.transport == config::McpTransport::kStdio || !s.oauth.client_id.empty()) continue;
    for (const auto& mine : spec)
      if (mine.transport != config::McpTransport::kStdio && mine.url == s.url &&
          !mine.oauth.client_id.empty()) {
        s.oauth = mine.oauth;
        break;
      }
  }
  for (const auto& s : spec)
    if (!names.count(s.name)) editor.push_back(s);
  return editor;
}

namespace {
// The listed tools as session tools, under their mangled names (see McpServers::Slot).
std::vector<std::shared_ptr<McpTool>> Build(const std::shared_ptr<Client>& client,
                                            std::vector<ToolInfo> infos) {
  std::vector<std::shared_ptr<McpTool>> tools;
  tools.reserve(infos.size());
  for (auto& info : infos) {
    std::string name = MangleToolName(client->name(), info.name);
    tools.push_back(std::make_shared<McpTool>(client, std::move(info), std::move(name)));
  }
  return tools;
}

// The last lines of a stderr tail, at most ~2 KiB, for a message.
std::string LastLines(const std::string& tail, int lines) {
  std::string t = tail.size() > 2048 ? tail.substr(tail.size() - 2048) : tail;
  while (!t.empty() && (t.back() == '\n' || t.back() == '\r')) t.pop_back();
  size_t start = t.size();
  for (int i = 0; i < lines; ++i) {
    size_t nl = start == 0 ? std::string::npos : t.rfind('\n', start - 1);
    if (nl == std::string::npos) return t;
    start = nl;
  }
  return t.substr(start + 1);
}

std::string FileUri(const std::filesystem::path& p) {
  std::string out = "file://";
  for (unsigned char c : p.string()) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                       c == '/' || c == '-' || c == '_' || c == '.' || c == '~';
    if (plain) {
      out += static_cast<char>(c);
    } else {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", c);
      out += buf;
    }
  }
  return out;
}
}  // namespace

std::string FailureMessage(const ServerStatus& s) {
  if (s.connected) return "";
  if (!s.login_url.empty()) return LoginMessage(s.name, s.login_url);
  // The client's errors name the server already.
  std::string why = s.error;
  const std::string named = "MCP server '" + s.name + "' ";
  if (why.rfind(named, 0) == 0) why.erase(0, named.size());
  std::string m = named + "is not available: " + why;
  std::string tail = LastLines(s.stderr_tail, 5);
  if (!tail.empty()) m += "\n" + tail;
  return m;
}

namespace {
ClientOptions ClientOptionsOf(const StartOptions& options) {
  ClientOptions co;
  co.client_version = options.client_version;
  co.cwd = options.cwd.string();
  for (const auto& r : options.roots) co.root_uris.push_back(FileUri(r));
  co.connect_timeout_ms = options.settings.start_timeout_ms;
  co.call_timeout_ms = options.settings.call_timeout_ms;
  co.max_restarts = options.settings.max_restarts;
  co.ca_cert_path = options.ca_cert_path;
  co.proxy = options.proxy;
  // The servers' questions go to the editor (a decline where it cannot ask).
  if (options.login.elicitation != nullptr || options.login.dialogs != nullptr)
    co.on_elicit = [editor = options.login.elicitation, dialogs = options.login.dialogs,
                    session = options.login.session_id](const Json::Value& params,
                                                        const CancelToken& cancel) {
      return AskEditor(params, editor, dialogs, session, cancel);
    };
  return co;
}

// The OAuth of an HTTP server, unless its spec sends an Authorization header of its own.
// The revisions a server is offered, in order: over HTTP the stateless one first (a 2025
// server answers server/discover with an error at once); over stdio the handshake first, as a
// 2025 server may drop (or die of) a request that comes before initialize.
std::vector<std::string> RevisionsFor(const config::McpServerSpec& spec) {
  if (spec.transport == config::McpTransport::kStdio) return {"2025-11-25", kStatelessVersion};
  return {kStatelessVersion, "2025-11-25"};
}

std::shared_ptr<ServerAuth> AuthOf(const config::McpServerSpec& spec, const StartOptions& options) {
  if (spec.transport == config::McpTransport::kStdio) return nullptr;
  for (const auto& [name, value] : spec.headers)
    if (AsciiLower(name) == "authorization") return nullptr;
  OAuthOptions o;
  o.server_url = spec.url;
  o.store_dir = options.auth_dir.empty() ? TokenStoreDir(ProcessEnv) : options.auth_dir;
  o.timeout_ms = options.settings.start_timeout_ms;
  o.ca_cert_path = options.ca_cert_path;
  o.proxy = options.proxy;
  o.client_metadata_url = options.settings.client_metadata_url;
  o.pre_registered = spec.oauth;
  o.server_name = spec.name;
  return std::make_shared<ServerAuth>(std::move(o));
}

// Connects `client` and lists its tools.
Status ConnectAndList(const std::shared_ptr<Client>& client, const CancelToken& stop,
                      std::vector<std::shared_ptr<McpTool>>* tools) {
  Status connected = client->Connect(stop);
  if (!connected.ok()) return connected;
  auto listed = client->ListTools(stop);
  if (!listed.ok()) return listed.error();
  *tools = Build(client, std::move(*listed));
  return Status::Ok();
}
}  // namespace

// Connects one server and lists its tools; the outcome lands in its slot unless the start was
// given up meanwhile. Runs on the slot's own thread.
void McpServers::StartOne(const std::shared_ptr<Slot>& slot) {
  const CancelToken stop = slot->cancel.token();
  ServerStatus st;
  st.name = slot->spec.name;
  std::vector<std::shared_ptr<McpTool>> tools;
  Status connected = ConnectAndList(slot->client, stop, &tools);
  std::shared_ptr<PendingLogin> login;
  if (!connected.ok() && slot->auth && slot->auth->needs_login())
    connected = PrepareLogin(slot, connected, stop, &login, &st.login_url);
  if (connected.ok()) {
    st.connected = true;
    st.tools = tools.size();
    prompts_.Load(slot->client, stop);
  } else {
    st.error = connected.error().message;
    st.stderr_tail = slot->client->StderrTail();
    slot->client->Close();
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (!slot->given_up) {
    slot->status = st;
    slot->tools = std::move(tools);
    // Begun only once the status says the server waits: the login's end then replaces it.
    if (login && !closed_) {
      try {
        logins_.emplace_back([this, slot, login] { RunLogin(slot, login); });
      } catch (const std::system_error& e) {
        slot->status.login_url.clear();
        slot->status.error = std::string("no thread for the login: ") + e.what();
      }
    }
  }
  slot->done = true;
  cv_.notify_all();
}

Status McpServers::PrepareLogin(const std::shared_ptr<Slot>& slot, const Status& refused,
                                const CancelToken& stop, std::shared_ptr<PendingLogin>* login,
                                std::string* url) {
  auto begun = slot->auth->BeginLogin(stop);
  if (!begun.ok())
    return MakeError(
        ErrorCode::kMcpServer,
        refused.error().message + " (and no login is possible: " + begun.error().message + ")");
  *url = begun->url;
  *login = std::make_shared<PendingLogin>(std::move(*begun));
  return MakeError(ErrorCode::kMcpServer,
                   "MCP server '" + slot->spec.name + "' is waiting for the user to log in");
}

void McpServers::RunLogin(const std::shared_ptr<Slot>& slot,
                          const std::shared_ptr<PendingLogin>& login) {
  const std::string& name = slot->spec.name;
  Status st =
      slot->auth->FinishLogin(std::move(*login), SessionLoginUi(name, hooks_), closing_.token());
  std::shared_ptr<Client> client;
  std::vector<std::shared_ptr<McpTool>> tools;
  if (st.ok()) {
    client = std::make_shared<Client>(slot->spec, slot->options);
    st = ConnectAndList(client, closing_.token(), &tools);
    if (st.ok() && prompts_.Load(client, closing_.token()) && on_commands_changed_ &&
        !closing_.cancelled())
      on_commands_changed_();
  }
  const std::string outcome =
      st.ok() ? "Logged in to the MCP server '" + name + "': " + std::to_string(tools.size()) +
                    " tool(s) ready."
              : "The login to the MCP server '" + name + "' failed: " + st.error().message;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!closed_) {
      slot->status.login_url.clear();
      if (st.ok()) {
        slot->client = client;
        slot->tools = std::move(tools);
        slot->status.connected = true;
        slot->status.tools = slot->tools.size();
        slot->status.error.clear();
        client = nullptr;
      } else {
        slot->status.error = st.error().message;
      }
      Rebuild();
    }
  }
  if (client) client->Close();  // closed meanwhile, or not connected
  if (st.ok()) {
    log::Info(outcome);
  } else {
    log::Warn(outcome);
  }
  if (hooks_.on_login && !closing_.cancelled()) hooks_.on_login(name, false, outcome);
}

// Waits for every start, at most the start timeout or until `cancel`; a start still running is
// given up (its status says why) and the tool list is built from those that finished.
void McpServers::AwaitStarts(const StartOptions& options) {
  ScopedCancelCallback wake(options.cancel, [this] {
    std::lock_guard<std::mutex> lock(mu_);
    cv_.notify_all();
  });
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_for(lock, std::chrono::milliseconds(options.settings.start_timeout_ms), [&] {
    if (options.cancel.cancelled()) return true;
    for (const auto& s : slots_)
      if (!s->done) return false;
    return true;
  });
  for (auto& s : slots_) {
    if (s->done) continue;
    s->given_up = true;
    s->status.error =
        options.cancel.cancelled()
            ? "cancelled while starting"
            : "did not start within " + std::to_string(options.settings.start_timeout_ms) + " ms";
    s->status.stderr_tail = s->client->StderrTail();
  }
  Rebuild();
}

std::shared_ptr<McpServers> McpServers::Start(const std::vector<config::McpServerSpec>& specs,
                                              const StartOptions& options) {
  std::shared_ptr<McpServers> self(new McpServers());
  self->hooks_ = options.login;
  self->on_commands_changed_ = options.on_commands_changed;
  for (const auto& spec : specs) {
    auto slot = std::make_shared<Slot>();
    slot->spec = spec;
    slot->status.name = spec.name;
    slot->options = ClientOptionsOf(options);
    slot->options.revisions = RevisionsFor(spec);
    // The clients end before this object does (Close).
    slot->options.on_list_changed = [raw = self.get(), name = spec.name](const std::string& list) {
      raw->ListChanged(name, list);
    };
    slot->auth = AuthOf(spec, options);
    slot->options.auth = slot->auth;
    slot->client = std::make_shared<Client>(spec, slot->options);
    self->slots_.push_back(slot);
  }
  // Each start ends when it is done, at the deadline, at `cancel`, or at Close.
  for (const auto& slot : self->slots_) {
    McpServers* raw = self.get();
    try {
      self->starters_.emplace_back([raw, slot] { raw->StartOne(slot); });
    } catch (const std::system_error& e) {
      slot->status.error = std::string("no thread to start it: ") + e.what();
      slot->done = true;
    }
  }
  self->AwaitStarts(options);
  try {
    self->refresher_ = std::thread([raw = self.get()] { raw->Refresh(); });
  } catch (const std::system_error& e) {
    log::Warn(std::string("MCP: no thread to list prompts again when they change: ") + e.what());
  }
  // Servers still starting are stopped now; their threads end at once and are joined at Close.
  for (auto& s : self->slots_) {
    if (!s->given_up) continue;
    s->cancel.Cancel(CancelCause::kShutdown);
    s->client->Close();
  }
  for (const auto& s : self->slots_) {
    if (s->status.connected) {
      log::Info("MCP server '" + s->spec.name + "': " + std::to_string(s->status.tools) +
                " tool(s), protocol " + s->client->protocol_version());
    } else if (!s->status.login_url.empty()) {
      log::Info("MCP server '" + s->spec.name + "' is waiting for a login");
    } else {
      log::Warn(FailureMessage(s->status));
    }
  }
  return self;
}

McpServers::~McpServers() { Close(); }

void McpServers::ListChanged(const std::string& server, const std::string& list) {
  if (list != "prompts") return;  // resources: the client lists them anew at the next use
  std::lock_guard<std::mutex> lock(mu_);
  stale_prompts_.insert(server);
  cv_.notify_all();
}

void McpServers::Refresh() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [this] { return closed_ || !stale_prompts_.empty(); });
    if (closed_) return;
    std::vector<std::shared_ptr<Client>> clients;
    for (const auto& s : slots_)
      if (s->status.connected && stale_prompts_.count(s->spec.name)) clients.push_back(s->client);
    stale_prompts_.clear();
    lock.unlock();
    bool changed = false;
    for (const auto& c : clients) changed = prompts_.Load(c, closing_.token()) || changed;
    if (changed && on_commands_changed_ && !closing_.cancelled()) on_commands_changed_();
    lock.lock();
  }
}

void McpServers::Rebuild() {
  std::vector<std::pair<std::string, std::string>> pairs;
  std::vector<const std::shared_ptr<McpTool>*> built;
  for (const auto& s : slots_) {
    if (!s->status.connected) continue;
    for (const auto& tool : s->tools) {
      pairs.emplace_back(s->spec.name, tool->info().name);
      built.push_back(&tool);
    }
  }
  std::vector<std::string> names = UniqueToolNames(pairs);
  tools_.clear();
  tools_.reserve(names.size());
  for (const auto& s : slots_) {
    if (s->status.login_url.empty()) continue;
    tools_.push_back(std::make_shared<LoginWaitTool>(MangleToolName(s->spec.name, "login_needed"),
                                                     s->spec.name, s->status.login_url));
  }
  // One tool reads the resources of every server that has them.
  if (auto clients = ResourceClients(); !clients.empty())
    tools_.push_back(std::make_shared<ResourceTool>([clients] { return clients; }));
  for (size_t i = 0; i < names.size(); ++i) {
    const std::shared_ptr<McpTool>& tool = *built[i];
    if (tool->name() == names[i]) {
      tools_.push_back(tool);
    } else {
      tools_.push_back(std::make_shared<McpTool>(*tool, std::move(names[i])));
    }
  }
}

std::vector<std::shared_ptr<Client>> McpServers::ResourceClients() const {
  std::vector<std::shared_ptr<Client>> out;
  for (const auto& s : slots_)
    if (s->status.connected && MemberOrNull(s->client->capabilities(), "resources").isObject())
      out.push_back(s->client);
  return out;
}

void McpServers::ResolveLinks(std::vector<ContentBlock>& content, const CancelToken& cancel) {
  std::vector<std::shared_ptr<Client>> clients;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return;
    clients = ResourceClients();
  }
  ResolveResourceLinks(content, clients, cancel);
}

std::vector<ServerStatus> McpServers::status() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<ServerStatus> out;
  for (const auto& s : slots_) out.push_back(s->status);
  return out;
}

std::shared_ptr<Client> McpServers::Find(const std::string& server) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& s : slots_)
    if (s->spec.name == server && s->status.connected) return s->client;
  return nullptr;
}

std::vector<std::shared_ptr<Tool>> McpServers::CurrentTools(const CancelToken& cancel) {
  std::vector<std::shared_ptr<Slot>> changed;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return {};
    for (const auto& s : slots_)
      if (s->status.connected && s->client->tools_changed()) changed.push_back(s);
    if (changed.empty()) return tools_;
  }
  // Listed outside the lock: a slow server must not hold up the others' calls.
  std::vector<std::pair<std::shared_ptr<Slot>, std::vector<std::shared_ptr<McpTool>>>> fresh;
  for (const auto& s : changed) {
    auto listed = s->client->ListTools(cancel);
    if (listed.ok()) {
      fresh.emplace_back(s, Build(s->client, std::move(*listed)));
    } else {
      log::Warn("MCP server '" + s->spec.name +
                "': cannot list its tools again: " + listed.error().message);
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [slot, tools] : fresh) {
    slot->tools = std::move(tools);
    slot->status.tools = slot->tools.size();
  }
  Rebuild();
  return tools_;
}

void McpServers::Close() {
  std::vector<std::shared_ptr<Slot>> slots;
  std::vector<std::thread> starters;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return;
    closed_ = true;
    slots = slots_;
    starters.swap(starters_);
    tools_.clear();
    cv_.notify_all();  // the refresher ends
  }
  closing_.Cancel(CancelCause::kShutdown);
  for (const auto& s : slots) s->cancel.Cancel(CancelCause::kShutdown);
  // Servers stop side by side: each may take its grace period.
  std::vector<std::thread> stoppers;
  for (const auto& s : slots) {
    try {
      stoppers.emplace_back([client = s->client] { client->Close(); });
    } catch (const std::system_error&) {
      s->client->Close();
    }
  }
  for (auto& t : stoppers) t.join();
  for (auto& t : starters) t.join();
  if (refresher_.joinable()) refresher_.join();
  // No login starts once closed_ is set, so the list is complete now.
  std::vector<std::thread> logins;
  {
    std::lock_guard<std::mutex> lock(mu_);
    logins.swap(logins_);
  }
  for (auto& t : logins) t.join();
}

}  // namespace lousho::agent::mcp
