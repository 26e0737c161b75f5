#pragma once
// What two manifests say they measured with, compared: a kernel of one name with other bytes (a
// Debian package of another day, another build) or another image is not the same experiment.
// Merging shards (results/merge.hpp) and resuming a run (run/resume.hpp) refuse such a mix.
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace smtlab::results {

struct ArtifactDifference {
  std::string what;   // "kernel 'debian-6.12'", "image"
  std::string field;  // "sha256", "digest", ...
  std::string a, b;   // the two values (sha256 and digests cut to the 12 characters smtlab prints)
};

// The first difference between the "kernels" (of the names both record: source, package,
// version, sha256) and the "image" (name, digest, sha256 of its qcow2) of manifests `a` and `b`; none when they agree.
// Fields either does not record (older manifests) are not compared.
std::optional<ArtifactDifference> artifact_difference(const nlohmann::json& a, const nlohmann::json& b);

}  // namespace smtlab::results
