#include <catch2/catch.hpp>

#include <random>

#include "protocol/record.hpp"
#include "protocol/record_stream.hpp"

using namespace smtlab::protocol;
using nlohmann::json;

namespace {

std::string rec(uint64_t seq, const std::string& type, json fields = json::object()) {
  return encode_record(seq, type, fields);
}

std::string sample(uint64_t seq, double value) {
  return rec(seq, "sample",
             {{"benchmark", "kernbench"}, {"iteration", 1}, {"warmup", false}, {"metric", "elsp-2"},
              {"value", value}, {"unit", "s"}, {"better", "lower"}});
}

struct All {
  std::vector<Record> records;
  std::vector<Problem> problems;
  void add(Parsed p) {
    for (auto& r : p.records) records.push_back(r);
    for (auto& q : p.problems) problems.push_back(q);
  }
  size_t count(Problem::Kind k) const {
    return std::count_if(problems.begin(), problems.end(), [&](auto& p) { return p.kind == k; });
  }
};

All parse_all(const std::string& text, size_t chunk) {
  RecordStream s;
  All all;
  for (size_t i = 0; i < text.size(); i += chunk) all.add(s.feed(std::string_view(text).substr(i, chunk)));
  all.add(s.finish());
  return all;
}

}  // namespace

TEST_CASE("a clean stream parses the same under any chunking") {
  std::string text = rec(0, "hello", {{"agent", "0.1.0"}, {"kernel", "6.12"}, {"pid1", true}}) +
                     sample(1, 12.5) + rec(2, "end", {{"status", "ok"}, {"exit_code", 0}});
  for (size_t chunk : {1, 2, 7, 64, 100000}) {
    All all = parse_all(text, chunk);
    INFO("chunk " << chunk);
    CHECK(all.problems.empty());
    REQUIRE(all.records.size() == 3);
    CHECK(all.records[1].body["value"] == 12.5);
    CHECK(all.records[2].type == "end");
  }
}

TEST_CASE("garbage, oversized, truncated and bad records are reported, never thrown") {
  std::string big = "{\"seq\":3,\"type\":\"output\",\"stream\":\"stdout\",\"line\":\"" + std::string(70000, 'x') + "\"}\n";
  std::string text = rec(0, "hello", {{"agent", "a"}, {"kernel", "k"}}) +
                     "this is not json\n" +                              // garbage
                     std::string("\x00\xff\xfe{[", 5) + "\n" +           // binary garbage
                     "[1,2,3]\n" +                                       // JSON, not an object
                     "{\"type\":\"event\",\"name\":\"x\"}\n" +           // no seq
                     std::string(200, '[') + "\n" +                      // deep nesting
                     rec(1, "sample", {{"benchmark", "k"}, {"iteration", "one"}, {"metric", "m"}, {"value", 1}}) +
                     rec(2, "shiny", {{"x", 1}}) +                        // unknown type: kept
                     big +                                               // oversized
                     sample(4, 1.0) + "{\"seq\":5,\"type\":\"end\",\"sta";  // truncated
  for (size_t chunk : {1, 3, 1000, 1 << 20}) {
    INFO("chunk " << chunk);
    All all = parse_all(text, chunk);
    CHECK(all.count(Problem::Kind::garbage) == 5);
    CHECK(all.count(Problem::Kind::bad_field) == 1);
    CHECK(all.count(Problem::Kind::unknown_type) == 1);
    CHECK(all.count(Problem::Kind::oversized) == 1);
    CHECK(all.count(Problem::Kind::truncated) == 1);
    // The oversized line held seq 3 and the truncated one seq 5: 3 is missing; 5 was never
    // expected (nothing after it).
    CHECK(all.count(Problem::Kind::missing) == 1);
    REQUIRE(all.records.size() == 3);  // hello, shiny, sample 4
    CHECK(all.records[0].type == "hello");
    CHECK(all.records[1].type == "shiny");
    CHECK(all.records[2].seq == 4);
    for (auto& p : all.problems)
      if (p.kind == Problem::Kind::oversized) CHECK(p.line == 9);
  }
}

