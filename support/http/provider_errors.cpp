// Mapping of HTTP and in-stream failures to LOUSHO_PROVIDER_* errors.
#include "support/http/provider_errors.h"

#include <algorithm>
#include <cctype>

#include "support/http/retry.h"
#include "support/json_util.h"
#include "support/text.h"

namespace lousho::agent {

namespace {

constexpr double kLongestRetryAfterMs = 86'400'000.0;

const std::string* FindHeader(const HeaderMap& headers, const char* name) {
  auto it = headers.find(name);
  return it == headers.end() ? nullptr : &it->second;
}

// What an error body says, in either provider's shape.
struct BodyInfo {
  std::string message;
  std::string type;  // error.type
  std::string code;  // error.code (OpenAI), error.details.error_code (Anthropic)
};

BodyInfo ParseErrorBody(std::string_view body) {
  BodyInfo info;
  auto parsed = ParseJson(body);
  if (parsed.ok() && parsed->isObject()) {
    const Json::Value& root = *parsed;
    const Json::Value* err = FindMember(root, "error");
    if (err && err->isObject()) {
      info.message = StringOr(*err, "message");
      info.type = StringOr(*err, "type");
      info.code = StringOr(*err, "code");
      const Json::Value* details = FindMember(*err, "details");
      if (details && info.code.empty()) info.code = StringOr(*details, "error_code");
    } else if (err && err->isString()) {
      info.message = StringOr(root, "error");  // Ollama native: {"error":"model 'x' not found"}
    } else {
      info.message = StringOr(root, "message");
    }
    return info;
  }
  // Not JSON (a proxy's HTML page, plain text): quote a short, single-line excerpt.
  std::string text(body.substr(0, 300));
  for (auto& c : text)
    if (c == '\n' || c == '\r') c = ' ';
  while (!text.empty() && text.back() == ' ') text.pop_back();
  info.message = text;
  return info;
}

// OpenAI: code context_length_exceeded ("This model's maximum context length is ..."); Anthropic:
// invalid_request_error "prompt is too long: 213000 tokens > 200000 maximum", or 413
// request_too_large when the request's bytes exceed its limit.
bool LooksLikeContextOverflow(const BodyInfo& info) {
  std::string m = AsciiLower(info.message);
  return info.code == "context_length_exceeded" || info.type == "request_too_large" ||
         m.find("prompt is too long") != std::string::npos ||
         m.find("context length") != std::string::npos ||
         m.find("context window") != std::string::npos ||
         m.find("maximum context") != std::string::npos;
}

}  // namespace

Error ErrorFromHttp(int status, const HeaderMap& headers, std::string_view body, long long now_ms) {
  BodyInfo info = ParseErrorBody(body);
  std::string what = "HTTP " + std::to_string(status);
  if (!info.message.empty()) what += ": " + info.message;
  Error e;
  e.message = what;
  if (status == 401 || status == 403) {
    e.code = kProviderAuth;
  } else if (status == 404) {
    e.code = kProviderModelNotFound;
  } else if (status == 429) {
    e.code = kProviderRateLimited;
    // Quota and spend limits are not cured by waiting a few seconds.
    e.retryable = info.code != "insufficient_quota" && info.type != "insufficient_quota" &&
                  info.code != "enforced_spend_limit_reached";
  } else if (status == 408 || status == 409) {
    e.code = kProviderUnavailable;
    e.retryable = true;
  } else if (status >= 500) {
    e.code = kProviderUnavailable;
    e.retryable = true;
  } else if (LooksLikeContextOverflow(info)) {
    e.code = kProviderContextOverflow;
  } else {
    e.code = kProviderBadRequest;
  }
  // The server's own verdict wins (OpenAI's x-should-retry).
  if (const std::string* h = FindHeader(headers, "x-should-retry")) {
    if (*h == "true") e.retryable = true;
    if (*h == "false") e.retryable = false;
  }
  if (const std::string* h = FindHeader(headers, "retry-after-ms")) {
    char* end = nullptr;
    double ms = std::strtod(h->c_str(), &end);
    // Casting a huge (or infinite) double is undefined; any wait past a day is "too long" alike.
    if (end != h->c_str() && ms >= 0) {
      e.retry_after_ms = static_cast<long>(std::min(ms, kLongestRetryAfterMs));
    }
  }
  if (e.retry_after_ms < 0) {
    if (const std::string* h = FindHeader(headers, "retry-after")) {
      e.retry_after_ms = ParseRetryAfterMs(*h, now_ms);
    }
  }
  return e;
}

Error ErrorFromStream(const std::string& type, const std::string& message) {
  Error e;
  std::string t = AsciiLower(type);
  e.message = message.empty() ? "stream error" : message;
  if (!type.empty()) e.message = type + ": " + e.message;
  if (t.find("overloaded") != std::string::npos || t == "api_error" || t == "server_error" ||
      t.find("unavailable") != std::string::npos || t == "timeout_error") {
    e.code = kProviderUnavailable;
    e.retryable = true;
  } else if (t.find("rate_limit") != std::string::npos) {
    e.code = kProviderRateLimited;
    e.retryable = true;
  } else if (t.find("authentication") != std::string::npos ||
             t.find("permission") != std::string::npos || t == "invalid_api_key") {
    e.code = kProviderAuth;
  } else if (t == "not_found_error" || t == "model_not_found") {
    e.code = kProviderModelNotFound;
  } else if (t == "context_length_exceeded" ||
             (t == "invalid_request_error" &&
              LooksLikeContextOverflow(BodyInfo{message, type, type}))) {
    e.code = kProviderContextOverflow;
  } else if (t == "invalid_request_error") {
    e.code = kProviderBadRequest;
  } else {
    // An unknown mid-stream failure: the stream did not finish properly.
    e.code = kProviderBadResponse;
  }
  return e;
}

}  // namespace lousho::agent
