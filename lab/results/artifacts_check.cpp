#include "results/artifacts_check.hpp"

#include <set>

namespace smtlab::results {

using nlohmann::json;

namespace {

std::string short_value(const std::string& s) { return s.size() == 64 ? s.substr(0, 12) : s; }

// The object `key` of a manifest (null when it has none).
const json& object_of(const json& m, const char* key) {
  static const json none;
  return m.is_object() && m.contains(key) && m[key].is_object() ? m[key] : none;
}

std::optional<ArtifactDifference> field_difference(const std::string& what, const json& a, const json& b,
                                                   std::initializer_list<const char*> fields) {
  for (const char* field : fields)
    if (a.contains(field) && b.contains(field) && a[field].is_string() && b[field].is_string() && a[field] != b[field])
      return ArtifactDifference{what, field, short_value(a[field].get<std::string>()),
                                short_value(b[field].get<std::string>())};
  return std::nullopt;
}

}  // namespace

std::vector<PackageChange> package_changes(const json& ia, const json& ib) {
  std::vector<PackageChange> out;
  if (!ia.is_object() || !ib.is_object()) return out;
  auto version = [](const json& o, const std::string& name) {
    return o.contains(name) && o[name].is_string() ? o[name].get<std::string>() : std::string("absent");
  };
  std::set<std::string> names;
  for (const auto* side : {&ia, &ib})
    for (const auto& item : side->items()) names.insert(item.key());
  for (const auto& name : names)
    if (version(ia, name) != version(ib, name)) out.push_back({name, version(ia, name), version(ib, name)});
  return out;
}

std::string describe(const std::vector<PackageChange>& changes, size_t named) {
  std::string out;
  for (size_t i = 0; i < changes.size() && i < named; ++i)
    out += (i ? ", " : "") + changes[i].name + " " + changes[i].a + " -> " + changes[i].b;
  if (changes.size() > named) out += " and " + std::to_string(changes.size() - named) + " more";
  return out;
}

std::optional<ArtifactDifference> artifact_difference(const json& a, const json& b) {
  const json &ka = object_of(a, "kernels"), &kb = object_of(b, "kernels");
  if (ka.is_object() && kb.is_object())
    for (const auto& [name, k] : ka.items())
      if (kb.contains(name) && k.is_object() && kb[name].is_object())
        if (auto d = field_difference("kernel '" + name + "'", k, kb[name], {"source", "package", "version", "sha256"}))
          return d;
  const json &ia = object_of(a, "image"), &ib = object_of(b, "image");
  if (!ia.is_object() || !ib.is_object()) return std::nullopt;
  if (auto d = field_difference("image", ia, ib, {"name", "digest"})) return d;
  const json none;
  const auto changes = package_changes(ia.value("installed", none), ib.value("installed", none));
  if (changes.empty()) return std::nullopt;
  const auto& c = changes.front();
  const std::string more = changes.size() > 1 ? "; " + std::to_string(changes.size() - 1) + " more package(s) differ" : "";
  return ArtifactDifference{"image", "installed packages", c.name + " " + c.a, c.name + " " + c.b + more};
}

}  // namespace smtlab::results
