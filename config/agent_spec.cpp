// Agent spec loading and validation (YAML and JSON through yaml-cpp, with positions).
#include "config/agent_spec.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <climits>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "config/model_catalog.h"
#include "config/proxy_spec.h"
#include "support/env.h"
#include "support/files.h"
#include "support/log.h"
#include "support/suggest.h"
#include "support/text.h"

namespace lousho::config {
namespace fs = std::filesystem;

namespace {

// Thrown only inside this file and always caught in LoadAgentSpec/LoadScriptFile.
struct SpecError {
  std::string message;
  int line = 0;  // 1-based; 0: no position (sorted last)
};

// Where errors go while a file is read: one part of the spec (a top-level key, an unknown key)
// that fails is kept, and the next part is read, so that a user sees every error at once.
class Ctx {
 public:
  explicit Ctx(std::string file) : file_(std::move(file)) {}
  [[noreturn]] void Fail(const YAML::Node& at, const std::string& what) const {
    throw At(at, what);
  }
  // An error that does not stop reading the part it is in.
  void Keep(const YAML::Node& at, const std::string& what) const { kept_.push_back(At(at, what)); }
  // Runs `parse` (one part of the spec); its error is kept and reading goes on.
  template <typename F>
  void Part(F&& parse) const {
    try {
      parse();
    } catch (const SpecError& e) {
      kept_.push_back(e);
    }
  }
  // Throws every kept error, in file order, one a line.
  void ThrowKept() const {
    if (kept_.empty()) return;
    std::stable_sort(kept_.begin(), kept_.end(), [](const SpecError& a, const SpecError& b) {
      return (a.line == 0 ? INT_MAX : a.line) < (b.line == 0 ? INT_MAX : b.line);
    });
    SpecError all = kept_.front();
    for (size_t i = 1; i < kept_.size(); ++i) all.message += "\n" + kept_[i].message;
    kept_.clear();
    throw all;
  }
  bool failed() const { return !kept_.empty(); }
  const std::string& file() const { return file_; }
  // "file:line:column" of `n` (1-based).
  std::string Where(const YAML::Node& n) const {
    return file_ + ":" + std::to_string(Line(n)) + ":" +
           std::to_string(n.Mark().column >= 0 ? n.Mark().column + 1 : 1);
  }

 private:
  static int Line(const YAML::Node& n) { return n.Mark().line >= 0 ? n.Mark().line + 1 : 1; }
  SpecError At(const YAML::Node& at, const std::string& what) const {
    return {Where(at) + ": " + what, Line(at)};
  }

  std::string file_;
  mutable std::vector<SpecError> kept_;
};

// Reads root[key] with `parse` when the key is there, as one part (Ctx::Part).
template <typename F>
void ParseKey(const Ctx& ctx, const YAML::Node& root, const char* key, F&& parse) {
  if (const YAML::Node& n = root[key]) ctx.Part([&] { parse(n); });
}

std::string Suggest(const std::string& key, const std::vector<std::string>& known) {
  if (auto best = ClosestMatch(key, known)) return " (did you mean '" + *best + "'?)";
  return " (known keys: " + JoinStrings(known, ", ") + ")";
}

void CheckKeys(const Ctx& ctx, const YAML::Node& map, const std::string& where,
               const std::vector<std::string>& known) {
  for (const auto& kv : map) {
    std::string key = kv.first.Scalar();
    if (std::find(known.begin(), known.end(), key) == known.end())
      ctx.Keep(kv.first, "unknown key '" + key + "'" + (where.empty() ? "" : " in " + where) +
                             Suggest(key, known));
  }
}

void ExpectMap(const Ctx& ctx, const YAML::Node& n, const std::string& what) {
  if (!n.IsMap()) ctx.Fail(n, what + ": expected a mapping");
}

std::string Str(const Ctx& ctx, const YAML::Node& n, const std::string& what) {
  if (!n.IsScalar()) ctx.Fail(n, what + ": expected a string");
  return n.Scalar();
}

long long Int(const Ctx& ctx, const YAML::Node& n, const std::string& what, long long min) {
  if (!n.IsScalar()) ctx.Fail(n, what + ": expected a whole number");
  const std::string& s = n.Scalar();
  size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(s, &used);
  } catch (...) {
    used = 0;
  }
  if (used == 0 || used != s.size())
    ctx.Fail(n, what + ": expected a whole number, got '" + s + "'");
  if (v < min) ctx.Fail(n, what + ": must be at least " + std::to_string(min));
  return v;
}

double Num(const Ctx& ctx, const YAML::Node& n, const std::string& what) {
  if (!n.IsScalar()) ctx.Fail(n, what + ": expected a number");
  try {
    size_t used = 0;
    double v = std::stod(n.Scalar(), &used);
    if (used == n.Scalar().size() && v >= 0) return v;
  } catch (...) {
  }
  ctx.Fail(n, what + ": expected a non-negative number, got '" + n.Scalar() + "'");
}

bool Bool(const Ctx& ctx, const YAML::Node& n, const std::string& what) {
  if (n.IsScalar()) {
    const std::string& s = n.Scalar();
    if (s == "true" || s == "yes" || s == "on") return true;
    if (s == "false" || s == "no" || s == "off") return false;
  }
  ctx.Fail(n, what + ": expected true or false");
}

// A plain (unquoted) YAML scalar as JSON: a boolean, null, a number, or else a string.
Json::Value PlainScalarToJson(const std::string& s) {
  if (s == "true") return true;
  if (s == "false") return false;
  if (s == "null" || s == "~") return Json::Value();
  if (s.empty() || !(std::isdigit(static_cast<unsigned char>(s[0])) || s[0] == '-')) return s;
  try {
    size_t used = 0;
    long long i = std::stoll(s, &used);
    if (used == s.size()) return static_cast<Json::Int64>(i);
    double d = std::stod(s, &used);
    if (used == s.size()) return d;
  } catch (...) {
  }
  return s;
}

// YAML -> JSON, keeping plain scalars typed (numbers, booleans, null) and quoted ones as strings.
Json::Value ToJson(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null:
      return Json::Value();
    case YAML::NodeType::Scalar:
      if (n.Tag() == "!") return n.Scalar();  // quoted
      return PlainScalarToJson(n.Scalar());
    case YAML::NodeType::Sequence: {
      Json::Value arr(Json::arrayValue);
      for (const auto& item : n) arr.append(ToJson(item));
      return arr;
    }
    case YAML::NodeType::Map: {
      Json::Value obj(Json::objectValue);
      for (const auto& kv : n) obj[kv.first.Scalar()] = ToJson(kv.second);
      return obj;
    }
  }
  return Json::Value();
}

Result<std::string> ReadFile(const std::string& path) {
  // The one file reader: regular files only (a folder reads as nothing, a device never ends, a
  // FIFO blocks), at most 10 MiB.
  auto text = ReadDiskFile(path, kMaxTextFileBytes, CancelToken(), /*follow_symlink=*/true);
  if (!text.ok())
    return MakeError(ErrorCode::kConfigNotFound,
                     path + ": cannot read file (" + text.error().message + ")");
  return text;
}

YAML::Node ParseYaml(const Ctx& ctx, const std::string& text) {
  try {
    return YAML::Load(text);
  } catch (const YAML::Exception& e) {
    int line = e.mark.line >= 0 ? e.mark.line + 1 : 1;
    int col = e.mark.column >= 0 ? e.mark.column + 1 : 1;
    throw SpecError{ctx.file() + ":" + std::to_string(line) + ":" + std::to_string(col) + ": " +
                    e.msg};
  }
}

