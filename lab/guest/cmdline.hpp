#pragma once
// The guest's kernel command line (/proc/cmdline): the words smtlab puts there for itself.
#include <string>
#include <string_view>
#include <vector>

namespace smtlab::guest {

// Every value of KEY=VALUE words whose key is `key`, in command-line order ("" for "KEY=").
std::vector<std::string> cmdline_values(std::string_view cmdline, std::string_view key);

// Faults a test asks the agent to inject, one per `smtlab.fault=NAME` word (a variant's
// `cmdline:` in a recipe). They exist to test the host's handling of failures that a healthy
// guest never shows; a run with a fault says so in its hello record and its events.
inline constexpr std::string_view kFaultKey = "smtlab.fault";
// The chat benchmark's server is stopped (SIGSTOP) as soon as it runs: no message arrives and
// the run stalls after the benchmark's `stall` seconds.
inline constexpr std::string_view kFaultChatStopServer = "chat-stop-server";
// A noise job stops its CPU hog kNoiseEndsAfterS seconds after it started and ends (status ok),
// as a noise VM that stops early would: the host must fail the cell it was the noise of.
inline constexpr std::string_view kFaultNoiseEnds = "noise-ends";
inline constexpr int kNoiseEndsAfterS = 2;

// The faults on the command line; throws util Error naming the known faults for any other value.
std::vector<std::string> faults_from_cmdline(std::string_view cmdline);

}  // namespace smtlab::guest
