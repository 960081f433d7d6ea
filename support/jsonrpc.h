// JSON-RPC 2.0 peer over a LineTransport: requests, notifications and responses both ways.
#pragma once

#include <json/json.h>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "support/cancel.h"
#include "support/status.h"
#include "support/transport.h"

namespace lousho::jsonrpc {

// Standard JSON-RPC error codes.
inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kMethodNotFound = -32601;
inline constexpr int kInvalidParams = -32602;
inline constexpr int kInternalError = -32603;
inline constexpr int kRequestCancelled = -32800;

struct RpcError {
  int code = kInternalError;
  std::string message;
  Json::Value data;  // null: omitted
};

// The one reply a request gets. Movable, not copyable; replying twice is a no-op, and a Reply
// dropped without an answer sends an internal error, so every request gets exactly one reply.
class Reply {
 public:
  Reply() = default;
  Reply(std::function<void(const Json::Value& msg)> send, Json::Value id);
  Reply(Reply&& other) noexcept;
  Reply& operator=(Reply&& other) noexcept;
  Reply(const Reply&) = delete;
  Reply& operator=(const Reply&) = delete;
  ~Reply();

  void Result(const Json::Value& result);
  void Error(const RpcError& error);
  void Error(int code, std::string message, Json::Value data = Json::Value());
  bool answered() const { return !send_; }
  const Json::Value& id() const { return id_; }

 private:
  std::function<void(const Json::Value&)> send_;
  Json::Value id_;
};

using RequestHandler = std::function<void(const Json::Value& params, Reply reply)>;
using NotificationHandler = std::function<void(const Json::Value& params)>;

struct PeerOptions {
  std::string record_file;  // when set, every line in and out is mirrored here
  // Called before dispatching every known request; returns an error to refuse it (e.g. "not
  // initialized"). The gate decides which methods pass.
  std::function<std::optional<RpcError>(const std::string& method)> gate;
  // The notification a cancelled or timed-out Call sends with {"requestId": id}: ACP's
  // "$/cancel_request", MCP's "notifications/cancelled".
  std::string cancel_method = "$/cancel_request";
  // A line that is no JSON-RPC message (not JSON, not an object, no valid jsonrpc, method or
  // id) is answered with -32700 or -32600, as JSON-RPC asks of a server (the ACP door's
  // stdin). False (an MCP server's stdout, where such lines are stray logging): it is logged,
  // the first few and then a count at 10, 100, 1000... lines, and dropped, never answered:
  // answering a server that floods its stdout only fills its stdin.
  bool answer_malformed = true;
  // Names the other side in logs (e.g. "MCP server 'github'"); empty: "the peer".
  std::string name{};
  // More than this many JSON items (array elements, object members, containers) in one line:
  // it is not parsed (a million tiny values would take gigabytes) but refused as one over the
  // line limit is (Oversized). 0: no limit.
  size_t max_items = 0;
};

// Lets a caller do other work on its own thread while its Call waits (an MCP tool call relays
// progress from the waiting session worker): each time the wait wakes, `pending` is checked under
// the peer's lock (keep it cheap: an atomic), and when it is true `run` is called without the
// lock. Peer::Wake() wakes every waiting call.
struct CallHooks {
  std::function<bool()> pending;
  std::function<void()> run;
};

// Reads lines on the thread that calls Run(); handlers run there too and must not block (hand
// long work to another thread and keep the Reply). Send*/Notify/Call are thread-safe.
class Peer {
 public:
  Peer(LineTransport* transport, PeerOptions options);
  ~Peer();

  void OnRequest(const std::string& method, RequestHandler handler);
  void OnNotification(const std::string& method, NotificationHandler handler);

  // Runs until the input ends. Then fails every pending outgoing call.
  void Run();

  void Notify(const std::string& method, const Json::Value& params);
  // The same, with params already written as compact JSON exactly as WriteJson writes it (a
  // hot-path writer that skips the Json::Value); the line is byte for byte what Notify would
  // send for the same params.
  void NotifySerialized(std::string_view method, std::string_view params_json);
  // The same for many notifications of one method, written together: no other line comes
  // between them, and the transport may write them in one go.
  void NotifySerializedBatch(std::string_view method, const std::vector<std::string>& params_json);
  // Sends a request and blocks for its response. Returns LOUSHO_CLIENT_ERROR with the error's
  // message on an error response, LOUSHO_CANCELLED when `cancel` fires first and
  // LOUSHO_TIMEOUT when `timeout_ms` (>= 0) passes first (a $/cancel_request is sent then), and
  // LOUSHO_DISCONNECTED when input ends.
  Result<Json::Value> Call(const std::string& method, const Json::Value& params,
                           const CancelToken& cancel, long timeout_ms = -1,
                           const CallHooks* hooks = nullptr);
  // Wakes every waiting Call so it checks its hooks.
  void Wake();

  bool closed() const { return closed_.load(); }

 private:
  struct Pending {
    bool done = false;
    bool is_error = false;
    ErrorCode code = ErrorCode::kClientError;  // of a failure made here (FailPending)
    Json::Value value;
  };
  void Dispatch(const std::string& line);
  // A message without "jsonrpc": "2.0": false when it is refused (or ignored) for that.
  bool CheckVersion(const Json::Value& msg, const Json::Value& reply_id, std::string_view line);
  // A message without a method: a response, or refused.
  void DispatchMethodless(Json::Value& msg, const Json::Value* id, const Json::Value& reply_id,
                          std::string_view line);
  // A request or notification: handed to its handler.
  void DispatchCall(const Json::Value& msg, const Json::Value* id, const Json::Value& reply_id,
                    std::string_view line);
  void DispatchRequest(const std::string& name, const Json::Value& params, const Json::Value& id);
  void DispatchResponse(Json::Value& msg, const Json::Value& id);
  // Fails the pending call with that id; false when there is none.
  bool FailPending(const Json::Value& id, const std::string& why,
                   ErrorCode code = ErrorCode::kClientError);
  // A line over the transport's limit (or max_items), of which `head` is the start and `why`
  // says how large: the call it answers fails at once (LOUSHO_TOOL_TOO_LARGE) rather than
  // waiting for its timeout.
  void Oversized(std::string_view head, const std::string& why, size_t size);
  // Answers a line that is no JSON-RPC message, or logs and drops it (answer_malformed).
  void Refuse(const Json::Value& id, const RpcError& error, std::string_view line);
  void Send(const Json::Value& msg);
  void SendLine(std::string line);
  static std::string NotificationLine(std::string_view method, std::string_view params_json);
  void Record(char dir, const std::string& line);

  LineTransport* transport_;
  PeerOptions options_;
  std::map<std::string, RequestHandler> requests_;
  std::map<std::string, NotificationHandler> notifications_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<long long, std::shared_ptr<Pending>> pending_;
  long long next_id_ = 0;
  std::atomic<bool> closed_{false};
  unsigned long long refused_ = 0;  // lines dropped by Refuse (reader thread only)
  std::mutex record_mu_;
  FILE* record_ = nullptr;
};

}  // namespace lousho::jsonrpc
