// Agent building: the spec's model, tools and permission rules.
#include "host/agent_builder.h"

#include <algorithm>

#include "agent/builtin_commands.h"
#include "agent/providers/factory.h"
#include "agent/providers/script_provider.h"
#include "agent/tools/builtin_tools.h"
#include "config/credentials.h"
#include "config/model_catalog.h"
#include "support/log.h"

namespace lousho::agent {

Result<ModelChoice> ResolveModel(const config::AgentSpec& spec, const std::string& provider_name,
                                 const std::string& model_id, const EnvLookup& getenv) {
  ModelChoice m;
  m.provider_name = provider_name;
  m.model_id = model_id;
  m.thinking = ParseThinkingLevel(spec.thinking);
  if (provider_name == "script") {
    auto it = spec.scripts.find(model_id);
    if (it != spec.scripts.end()) {
      m.provider = std::make_shared<ScriptProvider>(it->second);
      return m;
    }
    const auto& builtin = config::BuiltinScripts();
    auto b = builtin.find(model_id);
    if (b == builtin.end())
      return MakeError(ErrorCode::kConfigInvalid,
                       spec.source + ": unknown script '" + model_id + "'");
    m.provider = std::make_shared<ScriptProvider>(b->second);
    return m;
  }
  const config::ProviderSettings* settings = nullptr;
  auto it = spec.providers.find(provider_name);
  settings = it != spec.providers.end() ? &it->second : config::FindBuiltinProvider(provider_name);
  if (settings == nullptr) {
    std::string known;
    for (const auto& n : config::BuiltinProviderNames()) known += (known.empty() ? "" : ", ") + n;
    return MakeError(ErrorCode::kConfigInvalid, spec.source + ": unknown provider '" +
                                                    provider_name + "' (built-in: " + known +
                                                    ", script; or define it under providers:)");
  }
  auto provider = MakeHttpProvider(*settings, model_id, getenv, spec.proxy);
  if (!provider.ok()) return provider.error();
  m.provider = *provider;
  return m;
}

namespace {

bool HasKey(const config::ProviderSettings& p, const EnvLookup& getenv) {
  if (p.api_key_env.empty()) return true;
  auto set = [&](const std::string& name) {
    auto v = getenv ? getenv(name) : std::nullopt;
    return v && !v->empty();
  };
  return set(p.api_key_env) || (p.api == "anthropic-messages" && set("ANTHROPIC_AUTH_TOKEN")) ||
         (p.api == "gemini" && set("GOOGLE_API_KEY"));
}

// The display name of a model: the catalogue's (the spec's provider entry, else the built-in
// one), else "provider/id".
std::string OfferedName(const config::AgentSpec& spec, const std::string& provider,
                        const std::string& id) {
  auto it = spec.providers.find(provider);
  const config::ProviderSettings* p =
      it != spec.providers.end() ? &it->second : config::FindBuiltinProvider(provider);
  const config::ModelInfo* info = p ? config::FindModel(*p, id) : nullptr;
  return info && !info->name.empty() ? info->name : provider + "/" + id;
}

// Appends a model once (a second offer of the same provider and id is dropped).
void AddOffer(std::vector<ModelOption>* out, const std::string& provider, const std::string& id,
              const std::string& name) {
  for (const auto& m : *out)
    if (m.provider == provider && m.model_id == id) return;
  out->push_back({provider, id, name.empty() ? id : name});
}

// Every model of the spec's providers and then the built-in ones (a spec entry replaces the
// built-in of its name) that can be used now: a key is set, or none is needed.
void AddUsableProviders(const config::AgentSpec& spec, const EnvLookup& getenv,
                        std::vector<ModelOption>* out) {
  for (const auto& [name, p] : spec.providers)
    if (HasKey(p, getenv))
      for (const auto& m : p.models) AddOffer(out, name, m.id, m.name);
  for (const auto& name : config::BuiltinProviderNames()) {
    if (spec.providers.count(name)) continue;
    const config::ProviderSettings* p = config::FindBuiltinProvider(name);
    if (p && HasKey(*p, getenv))
      for (const auto& m : p->models) AddOffer(out, name, m.id, m.name);
  }
}

// The spec's `models:`, else every model of the spec's and the catalogue's providers that can be
// used now (a key is set, or none is needed); the agent's own model first.
std::vector<ModelOption> OfferedModels(const config::AgentSpec& spec, const ModelChoice& own,
                                       const EnvLookup& getenv) {
  std::vector<ModelOption> out;
  if (!own.provider_name.empty())
    AddOffer(&out, own.provider_name, own.model_id,
             OfferedName(spec, own.provider_name, own.model_id));
  if (spec.models.empty()) {
    AddUsableProviders(spec, getenv, &out);
    return out;
  }
  for (const auto& id : spec.models) {
    const size_t slash = id.find('/');
    const std::string provider = id.substr(0, slash), model = id.substr(slash + 1);
    AddOffer(&out, provider, model, OfferedName(spec, provider, model));
  }
  return out;
}

// The tool names of the agent: the spec's list as it is; without one, every built-in but
// apply_patch, which takes the place of edit and write for the models only the Responses API
// serves (the codex models, trained on its format).
std::vector<std::string> ToolNames(const config::AgentSpec& spec, const std::string& provider,
                                   const std::string& model_id) {
  if (spec.tools_set) return spec.tools;
  auto it = spec.providers.find(provider);
  const config::ProviderSettings* p =
      it != spec.providers.end() ? &it->second : config::FindBuiltinProvider(provider);
  const bool patch = p != nullptr && config::ResponsesOnlyModel(*p, model_id);
  std::vector<std::string> out;
  for (const std::string& n : BuiltinToolNames()) {
    if (n == "apply_patch" && !patch) continue;
    if ((n == "edit" || n == "write") && patch) continue;
    out.push_back(n);
  }
  return out;
}

// `unusable`: the model cannot be built at all (no credentials to pick one); the agent is
// built without it and carries this as its provider_error.
Result<std::shared_ptr<AgentConfig>> Build(const config::AgentSpec& spec, const EnvLookup& getenv,
                                           const std::optional<Error>& unusable) {
  auto agent = std::make_shared<AgentConfig>();
  agent->name = spec.name;
  agent->instructions = spec.instructions;
  agent->max_steps = spec.max_steps;
  agent->limits = spec.limits;
  agent->web_search = spec.web_search;
  agent->proxy = spec.proxy;
  agent->extra_roots = spec.roots;
  agent->commands = spec.commands;
  agent->skills = spec.skills;
  agent->session_dir = spec.session_dir;
  agent->rules = rules::LoadAgentRules(spec, getenv("HOME").value_or(""));
  for (const auto& w : agent->rules->warnings) log::Warn("stream rules: " + w);
  agent->mcp_servers = spec.mcp_servers;
  agent->mcp = spec.mcp;
  agent->hooks = spec.hooks;
  agent->sandbox = spec.sandbox;
  const size_t slash = spec.model.find('/');
  const std::string provider_name = spec.model.substr(0, slash);
  const std::string model_id = slash == std::string::npos ? "" : spec.model.substr(slash + 1);
  Result<ModelChoice> model = unusable ? Result<ModelChoice>(*unusable)
                                       : ResolveModel(spec, provider_name, model_id, getenv);
  if (model.ok()) {
    agent->model = std::move(*model);
  } else if (model.error().code == ErrorCode::kProviderAuth) {
    agent->model.provider_name = provider_name;
    agent->model.model_id = model_id;
    agent->model.thinking = ParseThinkingLevel(spec.thinking);
    agent->provider_error = model.error();
  } else {
    return model.error();
  }
  std::vector<std::string> names = ToolNames(spec, provider_name, model_id);
  // `bash` brings the tools that read and stop its background jobs.
  if (std::find(names.begin(), names.end(), "bash") != names.end())
    for (const char* companion : {"bash_output", "bash_kill"})
      if (std::find(names.begin(), names.end(), companion) == names.end())
        names.emplace_back(companion);
  for (const auto& name : names) {
    std::unique_ptr<Tool> tool =
        name == "fetch" ? tools::MakeFetchTool(spec.proxy) : MakeBuiltinTool(name);
    if (!tool)
      return MakeError(ErrorCode::kConfigInvalid, spec.source + ": unknown tool '" + name + "'");
    agent->tools.push_back(std::move(tool));
  }
  if (!spec.permissions.isNull()) {
    auto rules = ParsePermissionRules(spec.permissions);
    if (!rules.ok())
      return MakeError(ErrorCode::kConfigInvalid,
                       spec.source + ": permissions: " + rules.error().message);
    agent->permission_rules = *rules;
  }
  auto mode = ParsePermissionMode(spec.default_mode);
  if (mode) agent->default_mode = *mode;
  agent->compaction.auto_compact = spec.compaction.auto_compact;
  agent->compaction.threshold_percent = spec.compaction.threshold_percent;
  agent->compaction.keep_recent_tokens = spec.compaction.keep_recent_tokens;
  agent->models = OfferedModels(spec, agent->model, getenv);
  // Sessions build the provider of a model they switch to from the same spec and environment.
  auto kept = std::make_shared<const config::AgentSpec>(spec);
  agent->resolve_model = [kept, getenv](const std::string& provider, const std::string& id) {
    return ResolveModel(*kept, provider, id, getenv);
  };
  return agent;
}

// A spec command named like a built-in one is never offered (the built-in one takes
// precedence): said when the spec loads, so `lousho validate` and the log show it.
void WarnShadowedCommands(const config::AgentSpec& spec) {
  for (const config::SlashCommand& c : spec.commands) {
    if (FindBuiltinCommand(c.name) != nullptr)
      log::Warn(spec.source + ": command '/" + c.name +
                "' has the name of a built-in command, which takes precedence: it is never "
                "offered; give it another name");
  }
}

}  // namespace

Result<std::shared_ptr<const AgentConfig>> BuildAgent(const config::AgentSpec& spec,
                                                      const EnvLookup& getenv) {
  auto agent = Build(spec, getenv, std::nullopt);
  if (!agent.ok()) return agent.error();
  return std::shared_ptr<const AgentConfig>(*agent);
}

Result<LoadedAgent> LoadAgent(const config::AgentChoice& choice, const std::string& model_override,
                              const EnvLookup& process_env) {
  LoadedAgent out;
  out.choice = choice;
  out.credentials_path = config::CredentialsPath(process_env);
  auto stored = config::LoadCredentials(out.credentials_path);
  if (!stored.ok()) {
    // A damaged credentials file must not stop the editor's agent from starting; the
    // environment may hold everything needed.
    log::Warn(stored.error().message);
    stored = config::StoredCredentials{};
  }
  EnvLookup getenv = config::WithStoredCredentials(process_env, *stored);
  config::AgentSpec spec;
  std::string missing;
  if (choice.source == config::AgentSource::kBuiltin) {
    config::DefaultModel model = config::ChooseDefaultModel(process_env, *stored);
    spec = config::BuiltinAgentSpec(model_override.empty() ? model.model : model_override, getenv);
    out.model_reason = model_override.empty() ? model.reason : "--model";
    if (model_override.empty()) missing = model.missing;
  } else {
    config::LoadOptions opts;
    opts.model_override = model_override;
    opts.known_tools = KnownToolNames();
    auto loaded = config::LoadAgentSpec(choice.path, opts);
    if (!loaded.ok()) return loaded.error();
    spec = std::move(*loaded);
    WarnShadowedCommands(spec);
  }
  out.model = spec.model;
  std::optional<Error> unusable;
  if (!missing.empty()) unusable = MakeError(ErrorCode::kProviderAuth, missing);
  auto agent = Build(spec, getenv, unusable);
  if (!agent.ok()) {
    Error e = agent.error();
    // The built-in agent fails only by its model: say where that came from (LOUSHO_MODEL...).
    if (!out.model_reason.empty())
      e.message += " (model '" + spec.model + "': " + out.model_reason + ")";
    return e;
  }
  if ((*agent)->provider_error && !unusable) {
    // Say what to do, not only what is missing (editors show this text as it is).
    (*agent)->provider_error->message +=
        "; set it in the agent's environment or run `lousho setup` in a terminal";
  }
  out.agent = std::move(*agent);
  out.spec = std::make_shared<const config::AgentSpec>(std::move(spec));
  return out;
}

}  // namespace lousho::agent