TEST_CASE("missing, duplicate and out-of-order seqs are reported") {
  std::string text = sample(0, 1) + sample(2, 2) + sample(1, 3) + sample(1, 4) + sample(5, 5) +
                     rec(6, "end", {{"status", "failed"}, {"exit_code", 1}}) + sample(7, 6);
  All all = parse_all(text, 5);
  CHECK(all.count(Problem::Kind::out_of_order) == 3);  // 2 ahead, 1 late, 5 ahead
  CHECK(all.count(Problem::Kind::duplicate) == 1);     // the second seq 1
  CHECK(all.count(Problem::Kind::missing) == 1);       // 3-4
  CHECK(all.count(Problem::Kind::after_end) == 1);
  std::vector<uint64_t> seqs;
  for (auto& r : all.records) seqs.push_back(r.seq);
  CHECK(seqs == std::vector<uint64_t>{0, 2, 1, 5, 6, 7});
  for (auto& p : all.problems)
    if (p.kind == Problem::Kind::missing) CHECK_THAT(p.what, Catch::Contains("3-4"));
}

TEST_CASE("a huge seq cannot wrap the expected seq around to let a duplicate through") {
  std::string text = sample(0, 1) + "{\"seq\":18446744073709551615,\"type\":\"event\",\"name\":\"x\"}\n" + sample(0, 2);
  All all = parse_all(text, 7);
  CHECK(all.records.size() == 1);
  CHECK(all.count(Problem::Kind::garbage) == 1);
  CHECK(all.count(Problem::Kind::duplicate) == 1);
}

TEST_CASE("interleaved writers (two records mixed mid-line) are reported, the rest kept") {
  std::string a = sample(0, 1), b = sample(1, 2), c = sample(2, 3);
  std::string mixed = a.substr(0, 20) + b + a.substr(20);  // b lands inside a
  All all = parse_all(mixed + c, 4);
  CHECK(all.count(Problem::Kind::garbage) == 2);  // both halves of the torn line
  CHECK(all.records.size() == 1);
  CHECK(all.records[0].seq == 2);
  CHECK(all.count(Problem::Kind::missing) == 1);
}

TEST_CASE("random bytes never crash the parser") {
  std::mt19937 rng(42);
  for (int round = 0; round < 50; ++round) {
    std::string text;
    for (int i = 0; i < 5000; ++i) {
      int r = rng() % 10;
      text += r == 0 ? '\n' : r == 1 ? '{' : r == 2 ? '"' : static_cast<char>(rng());
    }
    RecordStream s(256);
    All all;
    for (size_t i = 0; i < text.size(); i += 1 + rng() % 300) all.add(s.feed(std::string_view(text).substr(i, 1 + rng() % 300)));
    all.add(s.finish());
    CHECK_FALSE(all.problems.empty());
  }
}

TEST_CASE("records are single lines with seq and type, and invalid UTF-8 is replaced") {
  std::string line = encode_record(7, "output", {{"stream", "stdout"}, {"line", "a\nb\xff"}, {"seq", 99}});
  REQUIRE(line.back() == '\n');
  CHECK(line.find('\n') == line.size() - 1);
  json j = json::parse(line);
  CHECK(j["seq"] == 7);
  CHECK(j["type"] == "output");
  std::string huge = encode_record(8, "output", {{"line", std::string(kMaxRecordLine, 'y')}});
  CHECK(huge.size() < kMaxRecordLine);
  CHECK(json::parse(huge)["type"] == "error");
}

TEST_CASE("a record writer numbers records in order") {
  std::string out;
  RecordWriter w([&](std::string_view l) { out += l; });
  w.event("iteration-start", {{"iteration", 1}});
  w.error("boom", false);
  w.end(true, 0);
  RecordStream s;
  auto p = s.feed(out);
  CHECK(p.problems.empty());
  REQUIRE(p.records.size() == 3);
  CHECK(s.ended());
  CHECK(s.end_record()->body["status"] == "ok");
}

TEST_CASE("an error record says whether the workload stalled, and a stalled flag that is not a boolean is refused") {
  std::string out;
  RecordWriter w([&](std::string_view l) { out += l; });
  w.error("chat client: the run stalled", true, true);
  w.error("boom", true);
  out += rec(2, "error", {{"message", "forged"}, {"stalled", "yes"}});
  All all = parse_all(out, 7);
  CHECK(all.count(Problem::Kind::bad_field) == 1);
  REQUIRE(all.records.size() == 2);
  CHECK(all.records[0].body["stalled"] == true);
  CHECK_FALSE(all.records[1].body.contains("stalled"));  // only a stall says so
}

