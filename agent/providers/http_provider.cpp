// The shared streaming/retry driver of the HTTP providers.
#include "agent/providers/http_provider.h"

#include <algorithm>
#include <optional>
#include <random>

#include "agent/providers/local_limits.h"
#include "core/freeform_tool.h"
#include "support/log.h"

namespace lousho::agent {

void ApplyCost(const config::ModelInfo& model, Usage* usage) {
  usage->cost = (static_cast<double>(usage->input) * model.input_price +
                 static_cast<double>(usage->output) * model.output_price +
                 static_cast<double>(usage->cache_read) * model.cache_read_price +
                 static_cast<double>(usage->cache_write) * model.cache_write_price) /
                1e6;
}

void WriteToolSchema(const Json::Value& schema, JsonWriter* w) {
  if (schema.isObject() && !FreeformGrammar(schema).empty())
    return w->Value(WithoutFreeformGrammar(schema));
  if (schema.isObject()) return w->Value(schema);
  w->ObjectBegin();
  w->AttributeBegin("properties");
  w->ObjectBegin();
  w->ObjectEnd();
  w->AttributeEnd();
  w->Attribute("type", "object");
  w->ObjectEnd();
}

namespace {

HttpOptions OptionsFrom(const HttpProviderConfig& c) {
  HttpOptions o;
  o.connect_timeout_s = c.settings.connect_timeout_s > 0 ? c.settings.connect_timeout_s : 10;
  o.idle_timeout_s = c.settings.idle_timeout_s > 0 ? c.settings.idle_timeout_s : 120;
  o.ca_cert_path = c.ca_cert_path;
  o.proxy = c.proxy;
  return o;
}

double Jitter() {
  thread_local std::mt19937 rng{std::random_device{}()};
  return std::uniform_real_distribution<double>(0.0, 1.0)(rng);
}

// Converts a transport failure into an error (retryable unless it was an idle timeout: a model
// that went silent that long would most likely do it again).
Error TransportError(const HttpStreamResult& r, int idle_timeout_s) {
  Error e;
  switch (r.outcome) {
    case HttpOutcome::kConnectFailed:
      // The transport's words name the host, the cause and what to do. A certificate the
      // system does not trust, or a proxy that refuses, would do the same again.
      e.code = kProviderUnavailable;
      e.message = r.transport_error;
      e.retryable =
          r.failure != HttpFailure::kCertificate && r.failure != HttpFailure::kProxyRefused;
      break;
    case HttpOutcome::kTimedOut:
      e.code = kProviderTimeout;
      e.message = "no data from the provider for " + std::to_string(idle_timeout_s) + " s";
      break;
    case HttpOutcome::kBroken:
      // The transport says what broke: the connection, or the body's framing.
      e.code = kProviderUnavailable;
      e.message = r.transport_error.empty() ? "connection lost" : r.transport_error;
      e.retryable = true;
      break;
    case HttpOutcome::kRedirected:
      // Sent again, it would be redirected again: the base URL is what needs changing.
      e.code = kProviderConfig;
      e.message = r.transport_error;
      break;
    case HttpOutcome::kCompleted:
    case HttpOutcome::kStopped:
    case HttpOutcome::kCancelled:
      e.code = kProviderBadResponse;
      e.message = "stream ended before its end marker";
      if (!r.transport_error.empty()) e.message += " (" + r.transport_error + ")";
      break;
  }
  return e;
}

// Feeds one piece of a response body through the SSE parser into the decoder. Returns false to
// stop reading: the stream failed (*status then says why), `emit` refused a delta, or the end
// marker came. `events` is scratch space kept across calls.
bool DecodeBody(std::string_view bytes, SseParser* parser, StreamDecoder* decoder,
                const DeltaCallback& emit, std::vector<SseEvent>* events, Status* status) {
  // Whatever goes wrong in here is the response's fault, never the connection's: an escaping
  // exception would reach the transport and be reported (and retried) as a lost connection.
  try {
    events->clear();
    Status parsed = parser->Feed(bytes, events);
    // The events completed before an over-long line or event are still decoded.
    for (const SseEvent& ev : *events) {
      *status = decoder->Consume(ev, emit);
      if (!status->ok() || decoder->aborted()) return false;
      // Stop reading at the end marker: some servers keep the connection open after it.
      if (decoder->done()) return false;
    }
    if (!parsed.ok()) {
      *status = parsed;
      return false;
    }
    return true;
  } catch (const std::exception& e) {
    *status = MakeError(kProviderBadResponse, std::string("cannot decode the stream: ") + e.what());
    return false;
  }
}

// Passes deltas on, merging those of one kind for one block that are already here (see
// MoreReady): a model streaming faster than it is relayed then costs one engine event and one
// editor line per read, not per event. The caller flushes before any read that could wait for
// the network, so no delta is ever held for one that has not arrived. One per attempt.
class DeltaMerger {
 public:
  DeltaMerger(const DeltaCallback& out, const CancelToken& cancel) : out_(out), cancel_(cancel) {}

