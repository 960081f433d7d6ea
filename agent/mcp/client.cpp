// The MCP client over jsonrpc::Peer, and its stdio transport.
#include "agent/mcp/client.h"

#include <chrono>
#include <deque>
#include <thread>

#include "agent/mcp/http_transport.h"
#include "agent/mcp/spec_transport.h"
#include "support/json_util.h"
#include "support/jsonrpc.h"
#include "support/log.h"

namespace lousho::agent::mcp {
namespace {

using Clock = std::chrono::steady_clock;

// Past this many JSON items a message is refused (a million one-letter content blocks once took
// 3 GB to read; 20,000 tools with their schemas take a few hundred thousand).
constexpr size_t kMaxItems = 1000000;

constexpr int kMaxInputRounds = 8;  // times a server may ask for input within one request

bool InputRequired(const Json::Value& result) {
  return StringOr(result, "resultType") == "input_required";
}

Json::Value Declined() {
  Json::Value r(Json::objectValue);
  r["action"] = "decline";
  return r;
}

long MsLeft(Clock::time_point deadline) {
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return ms < 0 ? 0 : static_cast<long>(ms);
}

}  // namespace

bool IsStateless(const std::string& version) { return version >= kStatelessVersion; }

// One connection: its transport, the peer over it, the reader and the asking threads.
struct Client::Conn {
  std::unique_ptr<McpLineTransport> transport;
  std::unique_ptr<jsonrpc::Peer> peer;
  std::thread reader;
  std::string version;  // the negotiated revision
  bool stateless = false;
  CancelSource ending;  // ends the questions when the connection ends
  std::mutex askers_mu;
  std::vector<std::thread> askers;
  ~Conn() {
    ending.Cancel(CancelCause::kShutdown);
    if (transport) transport->Close();
    if (reader.joinable()) reader.join();
    std::vector<std::thread> threads;
    {
      std::lock_guard<std::mutex> lock(askers_mu);
      threads.swap(askers);
    }
    for (auto& t : threads) t.join();
  }
};

// A tools/call waiting on a session worker: progress queued by the reader thread.
struct Client::CallState {
  std::mutex mu;
  std::deque<Progress> queue;
  std::atomic<bool> has{false};
};

Client::Client(config::McpServerSpec spec, ClientOptions options)
    : spec_(std::move(spec)), options_(std::move(options)) {}

Client::~Client() { Close(); }

Json::Value Client::Roots() const {
  Json::Value roots(Json::arrayValue);
  for (const auto& uri : options_.root_uris) {
    Json::Value r(Json::objectValue);
    r["uri"] = uri;
    size_t slash = uri.find_last_of('/');
    r["name"] = slash == std::string::npos ? uri : uri.substr(slash + 1);
    roots.append(r);
  }
  Json::Value res(Json::objectValue);
  res["roots"] = roots;
  return res;
}

Json::Value Client::Capabilities() const {
  Json::Value caps(Json::objectValue);
  caps["roots"]["listChanged"] = false;
  if (options_.on_elicit) caps["elicitation"]["form"] = Json::Value(Json::objectValue);
  return caps;
}

void Client::BindHandlers(Conn* conn) {
  jsonrpc::Peer* peer = conn->peer.get();
  peer->OnRequest("ping", [](const Json::Value&, jsonrpc::Reply reply) {
    reply.Result(Json::Value(Json::objectValue));
  });
  peer->OnRequest("roots/list",
                  [this](const Json::Value&, jsonrpc::Reply reply) { reply.Result(Roots()); });
  // The user's answer may take minutes: asked on a thread of its own, never the reader's.
  peer->OnRequest(
      "elicitation/create", [this, conn](const Json::Value& params, jsonrpc::Reply reply) {
        if (!options_.on_elicit) {
          reply.Result(Declined());
          return;
        }
        auto ask = [this, params, stop = conn->ending.token()](jsonrpc::Reply r) {
          r.Result(options_.on_elicit(params, stop));
        };
        std::lock_guard<std::mutex> lock(conn->askers_mu);
        try {
          conn->askers.emplace_back([ask, r = std::make_shared<jsonrpc::Reply>(std::move(reply))] {
            ask(std::move(*r));
          });
        } catch (const std::system_error& e) {
          log::Error(std::string("MCP: no thread for a question: ") + e.what());
        }
      });
  peer->OnNotification("notifications/tools/list_changed",
                       [this](const Json::Value&) { ListChanged("tools"); });
  peer->OnNotification("notifications/prompts/list_changed",
                       [this](const Json::Value&) { ListChanged("prompts"); });
  peer->OnNotification("notifications/resources/list_changed",
                       [this](const Json::Value&) { ListChanged("resources"); });
  peer->OnNotification("notifications/progress", [this, peer](const Json::Value& params) {
    const Json::Value& token = MemberOrNull(params, "progressToken");
    std::string key = token.isString() ? StringOr(params, "progressToken") : WriteJson(token);
    auto value = AsDouble(MemberOrNull(params, "progress"));
    if (!value) return;
    std::shared_ptr<CallState> state;
    {
      std::lock_guard<std::mutex> lock(calls_mu_);
      auto it = calls_.find(key);
      if (it == calls_.end()) return;
      state = it->second;
    }
    Progress p;
    p.progress = *value;
    p.total = AsDouble(MemberOrNull(params, "total"));
    p.message = StringOr(params, "message");
    {
      std::lock_guard<std::mutex> lock(state->mu);
      if (state->queue.size() < 1024) state->queue.push_back(std::move(p));
      state->has = true;
    }
    peer->Wake();
  });
  peer->OnNotification("notifications/message", [this](const Json::Value& params) {
    log::Info("MCP " + spec_.name + " [" + StringOr(params, "level", "info") +
              "]: " + StringOrJson(MemberOrNull(params, "data")));
  });
}

Result<std::shared_ptr<Client::Conn>> Client::Open(const CancelToken& cancel, long timeout_ms) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  auto transport = options_.open ? options_.open(cancel)
                                 : OpenSpecTransport(spec_, options_, cancel, timeout_ms);
  if (!transport.ok()) return transport.error();
  auto conn = std::make_shared<Conn>();
  conn->transport = std::move(*transport);
  // Close (a start that timed out, a session that closes) stops this server too, so that no
  // wait below outlasts it.
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return MakeError(ErrorCode::kMcpServer, spec_.name + ": closed");
    opening_ = conn;
  }
  struct Opened {
    Client* client;
    ~Opened() {
      std::shared_ptr<Conn> last;  // a failed start's connection ends here, outside the lock
      std::lock_guard<std::mutex> lock(client->mu_);
      last = std::move(client->opening_);
    }
  } opened{this};
  jsonrpc::PeerOptions po;
  po.cancel_method = "notifications/cancelled";
  // What a server writes on stdout that is no JSON-RPC is stray logging: dropped, not answered.
  po.answer_malformed = false;
  po.name = "MCP server '" + spec_.name + "'";
  po.max_items = kMaxItems;
  conn->peer = std::make_unique<jsonrpc::Peer>(conn->transport.get(), po);
  BindHandlers(conn.get());
  try {
    conn->reader = std::thread([peer = conn->peer.get()] { peer->Run(); });
  } catch (const std::system_error& e) {
    return MakeError(ErrorCode::kResourceExhausted, std::string("thread: ") + e.what());
  }

  // The revision is data: each offered in turn, a stateless one with server/discover, a 2025
  // one with the handshake, until the server speaks one. A server that does not answer in time,
  // or goes, ends the start.
  Result<Json::Value> res = MakeError(ErrorCode::kMcpServer, "no MCP revision to offer");
  for (const auto& v : options_.revisions) {
    res = IsStateless(v) ? Discover(conn, v, cancel, MsLeft(deadline))
                         : Handshake(conn, v, cancel, MsLeft(deadline));
    if (res.ok() || res.error().code != ErrorCode::kMcpServer || conn->peer->closed()) break;
  }
  if (!res.ok()) {
    std::string tail = conn->transport->StderrTail();
    conn.reset();  // stops the server
    std::lock_guard<std::mutex> lock(mu_);
    if (!tail.empty()) last_stderr_ = tail;
    return res.error();
  }
  std::lock_guard<std::mutex> lock(mu_);
  protocol_version_ = conn->version;
  server_info_ = MemberOrNull(*res, "serverInfo");
  if (server_info_.isNull())
    server_info_ = MemberOrNull(MemberOrNull(*res, "_meta"), "io.modelcontextprotocol/serverInfo");
  instructions_ = StringOr(*res, "instructions");
  capabilities_ = MemberOrNull(*res, "capabilities");
  return conn;
}