ScriptToolCall ParseScriptToolCall(const Ctx& ctx, const YAML::Node& tc) {
  ExpectMap(ctx, tc, "tool call");
  CheckKeys(ctx, tc, "tool call", {"id", "name", "arguments"});
  ScriptToolCall call;
  if (!tc["name"]) ctx.Fail(tc, "tool call: missing required key 'name'");
  call.name = Str(ctx, tc["name"], "name");
  if (tc["id"]) call.id = Str(ctx, tc["id"], "id");
  if (tc["arguments"]) {
    if (!tc["arguments"].IsMap()) ctx.Fail(tc["arguments"], "arguments: expected a mapping");
    call.arguments = ToJson(tc["arguments"]);
  }
  return call;
}

// A step's `error:`: the model call fails with this code (provider_unavailable by default).
void ParseScriptError(const Ctx& ctx, const YAML::Node& e, ScriptStep& s) {
  ExpectMap(ctx, e, "error");
  CheckKeys(ctx, e, "error", {"code", "message"});
  s.error_code = ErrorCode::kProviderUnavailable;
  if (e["code"]) {
    // Only the codes the engine knows can be scripted: each has a fixed wire name.
    s.error_code = ParseErrorCode(Str(ctx, e["code"], "code"));
    if (!s.error_code) ctx.Fail(e["code"], "code: unknown error code");
  }
  s.error_message = e["message"] ? Str(ctx, e["message"], "message") : "scripted failure";
}

// `inline_reply`: the step is written inside a reply, which may also hold `match`.
ScriptStep ParseStep(const Ctx& ctx, const YAML::Node& n, bool inline_reply) {
  ExpectMap(ctx, n, "script step");
  std::vector<std::string> keys = {"thinking", "text",    "toolCalls", "stopReason",
                                   "error",    "delayMs", "chunkSize"};
  if (inline_reply) keys.push_back("match");
  CheckKeys(ctx, n, inline_reply ? "script reply" : "script step", keys);
  ScriptStep s;
  if (n["thinking"]) s.thinking = Str(ctx, n["thinking"], "thinking");
  if (n["text"]) s.text = Str(ctx, n["text"], "text");
  if (n["toolCalls"]) {
    if (!n["toolCalls"].IsSequence()) ctx.Fail(n["toolCalls"], "toolCalls: expected a list");
    for (const auto& tc : n["toolCalls"]) s.tool_calls.push_back(ParseScriptToolCall(ctx, tc));
  }
  if (n["stopReason"]) {
    s.stop_reason = Str(ctx, n["stopReason"], "stopReason");
    if (s.stop_reason != "end_turn" && s.stop_reason != "max_tokens" && s.stop_reason != "refusal")
      ctx.Fail(n["stopReason"], "stopReason: expected end_turn, max_tokens or refusal");
  }
  if (n["error"]) ParseScriptError(ctx, n["error"], s);
  if (n["delayMs"]) s.delay_ms = static_cast<int>(Int(ctx, n["delayMs"], "delayMs", 0));
  if (n["chunkSize"]) s.chunk_size = static_cast<int>(Int(ctx, n["chunkSize"], "chunkSize", 0));
  return s;
}

std::vector<ScriptReply> ParseReplies(const Ctx& ctx, const YAML::Node& n) {
  if (!n.IsSequence()) ctx.Fail(n, "script: expected a list of replies");
  std::vector<ScriptReply> out;
  for (const auto& item : n) {
    ExpectMap(ctx, item, "script reply");
    ScriptReply r;
    if (item["match"]) r.match = Str(ctx, item["match"], "match");
    if (item["steps"]) {
      CheckKeys(ctx, item, "script reply", {"match", "steps"});
      if (!item["steps"].IsSequence()) ctx.Fail(item["steps"], "steps: expected a list");
      for (const auto& st : item["steps"]) r.steps.push_back(ParseStep(ctx, st, false));
    } else {
      r.steps.push_back(ParseStep(ctx, item, true));
    }
    if (r.steps.empty()) ctx.Fail(item, "script reply: needs at least one step");
    out.push_back(std::move(r));
  }
  return out;
}

Script ParseScriptNode(const Ctx& ctx, const YAML::Node& n, const std::string& name) {
  Script s;
  s.name = name;
  s.source = ctx.file();
  if (n.IsMap()) {
    CheckKeys(ctx, n, "script", {"replies"});
    if (!n["replies"]) ctx.Fail(n, "script: missing required key 'replies'");
    s.replies = ParseReplies(ctx, n["replies"]);
  } else {
    s.replies = ParseReplies(ctx, n);
  }
  return s;
}

// One entry of a provider's `models:`: an id, or a mapping with the model's details.
ModelInfo ParseModelInfo(const Ctx& ctx, const YAML::Node& m) {
  ModelInfo info;
  if (m.IsScalar()) {
    info.id = m.Scalar();
    info.name = info.id;
    return info;
  }
  ExpectMap(ctx, m, "model");
  CheckKeys(ctx, m, "model",
            {"id", "name", "contextWindow", "maxOutput", "inputPrice", "outputPrice",
             "cacheReadPrice", "cacheWritePrice", "images", "reasoning"});
  if (!m["id"]) ctx.Fail(m, "model: missing required key 'id'");
  info.id = Str(ctx, m["id"], "id");
  if (m["name"]) info.name = Str(ctx, m["name"], "name");
  if (m["contextWindow"]) info.context_window = Int(ctx, m["contextWindow"], "contextWindow", 1);
  if (m["maxOutput"]) info.max_output = Int(ctx, m["maxOutput"], "maxOutput", 1);
  if (m["inputPrice"]) info.input_price = Num(ctx, m["inputPrice"], "inputPrice");
  if (m["outputPrice"]) info.output_price = Num(ctx, m["outputPrice"], "outputPrice");
  if (m["cacheReadPrice"]) info.cache_read_price = Num(ctx, m["cacheReadPrice"], "cacheReadPrice");
  if (m["cacheWritePrice"])
    info.cache_write_price = Num(ctx, m["cacheWritePrice"], "cacheWritePrice");
  if (m["images"]) info.images = Bool(ctx, m["images"], "images");
  if (m["reasoning"]) info.reasoning = Bool(ctx, m["reasoning"], "reasoning");
  if (info.name.empty()) info.name = info.id;
  return info;
}

bool IsHttpUrl(const std::string& url) {
  return url.rfind("http://", 0) == 0 || url.rfind("https://", 0) == 0;
}

// Where a provider is and how it is spoken to: api, baseUrl, apiKeyEnv, auth, headers.
void ParseProviderEndpoint(const Ctx& ctx, const YAML::Node& n, bool builtin, ProviderSettings& p) {
  if (!n["api"] && !builtin) ctx.Fail(n, "provider '" + p.name + "': missing required key 'api'");
  if (n["api"]) p.api = Str(ctx, n["api"], "api");
  if (!KnownApi(p.api))
    ctx.Fail(n["api"], std::string("api: expected ") + kKnownApis + ", got '" + p.api + "'");
  if (!n["baseUrl"] && !builtin)
    ctx.Fail(n, "provider '" + p.name + "': missing required key 'baseUrl'");
  if (n["baseUrl"]) {
    p.base_url = Str(ctx, n["baseUrl"], "baseUrl");
    p.base_url_env.clear();  // the spec's URL wins over the environment's
  }
  if (!IsHttpUrl(p.base_url))
    ctx.Fail(n["baseUrl"], "baseUrl: must start with http:// or https://");
  if (n["apiKeyEnv"]) p.api_key_env = Str(ctx, n["apiKeyEnv"], "apiKeyEnv");
  if (n["auth"]) {
    p.auth = Str(ctx, n["auth"], "auth");
    if (p.auth != "x-api-key" && p.auth != "bearer")
      ctx.Fail(n["auth"], "auth: expected x-api-key or bearer");
  }
  if (n["headers"]) {
    ExpectMap(ctx, n["headers"], "headers");
    for (const auto& kv : n["headers"])
      p.headers[kv.first.Scalar()] = Str(ctx, kv.second, "headers." + kv.first.Scalar());
  }
}

