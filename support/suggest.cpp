// "Did you mean ...?" (support/suggest.h).
#include "support/suggest.h"

#include <algorithm>
#include <cctype>

namespace lousho {

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> prev(b.size() + 1);
  std::vector<size_t> cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const bool same = std::tolower(static_cast<unsigned char>(a[i - 1])) ==
                        std::tolower(static_cast<unsigned char>(b[j - 1]));
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (same ? 0 : 1)});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::optional<std::string> ClosestMatch(std::string_view word,
                                        const std::vector<std::string>& known) {
  const std::string* best = nullptr;
  size_t best_d = std::string::npos;
  for (const auto& k : known) {
    const size_t d = EditDistance(word, k);
    if (d < best_d) {
      best_d = d;
      best = &k;
    }
  }
  if (best == nullptr || best_d > std::max<size_t>(2, word.size() / 3)) return std::nullopt;
  return *best;
}

}  // namespace lousho
