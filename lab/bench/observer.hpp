#pragma once
// How a workload reports what it measures: samples, events, and a hook before each measured
// iteration (lockstep barriers). The guest agent turns these into records.
#include <string>

#include <nlohmann/json.hpp>

namespace smtlab::bench {

struct Sample {
  std::string benchmark;  // kernbench | chat | hackbench
  int iteration = 0;      // 1-based; warm-up runs are 0
  bool warmup = false;
  std::string metric;     // elsp-2, msgs/s, time-4, ...
  double value = 0;
  std::string unit;       // s, count, msgs/s, us, ...
  std::string better;     // lower | higher
};

class Observer {
 public:
  virtual ~Observer() = default;
  virtual void sample(const Sample& s) = 0;
  virtual void event(const std::string& name, const nlohmann::json& detail) = 0;
  // Called right before a measured iteration starts; `barrier` names it uniquely within the job
  // (for lockstep runs the agent waits here for the host's "go <barrier>").
  virtual void before_iteration(const std::string& barrier) { (void)barrier; }
};

}  // namespace smtlab::bench
