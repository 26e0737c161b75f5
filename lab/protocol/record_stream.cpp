#include "protocol/record_stream.hpp"

#include <algorithm>
#include <climits>
#include <cmath>

#include "util/cpulist.hpp"

namespace smtlab::protocol {

using nlohmann::json;

namespace {

constexpr size_t kMaxGaps = 100000;
constexpr int kMaxDepth = 32;
// Sequence numbers count records; anything this large is hostile (and seq + 1 must not wrap).
constexpr uint64_t kMaxSeq = uint64_t(1) << 53;
// A sample's bounds, as the results loader has them (lab/results/loader.cpp).
constexpr int64_t kMaxIteration = 1000000;
constexpr size_t kMaxMetricBytes = 128;

std::string preview(std::string_view s) {
  std::string out;
  for (char c : s.substr(0, 60)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  if (s.size() > 60) out += "...";
  return out;
}

// nlohmann's parser is iterative, but deeply nested values are a denial-of-service vector for
// consumers: refuse them before parsing.
bool too_deep(std::string_view s) {
  int depth = 0;
  bool in_string = false, escape = false;
  for (char c : s) {
    if (in_string) {
      if (escape) escape = false;
      else if (c == '\\') escape = true;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    else if (c == '{' || c == '[') {
      if (++depth > kMaxDepth) return true;
    } else if (c == '}' || c == ']') depth--;
  }
  return false;
}

// nlohmann's parser keeps the last of a key repeated within one object ({"value":1,"value":99}),
// silently. This SAX pass (no values built) finds such a key; a record with one is refused. (The
// parser's callback could see the keys too, but parsing with a callback costs ~30 times as much
// for a line of many small objects.)
class RepeatedKeyFinder : public json::json_sax_t {
 public:
  std::optional<std::string> repeated;

  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(json::number_integer_t) override { return true; }
  bool number_unsigned(json::number_unsigned_t) override { return true; }
  bool number_float(json::number_float_t, const json::string_t&) override { return true; }
  bool string(json::string_t&) override { return true; }
  bool binary(json::binary_t&) override { return true; }
  bool start_object(std::size_t) override {
    keys_.emplace_back();
    return true;
  }
  bool key(json::string_t& key) override {
    if (keys_.empty() || keys_.back().insert(key).second) return true;
    repeated = key;
    return false;  // stops the parse
  }
  bool end_object() override {
    if (!keys_.empty()) keys_.pop_back();
    return true;
  }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t, const std::string&, const json::exception&) override { return false; }

 private:
  std::vector<std::set<std::string>> keys_;  // of each object open, innermost last
};

std::optional<std::string> repeated_key(std::string_view line) {
  RepeatedKeyFinder finder;
  if (json::sax_parse(line.begin(), line.end(), &finder)) return std::nullopt;
  return finder.repeated;  // or nullopt: not JSON
}

std::string ranges(const std::set<uint64_t>& s) {
  std::string out;
  int shown = 0;
  for (auto it = s.begin(); it != s.end() && shown < 20; ++shown) {
    uint64_t a = *it, b = a;
    ++it;
    while (it != s.end() && *it == b + 1) b = *it++;
    out += (out.empty() ? "" : ",") + std::to_string(a) + (a == b ? "" : "-" + std::to_string(b));
  }
  if (shown == 20 && s.size() > 20) out += ",...";
  return out;
}

// Field checks: each returns "" or a complaint.
std::string need(const json& r, const char* key, bool (json::*is)() const noexcept, const char* what,
                 bool optional = false) {
  if (!r.contains(key)) return optional ? "" : std::string("missing field \"") + key + "\"";
  if (!(r.at(key).*is)())
    return std::string("field \"") + key + "\" should be " + what + ", got " + r.at(key).type_name();
  return "";
}

// An integer JSON value within [lo, hi] (nlohmann keeps non-negative integers unsigned and
// negative ones signed; get<int>() of either would silently truncate).
bool int_within(const json& v, int64_t lo, int64_t hi) {
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    return hi >= 0 && u <= static_cast<uint64_t>(hi) && static_cast<int64_t>(u) >= lo;
  }
  if (v.is_number_integer()) {
    const int64_t i = v.get<int64_t>();
    return i >= lo && i <= hi;
  }
  return false;
}

}  // namespace

const char* to_string(Problem::Kind k) {
  switch (k) {
    case Problem::Kind::garbage: return "garbage";
    case Problem::Kind::oversized: return "oversized";
    case Problem::Kind::truncated: return "truncated";
    case Problem::Kind::missing: return "missing";
    case Problem::Kind::duplicate: return "duplicate";
    case Problem::Kind::out_of_order: return "out-of-order";
    case Problem::Kind::unknown_type: return "unknown-type";
    case Problem::Kind::bad_field: return "bad-field";
    case Problem::Kind::after_end: return "after-end";
    case Problem::Kind::cut: return "cut";
  }
  return "?";
}

std::string Problem::str() const {
  return (line ? "line " + std::to_string(line) + ": " : std::string()) + to_string(kind) + ": " + what;
}

std::string validate_record(const json& r) {
  const std::string type = r.value("type", "");
  auto first = [](std::initializer_list<std::string> checks) {
    for (auto& c : checks)
      if (!c.empty()) return c;
    return std::string();
  };
  using J = json;
  if (type == "hello")
    return first({need(r, "agent", &J::is_string, "a string"), need(r, "kernel", &J::is_string, "a string"),
                  need(r, "uptime_s", &J::is_number, "a number", true),
                  need(r, "pid1", &J::is_boolean, "a boolean", true)});
  if (type == "topology") {
    auto c = first({need(r, "online", &J::is_string, "a string"), need(r, "cpus", &J::is_array, "a list")});
    if (!c.empty()) return c;
    if (r.contains("smt_active") && !r["smt_active"].is_null() && !int_within(r["smt_active"], 0, 1))
      return "field \"smt_active\" should be 0, 1 or null";
    if (r["cpus"].size() > static_cast<size_t>(kMaxCpus))
      return "cpus[] lists " + std::to_string(r["cpus"].size()) + " CPUs, more than " + std::to_string(kMaxCpus);
    for (auto& cpu : r["cpus"]) {
      if (!cpu.is_object()) return "cpus[] entries should be objects";
      c = need(cpu, "cpu", &J::is_number_integer, "an integer");
      if (!c.empty()) return "cpus[]: " + c;
      if (!int_within(cpu["cpu"], 0, kMaxCpus - 1))
        return "cpus[]: field \"cpu\" should be 0-" + std::to_string(kMaxCpus - 1) + ", got " + cpu["cpu"].dump();
      // What the agent could not read it sends as null (lab/bench/topology.cpp).
      for (const char* key : {"core_id", "package_id", "die_id"}) {
        auto it = cpu.find(key);
        if (it != cpu.end() && !it->is_null() && !int_within(*it, INT_MIN, INT_MAX))
          return std::string("cpus[]: field \"") + key + "\" should be an integer (of int's range) or null";
      }
      auto sib = cpu.find("siblings");
      if (sib != cpu.end() && !sib->is_null() && !sib->is_string())
        return std::string("cpus[]: field \"siblings\" should be a string or null, got ") + sib->type_name();
    }
    return "";
  }
  if (type == "setting")
    return first({need(r, "kind", &J::is_string, "a string"), need(r, "key", &J::is_string, "a string"),
                  need(r, "requested", &J::is_string, "a string", true),
                  need(r, "value", &J::is_string, "a string", true)});
  if (type == "event")
    return first({need(r, "name", &J::is_string, "a string"),
                  need(r, "detail", &J::is_object, "an object", true)});
  if (type == "sample") {
    auto c = first({need(r, "benchmark", &J::is_string, "a string"),
                    need(r, "iteration", &J::is_number_integer, "an integer"),
                    need(r, "warmup", &J::is_boolean, "a boolean", true),
                    need(r, "metric", &J::is_string, "a string"), need(r, "value", &J::is_number, "a number"),
                    need(r, "unit", &J::is_string, "a string", true),
                    need(r, "better", &J::is_string, "a string", true)});
    if (!c.empty()) return c;
    // What the results loader (lab/results/loader.cpp, parse_sample) keeps: a sample it would drop
    // or alter must not be stored as if it were fine.
    if (!int_within(r["iteration"], 0, kMaxIteration))
      return "field \"iteration\" should be 0-" + std::to_string(kMaxIteration) + ", got " + r["iteration"].dump();
    const auto& metric = r["metric"].get_ref<const std::string&>();
    if (metric.empty() || metric.size() > kMaxMetricBytes)
      return "field \"metric\" should be 1-" + std::to_string(kMaxMetricBytes) + " bytes long, got " +
             std::to_string(metric.size());
    if (!std::isfinite(r["value"].get<double>())) return "field \"value\" should be finite";
    if (r.contains("better") && r["better"] != "lower" && r["better"] != "higher")
      return "field \"better\" should be \"lower\" or \"higher\"";
    return "";
  }
  if (type == "monitor")
    return first({need(r, "monitor", &J::is_string, "a string"), need(r, "t", &J::is_number, "a number", true),
                  need(r, "values", &J::is_object, "an object", true)});
  if (type == "output")
    return first({need(r, "stream", &J::is_string, "a string"), need(r, "line", &J::is_string, "a string")});
  if (type == "error")
    return first({need(r, "message", &J::is_string, "a string"),
                  need(r, "fatal", &J::is_boolean, "a boolean", true),
                  need(r, "stalled", &J::is_boolean, "a boolean", true)});
  if (type == "end") {
    auto c = first({need(r, "status", &J::is_string, "a string"),
                    need(r, "exit_code", &J::is_number_integer, "an integer", true)});
    if (!c.empty()) return c;
    if (r.contains("exit_code") && !int_within(r["exit_code"], INT_MIN, INT_MAX))
      return "field \"exit_code\" should be within int's range, got " + r["exit_code"].dump();
    if (r["status"] != "ok" && r["status"] != "failed") return "field \"status\" should be \"ok\" or \"failed\"";
    return "";
  }
  return "";
}

RecordStream::RecordStream(size_t max_line) : max_line_(std::max<size_t>(max_line, 16)) {}

Parsed RecordStream::feed(std::string_view bytes) {
  Parsed out;
  if (finished_) return out;
  while (!bytes.empty()) {
    auto nl = bytes.find('\n');
    std::string_view chunk = bytes.substr(0, nl);
    if (discarding_) {
      discarded_bytes_ += chunk.size();
      if (nl == std::string_view::npos) return out;
      ++line_no_;
      out.problems.push_back({Problem::Kind::oversized, line_no_,
                              "line of " + std::to_string(discarded_bytes_ + 1) + " bytes exceeds the " +
                                  std::to_string(max_line_) + "-byte limit; discarded"});
      discarding_ = false;
      discarded_bytes_ = 0;
    } else if (buffer_.size() + chunk.size() + 1 > max_line_) {
      // Too long, with or without its newline yet: drop what we have and skip to the newline.
      discarded_bytes_ = buffer_.size() + chunk.size();
      buffer_.clear();
      if (nl == std::string_view::npos) {
        discarding_ = true;
        return out;
      }
      ++line_no_;
      out.problems.push_back({Problem::Kind::oversized, line_no_,
                              "line of " + std::to_string(discarded_bytes_ + 1) + " bytes exceeds the " +
                                  std::to_string(max_line_) + "-byte limit; discarded"});
      discarded_bytes_ = 0;
    } else if (nl == std::string_view::npos) {
      buffer_.append(chunk);
      return out;
    } else {
      ++line_no_;
      if (buffer_.empty()) {
        take_line(chunk, out);
      } else {
        buffer_.append(chunk);
        std::string line;
        line.swap(buffer_);
        take_line(line, out);
      }
    }
    bytes.remove_prefix(nl + 1);
  }
  return out;
}

Parsed RecordStream::finish() {
  Parsed out;
  if (finished_) return out;
  finished_ = true;
  if (discarding_ || !buffer_.empty()) {
    ++line_no_;
    out.problems.push_back({Problem::Kind::truncated, line_no_,
                            "the stream ended inside a line of " +
                                std::to_string(discarding_ ? discarded_bytes_ : buffer_.size()) +
                                " bytes (no newline); dropped"});
    buffer_.clear();
  }
  if (!gaps_.empty())
    out.problems.push_back({Problem::Kind::missing, 0,
                            std::to_string(gaps_.size()) + " record(s) never arrived: seq " + ranges(gaps_)});
  return out;
}

void RecordStream::check_seq(uint64_t seq, uint64_t line, Parsed& out, bool& keep) {
  keep = true;
  if (seq == expected_) {
    ++expected_;
  } else if (seq > expected_) {
    out.problems.push_back({Problem::Kind::out_of_order, line,
                            "seq " + std::to_string(seq) + " arrived while " + std::to_string(expected_) +
                                " was expected"});
    for (uint64_t s = expected_; s < seq && gaps_.size() < kMaxGaps; ++s) gaps_.insert(s);
    expected_ = seq + 1;
  } else if (gaps_.erase(seq)) {
    out.problems.push_back({Problem::Kind::out_of_order, line, "seq " + std::to_string(seq) + " arrived late"});
  } else {
    out.problems.push_back({Problem::Kind::duplicate, line,
                            "seq " + std::to_string(seq) + " was already received; dropped"});
    keep = false;
  }
}

void RecordStream::take_line(std::string_view line, Parsed& out) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.find_first_not_of(" \t") == std::string_view::npos) return;  // blank: harmless
  const uint64_t n = line_no_;
  if (too_deep(line)) {
    out.problems.push_back({Problem::Kind::garbage, n, "nested deeper than " + std::to_string(kMaxDepth) +
                                                           " levels: " + preview(line)});
    return;
  }
  json j = json::parse(line.begin(), line.end(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    out.problems.push_back({Problem::Kind::garbage, n, "not a JSON object: " + preview(line)});
    return;
  }
  if (auto repeated = repeated_key(line)) {
    out.problems.push_back({Problem::Kind::garbage, n,
                            "the key \"" + preview(*repeated) + "\" appears twice in one object: " + preview(line)});
    return;
  }
  auto seq_it = j.find("seq");
  auto type_it = j.find("type");
  if (seq_it == j.end() || !seq_it->is_number_unsigned() || seq_it->get<uint64_t>() >= kMaxSeq) {
    out.problems.push_back({Problem::Kind::garbage, n, "no non-negative integer \"seq\": " + preview(line)});
    return;
  }
  if (type_it == j.end() || !type_it->is_string() || type_it->get_ref<const std::string&>().empty()) {
    out.problems.push_back({Problem::Kind::garbage, n, "no \"type\" string: " + preview(line)});
    return;
  }
  Record r{seq_it->get<uint64_t>(), type_it->get<std::string>(), std::move(j), n};
  if (is_known_record_type(r.type)) {
    if (auto wrong = validate_record(r.body); !wrong.empty()) {
      out.problems.push_back({Problem::Kind::bad_field, n,
                              r.type + " record seq " + std::to_string(r.seq) + ": " + wrong + "; dropped"});
      // Its seq did arrive: do not also report it missing.
      bool keep;
      Parsed ignore;
      check_seq(r.seq, n, ignore, keep);
      return;
    }
  } else {
    out.problems.push_back({Problem::Kind::unknown_type, n,
                            "unknown record type \"" + preview(r.type) + "\" (seq " + std::to_string(r.seq) +
                                "); kept"});
  }
  bool keep = true;
  check_seq(r.seq, n, out, keep);
  if (!keep) return;
  if (end_)
    out.problems.push_back({Problem::Kind::after_end, n,
                            r.type + " record seq " + std::to_string(r.seq) + " after the end record"});
  if (r.type == "end" && !end_ && ++ends_ >= expected_ends_) end_ = r;
  ++accepted_;
  out.records.push_back(std::move(r));
}

bool ProblemBudget::admit(const Problem& p) {
  if (admitted_ < limit_) {
    ++admitted_;
    return true;
  }
  if (held_back_++ == 0) first_line_ = p.line;
  kinds_.insert(to_string(p.kind));
  return false;
}

std::optional<Problem> ProblemBudget::summary() const {
  if (held_back_ == 0) return std::nullopt;
  std::string kinds;
  for (const auto& k : kinds_) kinds += (kinds.empty() ? "" : ", ") + k;
  return Problem{Problem::Kind::garbage, 0,
                 std::to_string(held_back_) + " more problem(s) (" + kinds + ") from line " + std::to_string(first_line_) +
                     " on not reported one by one (only the first " + std::to_string(limit_) + " are)"};
}

}  // namespace smtlab::protocol