  // False when the consumer refused a delta (stopped()) or the stream was cancelled.
  bool Take(const StreamDelta& d) {
    const bool mergeable = d.kind == DeltaKind::kText || d.kind == DeltaKind::kThinking ||
                           d.kind == DeltaKind::kToolCallArgs;
    if (mergeable && pending_ && pending_->kind == d.kind && pending_->index == d.index &&
        pending_->id == d.id) {
      pending_->text += d.text;
      return true;
    }
    if (!Flush()) return false;
    if (mergeable) {
      pending_ = d;
      return true;
    }
    return Pass(d);
  }
  // Passes the held delta on, if any (not after a refusal or a cancel).
  bool Flush() {
    if (!pending_ || stopped_ || cancel_.cancelled()) return !stopped_ && !cancel_.cancelled();
    StreamDelta d = std::move(*pending_);
    pending_.reset();
    return Pass(d);
  }
  bool holding() const { return pending_.has_value(); }
  bool stopped() const { return stopped_; }

 private:
  bool Pass(const StreamDelta& d) {
    if (!out_(d)) {
      stopped_ = true;
      return false;
    }
    return !cancel_.cancelled();
  }

  const DeltaCallback& out_;
  const CancelToken& cancel_;
  std::optional<StreamDelta> pending_;
  bool stopped_ = false;
};

// Logs the server's request id of a failed call, which its operators ask for.
void LogRequestId(const std::string& provider, const HeaderMap& headers) {
  if (auto it = headers.find("x-request-id"); it != headers.end()) {
    log::Info("provider " + provider + ": request id " + it->second);
  } else if (auto it2 = headers.find("request-id"); it2 != headers.end()) {
    log::Info("provider " + provider + ": request id " + it2->second);
  }
}

// Why a finished (not cancelled) attempt failed, or nullopt when it produced a whole answer.
std::optional<Error> AttemptFailure(const HttpStreamResult& r, const Status& decode_status,
                                    const StreamDecoder& decoder, const std::string& provider,
                                    int idle_timeout_s) {
  if (r.status >= 400) {
    Error error = ErrorFromHttp(r.status, r.headers, r.error_body, NowUnixMs());
    LogRequestId(provider, r.headers);
    return error;
  }
  if (!decode_status.ok()) return decode_status.error();
  if (decoder.done() || (r.outcome == HttpOutcome::kCompleted && decoder.complete()))
    return std::nullopt;
  if (r.outcome == HttpOutcome::kCompleted && r.status == 0)
    return MakeError(kProviderBadResponse, "no HTTP response");
  return TransportError(r, idle_timeout_s);
}

// Tells the retry hooks how a retry went, once: at the first output after it, or when the call
// ends.
class RetryReport {
 public:
  explicit RetryReport(const RetryHooks& hooks) : hooks_(hooks) {}
  void Started(int retries) {
    retries_ = retries;
    pending_ = true;
  }
  void End(bool success, const std::string& error) {
    if (!pending_) return;
    pending_ = false;
    if (hooks_.on_retry_end) hooks_.on_retry_end(success, retries_, error);
  }

