#include "protocol/job.hpp"

#include <set>

#include "util/error.hpp"
#include "util/limits.hpp"

namespace smtlab::protocol {
namespace {

using nlohmann::json;

[[noreturn]] void bad(const std::string& where, const std::string& what) {
  throw Error("job." + where + ": " + what,
              "the job is written by the host (smtlab run); check the recipe values it came from");
}

// Each get_* leaves `out` untouched when the key is absent.
void get_int(const json& o, const char* key, const std::string& where, int& out, int min = INT32_MIN,
             int max = INT32_MAX) {
  if (!o.contains(key)) return;
  const json& v = o.at(key);
  if (!v.is_number_integer()) bad(where + key, "expected an integer, got " + v.dump());
  auto x = v.get<int64_t>();
  if (x < min || x > max)
    bad(where + key, "value " + std::to_string(x) + " out of range [" + std::to_string(min) + ", " +
                         std::to_string(max) + "]");
  out = static_cast<int>(x);
}

void get_bool(const json& o, const char* key, const std::string& where, bool& out) {
  if (!o.contains(key)) return;
  const json& v = o.at(key);
  if (!v.is_boolean()) bad(where + key, "expected true or false, got " + v.dump());
  out = v.get<bool>();
}

void get_double(const json& o, const char* key, const std::string& where, double& out) {
  if (!o.contains(key)) return;
  const json& v = o.at(key);
  if (!v.is_number()) bad(where + key, "expected a number, got " + v.dump());
  out = v.get<double>();
}

void get_string(const json& o, const char* key, const std::string& where, std::string& out,
                const std::set<std::string>& allowed = {}) {
  if (!o.contains(key)) return;
  const json& v = o.at(key);
  if (!v.is_string()) bad(where + key, "expected a string, got " + v.dump());
  auto s = v.get<std::string>();
  if (!allowed.empty() && !allowed.count(s)) {
    std::string list;
    for (auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
    bad(where + key, "\"" + s + "\" is not one of: " + list);
  }
  out = s;
}

void get_int_list(const json& o, const char* key, const std::string& where, std::vector<int>& out,
                  int min) {
  if (!o.contains(key)) return;
  json v = o.at(key);
  if (v.is_number_integer()) v = json::array({v});  // tolerate a single value
  if (!v.is_array() || v.empty()) bad(where + key, "expected a non-empty list of integers, got " + v.dump());
  std::vector<int> r;
  for (auto& e : v) {
    if (!e.is_number_integer() || e.get<int64_t>() < min || e.get<int64_t>() > 1 << 20)
      bad(where + key, "expected integers >= " + std::to_string(min) + ", got " + e.dump());
    r.push_back(e.get<int>());
  }
  out = r;
}

void get_string_map(const json& o, const char* key, const std::string& where,
                    std::map<std::string, std::string>& out) {
  if (!o.contains(key)) return;
  const json& v = o.at(key);
  if (!v.is_object()) bad(where + key, "expected an object of strings, got " + v.dump());
  out.clear();
  for (auto& [k, x] : v.items()) {
    if (x.is_string())
      out[k] = x.get<std::string>();
    else if (x.is_number() || x.is_boolean())
      out[k] = x.is_boolean() ? (x.get<bool>() ? "1" : "0") : x.dump();
    else
      bad(where + key + "." + k, "expected a string, got " + x.dump());
  }
}

const json& object_at(const json& o, const char* key, const std::string& where) {
  static const json empty = json::object();
  if (!o.contains(key)) return empty;
  const json& v = o.at(key);
  if (!v.is_object()) bad(where + key, "expected an object, got " + v.dump());
  return v;
}

}  // namespace

json to_json(const KernbenchParams& p) {
  return {{"jobs", p.jobs}, {"warmup", p.warmup}, {"tree", p.tree},
          {"files", p.files}, {"config", p.config}, {"target", p.target}};
}
json to_json(const ChatParams& p) {
  return {{"rooms", p.rooms}, {"users", p.users}, {"count", p.count},
          {"yield", p.yield}, {"port", p.port},   {"discard", p.discard}, {"stall_s", p.stall_s}};
}
json to_json(const HackbenchParams& p) {
  return {{"groups", p.groups}, {"loops", p.loops}, {"fds", p.fds},
          {"threads", p.threads}, {"pipes", p.pipes}};
}

json to_json(const ExecParams& p) { return {{"benchmark", p.benchmark}}; }

json to_json(const Job& job) {
  json j = {{"schema", job.schema},
            {"cell", job.cell},
            {"vm", job.vm},
            {"vms", job.vms},
            {"role", job.role},
            {"kind", job.kind},
            {"iterations", job.iterations},
            {"params", job.params.is_null() ? json::object() : job.params},
            {"sysctls", job.sysctls},
            {"sched_tunables", job.sched_tunables},
            {"coresched", job.coresched},
            {"monitors",
             {{"vmstat_interval_s", job.monitors.vmstat_interval_s},
              {"schedstat", job.monitors.schedstat},
              {"cpu_busy", job.monitors.cpu_busy}}},
            {"lockstep", job.lockstep},
            {"argv", job.argv},
            {"noise", {{"workers", job.noise.workers}, {"load", job.noise.load}}}};
  return j;
}

Job job_from_json(const json& j) {
  if (!j.is_object()) bad("", "a job must be a JSON object, got " + std::string(j.type_name()));
  Job job;
  get_int(j, "schema", "", job.schema);
  if (job.schema != kJobSchema)
    bad("schema", "this agent understands schema " + std::to_string(kJobSchema) + ", the job has " +
                      std::to_string(job.schema) + " (rebuild the guest image with this smtlab)");
  get_string(j, "cell", "", job.cell);
  get_int(j, "vm", "", job.vm, 0);
  get_int(j, "vms", "", job.vms, 1);
  get_string(j, "role", "", job.role, {"benchmark", "noise"});
  get_string(j, "kind", "", job.kind, {"kernbench", "chat", "hackbench", "exec", "noise"});
  if (job.kind.empty()) job.kind = job.role == "noise" ? "noise" : "";
  if (job.kind.empty()) bad("kind", "missing (kernbench, chat, hackbench, exec or noise)");
  get_int(j, "iterations", "", job.iterations, 0, 100000);
  if (j.contains("params")) {
    if (!j["params"].is_object()) bad("params", "expected an object, got " + j["params"].dump());
    job.params = j["params"];
  }
  get_string_map(j, "sysctls", "", job.sysctls);
  get_string_map(j, "sched_tunables", "", job.sched_tunables);
  get_bool(j, "coresched", "", job.coresched);
  const json& m = object_at(j, "monitors", "");
  get_double(m, "vmstat_interval_s", "monitors.", job.monitors.vmstat_interval_s);
  if (job.monitors.vmstat_interval_s < 0) bad("monitors.vmstat_interval_s", "must be >= 0");
  get_bool(m, "schedstat", "monitors.", job.monitors.schedstat);
  get_bool(m, "cpu_busy", "monitors.", job.monitors.cpu_busy);
  get_bool(j, "lockstep", "", job.lockstep);
  if (j.contains("argv")) {
    const json& a = j["argv"];
    if (!a.is_array()) bad("argv", "expected a list of strings, got " + a.dump());
    for (auto& s : a) {
      if (!s.is_string()) bad("argv", "expected strings, got " + s.dump());
      job.argv.push_back(s.get<std::string>());
    }
  }
  if (job.kind == "exec" && job.argv.empty()) bad("argv", "an exec job needs a non-empty argv");
  const json& n = object_at(j, "noise", "");
  get_int(n, "workers", "noise.", job.noise.workers, 1, 4096);
  get_int(n, "load", "noise.", job.noise.load, 1, 100);
  // Fail early on bad kind-specific parameters.
  if (job.kind == "kernbench") kernbench_params(job);
  if (job.kind == "chat") chat_params(job);
  if (job.kind == "hackbench") hackbench_params(job);
  if (job.kind == "exec") exec_params(job);
  return job;
}

Job parse_job(const std::string& text) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded()) bad("", "not valid JSON");
  return job_from_json(j);
}

