// The session host: the agent as loaded, its offers, and the session files of both doors.
#include "host/session_host.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <random>

#include "agent/checkpoints.h"
#include "agent/tools/tool_util.h"
#include "config/model_catalog.h"
#include "host/subagents.h"
#include "support/log.h"

namespace lousho::host {
namespace fs = std::filesystem;

namespace {

// The session, given the task tool bound to child sessions (host/subagents.h) when it opened.
Result<std::shared_ptr<agent::Session>> WithSubagents(Result<std::shared_ptr<agent::Session>> s,
                                                      const agent::LoadedAgent& a,
                                                      const agent::ClientServices& services,
                                                      WorkerPool* pool) {
  if (!s.ok()) return s;
  SubagentPlace place;
  place.agent = a.agent;
  place.services = services;
  place.pool = pool;
  AttachSubagents(**s, a.spec.get(), std::move(place));
  return s;
}

// What the catalogue (the spec's providers, else the built-in ones) says of one offered model.
ModelOffer OfferFor(const config::AgentSpec* spec, const agent::ModelOption& option) {
  ModelOffer m;
  m.option = option;
  if (option.provider == "script") {
    m.api = "script";
    return m;
  }
  const config::ProviderSettings* settings = nullptr;
  if (spec != nullptr) {
    auto it = spec->providers.find(option.provider);
    if (it != spec->providers.end()) settings = &it->second;
  }
  if (settings == nullptr) settings = config::FindBuiltinProvider(option.provider);
  if (settings == nullptr) return m;
  m.api = settings->api;
  m.base_url = settings->base_url;
  const config::ModelInfo* info = config::FindModel(*settings, option.model_id);
  const config::ModelInfo unknown = config::UnknownModelInfo(option.model_id);
  if (info == nullptr) info = &unknown;
  m.catalog_name = info->name;
  m.reasoning = info->reasoning;
  m.images = info->images;
  m.input_price = info->input_price;
  m.output_price = info->output_price;
  m.cache_read_price = info->cache_read_price;
  m.cache_write_price = info->cache_write_price;
  m.context_window = info->context_window;
  m.max_tokens = info->max_output;
  return m;
}

std::vector<ModelOffer> OffersOf(const agent::LoadedAgent& loaded) {
  std::vector<ModelOffer> out;
  const agent::AgentView view = agent::ViewOf(*loaded.agent);  // the own model when none listed
  for (const auto& m : view.models) out.push_back(OfferFor(loaded.spec.get(), m));
  return out;
}

// Where session files go: --session-dir, the spec's sessionDir, $LOUSHO_HOME/sessions,
// ~/.lousho/sessions; none with --no-session. Only a path: nothing is touched here.
std::optional<fs::path> SessionRoot(const HostOptions& o, const agent::AgentConfig& agent) {
  if (o.no_session) return std::nullopt;
  if (!o.session_dir.empty()) return fs::absolute(o.session_dir);
  if (!agent.session_dir.empty()) return fs::path(agent.session_dir);
  auto root = agent::SessionStore::DefaultRoot(o.env);
  if (!root) log::Warn("neither LOUSHO_HOME nor HOME is set; sessions are not saved");
  return root;
}

std::shared_ptr<const agent::SessionStore> StoreFor(const HostOptions& o,
                                                    const agent::AgentConfig& agent) {
  auto root = SessionRoot(o, agent);
  if (!root) return nullptr;
  return std::make_shared<const agent::SessionStore>(*root);
}

// The branch of `entries` that ends at `leaf`, root first (empty leaf: none).
std::vector<agent::Entry> BranchTo(std::vector<agent::Entry> entries, const std::string& leaf) {
  std::map<std::string, size_t> by_id;
  for (size_t i = 0; i < entries.size(); ++i) by_id[entries[i].id] = i;
  std::vector<agent::Entry> path;
  for (auto cur = by_id.find(leaf); cur != by_id.end();) {
    agent::Entry& e = entries[cur->second];
    cur = by_id.find(e.parent_id);
    path.push_back(std::move(e));
  }
  std::reverse(path.begin(), path.end());
  return path;
}

}  // namespace

HostOptions MakeHostOptions(config::AgentChoice choice, std::string model_override,
                            std::string session_dir, bool no_session, EnvLookup env) {
  HostOptions o;
  o.choice = std::move(choice);
  o.model_override = std::move(model_override);
  o.session_dir = std::move(session_dir);
  o.no_session = no_session;
  o.test_ids = env("LOUSHO_TEST_MODE").value_or("") == "1";
  o.env = std::move(env);
  return o;
}

SessionHost::SessionHost(HostOptions options) : options_(std::move(options)) {
  loaded_.choice = options_.choice;
  loaded_.agent = std::make_shared<agent::AgentConfig>();  // a stand-in until Load succeeds
  store_ = StoreFor(options_, *loaded_.agent);
}

Status SessionHost::Load() {
  auto loaded = agent::LoadAgent(options_.choice, options_.model_override, options_.env);
  if (!loaded.ok()) return loaded.error();
  if (!options_.sandbox_flag.empty()) {  // [sandbox] --sandbox over the spec's `sandbox:`
    auto flagged = std::make_shared<agent::AgentConfig>(*loaded->agent);
    Status applied = config::ApplySandboxFlag(options_.sandbox_flag, &flagged->sandbox);
    if (!applied.ok()) return applied.error();
    loaded->agent = std::move(flagged);
  }
  if (!options_.rules_first.empty()) {  // a door's rules before the spec's
    auto ruled = std::make_shared<agent::AgentConfig>(*loaded->agent);
    ruled->permission_rules.insert(ruled->permission_rules.begin(), options_.rules_first.begin(),
                                   options_.rules_first.end());
    loaded->agent = std::move(ruled);
  }
  std::vector<ModelOffer> models = OffersOf(*loaded);
  auto store = StoreFor(options_, *loaded->agent);
  std::lock_guard<std::mutex> lock(mu_);
  loaded_ = std::move(*loaded);
  models_ = std::move(models);
  store_ = std::move(store);
  return Status::Ok();
}

agent::LoadedAgent SessionHost::loaded() const {
  std::lock_guard<std::mutex> lock(mu_);
  return loaded_;
}

std::shared_ptr<const agent::AgentConfig> SessionHost::agent() const {
  std::lock_guard<std::mutex> lock(mu_);
  return loaded_.agent;
}

std::vector<ModelOffer> SessionHost::models() const {
  std::lock_guard<std::mutex> lock(mu_);
  return models_;
}

const std::vector<ThinkingOffer>& SessionHost::ThinkingLevels() {
  static const std::vector<ThinkingOffer> levels = [] {
    const std::pair<agent::ThinkingLevel, const char*> named[] = {
        {agent::ThinkingLevel::kOff, "Off"},   {agent::ThinkingLevel::kMinimal, "Minimal"},
        {agent::ThinkingLevel::kLow, "Low"},   {agent::ThinkingLevel::kMedium, "Medium"},
        {agent::ThinkingLevel::kHigh, "High"}, {agent::ThinkingLevel::kXHigh, "Extra high"},
    };
    std::vector<ThinkingOffer> out;
    for (const auto& [level, name] : named) out.push_back({agent::ThinkingLevelId(level), name});
    return out;
  }();
  return levels;
}

Result<agent::ModelChoice> SessionHost::ResolveModel(const std::string& provider,
                                                     const std::string& id) const {
  auto a = agent();
  if (!a->resolve_model)
    return MakeError(ErrorCode::kModelUnknown, "this agent cannot switch models");
  return a->resolve_model(provider, id);
}

std::string SessionHost::NewSessionId() {
  std::lock_guard<std::mutex> lock(mu_);
  ++ids_;
  if (options_.test_ids) return "sess-" + std::to_string(ids_);
  static thread_local std::mt19937_64 rng(std::random_device{}());
  char buf[37];
  const unsigned long long a = rng(), b = rng();
  std::snprintf(buf, sizeof buf, "%08llx-%04llx-4%03llx-a%03llx-%012llx", a >> 32,
                (a >> 16) & 0xffff, a & 0xfff, (b >> 48) & 0xfff, b & 0xffffffffffffULL);
  return buf;
}

std::shared_ptr<const agent::SessionStore> SessionHost::store() const {
  std::lock_guard<std::mutex> lock(mu_);
  return store_;
}

bool SessionHost::saves_sessions() const { return store() != nullptr; }

context::ContextInputs SessionHost::ContextInputsFor(const fs::path& cwd,
                                                     std::vector<fs::path> additional) const {
  const agent::LoadedAgent a = loaded();
  std::vector<fs::path> extra(a.agent->extra_roots.begin(), a.agent->extra_roots.end());
  return context::InputsFor(a.spec.get(), a.agent->rules, cwd, std::move(additional),
                            std::move(extra), options_.env);
}

void SessionHost::AddContext(agent::SessionOptions& options) const {
  if (options.context) return;
  options.context =
      context::ContextSourceFor(ContextInputsFor(options.cwd, options.additional_roots));
}

Result<std::shared_ptr<agent::Session>> SessionHost::New(agent::SessionOptions options,
                                                         const std::string& parent) const {
  AddContext(options);
  auto s = store();
  const agent::LoadedAgent a = loaded();
  const agent::ClientServices services = options.services;
  WorkerPool* pool = options.pool;
  if (!s)
    return WithSubagents(agent::Session::Create(a.agent, std::move(options)), a, services, pool);
  return WithSubagents(CreateRecordedSession(a.agent, std::move(options), *s, parent), a, services,
                       pool);
}

Result<std::shared_ptr<agent::Session>> SessionHost::Open(agent::SessionOptions options,
                                                          const fs::path& path, bool create) const {
  AddContext(options);
  std::error_code ec;
  const agent::LoadedAgent loaded_agent = loaded();
  const agent::ClientServices services = options.services;
  WorkerPool* pool = options.pool;
  if (!create || fs::exists(path, ec)) {
    options.id.clear();  // the file's own
    return WithSubagents(OpenSessionFile(loaded_agent.agent, std::move(options), path),
                         loaded_agent, services, pool);
  }
  // A file not written yet (`--session FILE`): the new session is recorded there.
  auto a = loaded_agent.agent;
  agent::SessionHeader header;
  header.id = options.id;
  header.timestamp_ms = agent::NowMs();
  header.cwd = options.cwd.string();
  header.agent = a->name;
  options.session_file = path.string();
  options.recorder = agent::SessionWriter::ForNew(path, std::move(header));
  return WithSubagents(agent::Session::Create(std::move(a), std::move(options)), loaded_agent,
                       services, pool);
}

Result<std::shared_ptr<agent::Session>> SessionHost::Fork(const agent::Session& from,
                                                          const std::string& leaf,
                                                          agent::SessionOptions options) const {
  options.seed = BranchTo(from.transcript().Entries(), leaf);
  options.seed_leaf = leaf;
  return New(std::move(options), from.info().session_file);
}

Result<fs::path> SessionHost::Find(const std::string& id, const std::string& cwd) const {
  auto s = store();
  if (!s) return MakeError(ErrorCode::kSessionNotFound, "sessions are not saved");
  return s->Find(id, cwd);
}

std::vector<agent::SessionSummary> SessionHost::List(const std::string& cwd) const {
  auto s = store();
  if (!s) return {};
  // Files name the working directory as a session opening resolved it.
  std::error_code ec;
  const fs::path resolved = cwd.empty() ? fs::path() : fs::weakly_canonical(cwd, ec);
  return s->List(ec ? cwd : resolved.string());
}

Status SessionHost::Delete(const std::string& id, const std::string& cwd) const {
  auto path = Find(id, cwd);
  if (!path.ok()) return path.error();
  if (Status st = agent::DeleteSessionFile(*path); !st.ok()) return st;
  // Its file checkpoints go with it (the session is gone: nothing can rewind to them).
  if (Status st = agent::RemoveCheckpoints(*path); !st.ok())
    log::Warn("session " + id + " deleted, but not its checkpoints: " + st.error().message);
  RemoveSubagentFiles(*path);  // its subagents' histories too
  // And the whole outputs its tools saved.
  if (Status st = agent::tools::RemoveSavedOutputs(*path); !st.ok())
    log::Warn("session " + id + " deleted, but not its saved outputs: " + st.error().message);
  return Status::Ok();
}

Result<bool> SessionHost::ForgetStoredCredentials() {
  auto forgot = config::ForgetCredentials(loaded().credentials_path);
  if (!forgot.ok()) return forgot.error();
  Status again = Load();
  if (!again.ok()) return again.error();
  return *forgot;
}

std::vector<agent::mcp::ServerStatus> AttachMcpServers(
    agent::Session& session, const std::vector<config::McpServerSpec>& specs,
    const agent::mcp::StartOptions& options) {
  if (specs.empty()) return {};
  // [sandbox] stdio servers run in the session's sandbox when the spec says so.
  std::vector<config::McpServerSpec> confined = specs;
  for (config::McpServerSpec& s : confined) s.sandbox = session.info().mcp_sandbox;
  agent::mcp::StartOptions with_proxy = options;
  with_proxy.proxy = session.info().mcp_proxy;  // the agent's `proxy:`
  auto servers = agent::mcp::McpServers::Start(confined, with_proxy);
  std::vector<agent::mcp::ServerStatus> status = servers->status();
  session.tools().AddSource(servers);
  return status;
}

Result<std::shared_ptr<agent::Session>> CreateRecordedSession(
    std::shared_ptr<const agent::AgentConfig> agent, agent::SessionOptions options,
    const agent::SessionStore& store, const std::string& parent_session) {
  agent::SessionHeader header;
  header.id = options.id;
  header.timestamp_ms = agent::NowMs();
  header.cwd = options.cwd.string();
  header.agent = agent->name;
  header.parent_session = parent_session;
  options.session_file = store.PathFor(header).string();
  auto writer = agent::SessionWriter::ForNew(options.session_file, std::move(header));
  // A seed (a fork's history) is the new file's first entries; fsynced at once, so the fork
  // lasts even if no turn ends in it.
  if (!options.seed.empty()) {
    for (const agent::Entry& e : options.seed) writer->Record(e);
    writer->Flush();
  }
  options.recorder = writer;
  auto session = agent::Session::Create(std::move(agent), std::move(options));
  if (!session.ok()) writer->Close();
  return session;
}

Result<std::shared_ptr<agent::Session>> OpenSessionFile(
    std::shared_ptr<const agent::AgentConfig> agent, agent::SessionOptions options,
    const fs::path& path) {
  auto opened = agent::SessionWriter::OpenExisting(path);
  if (!opened.ok()) return opened.error();
  auto& [writer, contents] = *opened;
  if (options.id.empty()) options.id = contents.header.id;
  options.seed = std::move(contents.entries);
  options.recorder = writer;
  options.session_file = path.string();
  auto session = agent::Session::Create(std::move(agent), std::move(options));
  if (!session.ok()) writer->Close();
  return session;
}

}  // namespace lousho::host