// How long a provider's requests may take and how often they are retried.
void ParseProviderTimeouts(const Ctx& ctx, const YAML::Node& n, ProviderSettings& p) {
  if (n["connectTimeoutSec"])
    p.connect_timeout_s =
        static_cast<int>(Int(ctx, n["connectTimeoutSec"], "connectTimeoutSec", 1));
  if (n["idleTimeoutSec"])
    p.idle_timeout_s = static_cast<int>(Int(ctx, n["idleTimeoutSec"], "idleTimeoutSec", 1));
  if (n["maxRetries"]) p.max_retries = static_cast<int>(Int(ctx, n["maxRetries"], "maxRetries", 0));
  if (n["retryBaseMs"])
    p.retry_base_ms = static_cast<long>(Int(ctx, n["retryBaseMs"], "retryBaseMs", 0));
  if (n["retryMaxDelayMs"])
    p.retry_max_delay_ms = static_cast<long>(Int(ctx, n["retryMaxDelayMs"], "retryMaxDelayMs", 0));
}

ProviderSettings ParseProvider(const Ctx& ctx, const std::string& name, const YAML::Node& n) {
  ExpectMap(ctx, n, "provider '" + name + "'");
  CheckKeys(ctx, n, "provider '" + name + "'",
            {"api", "baseUrl", "apiKeyEnv", "headers", "auth", "models", "connectTimeoutSec",
             "idleTimeoutSec", "maxRetries", "retryBaseMs", "retryMaxDelayMs"});
  // A built-in provider's name starts from its settings: the spec changes only what it names.
  const ProviderSettings* builtin = FindBuiltinProvider(name);
  ProviderSettings p = builtin ? *builtin : ProviderSettings{};
  p.name = name;
  ParseProviderEndpoint(ctx, n, builtin != nullptr, p);
  ParseProviderTimeouts(ctx, n, p);
  if (n["models"]) {
    if (!n["models"].IsSequence()) ctx.Fail(n["models"], "models: expected a list");
    p.models.clear();
    for (const auto& m : n["models"]) p.models.push_back(ParseModelInfo(ctx, m));
  }
  return p;
}

// clang-format off
const std::vector<std::string> kTopKeys = {
    "name",        "description", "model",      "instructions", "instructionsFile",
    "thinking",    "tools",       "maxSteps",   "limits",       "permissions",
    "mode",        "roots",       "rules",      "providers",    "commands",
    "scripts",     "models",      "compaction", "sessionDir",   "ttsr",
    "mcp_servers", "mcp",         "skills",     "hooks",        "context",
    "sandbox",     "sandbox_required", "agents", "webSearch",    "proxy"};
// clang-format on

using EnvFn = std::function<std::optional<std::string>(const std::string&)>;

// A string of an MCP server entry, with `${VAR}` expanded; a missing variable fails at the
// string's position.
std::string McpStr(const Ctx& ctx, const YAML::Node& n, const std::string& what, const EnvFn& env) {
  auto expanded = ExpandVars(Str(ctx, n, what), env);
  if (!expanded.ok()) ctx.Fail(n, what + ": " + expanded.error().message);
  return *expanded;
}

// `env` and `headers`: a mapping of name to value, or ACP's list of {name, value}.
std::vector<std::pair<std::string, std::string>> McpPairs(const Ctx& ctx, const YAML::Node& n,
                                                          const std::string& what,
                                                          const EnvFn& env) {
  std::vector<std::pair<std::string, std::string>> out;
  if (n.IsMap()) {
    for (const auto& kv : n)
      out.emplace_back(kv.first.Scalar(),
                       McpStr(ctx, kv.second, what + "." + kv.first.Scalar(), env));
    return out;
  }
  if (!n.IsSequence()) ctx.Fail(n, what + ": expected a mapping of name to value");
  for (const auto& item : n) {
    ExpectMap(ctx, item, what + " entry");
    CheckKeys(ctx, item, what + " entry", {"name", "value"});
    if (!item["name"] || !item["value"])
      ctx.Fail(item, what + " entry: needs both 'name' and 'value'");
    out.emplace_back(Str(ctx, item["name"], "name"), McpStr(ctx, item["value"], "value", env));
  }
  return out;
}

McpTransport McpTransportOf(const Ctx& ctx, const YAML::Node& n) {
  std::string type = n["type"] ? Str(ctx, n["type"], "type") : (n["url"] ? "http" : "stdio");
  if (type == "stdio") return McpTransport::kStdio;
  if (type == "http" || type == "streamableHttp" || type == "streamable-http")
    return McpTransport::kHttp;
  if (type == "sse") return McpTransport::kSse;
  ctx.Fail(n["type"], "type: expected stdio, http or sse, got '" + type + "'");
}

// A server started as a process: command, args, env, cwd.
void ParseMcpStdio(const Ctx& ctx, const std::string& where, const YAML::Node& n, const EnvFn& env,
                   McpServerSpec& m) {
  if (!n["command"]) ctx.Fail(n, where + ": missing required key 'command'");
  for (const char* k : {"url", "headers", "oauth"})
    if (n[k]) ctx.Fail(n[k], where + ": 'url', 'headers' and 'oauth' need type http or sse");
  m.command = McpStr(ctx, n["command"], "command", env);
  if (m.command.empty()) ctx.Fail(n["command"], "command: must not be empty");
  if (n["args"]) {
    if (!n["args"].IsSequence()) ctx.Fail(n["args"], "args: expected a list of strings");
    for (const auto& a : n["args"]) m.args.push_back(McpStr(ctx, a, "args", env));
  }
  if (n["env"]) m.env = McpPairs(ctx, n["env"], "env", env);
  if (n["cwd"]) m.cwd = McpStr(ctx, n["cwd"], "cwd", env);
}

// `oauth:` of an HTTP server: a client registered beforehand (clientId, clientSecret or
// clientSecretEnv, scopes). No message quotes the secret.
McpOAuthClient ParseMcpOAuth(const Ctx& ctx, const YAML::Node& n, const EnvFn& env) {
  ExpectMap(ctx, n, "oauth");
  CheckKeys(ctx, n, "oauth", {"clientId", "clientSecret", "clientSecretEnv", "scopes"});
  McpOAuthClient c;
  if (!n["clientId"]) ctx.Fail(n, "oauth: missing required key 'clientId'");
  c.client_id = McpStr(ctx, n["clientId"], "oauth.clientId", env);
  if (c.client_id.empty()) ctx.Fail(n["clientId"], "oauth.clientId: must not be empty");
  if (n["clientSecret"] && n["clientSecretEnv"])
    ctx.Fail(n["clientSecretEnv"], "oauth: give clientSecret or clientSecretEnv, not both");
  if (n["clientSecret"])
    c.client_secret = McpStr(ctx, n["clientSecret"], "oauth.clientSecret", env);
  if (n["clientSecretEnv"]) {
    c.client_secret_env = Str(ctx, n["clientSecretEnv"], "oauth.clientSecretEnv");
    if (c.client_secret_env.empty())
      ctx.Fail(n["clientSecretEnv"], "oauth.clientSecretEnv: must name a variable");
  }
  if (n["scopes"]) {
    if (!n["scopes"].IsSequence())
      ctx.Fail(n["scopes"], "oauth.scopes: expected a list of strings");
    for (const auto& sc : n["scopes"]) c.scopes.push_back(Str(ctx, sc, "oauth.scopes"));
  }
  return c;
}

