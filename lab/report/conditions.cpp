#include "report/conditions.hpp"

#include <map>

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

// "gcc-12 12.2.0-14 -> 12.2.0-14+deb12u1, make absent -> 4.3-4.1" for the packages whose versions
// differ between two images' "installed" (empty when either lacks it).
std::string package_changes(const json& a, const json& b) {
  const json none;
  const json& ia = a.is_object() && a.contains("image") && a["image"].is_object() ? a["image"].value("installed", none) : none;
  const json& ib = b.is_object() && b.contains("image") && b["image"].is_object() ? b["image"].value("installed", none) : none;
  if (!ia.is_object() || !ib.is_object()) return "";
  std::map<std::string, std::pair<std::string, std::string>> changed;
  auto version = [](const json& o, const std::string& name) {
    return o.contains(name) && o[name].is_string() ? o[name].get<std::string>() : std::string("absent");
  };
  for (const auto& [name, v] : ia.items())
    if (version(ib, name) != version(ia, name)) changed[name] = {version(ia, name), version(ib, name)};
  for (const auto& [name, v] : ib.items())
    if (!ia.contains(name)) changed[name] = {"absent", version(ib, name)};
  std::string out;
  size_t named = 0;
  for (const auto& [name, versions] : changed) {
    if (named == 5) break;
    out += (named++ ? ", " : "") + name + " " + versions.first + " -> " + versions.second;
  }
  if (changed.size() > named) out += " and " + std::to_string(changed.size() - named) + " more";
  return out;
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
    if (const auto d = results::artifact_difference(first, m))
      add(d->what + " " + d->field + " " + d->b + " (" + first_name + ": " + d->a + ")");
    if (const auto packages = package_changes(first, m); !packages.empty())
      add("guest packages " + packages);
    if (!differs.empty())
      out.push_back(runs[i].name() + ": ran on other conditions than " + first_name + ": " + differs +
                    "; its columns differ from " + first_name + "'s by more than their variants");
  }
  return out;
}

}  // namespace smtlab::report
