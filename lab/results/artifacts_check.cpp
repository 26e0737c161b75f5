#include "results/artifacts_check.hpp"

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

std::optional<ArtifactDifference> artifact_difference(const json& a, const json& b) {
  const json &ka = object_of(a, "kernels"), &kb = object_of(b, "kernels");
  if (ka.is_object() && kb.is_object())
    for (const auto& [name, k] : ka.items())
      if (kb.contains(name) && k.is_object() && kb[name].is_object())
        if (auto d = field_difference("kernel '" + name + "'", k, kb[name], {"source", "package", "version", "sha256"}))
          return d;
  const json &ia = object_of(a, "image"), &ib = object_of(b, "image");
  if (ia.is_object() && ib.is_object()) return field_difference("image", ia, ib, {"name", "digest", "sha256"});
  return std::nullopt;
}

}  // namespace smtlab::results