json to_json(const JobList& list) {
  if (!list.is_list) {
    if (list.jobs.size() != 1) throw Error("a single-job file needs exactly one job, got " + std::to_string(list.jobs.size()));
    return to_json(list.jobs.front());
  }
  json jobs = json::array();
  for (const auto& j : list.jobs) jobs.push_back(to_json(j));
  return {{"schema", kJobSchema}, {"jobs", jobs}};
}

JobList job_list_from_json(const json& j) {
  JobList list;
  if (!j.is_object() || !j.contains("jobs")) {
    list.jobs.push_back(job_from_json(j));
    return list;
  }
  list.is_list = true;
  int schema = kJobSchema;
  get_int(j, "schema", "", schema);
  if (schema != kJobSchema)
    bad("schema", "this agent understands schema " + std::to_string(kJobSchema) + ", the job list has " +
                      std::to_string(schema) + " (rebuild the guest image with this smtlab)");
  const json& a = j.at("jobs");
  if (!a.is_array() || a.empty() || a.size() > kMaxJobsPerList)
    bad("jobs", "expected a list of 1 to " + std::to_string(kMaxJobsPerList) + " jobs, got " +
                    (a.is_array() ? std::to_string(a.size()) + " entries" : std::string(a.type_name())));
  std::set<std::string> cells;
  for (size_t i = 0; i < a.size(); ++i) {
    const std::string where = "jobs[" + std::to_string(i) + "]";
    Job job;
    try {
      job = job_from_json(a[i]);
    } catch (const Error& e) {
      std::string what = e.what();  // "job.<key>: ..." or "job.: ..."
      if (what.rfind("job.", 0) == 0) what = what.substr(what.size() > 4 && what[4] == ':' ? 4 : 3);
      throw Error("job." + where + what, e.hint());
    }
    if (job.role != "benchmark") bad(where + ".role", "a job list holds benchmark jobs only (a noise VM gets one job)");
    if (job.cell.empty()) bad(where + ".cell", "every job of a list names its cell");
    if (!cells.insert(job.cell).second) bad(where + ".cell", "cell \"" + job.cell + "\" is named twice");
    if (!list.jobs.empty() && (job.vm != list.jobs[0].vm || job.vms != list.jobs[0].vms))
      bad(where + ".vm", "every job of a list is for the same VM (vm and vms as jobs[0])");
    list.jobs.push_back(std::move(job));
  }
  return list;
}

