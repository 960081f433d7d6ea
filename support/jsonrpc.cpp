// JSON-RPC 2.0 peer.
#include "support/jsonrpc.h"

#include <chrono>
#include <cstdio>

#include "support/files.h"
#include "support/json_util.h"
#include "support/json_writer.h"
#include "support/log.h"

namespace lousho::jsonrpc {

namespace {
Json::Value ErrorObject(const RpcError& e) {
  Json::Value err(Json::objectValue);
  err["code"] = e.code;
  err["message"] = e.message;
  if (!e.data.isNull()) err["data"] = e.data;
  return err;
}

Json::Value ErrorMessage(const Json::Value& id, const RpcError& e) {
  Json::Value msg(Json::objectValue);
  msg["jsonrpc"] = "2.0";
  msg["id"] = id;
  msg["error"] = ErrorObject(e);
  return msg;
}

// A JSON-RPC id as ACP types it: a string, null, or an integer within int64 (echoed as sent).
// Fractions, exponents and integers past int64 are answered -32600 with a null id.
bool ValidId(const Json::Value& id) {
  return id.isString() || id.isNull() || id.type() == Json::intValue ||
         (id.type() == Json::uintValue && id.isInt64());
}

// What the first bytes of a message cut short tell: its id, when a top-level "id" member with a
// whole value comes before the cut, and whether a "method" member does (a request or a
// notification, no answer).
struct Head {
  std::optional<Json::Value> id;
  bool has_method = false;
};

Head ReadHead(std::string_view head) {
  Head h;
  JsonCursor c(head);
  if (c.Peek() != JsonCursor::Kind::kObject || !c.BeginObject()) return h;
  std::string key;
  while (c.NextMember(&key)) {
    if (key == "method") h.has_method = true;
    if (key != "id") {
      if (!c.Skip()) break;
      continue;
    }
    Json::Value id;
    // A value that reaches the cut may be cut short itself ("id":12 of 123).
    if (!c.Value(&id) || c.offset() >= head.size()) break;
    h.id = std::move(id);
  }
  return h;
}

// A line as a log shows it: its start, as a JSON string (control bytes escaped).
std::string Excerpt(std::string_view line) {
  constexpr size_t kMax = 120;
  std::string out;
  AppendJsonString(line.substr(0, kMax), &out);
  if (line.size() > kMax) out += "...";
  return out;
}

// The items of a JSON text (elements and members after the first: commas; containers: their
// openings), counted up to just past `stop_after`, without parsing it.
size_t CountJsonItems(std::string_view s, size_t stop_after) {
  size_t n = 0;
  for (size_t i = 0; i < s.size() && n <= stop_after; ++i) {
    const char c = s[i];
    if (c == ',' || c == '{' || c == '[') {
      ++n;
    } else if (c == '"') {
      // Skip the string: to its closing quote, past escapes.
      for (++i; i < s.size() && s[i] != '"'; ++i) i += s[i] == '\\' ? 1 : 0;
    }
  }
  return n;
}

bool PowerOfTen(unsigned long long n) {
  while (n >= 10 && n % 10 == 0) n /= 10;
  return n == 1;
}
}  // namespace

Reply::Reply(std::function<void(const Json::Value&)> send, Json::Value id)
    : send_(std::move(send)), id_(std::move(id)) {}

Reply::Reply(Reply&& other) noexcept : send_(std::move(other.send_)), id_(std::move(other.id_)) {
  other.send_ = nullptr;
}

Reply& Reply::operator=(Reply&& other) noexcept {
  if (this != &other) {
    if (send_) Error(kInternalError, "request dropped without a reply");
    send_ = std::move(other.send_);
    id_ = std::move(other.id_);
    other.send_ = nullptr;
  }
  return *this;
}

Reply::~Reply() {
  if (send_) Error(kInternalError, "request dropped without a reply");
}

void Reply::Result(const Json::Value& result) {
  if (!send_) return;
  Json::Value msg(Json::objectValue);
  msg["jsonrpc"] = "2.0";
  msg["id"] = id_;
  msg["result"] = result;
  auto send = std::move(send_);
  send_ = nullptr;
  send(msg);
}

void Reply::Error(const RpcError& error) {
  if (!send_) return;
  auto send = std::move(send_);
  send_ = nullptr;
  send(ErrorMessage(id_, error));
}

void Reply::Error(int code, std::string message, Json::Value data) {
  Error(RpcError{code, std::move(message), std::move(data)});
}

Peer::Peer(LineTransport* transport, PeerOptions options)
    : transport_(transport), options_(std::move(options)) {
  if (!options_.record_file.empty()) {
    record_ = std::fopen(options_.record_file.c_str(), "w");
    if (!record_) log::Error("cannot open record file " + options_.record_file);
  }
}

Peer::~Peer() {
  if (record_) std::fclose(record_);
}

void Peer::OnRequest(const std::string& method, RequestHandler handler) {
  requests_[method] = std::move(handler);
}

void Peer::OnNotification(const std::string& method, NotificationHandler handler) {
  notifications_[method] = std::move(handler);
}

void Peer::Record(char dir, const std::string& line) {
  if (!record_) return;
  std::lock_guard<std::mutex> lock(record_mu_);
  std::fprintf(record_, "%c %s\n", dir, line.c_str());
  std::fflush(record_);
}

void Peer::Send(const Json::Value& msg) { SendLine(WriteJson(msg)); }

void Peer::SendLine(std::string line) {
  Record('<', line);
  transport_->WriteLine(std::move(line));
}

void Peer::Run() {
  std::string line;
  for (;;) {
    size_t size = 0;
    ReadStatus st = transport_->ReadLine(&line, &size);
    if (st == ReadStatus::kEof) break;
    if (st == ReadStatus::kTooLong) {
      const size_t limit = transport_->max_line_bytes();
      Oversized(line,
                "a message of " + ByteSize(size) +
                    (limit > 0 ? ", over the limit of " + ByteSize(limit) : ""),
                size);
      continue;
    }
    if (options_.max_items > 0 && line.size() > options_.max_items &&
        CountJsonItems(line, options_.max_items) > options_.max_items) {
      Oversized(
          std::string_view(line).substr(0, LineTransport::kTooLongHeadBytes),
          "a message of more than " + std::to_string(options_.max_items) + " JSON items, the limit",
          line.size());
      continue;
    }
    Record('>', line);
    // Blank lines are tolerated silently.
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    Dispatch(line);
  }
  closed_ = true;
  std::lock_guard<std::mutex> lock(mu_);
  cv_.notify_all();
}

void Peer::Oversized(std::string_view head, const std::string& why, size_t size) {
  log::Warn((options_.name.empty() ? std::string("the peer") : options_.name) + " sent " + why +
            "; skipped");
  // The call it answers fails now; when its id is not in the first bytes, any call may be it.
  // A request or notification (its method comes first) answers none.
  Head h = ReadHead(head);
  if (!h.has_method && h.id) {
    FailPending(*h.id, why, ErrorCode::kToolTooLarge);
  } else if (!h.has_method) {
    std::vector<Json::Value> ids;
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (const auto& [id, pending] : pending_) ids.emplace_back(static_cast<Json::Int64>(id));
    }
    for (const auto& id : ids) FailPending(id, why, ErrorCode::kToolTooLarge);
  }
  if (options_.answer_malformed)
    Send(ErrorMessage(Json::Value(), RpcError{kInvalidRequest,
                                              "Message of " + std::to_string(size) +
                                                  " bytes exceeds the line size limit; skipped",
                                              Json::Value()}));
}

