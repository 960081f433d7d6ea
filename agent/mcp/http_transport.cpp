// MCP's HTTP transports over the HTTP module, as one line transport.
#include "agent/mcp/http_transport.h"

#include <chrono>

#include "agent/mcp/oauth.h"
#include "support/http/sse_parser.h"
#include "support/json_util.h"
#include "support/log.h"
#include "support/text.h"

namespace lousho::agent::mcp {
namespace {

constexpr size_t kMaxJsonBodyBytes = size_t{64} << 20;

// The path and query of a URL ("http://h:1/mcp?k=v" -> "/mcp?k=v").
std::string PathOf(const std::string& url) {
  auto parts = SplitUrl(url);
  return parts ? parts->path : "/";
}

// An error response to the request `line` (when it is one), so its Call ends at once. Its
// message starts with kTransportErrorPrefix: the client tells the user the request failed on
// its way, not that the server answered with an error.
std::optional<std::string> LocalError(const std::string& line, const std::string& message) {
  auto msg = ParseJson(line);
  if (!msg.ok() || !msg->isObject()) return std::nullopt;
  const Json::Value* id = FindMember(*msg, "id");
  if (!id || !FindMember(*msg, "method")) return std::nullopt;
  Json::Value reply(Json::objectValue);
  reply["jsonrpc"] = "2.0";
  reply["id"] = *id;
  reply["error"]["code"] = -32000;
  reply["error"]["message"] = std::string(kTransportErrorPrefix) + message;
  return WriteJson(reply);
}

std::string HeaderOf(const HeaderMap& headers, const std::string& name) {
  auto it = headers.find(name);
  return it == headers.end() ? std::string() : it->second;
}

// What went wrong with a POST, or empty. A redirect that was not followed says which, and why.
std::string Problem(const HttpStreamResult& res, bool malformed) {
  if (malformed) return "the server's answer was too large or malformed";
  if (res.outcome == HttpOutcome::kRedirected) return res.transport_error;
  if (res.status >= 400)
    return "HTTP " + std::to_string(res.status) +
           (res.error_body.empty() ? "" : ": " + res.error_body.substr(0, 500));
  if (res.outcome != HttpOutcome::kCompleted && res.outcome != HttpOutcome::kStopped)
    return res.transport_error.empty() ? "the connection failed" : res.transport_error;
  return "";
}

// The answer to one POST as it streams in: one JSON body, or an event stream of messages. Which
// one shows in its first byte (the module reports the Content-Type only when the body is done).
class AnswerReader {
 public:
  AnswerReader(Json::Value request_id, bool hold, std::function<void(const std::string&)> deliver)
      : request_id_(std::move(request_id)), hold_(hold), deliver_(std::move(deliver)) {}

  // The body callback: false stops the transfer (too large, malformed).
  bool Feed(std::string_view bytes) {
    if (kind_ == Kind::kUnknown) {
      size_t first = bytes.find_first_not_of(" \t\r\n");
      if (first == std::string_view::npos) return true;
      kind_ = (bytes[first] == '{' || bytes[first] == '[') ? Kind::kJson : Kind::kEvents;
    }
    if (kind_ == Kind::kJson) {
      failed_ = json_.size() + bytes.size() > kMaxJsonBodyBytes;
      if (!failed_) json_.append(bytes);
      return !failed_;
    }
    events_.clear();
    failed_ = !sse_.Feed(bytes, &events_).ok();
    if (failed_) return false;
    for (const auto& e : events_) Event(e);
    return true;
  }
  // The request is done: what was held back, or the JSON body, is delivered.
  void Finish() {
    for (const auto& m : held_) deliver_(m);
    held_.clear();
    if (kind_ == Kind::kJson && !failed_) deliver_(json_);
  }
  bool failed() const { return failed_; }
  bool events() const { return kind_ == Kind::kEvents; }
  bool answered() const { return answered_; }
  const std::string& last_event_id() const { return last_event_id_; }
  long retry_ms() const { return sse_.retry_ms(); }