TEST_CASE("a problem budget passes the first problems and sums up the rest in one line") {
  RecordStream stream;
  std::string garbage;
  for (int i = 0; i < 1000; ++i) garbage += "junk " + std::to_string(i) + "\n";
  garbage += "{\"seq\":0,\"type\":\"hello\",\"agent\":\"a\",\"kernel\":\"k\"}\n";
  garbage += "{\"seq\":0,\"type\":\"hello\",\"agent\":\"a\",\"kernel\":\"k\"}\n";
  auto parsed = stream.feed(garbage);
  REQUIRE(parsed.problems.size() == 1001);
  CHECK(parsed.records.size() == 1);  // the legit record is still used
  ProblemBudget budget(100);
  size_t admitted = 0;
  for (const auto& p : parsed.problems) admitted += budget.admit(p);
  CHECK(admitted == 100);
  CHECK(budget.held_back() == 901);
  auto summary = budget.summary();
  REQUIRE(summary);
  CHECK(summary->str() == "garbage: 901 more problem(s) (duplicate, garbage) from line 101 on not reported one by one "
                          "(only the first 100 are)");
  ProblemBudget quiet(100);
  CHECK(quiet.admit(parsed.problems.front()));
  CHECK_FALSE(quiet.summary());
}

namespace {
// One record through a stream: its problems' kinds, or "ok" when it was kept without any.
std::string verdict(const std::string& line) {
  All all = parse_all(line, 1 << 20);
  if (all.problems.empty() && all.records.size() == 1) return "ok";
  std::string out;
  for (auto& p : all.problems) out += (out.empty() ? "" : " ") + std::string(to_string(p.kind));
  return out;
}

json cpu_entry(json cpu, json core_id, json siblings) {
  return {{"cpu", cpu}, {"core_id", core_id}, {"package_id", 0}, {"die_id", 0}, {"siblings", siblings}};
}

std::string topology(std::vector<json> cpus, json smt_active = 1) {
  return rec(0, "topology", {{"online", "0-1"}, {"smt_active", smt_active}, {"cpus", json(cpus)}});
}
}  // namespace

TEST_CASE("a topology record's siblings are a string or null, its ids integers or null") {
  // What the agent sends when a CPU's topology files cannot be read (lab/bench/topology.cpp).
  CHECK(verdict(topology({cpu_entry(0, nullptr, nullptr), cpu_entry(1, 0, "0-1")}, nullptr)) == "ok");
  CHECK(verdict(topology({json{{"cpu", 0}}})) == "ok");  // absent reads as null
  CHECK(verdict(topology({cpu_entry(0, 0, 7)})) == "bad-field");
  CHECK(verdict(topology({cpu_entry(0, 0, json::array({0, 1}))})) == "bad-field");
  CHECK(verdict(topology({cpu_entry(0, "0", "0-1")})) == "bad-field");
  CHECK(verdict(topology({cpu_entry(0, 1.5, "0-1")})) == "bad-field");
  json no_package = cpu_entry(0, 0, "0-1");
  no_package["package_id"] = true;
  CHECK(verdict(topology({no_package})) == "bad-field");
  json die = cpu_entry(0, 0, "0-1");
  die["die_id"] = json::object();
  CHECK(verdict(topology({die})) == "bad-field");
}

