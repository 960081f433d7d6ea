// `lousho validate SPEC`: checks an agent spec and exits. The spec is loaded as `lousho acp SPEC`
// loads it (the same keys, stored credentials and --model), so both say the same about whether
// its model is ready; every error of the spec is reported, and models that no catalogue lists
// are warned about with the closest one.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/command.h"
#include "config/model_check.h"
#include "host/session_host.h"
#include "support/env.h"

namespace lousho::cli {
namespace {

// The spec's model and offered models that their provider's catalogue does not list.
std::vector<std::string> CatalogueWarnings(const config::AgentSpec& spec) {
  std::vector<std::string> models = {spec.model};
  models.insert(models.end(), spec.models.begin(), spec.models.end());
  std::vector<std::string> warnings;
  for (const std::string& m : models) {
    const std::string provider = m.substr(0, m.find('/'));
    const auto it = spec.providers.find(provider);
    const config::ProviderSettings* own = it == spec.providers.end() ? nullptr : &it->second;
    if (auto w = config::ModelNotInCatalogue(own, m)) warnings.push_back(*w);
  }
  return warnings;
}

int RunValidate(const std::string& path, const std::string& model) {
  host::SessionHost host(host::MakeHostOptions({config::AgentSource::kArgument, path, "validate"},
                                               model, "", true, ProcessEnv));
  if (Status loaded = host.Load(); !loaded.ok()) return Fail(loaded.error());
  const agent::LoadedAgent a = host.loaded();
  std::printf("%s: ok (agent '%s', model %s, %zu tools)\n", a.spec->source.c_str(),
              a.agent->name.c_str(), a.model.c_str(), a.agent->tools.size());
  for (const std::string& w : CatalogueWarnings(*a.spec)) std::printf("warning: %s\n", w.c_str());
  PrintReadiness(a);
  return 0;
}

}  // namespace

Subcommand AddValidateCommand(CLI::App& app) {
  struct Options {
    std::string path;
    std::string model;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("validate", "check an agent spec and exit");
  cmd->add_option("agent", o->path, "agent spec or folder")->required();
  cmd->add_option("--model", o->model, "override the spec's model");
  return {cmd, [o] { return RunValidate(o->path, o->model); }};
}

}  // namespace lousho::cli
