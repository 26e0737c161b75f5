#pragma once
// What a guest image has installed, read from its dpkg database while it is built: recorded with
// the image, so that a results directory says which compiler and libraries its guests ran
// (kernbench's times depend on the guest's gcc).
#include <filesystem>
#include <map>
#include <string>
#include <string_view>

namespace smtlab::image {

// Package (binary:Package, "name:arch" for a foreign architecture) -> version of each package
// dpkg-query lists as installed in the root file system `rootfs` (dpkg-query --admindir).
// Throws smtlab::Error when dpkg-query fails.
std::map<std::string, std::string> installed_packages(const std::filesystem::path& rootfs);

// The parsing half: lines "<db:Status-Status>\t<binary:Package>\t<Version>"; those whose status is
// not "installed", or that do not have three fields, are left out.
std::map<std::string, std::string> parse_installed(std::string_view dpkg_query_output);

}  // namespace smtlab::image
