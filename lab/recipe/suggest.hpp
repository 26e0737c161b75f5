#pragma once
// "Did you mean ...?" for misspelt keys and names.
#include <string>
#include <string_view>
#include <vector>

namespace smtlab::recipe {

// Edit distance counting insertions, deletions, substitutions and adjacent transpositions.
int edit_distance(std::string_view a, std::string_view b);

// The candidates closest to `word` when close enough to be a likely typo (distance at most
// max(2, length/3) and less than half the length), all of them when tied; else none.
std::vector<std::string> closest_all(std::string_view word, const std::vector<std::string>& candidates);
// The first of closest_all(), or "".
std::string closest(std::string_view word, const std::vector<std::string>& candidates);

// "did you mean 'x'? allowed: a, b, c" (or "did you mean 'x' or 'y'? ...") or "allowed: a, b, c".
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates,
                         std::string_view allowed_label = "allowed");

}  // namespace smtlab::recipe