void Peer::Refuse(const Json::Value& id, const RpcError& error, std::string_view line) {
  if (options_.answer_malformed) {
    Send(ErrorMessage(id, error));
    return;
  }
  ++refused_;
  const std::string who = options_.name.empty() ? std::string("the peer") : options_.name;
  if (refused_ <= 3) {
    log::Warn(who + ": ignored a line that is not JSON-RPC (" + error.message +
              "): " + Excerpt(line));
  } else if (PowerOfTen(refused_)) {
    log::Warn(who + ": ignored " + std::to_string(refused_) +
              " lines that are not JSON-RPC so far (only JSON-RPC belongs on its stdout; logs "
              "belong on stderr)");
  }
}

void Peer::Dispatch(const std::string& line) {
  auto parsed = ParseJson(line);
  if (!parsed.ok()) {
    Refuse(Json::Value(),
           RpcError{kParseError, "Parse error: " + parsed.error().message, Json::Value()}, line);
    return;
  }
  Json::Value& msg = *parsed;
  if (!msg.isObject()) {
    Refuse(Json::Value(),
           RpcError{kInvalidRequest, "Invalid Request: expected a JSON object", Json::Value()},
           line);
    return;
  }
  const Json::Value* id = FindMember(msg, "id");
  const Json::Value reply_id = (id && ValidId(*id)) ? *id : Json::Value();
  if (!CheckVersion(msg, reply_id, line)) return;
  if (FindMember(msg, "method") == nullptr) {
    DispatchMethodless(msg, id, reply_id, line);
  } else {
    DispatchCall(msg, id, reply_id, line);
  }
}