// A server reached over HTTP: url, headers, oauth.
void ParseMcpRemote(const Ctx& ctx, const std::string& where, const YAML::Node& n, const EnvFn& env,
                    McpServerSpec& m) {
  if (!n["url"]) ctx.Fail(n, where + ": missing required key 'url'");
  for (const char* k : {"command", "args", "env", "cwd"})
    if (n[k]) ctx.Fail(n[k], std::string(k) + ": only stdio servers take '" + k + "'");
  m.url = McpStr(ctx, n["url"], "url", env);
  if (!IsHttpUrl(m.url)) ctx.Fail(n["url"], "url: must start with http:// or https://");
  if (n["headers"]) m.headers = McpPairs(ctx, n["headers"], "headers", env);
  if (n["oauth"]) m.oauth = ParseMcpOAuth(ctx, n["oauth"], env);
}

McpServerSpec ParseMcpServer(const Ctx& ctx, const std::string& name, const YAML::Node& n,
                             const EnvFn& env) {
  const std::string where = "mcp server '" + name + "'";
  ExpectMap(ctx, n, where);
  CheckKeys(ctx, n, where, {"type", "command", "args", "env", "cwd", "url", "headers", "oauth"});
  McpServerSpec m;
  m.name = name;
  m.transport = McpTransportOf(ctx, n);
  if (m.transport == McpTransport::kStdio) {
    ParseMcpStdio(ctx, where, n, env, m);
  } else {
    ParseMcpRemote(ctx, where, n, env, m);
  }
  return m;
}

// "provider/model": both parts present.
bool IsProviderModel(const std::string& model) {
  auto slash = model.find('/');
  return slash != std::string::npos && slash != 0 && slash + 1 != model.size();
}

// Linux's limits (NAME_MAX, PATH_MAX less its NUL); a longer path can name no file at all.
constexpr size_t kMaxNameBytes = 255;
constexpr size_t kMaxPathBytes = 4095;

// A path as the spec wrote it, shortened and with control bytes (a NUL) as '?', for a message.
std::string Shown(const std::string& path) {
  std::string out = path.size() > 60 ? path.substr(0, 60) + "..." : path;
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20) c = '?';
  return "'" + out + "'";
}

// A path from the spec, resolved against the spec's folder and checked before any filesystem
// call sees it: std::filesystem throws on a name the system rejects, and the kernel would
// silently cut a path at a NUL byte and open another file.
fs::path SpecPath(const Ctx& ctx, const YAML::Node& n, const std::string& what,
                  const std::string& dir) {
  std::string text = Str(ctx, n, what);
  if (text.empty()) ctx.Fail(n, what + ": expected a path, got an empty string");
  if (text.find('\0') != std::string::npos)
    ctx.Fail(n, what + ": path " + Shown(text) + " contains a NUL byte");
  fs::path p = text;
  if (p.is_relative()) p = fs::path(dir) / p;
  if (p.native().size() > kMaxPathBytes)
    ctx.Fail(n, what + ": path " + Shown(text) + " is longer than " +
                    std::to_string(kMaxPathBytes) + " bytes");
  for (const fs::path& part : p) {
    if (part.native().size() > kMaxNameBytes)
      ctx.Fail(n, what + ": path " + Shown(text) + " has a name longer than " +
                      std::to_string(kMaxNameBytes) + " bytes");
  }
  return p;
}

std::string FindSpecInDir(const fs::path& dir) {
  for (const char* name : {"agent.yaml", "agent.yml", "agent.json"}) {
    std::error_code ec;
    if (fs::is_regular_file(dir / name, ec)) return (dir / name).string();
  }
  return {};
}

// The keys of a rule written inline in `rules:` (those of a rule file's front matter, plus its
// name and text).
const std::vector<std::string> kInlineRuleKeys = {
    "name",  "content",       "condition",   "ttsr_trigger", "ttsrTrigger", "scope",
    "globs", "interruptMode", "description", "alwaysApply",  "enabled",     "path"};

std::string Where(const Ctx& ctx, const YAML::Node& n) { return ctx.Where(n); }

void CheckOneOf(const Ctx& ctx, const YAML::Node& n, const std::string& what,
                const std::vector<std::string>& allowed) {
  std::string v = Str(ctx, n, what);
  if (std::find(allowed.begin(), allowed.end(), v) != allowed.end()) return;
  ctx.Fail(n, what + ": expected one of " + JoinStrings(allowed, ", ") + ", got '" + v + "'");
}

// A string or a list of strings.
void CheckStrings(const Ctx& ctx, const YAML::Node& n, const std::string& what) {
  if (n.IsScalar()) return;
  if (!n.IsSequence()) ctx.Fail(n, what + ": expected a string or a list of strings");
  for (const auto& item : n) Str(ctx, item, what);
}

// A rule file or folder named in `rules:`, which must exist.
std::string ExistingRulePath(const Ctx& ctx, const YAML::Node& n, const std::string& what,
                             const std::string& dir) {
  std::string path = SpecPath(ctx, n, what, dir).lexically_normal().string();
  std::error_code ec;
  if (!fs::exists(path, ec)) ctx.Fail(n, what + ": no such file or folder " + Shown(n.Scalar()));
  return path;
}

// A rule written inline: its name, its text and the front matter's keys.
void ParseInlineRule(const Ctx& ctx, const YAML::Node& item, RuleSpec& r) {
  if (!item["name"]) ctx.Fail(item, "rule: 'name' is required for a rule written inline");
  r.name = Str(ctx, item["name"], "rule name");
  if (r.name.empty()) ctx.Fail(item["name"], "rule name: expected a name");
  if (!item["content"])
    ctx.Fail(item, "rule '" + r.name + "': 'content' (the text injected) is required");
  r.content = Str(ctx, item["content"], "rule content");
  if (!item["condition"] && !item["ttsr_trigger"] && !item["ttsrTrigger"])
    ctx.Fail(item, "rule '" + r.name + "': 'condition' is required");
  for (const char* key : {"condition", "ttsr_trigger", "ttsrTrigger", "scope", "globs"})
    if (item[key]) CheckStrings(ctx, item[key], std::string("rule ") + key);
  if (item["interruptMode"])
    CheckOneOf(ctx, item["interruptMode"], "rule interruptMode",
               {"always", "prose-only", "tool-only", "never"});
  if (item["description"]) Str(ctx, item["description"], "rule description");
  if (item["alwaysApply"]) Bool(ctx, item["alwaysApply"], "rule alwaysApply");
  if (item["enabled"]) Bool(ctx, item["enabled"], "rule enabled");
  r.fields = ToJson(item);
}

std::vector<RuleSpec> ParseRules(const Ctx& ctx, const YAML::Node& n, const std::string& dir) {
  if (!n.IsSequence()) ctx.Fail(n, "rules: expected a list of rule files, folders or rules");
  std::vector<RuleSpec> out;
  for (const auto& item : n) {
    RuleSpec r;
    r.where = Where(ctx, item);
    if (item.IsScalar()) {
      r.path = ExistingRulePath(ctx, item, "rules", dir);
    } else {
      ExpectMap(ctx, item, "rule");
      CheckKeys(ctx, item, "rule", kInlineRuleKeys);
      if (item["path"] && item.size() != 1)
        ctx.Fail(item, "rule: 'path' names a file or folder; give no other key");
      if (item["path"]) {
        r.path = ExistingRulePath(ctx, item["path"], "rule path", dir);
      } else {
        ParseInlineRule(ctx, item, r);
      }
    }
    out.push_back(std::move(r));
  }
  return out;
}