 private:
  enum class Kind { kUnknown, kJson, kEvents };
  void Event(const SseEvent& e) {
    last_event_id_ = e.id;
    if ((!e.event.empty() && e.event != "message") || e.data.empty()) return;
    if (!request_id_.isNull() && e.data.find("\"id\"") != std::string::npos) {
      auto msg = ParseJson(e.data);
      answered_ = answered_ || (msg.ok() && !FindMember(*msg, "method") &&
                                MemberOrNull(*msg, "id") == request_id_);
    }
    if (hold_) {
      held_.push_back(e.data);
    } else {
      deliver_(e.data);
    }
  }

  Json::Value request_id_;
  bool hold_;
  std::function<void(const std::string&)> deliver_;
  Kind kind_ = Kind::kUnknown;
  std::string json_;
  SseParser sse_;
  std::vector<SseEvent> events_;
  std::vector<std::string> held_;
  bool failed_ = false;
  bool answered_ = false;
  std::string last_event_id_;
};

}  // namespace

HttpLineTransport::HttpLineTransport(HttpTransportOptions options, BaseUrl base, std::string path)
    : options_(std::move(options)), base_(std::move(base)), path_(std::move(path)) {}

Result<std::unique_ptr<HttpLineTransport>> HttpLineTransport::Open(HttpTransportOptions options,
                                                                   const CancelToken& cancel) {
  auto base = ParseBaseUrl(options.url);
  if (!base.ok()) return MakeError(ErrorCode::kMcpServer, base.error().message);
  std::string path = PathOf(options.url);
  std::unique_ptr<HttpLineTransport> t(
      new HttpLineTransport(std::move(options), std::move(*base), std::move(path)));
  if (t->options_.kind != config::McpTransport::kSse) return t;
  t->OpenEventStream(t->path_, /*legacy=*/true);
  // Registered before the lock is taken: a token already cancelled runs the callback at once.
  ScopedCancelCallback wake(cancel, [raw = t.get()] {
    std::lock_guard<std::mutex> l(raw->mu_);
    raw->cv_.notify_all();
  });
  std::unique_lock<std::mutex> lock(t->mu_);
  bool ready = t->cv_.wait_for(
      lock, std::chrono::milliseconds(t->options_.connect_timeout_ms),
      [&] { return !t->endpoint_.empty() || t->input_ended_ || cancel.cancelled(); });
  std::string why = t->stream_error_;
  bool have = !t->endpoint_.empty();
  lock.unlock();
  if (have) return t;
  t->Close();
  if (cancel.cancelled()) return MakeError(ErrorCode::kCancelled, "cancelled while connecting");
  if (!ready) return MakeError(ErrorCode::kTimeout, "the event stream named no endpoint in time");
  return MakeError(ErrorCode::kMcpServer,
                   why.empty() ? "the event stream ended before naming an endpoint" : why);
}

HttpLineTransport::~HttpLineTransport() { Close(); }

HttpClient HttpLineTransport::Client(long read_timeout_ms) const {
  HttpOptions o;
  o.connect_timeout_s = static_cast<int>(std::max(1L, (options_.connect_timeout_ms + 999) / 1000));
  o.idle_timeout_s = static_cast<int>(std::max(1L, (read_timeout_ms + 999) / 1000));
  o.ca_cert_path = options_.ca_cert_path;
  o.proxy = options_.proxy;
  return HttpClient(base_, o);
}

std::vector<std::pair<std::string, std::string>> HttpLineTransport::Headers(bool post) const {
  std::vector<std::pair<std::string, std::string>> h = options_.headers;
  if (options_.auth) {
    if (std::string a = options_.auth->Authorization(); !a.empty())
      h.emplace_back("Authorization", a);
  }
  h.emplace_back("Accept", post ? "application/json, text/event-stream" : "text/event-stream");
  std::lock_guard<std::mutex> lock(mu_);
  if (!session_id_.empty()) h.emplace_back("Mcp-Session-Id", session_id_);
  if (!protocol_version_.empty()) h.emplace_back("MCP-Protocol-Version", protocol_version_);
  return h;
}

void HttpLineTransport::SetProtocolVersion(const std::string& version, bool stateless) {
  std::lock_guard<std::mutex> lock(mu_);
  protocol_version_ = version;
  stateless_ = stateless;
  if (stateless) session_id_.clear();
}

void HttpLineTransport::AddRequestHeaders(
    const Json::Value& msg, std::vector<std::pair<std::string, std::string>>* headers) const {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!stateless_) return;
  }
  const std::string method = StringOr(msg, "method");
  if (method.empty()) return;
  headers->emplace_back("Mcp-Method", method);
  const Json::Value& params = MemberOrNull(msg, "params");
  const char* key = method == "resources/read" ? "uri" : "name";
  const bool named =
      method == "tools/call" || method == "prompts/get" || method == "resources/read";
  const std::string name = named ? StringOr(params, key) : "";
  // A header carries one line of visible ASCII; a name that is not is left to the body.
  bool plain = !name.empty();
  for (unsigned char c : name) plain = plain && c >= 0x20 && c < 0x7f;
  if (plain) headers->emplace_back("Mcp-Name", name);
}

