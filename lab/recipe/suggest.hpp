#pragma once
// "Did you mean ...?" for misspelt keys and names.
#include <string>
#include <string_view>
#include <vector>

namespace smtlab::recipe {

// Edit distance counting insertions, deletions, substitutions and adjacent transpositions.
int edit_distance(std::string_view a, std::string_view b);

// The closest candidate when it is close enough to be a likely typo (distance <= 2 and less than
// half the word), else "".
std::string closest(std::string_view word, const std::vector<std::string>& candidates);

// "did you mean 'x'? allowed: a, b, c" or "allowed: a, b, c".
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates,
                         std::string_view allowed_label = "allowed");

}  // namespace smtlab::recipe
