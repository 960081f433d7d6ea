// Model names against the catalogue (config/model_check.h).
#include "config/model_check.h"

#include <vector>

#include "config/model_catalog.h"
#include "support/suggest.h"

namespace lousho::config {

std::optional<std::string> ModelNotInCatalogue(const ProviderSettings* settings,
                                               const std::string& provider_model) {
  const size_t slash = provider_model.find('/');
  if (slash == std::string::npos) return std::nullopt;
  const std::string provider = provider_model.substr(0, slash);
  const std::string id = provider_model.substr(slash + 1);
  std::vector<std::string> known;
  for (const ProviderSettings* p : {settings, FindBuiltinProvider(provider)}) {
    if (p == nullptr) continue;
    for (const ModelInfo& m : p->models) {
      if (m.id == id) return std::nullopt;
      known.push_back(provider + "/" + m.id);
    }
  }
  if (known.empty()) return std::nullopt;
  std::string warning =
      "model '" + provider_model + "' is not in the catalogue of provider '" + provider + "'";
  if (auto best = ClosestMatch(provider_model, known))
    warning += " (did you mean '" + *best + "'?)";
  return warning + "; it is used as named, with unknown context limits and prices";
}

}  // namespace lousho::config
