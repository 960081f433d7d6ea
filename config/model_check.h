// Whether a "provider/model" name is one the provider's catalogue lists (`lousho validate`).
#pragma once

#include <optional>
#include <string>

#include "config/provider_settings.h"

namespace lousho::config {

// For "provider/id", with `settings` the spec's provider of that name (nullptr: none, the
// built-in one alone): a warning when the provider has a catalogue (the spec's `models:` of it,
// or the built-in list) and `id` is not in it, with the closest listed name ("did you mean
// 'anthropic/claude-sonnet-4-5'?"); nullopt when it is listed, or the provider lists no models
// (local servers serve whatever they hold).
std::optional<std::string> ModelNotInCatalogue(const ProviderSettings* settings,
                                               const std::string& provider_model);

}  // namespace lousho::config
