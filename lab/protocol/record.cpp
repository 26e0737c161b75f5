#include "protocol/record.hpp"

#include <unistd.h>

#include <cerrno>

namespace smtlab::protocol {

using nlohmann::json;

bool is_known_record_type(std::string_view t) {
  return t == "hello" || t == "topology" || t == "setting" || t == "event" || t == "sample" ||
         t == "monitor" || t == "output" || t == "error" || t == "end";
}

static std::string dump_line(const json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

std::string encode_record(uint64_t seq, std::string_view type, const json& fields) {
  // seq and type first (readable logs), then the fields in key order.
  json rest = json::object();
  if (fields.is_object())
    for (auto& [k, v] : fields.items())
      if (k != "seq" && k != "type") rest[k] = v;
  std::string body = rest.dump(-1, ' ', false, json::error_handler_t::replace);
  std::string line = "{\"seq\":" + std::to_string(seq) + ",\"type\":" +
                     json(std::string(type)).dump(-1, ' ', false, json::error_handler_t::replace) +
                     (body == "{}" ? "}" : "," + body.substr(1)) + "\n";
  if (line.size() <= kMaxRecordLine) return line;
  json e = {{"seq", seq},
            {"type", "error"},
            {"message", "a " + std::string(type) + " record of " + std::to_string(line.size()) +
                            " bytes exceeded the " + std::to_string(kMaxRecordLine) +
                            "-byte line limit and was dropped"},
            {"fatal", false}};
  return dump_line(e);
}

RecordWriter::RecordWriter(Sink sink, std::atomic<uint64_t>* shared_seq)
    : sink_(std::move(sink)), seq_(shared_seq ? shared_seq : &own_seq_) {}

uint64_t RecordWriter::write(std::string_view type, const json& fields) {
  std::lock_guard lock(mutex_);
  uint64_t seq = seq_->fetch_add(1);
  if (context_.empty() || !fields.is_object()) {
    sink_(encode_record(seq, type, fields));
  } else {
    json merged = context_;
    for (auto& [k, v] : fields.items()) merged[k] = v;
    sink_(encode_record(seq, type, merged));
  }
  return seq;
}

uint64_t RecordWriter::next_seq() const { return seq_->load(); }

void RecordWriter::set_context(const json& fields) {
  std::lock_guard lock(mutex_);
  context_ = fields.is_object() ? fields : json::object();
}

void RecordWriter::error(const std::string& message, bool fatal, bool stalled) {
  json fields = {{"message", message}, {"fatal", fatal}};
  if (stalled) fields["stalled"] = true;
  write("error", fields);
}

void RecordWriter::event(const std::string& name, const json& detail) {
  write("event", {{"name", name}, {"detail", detail}});
}

void RecordWriter::end(bool ok, int exit_code) {
  write("end", {{"status", ok ? "ok" : "failed"}, {"exit_code", exit_code}});
}

RecordWriter::Sink fd_sink(int fd) {
  return [fd](std::string_view line) {
    size_t off = 0;
    while (off < line.size()) {
      ssize_t n = ::write(fd, line.data() + off, line.size() - off);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;  // the host went away; nothing better to do with a record
      off += static_cast<size_t>(n);
    }
  };
}

}  // namespace smtlab::protocol