TtsrSpec ParseTtsr(const Ctx& ctx, const YAML::Node& n) {
  ExpectMap(ctx, n, "ttsr");
  CheckKeys(ctx, n, "ttsr", {"enabled", "contextMode", "interruptMode", "repeatMode", "repeatGap"});
  TtsrSpec t;
  if (n["enabled"]) t.enabled = Bool(ctx, n["enabled"], "ttsr.enabled");
  if (n["contextMode"]) {
    CheckOneOf(ctx, n["contextMode"], "ttsr.contextMode", {"discard", "keep"});
    t.context_mode = n["contextMode"].Scalar();
  }
  if (n["interruptMode"]) {
    CheckOneOf(ctx, n["interruptMode"], "ttsr.interruptMode",
               {"always", "prose-only", "tool-only", "never"});
    t.interrupt_mode = n["interruptMode"].Scalar();
  }
  if (n["repeatMode"]) {
    CheckOneOf(ctx, n["repeatMode"], "ttsr.repeatMode", {"once", "after-gap"});
    t.repeat_mode = n["repeatMode"].Scalar();
  }
  if (n["repeatGap"])
    t.repeat_gap = static_cast<int>(Int(ctx, n["repeatGap"], "ttsr.repeatGap", 0));
  return t;
}

// `models:`: "provider/model" names, each once.
std::vector<std::string> ParseModelList(const Ctx& ctx, const YAML::Node& m) {
  if (!m.IsSequence()) ctx.Fail(m, "models: expected a list of 'provider/model' names");
  std::vector<std::string> models;
  for (const auto& item : m) {
    std::string id = Str(ctx, item, "models");
    if (!IsProviderModel(id)) ctx.Fail(item, "models: expected 'provider/model', got '" + id + "'");
    if (std::find(models.begin(), models.end(), id) != models.end())
      ctx.Fail(item, "models: '" + id + "' is listed twice");
    models.push_back(id);
  }
  return models;
}

CompactionSpec ParseCompaction(const Ctx& ctx, const YAML::Node& c) {
  ExpectMap(ctx, c, "compaction");
  CheckKeys(ctx, c, "compaction", {"auto", "threshold", "keepRecentTokens"});
  CompactionSpec out;
  if (c["auto"]) out.auto_compact = Bool(ctx, c["auto"], "compaction.auto");
  if (c["threshold"]) {
    const long long t = Int(ctx, c["threshold"], "compaction.threshold", 1);
    if (t > 100) ctx.Fail(c["threshold"], "compaction.threshold: a percentage, 1 to 100");
    out.threshold_percent = static_cast<int>(t);
  }
  if (c["keepRecentTokens"])
    out.keep_recent_tokens = Int(ctx, c["keepRecentTokens"], "compaction.keepRecentTokens", 0);
  return out;
}

// `instructions:` or `instructionsFile:` (at most one of them).
void ParseInstructions(const Ctx& ctx, const YAML::Node& root, const std::string& dir,
                       AgentSpec& spec) {
  if (root["instructions"] && root["instructionsFile"])
    ctx.Fail(root["instructionsFile"], "use either 'instructions' or 'instructionsFile', not both");
  if (root["instructions"]) spec.instructions = Str(ctx, root["instructions"], "instructions");
  if (root["instructionsFile"]) {
    fs::path p = SpecPath(ctx, root["instructionsFile"], "instructionsFile", dir);
    auto text = ReadFile(p.string());
    if (!text.ok())
      ctx.Fail(root["instructionsFile"], "instructionsFile: cannot read " + p.string());
    spec.instructions = *text;
  }
}

// A string that must be one of `allowed`; `error` is the message when it is not.
std::string ChosenWord(const Ctx& ctx, const YAML::Node& n, const std::string& what,
                       const std::vector<std::string>& allowed, const std::string& error) {
  std::string v = Str(ctx, n, what);
  if (std::find(allowed.begin(), allowed.end(), v) == allowed.end()) ctx.Fail(n, error);
  return v;
}

std::vector<std::string> ParseToolList(const Ctx& ctx, const YAML::Node& t,
                                       const std::vector<std::string>& known) {
  if (!t.IsSequence()) ctx.Fail(t, "tools: expected a list of tool names");
  std::vector<std::string> tools;
  for (const auto& item : t) {
    std::string name = Str(ctx, item, "tools");
    if (!known.empty() && std::find(known.begin(), known.end(), name) == known.end()) {
      std::string hint = Suggest(name, known);
      ctx.Fail(item,
               "unknown tool '" + name + "'" +
                   (hint.rfind(" (did", 0) == 0 ? hint : " (built-in tools:" + hint.substr(13)));
    }
    tools.push_back(name);
  }
  return tools;
}

Limits ParseLimits(const Ctx& ctx, const YAML::Node& l) {
  ExpectMap(ctx, l, "limits");
  CheckKeys(ctx, l, "limits", {"maxOutputTokens", "maxTotalTokens"});
  Limits out;
  if (l["maxOutputTokens"])
    out.max_output_tokens = Int(ctx, l["maxOutputTokens"], "maxOutputTokens", 1);
  if (l["maxTotalTokens"])
    out.max_total_tokens = Int(ctx, l["maxTotalTokens"], "maxTotalTokens", 1);
  return out;
}

// A list of domain names (`webSearch.allowedDomains`, ...).
std::vector<std::string> ParseDomains(const Ctx& ctx, const YAML::Node& n,
                                      const std::string& what) {
  if (!n.IsSequence()) ctx.Fail(n, what + ": expected a list of domain names");
  std::vector<std::string> out;
  for (const auto& d : n) {
    std::string name = Str(ctx, d, what);
    if (name.empty() || name.find_first_of(" /:") != std::string::npos)
      ctx.Fail(d, what + ": expected a domain name such as example.com, got " + Shown(name));
    out.push_back(std::move(name));
  }
  return out;
}

// `webSearch:` true/false, or a mapping {enabled, maxUses, allowedDomains, blockedDomains}.
WebSearchSpec ParseWebSearch(const Ctx& ctx, const YAML::Node& n) {
  WebSearchSpec out;
  if (n.IsScalar()) {
    out.enabled = Bool(ctx, n, "webSearch");
    return out;
  }
  if (!n.IsMap()) ctx.Fail(n, "webSearch: expected true, false or a mapping");
  CheckKeys(ctx, n, "webSearch", {"enabled", "maxUses", "allowedDomains", "blockedDomains"});
  out.enabled = n["enabled"] ? Bool(ctx, n["enabled"], "webSearch.enabled") : true;
  if (n["maxUses"]) out.max_uses = static_cast<int>(Int(ctx, n["maxUses"], "webSearch.maxUses", 1));
  if (n["allowedDomains"])
    out.allowed_domains = ParseDomains(ctx, n["allowedDomains"], "webSearch.allowedDomains");
  if (n["blockedDomains"])
    out.blocked_domains = ParseDomains(ctx, n["blockedDomains"], "webSearch.blockedDomains");
  if (!out.allowed_domains.empty() && !out.blocked_domains.empty())
    ctx.Fail(n, "webSearch: give allowedDomains or blockedDomains, not both");
  return out;
}

// `roots:`: folders, resolved (they need not exist yet).
std::vector<std::string> ParseRoots(const Ctx& ctx, const YAML::Node& n, const std::string& dir) {
  if (!n.IsSequence()) ctx.Fail(n, "roots: expected a list of folders");
  std::vector<std::string> roots;
  for (const auto& r : n) {
    fs::path p = SpecPath(ctx, r, "roots", dir);
    std::error_code ec;
    fs::path resolved = fs::weakly_canonical(p, ec);
    if (ec) ctx.Fail(r, "roots: cannot resolve " + Shown(r.Scalar()) + ": " + ec.message());
    roots.push_back(resolved.string());
  }
  return roots;
}

