#include "bench/monitors.hpp"

#include <sstream>

namespace smtlab::bench {

using nlohmann::json;

VmstatSnapshot take_vmstat_snapshot(const std::string& proc) {
  VmstatSnapshot s;
  s.when = std::chrono::steady_clock::now();
  s.stat = parse_proc_stat(read_proc(proc + "/stat").value_or(""));
  s.meminfo = parse_key_values(read_proc(proc + "/meminfo").value_or(""));
  s.vmstat = parse_key_values(read_proc(proc + "/vmstat").value_or(""));
  return s;
}

namespace {
uint64_t get(const std::map<std::string, uint64_t>& m, const char* k) {
  auto it = m.find(k);
  return it == m.end() ? 0 : it->second;
}
double delta(uint64_t a, uint64_t b) { return b >= a ? static_cast<double>(b - a) : 0.0; }
}  // namespace

json vmstat_row(const VmstatSnapshot& a, const VmstatSnapshot& b) {
  double dt = std::chrono::duration<double>(b.when - a.when).count();
  if (dt <= 0) dt = 1e-9;
  const auto& m = b.meminfo;
  const uint64_t page_kb = 4;  // /proc/vmstat pswpin/pswpout count pages
  const CpuTimes &c0 = a.stat.all, &c1 = b.stat.all;
  double total = delta(c0.total(), c1.total());
  auto pct = [&](double d) { return total > 0 ? 100.0 * d / total : 0.0; };
  uint64_t swap_total = get(m, "SwapTotal"), swap_free = get(m, "SwapFree");
  return {
      {"r", b.stat.procs_running},
      {"b", b.stat.procs_blocked},
      {"swpd", swap_total >= swap_free ? swap_total - swap_free : 0},
      {"free", get(m, "MemFree")},
      {"buff", get(m, "Buffers")},
      {"cache", get(m, "Cached") + get(m, "SReclaimable")},
      {"si", delta(get(a.vmstat, "pswpin"), get(b.vmstat, "pswpin")) * page_kb / dt},
      {"so", delta(get(a.vmstat, "pswpout"), get(b.vmstat, "pswpout")) * page_kb / dt},
      {"bi", delta(get(a.vmstat, "pgpgin"), get(b.vmstat, "pgpgin")) / dt},
      {"bo", delta(get(a.vmstat, "pgpgout"), get(b.vmstat, "pgpgout")) / dt},
      {"in", delta(a.stat.intr, b.stat.intr) / dt},
      {"cs", delta(a.stat.ctxt, b.stat.ctxt) / dt},
      {"us", pct(delta(c0.user + c0.nice, c1.user + c1.nice))},
      {"sy", pct(delta(c0.system + c0.irq + c0.softirq, c1.system + c1.irq + c1.softirq))},
      {"id", pct(delta(c0.idle, c1.idle))},
      {"wa", pct(delta(c0.iowait, c1.iowait))},
      {"st", pct(delta(c0.steal, c1.steal))},
  };
}

VmstatSampler::VmstatSampler(double interval_s, OnRow on_row, std::string proc)
    : interval_s_(interval_s > 0.01 ? interval_s : 0.01), on_row_(std::move(on_row)), proc_(std::move(proc)) {}

VmstatSampler::~VmstatSampler() { stop(); }

void VmstatSampler::start() {
  if (origin_ns_ == 0) set_origin(std::chrono::steady_clock::now());
  thread_ = std::thread([this] { loop(); });
}

void VmstatSampler::stop() {
  {
    std::lock_guard lock(m_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void VmstatSampler::set_origin(std::chrono::steady_clock::time_point origin) {
  origin_ns_ = std::chrono::duration_cast<std::chrono::nanoseconds>(origin.time_since_epoch()).count();
}

void VmstatSampler::loop() {
  auto interval = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(interval_s_));
  VmstatSnapshot prev = take_vmstat_snapshot(proc_);
  auto next = prev.when + interval;
  for (;;) {
    {
      std::unique_lock lock(m_);
      if (cv_.wait_until(lock, next, [&] { return stop_; })) return;
    }
    VmstatSnapshot cur = take_vmstat_snapshot(proc_);
    auto origin = std::chrono::steady_clock::time_point(std::chrono::nanoseconds(origin_ns_.load()));
    double t = std::chrono::duration<double>(cur.when - origin).count();
    on_row_(t, vmstat_row(prev, cur));
    ++rows_;
    prev = std::move(cur);
    next += interval;
    auto now = std::chrono::steady_clock::now();
    if (next < now) next = now + interval;  // fell behind (slow guest): do not burst
  }
}

json schedstat_snapshot(const std::string& proc) {
  auto text = read_proc(proc + "/schedstat");
  if (!text) return nullptr;
  json out = {{"cpus", json::array()}};
  std::istringstream in(*text);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string key;
    ls >> key;
    if (key == "version") {
      int v = 0;
      ls >> v;
      out["version"] = v;
    } else if (key == "timestamp") {
      uint64_t v = 0;
      ls >> v;
      out["timestamp"] = v;
    } else if (key.rfind("cpu", 0) == 0 && key.size() > 3) {
      std::vector<uint64_t> fields;
      uint64_t v;
      while (ls >> v) fields.push_back(v);
      json cpu = {{"cpu", std::atoi(key.c_str() + 3)}, {"fields", fields}};
      // Fields 7-9 (1-based, after the cpu name): time running, time waiting, timeslices.
      if (fields.size() >= 9) {
        cpu["running_ns"] = fields[6];
        cpu["waiting_ns"] = fields[7];
        cpu["timeslices"] = fields[8];
      }
      out["cpus"].push_back(cpu);
    }
  }
  return out;
}

void CpuBusy::begin() { start_ = parse_proc_stat(read_proc(proc_ + "/stat").value_or("")); }

json CpuBusy::end() const {
  ProcStat now = parse_proc_stat(read_proc(proc_ + "/stat").value_or(""));
  json cpus = json::array();
  auto pct = [](const CpuTimes& a, const CpuTimes& b) {
    double total = delta(a.total(), b.total());
    return total > 0 ? 100.0 * delta(a.busy(), b.busy()) / total : 0.0;
  };
  for (auto& [cpu, t] : now.cpus) {
    auto it = start_.cpus.find(cpu);
    if (it == start_.cpus.end()) continue;  // came online during the run
    cpus.push_back({{"cpu", cpu}, {"busy_pct", pct(it->second, t)}});
  }
  return {{"cpus", cpus}, {"all_pct", pct(start_.all, now.all)}};
}

}  // namespace smtlab::bench
