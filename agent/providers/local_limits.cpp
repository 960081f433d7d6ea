// The context length a local model server reports.
#include "agent/providers/local_limits.h"

#include <algorithm>
#include <sstream>

#include "support/text.h"

namespace lousho::agent {

namespace {

constexpr size_t kMaxAnswerBytes = 4 << 20;  // a model list or /api/show (its template) fits
constexpr long long kMaxWindow = 1LL << 40;

long long PositiveOr0(const Json::Value& v) {
  auto n = AsInt64(v);
  return n && *n > 0 && *n < kMaxWindow ? *n : 0;
}

// The server asked, and how.
struct LimitsServer {
  const BaseUrl& base;
  const std::string& api_key;
  const CancelToken& cancel;
  const ProxySetting& proxy;
};

// One request's JSON answer, or null (an error status, no answer, not JSON, too long).
Json::Value LimitsJson(const LimitsServer& server, const std::string& method,
                       const std::string& path, const std::string& body) {
  const BaseUrl& base = server.base;
  const std::string& api_key = server.api_key;
  const CancelToken& cancel = server.cancel;
  HttpOptions options;
  options.proxy = server.proxy;
  options.connect_timeout_s = 2;
  options.idle_timeout_s = 3;
  HttpPostRequest request;
  request.method = method;
  request.path = path;
  request.body = body;
  request.headers.emplace_back("Accept", "application/json");
  if (!api_key.empty()) request.headers.emplace_back("Authorization", "Bearer " + api_key);
  std::string answer;
  HttpStreamResult r = HttpClient(base, options)
                           .PostStream(
                               request,
                               [&answer](std::string_view bytes, const MoreReady&) {
                                 answer.append(bytes);
                                 return answer.size() <= kMaxAnswerBytes;
                               },
                               cancel);
  if (r.outcome != HttpOutcome::kCompleted || r.status != 200) return Json::Value();
  auto json = ParseJson(answer);
  return json.ok() ? *json : Json::Value();
}

bool LimitsLocalName(const std::string& name) {
  return name == "ollama" || name == "lmstudio" || name == "llamacpp" || name == "vllm" ||
         name == "openai-compatible";
}

bool LimitsLoopback(const std::string& host) {
  const std::string h = AsciiLower(host);
  return h == "localhost" || h.starts_with("127.") || h == "::1" || h == "[::1]";
}

}  // namespace

bool AsksServerForLimits(const config::ProviderSettings& settings, const BaseUrl& base,
                         long long known_window) {
  if (known_window > 0 || settings.api != "openai-chat") return false;
  return LimitsLocalName(settings.name) || LimitsLoopback(base.host);
}

long long ContextFromLlamaProps(const Json::Value& props) {
  const Json::Value& settings = MemberOrNull(props, "default_generation_settings");
  if (long long n = PositiveOr0(MemberOrNull(settings, "n_ctx")); n > 0) return n;
  return PositiveOr0(MemberOrNull(props, "n_ctx"));
}

long long ContextFromOllamaShow(const Json::Value& show) {
  // The context the server runs the model with (num_ctx in its parameters), else the model's own.
  std::istringstream parameters(StringOr(show, "parameters"));
  for (std::string line; std::getline(parameters, line);) {
    std::istringstream words(line);
    std::string key;
    long long value = 0;
    if (words >> key >> value && key == "num_ctx" && value > 0 && value < kMaxWindow) return value;
  }
  const Json::Value& info = MemberOrNull(show, "model_info");
  for (const std::string& key : MemberNames(info)) {
    if (key.ends_with(".context_length")) return PositiveOr0(MemberOrNull(info, key));
  }
  return 0;
}

long long ContextFromModelList(const Json::Value& list, const std::string& model) {
  const Json::Value& data = list.isArray() ? list : MemberOrNull(list, "data");
  if (!data.isArray()) return 0;
  const Json::Value* entry = nullptr;
  for (const Json::Value& e : data) {
    if (StringOr(e, "id") == model) entry = &e;
  }
  if (entry == nullptr && data.size() == 1) entry = &ElementOrNull(data, 0);
  if (entry == nullptr) return 0;
  for (const char* key : {"max_model_len", "loaded_context_length", "max_context_length",
                          "context_length", "context_window"}) {
    if (long long n = PositiveOr0(MemberOrNull(*entry, key)); n > 0) return n;
  }
  return 0;
}

long long AskContextWindow(const config::ProviderSettings& settings, const BaseUrl& base,
                           const std::string& api_key, const std::string& model,
                           const CancelToken& cancel, const ProxySetting& proxy) {
  const LimitsServer server{base, api_key, cancel, proxy};
  const std::string& name = settings.name;
  const bool any = !LimitsLocalName(name) || name == "openai-compatible";
  long long n = 0;
  if (name == "llamacpp" || any) n = ContextFromLlamaProps(LimitsJson(server, "GET", "/props", ""));
  if (n == 0 && (name == "lmstudio" || any))
    n = ContextFromModelList(LimitsJson(server, "GET", "/api/v0/models", ""), model);
  if (n == 0 && (name == "ollama" || any)) {
    // Only an Ollama server answers /api/version; /api/show is asked of it alone.
    if (name == "ollama" || LimitsJson(server, "GET", "/api/version", "").isObject()) {
      std::string body;
      JsonWriter w(&body);
      w.ObjectBegin();
      w.Attribute("model", model);
      w.ObjectEnd();
      n = ContextFromOllamaShow(LimitsJson(server, "POST", "/api/show", body));
    }
  }
  if (n == 0 && !cancel.cancelled())
    n = ContextFromModelList(LimitsJson(server, "GET", base.path_prefix + "/models", ""), model);
  return n;
}

}  // namespace lousho::agent
