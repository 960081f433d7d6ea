// What the ACP server's files share: an empty object and the `data` of a JSON-RPC error.
#pragma once

#include <json/json.h>

#include "support/error_codes.h"
#include "support/status.h"

namespace lousho::acp {

inline Json::Value Obj() { return Json::Value(Json::objectValue); }

// ACP's "authentication required".
inline constexpr int kAuthRequired = -32000;

// The `data` of a JSON-RPC error: the LOUSHO_* name editors and scripts branch on.
inline Json::Value ErrorData(ErrorCode code) {
  Json::Value d(Json::objectValue);
  d["code"] = ErrorCodeName(code);
  return d;
}

// An internal error's data also carries `details`: Zed shows it in place of the bare
// "Internal error" for -32603.
inline Json::Value ErrorData(const Error& e) {
  Json::Value d = ErrorData(e.code);
  d["details"] = e.message;
  return d;
}

}  // namespace lousho::acp