Result<Json::Value> Client::Discover(const std::shared_ptr<Conn>& conn, const std::string& version,
                                     const CancelToken& cancel, long timeout_ms) {
  conn->version = version;
  conn->stateless = true;
  conn->transport->Offer(version);
  auto res = Request(conn, "server/discover", Json::Value(Json::objectValue), cancel, timeout_ms);
  const Json::Value none;
  const Json::Value& supported = MemberOrNull(res.ok() ? *res : none, "supportedVersions");
  bool speaks = false;
  if (supported.isArray())
    for (const auto& v : supported) speaks = speaks || AsString(v) == version;
  if (speaks) {
    conn->transport->Connected(version);
    // No stream of its own: list changes come on a subscription, where the server offers them.
    const Json::Value& caps = MemberOrNull(*res, "capabilities");
    bool changes = false;
    for (const char* list : {"tools", "prompts", "resources"})
      changes = changes || BoolOr(MemberOrNull(caps, list), "listChanged", false);
    if (changes) {
      std::lock_guard<std::mutex> lock(conn->askers_mu);
      try {
        conn->askers.emplace_back([this, raw = conn.get(), caps] { Listen(raw, caps); });
      } catch (const std::system_error& e) {
        log::Warn(std::string("MCP: no thread to listen for list changes: ") + e.what());
      }
    }
    return res;
  }
  conn->stateless = false;
  conn->version.clear();
  conn->transport->Offer("");
  if (!res.ok() && res.error().code != ErrorCode::kMcpServer) return res;  // timeout, cancel
  log::Info("MCP server '" + spec_.name + "' does not speak MCP " + version +
            (res.ok() ? "" : " (" + res.error().message + ")"));
  return MakeError(ErrorCode::kMcpServer,
                   "MCP server '" + spec_.name + "' does not speak MCP " + version);
}