// What the engine does: model settings, instructions, tools, limits, permissions, files. Each
// key is one part: its error is kept and the next key is read.
void ParseBehaviour(const Ctx& ctx, const YAML::Node& root, const std::string& dir,
                    const LoadOptions& options, AgentSpec& spec) {
  using Node = YAML::Node;
  ParseKey(ctx, root, "compaction",
           [&](const Node& n) { spec.compaction = ParseCompaction(ctx, n); });
  ctx.Part([&] { ParseInstructions(ctx, root, dir, spec); });
  ParseKey(ctx, root, "thinking", [&](const Node& n) {
    spec.thinking =
        ChosenWord(ctx, n, "thinking", {"off", "minimal", "low", "medium", "high", "xhigh"},
                   "thinking: expected one of off, minimal, low, medium, high, xhigh");
  });
  ParseKey(ctx, root, "tools", [&](const Node& n) {
    spec.tools = ParseToolList(ctx, n, options.known_tools);
    spec.tools_set = true;
  });
  ParseKey(ctx, root, "maxSteps",
           [&](const Node& n) { spec.max_steps = static_cast<int>(Int(ctx, n, "maxSteps", 1)); });
  ParseKey(ctx, root, "limits", [&](const Node& n) { spec.limits = ParseLimits(ctx, n); });
  ParseKey(ctx, root, "webSearch",
           [&](const Node& n) { spec.web_search = ParseWebSearch(ctx, n); });
  ParseKey(ctx, root, "permissions", [&](const Node& n) {
    if (!n.IsMap() && !n.IsSequence()) ctx.Fail(n, "permissions: expected a list or a mapping");
    spec.permissions = ToJson(n);
  });
  ParseKey(ctx, root, "mode", [&](const Node& n) {
    spec.default_mode = ChosenWord(ctx, n, "mode", {"default", "accept-edits", "plan", "bypass"},
                                   "mode: expected one of default, accept-edits, plan, bypass");
  });
  ParseKey(ctx, root, "roots", [&](const Node& n) { spec.roots = ParseRoots(ctx, n, dir); });
  ParseKey(ctx, root, "sessionDir", [&](const Node& n) {
    spec.session_dir = SpecPath(ctx, n, "sessionDir", dir).lexically_normal();
  });
}

std::map<std::string, ProviderSettings> ParseProviders(const Ctx& ctx, const YAML::Node& p) {
  ExpectMap(ctx, p, "providers");
  std::map<std::string, ProviderSettings> providers;
  for (const auto& kv : p) {
    std::string name = kv.first.Scalar();
    if (name == "script") ctx.Fail(kv.first, "providers: 'script' is reserved for offline scripts");
    providers[name] = ParseProvider(ctx, name, kv.second);
  }
  return providers;
}

SlashCommand ParseCommand(const Ctx& ctx, const YAML::Node& item) {
  ExpectMap(ctx, item, "command");
  CheckKeys(ctx, item, "command", {"name", "description", "prompt", "hint"});
  SlashCommand cmd;
  if (!item["name"]) ctx.Fail(item, "command: missing required key 'name'");
  cmd.name = Str(ctx, item["name"], "name");
  if (!cmd.name.empty() && cmd.name[0] == '/') cmd.name.erase(0, 1);
  if (cmd.name.empty() || cmd.name.find_first_of(" \t\n") != std::string::npos)
    ctx.Fail(item["name"], "command name must be one word");
  if (!item["prompt"]) ctx.Fail(item, "command '" + cmd.name + "': missing required key 'prompt'");
  cmd.prompt = Str(ctx, item["prompt"], "prompt");
  if (item["description"]) cmd.description = Str(ctx, item["description"], "description");
  if (item["hint"]) cmd.hint = Str(ctx, item["hint"], "hint");
  return cmd;
}

// Each command is one part: a bad one is reported and the next is read.
std::vector<SlashCommand> ParseCommands(const Ctx& ctx, const YAML::Node& c) {
  if (!c.IsSequence()) ctx.Fail(c, "commands: expected a list");
  std::vector<SlashCommand> commands;
  for (const auto& item : c) ctx.Part([&] { commands.push_back(ParseCommand(ctx, item)); });
  return commands;
}

// `skills:` (SkillsSpec).
SkillsSpec ParseSkills(const Ctx& ctx, const YAML::Node& n, const std::string& dir) {
  SkillsSpec out;
  if (n.IsScalar()) {  // `skills: false` turns both off
    out.enabled = out.commands = Bool(ctx, n, "skills");
    return out;
  }
  ExpectMap(ctx, n, "skills");
  CheckKeys(ctx, n, "skills", {"enabled", "commands", "project", "user", "paths"});
  if (n["enabled"]) out.enabled = Bool(ctx, n["enabled"], "skills.enabled");
  if (n["commands"]) out.commands = Bool(ctx, n["commands"], "skills.commands");
  if (n["project"]) out.project = Bool(ctx, n["project"], "skills.project");
  if (n["user"]) out.user = Bool(ctx, n["user"], "skills.user");
  if (const YAML::Node& p = n["paths"]) {
    if (!p.IsSequence()) ctx.Fail(p, "skills.paths: expected a list of folders");
    for (const auto& item : p)
      out.paths.push_back(SpecPath(ctx, item, "skills.paths", dir).lexically_normal().string());
  }
  return out;
}

// `scripts:`: each a file beside the spec (a string) or written inline.
std::map<std::string, Script> ParseScripts(const Ctx& ctx, const YAML::Node& s,
                                           const std::string& dir) {
  ExpectMap(ctx, s, "scripts");
  std::map<std::string, Script> scripts;
  for (const auto& kv : s) {
    std::string name = kv.first.Scalar();
    if (!kv.second.IsScalar()) {
      scripts[name] = ParseScriptNode(ctx, kv.second, name);
      continue;
    }
    fs::path p = SpecPath(ctx, kv.second, "scripts." + name, dir);
    auto loaded = LoadScriptFile(p.string(), name);
    if (!loaded.ok()) ctx.Fail(kv.second, "scripts." + name + ": " + loaded.error().message);
    scripts[name] = std::move(*loaded);
  }
  return scripts;
}

std::vector<McpServerSpec> ParseMcpServers(const Ctx& ctx, const YAML::Node& m,
                                           const LoadOptions& options) {
  ExpectMap(ctx, m, "mcp_servers");
  EnvFn env = options.env ? options.env : EnvFn([](const std::string& k) { return ProcessEnv(k); });
  std::vector<McpServerSpec> servers;
  for (const auto& kv : m) {
    std::string name = kv.first.Scalar();
    if (name.empty()) ctx.Fail(kv.first, "mcp_servers: a server needs a name");
    servers.push_back(ParseMcpServer(ctx, name, kv.second, env));
  }
  return servers;
}

McpSettings ParseMcpSettings(const Ctx& ctx, const YAML::Node& m) {
  ExpectMap(ctx, m, "mcp");
  CheckKeys(ctx, m, "mcp", {"startTimeoutMs", "callTimeoutMs", "maxRestarts", "clientMetadataUrl"});
  McpSettings out;
  if (m["startTimeoutMs"])
    out.start_timeout_ms = static_cast<long>(Int(ctx, m["startTimeoutMs"], "startTimeoutMs", 1));
  if (m["callTimeoutMs"])
    out.call_timeout_ms = static_cast<long>(Int(ctx, m["callTimeoutMs"], "callTimeoutMs", 1));
  if (m["maxRestarts"])
    out.max_restarts = static_cast<int>(Int(ctx, m["maxRestarts"], "maxRestarts", 0));
  if (m["clientMetadataUrl"]) {
    out.client_metadata_url = Str(ctx, m["clientMetadataUrl"], "clientMetadataUrl");
    const std::string& u = out.client_metadata_url;
    const size_t slash = u.rfind("https://", 0) == 0 ? u.find('/', 8) : std::string::npos;
    if (slash == std::string::npos || slash + 1 >= u.size())
      ctx.Fail(m["clientMetadataUrl"], "clientMetadataUrl: expected an https URL with a path");
  }
  return out;
}

