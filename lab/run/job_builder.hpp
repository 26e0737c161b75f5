#pragma once
// What each guest of a cell is told to do (/job.json) and how its kernel is started.
#include <string>
#include <vector>

#include "plan/plan.hpp"
#include "protocol/job.hpp"
#include "recipe/recipe.hpp"

namespace smtlab::run {

// The role of VM `vm` of the cell's topology (recipe roles, else: VM 0 benchmark, others noise).
recipe::VmRole vm_role(const recipe::Topology& topology, int vm);

// The job for VM `vm`: the cell's benchmark for benchmark VMs, a CPU hog for noise VMs.
protocol::Job make_job(const plan::Cell& cell, const recipe::Monitors& monitors, int vm);

// An exec job (smtlab boot -- CMD): runs argv in the guest and streams its output.
protocol::Job make_exec_job(const plan::Cell& cell, int vm, const std::vector<std::string>& argv);

// The kernel command line words, in order: smtlab's (console, panic, root disk, and
// `cryptomgr.notests`), then the kernel definition's, the variant's and the topology's extras (so
// that e.g. a topology's `nosmt` is last, and `cryptomgr.notests=0` in a recipe wins).
// `cryptomgr.notests` skips the crypto self-tests that run as each algorithm registers: they
// cost the Debian kernels 0.36-0.49 s of every boot under TCG (BENCHMARKS.md) and do not touch what
// the benchmarks measure. The cells' manifest entries record the whole line (kernel_cmdline).
std::vector<std::string> kernel_cmdline(const plan::Cell& cell);
// The same, joined with spaces.
std::string kernel_cmdline_text(const plan::Cell& cell);

}  // namespace smtlab::run
