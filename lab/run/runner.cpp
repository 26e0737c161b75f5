#include "run/runner.hpp"

#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <set>
#include <thread>
#include <tuple>

#include "cache/cache.hpp"
#include "plan/schedule.hpp"
#include "results/results.hpp"
#include "run/artifacts.hpp"
#include "run/guest_session.hpp"
#include "run/job_builder.hpp"
#include "run/progress.hpp"
#include "run/resume.hpp"
#include "smtlab/version.hpp"
#include "util/cpulist.hpp"
#include "util/error.hpp"
#include "util/files.hpp"
#include "util/log.hpp"
#include "util/paths.hpp"
#include "util/utc.hpp"
#include "vm/connection.hpp"
#include "vm/guest_output.hpp"
#include "vm/interrupt.hpp"
#include "vm/staging.hpp"

namespace smtlab::run {
namespace {

nlohmann::json cell_entry(const plan::Cell& cell, const recipe::Monitors& monitors) {
  const auto& t = cell.topology;
  return {{"id", cell.id},
          {"index", cell.index},
          {"variant", cell.variant.name},
          {"kernel", cell.kernel.name},
          {"topology", t.name},
          {"shape", t.shape()},
          {"vms", t.vms},
          {"vcpus", t.vcpus()},
          {"host_cpus", t.host_cpus.empty() ? std::string("all") : format_cpulist(t.host_cpus)},
          {"pinning", recipe::to_string(t.pinning)},
          {"host_sched", recipe::to_string(t.host_sched)},
          {"benchmark", cell.benchmark.name},
          {"kind", cell.benchmark.kind},
          {"iterations", cell.iterations},
          {"definition", plan::cell_definition(cell)},
          // What the benchmark guests' vmstat sampler was asked for (0: none), so that a profile
          // with no row can be told apart from one that was never asked for.
          {"vmstat_interval_s", monitors.vmstat ? monitors.vmstat_interval_s : 0.0}};
}

// Writes what the guests send into the results directory, and keeps the progress line fresh.
// A shared boot's records go to the cell of their job (`cells`: the group's cells in job order).
// The records of one read of a channel are gathered and written at its flush(): one fdatasync
// per file and poll (a chatty guest would otherwise hold the host loop in fdatasync per record).
class ResultsObserver : public GuestObserver {
 public:
  ResultsObserver(results::ResultsWriter& writer, std::vector<std::string> cells, Progress& progress, int k)
      : writer_(writer), cells_(std::move(cells)), progress_(progress), k_(k) {}
  ~ResultsObserver() override {
    try {
      flush();  // the session flushes after every read; this only covers an exception in between
    } catch (...) {
    }
  }

  void flush() override { writer_.append(batch_); }

  void on_record(int vm, int job, const protocol::Record& record) override {
    const std::string& cell_ = cells_.at(static_cast<size_t>(job));
    nlohmann::json rec = record.body;
    rec["vm"] = vm;
    if (record.type == "sample") {
      batch_.sample(cell_, rec);
      if (vm == 0) say_first_sample(job, rec);
    } else if (record.type == "monitor") {
      batch_.monitor(cell_, rec);
    } else {
      batch_.event(cell_, rec);
      if (record.type == "event" && vm == 0) {
        auto name = rec.value("name", std::string());
        if (name == "iteration-start" || name == "warmup") {
          const auto& d = rec.contains("detail") ? rec["detail"] : nlohmann::json::object();
          std::string what = name == "warmup" ? "warm-up" : "iteration " + d.value("iteration", nlohmann::json(0)).dump();
          if (d.contains("jobs")) what = "-j" + d["jobs"].dump() + " " + what;
          progress_.iteration(k_, what);
        }
      }
    }
    progress_.tick();
  }

  void on_problem(int vm, const protocol::Problem& problem) override {
    batch_.event(cells_.front(), {{"type", "stream-problem"},
                                 {"vm", vm},
                                 {"kind", protocol::to_string(problem.kind)},
                                 {"line", problem.line},
                                 {"what", problem.what}});
  }

