#pragma once
// What two manifests say they measured with, compared: a kernel of one name with other bytes (a
// Debian package of another day, another build) or another image is not the same experiment.
// Merging shards (results/merge.hpp) and resuming a run (run/resume.hpp) refuse such a mix.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace smtlab::results {

struct ArtifactDifference {
  std::string what;   // "kernel 'debian-6.12'", "image"
  std::string field;  // "sha256", "digest", ...
  std::string a, b;   // the two values (sha256 and digests cut to the 12 characters smtlab prints)
};

// The first difference between the "kernels" (of the names both record: source, package,
// version, sha256) and the "image" (name, digest, then the versions of its "installed" packages:
// field "installed packages", the first package that differs) of manifests `a` and `b`; none
// when they agree. Fields either does not record (older manifests) are not compared. The image's
// sha256 is not: two builds of one definition with the same packages (two machines of a fan-out)
// measure the same guest.
std::optional<ArtifactDifference> artifact_difference(const nlohmann::json& a, const nlohmann::json& b);

// A package whose version differs between two images' "installed" objects ("absent" on a side
// that lacks it).
struct PackageChange {
  std::string name, a, b;
};
// Each of them, in name order; none when they agree or either is not an object.
std::vector<PackageChange> package_changes(const nlohmann::json& installed_a, const nlohmann::json& installed_b);
// "gcc-12 12.2.0-14 -> 12.2.0-14+deb12u1, make 4.3-4.1 -> absent": at most `named`, then "and N more".
std::string describe(const std::vector<PackageChange>& changes, size_t named = 5);

}  // namespace smtlab::results
