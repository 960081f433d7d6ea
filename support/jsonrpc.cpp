// JSON-RPC 2.0 peer.
#include "support/jsonrpc.h"

#include <chrono>
#include <cstdio>

#include "support/json_util.h"
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
      log::Warn("skipped an input line of " + std::to_string(size) + " bytes (over the limit)");
      Send(ErrorMessage(Json::Value(), RpcError{kInvalidRequest,
                                                "Message of " + std::to_string(size) +
                                                    " bytes exceeds the line size limit; skipped",
                                                Json::Value()}));
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

void Peer::Dispatch(const std::string& line) {
  auto parsed = ParseJson(line);
  if (!parsed.ok()) {
    Send(ErrorMessage(Json::Value(), RpcError{kParseError, "Parse error: " + parsed.error().message,
                                              Json::Value()}));
    return;
  }
  const Json::Value& msg = *parsed;
  if (!msg.isObject()) {
    Send(ErrorMessage(
        Json::Value(),
        RpcError{kInvalidRequest, "Invalid Request: expected a JSON object", Json::Value()}));
    return;
  }
  const Json::Value* method = FindMember(msg, "method");
  const Json::Value* id = FindMember(msg, "id");
  const Json::Value* version = FindMember(msg, "jsonrpc");
  Json::Value reply_id = (id && ValidId(*id)) ? *id : Json::Value();
  if (!version || !version->isString() || StringOr(msg, "jsonrpc") != "2.0") {
    if (method || !id) {
      if (id || !method)
        Send(ErrorMessage(
            reply_id,
            RpcError{kInvalidRequest, "Invalid Request: jsonrpc must be \"2.0\"", Json::Value()}));
      return;
    }
  }
  if (method == nullptr) {
    if (id && !FindMember(msg, "result") && !FindMember(msg, "error")) {
      // Neither a request nor a response: when it names one of our calls, that call failed;
      // answering it would put our call's id on an error the client could take for its own.
      if (!FailPending(*id, "the client sent a reply with neither result nor error"))
        Send(ErrorMessage(
            Json::Value(),
            RpcError{kInvalidRequest, "Invalid Request: missing method", Json::Value()}));
      return;
    }
    if (!id) {
      Send(ErrorMessage(
          reply_id, RpcError{kInvalidRequest, "Invalid Request: missing method", Json::Value()}));
      return;
    }
    DispatchResponse(msg, *id);
    return;
  }
  if (!method->isString()) {
    if (id)
      Send(ErrorMessage(
          reply_id,
          RpcError{kInvalidRequest, "Invalid Request: method must be a string", Json::Value()}));
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
    Send(ErrorMessage(Json::Value(),
                      RpcError{kInvalidRequest, "Invalid Request: id must be a string or integer",
                               Json::Value()}));
    return;
  }
  Reply reply([this](const Json::Value& m) { Send(m); }, *id);
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
void Peer::DispatchResponse(const Json::Value& msg, const Json::Value& id) {
  std::optional<long long> key = AsInt64(id);
  if (!key) return;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = pending_.find(*key);
  if (it == pending_.end()) return;
  const Json::Value* error = FindMember(msg, "error");
  it->second->done = true;
  it->second->is_error = error != nullptr;
  it->second->value = error ? *error : MemberOrNull(msg, "result");
  pending_.erase(it);
  cv_.notify_all();
}

bool Peer::FailPending(const Json::Value& id, const std::string& why) {
  std::optional<long long> key = AsInt64(id);
  if (!key) return false;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = pending_.find(*key);
  if (it == pending_.end()) return false;
  it->second->done = true;
  it->second->is_error = true;
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
  // Members in jsoncpp's order (jsonrpc, method, params), as WriteJson writes them.
  std::string line;
  line.reserve(40 + method.size() + params_json.size());
  line.append("{\"jsonrpc\":\"2.0\",\"method\":");
  AppendJsonString(method, &line);
  line.append(",\"params\":");
  line.append(params_json);
  line.push_back('}');
  SendLine(std::move(line));
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
      return MakeError(ErrorCode::kClientError, message);
    }
    return pending->value;
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
