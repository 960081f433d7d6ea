// Stable LOUSHO_PROVIDER_* error codes, the mapping from HTTP failures to them, and the bounds
// on numbers in a stream.
#pragma once

#include <json/json.h>

#include <map>
#include <string>
#include <string_view>

#include "support/json_util.h"
#include "support/status.h"

namespace lousho::agent {

// The codes a provider failure carries in Error::code, under their older short names so that
// provider code reads as before. Callers branch on these values.
inline constexpr ErrorCode kProviderAuth = ErrorCode::kProviderAuth;  // 401/403, missing key
inline constexpr ErrorCode kProviderModelNotFound = ErrorCode::kProviderModelNotFound;  // 404
inline constexpr ErrorCode kProviderRateLimited = ErrorCode::kProviderRateLimited;      // 429
inline constexpr ErrorCode kProviderUnavailable = ErrorCode::kProviderUnavailable;  // 5xx, network
inline constexpr ErrorCode kProviderBadResponse = ErrorCode::kProviderBadResponse;  // bad stream
inline constexpr ErrorCode kProviderTimeout = ErrorCode::kProviderTimeout;  // idle read timeout
// The request was refused as invalid (400, 413, 422 ...): retrying the same request is useless.
inline constexpr ErrorCode kProviderBadRequest = ErrorCode::kProviderBadRequest;
// A 400 saying the prompt does not fit the context window, so the engine can compact and retry.
inline constexpr ErrorCode kProviderContextOverflow = ErrorCode::kProviderContextOverflow;
// The settings cannot produce a working client (bad base URL, unknown api).
inline constexpr ErrorCode kProviderConfig = ErrorCode::kProviderConfig;

// Response headers with lower-case names.
using HeaderMap = std::multimap<std::string, std::string>;

// Builds the error for an HTTP status >= 400. `body` is the (JSON or text) error body; its
// message (OpenAI `error.message`, Anthropic `error.message`, Ollama's plain `error`) is quoted.
// Sets retryable and retry_after_ms (from retry-after-ms / Retry-After) where they apply.
Error ErrorFromHttp(int status, const HeaderMap& headers, std::string_view body, long long now_ms);

// Builds the error for an error object met inside a 200 stream (OpenAI `{"error":{...}}` data,
// Anthropic `event: error`). `type` is error.type or error.code.
Error ErrorFromStream(const std::string& type, const std::string& message);

// Bounds on the numbers a model server sends. Anything outside them is a bad response: no real
// answer has that many blocks or tokens, and the bounds keep sums of usage far from overflow.
inline constexpr long long kMaxBlockIndex = 1024;                 // content block, tool call
inline constexpr long long kMaxTokenCount = 1'000'000'000'000LL;  // one usage figure

// Reads the integers of one stream event within those bounds (absent means 0); a number outside
// them fails the response once, with LOUSHO_PROVIDER_BAD_RESPONSE (not retryable: the server
// would answer the same way again).
class StreamNumbers : public IntReader {
 public:
  // `where` names the event in the error (e.g. "content_block_delta").
  explicit StreamNumbers(std::string where) : IntReader(std::move(where)) {}
  long long Index(const Json::Value& obj, const char* key) {
    return Int(obj, key, 0, kMaxBlockIndex, 0);
  }
  long long Tokens(const Json::Value& obj, const char* key) {
    return Int(obj, key, 0, kMaxTokenCount, 0);
  }
  Status status() const {
    return ok() ? Status::Ok() : Status(MakeError(kProviderBadResponse, error()));
  }
};

}  // namespace lousho::agent
