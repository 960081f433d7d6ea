// Stored credentials: a small JSON file in the user's config folder, private to its owner.
#include "config/credentials.h"

#include <filesystem>
#include <memory>
#include <utility>

#include "support/files.h"
#include "support/json_util.h"

namespace lousho::config {

std::string CredentialsPath(const EnvLookup& getenv) {
  std::string base = ConfigHome(getenv);
  return base.empty() ? std::string() : base + "/lousho/credentials.json";
}

Result<StoredCredentials> LoadCredentials(const std::string& path) {
  StoredCredentials out;
  if (path.empty()) return out;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return out;
  auto text = ReadDiskFile(path, 1 << 20);
  if (!text.ok()) return MakeError(ErrorCode::kConfigInvalid, text.error().message);
  // The file holds secrets: a parse error names the file, never its text.
  auto json = ParseJson(*text);
  if (!json.ok() || !json->isObject())
    return MakeError(ErrorCode::kConfigInvalid,
                     path + ": not a JSON object (run `lousho setup` to write it again)");
  out.provider = StringOr(*json, "provider");
  out.model = StringOr(*json, "model");
  const Json::Value& stored = MemberOrNull(*json, "env");
  for (const std::string& name : MemberNames(stored)) {
    if (auto v = AsString(MemberOrNull(stored, name)); v && !v->empty()) out.env[name] = *v;
  }
  // An older setup stored a compatible server as OPENAI_BASE_URL / OPENAI_API_KEY, which the
  // openai provider then took for its own: read them as the server's.
  const auto base = out.env.find("OPENAI_BASE_URL");
  if (out.model.starts_with("openai-compatible/") && base != out.env.end()) {
    out.env[kStoredCompatibleBaseUrl] = base->second;
    out.env.erase(base);
    if (auto key = out.env.find("OPENAI_API_KEY"); key != out.env.end()) {
      out.env[kStoredCompatibleKey] = key->second;
      out.env.erase(key);
    }
  }
  return out;
}

Status SaveCredentials(const std::string& path, const StoredCredentials& credentials) {
  if (path.empty())
    return MakeError(ErrorCode::kConfigNotFound,
                     "no place for credentials: neither HOME nor XDG_CONFIG_HOME is set");
  Json::Value root(Json::objectValue);
  if (!credentials.provider.empty()) root["provider"] = credentials.provider;
  if (!credentials.model.empty()) root["model"] = credentials.model;
  Json::Value env(Json::objectValue);
  for (const auto& [k, v] : credentials.env) env[k] = v;
  root["env"] = env;
  return WritePrivateFile(path, WriteJsonPretty(root) + "\n");
}

Result<bool> ForgetCredentials(const std::string& path) {
  if (path.empty()) return false;
  std::error_code ec;
  const bool removed = std::filesystem::remove(path, ec);
  if (ec)
    return MakeError(ErrorCode::kConfigInvalid, "cannot remove " + path + ": " + ec.message());
  return removed;
}

EnvLookup WithStoredCredentials(EnvLookup process_env, StoredCredentials stored) {
  auto values = std::make_shared<const std::map<std::string, std::string>>(std::move(stored.env));
  return [process_env = std::move(process_env),
          values](const std::string& name) -> std::optional<std::string> {
    if (process_env) {
      if (auto v = process_env(name); v && !v->empty()) return v;
    }
    auto it = values->find(name);
    if (it != values->end()) return it->second;
    return std::nullopt;
  };
}

}  // namespace lousho::config
