// "Did you mean ...?": the closest of a set of known words to a mistyped one, by edit distance.
// One helper for every place that suggests a name (CLI commands and flags, spec keys, tools,
// providers, models).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lousho {

// Levenshtein distance (insert, delete, substitute: 1 each), ASCII case ignored.
size_t EditDistance(std::string_view a, std::string_view b);

// The known word closest to `word`, when it is close enough to be a typo of it: at most
// max(2, |word| / 3) edits away. Ties go to the first in `known`. nullopt otherwise.
std::optional<std::string> ClosestMatch(std::string_view word,
                                        const std::vector<std::string>& known);

}  // namespace lousho