JobList parse_job_list(const std::string& text) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded()) bad("", "not valid JSON");
  return job_list_from_json(j);
}

KernbenchParams kernbench_params(const Job& job) {
  KernbenchParams p;
  const json& o = job.params;
  get_int_list(o, "jobs", "params.", p.jobs, 1);
  get_bool(o, "warmup", "params.", p.warmup);
  get_string(o, "tree", "params.", p.tree, {"synthetic", "linux-source"});
  get_int(o, "files", "params.", p.files, 1, 100000);
  get_string(o, "config", "params.", p.config);
  get_string(o, "target", "params.", p.target);
  return p;
}

ChatParams chat_params(const Job& job) {
  ChatParams p;
  const json& o = job.params;
  get_int(o, "rooms", "params.", p.rooms, 1, limits::kChatMaxRooms);
  get_int(o, "users", "params.", p.users, limits::kChatMinUsers, limits::kChatMaxUsers);
  get_int(o, "count", "params.", p.count, 1, 100000000);
  get_string(o, "yield", "params.", p.yield, {"both", "rx", "tx", "none"});
  get_int(o, "port", "params.", p.port, 0, 65535);
  get_int(o, "discard", "params.", p.discard, 0, 100000);
  get_int(o, "stall_s", "params.", p.stall_s, 1, 86400);
  return p;
}

HackbenchParams hackbench_params(const Job& job) {
  HackbenchParams p;
  const json& o = job.params;
  get_int_list(o, "groups", "params.", p.groups, 1);
  get_int(o, "loops", "params.", p.loops, 1, 100000000);
  get_int(o, "fds", "params.", p.fds, 1, 1000);
  get_bool(o, "threads", "params.", p.threads);
  get_bool(o, "pipes", "params.", p.pipes);
  return p;
}

ExecParams exec_params(const Job& job) {
  ExecParams p;
  get_string(job.params, "benchmark", "params.", p.benchmark);
  if (p.benchmark.empty() || p.benchmark.size() > 64) bad("params.benchmark", "expected a name of 1 to 64 characters");
  return p;
}

}  // namespace smtlab::protocol
