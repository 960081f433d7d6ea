// Stable LOUSHO_PROVIDER_* error codes and the mapping from HTTP failures to them.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "support/status.h"

namespace lousho::agent {

// The codes a provider failure carries in Error::code. Callers branch on these strings.
inline constexpr char kProviderAuth[] = "LOUSHO_PROVIDER_AUTH";  // 401/403, missing key
inline constexpr char kProviderModelNotFound[] = "LOUSHO_PROVIDER_MODEL_NOT_FOUND";  // 404
inline constexpr char kProviderRateLimited[] = "LOUSHO_PROVIDER_RATE_LIMITED";       // 429
inline constexpr char kProviderUnavailable[] = "LOUSHO_PROVIDER_UNAVAILABLE";   // 5xx, 529, network
inline constexpr char kProviderBadResponse[] = "LOUSHO_PROVIDER_BAD_RESPONSE";  // malformed stream
inline constexpr char kProviderTimeout[] = "LOUSHO_PROVIDER_TIMEOUT";           // idle read timeout
// The request was refused as invalid (400, 413, 422 ...): retrying the same request is useless.
inline constexpr char kProviderBadRequest[] = "LOUSHO_PROVIDER_BAD_REQUEST";
// A 400 saying the prompt does not fit the context window, so the engine can compact and retry.
inline constexpr char kProviderContextOverflow[] = "LOUSHO_PROVIDER_CONTEXT_OVERFLOW";
// The settings cannot produce a working client (bad base URL, unknown api).
inline constexpr char kProviderConfig[] = "LOUSHO_PROVIDER_CONFIG";

// Response headers with lower-case names.
using HeaderMap = std::multimap<std::string, std::string>;

// Builds the error for an HTTP status >= 400. `body` is the (JSON or text) error body; its
// message (OpenAI `error.message`, Anthropic `error.message`, Ollama's plain `error`) is quoted.
// Sets retryable and retry_after_ms (from retry-after-ms / Retry-After) where they apply.
Error ErrorFromHttp(int status, const HeaderMap& headers, std::string_view body, long long now_ms);

// Builds the error for an error object met inside a 200 stream (OpenAI `{"error":{...}}` data,
// Anthropic `event: error`). `type` is error.type or error.code.
Error ErrorFromStream(const std::string& type, const std::string& message);

}  // namespace lousho::agent
