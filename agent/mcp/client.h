// The MCP client: one server connection (stdio or HTTP) speaking MCP over jsonrpc::Peer, with
// the handshake, tool listing and calls, progress, cancellation and restarts.
#pragma once

#include <json/json.h>

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "config/agent_spec.h"
#include "support/cancel.h"
#include "support/http/proxy.h"
#include "support/status.h"
#include "support/transport.h"

namespace lousho::agent::mcp {

class HttpAuth;

// The handshake revisions (initialize), newest first: the first is offered, all are accepted.
inline constexpr const char* kProtocolVersions[] = {"2025-11-25", "2025-06-18", "2025-03-26"};
// The stateless revision: no initialize and no session; the version, client info and
// capabilities travel in each request's `_meta`, `server/discover` tells what the server is.
inline constexpr const char* kStatelessVersion = "2026-07-28";

// True for a revision without the handshake (kStatelessVersion and later).
bool IsStateless(const std::string& version);

// The lines of one connection to a server; Close() ends its input (ReadLine returns kEof) and
// stops whatever runs the server. Implemented by the stdio and HTTP transports, and by tests.
class McpLineTransport : public LineTransport {
 public:
  virtual void Close() = 0;
  // What the server wrote on stderr lately (stdio), for error reports.
  virtual std::string StderrTail() const { return {}; }
  // False once the transport knows the connection is over, possibly before its reader has
  // seen the end: the next use then connects anew at once.
  virtual bool alive() const { return true; }
  // Told the negotiated version (HTTP sends it as a header) once the handshake is done.
  virtual void Connected(const std::string& /*protocol_version*/) {}
  // Told the revision a request about to be sent is made at, before negotiation ends ("": the
  // handshake's, which carries no version header).
  virtual void Offer(const std::string& /*protocol_version*/) {}
};

struct ClientOptions {
  std::string client_name = "lousho";
  std::string client_version;
  std::vector<std::string> root_uris;  // file:// URIs answered to roots/list
  std::string cwd;                     // stdio servers without their own cwd start here
  long connect_timeout_ms = 10000;     // start and handshake
  long call_timeout_ms = 300000;       // one request
  int max_restarts = 3;
  std::string ca_cert_path;  // tests
  ProxySetting proxy;        // HTTP servers: the agent's `proxy:`; unset: the environment's
  // Opens the lines to the server; empty: the spec's transport. Tests pass an in-process fake.
  std::function<Result<std::unique_ptr<McpLineTransport>>(const CancelToken&)> open;
  // Called (on the connection's reader thread; keep it short) when the server says its tools
  // changed or the server was restarted.
  std::function<void()> on_tools_changed;
  // Called (on the connection's reader or listening thread; keep it short, send no request from
  // it) with "prompts" or "resources" when the server says that list changed, when a
  // subscription to its changes ended (changes may have been missed) or the server was
  // restarted.
  std::function<void(const std::string& list)> on_list_changed;
  // HTTP servers: the authorization each request carries (OAuth); null: none.
  std::shared_ptr<HttpAuth> auth;
  // The revisions offered, in the order tried: a stateless one with server/discover, another
  // with the handshake. The next is tried when the server answers that it does not speak one.
  // The conformance client pins one; stdio servers get the handshake first (servers of 2025
  // may drop, or die of, a request before initialize).
  std::vector<std::string> revisions = {kStatelessVersion, "2025-11-25"};
  // Answers what the server asks of the user (`elicitation/create`, as a 2025 request or in an
  // `input_required` result): the ElicitResult. On its own thread; `cancel` fires when the
  // connection ends. Null: every question is declined.
  std::function<Json::Value(const Json::Value& params, const CancelToken& cancel)> on_elicit;
};

struct ToolInfo {
  std::string name;
  std::string title;
  std::string description;
  Json::Value input_schema;   // an object schema
  Json::Value output_schema;  // null when none
  Json::Value annotations;    // null when none
  bool read_only = false;     // annotations.readOnlyHint
};

struct Progress {
  double progress = 0;
  std::optional<double> total;
  std::string message;
};

// Thread-safe: calls may come from several session workers at once. A server that exits is
// started again on the next use, at most max_restarts times.
class Client {
 public:
  Client(config::McpServerSpec spec, ClientOptions options);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // Starts the server (or opens the HTTP session) and runs the handshake, within
  // connect_timeout_ms and until `cancel`.
  Status Connect(const CancelToken& cancel);
  // Every tool, all pages. Clears tools_changed().
  Result<std::vector<ToolInfo>> ListTools(const CancelToken& cancel);
  // The raw CallToolResult. `on_progress` runs on the calling thread while it waits.
  Result<Json::Value> CallTool(const std::string& tool, const Json::Value& arguments,
                               const std::function<void(const Progress&)>& on_progress,
                               const CancelToken& cancel);
  Status Ping(const CancelToken& cancel);
  // Prompts and resources (agent/mcp/prompts.h, resources.h): the items of every page of
  // prompts/list, resources/list and resources/templates/list (an array), and the raw results
  // of prompts/get and resources/read.
  Result<Json::Value> ListPrompts(const CancelToken& cancel);
  Result<Json::Value> GetPrompt(const std::string& prompt, const Json::Value& arguments,
                                const CancelToken& cancel);
  // The resource lists are kept while the server promises to say when they change
  // (resources.listChanged, on a 2025 session or an open subscriptions/listen), and listed again
  // after it did.
  Result<Json::Value> ListResources(const CancelToken& cancel);
  Result<Json::Value> ListResourceTemplates(const CancelToken& cancel);
  Result<Json::Value> ReadResource(const std::string& uri, const CancelToken& cancel);
  // The capabilities the server announced (null before it connected).
  Json::Value capabilities() const;
  // Ends the connection (the server's process tree, or the HTTP session), the one a start is
  // opening too, and returns once that start has ended. Idempotent.
  void Close();