 private:
  const RetryHooks& hooks_;
  int retries_ = 0;
  bool pending_ = false;
};

// The wait before retrying a failed attempt (the `retries`-th so far), or -1 when it is final.
// Output already shown to the user cannot be taken back, so such a failure is final.
long RetryWaitMs(const RetryPolicy& policy, const RetryHooks& hooks, const Error& error,
                 bool delivered, int retries) {
  if (!hooks.enabled || !error.retryable || delivered || retries >= policy.max_retries) return -1;
  return RetryDelayMs(policy, retries + 1, error.retry_after_ms, Jitter());
}

// Waits before a retry; false when the wait ended early, on cancellation or on the caller's
// abort of the retry.
bool WaitForRetry(long delay_ms, const CancelToken& cancel, const CancelToken& abort) {
  CancelSource wait;
  ScopedCancelCallback on_cancel(cancel, [&wait] { wait.Cancel(); });
  ScopedCancelCallback on_abort(abort, [&wait] { wait.Cancel(); });
  return !wait.token().WaitFor(delay_ms);
}

}  // namespace

HttpStreamingProvider::HttpStreamingProvider(HttpProviderConfig config)
    : config_(std::move(config)), http_(config_.base, OptionsFrom(config_)) {}

HttpStreamingProvider::~HttpStreamingProvider() {
  limits_cancel_.Cancel();
  std::lock_guard<std::mutex> lock(limits_mu_);
  if (limits_.valid()) limits_.wait();
}

long long HttpStreamingProvider::ContextWindow() const {
  if (config_.model.context_window > 0) return config_.model.context_window;
  if (const long long known = server_window_.load(); known >= 0) return known;
  if (!AsksServerForLimits(config_.settings, config_.base, 0)) return 0;
  std::shared_future<long long> answer;
  {
    std::lock_guard<std::mutex> lock(limits_mu_);
    if (!limits_.valid()) {
      limits_ =
          std::async(std::launch::async, [this] {
            const long long n =
                AskContextWindow(config_.settings, config_.base, config_.api_key, config_.model.id,
                                 limits_cancel_.token(), config_.proxy);
            if (n > 0)
              log::Info("provider " + config_.settings.name + ": the server runs " +
                        config_.model.id + " with a context of " + std::to_string(n) + " tokens");
            return n;
          }).share();
    }
    answer = limits_;
  }
  const int wait_ms = limits_waited_.exchange(true) ? 0 : kLimitsWaitMs;
  if (answer.wait_for(std::chrono::milliseconds(wait_ms)) != std::future_status::ready) return 0;
  server_window_ = answer.get();
  return server_window_.load();
}

Result<ModelResponse> HttpStreamingProvider::Stream(const ModelRequest& request,
                                                    const DeltaCallback& on_delta,
                                                    const CancelToken& cancel,
                                                    const RetryHooks& hooks) {
  const RetryPolicy policy{std::max(0, config_.settings.max_retries),
                           config_.settings.retry_base_ms, config_.settings.retry_max_delay_ms};
  const HttpPostRequest http_request = BuildHttpRequest(request);
  const std::string model_id = request.model.empty() ? config_.model.id : request.model;
  const std::string& name = config_.settings.name;
  RetryReport report(hooks);
  for (int retries = 0;;) {
    Attempt attempt =
        Post(http_request, model_id, on_delta, cancel, [&report] { report.End(true, ""); });
    if (attempt.stopped || cancel.cancelled() ||
        attempt.result.outcome == HttpOutcome::kCancelled) {
      report.End(false, "cancelled");
      return Finish(attempt.decoder->TakeMessage(/*partial=*/true), StopReason::kCancelled,
                    model_id);
    }
    std::optional<Error> failure =
        AttemptFailure(attempt.result, attempt.decode_status, *attempt.decoder, name,
                       config_.settings.idle_timeout_s);
    if (!failure) {
      report.End(true, "");
      return Finish(attempt.decoder->TakeMessage(/*partial=*/false), StopReason::kEndTurn,
                    model_id);
    }
    const Error& error = *failure;
    const long delay = RetryWaitMs(policy, hooks, error, attempt.delivered, retries);
    if (delay < 0) {
      log::Warn("provider " + name + ": " + error.ToString());
      report.End(false, error.message);
      return error;
    }
    ++retries;
    log::Warn("provider " + name + ": " + error.ToString() + "; retry " + std::to_string(retries) +
              "/" + std::to_string(policy.max_retries) + " in " + std::to_string(delay) + " ms");
    report.Started(retries);
    if (hooks.on_retry_start)
      hooks.on_retry_start(RetryNotice{retries, policy.max_retries, delay, error.message});
    if (WaitForRetry(delay, cancel, hooks.abort)) continue;
    if (cancel.cancelled()) {
      report.End(false, "cancelled");
      return Finish(Message{}, StopReason::kCancelled, model_id);
    }
    report.End(false, "Retry cancelled");
    return error;
  }
}

HttpStreamingProvider::Attempt HttpStreamingProvider::Post(const HttpPostRequest& request,
                                                           const std::string& model_id,
                                                           const DeltaCallback& on_delta,
                                                           const CancelToken& cancel,
                                                           const std::function<void()>& on_output) {
  Attempt attempt;
  attempt.decoder = NewDecoder();
  SseParser parser;
  std::vector<SseEvent> events;
  DeltaMerger merger(on_delta, cancel);
  DeltaCallback emit = [&](const StreamDelta& d) {
    on_output();
    attempt.delivered = true;
    return merger.Take(d);
  };
  auto on_body = [&](std::string_view bytes, const MoreReady& more_ready) {
    if (!DecodeBody(bytes, &parser, attempt.decoder.get(), emit, &events, &attempt.decode_status)) {
      // The end marker or a failure: what was decoded goes out now, not after the connection
      // is torn down.
      merger.Flush();
      return false;
    }
    return !merger.holding() || more_ready() || merger.Flush();
  };
  log::Debug("provider " + config_.settings.name + ": POST " + http_.base().Origin() +
             request.path + " model=" + model_id);
  attempt.result = http_.PostStream(request, on_body, cancel);
  // What was decoded before the end marker, a failure or a stop goes out before anything else.
  merger.Flush();
  attempt.stopped = merger.stopped();
  return attempt;
}

ModelResponse HttpStreamingProvider::Finish(Message m, StopReason stop,
                                            const std::string& model_id) const {
  m.role = Role::kAssistant;
  if (stop == StopReason::kCancelled) m.stop_reason = stop;
  m.assistant.Edit().provider = config_.settings.name;
  m.assistant.Edit().model = model_id;
  ApplyCost(config_.model, &m.assistant.Edit().usage);
  return ModelResponse{std::move(m)};
}

}  // namespace lousho::agent