void Client::Listen(Conn* raw, const Json::Value& caps) {
  // Not owning: the connection joins this thread before it goes.
  std::shared_ptr<Conn> conn(std::shared_ptr<Conn>(), raw);
  const CancelToken stop = raw->ending.token();
  Json::Value params(Json::objectValue);
  const std::pair<const char*, const char*> lists[] = {{"tools", "toolsListChanged"},
                                                       {"prompts", "promptsListChanged"},
                                                       {"resources", "resourcesListChanged"}};
  std::vector<std::string> subscribed;
  for (const auto& [list, filter] : lists) {
    if (!BoolOr(MemberOrNull(caps, list), "listChanged", false)) continue;
    params["notifications"][filter] = true;
    subscribed.emplace_back(list);
  }
  int quick_failures = 0;
  while (!stop.cancelled() && quick_failures < 3) {
    const auto began = Clock::now();
    listening_ = true;
    auto res = Request(conn, "subscriptions/listen", params, stop, 24L * 3600 * 1000);
    listening_ = false;
    if (stop.cancelled()) return;
    // Changes may have come while no one listened.
    for (const auto& list : subscribed) ListChanged(list);
    const bool quick = Clock::now() - began < std::chrono::seconds(10);
    quick_failures = !res.ok() && quick ? quick_failures + 1 : 0;
    if (stop.WaitFor(1000)) return;
  }
  log::Info("MCP server '" + spec_.name + "': no subscription to its list changes");
}

Result<Json::Value> Client::Handshake(const std::shared_ptr<Conn>& conn, const std::string& offered,
                                      const CancelToken& cancel, long timeout_ms) {
  Json::Value params(Json::objectValue);
  params["protocolVersion"] = offered;
  params["capabilities"] = Capabilities();
  params["clientInfo"]["name"] = options_.client_name;
  params["clientInfo"]["version"] = options_.client_version;
  auto res = Request(conn, "initialize", params, cancel, timeout_ms);
  if (!res.ok()) return res;
  std::string version = StringOr(*res, "protocolVersion");
  bool known = false;
  for (const char* v : kProtocolVersions) known = known || version == v;
  if (!known)
    return MakeError(ErrorCode::kMcpServer,
                     "the server speaks MCP version '" + version + "', which lousho does not");
  conn->version = version;
  conn->transport->Connected(version);
  conn->peer->Notify("notifications/initialized", Json::Value(Json::objectValue));
  return res;
}

Status Client::Connect(const CancelToken& cancel) {
  std::lock_guard<std::mutex> connecting(connect_mu_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return MakeError(ErrorCode::kMcpServer, spec_.name + ": closed");
    if (conn_ && !conn_->peer->closed()) return Status::Ok();
  }
  auto conn = Open(cancel, options_.connect_timeout_ms);
  if (!conn.ok()) return conn.error();
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_) return MakeError(ErrorCode::kMcpServer, spec_.name + ": closed");
  conn_ = *conn;
  return Status::Ok();
}

