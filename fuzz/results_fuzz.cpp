// libFuzzer target: reading a results directory back (smtlab::results::load_results).
// A private directory holds a fixed, valid manifest.json with one cell "c0"; the input becomes that
// cell's samples.jsonl, monitor.jsonl and events.jsonl. Checked: no exception but smtlab::Error,
// one cell, and every sample kept obeys the documented rules (non-empty metric of at most 128
// characters, finite value, better = lower|higher); skipped line counts agree.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <string>
#include <typeinfo>

#include "results/loader.hpp"
#include "util/error.hpp"

namespace fs = std::filesystem;

namespace {

fs::path g_root;

void remove_scratch() {
  std::error_code ec;
  if (!g_root.empty()) fs::remove_all(g_root, ec);
}

void put(const fs::path& p, const char* data, size_t size) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(data, static_cast<std::streamsize>(size));
  if (!out) {
    std::fprintf(stderr, "results_fuzz: cannot write %s\n", p.c_str());
    std::abort();
  }
}

void make_scratch() {
  const char* tmp = std::getenv("TMPDIR");
  std::string templ = std::string(tmp && *tmp ? tmp : "/tmp") + "/smtlab-fuzz-results.XXXXXX";
  if (!mkdtemp(templ.data())) {
    std::perror("results_fuzz: mkdtemp");
    std::abort();
  }
  g_root = templ;
  fs::create_directories(g_root / "cells/c0");
  const std::string manifest =
      R"({"schema":1,"smtlab_version":"0.1.0","recipe":{"file":"r.yaml","name":"r","sha256":"abc","text":"name: r\n"},)"
      R"("host":{"cpu_model":"test"},"accel":"tcg","cells":[{"id":"c0","index":0,"variant":"base","kernel":"k",)"
      R"("topology":"HT","benchmark":"kernbench","kind":"kernbench","vms":1,"status":"ok"}]})";
  put(g_root / "manifest.json", manifest.data(), manifest.size());
  std::atexit(remove_scratch);
}

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "results_fuzz: invariant broken: %s\n", what.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (g_root.empty()) make_scratch();
  const char* bytes = reinterpret_cast<const char*>(data);
  for (const char* f : {"samples.jsonl", "monitor.jsonl", "events.jsonl"}) put(g_root / "cells/c0" / f, bytes, size);
  try {
    auto r = smtlab::results::load_results(g_root);
    if (r.cells.size() != 1) fail("cells: " + std::to_string(r.cells.size()));
    const auto& c = r.cells[0];
    if (r.skipped_lines != c.skipped_lines) fail("skipped line counts disagree");
    for (const auto& s : c.samples) {
      if (s.metric.empty() || s.metric.size() > 128) fail("sample metric '" + s.metric + "'");
      if (!std::isfinite(s.value)) fail("sample value not finite");
      if (s.better != "lower" && s.better != "higher") fail("sample better '" + s.better + "'");
    }
  } catch (const smtlab::Error& e) {
    fail(std::string("smtlab::Error on a valid manifest: ") + e.what());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "results_fuzz: unexpected exception %s: %s\n", typeid(e).name(), e.what());
    std::abort();
  }
  return 0;
}