void HttpLineTransport::Spawn(std::function<void()> fn) {
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_) return;
  // Threads that have finished are joined here, so a long session does not collect them.
  for (auto it = workers_.begin(); it != workers_.end();) {
    if (it->done) {
      it->thread.join();
      it = workers_.erase(it);
    } else {
      ++it;
    }
  }
  workers_.emplace_back();
  Worker* w = &workers_.back();
  try {
    w->thread = std::thread([this, w, fn = std::move(fn)] {
      fn();
      std::lock_guard<std::mutex> l(mu_);
      w->done = true;
    });
  } catch (const std::system_error& e) {
    workers_.pop_back();
    log::Error(std::string("MCP HTTP: no thread for a request: ") + e.what());
  }
}

void HttpLineTransport::Deliver(const std::string& json_text) {
  auto msg = ParseJson(json_text);
  if (!msg.ok()) {
    log::Warn("MCP HTTP: dropped a message that is not JSON: " + msg.error().message);
    return;
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (msg->isArray()) {
    for (Json::ArrayIndex i = 0; i < msg->size(); ++i)
      in_.push_back(WriteJson(ElementOrNull(*msg, i)));
  } else {
    in_.push_back(WriteJson(*msg));
  }
  cv_.notify_all();
}

void HttpLineTransport::EndInput() {
  std::lock_guard<std::mutex> lock(mu_);
  input_ended_ = true;
  cv_.notify_all();
}

void HttpLineTransport::WriteLine(std::string line) {
  Spawn([this, line = std::move(line)] { Post(line); });
}

void HttpLineTransport::Post(const std::string& line) {
  const bool legacy = options_.kind == config::McpTransport::kSse;
  HttpPostRequest req;
  {
    std::lock_guard<std::mutex> lock(mu_);
    req.path = legacy ? endpoint_ : path_;
  }
  req.headers = Headers(true);
  req.body = line;
  Json::Value request_id;
  auto parsed = ParseJson(line);
  if (parsed.ok() && FindMember(*parsed, "method")) {
    request_id = MemberOrNull(*parsed, "id");
    AddRequestHeaders(*parsed, &req.headers);
  }
  // The answer to initialize carries the session id in a header, which is known only when the
  // request is done: its messages wait until then, so nothing is sent without the id.
  const bool hold = line.find("\"initialize\"") != std::string::npos;
  AnswerReader answer(request_id, hold, [this](const std::string& m) { Deliver(m); });
  auto send = [&] {
    return Client(options_.read_timeout_ms)
        .PostStream(
            req, [&](std::string_view bytes, const MoreReady&) { return answer.Feed(bytes); },
            closing_.token());
  };
  HttpStreamResult res = send();
  if (Reauthorized(res)) {
    req.headers = Headers(true);
    if (parsed.ok()) AddRequestHeaders(*parsed, &req.headers);
    res = send();
  }
  if (closing_.cancelled()) return;
  std::string sid = HeaderOf(res.headers, "mcp-session-id");
  if (!sid.empty()) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!stateless_) session_id_ = sid;
  }
  answer.Finish();
  if (res.status == 404 && !legacy && !answer.failed() && ForgetSession(line)) return;
  std::string problem = Problem(res, answer.failed());
  // A stream that ends before the answer is resumed with a GET (Last-Event-ID, after `retry`).
  if (problem.empty() && answer.events() && !request_id.isNull() && !answer.answered() && !legacy &&
      res.outcome == HttpOutcome::kCompleted) {
    Resume(line, answer.last_event_id(), answer.retry_ms());
    return;
  }
  if (problem.empty()) return;
  log::Warn("MCP HTTP " + options_.url + ": " + problem);
  if (auto err = LocalError(line, problem)) {
    std::lock_guard<std::mutex> lock(mu_);
    in_.push_back(*err);
    cv_.notify_all();
  }
}

