#include "recipe/suggest.hpp"

#include <algorithm>

namespace smtlab::recipe {

int edit_distance(std::string_view a, std::string_view b) {
  const size_t n = a.size(), m = b.size();
  std::vector<std::vector<int>> d(n + 1, std::vector<int>(m + 1));
  for (size_t i = 0; i <= n; ++i) d[i][0] = static_cast<int>(i);
  for (size_t j = 0; j <= m; ++j) d[0][j] = static_cast<int>(j);
  for (size_t i = 1; i <= n; ++i)
    for (size_t j = 1; j <= m; ++j) {
      int cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[n][m];
}

std::vector<std::string> closest_all(std::string_view word, const std::vector<std::string>& candidates) {
  std::vector<std::string> best;
  int best_d = 1 << 20;
  for (const auto& c : candidates) {
    int longest = static_cast<int>(std::max(word.size(), c.size()));
    int d = edit_distance(word, c);
    if (d > std::max(2, longest / 3) || 2 * d >= longest) continue;
    if (d < best_d) best.clear(), best_d = d;
    if (d == best_d) best.push_back(c);
  }
  return best;
}

std::string closest(std::string_view word, const std::vector<std::string>& candidates) {
  auto all = closest_all(word, candidates);
  return all.empty() ? std::string() : all.front();
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates,
                         std::string_view allowed_label) {
  std::string out;
  auto near = closest_all(word, candidates);
  for (size_t i = 0; i < near.size(); ++i)
    out += (i == 0 ? "did you mean '" : i + 1 == near.size() ? "' or '" : "', '") + near[i];
  if (!near.empty()) out += "'? ";
  out += std::string(allowed_label) + ": ";
  for (size_t i = 0; i < candidates.size(); ++i) out += (i ? ", " : "") + candidates[i];
  if (candidates.empty()) out += "(none)";
  return out;
}

}  // namespace smtlab::recipe
