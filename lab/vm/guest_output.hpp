#pragma once
// What a guest writes to the host is bounded: its console log and its results channel each have a
// cap per boot (util/limits.hpp). A local guest's QEMU writes those files itself, so the session
// looks at their size (once a second) and stops a guest that went over; a remote guest's streams
// are cut at the cap by vm::StreamPump. Either way the file keeps the first `cap` bytes and ends
// with cut_note(). The results channel is read through a CappedTail, never beyond the cap.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

namespace smtlab::vm {

struct OutputCap {
  std::string what;  // "console", "results channel"
  std::uint64_t cap = 0;  // bytes
};
// limits::kMaxConsoleBytesPerVm and kMaxChannelBytesPerVm, or lower caps in whole MiB from
// SMTLAB_CONSOLE_CAP_MIB and SMTLAB_CHANNEL_CAP_MIB (a host short of disk; the fault tests' floods).
// Throws smtlab::Error naming the variable for a value that is not a whole number of MiB from 1
// to the default.
OutputCap console_cap();
OutputCap channel_cap();
// Both caps, for an entry point to check once before anything starts (a bad value is then an error
// there, not in each guest's set-up): throws as they do.
void check_output_caps();

// "64 MiB" (whole MiB), or "1000 bytes" for a cap that is not.
std::string describe_size(std::uint64_t bytes);

// Bytes `file` holds beyond the cap (0 when within it, or missing).
std::uint64_t bytes_over(const std::filesystem::path& file, const OutputCap& cap);

// The cell's error for VM `vm` whose `file` went over its cap: "VM 0 wrote more than 64 MiB to its
// console (a console flood; the first 64 MiB are kept in console-vm0.log)".
std::string over_cap_error(int vm, const OutputCap& cap, const std::filesystem::path& file);

// The line a cut file ends with: "\n[smtlab: console cut at 64 MiB; the rest of the guest's output
// was dropped]\n".
std::string cut_note(const OutputCap& cap);

// Once the guest is gone: a file over its cap keeps its first `cap` bytes, then cut_note(). Returns
// whether it cut (best effort: false when the file cannot be changed, or was within the cap).
bool cut_to_cap(const std::filesystem::path& file, const OutputCap& cap);

// Reads what a writer (QEMU, a StreamPump) appends to a file, never more than `cap` bytes in all.
class CappedTail {
 public:
  CappedTail(std::filesystem::path file, std::uint64_t cap);
  ~CappedTail();
  CappedTail(const CappedTail&) = delete;
  CappedTail& operator=(const CappedTail&) = delete;

  // At most `max_bytes` of what was appended since the last call; "" while the file does not
  // exist, when nothing new is there, or once the cap was read.
  std::string read(std::size_t max_bytes);
  // Everything the file holds up to the cap, given to `each` in pieces of at most `piece` bytes
  // (the last read, once the writer is gone: memory stays bounded by `piece`).
  void read_all(std::size_t piece, const std::function<void(std::string)>& each);
  std::uint64_t bytes_read() const { return read_; }
  // Bytes the file holds beyond the cap: what read() will never return (0 before the cap is read).
  std::uint64_t bytes_beyond() const;

 private:
  std::filesystem::path file_;
  std::uint64_t cap_;
  std::uint64_t read_ = 0;
  int fd_ = -1;
};

}  // namespace smtlab::vm
