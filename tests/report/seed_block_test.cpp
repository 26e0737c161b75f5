// Seed 000's first (bare-metal) block: samples with exactly the seed's means and stddevs, written
// through ResultsWriter, compared with the 2019 rule, must print the seed's numbers, percentages
// and stars.
#include <catch2/catch.hpp>

#include "fixtures.hpp"
#include "report/compare.hpp"

using namespace smtlab;

namespace {

struct Row {
  int jobs;
  std::vector<double> means, stddevs;  // one per column
};

// Means and stddevs that display as the seed's two-decimal values and whose percentages round
// to the seed's (the seed computed them from unrounded values): each is the middle of the
// interval satisfying both.
const std::vector<Row> kSeed = {
      {2, {200.0749995000, 196.8794016290, 199.9300000000, 196.8900000000, 200.8600000000, 200.8301403741, 199.4700000000, 200.4500691245}, {0.1148860000, 0.0467241362, 0.4349928618, 0.0456097420, 0.2015445098, 0.1480880540, 0.1618399082, 0.0842229266}},
      {4, {115.5637195000, 108.6403372580, 115.1168995900, 108.7207845598, 118.1673406874, 116.9232966021, 115.9205944222, 115.8567034924}, {0.5371440000, 0.3717036480, 0.0208949016, 0.0910459080, 1.1039383488, 0.2388142224, 0.1004996424, 0.2649731352}},
      {8, {84.7192250000, 110.7703866875, 84.1923649219, 111.0318901619, 84.7788822094, 84.6276349069, 89.0907370100, 90.2091333706}, {0.8249995000, 0.2503048483, 0.2839648279, 0.2743123337, 0.2999698182, 0.0655874603, 0.0914099446, 0.1882648859}},
      {16, {85.0635750000, 113.6335883319, 85.3332626306, 113.8264114431, 85.9487446794, 85.7281620319, 90.2010808756, 90.4629294169}, {0.0683900000, 0.3249961190, 0.4123438270, 0.1891257060, 0.2183555920, 0.2109899890, 0.3132945900, 0.0906099110}},
};

const char* kColumns[][2] = {{"v", "BM-HT"},  {"v", "BM-noHT"},         {"BM", "HT"},         {"BM", "noHT"},
                             {"BM", "csc-HT"}, {"BM", "csc_stallfix-HT"}, {"BM", "csc_tim-HT"}, {"BM", "csc_vruntime-HT"}};

const char* kExpected =
    "kernbench\n"
    "                                       v                      v                     BM                     BM                     BM                     BM                     BM                     BM\n"
    "                                   BM-HT                BM-noHT                     HT                   noHT                 csc-HT        csc_stallfix-HT             csc_tim-HT        csc_vruntime-HT\n"
    "Amean     elsp-2       200.07 (   0.00%)      196.88 *   1.60%*      199.93 (   0.07%)      196.89 *   1.59%*      200.86 *  -0.39%*      200.83 *  -0.38%*      199.47 *   0.30%*      200.45 *  -0.19%*\n"
    "Amean     elsp-4       115.56 (   0.00%)      108.64 *   5.99%*      115.12 (   0.39%)      108.72 *   5.92%*      118.17 *  -2.25%*      116.92 *  -1.18%*      115.92 (  -0.31%)      115.86 (  -0.25%)\n"
    "Amean     elsp-8        84.72 (   0.00%)      110.77 * -30.75%*       84.19 (   0.62%)      111.03 * -31.06%*       84.78 (  -0.07%)       84.63 (   0.11%)       89.09 *  -5.16%*       90.21 *  -6.48%*\n"
    "Amean     elsp-16       85.06 (   0.00%)      113.63 * -33.59%*       85.33 (  -0.32%)      113.83 * -33.81%*       85.95 *  -1.04%*       85.73 *  -0.78%*       90.20 *  -6.04%*       90.46 *  -6.35%*\n"
    "Stddev    elsp-2         0.11 (   0.00%)        0.05 (  59.33%)        0.43 (-278.63%)        0.05 (  60.30%)        0.20 ( -75.43%)        0.15 ( -28.90%)        0.16 ( -40.87%)        0.08 (  26.69%)\n"
    "Stddev    elsp-4         0.54 (   0.00%)        0.37 (  30.80%)        0.02 (  96.11%)        0.09 (  83.05%)        1.10 (-105.52%)        0.24 (  55.54%)        0.10 (  81.29%)        0.26 (  50.67%)\n"
    "Stddev    elsp-8         0.82 (   0.00%)        0.25 (  69.66%)        0.28 (  65.58%)        0.27 (  66.75%)        0.30 (  63.64%)        0.07 (  92.05%)        0.09 (  88.92%)        0.19 (  77.18%)\n"
    "Stddev    elsp-16        0.07 (   0.00%)        0.32 (-375.21%)        0.41 (-502.93%)        0.19 (-176.54%)        0.22 (-219.28%)        0.21 (-208.51%)        0.31 (-358.10%)        0.09 ( -32.49%)\n"
    ;

}  // namespace

TEST_CASE("seed 000 bare-metal block: same numbers, percentages and stars under mmtests-2019") {
  std::vector<fixtures::CellSpec> specs;
  for (auto& c : kColumns) {
    fixtures::CellSpec spec;
    spec.variant = c[0];
    spec.topology = c[1];
    specs.push_back(spec);
  }
  auto dir = fixtures::temp_dir("seed");
  {
    auto w = results::ResultsWriter::create(dir, fixtures::manifest(specs));
    for (size_t col = 0; col < specs.size(); ++col) {
      std::string id = "cell" + std::to_string(col);
      // A warm-up build that must not count.
      w.append_sample(id, fixtures::sample("elsp-2", 999, 0, true));
      for (const auto& row : kSeed) {
        auto values = fixtures::five(row.means[col], row.stddevs[col]);
        for (size_t it = 0; it < values.size(); ++it) {
          w.append_sample(id, fixtures::sample("elsp-" + std::to_string(row.jobs), values[it], int(it) + 1));
          // user/syst rows are recorded too but not shown by default.
          w.append_sample(id, fixtures::sample("user-" + std::to_string(row.jobs), 1000, int(it) + 1));
        }
      }
      w.set_cell_status(id, "ok");
    }
  }
  auto run = results::load_results(dir);
  report::CompareOptions o;
  o.rule.rule = stats::Rule::mmtests_2019;
  o.duration = false;
  std::string text = report::compare({run}, o);
  INFO(text);
  CHECK(text.rfind("significance: mmtests-2019", 0) == 0);
  CHECK(text.find(kExpected) != std::string::npos);
  CHECK(text.find("user-") == std::string::npos);

  // The same data under mmtests' current rule stars far fewer differences (only the HT/noHT
  // gaps of many stddevs stay), and the rule printed changes with it.
  o.rule.rule = stats::Rule::mmtests_2024;
  std::string b = report::compare({run}, o);
  CHECK(b.rfind("significance: mmtests-2024", 0) == 0);
  CHECK(b.find("196.88 *   1.60%*") != std::string::npos);   // 3.19 >> 1.96 x 0.16
  CHECK(b.find("200.45 (  -0.19%)") != std::string::npos);   // starred under 2019, not now: 0.38 < 1.96 x 0.20
  CHECK(b.find("115.92 (  -0.31%)") != std::string::npos);
  std::filesystem::remove_all(dir);
}
