// The shared driver of the HTTP providers: one streaming POST per attempt, SSE decoding,
// cancellation, error mapping and automatic retry of transient failures.
#pragma once

#include <atomic>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <string>

#include "agent/providers/stream_decoder.h"
#include "config/provider_settings.h"
#include "core/provider.h"
#include "support/http/http_client.h"
#include "support/http/retry.h"
#include "support/json_writer.h"

namespace lousho::agent {

// Everything a provider needs, resolved by the factory (env overrides applied, key looked up).
struct HttpProviderConfig {
  config::ProviderSettings settings;
  config::ModelInfo model;  // the catalogue entry, or defaults (prices 0) for unknown models
  BaseUrl base;
  std::string api_key;       // empty: send no credentials (local servers)
  std::string ca_cert_path;  // tests only: trust this certificate file as well
  ProxySetting proxy;        // the spec's `proxy:`; unset: the environment's (proxy.h)
};

// Fills usage->cost from the model's prices (USD per million tokens).
void ApplyCost(const config::ModelInfo& model, Usage* usage);

// A tool's parameters as both request bodies carry them: its own JSON schema object, or the
// empty object schema when it has none.
void WriteToolSchema(const Json::Value& schema, JsonWriter* w);

// Base of OpenAiChatProvider and AnthropicMessagesProvider. Stream() is safe to call
// concurrently (each call has its own connection and decoder); the object is immutable.
class HttpStreamingProvider : public Provider {
 public:
  explicit HttpStreamingProvider(HttpProviderConfig config);
  ~HttpStreamingProvider() override;
  HttpStreamingProvider(const HttpStreamingProvider&) = delete;
  HttpStreamingProvider& operator=(const HttpStreamingProvider&) = delete;
  Result<ModelResponse> Stream(const ModelRequest& request, const DeltaCallback& on_delta,
                               const CancelToken& cancel, const RetryHooks& retry) override;
  bool SupportsImages() const override { return config_.model.images; }
  // The model's window: the catalogue's or the spec's, else what a local server reports (asked
  // once, on a thread of its own, at the first call; that call waits for the answer at most
  // kLimitsWaitMs, later ones never wait).
  long long ContextWindow() const override;
  static constexpr int kLimitsWaitMs = 6000;
  const HttpProviderConfig& config() const { return config_; }

  // The request body and headers one attempt sends (public so tests can assert the wire form).
  virtual HttpPostRequest BuildHttpRequest(const ModelRequest& request) const = 0;
  virtual std::unique_ptr<StreamDecoder> NewDecoder() const = 0;

 private:
  // What one attempt brought.
  struct Attempt {
    std::unique_ptr<StreamDecoder> decoder;
    HttpStreamResult result;
    Status decode_status;
    bool delivered = false;  // some output went to on_delta
    bool stopped = false;    // on_delta asked to stop
  };
  // Sends the request once, decoding the answer as it streams to on_delta; on_output runs
  // before each delta goes out.
  Attempt Post(const HttpPostRequest& request, const std::string& model_id,
               const DeltaCallback& on_delta, const CancelToken& cancel,
               const std::function<void()>& on_output);
  // The assistant message as the provider's answer: role, provider, model and cost filled in.
  ModelResponse Finish(Message m, StopReason stop, const std::string& model_id) const;

  HttpProviderConfig config_;
  HttpClient http_;
  // The local server's answer (see ContextWindow): -1 until known.
  mutable std::mutex limits_mu_;
  mutable std::shared_future<long long> limits_;
  mutable std::atomic<long long> server_window_{-1};
  mutable std::atomic<bool> limits_waited_{false};  // only the first call waits
  CancelSource limits_cancel_;
};

}  // namespace lousho::agent
