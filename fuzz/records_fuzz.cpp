// libFuzzer target: the host-side results-stream parser (smtlab::protocol::RecordStream).
// Input layout: byte 0 picks the line limit, bytes 1..8 seed the chunking, the rest is the stream.
// The stream is parsed twice, once in one feed() and once in pseudo-random chunks (1..~300 bytes,
// including empty feeds), each followed by finish(). Checked:
//  - nothing throws;
//  - every record has a non-empty type, an object body whose seq/type match, and a line number
//    within the lines seen; every problem has a valid kind and a line within the lines seen;
//  - no seq is accepted twice (duplicates are dropped);
//  - records_accepted() counts the records handed out; ended() iff an "end" record was handed out;
//  - the chunking does not matter: same records (seq, type, line) and problems (kind, line).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "protocol/record_stream.hpp"

using smtlab::protocol::Parsed;
using smtlab::protocol::Problem;
using smtlab::protocol::RecordStream;

namespace {

[[noreturn]] void fail(const char* what, const std::string& detail = {}) {
  std::fprintf(stderr, "records_fuzz: invariant broken: %s %s\n", what, detail.c_str());
  std::abort();
}

struct Outcome {
  std::vector<std::tuple<uint64_t, std::string, uint64_t>> records;  // seq, type, line
  std::vector<std::pair<int, uint64_t>> problems;                    // kind, line
  std::vector<std::string> problem_text;
  bool ended = false;
};

void check_and_collect(const RecordStream& rs, Parsed&& p, Outcome& o, std::set<uint64_t>& seqs,
                       bool finishing) {
  for (auto& r : p.records) {
    if (r.type.empty()) fail("record without type");
    if (!r.body.is_object()) fail("record body not an object");
    auto s = r.body.find("seq");
    auto t = r.body.find("type");
    if (s == r.body.end() || !s->is_number_unsigned() || s->get<uint64_t>() != r.seq) fail("body seq != seq");
    if (t == r.body.end() || !t->is_string() || t->get<std::string>() != r.type) fail("body type != type");
    if (r.line == 0 || r.line > rs.lines()) fail("record line out of range", std::to_string(r.line));
    if (!seqs.insert(r.seq).second) fail("seq accepted twice", std::to_string(r.seq));
    if (r.type == "end") o.ended = true;
    o.records.emplace_back(r.seq, r.type, r.line);
  }
  for (auto& pr : p.problems) {
    if (std::strcmp(smtlab::protocol::to_string(pr.kind), "?") == 0) fail("problem with invalid kind");
    if (pr.line > rs.lines()) fail("problem line out of range", std::to_string(pr.line));
    if (pr.what.empty()) fail("problem without text");
    const bool stream_level = pr.kind == Problem::Kind::truncated || pr.kind == Problem::Kind::missing;
    if (stream_level != finishing) fail("problem kind reported at the wrong time", pr.str());
    if ((pr.kind == Problem::Kind::missing) != (pr.line == 0)) fail("line 0 iff missing", pr.str());
    o.problems.emplace_back(static_cast<int>(pr.kind), pr.line);
    o.problem_text.push_back(pr.str());
  }
}

Outcome parse(std::string_view stream, size_t max_line, uint64_t chunk_seed, bool chunked) {
  Outcome o;
  std::set<uint64_t> seqs;
  try {
    RecordStream rs(max_line);
    if (!chunked) {
      check_and_collect(rs, rs.feed(stream), o, seqs, false);
    } else {
      uint64_t x = chunk_seed | 1;
      while (!stream.empty()) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        size_t n = (x % 8 == 0) ? 0 : 1 + (x >> 8) % 300;  // sometimes an empty feed
        n = std::min(n, stream.size());
        check_and_collect(rs, rs.feed(stream.substr(0, n)), o, seqs, false);
        stream.remove_prefix(n);
      }
    }
    check_and_collect(rs, rs.finish(), o, seqs, true);
    // After finish(), more input and another finish() yield nothing.
    Parsed late = rs.feed("{\"seq\":0,\"type\":\"hello\",\"agent\":\"a\",\"kernel\":\"k\"}\n");
    Parsed again = rs.finish();
    if (!late.records.empty() || !late.problems.empty() || !again.records.empty() || !again.problems.empty())
      fail("output after finish()");
    if (rs.records_accepted() != o.records.size()) fail("records_accepted() != records handed out");
    if (rs.ended() != o.ended) fail("ended() disagrees with the records handed out");
    if (rs.ended() && rs.end_record()->type != "end") fail("end_record() is not an end record");
  } catch (const std::exception& e) {
    fail("exception from RecordStream:", e.what());
  } catch (...) {
    fail("non-std exception from RecordStream");
  }
  return o;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 9) return 0;
  // Line limits: mostly small so that short inputs reach the oversized path, sometimes the real one.
  const size_t max_line = data[0] == 255 ? smtlab::protocol::kMaxRecordLine : 8 + data[0] * 2;
  uint64_t seed;
  std::memcpy(&seed, data + 1, sizeof seed);
  std::string_view stream(reinterpret_cast<const char*>(data + 9), size - 9);

  Outcome whole = parse(stream, max_line, seed, false);
  Outcome parts = parse(stream, max_line, seed, true);
  if (whole.records != parts.records || whole.problems != parts.problems) {
    std::string d = "\n whole:";
    for (auto& t : whole.problem_text) d += "\n  " + t;
    d += "\n chunked:";
    for (auto& t : parts.problem_text) d += "\n  " + t;
    fail("the chunking changed the outcome", d);
  }
  return 0;
}