// A response without the version is still taken (some clients leave it out); a request or
// notification is not, and only a request is answered.
bool Peer::CheckVersion(const Json::Value& msg, const Json::Value& reply_id,
                        std::string_view line) {
  const Json::Value* version = FindMember(msg, "jsonrpc");
  if (version && version->isString() && StringOr(msg, "jsonrpc") == "2.0") return true;
  const Json::Value* method = FindMember(msg, "method");
  const Json::Value* id = FindMember(msg, "id");
  if (!method && id) return true;
  if (id || !method)
    Refuse(reply_id,
           RpcError{kInvalidRequest, "Invalid Request: jsonrpc must be \"2.0\"", Json::Value()},
           line);
  return false;
}

void Peer::DispatchMethodless(Json::Value& msg, const Json::Value* id, const Json::Value& reply_id,
                              std::string_view line) {
  if (!id) {
    Refuse(reply_id, RpcError{kInvalidRequest, "Invalid Request: missing method", Json::Value()},
           line);
    return;
  }
  if (!FindMember(msg, "result") && !FindMember(msg, "error")) {
    // Neither a request nor a response: when it names one of our calls, that call failed;
    // answering it would put our call's id on an error the client could take for its own.
    if (!FailPending(*id, "the client sent a reply with neither result nor error"))
      Refuse(Json::Value(),
             RpcError{kInvalidRequest, "Invalid Request: missing method", Json::Value()}, line);
    return;
  }
  DispatchResponse(msg, *id);
}

void Peer::DispatchCall(const Json::Value& msg, const Json::Value* id, const Json::Value& reply_id,
                        std::string_view line) {
  if (!FindMember(msg, "method")->isString()) {
    if (id)
      Refuse(reply_id,
             RpcError{kInvalidRequest, "Invalid Request: method must be a string", Json::Value()},
             line);
    return;
  }
  const std::string name = StringOr(msg, "method");
  if (log::Enabled(log::Level::kDebug))
    log::Debug(std::string(id ? "request " : "notification ") + name);
  const Json::Value* given = FindMember(msg, "params");
  Json::Value params = given ? *given : Json::Value(Json::objectValue);
  if (!id) {
    auto it = notifications_.find(name);
    if (it != notifications_.end()) it->second(params);
    return;  // unknown notifications are ignored
  }
  if (!ValidId(*id)) {
    Refuse(
        Json::Value(),
        RpcError{kInvalidRequest, "Invalid Request: id must be a string or integer", Json::Value()},
        line);
    return;
  }
  DispatchRequest(name, params, *id);
}

void Peer::DispatchRequest(const std::string& name, const Json::Value& params,
                           const Json::Value& id) {
  Reply reply([this](const Json::Value& m) { Send(m); }, id);
  auto it = requests_.find(name);
  if (it == requests_.end()) {
    reply.Error(kMethodNotFound, "Method not found: " + name);
    return;
  }
  if (!params.isObject() && !params.isArray()) {
    reply.Error(kInvalidParams, "Invalid params: params must be an object");
    return;
  }
  if (options_.gate) {
    if (auto err = options_.gate(name)) {
      reply.Error(*err);
      return;
    }
  }
  it->second(params, std::move(reply));
}

// A response to one of our requests. One that answers no pending call (an id we never issued,
// of any JSON type or size, or one already given up) is dropped: there is no one to tell.
void Peer::DispatchResponse(Json::Value& msg, const Json::Value& id) {
  std::optional<long long> key = AsInt64(id);
  if (!key) return;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = pending_.find(*key);
  if (it == pending_.end()) return;
  // Moved, not copied: a result may be large.
  const bool error = FindMember(msg, "error") != nullptr;
  it->second->done = true;
  it->second->is_error = error;
  msg.removeMember(error ? "error" : "result", &it->second->value);
  pending_.erase(it);
  cv_.notify_all();
}

