#pragma once
// Host side: turns the bytes a guest wrote to its results port into records, defensively.
// Any chunking; never throws on guest data; every anomaly becomes a Problem and parsing goes on.
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "protocol/record.hpp"

namespace smtlab::protocol {

struct Record {
  uint64_t seq = 0;
  std::string type;
  nlohmann::json body;  // the whole object, seq and type included
  uint64_t line = 0;    // 1-based line number in the stream
};

struct Problem {
  enum class Kind {
    garbage,       // not a JSON object, or no usable seq/type: dropped
    oversized,     // longer than kMaxRecordLine: discarded up to the next newline
    truncated,     // the stream ended inside a line (finish()): dropped
    missing,       // seqs never seen by finish()
    duplicate,     // a seq seen before: dropped
    out_of_order,  // a seq ahead of the expected one, or a late one filling a gap: kept
    unknown_type,  // kept, reported
    bad_field,     // a known type with a missing or mistyped field: dropped
    after_end,     // a record after "end": kept, reported
    cut,           // the stream went over its cap (vm/guest_output.hpp): the rest was not read
  };
  Kind kind;
  uint64_t line = 0;  // 0 for stream-level problems (missing)
  std::string what;
  std::string str() const;  // "line 12: garbage: ..."
};

const char* to_string(Problem::Kind kind);

struct Parsed {
  std::vector<Record> records;
  std::vector<Problem> problems;
};

class RecordStream {
 public:
  explicit RecordStream(size_t max_line = kMaxRecordLine);
  // Consumes bytes; returns the records and problems completed by them.
  Parsed feed(std::string_view bytes);
  // The stream is over (guest gone): reports a truncated final line and missing seqs.
  Parsed finish();

  bool ended() const { return end_.has_value(); }           // the last expected "end" arrived
  // A job list of n jobs ends with n "end" records (one per job); records after the n-th are
  // reported as after_end. Default 1.
  void set_expected_ends(size_t n) { expected_ends_ = n < 1 ? 1 : n; }
  size_t ends() const { return ends_; }
  const std::optional<Record>& end_record() const { return end_; }
  uint64_t lines() const { return line_no_; }
  uint64_t records_accepted() const { return accepted_; }

 private:
  void take_line(std::string_view line, Parsed& out);
  void check_seq(uint64_t seq, uint64_t line, Parsed& out, bool& keep);

  size_t max_line_;
  std::string buffer_;
  bool discarding_ = false;  // inside an oversized line
  uint64_t discarded_bytes_ = 0;
  uint64_t line_no_ = 0;
  uint64_t accepted_ = 0;
  uint64_t expected_ = 0;           // next seq in order
  std::set<uint64_t> gaps_;         // seqs skipped so far (bounded)
  std::optional<Record> end_;
  size_t expected_ends_ = 1, ends_ = 0;
  bool finished_ = false;
};

// Bounds what a hostile guest can make the host record about its stream: the first `limit`
// problems pass, later ones are only counted; summary() then describes what was held back (one
// line per stream instead of one per garbage line, so a guest cannot fill the results disk).
class ProblemBudget {
 public:
  explicit ProblemBudget(size_t limit = 100) : limit_(limit) {}
  bool admit(const Problem& p);                 // true: record it
  std::optional<Problem> summary() const;       // nullopt when nothing was held back
  size_t held_back() const { return held_back_; }

 private:
  size_t limit_;
  size_t admitted_ = 0, held_back_ = 0;
  uint64_t first_line_ = 0;
  std::set<std::string> kinds_;
};

// Checks the fields of a known record type; returns what is wrong, or "" when it is fine.
std::string validate_record(const nlohmann::json& record);

}  // namespace smtlab::protocol
