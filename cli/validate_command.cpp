// `lousho validate SPEC`: checks an agent spec and exits.
#include <cstdio>
#include <memory>

#include "host/agent_builder.h"
#include "cli/command.h"
#include "support/env.h"

namespace lousho::cli {

Subcommand AddValidateCommand(CLI::App& app) {
  struct Options {
    std::string path;
    std::string model;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("validate", "check an agent spec and exit");
  cmd->add_option("agent", o->path, "agent spec or folder")->required();
  cmd->add_option("--model", o->model, "override the spec's model");
  return {cmd, [o] {
            auto spec = LoadSpec(o->path, o->model);
            if (!spec.ok()) return Fail(spec.error());
            auto agent = agent::BuildAgent(*spec, ProcessEnv);
            if (!agent.ok()) return Fail(agent.error());
            std::printf("%s: ok (agent '%s', model %s, %zu tools)\n", spec->source.c_str(),
                        spec->name.c_str(), spec->model.c_str(), (*agent)->tools.size());
            if ((*agent)->provider_error)
              std::printf("note: %s\n", (*agent)->provider_error->message.c_str());
            return 0;
          }};
}

}  // namespace lousho::cli