bool Peer::FailPending(const Json::Value& id, const std::string& why, ErrorCode code) {
  std::optional<long long> key = AsInt64(id);
  if (!key) return false;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = pending_.find(*key);
  if (it == pending_.end()) return false;
  it->second->done = true;
  it->second->is_error = true;
  it->second->code = code;
  it->second->value = Json::Value(Json::objectValue);
  it->second->value["message"] = why;
  pending_.erase(it);
  cv_.notify_all();
  return true;
}

void Peer::Notify(const std::string& method, const Json::Value& params) {
  Json::Value msg(Json::objectValue);
  msg["jsonrpc"] = "2.0";
  msg["method"] = method;
  msg["params"] = params;
  Send(msg);
}

void Peer::NotifySerialized(std::string_view method, std::string_view params_json) {
  SendLine(NotificationLine(method, params_json));
}

void Peer::NotifySerializedBatch(std::string_view method,
                                 const std::vector<std::string>& params_json) {
  std::vector<std::string> lines;
  lines.reserve(params_json.size());
  for (const std::string& params : params_json) {
    lines.push_back(NotificationLine(method, params));
    Record('<', lines.back());
  }
  transport_->WriteLines(std::move(lines));
}

std::string Peer::NotificationLine(std::string_view method, std::string_view params_json) {
  // Members in jsoncpp's order (jsonrpc, method, params), as WriteJson writes them.
  std::string line;
  line.reserve(40 + method.size() + params_json.size());
  {
    JsonWriter w(&line);
    w.ObjectBegin();
    w.Attribute("jsonrpc", "2.0");
    w.Attribute("method", method);
    w.AttributeBegin("params");
    w.RawValue(params_json);
    w.AttributeEnd();
    w.ObjectEnd();
  }
  return line;
}

void Peer::Wake() {
  std::lock_guard<std::mutex> lock(mu_);
  cv_.notify_all();
}

Result<Json::Value> Peer::Call(const std::string& method, const Json::Value& params,
                               const CancelToken& cancel, long timeout_ms, const CallHooks* hooks) {
  auto pending = std::make_shared<Pending>();
  long long id;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return MakeError(ErrorCode::kDisconnected, "the client has disconnected");
    id = next_id_++;
    pending_[id] = pending;
  }
  Json::Value msg(Json::objectValue);
  msg["jsonrpc"] = "2.0";
  msg["id"] = static_cast<Json::Int64>(id);
  msg["method"] = method;
  msg["params"] = params;
  ScopedCancelCallback wake(cancel, [this] {
    std::lock_guard<std::mutex> lock(mu_);
    cv_.notify_all();
  });
  Send(msg);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  std::unique_lock<std::mutex> lock(mu_);
  auto has_news = [&] { return hooks && hooks->pending && hooks->pending(); };
  auto ready = [&] { return pending->done || closed_ || cancel.cancelled() || has_news(); };
  bool timed_out = false;
  for (;;) {
    if (timeout_ms >= 0) {
      timed_out = !cv_.wait_until(lock, deadline, ready);
    } else {
      cv_.wait(lock, ready);
    }
    if (timed_out || pending->done || closed_ || cancel.cancelled()) break;
    lock.unlock();
    if (hooks->run) hooks->run();
    lock.lock();
  }
  if (pending->done) {
    if (pending->is_error) {
      // The error object may be anything a client sends; its message only when it is a string.
      std::string message = StringOr(pending->value, "message", "error");
      return MakeError(pending->code, message);
    }
    return std::move(pending->value);
  }
  pending_.erase(id);
  lock.unlock();
  if (closed_) return MakeError(ErrorCode::kDisconnected, "the client has disconnected");
  if (timed_out) {
    log::Warn(method + ": no answer from the other side within " + std::to_string(timeout_ms) +
              " ms; giving up");
    Json::Value cancel_params(Json::objectValue);
    cancel_params["requestId"] = static_cast<Json::Int64>(id);
    Notify(options_.cancel_method, cancel_params);
    return MakeError(ErrorCode::kTimeout, method + ": no answer from the other side in time");
  }
  Json::Value cancel_params(Json::objectValue);
  cancel_params["requestId"] = static_cast<Json::Int64>(id);
  Notify(options_.cancel_method, cancel_params);
  return MakeError(ErrorCode::kCancelled, method + " was cancelled");
}

}  // namespace lousho::jsonrpc
