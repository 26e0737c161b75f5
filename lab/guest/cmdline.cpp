#include "guest/cmdline.hpp"

#include "util/error.hpp"

namespace smtlab::guest {

namespace {
bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n'; }
}  // namespace

std::vector<std::string> cmdline_values(std::string_view cmdline, std::string_view key) {
  std::vector<std::string> values;
  std::size_t i = 0;
  while (i < cmdline.size()) {
    while (i < cmdline.size() && is_space(cmdline[i])) ++i;
    std::size_t end = i;
    while (end < cmdline.size() && !is_space(cmdline[end])) ++end;
    const std::string_view word = cmdline.substr(i, end - i);
    if (word.size() > key.size() && word.substr(0, key.size()) == key && word[key.size()] == '=')
      values.emplace_back(word.substr(key.size() + 1));
    i = end;
  }
  return values;
}

std::vector<std::string> faults_from_cmdline(std::string_view cmdline) {
  auto faults = cmdline_values(cmdline, kFaultKey);
  for (const auto& f : faults)
    if (f != kFaultChatStopServer && f != kFaultNoiseEnds)
      throw Error(std::string(kFaultKey) + "=" + f + " on the kernel command line is not a fault smtlab knows",
                  "the known faults are " + std::string(kFaultKey) + "=" + std::string(kFaultChatStopServer) + " and " +
                      std::string(kFaultKey) + "=" + std::string(kFaultNoiseEnds));
  return faults;
}

}  // namespace smtlab::guest
