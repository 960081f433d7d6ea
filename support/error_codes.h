// ErrorCode: the stable LOUSHO_* machine codes of the project and their one table of wire names.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <optional>
#include <string_view>

namespace lousho {

// What went wrong, for callers that branch on it. The name each code carries on the wire (ACP
// error data, the cli's stderr, logs) comes from kErrorCodeNames below and never changes.
enum class ErrorCode {
  kCancelled,
  kClientError,  // the editor answered a request with an error or a malformed reply
  kCompaction,   // nothing to compact, or the model gave no summary
  kConfigInvalid,
  kConfigNotFound,
  kDisconnected,
  kHistoryInvalid,
  kInvalidMode,
  kInvalidParams,
  kJsonParse,
  kModelUnknown,             // a model that is not offered, or whose provider cannot be built
  kMcpServer,                // an MCP server failed to start, answered badly, or reported an error
  kProviderAuth,             // 401/403, missing key
  kProviderBadRequest,       // 400, 413, 422 ...: retrying the same request is useless
  kProviderBadResponse,      // malformed stream
  kProviderConfig,           // the settings cannot produce a working client
  kProviderContextOverflow,  // the prompt does not fit the context window
  kProviderModelNotFound,    // 404
  kProviderRateLimited,      // 429
  kProviderTimeout,          // idle read timeout
  kProviderUnavailable,      // 5xx, 529, network
  kRegexInvalid,
  kRegexLimit,
  kResourceExhausted,
  kSessionBusy,
  kSessionClosed,
  kSessionFile,    // a session file cannot be read or written
  kSessionLocked,  // another process appends to the session file
  kSessionNotFound,
  kSessionLimit,
  kSubprocess,
  kTimeout,
  kToolArgs,
  kToolIo,
  kToolPath,
  kToolTooLarge,
  kUsage,
};

struct ErrorCodeEntry {
  ErrorCode code;
  const char* name;
};

// The one table of wire names, in enum order (checked below).
inline constexpr ErrorCodeEntry kErrorCodeNames[] = {
    {ErrorCode::kCancelled, "LOUSHO_CANCELLED"},
    {ErrorCode::kClientError, "LOUSHO_CLIENT_ERROR"},
    {ErrorCode::kCompaction, "LOUSHO_COMPACTION"},
    {ErrorCode::kConfigInvalid, "LOUSHO_CONFIG_INVALID"},
    {ErrorCode::kConfigNotFound, "LOUSHO_CONFIG_NOT_FOUND"},
    {ErrorCode::kDisconnected, "LOUSHO_DISCONNECTED"},
    {ErrorCode::kHistoryInvalid, "LOUSHO_HISTORY_INVALID"},
    {ErrorCode::kInvalidMode, "LOUSHO_INVALID_MODE"},
    {ErrorCode::kInvalidParams, "LOUSHO_INVALID_PARAMS"},
    {ErrorCode::kJsonParse, "LOUSHO_JSON_PARSE"},
    {ErrorCode::kModelUnknown, "LOUSHO_MODEL_UNKNOWN"},
    {ErrorCode::kMcpServer, "LOUSHO_MCP_SERVER"},
    {ErrorCode::kProviderAuth, "LOUSHO_PROVIDER_AUTH"},
    {ErrorCode::kProviderBadRequest, "LOUSHO_PROVIDER_BAD_REQUEST"},
    {ErrorCode::kProviderBadResponse, "LOUSHO_PROVIDER_BAD_RESPONSE"},
    {ErrorCode::kProviderConfig, "LOUSHO_PROVIDER_CONFIG"},
    {ErrorCode::kProviderContextOverflow, "LOUSHO_PROVIDER_CONTEXT_OVERFLOW"},
    {ErrorCode::kProviderModelNotFound, "LOUSHO_PROVIDER_MODEL_NOT_FOUND"},
    {ErrorCode::kProviderRateLimited, "LOUSHO_PROVIDER_RATE_LIMITED"},
    {ErrorCode::kProviderTimeout, "LOUSHO_PROVIDER_TIMEOUT"},
    {ErrorCode::kProviderUnavailable, "LOUSHO_PROVIDER_UNAVAILABLE"},
    {ErrorCode::kRegexInvalid, "LOUSHO_REGEX_INVALID"},
    {ErrorCode::kRegexLimit, "LOUSHO_REGEX_LIMIT"},
    {ErrorCode::kResourceExhausted, "LOUSHO_RESOURCE_EXHAUSTED"},
    {ErrorCode::kSessionBusy, "LOUSHO_SESSION_BUSY"},
    {ErrorCode::kSessionClosed, "LOUSHO_SESSION_CLOSED"},
    {ErrorCode::kSessionFile, "LOUSHO_SESSION_FILE"},
    {ErrorCode::kSessionLocked, "LOUSHO_SESSION_LOCKED"},
    {ErrorCode::kSessionNotFound, "LOUSHO_SESSION_NOT_FOUND"},
    {ErrorCode::kSessionLimit, "LOUSHO_SESSION_LIMIT"},
    {ErrorCode::kSubprocess, "LOUSHO_SUBPROCESS"},
    {ErrorCode::kTimeout, "LOUSHO_TIMEOUT"},
    {ErrorCode::kToolArgs, "LOUSHO_TOOL_ARGS"},
    {ErrorCode::kToolIo, "LOUSHO_TOOL_IO"},
    {ErrorCode::kToolPath, "LOUSHO_TOOL_PATH"},
    {ErrorCode::kToolTooLarge, "LOUSHO_TOOL_TOO_LARGE"},
    {ErrorCode::kUsage, "LOUSHO_USAGE"},
};

namespace internal {
// True when row i of the table names enumerator i and the last enumerator has a row, so that
// ErrorCodeName can index the table directly.
constexpr bool ErrorCodeTableInOrder() {
  constexpr std::size_t n = sizeof(kErrorCodeNames) / sizeof(kErrorCodeNames[0]);
  for (std::size_t i = 0; i < n; ++i) {
    if (static_cast<std::size_t>(kErrorCodeNames[i].code) != i) return false;
  }
  return static_cast<std::size_t>(ErrorCode::kUsage) + 1 == n;
}
}  // namespace internal
static_assert(internal::ErrorCodeTableInOrder(),
              "kErrorCodeNames must list every ErrorCode once, in enum order");

// The wire name, e.g. "LOUSHO_CONFIG_INVALID".
constexpr const char* ErrorCodeName(ErrorCode code) {
  return kErrorCodeNames[static_cast<std::size_t>(code)].name;
}

// The code with that wire name; nullopt for any other text.
constexpr std::optional<ErrorCode> ParseErrorCode(std::string_view name) {
  for (const ErrorCodeEntry& e : kErrorCodeNames) {
    if (name == e.name) return e.code;
  }
  return std::nullopt;
}

// Writes the wire name (test failure messages, logs).
std::ostream& operator<<(std::ostream& os, ErrorCode code);

}  // namespace lousho
