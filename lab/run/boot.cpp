#include "run/boot.hpp"

#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "cache/cache.hpp"
#include "plan/plan.hpp"
#include "run/artifacts.hpp"
#include "run/guest_session.hpp"
#include "run/job_builder.hpp"
#include "util/error.hpp"
#include "util/files.hpp"
#include "util/log.hpp"
#include "util/paths.hpp"
#include "util/utf8.hpp"
#include "vm/connection.hpp"
#include "vm/guest_output.hpp"
#include "vm/interrupt.hpp"

namespace smtlab::run {
namespace {

class PrintingObserver : public GuestObserver {
 public:
  explicit PrintingObserver(int vms) : vms_(vms) {}
  void on_record(int vm, int /*job*/, const protocol::Record& r) override {
    const auto& b = r.body;
    std::string prefix = vms_ > 1 ? fmt::format("[vm{}] ", vm) : "";
    if (r.type == "output") {
      auto line = b.value("line", std::string());
      FILE* to = b.value("stream", std::string()) == "stderr" ? stderr : stdout;
      fmt::print(to, "{}{}\n", prefix, line);
      std::fflush(to);
    } else if (r.type == "hello") {
      note(fmt::format("{}agent ready: kernel {}, guest uptime {:.1f} s", prefix,
                       printable_line(b.value("kernel", std::string("?")), 128), b.value("uptime_s", 0.0)));
    } else if (r.type == "topology") {
      note(prefix + describe_topology(b));
    } else if (r.type == "error") {
      note(fmt::format("{}guest error: {}", prefix, printable_text(b.value("message", std::string()))));
    }
  }
  void on_problem(int vm, const protocol::Problem& p) override {
    note(fmt::format("[vm{}] results stream: {}", vm, p.str()));
  }

 private:
  int vms_;
};

// `smtlab boot`'s consoles, streams and work files: <cache>/boot/<cell>.<pid> while it runs
// (`smtlab cache gc` removes it once that process is gone); kept, renamed to <cell>-<pid>, when
// asked (--keep) or when the boot failed; removed otherwise, on every path.
class BootDir {
 public:
  explicit BootDir(const std::string& cell_id)
      : cell_id_(cell_id), dir_(cache_dir() / "boot" / cache::process_dir_name(cell_id)) {}
  const std::filesystem::path& path() const { return dir_.path(); }

  // Renames it for keeping and says where it is.
  void keep() {
    auto kept = path().parent_path() / (cell_id_ + "-" + std::to_string(::getpid()));
    std::error_code ec;
    std::filesystem::remove_all(kept, ec);
    std::filesystem::rename(path(), kept, ec);
    dir_.release();
    note("console logs and streams kept in " + (ec ? path() : kept).string());
  }

