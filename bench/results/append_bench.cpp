// append_bench: what writing a guest's records into a results directory costs the host loop.
//
//   append_bench [--records N] [--batch B] [--dir DIR]
//
// Creates a results directory (DIR, default a new one under $TMPDIR; it must not exist) with one
// cell and appends N sample records (default 5000) of the size a guest sends (~150 bytes) through
// results::ResultsWriter: with --batch 1 each by append_sample (one open, write, fdatasync and
// close per record: what the runner did before records were batched), with --batch B > 1 in
// RecordBatches of B records (what the runner does per poll of a guest's channel). Prints
// records/s and the CPU time (user + sys) it took, then removes the directory.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <unistd.h>

#include "results/writer.hpp"
#include "util/error.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using namespace smtlab;

namespace {

double cpu_seconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  auto s = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6; };
  return s(ru.ru_utime) + s(ru.ru_stime);
}

long number(const char* text, const char* what) {
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (!end || *end || v < 1) throw Error(std::string(what) + " must be a positive number, not '" + text + "'");
  return v;
}

}  // namespace

int main(int argc, char** argv) try {
  long records = 5000, batch_size = 1;
  fs::path dir = fs::temp_directory_path() / ("append-bench-" + std::to_string(getpid()));
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) throw Error("usage: append_bench [--records N] [--batch B] [--dir DIR]");
    if (a == "--records") records = number(argv[++i], "--records");
    else if (a == "--batch") batch_size = number(argv[++i], "--batch");
    else if (a == "--dir") dir = argv[++i];
    else throw Error("unknown option " + a, "usage: append_bench [--records N] [--batch B] [--dir DIR]");
  }
  json manifest = {{"cells", json::array({{{"id", "c0"}}})}};
  {
    auto writer = results::ResultsWriter::create(dir, manifest);
    results::RecordBatch batch;
    const double cpu0 = cpu_seconds();
    const auto t0 = std::chrono::steady_clock::now();
    for (long i = 0; i < records; ++i) {
      json rec = {{"vm", 0},          {"seq", i + 3},   {"type", "sample"},   {"benchmark", "kernbench"},
                  {"iteration", i},   {"warmup", false}, {"metric", "elsp-2"}, {"value", 12.34 + i},
                  {"unit", "s"},      {"better", "lower"}};
      if (batch_size == 1) {
        writer.append_sample("c0", rec);
        continue;
      }
      batch.sample("c0", rec);
      if ((i + 1) % batch_size == 0) writer.append(batch);
    }
    writer.append(batch);
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double cpu = cpu_seconds() - cpu0;
    std::printf("records %ld batch %ld: %.3f s wall, %.0f records/s, CPU %.3f s (%.1f us/record)\n", records,
                batch_size, wall, static_cast<double>(records) / wall, cpu, 1e6 * cpu / static_cast<double>(records));
  }
  fs::remove_all(dir);
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "append_bench: %s\n", e.what());
  return 1;
}