  const config::McpServerSpec& spec() const { return spec_; }
  const std::string& name() const { return spec_.name; }
  std::string protocol_version() const;
  Json::Value server_info() const;
  std::string instructions() const;
  std::string StderrTail() const;
  // The server said its tools changed, or the last list's time to live (ttlMs) has passed.
  bool tools_changed() const;
  int restarts() const;

 private:
  struct Conn;
  struct CallState;
  Result<std::shared_ptr<Conn>> Open(const CancelToken& cancel, long timeout_ms);
  // The live connection, reconnecting a dead one when restarts are left.
  Result<std::shared_ptr<Conn>> Live(const CancelToken& cancel);
  Result<Json::Value> Request(const std::shared_ptr<Conn>& conn, const std::string& method,
                              const Json::Value& params, const CancelToken& cancel, long timeout_ms,
                              const std::function<void()>* pump = nullptr,
                              const std::shared_ptr<CallState>& state = nullptr);
  // One exchange: the answer, or the error named for the user.
  Result<Json::Value> Exchange(const std::shared_ptr<Conn>& conn, const std::string& method,
                               const Json::Value& params, const CancelToken& cancel,
                               long timeout_ms, const std::function<void()>* pump,
                               const std::shared_ptr<CallState>& state);
  // The answers to an input_required result's inputRequests (keyed as asked).
  Result<Json::Value> AnswerInputs(const Json::Value& requests, const CancelToken& cancel);
  Json::Value Roots() const;
  Json::Value Capabilities() const;
  // Stateless: server/discover at `version`; a kMcpServer error when the server does not speak
  // it (the next revision offered is tried), another when it did not answer in time.
  Result<Json::Value> Discover(const std::shared_ptr<Conn>& conn, const std::string& version,
                               const CancelToken& cancel, long timeout_ms);
  // The initialize handshake offering `offered` (any of kProtocolVersions is accepted).
  Result<Json::Value> Handshake(const std::shared_ptr<Conn>& conn, const std::string& offered,
                                const CancelToken& cancel, long timeout_ms);
  // Stateless: keeps a subscriptions/listen request open for the server's list changes, opened
  // again when it ends, until the connection ends. On a thread of the connection.
  void Listen(Conn* conn, const Json::Value& capabilities);
  void BindHandlers(Conn* conn);
  // One request on the live connection (a short timeout for lists).
  Result<Json::Value> Ask(const std::string& method, const Json::Value& params,
                          const CancelToken& cancel, long timeout_ms);
  // `key` of every page of a list method, as one array.
  Result<Json::Value> ListPages(const std::string& method, const char* key,
                                const CancelToken& cancel);
  // A resource list as kept (KeptList) or listed anew.
  struct KeptList {
    Json::Value items;
    long long generation = -1;  // resources_generation_ when listed; -1: none kept
  };
  Result<Json::Value> KeptPages(const std::string& method, const char* key, KeptList* kept,
                                const CancelToken& cancel);
  // The server will say when its resources change: a kept list stays true until it does.
  bool ResourcesKept() const;
  // A list changed (or may have): tools are listed again at the next use, the others are told.
  void ListChanged(const std::string& list);

  config::McpServerSpec spec_;
  ClientOptions options_;
  std::atomic<bool> tools_changed_{false};
  std::atomic<long long> next_token_{1};
  std::atomic<long long> tools_expire_ms_{0};       // steady clock; 0: no time to live
  std::atomic<long long> resources_generation_{0};  // moves on at each change of the resources
  std::atomic<bool> listening_{false};              // a subscriptions/listen is open
  std::mutex kept_mu_;
  KeptList kept_resources_;
  KeptList kept_templates_;

  mutable std::mutex mu_;  // conn_, restarts_, negotiated values, last stderr
  std::shared_ptr<Conn> conn_;
  std::shared_ptr<Conn> opening_;  // the connection Open is starting: Close stops it as well
  int restarts_ = 0;
  bool closed_ = false;
  std::string protocol_version_;
  Json::Value server_info_;
  Json::Value capabilities_;
  std::string instructions_;
  std::string last_stderr_;
  std::mutex connect_mu_;  // one (re)connection at a time

  std::mutex calls_mu_;
  std::map<std::string, std::shared_ptr<CallState>> calls_;  // by progress token
};

}  // namespace lousho::agent::mcp