 private:
  std::string cell_id_;
  ScopedDirectory dir_;
};

}  // namespace

std::string describe_topology(const nlohmann::json& b) {
  const nlohmann::json* cpus = b.is_object() && b.contains("cpus") && b["cpus"].is_array() ? &b["cpus"] : nullptr;
  // The distinct sibling lists in the order they come, at most kShown of them (guest data: its
  // record may list thousands); "?" for a CPU whose list the agent could not read (null).
  constexpr size_t kShown = 16;
  std::vector<std::string> groups;
  bool more = false;
  if (cpus)
    for (const auto& c : *cpus) {
      const auto it = c.find("siblings");  // end() for a non-object too
      const std::string s =
          it != c.end() && it->is_string() ? printable_line(it->get_ref<const std::string&>(), 64) : "?";
      if (std::find(groups.begin(), groups.end(), s) != groups.end()) continue;
      if (groups.size() < kShown) groups.push_back(s);
      else more = true;
    }
  std::string siblings;
  for (const auto& g : groups) siblings += " " + g + " ";
  if (more) siblings += " ... ";
  const auto smt_it = b.is_object() ? b.find("smt_active") : b.end();
  const std::string smt = smt_it != b.end() && smt_it->is_number_integer() ? (*smt_it != 0 ? "active" : "inactive")
                                                                           : "unknown";
  return fmt::format("guest topology: {} CPUs online, sibling groups [{}], SMT {}", cpus ? cpus->size() : 0,
                     siblings, smt);
}

int boot_cell(const recipe::Recipe& recipe, const BootOptions& options) {
  plan::PlanOptions po;
  po.filters = options.cell;
  auto plan = plan::make_plan(recipe, po);
  if (plan.cells.size() != 1) {
    std::string ids;
    for (const auto& c : plan.cells) ids += " " + c.id;
    std::string asked;
    for (const auto& f : options.cell) asked += (asked.empty() ? "" : " ") + f;
    throw Error("--cell " + asked + " selects " + std::to_string(plan.cells.size()) + " cells:" + ids,
                "give a cell id (or a longer prefix of one) from `smtlab plan`");
  }
  const auto& cell = plan.cells[0];
  vm::check_output_caps();
  auto connection = vm::Connection::open(options.connect);
  note(connection->describe());
  cache::Cache cache;
  auto artifacts = prepare_artifacts(recipe, plan, cache);

  BootDir boot_dir(cell.id);
  const auto& dir = boot_dir.path();
  std::vector<std::string> argv = options.argv.empty() ? std::vector<std::string>{"uname", "-r"} : options.argv;
  SessionConfig config;
  config.cell = &cell;
  config.kernel = &artifacts.kernels.at(cell.kernel.name);
  config.image = &artifacts.image;
  for (int vm = 0; vm < cell.topology.vms; ++vm) config.jobs.push_back(make_exec_job(cell, vm, argv));
  config.work_dir = dir / "work";
  config.console_log = [&](int vm) { return dir / ("console-vm" + std::to_string(vm) + ".log"); };
  config.stream_log = [&](int vm) { return dir / ("stream-vm" + std::to_string(vm) + ".jsonl"); };
  config.qemu_log = [&](int vm) { return dir / ("qemu-vm" + std::to_string(vm) + ".log"); };
  config.boot_timeout_s = recipe.timeouts.boot_s;
  config.cell_timeout_s = recipe.timeouts.cell_s;
  config.remote_dir = options.remote_dir;
  note(fmt::format("booting cell {} ({} {} {}, {} VM(s) of {})", cell.id, cell.variant.name, cell.kernel.name,
                   cell.topology.name, cell.topology.vms, cell.topology.shape()));
  PrintingObserver observer(cell.topology.vms);
  SessionOutcome outcome;
  try {
    outcome = run_guests(*connection, config, observer);
  } catch (const vm::Interrupted&) {
    if (options.keep) boot_dir.keep();  // as an interrupt that returns
    throw;
  } catch (...) {
    boot_dir.keep();  // a boot that threw failed too: its consoles and streams say how far it got
    throw;
  }
  for (size_t i = outcome.notes_said; i < outcome.notes.size(); ++i) note(outcome.notes[i]);
  // Each VM's ready time counts from the group's start (all domains are started together).
  for (size_t vm = 0; vm < outcome.ready_s.size(); ++vm)
    note(fmt::format("VM {} agent ready {:.2f} s after domain start", vm, outcome.ready_s[vm]));
  if (outcome.interrupted) {
    note("interrupted; guests torn down");
    if (options.keep) boot_dir.keep();
    return 130;
  }
  if (!outcome.ok) {
    note("failed: " + outcome.error);
    if (!outcome.console_tail.empty()) fmt::print(stderr, "console tail:\n{}\n", outcome.console_tail);
    boot_dir.keep();
    return 1;
  }
  if (options.keep) boot_dir.keep();
  return outcome.exit_codes.empty() || outcome.exit_codes[0] < 0 ? 1 : outcome.exit_codes[0];
}

}  // namespace smtlab::run
