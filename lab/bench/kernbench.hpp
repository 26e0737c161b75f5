#pragma once
// kernbench with mmtests' semantics: an untimed set-up once (configure), an optional warm-up
// build, then for each job count N and each iteration: `make clean` (untimed) and a timed
// `make -jN TARGET`, measured with wait4(): samples elsp-N, user-N, syst-N (s), vcsw-N, icsw-N.
#include <string>
#include <vector>

#include "bench/observer.hpp"

namespace smtlab::bench {

struct KernbenchOptions {
  std::vector<int> jobs{2};
  int iterations = 3;
  bool warmup = true;
  std::string tree = "synthetic";  // synthetic | linux-source
  int files = 24;                  // synthetic: translation units
  std::string config = "defconfig";  // linux-source: configure target
  std::string target;              // "" -> "all" (synthetic) / "vmlinux" (linux-source)
  std::string workdir = "/tmp/smtlab-kernbench";  // on tmpfs in the guest; emptied first
  std::string tarball;             // linux-source: "" -> /usr/src/linux-source-*.tar.xz
  bool coresched = false;          // each timed make gets a new core-sched cookie
  double timeout_s = 0;            // per make; 0: none
  bool keep_workdir = false;       // false: the work directory is removed after the last build
};

// Prepares the tree (untimed) and returns its directory.
std::string kernbench_setup(const KernbenchOptions& options, Observer& observer);

// Set-up, warm-up and the measured builds. Throws smtlab::Error when a build fails.
void run_kernbench(const KernbenchOptions& options, Observer& observer);

// Writes a synthetic C project (files translation units of a few hundred lines each that
// gcc -O2 has real work on, a main.c and a Makefile with targets all and clean) into dir.
void write_synthetic_tree(const std::string& dir, int files);

}  // namespace smtlab::bench
