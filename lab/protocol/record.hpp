#pragma once
// Records, guest -> host: one JSON object per '\n'-terminated line, at most kMaxRecordLine bytes,
// each with "seq" (0, 1, 2, ... per VM) and "type". See /tmp/briefs/protocol.md ("Records").
#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace smtlab::protocol {

inline constexpr size_t kMaxRecordLine = 64 * 1024;  // bytes, including the '\n'
inline constexpr const char* kResultsPortName = "org.smtlab.results.0";
inline constexpr const char* kControlPortName = "org.smtlab.control.0";

// The record types the host understands (others are kept by the parser but reported).
bool is_known_record_type(std::string_view type);

// One line: {"seq":N,"type":T, ...fields}\n. Fields named seq/type are overwritten. Invalid UTF-8
// in strings is replaced (U+FFFD), never an exception. A line that would exceed kMaxRecordLine is
// replaced by an "error" record saying what was dropped.
std::string encode_record(uint64_t seq, std::string_view type, const nlohmann::json& fields);

// Numbers records and hands each line to a sink; safe to call from several threads. When
// `shared_seq` is given (e.g. a counter in MAP_SHARED memory), the sequence continues across
// processes that share it.
class RecordWriter {
 public:
  using Sink = std::function<void(std::string_view line)>;
  explicit RecordWriter(Sink sink, std::atomic<uint64_t>* shared_seq = nullptr);
  // Returns the seq used.
  uint64_t write(std::string_view type, const nlohmann::json& fields);
  uint64_t next_seq() const;
  // Fields added to every later record (a job list's {"cell": id, "job": i}); an empty object
  // clears them. Fields of the record itself win over the context.
  void set_context(const nlohmann::json& fields);

  // Convenience writers for the common types.
  // stalled: the workload stopped making progress (the host may run such a cell again).
  void error(const std::string& message, bool fatal, bool stalled = false);
  void event(const std::string& name, const nlohmann::json& detail = nlohmann::json::object());
  void end(bool ok, int exit_code);

 private:
  Sink sink_;
  std::atomic<uint64_t> own_seq_{0};
  std::atomic<uint64_t>* seq_;
  std::mutex mutex_;
  nlohmann::json context_ = nlohmann::json::object();
};

// A sink that writes whole lines to a file descriptor (retrying short writes and EINTR).
RecordWriter::Sink fd_sink(int fd);

}  // namespace smtlab::protocol
