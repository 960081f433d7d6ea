// MCP over HTTP as a line transport beneath jsonrpc::Peer: streamable HTTP (each message
// POSTed, answered with JSON or an event stream) and the legacy SSE transport (one event
// stream, messages POSTed to the endpoint it names).
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "config/agent_spec.h"
#include "support/cancel.h"
#include "support/http/http_client.h"
#include "support/http/sse_parser.h"
#include "support/status.h"
#include "support/transport.h"

namespace lousho::agent::mcp {

// Starts the message of an error response the transport makes up itself for a request whose
// POST failed (the server sent no answer).
inline constexpr std::string_view kTransportErrorPrefix = "HTTP request failed: ";

// Authorization for a server that wants it (OAuth): the header each request carries, and what
// to do when the server refuses one. Thread-safe: requests run side by side.
class HttpAuth {
 public:
  virtual ~HttpAuth() = default;
  // The Authorization header's value, or "" for none.
  virtual std::string Authorization() = 0;
  // The server answered 401 or 403 with this WWW-Authenticate: true when the request should be
  // sent once more (a new token is at hand).
  virtual bool Unauthorized(int status, const std::string& www_authenticate) = 0;
};

struct HttpTransportOptions {
  config::McpTransport kind = config::McpTransport::kHttp;  // kHttp or kSse
  std::string url;
  std::vector<std::pair<std::string, std::string>> headers;  // sent with every request
  long connect_timeout_ms = 10000;
  long read_timeout_ms = 300000;   // longest silence within one answer
  std::string ca_cert_path;        // tests
  ProxySetting proxy;              // the agent's `proxy:`; unset: the environment's
  std::shared_ptr<HttpAuth> auth;  // null: no authorization
};

// Lines written are JSON-RPC messages going to the server; lines read are the server's. Each
// POST runs on its own thread, so WriteLine never waits for the network. A request whose POST
// fails is answered locally with an error response, so its caller does not wait for a timeout.
// Input ends at Close(), when the legacy event stream ends, or when the server forgets the
// session (404): the peer then sees the connection closed, and the client connects anew.
// Thread-safe.
class HttpLineTransport : public LineTransport {
 public:
  // kSse: opens the event stream and waits (bounded by connect_timeout_ms and `cancel`) for the
  // endpoint event. kHttp: checks the URL only.
  static Result<std::unique_ptr<HttpLineTransport>> Open(HttpTransportOptions options,
                                                         const CancelToken& cancel);
  ~HttpLineTransport() override;

  ReadStatus ReadLine(std::string* line, size_t* line_size) override;
  void WriteLine(std::string line) override;

  // Sent as MCP-Protocol-Version on every later request (streamable HTTP; "" for none). A
  // stateless revision keeps no session (Mcp-Session-Id is neither kept nor sent) and names
  // each request in the standard headers: Mcp-Method, and Mcp-Name for the tool, prompt or
  // resource it is about.
  void SetProtocolVersion(const std::string& version, bool stateless = false);
  // Streamable HTTP: opens the GET event stream for messages the server sends on its own
  // (list changes); a server without one (405) is fine.
  void Listen();
  // True once input has ended (closed, the legacy stream ended, or the session was forgotten).
  bool ended() const;
  // Cancels every request in flight, ends the session (DELETE, bounded), ends input, and joins
  // the threads. Idempotent.
  void Close();

 private:
  struct Worker {
    std::thread thread;
    bool done = false;
  };
  explicit HttpLineTransport(HttpTransportOptions options, BaseUrl base, std::string path);
  void Post(const std::string& line);
  // True when a 401/403 answer got a new token from options_.auth: the request goes again.
  bool Reauthorized(const HttpStreamResult& res);
  // A 404 for a session we had: input ends (the client starts anew). False without a session.
  bool ForgetSession(const std::string& line);
  void OpenEventStream(const std::string& path, bool legacy);
  // The answer to `line` was to come on an event stream that ended first: GET it again with
  // Last-Event-ID after `retry_ms` (the stream's `retry:`, -1 when none).
  void Resume(const std::string& line, const std::string& last_event_id, long retry_ms);
  // GETs the event stream at `path` (from after `last_event_id` when not empty), handing each
  // event to on_event, until it ends, fails, or Close() cancels it.
  HttpStreamResult ReadEventStream(const std::string& path, const std::string& last_event_id,
                                   long read_timeout_ms,
                                   const std::function<void(const SseEvent&)>& on_event);
  // A resumed stream failed for good: the caller of `line` hears so at once.
  void ResumeFailed(const std::string& line, const HttpStreamResult& res);
  // Legacy: the `endpoint` event names where messages are POSTed.
  void SetEndpoint(const std::string& data);
  // The GET stream ended (only Close() ends it normally): a legacy transport's input ends.
  void EventStreamEnded(const HttpStreamResult& res, bool legacy);
  void Deliver(const std::string& json_text);
  void EndInput();
  void Spawn(std::function<void()> fn);
  std::vector<std::pair<std::string, std::string>> Headers(bool post) const;
  // The standard headers naming the request `msg` (stateless revisions only).
  void AddRequestHeaders(const Json::Value& msg,
                         std::vector<std::pair<std::string, std::string>>* headers) const;
  HttpClient Client(long read_timeout_ms) const;

  HttpTransportOptions options_;
  BaseUrl base_;
  std::string path_;  // the URL's path and query
  CancelSource closing_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::string> in_;  // messages from the server
  bool input_ended_ = false;
  bool closed_ = false;
  std::string session_id_;  // Mcp-Session-Id
  std::string protocol_version_;
  bool stateless_ = false;
  std::string endpoint_;      // legacy: where messages are POSTed
  std::string stream_error_;  // legacy: why the stream ended before the endpoint came
  std::list<Worker> workers_;
};

}  // namespace lousho::agent::mcp
