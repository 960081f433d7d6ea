// `proxy:` of an agent spec.
#include "config/proxy_spec.h"

#include "config/agent_spec.h"
#include "support/json_util.h"
#include "support/text.h"

namespace lousho::config {
namespace {

using ProxyEnvFn = std::function<std::optional<std::string>(const std::string&)>;

Error ProxyErr(const std::string& what) { return MakeError(ErrorCode::kConfigInvalid, what); }

// One proxy URL (or "direct"), expanded and checked.
Result<std::string> ProxyUrl(const Json::Value& v, const std::string& where,
                             const ProxyEnvFn& env) {
  std::optional<std::string> s = AsString(v);
  if (!s) return ProxyErr(where + ": expected a proxy URL such as http://proxy.example:3128");
  Result<std::string> url = ExpandVars(*s, env);
  if (!url.ok()) return ProxyErr(where + ": " + url.error().message);
  const std::string trimmed = TrimSpace(*url);
  if (trimmed.empty() || trimmed == "direct" || trimmed == "none") return trimmed;
  auto parsed = agent::ParseProxyUrl(trimmed, where);
  if (!parsed.ok()) return ProxyErr(parsed.error().message);
  return trimmed;
}

// `noProxy:` a list of host names (or one comma-separated string, as NO_PROXY).
Result<std::string> NoProxyList(const Json::Value& v) {
  if (std::optional<std::string> s = AsString(v)) return *s;
  if (!v.isArray()) return ProxyErr("proxy.noProxy: expected a list of host names");
  std::string out;
  for (Json::ArrayIndex i = 0; i < v.size(); ++i) {
    std::optional<std::string> host = AsString(ElementOrNull(v, i));
    if (!host || TrimSpace(*host).empty() || host->find(',') != std::string::npos)
      return ProxyErr("proxy.noProxy[" + std::to_string(i) +
                      "]: expected a host name, .domain, IP address or *");
    out += (out.empty() ? "" : ",") + TrimSpace(*host);
  }
  return out;
}

}  // namespace

Result<agent::ProxySetting> ParseProxySpec(const Json::Value& value, const ProxyEnvFn& env) {
  agent::ProxySetting out;
  out.set = true;
  if (value.isString()) {
    Result<std::string> url = ProxyUrl(value, "proxy", env);
    if (!url.ok()) return url.error();
    return agent::ProxySetting::Both(*url);
  }
  if (!value.isObject())
    return ProxyErr("proxy: expected a proxy URL or a mapping {https, http, noProxy}");
  for (const std::string& key : MemberNames(value))
    if (key != "https" && key != "http" && key != "noProxy")
      return ProxyErr("proxy." + key + ": unknown key (expected https, http or noProxy)");
  for (const char* scheme : {"https", "http"}) {
    const Json::Value& v = MemberOrNull(value, scheme);
    if (v.isNull()) continue;
    Result<std::string> url = ProxyUrl(v, std::string("proxy.") + scheme, env);
    if (!url.ok()) return url.error();
    (std::string_view(scheme) == "https" ? out.https : out.http) = *url;
  }
  if (const Json::Value& n = MemberOrNull(value, "noProxy"); !n.isNull()) {
    Result<std::string> list = NoProxyList(n);
    if (!list.ok()) return list.error();
    out.no_proxy = *list;
  }
  return out;
}

}  // namespace lousho::config
