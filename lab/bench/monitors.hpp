#pragma once
// In-guest observers: a vmstat-equivalent sampler (own thread), /proc/schedstat snapshots and
// per-CPU busy time over a run.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "bench/procfs.hpp"

namespace smtlab::bench {

struct VmstatSnapshot {
  ProcStat stat;
  std::map<std::string, uint64_t> meminfo;  // kB
  std::map<std::string, uint64_t> vmstat;   // counters
  std::chrono::steady_clock::time_point when;
};
VmstatSnapshot take_vmstat_snapshot(const std::string& proc = "/proc");

// One vmstat row between two snapshots: r b swpd free buff cache si so bi bo in cs us sy id wa st
// (memory in kB; si/so/bi/bo in kB/s; in/cs per second; CPU columns in % of the interval).
// r is procs_running as the kernel reports it (the sampler itself is one of them when running).
nlohmann::json vmstat_row(const VmstatSnapshot& before, const VmstatSnapshot& after);

// Samples every `interval` on its own thread and hands each row to `on_row(t, values)`, where t
// is seconds since the origin (set_origin; until then, since start()).
class VmstatSampler {
 public:
  using OnRow = std::function<void(double t, const nlohmann::json& values)>;
  VmstatSampler(double interval_s, OnRow on_row, std::string proc = "/proc");
  ~VmstatSampler();
  void start();
  void stop();  // joins; idempotent
  void set_origin(std::chrono::steady_clock::time_point origin);
  size_t rows() const { return rows_; }

 private:
  void loop();
  double interval_s_;
  OnRow on_row_;
  std::string proc_;
  std::thread thread_;
  std::mutex m_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::atomic<int64_t> origin_ns_{0};
  std::atomic<size_t> rows_{0};
};

// /proc/schedstat as JSON: {"version":N,"timestamp":J,"cpus":[{"cpu":0,"running_ns":..,
// "waiting_ns":..,"timeslices":..,"fields":[...]}]} (null when the file is missing, i.e. a
// kernel without CONFIG_SCHEDSTATS).
nlohmann::json schedstat_snapshot(const std::string& proc = "/proc");

// Per-CPU busy % between begin() and end(): {"cpus":[{"cpu":0,"busy_pct":..}],"all_pct":..}.
class CpuBusy {
 public:
  explicit CpuBusy(std::string proc = "/proc") : proc_(std::move(proc)) {}
  void begin();
  nlohmann::json end() const;

 private:
  std::string proc_;
  ProcStat start_;
};

}  // namespace smtlab::bench
