// What a run prints while it runs: each iteration's headline sample with the iteration it ends.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "run/progress.hpp"
#include "util/log.hpp"

using namespace smtlab::run;

namespace {

// A Progress's output, as text.
class Captured {
 public:
  Captured() : file_(open_memstream(&buffer_, &size_)) { REQUIRE(file_ != nullptr); }
  Captured(const Captured&) = delete;
  Captured& operator=(const Captured&) = delete;
  ~Captured() {
    if (file_) std::fclose(file_);
    std::free(buffer_);
  }
  std::FILE* file() { return file_; }
  std::string text() {
    std::fflush(file_);
    return std::string(buffer_, size_);
  }

 private:
  char* buffer_ = nullptr;
  size_t size_ = 0;
  std::FILE* file_;
};

}  // namespace

TEST_CASE("sample_text: the metric, its value to two decimals, and the unit unless it repeats the metric") {
  CHECK(sample_text("elsp-2", 10.960160486, "s") == "elsp-2 10.96 s");
  CHECK(sample_text("msgs/s", 3396.1004697, "msgs/s") == "msgs/s 3396.10");
  CHECK(sample_text("time", 0.5, "") == "time 0.50");
  // The guest's strings reach the terminal: no escape sequences, bounded.
  CHECK(sample_text("elsp\x1b[2J", 1, "s\x07") == "elsp?[2J 1.00 s?");
  CHECK(sample_text(std::string(200, 'm'), 1, "s").size() == 64 + 7);
}

TEST_CASE("progress in a log: each iteration's headline on a line with its cell and iteration") {
  Captured out;
  Progress p(9, false, out.file());
  p.start_cell(1, "cfs smt kernbench");
  p.iteration(1, "-j2 iteration 1");
  p.measured(1, "elsp-2 10.96 s");
  p.iteration(1, "-j2 iteration 2");
  p.measured(1, "elsp-2 11.40 s");
  CHECK(out.text() ==
        "smtlab: cell 1/9 cfs smt kernbench: starting\n"
        "smtlab: cell 1/9: -j2 iteration 1\n"
        "smtlab: cell 1/9: -j2 iteration 1: elsp-2 10.96 s\n"
        "smtlab: cell 1/9: -j2 iteration 2\n"
        "smtlab: cell 1/9: -j2 iteration 2: elsp-2 11.40 s\n");
}

TEST_CASE("progress on a terminal: the headline stays as a line above the live line") {
  Captured out;
  Progress p(2, true, out.file());
  p.start_cell(2, "eevdf smt chat");
  p.iteration(2, "iteration 3");
  p.measured(2, "msgs/s 5542.88");
  const std::string text = out.text();
  // The live line is cleared, the headline written with its newline, then the live line redrawn.
  const std::string line = "\r\033[Ksmtlab: cell 2/2: iteration 3: msgs/s 5542.88\n";
  const auto at = text.find(line);
  REQUIRE(at != std::string::npos);
  CHECK(text.find("\r\033[K[cell 2/2] eevdf smt chat  iteration 3", at + line.size()) != std::string::npos);
}

TEST_CASE("progress on a terminal: smtlab's notes go above the live line while it exists, not into it") {
  Captured out;
  {
    Progress p(9, true, out.file());
    p.start_cell(1, "cfs smt kernbench");
    p.iteration(1, "-j2 iteration 1");
    smtlab::note("boot attempt 1 failed before the agent was ready; booted again");
    const std::string text = out.text();
    const std::string line = "\r\033[Ksmtlab: boot attempt 1 failed before the agent was ready; booted again\n";
    const auto at = text.find(line);
    REQUIRE(at != std::string::npos);
    CHECK(text.find("\r\033[K[cell 1/9] cfs smt kernbench  -j2 iteration 1", at + line.size()) != std::string::npos);
  }
  // Gone with it: notes are stderr's again.
  const auto before = out.text().size();
  smtlab::note("a note after the run");
  CHECK(out.text().size() == before);
}

TEST_CASE("progress on a terminal: a cell's end line and the lines that go with it come together, then the live line") {
  Captured out;
  Progress p(9, true, out.file());
  p.start_cell(1, "cfs smt kernbench");
  p.start_cell(2, "eevdf nosmt chat");  // boots in parallel: the live line stays for cell 2
  p.end_cell(1, "FAILED", "VM 0 reported failure", 1, "  disturbed: VM 0: kernel stall\n  console tail:\nlast line\n");
  const std::string text = out.text();
  const auto at = text.find("smtlab: cell 1/9 cfs smt kernbench: FAILED in 0:00 (VM 0 reported failure)\n"
                            "  disturbed: VM 0: kernel stall\n  console tail:\nlast line\n\r\033[K[cell 2/9] eevdf nosmt chat");
  CHECK(at != std::string::npos);
}
