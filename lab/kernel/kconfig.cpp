#include "kernel/kconfig.hpp"

#include <fmt/core.h>

#include <sstream>

#include "util/error.hpp"

namespace smtlab::kernel {
namespace {

bool option_name_ok(const std::string& name) {
  return name.rfind("CONFIG_", 0) == 0 && name.size() > 7 &&
         name.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == std::string::npos;
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.pop_back();
  size_t b = s.find_first_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b);
}

// "CONFIG_X=v" or "# CONFIG_X is not set" -> (name, value); false otherwise.
bool parse_line(const std::string& line, std::string& name, std::string& value) {
  if (line.rfind("CONFIG_", 0) == 0) {
    const auto eq = line.find('=');
    if (eq == std::string::npos) return false;
    name = line.substr(0, eq);
    value = line.substr(eq + 1);
    return option_name_ok(name);
  }
  static const std::string suffix = " is not set";
  if (line.rfind("# CONFIG_", 0) == 0 && line.size() > suffix.size() &&
      line.compare(line.size() - suffix.size(), suffix.size(), suffix) == 0) {
    name = line.substr(2, line.size() - 2 - suffix.size());
    value = "n";
    return option_name_ok(name);
  }
  return false;
}

}  // namespace

ConfigValues parse_config(const std::string& text) {
  ConfigValues out;
  std::istringstream in(text);
  std::string line, name, value;
  while (std::getline(in, line)) {
    if (parse_line(trim(line), name, value)) out[name] = value;
  }
  return out;
}

std::vector<FragmentOption> parse_fragment(const std::string& text, const std::string& fragment) {
  std::vector<FragmentOption> out;
  std::istringstream in(text);
  std::string raw;
  int n = 0;
  while (std::getline(in, raw)) {
    ++n;
    const std::string line = trim(raw);
    std::string name, value;
    if (parse_line(line, name, value)) {
      if (value.empty()) {
        throw Error(fmt::format("{}:{}: {} has no value", fragment, n, name),
                    "write CONFIG_X=y, =m, =<number>, =\"text\", or '# CONFIG_X is not set'");
      }
      out.push_back({name, value, fragment, n});
    } else if (!line.empty() && line[0] != '#') {
      throw Error(fmt::format("{}:{}: not a config option: '{}'", fragment, n, line),
                  "fragment lines are CONFIG_X=value, '# CONFIG_X is not set', or # comments");
    }
  }
  return out;
}

std::string merge_config(const std::string& base, const std::vector<FragmentOption>& options) {
  std::map<std::string, std::string> wanted;
  std::vector<std::string> order;
  for (const auto& o : options) {
    if (!wanted.count(o.option)) order.push_back(o.option);
    wanted[o.option] = o.value;
  }
  auto render = [](const std::string& name, const std::string& value) {
    return value == "n" ? fmt::format("# {} is not set", name) : fmt::format("{}={}", name, value);
  };
  std::ostringstream out;
  std::istringstream in(base);
  std::string line, name, value;
  std::map<std::string, bool> done;
  while (std::getline(in, line)) {
    if (parse_line(trim(line), name, value) && wanted.count(name)) {
      if (!done[name]) out << render(name, wanted[name]) << "\n";
      done[name] = true;
    } else {
      out << line << "\n";
    }
  }
  for (const auto& n : order) {
    if (!done[n]) out << render(n, wanted[n]) << "\n";
  }
  return out.str();
}

std::vector<ConfigMismatch> check_fragment_options(const std::string& final_config,
                                                   const std::vector<FragmentOption>& options) {
  const auto have = parse_config(final_config);
  // The last fragment that sets an option is the one that counts.
  std::map<std::string, FragmentOption> wanted;
  std::vector<std::string> order;
  for (const auto& o : options) {
    if (!wanted.count(o.option)) order.push_back(o.option);
    wanted[o.option] = o;
  }
  std::vector<ConfigMismatch> out;
  for (const auto& name : order) {
    const auto& w = wanted[name];
    auto it = have.find(name);
    const std::string actual = it == have.end() ? "n" : it->second;
    if (actual != w.value) out.push_back({w, actual});
  }
  return out;
}

void require_fragment_options(const std::string& final_config, const std::vector<FragmentOption>& options,
                              const std::filesystem::path& config_file) {
  const auto bad = check_fragment_options(final_config, options);
  if (bad.empty()) return;
  std::string msg = "after `make olddefconfig` these fragment options are not as requested:";
  for (const auto& m : bad) {
    msg += fmt::format("\n  {}={} requested by {}:{}, but the config has {}", m.wanted.option, m.wanted.value,
                       m.wanted.fragment, m.wanted.line,
                       m.actual == "n" ? "it unset" : m.wanted.option + "=" + m.actual);
  }
  throw Error(msg, fmt::format("Kconfig dropped them because a dependency is missing or the option does not "
                               "exist in this tree: add the dependencies to the fragment (see the option's "
                               "`depends on` in the tree's Kconfig files); resulting config: {}",
                               config_file.string()));
}

}  // namespace smtlab::kernel