Result<std::shared_ptr<Client::Conn>> Client::Live(const CancelToken& cancel) {
  std::lock_guard<std::mutex> connecting(connect_mu_);
  std::shared_ptr<Conn> dead;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return MakeError(ErrorCode::kMcpServer, spec_.name + ": closed");
    if (conn_ && !conn_->peer->closed() && conn_->transport->alive()) return conn_;
    if (conn_) {
      std::string tail = conn_->transport->StderrTail();
      if (!tail.empty()) last_stderr_ = tail;
    }
    if (restarts_ >= options_.max_restarts)
      return MakeError(ErrorCode::kMcpServer, "MCP server '" + spec_.name +
                                                  "' is not running (restarted " +
                                                  std::to_string(restarts_) + " times already)");
    ++restarts_;
    dead = std::move(conn_);
  }
  log::Warn("MCP server '" + spec_.name + "' is not running; starting it again (" +
            std::to_string(restarts_) + " of " + std::to_string(options_.max_restarts) + ")");
  dead.reset();
  auto conn = Open(cancel, options_.connect_timeout_ms);
  if (!conn.ok()) return conn.error();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return MakeError(ErrorCode::kMcpServer, spec_.name + ": closed");
    conn_ = *conn;
  }
  // A new process may offer other tools, prompts and resources (told outside mu_: the listener
  // takes locks of its own).
  tools_changed_ = true;
  ++resources_generation_;
  if (options_.on_list_changed) options_.on_list_changed("prompts");
  return *conn;
}

Result<Json::Value> Client::Request(const std::shared_ptr<Conn>& conn, const std::string& method,
                                    const Json::Value& params, const CancelToken& cancel,
                                    long timeout_ms, const std::function<void()>* pump,
                                    const std::shared_ptr<CallState>& state) {
  Json::Value sent = params;
  if (conn->stateless) {
    // Every request says who asks and what it can do: the server keeps nothing between them.
    Json::Value& meta = sent["_meta"];
    meta["io.modelcontextprotocol/protocolVersion"] = conn->version;
    meta["io.modelcontextprotocol/clientInfo"]["name"] = options_.client_name;
    meta["io.modelcontextprotocol/clientInfo"]["version"] = options_.client_version;
    meta["io.modelcontextprotocol/clientCapabilities"] = Capabilities();
  }
  auto res = Exchange(conn, method, sent, cancel, timeout_ms, pump, state);
  // The server wants answers first: it gets them with the same request again.
  for (int round = 0; res.ok() && InputRequired(*res); ++round) {
    if (round == kMaxInputRounds)
      return MakeError(ErrorCode::kMcpServer, "MCP server '" + spec_.name + "' asked for input " +
                                                  std::to_string(kMaxInputRounds) + " times in " +
                                                  method + "; giving up");
    auto answers = AnswerInputs(MemberOrNull(*res, "inputRequests"), cancel);
    if (!answers.ok()) return answers.error();
    sent["inputResponses"] = std::move(*answers);
    const Json::Value& handle = MemberOrNull(*res, "requestState");
    if (handle.isString()) {
      sent["requestState"] = handle;
    } else {
      sent.removeMember("requestState");
    }
    res = Exchange(conn, method, sent, cancel, timeout_ms, pump, state);
  }
  return res;
}

Result<Json::Value> Client::AnswerInputs(const Json::Value& requests, const CancelToken& cancel) {
  Json::Value answers(Json::objectValue);
  if (!requests.isObject()) return answers;
  for (const auto& key : MemberNames(requests)) {
    const Json::Value& req = MemberOrNull(requests, key.c_str());
    const std::string method = StringOr(req, "method");
    if (method == "roots/list") {
      answers[key] = Roots();
    } else if (method == "elicitation/create") {
      answers[key] =
          options_.on_elicit ? options_.on_elicit(MemberOrNull(req, "params"), cancel) : Declined();
    } else {
      return MakeError(ErrorCode::kMcpServer, "MCP server '" + spec_.name + "' asked for '" +
                                                  method + "', which lousho does not offer");
    }
  }
  return answers;
}

