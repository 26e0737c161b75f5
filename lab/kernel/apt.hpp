#pragma once
// Debian packages through apt: resolving a name pattern to an exact name+version+sha256 (cached
// while the apt lists do not change), and downloading a verified .deb.
#include <filesystem>
#include <string>

#include "cache/cache.hpp"

namespace smtlab::kernel {

struct ResolvedPackage {
  std::string name;     // exact package name
  std::string version;  // exact version
  std::string sha256;   // from the apt index (the .deb must match it)
  std::uint64_t size = 0;
  bool cached = false;  // the resolution came from the cache
};

// `pattern` is a package name with at most one '*' (e.g. "linux-image-6.12.*-cloud-amd64-unsigned");
// the newest matching package (by its candidate version, dpkg ordering) wins. `version` pins the
// version when not empty. Throws smtlab::Error telling to run `apt-get update` when the lists do not
// know the package (and runs it itself once when root and the lists are missing).
ResolvedPackage resolve_package(const std::string& pattern, const std::string& version,
                                cache::Cache& cache);

// Downloads name=version into `dir` (apt-get download, cwd there) and checks its sha256 against the
// index. Returns the .deb's path.
std::filesystem::path download_package(const ResolvedPackage& pkg, const std::filesystem::path& dir);

// Unpacks a .deb (dpkg-deb -x) into `dir`.
void extract_package(const std::filesystem::path& deb, const std::filesystem::path& dir);

// A fingerprint of the apt configuration and lists (mtimes): changes when `apt-get update` ran.
std::string apt_lists_fingerprint();

// True when `a` sorts before `b` as Debian versions (dpkg --compare-versions).
bool debian_version_less(const std::string& a, const std::string& b);

// sha256 of a big local file, remembered in the cache by (path, size, mtime).
std::string sha256_file_cached(const std::filesystem::path& file, cache::Cache& cache);

}  // namespace smtlab::kernel