// --- hooks: `hooks:`, Claude Code's shape plus `project` and `timeout` (config/hooks_spec.h) ---
HooksSpec ParseHooks(const Ctx& ctx, const YAML::Node& h) {
  ExpectMap(ctx, h, "hooks");
  HooksSpec out;
  Json::Value events(Json::objectValue);
  for (const auto& kv : h) {
    const std::string key = kv.first.Scalar();
    if (key == "project") {
      out.project = Bool(ctx, kv.second, "hooks.project");
    } else if (key == "timeout") {
      out.default_timeout_ms = static_cast<long>(Int(ctx, kv.second, "hooks.timeout", 1) * 1000);
    } else {
      events[key] = ToJson(kv.second);
    }
  }
  Result<ParsedHooks> parsed = ParseHookGroups(events, fs::path(ctx.file()).filename().string());
  if (!parsed.ok()) ctx.Fail(h, parsed.error().message);
  out.groups = std::move(parsed->groups);
  for (const std::string& s : parsed->skipped) log::Warn(s);
  return out;
}
// --- end of hooks ---

// `context:` (the project context of the system prompt): a map of settings, or false (all off).
ContextSpec ParseContext(const Ctx& ctx, const YAML::Node& n) {
  ContextSpec out;
  if (n.IsScalar()) {
    if (Bool(ctx, n, "context")) return out;
    out.files = out.user_files = out.rules = out.environment = out.git = false;
    return out;
  }
  ExpectMap(ctx, n, "context");
  CheckKeys(ctx, n, "context",
            {"files", "fileNames", "userFiles", "rules", "environment", "git", "maxBytes",
             "maxFileBytes", "importDepth"});
  const std::pair<const char*, bool*> flags[] = {{"files", &out.files},
                                                 {"userFiles", &out.user_files},
                                                 {"rules", &out.rules},
                                                 {"environment", &out.environment},
                                                 {"git", &out.git}};
  for (const auto& [key, field] : flags)
    if (n[key]) *field = Bool(ctx, n[key], std::string("context.") + key);
  if (const YAML::Node& names = n["fileNames"]) {
    if (!names.IsSequence()) ctx.Fail(names, "context.fileNames: expected a list of file names");
    out.file_names.clear();
    for (const auto& item : names) {
      std::string name = Str(ctx, item, "context.fileNames");
      if (name.empty() || name.find('/') != std::string::npos)
        ctx.Fail(item, "context.fileNames: a file name without '/', got '" + name + "'");
      out.file_names.push_back(name);
    }
  }
  if (n["maxBytes"]) out.max_bytes = Int(ctx, n["maxBytes"], "context.maxBytes", 0);
  if (n["maxFileBytes"])
    out.max_file_bytes = Int(ctx, n["maxFileBytes"], "context.maxFileBytes", 0);
  if (n["importDepth"]) {
    const long long d = Int(ctx, n["importDepth"], "context.importDepth", 0);
    if (d > 20) ctx.Fail(n["importDepth"], "context.importDepth: 0 to 20");
    out.import_depth = static_cast<int>(d);
  }
  return out;
}

// What the engine is given: rules, providers, commands, scripts, MCP servers. Each key is one
// part: its error is kept and the next key is read.
void ParseExtensions(const Ctx& ctx, const YAML::Node& root, const std::string& dir,
                     const LoadOptions& options, AgentSpec& spec) {
  using Node = YAML::Node;
  ParseKey(ctx, root, "rules", [&](const Node& n) { spec.rules = ParseRules(ctx, n, dir); });
  ParseKey(ctx, root, "ttsr", [&](const Node& n) { spec.ttsr = ParseTtsr(ctx, n); });
  std::error_code ec;
  if (fs::is_directory(fs::path(dir) / "rules", ec))
    spec.rules_dir = (fs::path(dir) / "rules").string();
  ParseKey(ctx, root, "providers", [&](const Node& n) { spec.providers = ParseProviders(ctx, n); });
  ParseKey(ctx, root, "commands", [&](const Node& n) { spec.commands = ParseCommands(ctx, n); });
  ParseKey(ctx, root, "skills", [&](const Node& n) { spec.skills = ParseSkills(ctx, n, dir); });
  ParseKey(ctx, root, "scripts", [&](const Node& n) { spec.scripts = ParseScripts(ctx, n, dir); });
  ParseKey(ctx, root, "mcp_servers",
           [&](const Node& n) { spec.mcp_servers = ParseMcpServers(ctx, n, options); });
  ParseKey(ctx, root, "mcp", [&](const Node& n) { spec.mcp = ParseMcpSettings(ctx, n); });
  ParseKey(ctx, root, "hooks", [&](const Node& n) { spec.hooks = ParseHooks(ctx, n); });
  ParseKey(ctx, root, "context", [&](const Node& n) { spec.context = ParseContext(ctx, n); });
  ParseKey(ctx, root, "sandbox", [&](const Node& n) {
    Result<SandboxSpec> parsed = ParseSandboxSpec(ToJson(n));
    if (!parsed.ok()) ctx.Fail(n, parsed.error().message);
    spec.sandbox = std::move(*parsed);
  });
  ParseKey(ctx, root, "sandbox_required",
           [&](const Node& n) { spec.sandbox.required = Bool(ctx, n, "sandbox_required"); });
  ParseKey(ctx, root, "proxy", [&](const Node& n) {  // config/proxy_spec.h
    EnvFn env =
        options.env ? options.env : EnvFn([](const std::string& k) { return ProcessEnv(k); });
    Result<agent::ProxySetting> parsed = ParseProxySpec(ToJson(n), env);
    if (!parsed.ok()) ctx.Fail(n, parsed.error().message);
    spec.proxy = std::move(*parsed);
  });
  ParseKey(ctx, root, "agents", [&](const Node& n) {  // subagents (config/agents_spec.h)
    auto agents = ParseSubagents(ToJson(n), "", options.known_tools);
    if (!agents.ok()) ctx.Fail(n, agents.error().message);
    spec.agents = std::move(*agents);
  });
}

bool HasScript(const AgentSpec& spec, const std::string& name) {
  return spec.scripts.count(name) || BuiltinScripts().count(name);
}

// A script model must name a script the spec has, a file beside it, or a built-in one.
void ResolveScriptModel(const Ctx& ctx, const YAML::Node& root, const std::string& dir,
                        AgentSpec& spec) {
  if (spec.model.rfind("script/", 0) != 0) return;
  std::string name = spec.model.substr(7);
  for (const char* ext : {".script.yaml", ".script.yml", ".script.json"}) {
    fs::path p = fs::path(dir) / (name + ext);
    std::error_code ec;
    if (spec.scripts.count(name) || !fs::is_regular_file(p, ec)) continue;
    auto loaded = LoadScriptFile(p.string(), name);
    if (!loaded.ok()) throw SpecError{loaded.error().message};
    spec.scripts[name] = std::move(*loaded);
  }
  if (!HasScript(spec, name))
    ctx.Fail(root["model"] ? root["model"] : root, "model: no script named '" + name +
                                                       "' (define scripts." + name + " or add " +
                                                       name + ".script.yaml beside the spec)");
}