bool HttpLineTransport::Reauthorized(const HttpStreamResult& res) {
  if (!options_.auth || closing_.cancelled() || (res.status != 401 && res.status != 403))
    return false;
  return options_.auth->Unauthorized(res.status, HeaderOf(res.headers, "www-authenticate"));
}

bool HttpLineTransport::ForgetSession(const std::string& line) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (session_id_.empty()) return false;
  }
  // The server forgot the session: input ends, and the client starts a new one.
  log::Warn("MCP server " + options_.url + " ended the session (404)");
  auto err = LocalError(line, "the MCP server ended the session");
  // One step, so whoever reads the error also sees the input ended.
  std::lock_guard<std::mutex> lock(mu_);
  if (err) in_.push_back(*err);
  input_ended_ = true;
  cv_.notify_all();
  return true;
}

void HttpLineTransport::Resume(const std::string& line, const std::string& last_event_id,
                               long retry_ms) {
  Spawn([this, line, last_event_id, retry_ms] {
    // The server said how long to wait (`retry:`); without a word, a second.
    if (closing_.token().WaitFor(retry_ms >= 0 ? std::min(retry_ms, 60000L) : 1000)) return;
    HttpStreamResult res =
        ReadEventStream(path_, last_event_id, options_.read_timeout_ms, [this](const SseEvent& e) {
          if ((e.event.empty() || e.event == "message") && !e.data.empty()) Deliver(e.data);
        });
    if (closing_.cancelled()) return;
    if (res.status >= 400 || res.outcome == HttpOutcome::kConnectFailed ||
        res.outcome == HttpOutcome::kRedirected)
      ResumeFailed(line, res);
  });
}

HttpStreamResult HttpLineTransport::ReadEventStream(
    const std::string& path, const std::string& last_event_id, long read_timeout_ms,
    const std::function<void(const SseEvent&)>& on_event) {
  HttpPostRequest req;
  req.method = "GET";
  req.path = path;
  req.headers = Headers(false);
  if (!last_event_id.empty()) req.headers.emplace_back("Last-Event-ID", last_event_id);
  SseParser sse;
  std::vector<SseEvent> events;
  auto on_body = [&](std::string_view bytes, const MoreReady&) {
    events.clear();
    if (!sse.Feed(bytes, &events).ok()) return false;
    for (const auto& e : events) on_event(e);
    return true;
  };
  return Client(read_timeout_ms).PostStream(req, on_body, closing_.token());
}