 private:
  // An iteration's first sample is its headline (kernbench's elapsed time, chat's msgs/s): said
  // with the iteration it ends.
  void say_first_sample(int job, const nlohmann::json& rec) {
    const auto& value = rec.contains("value") ? rec["value"] : nlohmann::json();
    if (!value.is_number()) return;
    std::tuple key{job, rec.value("iteration", -1), rec.value("warmup", false)};
    if (key == last_said_) return;
    last_said_ = key;
    progress_.measured(k_, sample_text(rec.value("metric", std::string("?")), value.get<double>(),
                                       rec.value("unit", std::string())));
  }

  results::ResultsWriter& writer_;
  results::RecordBatch batch_;
  std::vector<std::string> cells_;
  Progress& progress_;
  int k_;  // the boot's position, for the progress line
  std::tuple<int, int, bool> last_said_{-1, -1, false};  // job, iteration, warm-up
};

// The cell's host CPU account goes with its manifest entry; a host that other processes (or
// the hypervisor under it) took a share of is a disturbance of the cell, said on the terminal too
// (the line returned, for after the cell's end line).
std::string record_host_cpu(nlohmann::json& extra, const std::optional<HostCpuShare>& share, const std::string& cell_id) {
  if (!share) return {};
  extra["host_cpu"] = to_json(*share);
  auto d = host_disturbance(*share);
  if (!d) return {};
  extra["disturbances"].push_back(*d);
  return fmt::format("  disturbed ({}): {}\n", cell_id, *d);
}

// "agent ready after 3.2 s" for one VM; with several, when the last was ready (the cell waits for it).
std::string ready_text(const std::vector<double>& ready_s) {
  if (ready_s.empty()) return "no agent ready";
  const double last = *std::max_element(ready_s.begin(), ready_s.end());
  return ready_s.size() == 1 ? fmt::format("agent ready after {:.1f} s", last)
                             : fmt::format("all {} agents ready after {:.1f} s", ready_s.size(), last);
}

// "1a2b3c4d5e6f, 7b1c..." of a JSON array of cell ids.
std::string joined_ids(const nlohmann::json& ids) {
  std::string out;
  for (const auto& id : ids) out += (out.empty() ? "" : ", ") + id.get<std::string>();
  return out;
}

// A cell measured while other boots ran (recipe parallel) is disturbed by them as much as by any
// other process: they share caches, memory and the host (BENCHMARKS.md, session 10), so the
// comparison lists it.
void record_alongside(nlohmann::json& extra, const nlohmann::json& others) {
  if (others.empty()) return;
  extra["disturbances"].push_back("ran alongside cell(s) " + joined_ids(others) +
                                  " (other boots on other host CPUs: recipe parallel)");
}

// ", ran alongside 1a2b3c4d5e6f, ..." for the end-of-cell line; "" when it ran alone.
std::string alongside_text(const nlohmann::json& ids) { return ids.empty() ? "" : ", ran alongside " + joined_ids(ids); }

}  // namespace

std::filesystem::path default_results_dir(const recipe::Recipe& recipe) {
  std::filesystem::path base = "results";
  if (const char* env = std::getenv("SMTLAB_RESULTS"); env && *env) base = env;
  return base / (recipe.name + "-" + utc_now("%Y%m%d-%H%M%S"));
}

RunSummary run_recipe(const recipe::Recipe& recipe, const RunOptions& options) {
  auto plan = plan::make_plan(recipe, options.plan);
  RunSummary summary;
  summary.dir = options.output.empty() ? default_results_dir(recipe) : options.output;

  std::optional<results::ResultsWriter> writer;
  if (options.resume) {
    writer.emplace(results::ResultsWriter::open(summary.dir));
    auto m = writer->manifest();
    auto sha = m.contains("recipe") ? m["recipe"].value("sha256", std::string()) : std::string();
    if (sha != recipe.sha256)
      throw Error(summary.dir.string() + " was made from another recipe (sha256 " + sha.substr(0, 12) + ", this one " +
                      recipe.sha256.substr(0, 12) + ")",
                  "resume with the recipe file that started the run, or start a new run with -o NEW_DIR");
    check_resume_conditions(m, {{"shard", plan::shard_record(plan, options.plan)}}, summary.dir);
  } else {
    // Before minutes of downloads; create() checks again under the directory's lock.
    results::ResultsWriter::check_new_dir(summary.dir);
  }

  vm::check_output_caps();
  // Connect first: a host that cannot run guests should say so before minutes of downloads.
  auto connection = vm::Connection::open(options.connect);
  const auto& info = connection->info();
  summary.accel = vm::to_string(info.accel);
  note(connection->describe());
  if (!info.local)
    note("remote libvirt host " + info.hostname + ": guest files are staged in " +
         (options.remote_dir.empty() ? std::string(vm::kDefaultRemoteDir) : options.remote_dir.string()) +
         " there; guests are destroyed by that libvirtd if this process or its connection dies");
  // A resume on a host that runs guests otherwise is refused before minutes of downloads (the
  // kernels' and image's bytes are compared once prepared, by choose_cells).
  if (options.resume) check_resume_conditions(writer->manifest(), {{"accel", summary.accel}}, summary.dir);
  if (info.accel == vm::Accel::tcg)
    note("no usable KVM: guests run under TCG (software emulation); numbers are for this emulated machine");

  cache::Cache cache;
  auto artifacts = prepare_artifacts(recipe, plan, cache, options.kernel_pins);
  for (const auto& [name, sha] : options.expect_kernel_sha256) {
    auto it = artifacts.kernels.find(name);
    if (it != artifacts.kernels.end() && !sha.empty() && it->second.kernel.sha256 != sha)
      throw Error("kernel " + name + " is not the one the original run used (sha256 " + it->second.kernel.sha256.substr(0, 12) +
                      ", expected " + sha.substr(0, 12) + ")",
                  "the exact package is no longer available from this mirror; a reproduction needs the same bytes");
  }
  if (!options.expect_image_digest.empty() && artifacts.image.digest != options.expect_image_digest)
    throw Error("image " + artifacts.image.name + " has digest " + artifacts.image.digest.substr(0, 12) +
                    ", the original run used " + options.expect_image_digest.substr(0, 12),
                "the image definition changed: check out the commit the run was made from");

  nlohmann::json run_info = {
      {"smtlab_version", kVersion},
      {"recipe", {{"file", recipe.file.string()}, {"name", recipe.name}, {"sha256", recipe.sha256}, {"text", recipe.text}}},
      {"host",
       {{"hostname", info.hostname},
        {"cpu_model", info.host_cpu_name},
        {"libvirt_cpu_model", info.host.cpu_model},
        {"cpus", info.host.cpus.size()},
        {"topology", info.host.describe()},
        {"threads_per_core", info.host.threads_per_core()},
        {"remote", !info.local}}},
      {"versions", {{"qemu", info.qemu_version}, {"libvirt", info.libvirt_version}}},
      {"connection", vm::uri_for_records(info.uri)},
      {"accel", summary.accel},
      {"guest_cpu_model", info.guest_cpu_model},
      {"parallel", plan.parallel},
  };
  auto art = artifacts.manifest();
  run_info["kernels"] = art["kernels"];
  run_info["image"] = art["image"];
  run_info["prepare_s"] = art["prepare_s"];

  if (!writer) {
    nlohmann::json manifest = run_info;
    manifest["started"] = utc_now();
    // A shard says which one it is, so that merge can tell an absent shard (and how to run it).
    if (auto shard = plan::shard_record(plan, options.plan); !shard.is_null()) manifest["shard"] = std::move(shard);
    manifest["cells"] = nlohmann::json::array();
    for (const auto& cell : plan.cells) manifest["cells"].push_back(cell_entry(cell, recipe.monitors));
    writer.emplace(results::ResultsWriter::create(summary.dir, manifest));
  }
  note("results: " + summary.dir.string());

  // The run's overlays and job initrds: <cache>/work/run.<pid>, removed when the run ends on any
  // path (`smtlab cache gc` removes it after a run that was killed).
  const ScopedDirectory work_root(cache_dir() / "work" / cache::process_dir_name("run"));
  const auto& work = work_root.path();
  Progress progress(static_cast<int>(plan.cells.size()), options.live_progress);

  // The session of a boot whose first (or only) cell is `cell`: its logs go to that cell's directory.
  auto session_config = [&](const plan::Cell& cell) {
    SessionConfig config;
    config.cell = &cell;
    config.kernel = &artifacts.kernels.at(cell.kernel.name);
    config.image = &artifacts.image;
    for (int vm = 0; vm < cell.topology.vms; ++vm) config.jobs.push_back(make_job(cell, recipe.monitors, vm));
    config.work_dir = work / cell.id;
    config.console_log = [&writer, id = cell.id](int vm) { return writer->console_log(id, vm); };
    config.qemu_log = [&writer, id = cell.id](int vm) {
      return writer->cell_dir(id) / ("qemu-vm" + std::to_string(vm) + ".log");
    };
    config.stream_log = [&writer, id = cell.id](int vm) {
      return writer->cell_dir(id) / ("stream-vm" + std::to_string(vm) + ".jsonl");
    };
    config.boot_timeout_s = recipe.timeouts.boot_s;
    config.cell_timeout_s = recipe.timeouts.cell_s;
    config.remote_dir = options.remote_dir;
    config.confine_to_host_cpus = plan.parallel;
    config.keep_failed_boot = keep_failed_boots(*writer, {cell.id});
    return config;
  };

  // What a boot did, for the summary.
  struct BootResult {
    int ok = 0, failed = 0;
    bool interrupted = false;
  };

  // Under TCG a cell whose workload stalled runs once more (QEMU 7.2's TCG now and then leaves a
  // guest stuck; RELIABILITY.md); a second stall is the cell's result. Not while interrupted.
  auto rerun_stalled = [&](bool stalled) { return stalled && summary.accel == "tcg" && !vm::interrupted(); };
  // The failed attempt of a cell that stalled is kept whole under attempts/; says where.
  auto keep_stalled_attempt = [&](const plan::Cell& cell, const std::string& error) {
    const int n = writer->archive_attempt(cell.id);
    const std::string kept = "attempts/" + cell.id + "/" + std::to_string(n);
    note(fmt::format("cell {} stalled: {}", cell.id, error));
    note(fmt::format("under TCG a stalled cell runs once more; that attempt is kept in {}", (summary.dir / kept).string()));
    return kept;
  };

  // An interrupted cell goes back to "pending" for --resume; what its attempt wrote is kept whole
  // under attempts/ (recorded as "interrupted"), never deleted. Says where ("" when it wrote nothing).
  auto keep_unfinished_attempt = [&](const std::string& id, const std::string& error) -> std::string {
    const int n = writer->archive_unfinished(id, {{"status", "interrupted"}, {"error", error}, {"finished", utc_now()}});
    return n ? "; what the cell wrote is kept in " + (summary.dir / "attempts" / id / std::to_string(n)).string() : "";
  };

  // The cells an interrupt sent back to "pending", from every boot that saw it (recipe parallel:
  // several): one entry of the manifest's "interrupted" list once the boots have ended.
  std::mutex interrupted_mutex;
  std::string interrupted_at;
  nlohmann::json interrupted_cells = nlohmann::json::array();
  auto note_interrupted = [&](const std::string& id) {
    std::lock_guard lock(interrupted_mutex);
    if (interrupted_at.empty()) interrupted_at = utc_now();
    interrupted_cells.push_back(id);
  };

  // A boot of one cell. `rerun_of`: this boot runs the cell again after its job stalled in a
  // shared boot (that boot counted it, and it is not run a third time); says so in its notes.
  struct Rerun {
    std::string note;
  };
  auto run_cell = [&](const plan::Cell& cell, int k, const std::function<nlohmann::json()>& alongside,
                      const Rerun* rerun_of = nullptr) -> BootResult {
    std::string label = cell.variant.name + " " + cell.topology.name + " " + cell.benchmark.name + " [" + cell.id + "]";
    progress.start_cell(k, label);
    auto started = utc_now();
    writer->set_cell_status(cell.id, "running", {{"started", started}});

    SessionConfig config = session_config(cell);
    ResultsObserver observer(*writer, {cell.id}, progress, k);
    auto outcome = run_guests(*connection, config, observer);
    if (!outcome.ok && !outcome.interrupted && !rerun_of && rerun_stalled(outcome.stalled)) {
      writer->set_cell_status(cell.id, "failed",
                              {{"started", started}, {"finished", utc_now()}, {"error", outcome.error},
                               {"wall_s", outcome.wall_s}, {"notes", outcome.notes},
                               {"console_tail", outcome.console_tail}});
      const std::string kept = keep_stalled_attempt(cell, outcome.error);
      started = utc_now();
      writer->set_cell_status(cell.id, "running", {{"started", started}});
      auto again = run_guests(*connection, config, observer);
      again.notes.insert(again.notes.begin(), "an earlier attempt stalled (kept in " + kept + "): " + outcome.error);
      outcome = std::move(again);
    }
    if (rerun_of) outcome.notes.insert(outcome.notes.begin(), rerun_of->note);
    BootResult result;
    if (outcome.interrupted) {
      const std::string kept = keep_unfinished_attempt(cell.id, outcome.error);
      note_interrupted(cell.id);
      progress.end_cell(k, "interrupted", "finish the run with --resume" + kept, rerun_of ? 0 : 1);
      result.interrupted = true;
      return result;
    }
    const nlohmann::json others = alongside();
    nlohmann::json extra = {{"started", started},
                            {"finished", utc_now()},
                            {"wall_s", outcome.wall_s},
                            {"bench_s", outcome.bench_s},
                            {"ready_s", outcome.ready_s},
                            {"guest_topology", outcome.guest_topology},
                            {"kernel_cmdline", kernel_cmdline_text(cell)},
                            {"notes", outcome.notes},
                            {"disturbances", outcome.disturbances},
                            {"ran_alongside", others},
                            {"error", outcome.error}};
    std::string after = record_host_cpu(extra, outcome.host_cpu, cell.id);
    record_alongside(extra, others);
    if (!outcome.ok) extra["console_tail"] = outcome.console_tail;
    writer->set_cell_status(cell.id, outcome.ok ? "ok" : "failed", extra);
    (outcome.ok ? result.ok : result.failed)++;
    std::string detail = (outcome.ok ? ready_text(outcome.ready_s) : outcome.error) + alongside_text(others);
    for (const auto& d : outcome.disturbances) after += fmt::format("  disturbed: {}\n", d);
    if (!outcome.ok && !outcome.console_tail.empty()) after += fmt::format("  console tail:\n{}\n", outcome.console_tail);
    progress.end_cell(k, outcome.ok ? "ok" : "FAILED", detail, rerun_of ? 0 : 1, after);
    return result;
  };

  // One boot for the cells of a group (share_boot): each cell gets its own records, samples,
  // monitors and status; the boot's timings are recorded once, under boot_groups.
  // `alongside()`: the cell ids of the boots that ran at the same time (recipe parallel), known
  // when the boot ends.
  auto run_group = [&](const std::vector<const plan::Cell*>& cells, int k,
                       const std::function<nlohmann::json()>& alongside) -> BootResult {
    const plan::Cell& first = *cells.front();
    nlohmann::json ids = nlohmann::json::array();
    std::vector<std::string> id_list;
    std::string benchmarks;
    for (const auto* c : cells) {
      ids.push_back(c->id);
      id_list.push_back(c->id);
      benchmarks += (benchmarks.empty() ? "" : "+") + c->benchmark.name;
    }
    // The group's key: its first cell's id (a resumed run's second boot of a group's rest gets
    // a suffix if that id was used before).
    auto existing = writer->manifest().value("boot_groups", nlohmann::json::object());
    std::string key = first.id;
    for (int n = 2; existing.contains(key); ++n) key = first.id + "-" + std::to_string(n);

    std::string label = first.variant.name + " " + first.topology.name + " " + benchmarks + " [" + key + ", one boot for " +
                        std::to_string(cells.size()) + " cells]";
    progress.start_cell(k, label);
    auto started = utc_now();
    for (size_t j = 0; j < cells.size(); ++j)
      writer->set_cell_status(cells[j]->id, "running",
                              {{"started", started}, {"boot_group", {{"id", key}, {"cells", ids}, {"job", j}}}});

    SessionConfig config = session_config(first);
    config.keep_failed_boot = keep_failed_boots(*writer, id_list);
    config.group = cells;
    config.group_jobs.resize(static_cast<size_t>(first.topology.vms));
    for (int vm = 0; vm < first.topology.vms; ++vm)
      for (const auto* c : cells) config.group_jobs[static_cast<size_t>(vm)].push_back(make_job(*c, recipe.monitors, vm));

    ResultsObserver observer(*writer, id_list, progress, k);
    auto outcome = run_guests(*connection, config, observer);
    // Failed before any job could run (pinning, preparing the guests): no per-cell outcome.
    if (outcome.cells.size() != cells.size()) {
      outcome.cells.assign(cells.size(), CellOutcome{});
      for (auto& c : outcome.cells) c.error = "the shared boot failed before this cell's job ended: " + outcome.error;
    }

    auto finished = utc_now();
    const nlohmann::json others = alongside();
    writer->set_manifest_entry("boot_groups", key,
                               {{"cells", ids},
                                {"started", started},
                                {"finished", finished},
                                {"wall_s", outcome.wall_s},
                                {"ready_s", outcome.ready_s},
                                {"ok", outcome.ok},
                                {"error", outcome.error},
                                {"notes", outcome.notes},
                                {"disturbances", outcome.disturbances},
                                {"ran_alongside", others}});
    BootResult result;
    std::string host_lines;  // said after the boot's end line
    for (size_t j = 0; j < cells.size(); ++j) {
      const auto& c = outcome.cells[j];
      const auto& id = cells[j]->id;
      if (outcome.interrupted && !c.ended) {
        keep_unfinished_attempt(id, outcome.error);
        note_interrupted(id);
        continue;
      }
      nlohmann::json extra = {{"started", started},
                              {"finished", finished},
                              {"bench_s", c.bench_s},
                              {"job_s", c.job_s},
                              {"job_start_s", c.start_s},
                              {"guest_topology", outcome.guest_topology},
                              {"kernel_cmdline", kernel_cmdline_text(*cells[j])},
                              {"notes", outcome.notes},
                              {"disturbances", outcome.disturbances},
                              {"error", c.error},
                              {"ran_alongside", others},
                              {"boot_group", {{"id", key}, {"cells", ids}, {"job", j}}}};
      // A cell's wall time in a shared boot is its own job's span; the boot is the group's.
      if (c.job_s >= 0) extra["wall_s"] = c.job_s;
      host_lines += record_host_cpu(extra, c.host_cpu, id);
      record_alongside(extra, others);
      if (!c.ok) extra["console_tail"] = outcome.console_tail;
      writer->set_cell_status(id, c.ok ? "ok" : "failed", extra);
      (c.ok ? result.ok : result.failed)++;
    }
    if (outcome.interrupted) {
      progress.end_cell(k, "interrupted", "finish the run with --resume", static_cast<int>(cells.size()));
      result.interrupted = true;
      return result;
    }
    std::string detail = fmt::format("{} of {} cells ok, {}{}", result.ok, cells.size(), ready_text(outcome.ready_s),
                                     alongside_text(others));
    std::string after;
    for (size_t j = 0; j < cells.size(); ++j) {
      const auto& c = outcome.cells[j];
      after += fmt::format("  {} {}: {}{}\n", cells[j]->id, cells[j]->benchmark.name, c.ok ? "ok" : "FAILED",
                           c.ok ? fmt::format(" (job {:.1f} s)", c.job_s) : ": " + c.error);
    }
    after += host_lines;
    for (const auto& d : outcome.disturbances) after += fmt::format("  disturbed: {}\n", d);
    if (result.failed && !outcome.console_tail.empty()) after += fmt::format("  console tail:\n{}\n", outcome.console_tail);
    progress.end_cell(k, result.failed ? "FAILED" : "ok", detail, static_cast<int>(cells.size()), after);
    // A job that stalled under TCG: its cell runs once more, in a boot of its own.
    for (size_t j = 0; j < cells.size(); ++j) {
      const auto& c = outcome.cells[j];
      if (c.ok || !rerun_stalled(c.stalled)) continue;
      const Rerun rerun{"its job in shared boot " + key + " stalled (kept in " + keep_stalled_attempt(*cells[j], c.error) +
                        "): " + c.error + "; this attempt had a boot of its own"};
      --result.failed;
      const BootResult again = run_cell(*cells[j], k, alongside, &rerun);
      result.ok += again.ok;
      result.failed += again.failed;
      if (again.interrupted) {
        result.interrupted = true;
        break;
      }
    }
    return result;
  };

  // Which cells run: a resumed run skips the finished ones (ok, and failed unless retry_failed:
  // then the failed attempt is kept aside) and keeps aside what an unfinished attempt left; with
  // share_boot the rest form boot groups (one boot each).
  std::vector<plan::Cell> runnable;
  std::vector<int> position;  // 1-based, in the plan
  {
    std::vector<std::string> ids;
    for (const auto& cell : plan.cells) ids.push_back(cell.id);
    // A resume is recorded (manifest "resumed") once its cells are known to be the run's.
    const CellChoice choice = choose_cells(*writer, ids, options.retry_failed, options.resume ? &run_info : nullptr);
    summary.cells = static_cast<int>(plan.cells.size());
    summary.ok = choice.ok;
    summary.failed = choice.failed;
    summary.skipped = choice.ok + choice.failed;
    for (size_t i : choice.run) {
      runnable.push_back(plan.cells[i]);
      position.push_back(static_cast<int>(i) + 1);
    }
  }

  // The boots, one at a time in plan order; with recipe parallel, a boot starts while others run
  // when plan::BootSchedule allows it (disjoint host CPUs, no shared benchmark), each on a thread
  // of its own. An interrupted boot stops the schedule: the running ones end (they see the same
  // interrupt), no new one starts.
  plan::BootSchedule schedule(plan::make_boots(runnable, plan.share_boot), plan.parallel);
  std::mutex schedule_mutex;
  std::condition_variable boot_ended;
  std::vector<std::set<size_t>> overlapped(schedule.size());  // per boot: the boots that ran with it
  std::exception_ptr boot_error;
  auto run_boot = [&](size_t b) {
    const auto& members = schedule.boot(b).cells;
    auto alongside = [&, b] {
      std::lock_guard lock(schedule_mutex);
      nlohmann::json ids = nlohmann::json::array();
      for (size_t o : overlapped[b])
        for (size_t i : schedule.boot(o).cells) ids.push_back(runnable[i].id);
      return ids;
    };
    const int at = position[members.front()];
    if (members.size() == 1) return run_cell(runnable[members.front()], at, alongside);
    std::vector<const plan::Cell*> cells;
    for (size_t i : members) cells.push_back(&runnable[i]);
    return run_group(cells, at, alongside);
  };
  auto account = [&](const BootResult& r) {
    summary.ok += r.ok;
    summary.failed += r.failed;
    if (r.interrupted) {
      summary.interrupted = true;
      schedule.stop();
    }
  };
  if (!plan.parallel) {
    while (auto b = schedule.next()) {
      account(run_boot(*b));
      schedule.finished(*b);
    }
  } else {
    std::vector<std::thread> threads;
    std::unique_lock lock(schedule_mutex);
    while (!schedule.done()) {
      while (auto b = schedule.next()) {
        for (size_t r : schedule.running())
          if (r != *b) overlapped[r].insert(*b), overlapped[*b].insert(r);
        threads.emplace_back([&, b = *b] {
          BootResult r;
          std::exception_ptr error;
          try {
            r = run_boot(b);
          } catch (...) {
            error = std::current_exception();
          }
          std::lock_guard done(schedule_mutex);
          account(r);
          if (error) {
            if (!boot_error) boot_error = error;
            schedule.stop();
          }
          schedule.finished(b);
          boot_ended.notify_all();
        });
      }
      if (!schedule.done()) boot_ended.wait(lock);
    }
    lock.unlock();
    for (auto& t : threads) t.join();
  }
  if (summary.interrupted)
    writer->record_interrupt(interrupted_at.empty() ? utc_now() : interrupted_at,
                             {{"signal", vm::interrupt_signal()}, {"cells", interrupted_cells}});
  if (boot_error) std::rethrow_exception(boot_error);
  if (!summary.interrupted) writer->update_manifest({{"finished", utc_now()}});
  return summary;
}

}  // namespace smtlab::run