// Every offered model names a provider the spec can reach (its key is checked when chosen).
void CheckOfferedModels(const Ctx& ctx, const YAML::Node& models, const AgentSpec& spec) {
  for (const auto& item : models) {
    const std::string id = item.Scalar();
    const std::string provider = id.substr(0, id.find('/'));
    const std::string name = id.substr(id.find('/') + 1);
    if (provider == "script") {
      if (!HasScript(spec, name)) ctx.Fail(item, "models: no script named '" + name + "'");
    } else if (!spec.providers.count(provider) && !FindBuiltinProvider(provider)) {
      ctx.Fail(item, "models: unknown provider '" + provider + "'" +
                         Suggest(provider, BuiltinProviderNames()));
    }
  }
}

AgentSpec ParseSpec(const Ctx& ctx, const YAML::Node& root, const std::string& dir,
                    const LoadOptions& options) {
  AgentSpec spec;
  spec.source = ctx.file();
  spec.dir = dir;
  if (!root.IsMap()) ctx.Fail(root, "an agent spec must be a mapping of keys");
  CheckKeys(ctx, root, "", kTopKeys);
  ParseKey(ctx, root, "name", [&](const YAML::Node& n) { spec.name = Str(ctx, n, "name"); });
  if (spec.name.empty()) spec.name = fs::path(dir).filename().string();
  ParseKey(ctx, root, "description",
           [&](const YAML::Node& n) { spec.description = Str(ctx, n, "description"); });
  bool model_ok = true;  // a bad `model:` is reported once, not again as missing
  ParseKey(ctx, root, "model", [&](const YAML::Node& n) {
    model_ok = false;
    spec.model = Str(ctx, n, "model");
    if (!IsProviderModel(spec.model))
      ctx.Fail(n, "model: expected 'provider/model', got '" + spec.model + "'");
    model_ok = true;
  });
  bool models_ok = false;
  ParseKey(ctx, root, "models", [&](const YAML::Node& n) {
    spec.models = ParseModelList(ctx, n);
    models_ok = true;
  });
  ParseBehaviour(ctx, root, dir, options, spec);
  ParseExtensions(ctx, root, dir, options, spec);
  if (!options.model_override.empty()) {
    spec.model = options.model_override;
    model_ok = IsProviderModel(spec.model);
    if (!model_ok) throw SpecError{"--model: expected 'provider/model', got '" + spec.model + "'"};
  }
  if (spec.model.empty() && model_ok)
    ctx.Keep(root, "missing required key 'model' (e.g. model: openai/gpt-4o-mini)");
  // The models against the scripts and providers: only when those read cleanly (a script that
  // failed would otherwise be reported again as missing).
  const bool parts_ok = !ctx.failed();
  if (parts_ok && model_ok && !spec.model.empty())
    ctx.Part([&] { ResolveScriptModel(ctx, root, dir, spec); });
  if (parts_ok && models_ok) ctx.Part([&] { CheckOfferedModels(ctx, root["models"], spec); });
  ctx.ThrowKept();
  // Other providers are checked when the engine builds them (BuildAgent).
  return spec;
}

Script MakeScript(const std::string& name, std::vector<ScriptReply> replies) {
  Script s;
  s.name = name;
  s.source = "(built-in)";
  s.replies = std::move(replies);
  return s;
}

}  // namespace

Result<std::string> ExpandVars(const std::string& text, const EnvFn& env) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '$' || i + 1 >= text.size()) {
      out += text[i];
      continue;
    }
    if (text[i + 1] == '$') {
      out += '$';
      ++i;
      continue;
    }
    if (text[i + 1] != '{') {
      out += text[i];
      continue;
    }
    size_t close = text.find('}', i + 2);
    if (close == std::string::npos)
      return MakeError(ErrorCode::kConfigInvalid, "unclosed '${' in '" + text + "'");
    std::string inner = text.substr(i + 2, close - i - 2);
    std::optional<std::string> fallback;
    if (size_t dash = inner.find(":-"); dash != std::string::npos) {
      fallback = inner.substr(dash + 2);
      inner.resize(dash);
    }
    if (inner.empty() ||
        inner.find_first_not_of(
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") != std::string::npos)
      return MakeError(ErrorCode::kConfigInvalid, "bad variable name '${" + inner + "}'");
    std::optional<std::string> value = env ? env(inner) : std::nullopt;
    if (!value) value = fallback;
    if (!value)
      return MakeError(ErrorCode::kConfigInvalid, "environment variable " + inner +
                                                      " is not set (write ${" + inner +
                                                      ":-default} for a default)");
    out += *value;
    i = close;
  }
  return out;
}

Result<Script> LoadScriptFile(const std::string& path, const std::string& name) {
  auto text = ReadFile(path);
  if (!text.ok()) return text.error();
  Ctx ctx(path);
  try {
    Script script = ParseScriptNode(ctx, ParseYaml(ctx, *text), name);
    ctx.ThrowKept();
    return script;
  } catch (const SpecError& e) {
    return MakeError(ErrorCode::kConfigInvalid, e.message);
  } catch (const YAML::Exception& e) {
    return MakeError(ErrorCode::kConfigInvalid, path + ":1:1: " + e.what());
  } catch (const std::exception& e) {
    // A last line of defence (a filesystem or allocation failure): never end the process.
    return MakeError(ErrorCode::kConfigInvalid, path + ":1:1: " + e.what());
  }
}

Result<AgentSpec> LoadAgentSpec(const std::string& path, const LoadOptions& options) {
  std::error_code ec;
  fs::path p = fs::absolute(path, ec);
  if (ec || !fs::exists(p, ec))
    return MakeError(ErrorCode::kConfigNotFound, path + ": no such file or folder");
  std::string file;
  if (fs::is_directory(p, ec)) {
    file = FindSpecInDir(p);
    if (file.empty())
      return MakeError(ErrorCode::kConfigNotFound,
                       path + ": folder holds no agent.yaml, agent.yml or agent.json");
  } else {
    std::string ext = p.extension().string();
    if (ext != ".yaml" && ext != ".yml" && ext != ".json")
      return MakeError(ErrorCode::kConfigInvalid,
                       p.string() + ":1:1: expected a .yaml, .yml or .json spec or a folder");
    file = p.string();
  }
  auto text = ReadFile(file);
  if (!text.ok()) return text.error();
  std::string dir = fs::path(file).parent_path().string();
  Ctx ctx(file);
  try {
    AgentSpec spec = ParseSpec(ctx, ParseYaml(ctx, *text), dir, options);
    // A folder's AGENTS.md is appended to the instructions.
    fs::path agents_md = fs::path(dir) / "AGENTS.md";
    if (fs::is_regular_file(agents_md, ec)) {
      auto md = ReadFile(agents_md.string());
      if (md.ok()) {
        if (!spec.instructions.empty() && spec.instructions.back() != '\n')
          spec.instructions += "\n";
        if (!spec.instructions.empty()) spec.instructions += "\n";
        spec.instructions += *md;
      }
    }
    return spec;
  } catch (const SpecError& e) {
    return MakeError(ErrorCode::kConfigInvalid, e.message);
  } catch (const YAML::Exception& e) {
    return MakeError(ErrorCode::kConfigInvalid, file + ":1:1: " + e.what());
  } catch (const std::exception& e) {
    // A last line of defence (a filesystem or allocation failure): never end the process.
    return MakeError(ErrorCode::kConfigInvalid, file + ":1:1: " + e.what());
  }
}

const std::map<std::string, Script>& BuiltinScripts() {
  static const std::map<std::string, Script>* scripts = [] {
    auto* m = new std::map<std::string, Script>();
    ScriptStep echo;
    echo.text = "You said: {{input}}";
    (*m)["echo"] = MakeScript("echo", {ScriptReply{"", {echo}}});
    return m;
  }();
  return *scripts;
}

}  // namespace lousho::config