void HttpLineTransport::ResumeFailed(const std::string& line, const HttpStreamResult& res) {
  // Nothing will bring the answer now.
  const std::string why = res.status >= 400 || res.transport_error.empty()
                              ? "HTTP " + std::to_string(res.status)
                              : res.transport_error;
  auto err = LocalError(
      line, "the answer's event stream ended early and could not be resumed (" + why + ")");
  if (!err) return;
  std::lock_guard<std::mutex> lock(mu_);
  in_.push_back(*err);
  cv_.notify_all();
}

void HttpLineTransport::OpenEventStream(const std::string& path, bool legacy) {
  Spawn([this, path, legacy] {
    // The stream may be quiet for hours; only Close() ends it.
    HttpStreamResult res =
        ReadEventStream(path, "", 24L * 3600 * 1000, [this, legacy](const SseEvent& e) {
          if (legacy && e.event == "endpoint") {
            SetEndpoint(e.data);
          } else if ((e.event.empty() || e.event == "message") && !e.data.empty()) {
            Deliver(e.data);
          }
        });
    if (closing_.cancelled()) return;
    EventStreamEnded(res, legacy);
  });
}

void HttpLineTransport::SetEndpoint(const std::string& data) {
  std::string target = data;
  // Relative to the stream's URL: an absolute path, or a full URL on the same origin.
  if (target.rfind("http://", 0) == 0 || target.rfind("https://", 0) == 0) target = PathOf(target);
  if (target.empty() || target[0] != '/') target = "/" + target;
  std::lock_guard<std::mutex> lock(mu_);
  endpoint_ = target;
  cv_.notify_all();
}

void HttpLineTransport::EventStreamEnded(const HttpStreamResult& res, bool legacy) {
  if (!legacy) {
    if (res.status >= 400 && res.status != 405)
      log::Info("MCP HTTP " + options_.url + ": no event stream (HTTP " +
                std::to_string(res.status) + ")");
    if (res.outcome == HttpOutcome::kRedirected)
      log::Info("MCP HTTP " + options_.url + ": no event stream: " + res.transport_error);
    return;
  }
  std::string why = res.status >= 400 ? "HTTP " + std::to_string(res.status)
                                      : (res.transport_error.empty() ? "the event stream ended"
                                                                     : res.transport_error);
  {
    std::lock_guard<std::mutex> lock(mu_);
    stream_error_ = why;
  }
  log::Warn("MCP SSE " + options_.url + ": " + why);
  EndInput();
}

bool HttpLineTransport::ended() const {
  std::lock_guard<std::mutex> lock(mu_);
  return input_ended_;
}

void HttpLineTransport::Listen() {
  if (options_.kind == config::McpTransport::kHttp) OpenEventStream(path_, /*legacy=*/false);
}

ReadStatus HttpLineTransport::ReadLine(std::string* line, size_t* line_size) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return !in_.empty() || input_ended_; });
  if (in_.empty()) return ReadStatus::kEof;
  *line = std::move(in_.front());
  in_.pop_front();
  if (line_size) *line_size = line->size();
  return ReadStatus::kLine;
}

void HttpLineTransport::Close() {
  std::string sid;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return;
    closed_ = true;
    sid = session_id_;
  }
  closing_.Cancel(CancelCause::kShutdown);
  if (!sid.empty() && options_.kind == config::McpTransport::kHttp) {
    // The session's end, so the server frees it; a server that does not answer in a second is
    // left to forget it.
    HttpPostRequest req;
    req.method = "DELETE";
    req.path = path_;
    req.headers = Headers(false);
    HttpOptions o;
    o.connect_timeout_s = 1;
    o.idle_timeout_s = 1;
    o.ca_cert_path = options_.ca_cert_path;
    o.proxy = options_.proxy;
    HttpClient(base_, o).PostStream(
        req, [](std::string_view, const MoreReady&) { return true; }, CancelToken());
  }
  std::list<Worker> workers;
  {
    std::lock_guard<std::mutex> lock(mu_);
    workers.swap(workers_);
    input_ended_ = true;
    cv_.notify_all();
  }
  for (auto& w : workers) w.thread.join();
}

}  // namespace lousho::agent::mcp