TEST_CASE("integers the host reads as int are refused out of range, not truncated") {
  // exit_code: int's range.
  CHECK(verdict(rec(0, "end", {{"status", "failed"}, {"exit_code", 2147483647}})) == "ok");
  CHECK(verdict(rec(0, "end", {{"status", "failed"}, {"exit_code", -2147483647 - 1}})) == "ok");
  CHECK(verdict(rec(0, "end", {{"status", "failed"}, {"exit_code", 2147483648LL}})) == "bad-field");
  CHECK(verdict(rec(0, "end", {{"status", "ok"}, {"exit_code", 4294967296LL}})) == "bad-field");  // get<int>: 0
  CHECK(verdict(rec(0, "end", {{"status", "failed"}, {"exit_code", -2147483649LL}})) == "bad-field");
  CHECK(verdict(rec(0, "end", {{"status", "ok"}, {"exit_code", UINT64_MAX}})) == "bad-field");
  // smt_active: 0, 1 or null.
  for (json ok : {json(0), json(1), json(nullptr)}) CHECK(verdict(topology({cpu_entry(0, 0, "0-1")}, ok)) == "ok");
  for (json bad : {json(2), json(-1), json(4294967297LL), json(1.0)})
    CHECK(verdict(topology({cpu_entry(0, 0, "0-1")}, bad)) == "bad-field");
  // CPU numbers: 0-4095, as a CPU list's; the other ids within int's range.
  CHECK(verdict(topology({cpu_entry(4095, 0, "0-1")})) == "ok");
  CHECK(verdict(topology({cpu_entry(4096, 0, "0-1")})) == "bad-field");
  CHECK(verdict(topology({cpu_entry(-1, 0, "0-1")})) == "bad-field");
  CHECK(verdict(topology({cpu_entry(4294967296LL, 0, "0-1")})) == "bad-field");  // get<int>: 0
  CHECK(verdict(topology({cpu_entry(0, -1, "0-1")})) == "ok");
  CHECK(verdict(topology({cpu_entry(0, 4294967296LL, "0-1")})) == "bad-field");
  std::vector<json> many;
  for (int i = 0; i < 4097; ++i) many.push_back({{"cpu", i % 4096}});
  CHECK(verdict(topology(many)) == "bad-field");
}

TEST_CASE("a sample the results loader would drop or alter is refused when it arrives") {
  auto sample_with = [](json iteration, std::string metric) {
    return rec(0, "sample", {{"benchmark", "kernbench"}, {"iteration", iteration}, {"warmup", false},
                             {"metric", metric}, {"value", 1.5}, {"unit", "s"}, {"better", "lower"}});
  };
  CHECK(verdict(sample_with(0, "elsp-2")) == "ok");  // a warm-up
  CHECK(verdict(sample_with(1000000, std::string(128, 'm'))) == "ok");
  CHECK(verdict(sample_with(-1, "elsp-2")) == "bad-field");
  CHECK(verdict(sample_with(1000001, "elsp-2")) == "bad-field");
  CHECK(verdict(sample_with(4294967297LL, "elsp-2")) == "bad-field");  // get<int>: 1
  CHECK(verdict(sample_with(1, "")) == "bad-field");
  CHECK(verdict(sample_with(1, std::string(129, 'm'))) == "bad-field");
}

TEST_CASE("a record with a key twice in one object is refused, not read as its last value") {
  const std::string head = "{\"seq\":0,\"type\":\"sample\",\"benchmark\":\"k\",\"iteration\":1,\"metric\":\"m\",";
  CHECK(verdict(head + "\"value\":1}\n") == "ok");
  CHECK(verdict(head + "\"value\":1,\"value\":99}\n") == "garbage");
  CHECK(verdict(head + "\"metric\":\"other\",\"value\":1}\n") == "garbage");
  CHECK(verdict("{\"seq\":0,\"seq\":1,\"type\":\"event\",\"name\":\"x\"}\n") == "garbage");
  // In a nested object too; the same key in different objects is fine.
  CHECK(verdict("{\"seq\":0,\"type\":\"event\",\"name\":\"x\",\"detail\":{\"a\":1,\"b\":{\"a\":2}}}\n") == "ok");
  CHECK(verdict("{\"seq\":0,\"type\":\"event\",\"name\":\"x\",\"detail\":{\"a\":1,\"b\":{\"a\":2,\"a\":3}}}\n") ==
        "garbage");
  CHECK(verdict("{\"seq\":0,\"type\":\"event\",\"name\":\"x\",\"detail\":{\"l\":[{\"a\":1},{\"a\":2}]}}\n") == "ok");
  All all = parse_all(head + "\"value\":1,\"value\":99}\n", 3);
  REQUIRE(all.problems.size() == 1);
  CHECK_THAT(all.problems[0].what, Catch::Contains("\"value\" appears twice"));
  // The existing limits still come first: nesting, then size.
  CHECK(verdict("{\"seq\":0,\"type\":\"event\",\"name\":\"x\",\"detail\":" + std::string(40, '[') +
                std::string(40, ']') + "}\n") == "garbage");
}
