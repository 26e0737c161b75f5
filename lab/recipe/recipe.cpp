#include "recipe/recipe.hpp"

namespace smtlab::recipe {

std::string SourceLocation::str() const {
  std::string out = file.empty() ? std::string("<unknown>") : file;
  if (line > 0) {
    out += ":" + std::to_string(line);
    if (column > 0) out += ":" + std::to_string(column);
  }
  return out;
}

std::string Topology::shape() const {
  return std::to_string(sockets) + "x" + std::to_string(dies) + "x" + std::to_string(cores) + "x" +
         std::to_string(threads);
}

bool MatrixFilter::matches(const std::string& v, const std::string& t, const std::string& b) const {
  return (variant.empty() || variant == v) && (topology.empty() || topology == t) &&
         (benchmark.empty() || benchmark == b);
}

bool Matrix::selects(const std::string& v, const std::string& t, const std::string& b) const {
  bool in = include.empty();
  for (const auto& f : include) in = in || f.matches(v, t, b);
  if (!in) return false;
  for (const auto& f : exclude)
    if (f.matches(v, t, b)) return false;
  return true;
}

std::string to_string(KernelSource s) {
  switch (s) {
    case KernelSource::debian: return "debian";
    case KernelSource::source: return "source";
    case KernelSource::path: return "path";
  }
  return "?";
}

std::string to_string(CoreSchedMode m) {
  switch (m) {
    case CoreSchedMode::none: return "none";
    case CoreSchedMode::per_benchmark: return "per-benchmark";
  }
  return "?";
}

std::string to_string(Pinning p) {
  switch (p) {
    case Pinning::none: return "none";
    case Pinning::vcpu: return "vcpu";
    case Pinning::core: return "core";
    case Pinning::shared: return "shared";
  }
  return "?";
}

std::string to_string(HostSched s) { return s == HostSched::batch ? "batch" : "normal"; }

std::string to_string(VmRole r) {
  switch (r) {
    case VmRole::benchmark: return "benchmark";
    case VmRole::noise: return "noise";
  }
  return "?";
}

std::string to_string(YieldMode y) {
  switch (y) {
    case YieldMode::both: return "both";
    case YieldMode::rx: return "rx";
    case YieldMode::tx: return "tx";
    case YieldMode::none: return "none";
  }
  return "?";
}

std::string to_string(Axis a) {
  switch (a) {
    case Axis::variant: return "variant";
    case Axis::topology: return "topology";
    case Axis::benchmark: return "benchmark";
  }
  return "?";
}

}  // namespace smtlab::recipe
