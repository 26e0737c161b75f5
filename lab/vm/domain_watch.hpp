#pragma once
// Internal to the vm module: what the lifecycle callback records for one domain.
#include <condition_variable>
#include <mutex>
#include <string>
#include <vector>

namespace smtlab::vm {

struct DomainWatch {
  std::mutex mutex;
  std::condition_variable changed;
  bool stopped = false;        // VIR_DOMAIN_EVENT_STOPPED seen
  bool shutdown_seen = false;  // guest asked to power off
  bool crashed = false;        // VIR_DOMAIN_EVENT_CRASHED or STOPPED_CRASHED/FAILED
  int stop_detail = -1;        // VIR_DOMAIN_EVENT_STOPPED_* detail
  bool connection_lost = false;  // the (remote) connection died: its libvirtd destroys the guest
  std::vector<std::string> events;  // "started/booted", "shutdown/guest", "stopped/shutdown", ...
};

std::string describe_lifecycle_event(int event, int detail);

}  // namespace smtlab::vm