Result<Json::Value> Client::Exchange(const std::shared_ptr<Conn>& conn, const std::string& method,
                                     const Json::Value& params, const CancelToken& cancel,
                                     long timeout_ms, const std::function<void()>* pump,
                                     const std::shared_ptr<CallState>& state) {
  jsonrpc::CallHooks hooks;
  if (pump && state) {
    hooks.pending = [s = state.get()] { return s->has.load(); };
    hooks.run = *pump;
  }
  auto res = conn->peer->Call(method, params, cancel, timeout_ms, pump ? &hooks : nullptr);
  if (res.ok()) return res;
  const Error& e = res.error();
  switch (e.code) {
    case ErrorCode::kCancelled:
      return e;
    case ErrorCode::kTimeout:
      return MakeError(ErrorCode::kTimeout, "MCP server '" + spec_.name + "' did not answer " +
                                                method + " within " + std::to_string(timeout_ms) +
                                                " ms");
    case ErrorCode::kDisconnected: {
      std::string tail = conn->transport->StderrTail();
      return MakeError(ErrorCode::kMcpServer,
                       "MCP server '" + spec_.name + "' closed the connection during " + method +
                           (tail.empty() ? "" : "; its stderr ends with:\n" + tail));
    }
    case ErrorCode::kToolTooLarge: {
      const std::string what = method == "tools/call"
                                   ? "the result of tool '" + StringOr(params, "name") + "'"
                                   : "its answer to " + method;
      return MakeError(ErrorCode::kToolTooLarge,
                       "MCP server '" + spec_.name + "': " + what + " is too large (" + e.message +
                           ") and was dropped; ask for less (a narrower query, a smaller page)");
    }
    default:
      if (e.message.rfind(kTransportErrorPrefix, 0) == 0)
        return MakeError(ErrorCode::kMcpServer, "MCP server '" + spec_.name +
                                                    "' gave no usable answer to " + method + ": " +
                                                    e.message.substr(kTransportErrorPrefix.size()));
      return MakeError(ErrorCode::kMcpServer, "MCP server '" + spec_.name + "' answered " + method +
                                                  " with an error: " + e.message);
  }
}

Result<Json::Value> Client::CallTool(const std::string& tool, const Json::Value& arguments,
                                     const std::function<void(const Progress&)>& on_progress,
                                     const CancelToken& cancel) {
  auto conn = Live(cancel);
  if (!conn.ok()) return conn.error();
  const std::string token = std::to_string(next_token_++);
  auto state = std::make_shared<CallState>();
  {
    std::lock_guard<std::mutex> lock(calls_mu_);
    calls_[token] = state;
  }
  Json::Value params(Json::objectValue);
  params["name"] = tool;
  params["arguments"] = arguments.isObject() ? arguments : Json::Value(Json::objectValue);
  params["_meta"]["progressToken"] = token;
  std::function<void()> pump = [&] {
    std::deque<Progress> got;
    {
      std::lock_guard<std::mutex> lock(state->mu);
      got.swap(state->queue);
      state->has = false;
    }
    if (on_progress)
      for (const auto& p : got) on_progress(p);
  };
  auto res = Request(*conn, "tools/call", params, cancel, options_.call_timeout_ms, &pump, state);
  pump();  // progress that arrived with the answer
  {
    std::lock_guard<std::mutex> lock(calls_mu_);
    calls_.erase(token);
  }
  return res;
}

Status Client::Ping(const CancelToken& cancel) {
  auto conn = Live(cancel);
  if (!conn.ok()) return conn.error();
  auto res = Request(*conn, "ping", Json::Value(Json::objectValue), cancel,
                     std::min(options_.call_timeout_ms, 30000L));
  if (!res.ok()) return res.error();
  return Status::Ok();
}

void Client::Close() {
  std::shared_ptr<Conn> conn;
  std::shared_ptr<Conn> opening;
  {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
    conn = std::move(conn_);
    opening = opening_;
  }
  // Wakes calls in flight, the handshake of a start included: their input ends.
  if (conn) conn->transport->Close();
  if (opening) opening->transport->Close();
  // A start still under way ends at once now (its input ended, or it finds closed_): wait for
  // it, so that its server is gone when Close returns.
  std::lock_guard<std::mutex> started(connect_mu_);
}

void Client::ListChanged(const std::string& list) {
  if (list == "tools") {
    tools_changed_ = true;
    if (options_.on_tools_changed) options_.on_tools_changed();
    return;
  }
  if (list == "resources") ++resources_generation_;
  if (options_.on_list_changed) options_.on_list_changed(list);
}

bool Client::tools_changed() const {
  if (tools_changed_.load()) return true;
  const long long expire = tools_expire_ms_.load();
  return expire != 0 &&
         std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now().time_since_epoch())
                 .count() >= expire;
}

std::string Client::protocol_version() const {
  std::lock_guard<std::mutex> lock(mu_);
  return protocol_version_;
}

Json::Value Client::server_info() const {
  std::lock_guard<std::mutex> lock(mu_);
  return server_info_;
}

std::string Client::instructions() const {
  std::lock_guard<std::mutex> lock(mu_);
  return instructions_;
}

std::string Client::StderrTail() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (conn_) {
    std::string tail = conn_->transport->StderrTail();
    if (!tail.empty()) return tail;
  }
  return last_stderr_;
}

int Client::restarts() const {
  std::lock_guard<std::mutex> lock(mu_);
  return restarts_;
}

}  // namespace lousho::agent::mcp
