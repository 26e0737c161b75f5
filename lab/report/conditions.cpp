#include "report/conditions.hpp"

#include "results/artifacts_check.hpp"

namespace smtlab::report {

using nlohmann::json;

namespace {

// The string at `path` in manifest `m` ("" when absent or not a string).
std::string text_at(const json& m, const std::vector<const char*>& path) {
  const json* at = &m;
  for (const char* key : path) {
    if (!at->is_object() || !at->contains(key)) return "";
    at = &(*at)[key];
  }
  return at->is_string() ? at->get<std::string>() : "";
}

// The changes between two manifests' image "installed" objects.
std::vector<results::PackageChange> image_packages(const json& a, const json& b) {
  const json none;
  auto installed = [&](const json& m) -> const json& {
    return m.is_object() && m.contains("image") && m["image"].is_object() && m["image"].contains("installed")
               ? m["image"]["installed"]
               : none;
  };
  return results::package_changes(installed(a), installed(b));
}

}  // namespace

std::vector<std::string> condition_differences(const std::vector<results::RunResults>& runs) {
  std::vector<std::string> out;
  if (runs.size() < 2) return out;
  const json& first = runs[0].manifest;
  const std::string first_name = runs[0].name();
  for (size_t i = 1; i < runs.size(); ++i) {
    const json& m = runs[i].manifest;
    std::string differs;
    auto add = [&](const std::string& what) { differs += (differs.empty() ? "" : "; ") + what; };
    static const std::vector<std::pair<std::string, std::vector<const char*>>> kFields = {
        {"accel", {"accel"}},
        {"host CPU", {"host", "cpu_model"}},
        {"QEMU", {"versions", "qemu"}},
        {"libvirt", {"versions", "libvirt"}}};
    for (const auto& [label, path] : kFields) {
      const std::string was = text_at(first, path), is = text_at(m, path);
      if (!was.empty() && !is.empty() && was != is) add(label + " " + is + " (" + first_name + ": " + was + ")");
    }
    // The first artifact difference, unless it is the packages: they are all listed next.
    if (const auto d = results::artifact_difference(first, m); d && d->field != "installed packages")
      add(d->what + " " + d->field + " " + d->b + " (" + first_name + ": " + d->a + ")");
    if (const auto packages = image_packages(first, m); !packages.empty())
      add("guest packages " + results::describe(packages));
    if (!differs.empty())
      out.push_back(runs[i].name() + ": ran on other conditions than " + first_name + ": " + differs +
                    "; its columns differ from " + first_name + "'s by more than their variants");
  }
  return out;
}

}  // namespace smtlab::report
