// The spec's `proxy:` (docs/agent-spec.md, "Proxy"): one proxy URL for both schemes, or a map
// {https, http, noProxy}; it replaces the environment's proxy variables for the agent's HTTP
// calls (providers, MCP over HTTP, fetch).
#pragma once

#include <json/json.h>

#include <functional>
#include <optional>
#include <string>

#include "support/http/proxy.h"
#include "support/status.h"

namespace lousho::config {

// Reads `proxy:` (as JSON). URLs may hold `${VAR}` (expanded from `env`, so credentials can stay
// out of the file) and are checked here ("direct" or "none" for no proxy). Errors name the key
// and never the URL's credentials ("proxy.https: a socks5:// proxy is not supported ...").
Result<agent::ProxySetting> ParseProxySpec(
    const Json::Value& value,
    const std::function<std::optional<std::string>(const std::string&)>& env);

}  // namespace lousho::config
