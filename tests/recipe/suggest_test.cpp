#include <catch2/catch.hpp>

#include "recipe/suggest.hpp"

using namespace smtlab::recipe;

TEST_CASE("edit distance counts insertions, deletions, substitutions and transpositions") {
  CHECK(edit_distance("", "") == 0);
  CHECK(edit_distance("iteration", "iterations") == 1);
  CHECK(edit_distance("pinnign", "pinning") == 1);  // transposition
  CHECK(edit_distance("kitten", "sitting") == 3);
  CHECK(edit_distance("abc", "") == 3);
}

TEST_CASE("did you mean suggests only plausible typos, and names all ties") {
  std::vector<std::string> keys = {"name", "vms", "cpu", "memory", "topologies", "pinning"};
  CHECK(closest("memroy", keys) == "memory");
  CHECK(closest("topology", keys) == "topologies");
  CHECK(closest("banana", keys).empty());
  CHECK(closest("x", keys).empty());  // one letter is never "close" to a three-letter key
  CHECK(did_you_mean("pinnning", keys) == "did you mean 'pinning'? allowed: name, vms, cpu, memory, topologies, pinning");
  CHECK(did_you_mean("zzz", {"a1", "b2"}, "kernels defined") == "kernels defined: a1, b2");
  CHECK(did_you_mean("debian-6.13", {"debian-6.1", "debian-6.12"}) ==
        "did you mean 'debian-6.1' or 'debian-6.12'? allowed: debian-6.1, debian-6.12");
}
