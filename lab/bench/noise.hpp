#pragma once
// CPU noise for the VMs whose role is noise: stress-ng --cpu W --cpu-load L, restarted if it
// ever exits, until stop(). A stress-ng that exits and cannot be started again leaves the noise
// gone (failure() says why): the VM no longer makes the noise its cell is measured under.
#include <sys/types.h>

#include <atomic>
#include <mutex>
#include <string>
#include <thread>

namespace smtlab::bench {

class Noise {
 public:
  Noise(int workers, int load_pct, std::string program = "stress-ng");
  ~Noise();
  // Starts stress-ng; throws smtlab::Error when it cannot be run at all.
  void start();
  void stop();  // kills stress-ng (its whole process group) and joins; idempotent
  int restarts() const { return restarts_; }
  // Why the noise stopped on its own (stress-ng exited and could not be started again); "" as
  // long as it has not.
  std::string failure() const;

 private:
  void loop();
  pid_t launch();
  int workers_, load_;
  std::string program_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<pid_t> pid_{-1};
  std::atomic<int> restarts_{0};
  mutable std::mutex failure_mutex_;
  std::string failure_;
};

}  // namespace smtlab::bench
