#pragma once
// Results directories built through ResultsWriter for the report tests.
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "results/results.hpp"

namespace fixtures {

std::filesystem::path temp_dir(const std::string& tag);

struct CellSpec {
  std::string variant, topology, benchmark = "kernbench", kind = "kernbench";
  std::string status = "ok", error;
  double bench_s = -1, wall_s = -1;
  int iterations = 5;  // the manifest's: the loader warns about an ok cell with fewer samples
};

nlohmann::json manifest(const std::vector<CellSpec>& cells, const std::string& sha = "0123abcd");

// Samples m + s*z, z = (-2,-1,0,1,2)/sqrt(2.5): mean exactly m, sample stddev exactly s (n = 5).
std::vector<double> five(double m, double s);

nlohmann::json sample(const std::string& metric, double value, int iteration, bool warmup = false,
                      const std::string& better = "lower", const std::string& unit = "s");

// A vmstat record every 10 s with r, cs and the other columns.
nlohmann::json vmstat(double t, double r, double cs, int vm = 0);

// seed 004's shape: chat, mainline vs rsdl (-80 % msgs/s) on "8cpu", and a failed cell "broken";
// rsdl's cell has a host disturbance.
std::filesystem::path chat_run();
// kernbench elsp-2/4/8, variants base and coresched on HT and noHT, vmstat and guest topology.
std::filesystem::path kernbench_run();

}  // namespace fixtures
