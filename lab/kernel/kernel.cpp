#include "kernel/kernel.hpp"

#include <fmt/core.h>
#include <nlohmann/json.hpp>
#include <sstream>

#include "kernel/boot_entry.hpp"
#include "kernel/internal.hpp"
#include "util/error.hpp"
#include "util/files.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace smtlab::kernel {
namespace detail {

namespace {
const char* source_name(recipe::KernelSource s) {
  switch (s) {
    case recipe::KernelSource::debian: return "debian";
    case recipe::KernelSource::source: return "source";
    case recipe::KernelSource::path: return "path";
  }
  return "?";
}
}  // namespace

void write_meta(const fs::path& dir, const recipe::KernelSpec& spec, const Meta& meta) {
  json j = {{"schema", 1},           {"name", spec.name},         {"source", source_name(spec.source)},
            {"package", meta.package}, {"version", meta.version}, {"release", meta.release},
            {"sha256", meta.sha256}};
  write_file_atomic(dir / "meta.json", j.dump(1) + "\n");
}

KernelArtifact from_entry(const cache::Entry& entry, const recipe::KernelSpec& spec) {
  const json j = json::parse(read_file(entry.dir / "meta.json", 1 << 20));
  KernelArtifact k;
  k.name = spec.name;
  k.source = spec.source;
  k.package = j.value("package", "");
  k.version = j.value("version", "");
  k.release = j.value("release", "");
  k.sha256 = j.value("sha256", "");
  k.vmlinuz = entry.dir / "vmlinuz";
  if (fs::exists(entry.dir / "config")) k.config = entry.dir / "config";
  if (fs::is_directory(entry.dir / "modules")) k.modules_dir = entry.dir / "modules";
  k.digest = entry.key;
  k.cache_hit = entry.hit;
  k.dir = entry.dir;
  k.size = entry.size;
  return k;
}

}  // namespace detail

KernelArtifact prepare_kernel(const recipe::KernelSpec& spec, cache::Cache& cache, Steps& steps) {
  const std::string where = spec.definition_file.empty() ? "kernel " + spec.name
                                                          : spec.definition_file.string();
  try {
    KernelArtifact k;
    switch (spec.source) {
      case recipe::KernelSource::debian: k = detail::prepare_debian(spec, cache, steps); break;
      case recipe::KernelSource::source: k = detail::prepare_source(spec, cache, steps); break;
      case recipe::KernelSource::path: k = detail::prepare_prebuilt(spec, cache, steps); break;
    }
    choose_boot_entry(k, cache, steps);
    return k;
  } catch (const Error& e) {
    throw e.within(where);
  }
}

std::string summary(const KernelArtifact& k) {
  std::string what = k.package.empty() ? "" : fmt::format(" ({}={})", k.package, k.version);
  return fmt::format("kernel {}: {}{}, {}, digest {}, cache {}, {} entry", k.name, k.release, what,
                     cache::Cache::human_size(k.size), k.digest.substr(0, 12), k.cache_hit ? "hit" : "miss",
                     k.boot_entry == "pvh" ? "PVH" : "bzImage");
}

std::string config_value(const fs::path& config, const std::string& option) {
  std::istringstream in(read_file(config, 16 << 20));
  std::string line;
  const std::string prefix = option + "=";
  while (std::getline(in, line)) {
    if (line.rfind(prefix, 0) == 0) return line.substr(prefix.size());
  }
  return "";
}

}  // namespace smtlab::kernel
