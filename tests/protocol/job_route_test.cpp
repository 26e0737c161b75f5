#include <catch2/catch.hpp>

#include "protocol/job_route.hpp"
#include "protocol/record.hpp"
#include "protocol/record_stream.hpp"

using namespace smtlab::protocol;
using nlohmann::json;

namespace {

// Parses lines as the host does, so that the records are what the router really sees.
std::vector<Record> records(const std::vector<std::string>& lines) {
  RecordStream s;
  s.set_expected_ends(2);
  std::string bytes;
  for (const auto& l : lines) bytes += l;
  auto p = s.feed(bytes);
  return p.records;
}

}  // namespace

TEST_CASE("records of a job list go to the cell they name, unnamed ones to the current job") {
  JobRouter router({"aaaaaaaaaaaa", "bbbbbbbbbbbb"});
  std::vector<std::string> lines;
  RecordWriter out([&](std::string_view l) { lines.emplace_back(l); });
  out.write("hello", {{"agent", "x"}, {"kernel", "6.12"}});
  out.set_context({{"cell", "aaaaaaaaaaaa"}, {"job", 0}});
  out.write("sample", {{"benchmark", "chat"}, {"iteration", 1}, {"metric", "msgs/s"}, {"value", 1.0}});
  out.end(true, 0);
  out.set_context({{"cell", "bbbbbbbbbbbb"}, {"job", 1}});
  out.event("between-jobs", json::object());
  out.write("sample", {{"benchmark", "exec"}, {"iteration", 1}, {"metric", "elapsed-s"}, {"value", 2.0}});
  out.end(false, 1);
  out.set_context(json::object());
  out.error("no cell", false);
  auto recs = records(lines);
  REQUIRE(recs.size() == 7);
  std::vector<int> routed;
  for (const auto& r : recs) routed.push_back(router.route(r));
  CHECK(routed == std::vector<int>{0, 0, 0, 1, 1, 1, 1});
  // The writer's context is in the record itself: each says its cell and job.
  CHECK(recs[1].body["cell"] == "aaaaaaaaaaaa");
  CHECK(recs[1].body["job"] == 0);
  CHECK(recs[4].body["cell"] == "bbbbbbbbbbbb");
  CHECK(recs[4].body["value"] == 2.0);
  CHECK_FALSE(recs[6].body.contains("cell"));
}

TEST_CASE("a record naming a foreign cell, a wrong job index or an earlier job is not routed") {
  auto rec = [](json body) {
    Record r;
    r.type = "sample";
    r.body = std::move(body);
    return r;
  };
  JobRouter router({"aaaaaaaaaaaa", "bbbbbbbbbbbb"});
  std::string why;
  CHECK(router.route(rec({{"cell", "cccccccccccc"}}), &why) == -1);
  CHECK(why == "names cell \"cccccccccccc\", which is not one of this boot's 2 cells");
  CHECK(router.route(rec({{"cell", 7}}), &why) == -1);
  CHECK(why == "field \"cell\" is not a string");
  CHECK(router.route(rec({{"cell", "bbbbbbbbbbbb"}, {"job", 0}}), &why) == -1);
  CHECK(why == "field \"job\" 0 disagrees with cell bbbbbbbbbbbb (job 1)");
  CHECK(router.current() == 0);
  CHECK(router.route(rec({{"cell", "bbbbbbbbbbbb"}, {"job", 1}})) == 1);
  CHECK(router.current() == 1);
  CHECK(router.route(rec({{"cell", "aaaaaaaaaaaa"}}), &why) == -1);
  CHECK(why == "belongs to job 0 (cell aaaaaaaaaaaa) but job 1 already started");
  CHECK(router.route(rec({{"metric", "x"}})) == 1);  // no cell: the current job
}

TEST_CASE("a stream that expects two ends takes records between them and flags those after the second") {
  RecordStream s;
  s.set_expected_ends(2);
  std::string bytes = encode_record(0, "end", {{"status", "ok"}, {"exit_code", 0}}) +
                      encode_record(1, "event", {{"name", "job-start"}, {"detail", json::object()}});
  auto p = s.feed(bytes);
  CHECK(p.problems.empty());
  CHECK_FALSE(s.ended());
  p = s.feed(encode_record(2, "end", {{"status", "failed"}, {"exit_code", 1}}));
  CHECK(p.problems.empty());
  CHECK(s.ended());
  CHECK(s.ends() == 2);
  p = s.feed(encode_record(3, "event", {{"name", "late"}, {"detail", json::object()}}));
  REQUIRE(p.problems.size() == 1);
  CHECK(p.problems[0].kind == Problem::Kind::after_end);
}
