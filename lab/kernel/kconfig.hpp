#pragma once
// Kernel .config text: fragments merged onto a base config, and the check that every option a
// fragment asks for survived `make olddefconfig` (Kconfig silently drops options whose
// dependencies are not met).
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace smtlab::kernel {

// Option name ("CONFIG_SCHED_CORE") -> value ("y", "m", "\"str\"", "123"; "n" for "is not set").
using ConfigValues = std::map<std::string, std::string>;

struct FragmentOption {
  std::string option, value;  // value "n" for "# CONFIG_X is not set"
  std::string fragment;       // the fragment's file name, for messages
  int line = 0;
};

// Parses a .config (lines other than options and "is not set" comments are ignored).
ConfigValues parse_config(const std::string& text);

// Parses a fragment strictly: every non-blank line must be an option, "# CONFIG_X is not set" or a
// comment; throws smtlab::Error naming the fragment and line otherwise.
std::vector<FragmentOption> parse_fragment(const std::string& text, const std::string& name);

// The base config with the fragments' options set (later fragments win), ready for olddefconfig.
std::string merge_config(const std::string& base, const std::vector<FragmentOption>& options);

struct ConfigMismatch {
  FragmentOption wanted;
  std::string actual;  // "n" when unset
};

// Options the fragments asked for that the final config does not have as asked.
std::vector<ConfigMismatch> check_fragment_options(const std::string& final_config,
                                                   const std::vector<FragmentOption>& options);

// Throws smtlab::Error naming every mismatched option (and the fragment asking for it).
void require_fragment_options(const std::string& final_config, const std::vector<FragmentOption>& options,
                              const std::filesystem::path& config_file);

}  // namespace smtlab::kernel
