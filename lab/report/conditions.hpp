#pragma once
// Columns of several results directories side by side compare what their guests ran on: another
// accelerator, host CPU, QEMU or libvirt, kernel bytes of one name, image, or guest packages make
// a difference that is not the variant's. compare and report say so, once per directory.
#include <string>
#include <vector>

#include "results/loader.hpp"

namespace smtlab::report {

// For each run after the first, what its manifest says it ran on that differs from the first's:
// "<run>: ran on other conditions than <first>: accel tcg (<first>: kvm); ...; its columns differ
// from <first>'s by more than their variants". Fields either manifest lacks are not compared;
// guest packages are named up to five, then counted. Empty when all agree (or one run).
std::vector<std::string> condition_differences(const std::vector<results::RunResults>& runs);

}  // namespace smtlab::report
